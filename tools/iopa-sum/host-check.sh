#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iopa-sum checks that need no iopa module (`make check`): usage and exit
# statuses, the message without /dev/iopa, the man page, mktree.  The
# comparison with sha256sum needs the module: check.sh, in the guest.
set -u
cd "$(dirname "$0")" || exit 2
n=0 failed=0
t() {	# NAME COMMAND...
	local name=$1 out
	shift
	n=$((n + 1))
	if out=$("$@" 2>&1); then
		echo "ok $n $name"
	else
		failed=$((failed + 1))
		echo "not ok $n $name"
		echo "$out" | sed 's/^/#   /' | tail -n 20
	fi
}
rc_is() {	# WANT COMMAND...: the command exits with status WANT
	local want=$1
	shift
	"$@" >/dev/null 2>&1
	[ $? = "$want" ]
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

t "no operand: usage, status 2" rc_is 2 ./iopa-sum
t "bad option: status 2" rc_is 2 ./iopa-sum --no-such-option x
t "bad -j: status 2" rc_is 2 ./iopa-sum -j 0 x
t "bad -l: status 2" rc_is 2 ./iopa-sum -l 4097 x
t "--help: status 0, stdout" sh -c './iopa-sum --help | grep -q "^usage: iopa-sum"'
# libiopa's version as its header says (LIBIOPA_VERSION_MAJOR.MINOR).
H=../../liburing-glue/include/libiopa.h
LIBV=$(sed -n 's/^#define LIBIOPA_VERSION_MAJOR[[:space:]]*//p' $H).$(sed -n 's/^#define LIBIOPA_VERSION_MINOR[[:space:]]*//p' $H)
t "--version: iopa-sum 1.0 (libiopa $LIBV)" sh -c "./iopa-sum --version | grep -qx 'iopa-sum 1.0 (libiopa $LIBV)'"
if [ ! -e /dev/iopa ]; then
	t "without /dev/iopa: status 1 and a message, no output" sh -c \
		'out=$(./iopa-sum . 2>'"$tmp"'/err); rc=$?; [ $rc = 1 ] && [ -z "$out" ] &&
		 grep -q "^iopa-sum: /dev/iopa: No such file or directory (is the iopa module loaded?)$" '"$tmp"'/err'
fi
t "man page: groff -ww clean" sh -c \
	'[ -z "$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z iopa-sum.1 2>&1)" ]'
t "mktree: the files it counts are the regular files find sees" sh -c \
	'c=$(./mktree '"$tmp"'/tree 300) && [ "$c" -ge 300 ] &&
	 [ "$(find '"$tmp"'/tree -type f -print0 | tr -dc "\0" | wc -c)" = "$c" ]'
echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ $failed = 0 ]
