#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iopa-sum with its pool in the process (-p: no module needed) against
#     find TREE -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
# on a tree of mktree, page cache warm, RUNS interleaved runs; prints each
# run, the medians and their ratio, and checks the outputs are equal.
# Run it alone on the machine: it measures wall-clock time.
#
#   tools/iopa-sum/bench.sh [NFILES] [RUNS]      (default 60000 5)
#
# Environment: TMPDIR (where the tree is made; its disk decides the
# limit's start: 1 on a rotational one).
set -u
D=$(cd "$(dirname "$0")" && pwd)
N=${1:-60000}
RUNS=${2:-5}
T=$(mktemp -d "${TMPDIR:-/tmp}/iopa-sum-bench.XXXXXX") || exit 1
# the pool's knee cache in the scratch directory, not the user's
export IOPA_KNEES_CACHE=$T/knees
trap 'rm -rf "$T"' EXIT
export LC_ALL=C
made=$("$D/mktree" "$T/tree" "$N") || exit 1
ref() { find "$T/tree" -type f -print0 | sort -z | xargs -0 sha256sum --; }
ref >/dev/null		# the page cache warm for both
ms() { echo $(( $(date +%s%N) / 1000000 )); }
echo "# $made files, $(du -sh "$T/tree" | cut -f1); $RUNS runs, interleaved"
for i in $(seq "$RUNS"); do
	t0=$(ms); ref >"$T/ref"; t1=$(ms)
	"$D/iopa-sum" -p -q -v "$T/tree" >"$T/out" 2>"$T/err"; t2=$(ms)
	cmp -s "$T/ref" "$T/out" || { echo "run $i: outputs differ"; exit 1; }
	echo "run $i: sha256sum $((t1 - t0)) ms, iopa-sum -p $((t2 - t1)) ms; $(cat "$T/err")"
	echo "$((t1 - t0)) $((t2 - t1))" >>"$T/times"
done
med() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
a=$(cut -d' ' -f1 "$T/times" | med)
b=$(cut -d' ' -f2 "$T/times" | med)
echo "bench iopa-sum-inproc files=$made sha256sum_ms=$a iopa_sum_ms=$b speedup=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')"
