#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host test of tools/bench/report.py (`make -C tools/bench test`): the
# canned console good.log must give exactly the lines of expected.txt,
# every CSV, PNG and the README; bad-run.log (a malformed BENCH-RUN),
# no-adapt.log (a cell without adaptive runs) and no-runs.log must make it
# fail.  Prints "ok"/"not ok" per check; exit status 1 if any failed.
set -u
cd "$(dirname "$0")" || exit 1
PY=${PYTHON:-/usr/bin/python3}
OUT=out
rm -rf "$OUT"
mkdir -p "$OUT"
fail=0
n=0

check() {
	what=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		fail=1
	fi
}

"$PY" ../report.py --out "$OUT/good" good.log >"$OUT/good.txt" 2>"$OUT/good.err"
rc=$?
check "good.log: exit status 0 (got $rc)" [ "$rc" = 0 ]
[ "$rc" = 0 ] || cat "$OUT/good.err"
grep -E '^bench (cell|order) ' "$OUT/good.txt" >"$OUT/lines.txt"
grep -v '^#' expected.txt >"$OUT/expected.txt"
check "good.log: the bench cell/order lines of expected.txt" \
	cmp -s "$OUT/lines.txt" "$OUT/expected.txt"
cmp -s "$OUT/lines.txt" "$OUT/expected.txt" ||
	diff -u "$OUT/expected.txt" "$OUT/lines.txt"
check "good.log: no other line starts with 'bench cell'/'bench order'" \
	[ "$(grep -c -E '^bench (cell|order)' "$OUT/good.txt")" = \
	  "$(wc -l <"$OUT/expected.txt")" ]
for f in cells.csv modes.csv runs.csv timeseries.csv fio.csv order.csv \
	compete.csv README.md ts-ssd-iopa.png ts-ssd-hillclimb.png \
	ts-hdd-iopa.png ts-hdd-hillclimb.png compete-ssd.png bars-ssd.png \
	bars-hdd.png order.png; do
	check "good.log: $f written" [ -s "$OUT/good/$f" ]
done
check "runs.csv: 25 runs" [ "$(($(wc -l <"$OUT/good/runs.csv") - 1))" = 25 ]
check "README: summary row of ssd 100k" \
	grep -q '^| ssd | 100k | 4 | 8.10 | 7.20 (3.0) | 7.80 (3.0) | hillclimb | 96.3 | 9.00 (16) | 86.7 |$' \
	"$OUT/good/README.md"
check "README: order row" \
	grep -q '^| hdd | 10k | fixed:2 | 1.05 | 2.10 | 2.00 | 1/2 | 400 | 20 | 73% | 3 |$' \
	"$OUT/good/README.md"
check "README: goals met" \
	[ "$(grep -c '\*\*met\*\*' "$OUT/good/README.md")" = 2 ]
check "compete.csv: halves split at the event (before 8.00 MB/s)" \
	grep -q '^ssd,100k,adapt:hillclimb,6.000,16.000,8000,8.000,4.000,' \
	"$OUT/good/compete.csv"

for bad in bad-run no-adapt no-runs; do
	"$PY" ../report.py --out "$OUT/$bad" --no-plots "$bad.log" \
		>"$OUT/$bad.txt" 2>"$OUT/$bad.err"
	rc=$?
	check "$bad.log: exit status 1 (got $rc)" [ "$rc" = 1 ]
	check "$bad.log: a message on stderr" grep -q '^report.py: ' "$OUT/$bad.err"
	check "$bad.log: no bench cell line" \
		[ "$(grep -c '^bench cell' "$OUT/$bad.txt")" = 0 ]
done

if [ $fail = 0 ]; then
	echo "report.py: all $n checks passed"
else
	echo "report.py: FAILED (see above)"
fi
exit $fail
