#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR MIT)
#
# Run each example on the same 40 files: each prints one line per file in
# the order given; two-process's byte sums are checked against od(1); a
# file that cannot be opened is named on stderr and fails the run, in all
# three.  pool-sum runs anywhere (its pool runs in the process without the
# module); uring-sum and two-process need the module: without a usable
# /dev/iopa their checks are skipped, saying why.
# TAP; exit status 0 only if every check passed or was skipped.
set -u
D=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/iopa-examples.XXXXXX")
trap 'rm -rf "$T"' EXIT
n=0 failed=0
# The module: a /dev/iopa this user can open (else why not).
module=
if [ ! -e /dev/iopa ]; then
	module="no /dev/iopa (the iopa module is not loaded)"
elif [ ! -r /dev/iopa ] || [ ! -w /dev/iopa ]; then
	module="/dev/iopa: permission denied (not in group iopa)"
fi
ok() {	# STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = skip ]; then
		echo "ok $n $2 # SKIP needs the module: $module"
	elif [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

echo "1..8"
i=0
while [ $i -lt 40 ]; do
	head -c $((i * 4099 + 1)) /dev/urandom >"$T/f$i"
	i=$((i + 1))
done
set -- "$T"/f*

"$D/pool-sum" "$@" >"$T/pool.out" 2>"$T/pool.err"
ok $? "pool-sum: exit 0 on 40 files"
[ "$(wc -l <"$T/pool.out")" = 40 ] &&
	[ "$(cut -c19- "$T/pool.out")" = "$(printf '%s\n' "$@")" ]
ok $? "pool-sum: one line per file, in the order given"

if [ -n "$module" ]; then
	ok skip "uring-sum: exit 0 on 40 files"
	ok skip "uring-sum: one line per file, in the order given"
	ok skip "two-process: exit 0 on 40 files (the worker in another process)"
	ok skip "two-process: every file's byte sum right"
	# and each says so, clearly, with a failure
	rc=0
	for p in uring-sum two-process; do
		"$D/$p" "$T/f0" >/dev/null 2>"$T/nomod.err" && rc=1
		grep -q "this example needs the iopa module" "$T/nomod.err" || rc=1
	done
	ok $rc "uring-sum, two-process without the module: exit 1, 'needs the iopa module'"
	progs=pool-sum
else
	"$D/uring-sum" "$@" >"$T/uring.out" 2>"$T/uring.err"
	ok $? "uring-sum: exit 0 on 40 files"
	awk '{ print $2 }' "$T/uring.out" >"$T/uring.names"
	[ "$(wc -l <"$T/uring.out")" = 40 ] &&
		[ "$(cat "$T/uring.names")" = "$(printf '%s\n' "$@")" ]
	ok $? "uring-sum: one line per file, in the order given"

	"$D/two-process" "$@" >"$T/two.out" 2>"$T/two.err"
	ok $? "two-process: exit 0 on 40 files (the worker in another process)"
	# Its byte sums against a byte sum computed here.
	good=0
	for f in "$@"; do
		want=$(od -An -v -tu1 "$f" | awk '{ for (i = 1; i <= NF; i++) s += $i }
			END { printf "%08x", s % 2147483648 }')
		grep -q "^$want  $f\$" "$T/two.out" || good=1
	done
	ok $good "two-process: every file's byte sum right"
	ok 0 "uring-sum, two-process: the module is there"
	progs="pool-sum uring-sum two-process"
fi

rc=0
for p in $progs; do
	"$D/$p" "$T/f0" "$T/missing" >/dev/null 2>"$T/miss.err" && rc=1
	grep -q "missing: No such file" "$T/miss.err" || rc=1
done
ok $rc "each example that can run: a missing file is named on stderr, exit 1"
cat "$T"/*.err 2>/dev/null | sed 's/^/# /'
echo "# $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
