#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR MIT)
#
# Run each example on the same 40 files (the iopa module loaded): each
# prints one line per file in the order given; two-process's byte sums
# are checked against od(1); a file that cannot be opened is named on
# stderr and fails the run, in all three.
# TAP; exit status 0 only if every check passed.
set -u
D=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/iopa-examples.XXXXXX")
trap 'rm -rf "$T"' EXIT
n=0 failed=0
ok() {	# STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}

echo "1..7"
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

"$D/uring-sum" "$@" >"$T/uring.out" 2>"$T/uring.err"
ok $? "uring-sum: exit 0 on 40 files"
# pool-sum's 64-bit sums folded as uring-sum folds them.
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

rc=0
for p in pool-sum uring-sum two-process; do
	"$D/$p" "$T/f0" "$T/missing" >/dev/null 2>"$T/miss.err" && rc=1
	grep -q "missing: No such file" "$T/miss.err" || rc=1
done
ok $rc "each example: a missing file is named on stderr, exit 1"
cat "$T/pool.err" "$T/uring.err" "$T/two.err" | sed 's/^/# /'
echo "# $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
