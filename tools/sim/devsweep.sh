#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The bracket policy across device settings, in the simulator: the
# mean and the lowest mean_pct_of_best over 16 seeds for each of
#   - the guest-like steady and step scenarios at 2, 5 and 20 s;
#   - the HDD model at 8500 rpm with 2 to 64 tags (hdd_qd), 10 s;
#   - null_blk with 1 to 128 tags at 2 and 41.5 ms, 10 s.
# One line per setting: "LABEL MEAN MIN".  Used to compare two builds of
# kernel/ctl.c before a change lands (the commit quotes the differences):
#
#   tools/sim/devsweep.sh run ./iopa-sim.old old.txt
#   tools/sim/devsweep.sh run tools/sim/iopa-sim new.txt
#   tools/sim/devsweep.sh compare old.txt new.txt
#
# run takes about 30 s on 2 CPUs (settings run in parallel).
set -eu

run_one() { # SIM OUT LABEL ARGS...
	local sim=$1 out=$2 label=$3 v
	shift 3
	v=$("$sim" -p bracket --seeds 16 "$@" 2>&1 |
		sed -n 's/^# seeds .*mean_pct=\([0-9.]*\) min_pct=\([0-9.]*\).*/\1 \2/p')
	echo "$label $v" >>"$out"
}

run() { # SIM OUT
	local sim=$1 out=$2 d s qd t lat
	: >"$out"
	for d in 2000 5000 20000; do
		for s in ssd-10k ssd-100k ssd-1m hdd-10k hdd-100k hdd-1m \
			 switch-ssd switch-hdd compete-ssd compete-hdd cache cpu; do
			run_one "$sim" "$out" "$s@$d" -s "$s" --duration "$d" &
		done
		wait
	done
	for qd in 2 4 10 20 42 64; do
		for s in hdd-10k hdd-100k hdd-1m; do
			run_one "$sim" "$out" "$s@qd$qd" -s "$s" --duration 10000 \
				--model hdd_qd="$qd" --model hdd_rpm=8500 &
		done
		wait
	done
	for t in 1 4 16 64 128; do
		for lat in 2000 41500; do
			for s in ssd-10k ssd-100k ssd-1m; do
				run_one "$sim" "$out" "$s@tags$t@lat$lat" -s "$s" \
					--duration 10000 --model ssd_tags="$t" \
					--model ssd_lat_us="$lat" &
			done
			wait
		done
	done
	sort -o "$out" "$out"
}

compare() { # OLD NEW: the settings that moved, then the mean change
	join "$1" "$2" | awk '
		{ d = $4 - $2; m = $5 - $3; sd += d; n++ }
		d != 0 || m != 0 {
			printf "%-30s mean %6.2f -> %6.2f (%+6.2f)  min %6.2f -> %6.2f (%+6.2f)\n",
			       $1, $2, $4, d, $3, $5, m
		}
		END { printf "mean change %+.2f over %d settings\n", sd / n, n }'
}

case "${1:-}" in
run)	[ $# -eq 3 ] || { echo "usage: $0 run IOPA_SIM OUT" >&2; exit 2; }
	run "$2" "$3" ;;
compare)
	[ $# -eq 3 ] || { echo "usage: $0 compare OLD NEW" >&2; exit 2; }
	compare "$2" "$3" ;;
*)	echo "usage: $0 run IOPA_SIM OUT | compare OLD NEW" >&2; exit 2 ;;
esac
