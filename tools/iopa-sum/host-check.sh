#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iopa-sum checks that need no iopa module (`make check`): usage and exit
# statuses, the comparison with sha256sum with the pool in the process
# (check.sh, as the guest runs it with the module, and a real tree), the
# man page, mktree.
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
# The pool's knee cache goes to $HOME/.cache by default: not ours.
export HOME=$tmp/home
unset XDG_CACHE_HOME IOPA_KNEES_CACHE

t "no operand: standard input, as sha256sum" sh -c \
	'[ "$(echo abc | ./iopa-sum -p)" = "$(echo abc | sha256sum)" ]'
t "bad option: status 1, as sha256sum" rc_is 1 ./iopa-sum --no-such-option x
t "bad -j: status 1" rc_is 1 ./iopa-sum -j 0 x
t "bad -l: status 1" rc_is 1 ./iopa-sum -l 4097 x
t "a drop-in for GNU sha256sum: dropin-check.sh, all cases the same" sh -c \
	'IOPA_SUM_FLAGS=-p sh ./dropin-check.sh >'"$tmp"'/dropin.out 2>&1; rc=$?;
	 cat '"$tmp"'/dropin.out; [ $rc = 0 ]'
t "--help: status 0, stdout" sh -c './iopa-sum --help | grep -q "^usage: iopa-sum"'
# libiopa's version as its header says (LIBIOPA_VERSION_MAJOR.MINOR).
H=../../liburing-glue/include/libiopa.h
LIBV=$(sed -n 's/^#define LIBIOPA_VERSION_MAJOR[[:space:]]*//p' $H).$(sed -n 's/^#define LIBIOPA_VERSION_MINOR[[:space:]]*//p' $H)
t "--version: iopa-sum 1.0 (libiopa $LIBV)" sh -c "./iopa-sum --version | grep -qx 'iopa-sum 1.0 (libiopa $LIBV)'"
# Without the module (or with -p where it is loaded) the pool runs in
# the process: the whole guest comparison with sha256sum, then a real tree.
t "in process: check.sh (2000 files) against sha256sum, all pass" sh -c \
	'IOPA_SUM_FLAGS=-p ./check.sh 2000 >'"$tmp"'/check.out 2>&1; rc=$?;
	 cat '"$tmp"'/check.out; [ $rc = 0 ] && grep -qx "# 20 passed, 0 failed" '"$tmp"'/check.out'
t "in process: /usr/include (a real tree) == find | sort | xargs sha256sum" sh -c \
	'cd /usr && find include -type f -print0 | LC_ALL=C sort -z |
	 xargs -0 sha256sum -- >'"$tmp"'/inc.ref &&
	 '"$PWD"'/iopa-sum -p include >'"$tmp"'/inc.out &&
	 [ "$(wc -l <'"$tmp"'/inc.ref)" -ge 1000 ] && cmp '"$tmp"'/inc.ref '"$tmp"'/inc.out'
t "in process: -v says so" sh -c \
	'./iopa-sum -p -v iopa-sum.1 2>&1 >/dev/null | grep -q "(in process)"'
if [ ! -e /dev/iopa ]; then
	t "without /dev/iopa: in process by itself, same output as sha256sum" sh -c \
		'out=$(./iopa-sum -v iopa-sum.c iopa-sum.1 2>'"$tmp"'/err) &&
		 [ "$out" = "$(sha256sum iopa-sum.c iopa-sum.1)" ] &&
		 grep -q "(in process)" '"$tmp"'/err'
	t "without /dev/iopa: -v says why, once" sh -c \
		'./iopa-sum -v iopa-sum.1 2>&1 >/dev/null |
		 grep -cx "iopa-sum: in process, without the module: /dev/iopa: No such file or directory" |
		 grep -qx 1'
	t "without /dev/iopa: -m (the module or nothing) fails, status 1" sh -c \
		'out=$(./iopa-sum -m iopa-sum.1 2>&1 >/dev/null); rc=$?;
		 [ $rc = 1 ] && [ "$out" = "iopa-sum: /dev/iopa: No such file or directory" ]'
fi
t "-m with -p: status 1" rc_is 1 ./iopa-sum -m -p iopa-sum.1
t "-p -v says it was asked" sh -c \
	'./iopa-sum -p -v iopa-sum.1 2>&1 >/dev/null |
	 grep -qx "iopa-sum: in process, without the module (-p)"'
# (A file system without an id, f_fsid 0, gets no memory: not checked there.)
[ "$(stat -f -c %i .)" = 0 ] ||
t "in process: the knee cache kept in \$HOME/.cache/iopa/knees by default" sh -c \
	'./iopa-sum -p iopa-sum.c iopa-sum.1 >/dev/null &&
	 head -n 1 "$HOME/.cache/iopa/knees" | grep -qx "# iopa knees v1" &&
	 grep -Eq "^fsid=[0-9a-f]{16} knee=[0-9]+ job_kb=[0-9]+$" "$HOME/.cache/iopa/knees" &&
	 [ "$(stat -c %a "$HOME/.cache/iopa")" = 700 ]'
t "in process: IOPA_KNEES_CACHE empty: no cache" sh -c \
	'rm -rf "$HOME/.cache" && IOPA_KNEES_CACHE= ./iopa-sum -p iopa-sum.c >/dev/null &&
	 [ ! -e "$HOME/.cache/iopa/knees" ]'
t "man page: groff -ww clean" sh -c \
	'[ -z "$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z iopa-sum.1 2>&1)" ]'
t "mktree: the files it counts are the regular files find sees" sh -c \
	'c=$(./mktree '"$tmp"'/tree 300) && [ "$c" -ge 300 ] &&
	 [ "$(find '"$tmp"'/tree -type f -print0 | tr -dc "\0" | wc -c)" = "$c" ]'
echo "1..$n"
echo "$((n - failed)) passed, $failed failed"
[ $failed = 0 ]
