#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What iopa costs I/O that is not its own, run INSIDE the QEMU guest by
# `make bench-hostcost` (Core round 2, item 10).
#
# fio reads /dev/nullb0 (4 KiB random reads, io_uring, 2 jobs at depth
# 16, completions in the submitting context: the CPU is the limit) for
# HOSTCOST_SECS seconds in each of three setups, interleaved, in
# HOSTCOST_ROUNDS rounds (the order rotating each round):
#   none   the module not loaded
#   other  loaded, a submitter grouped on /dev/nullb1 (the module counts
#          that device: its probe looks fio's requests up and finds none)
#   same   loaded, a submitter grouped on /dev/nullb0 itself (fio's
#          requests land in per-CPU counters)
# The submitter is iopa-bench-hold's, idle once grouped.  Per run: fio's
# IOPS and the guest's busy CPU time per I/O (from /proc/stat).  Prints
# per run "# hostcost run=..." and then, over the rounds,
#   bench hostcost dev=other iops_ratio=F cpu_ratio=F rounds=R range=...
#   bench hostcost dev=same  iops_ratio=F cpu_ratio=F rounds=R range=...
# with iops_ratio = IOPS(setup) / IOPS(none) and cpu_ratio =
# CPU per I/O(none) / CPU per I/O(setup), medians of the per-round
# ratios (1.0: no cost; the goal is >= 0.99).
set -u
KO=${IOPA_KO:-/iopa/kernel/iopa.ko}
HOLD=/iopa/tools/bench/iopa-bench-hold
SECS=${HOSTCOST_SECS:-10}
ROUNDS=${HOSTCOST_ROUNDS:-5}

modprobe null_blk nr_devices=2 queue_mode=2 irqmode=0 submit_queues=2 \
	hw_queue_depth=64 memory_backed=1 gb=1 || exit 1

busy() {	# busy jiffies of all CPUs (user..steal, not idle/iowait)
	awk '/^cpu /{print $2+$3+$4+$7+$8+$9; exit}' /proc/stat
}

hold_pid=
hold_start() {	# DEV: an idle submitter grouped on DEV
	"$HOLD" "$1" >/tmp/hold.out 2>&1 &
	hold_pid=$!
	i=0
	until grep -q '^hold: grouped' /tmp/hold.out; do
		i=$((i + 1))
		if [ $i -gt 400 ] || ! kill -0 $hold_pid 2>/dev/null; then
			cat /tmp/hold.out; return 1
		fi
		sleep 0.1
	done
}
hold_stop() {
	[ -n "$hold_pid" ] || return 0
	kill $hold_pid; wait $hold_pid; hold_pid=
}

setup() {	# none | other | same
	case $1 in
	none)	[ ! -e /dev/iopa ] || rmmod iopa ;;
	*)	[ -e /dev/iopa ] || insmod "$KO" || return 1
		if [ "$1" = other ]; then hold_start /dev/nullb1
		else hold_start /dev/nullb0; fi ;;
	esac
}

run() {	# SETUP ROUND: one fio run; appends "SETUP ROUND IOPS CPU_PER_IO_NS"
	setup "$1" || { echo "# hostcost: setup $1 failed"; return 1; }
	b0=$(busy)
	out=$(fio --name=hostcost --filename=/dev/nullb0 --rw=randread \
		--bs=4k --ioengine=io_uring --iodepth=16 --numjobs=2 \
		--direct=1 --time_based --runtime="$SECS" --group_reporting \
		--output-format=terse --terse-version=3 2>/dev/null)
	b1=$(busy)
	hold_stop
	iops=$(echo "$out" | awk -F';' '{print $8; exit}')
	hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
	echo "$1 $2 $iops $(awk -v b="$((b1 - b0))" -v hz="$hz" -v s="$SECS" \
		-v i="$iops" 'BEGIN{ printf "%.0f", b / hz * 1e9 / (i * s) }')" \
		>>/tmp/hostcost.runs
	echo "# hostcost run=$2 setup=$1 iops=$iops cpu_per_io_ns=$(tail -n 1 /tmp/hostcost.runs | cut -d' ' -f4)"
}

: >/tmp/hostcost.runs
echo "# hostcost: fio 4 KiB randread on null_blk, ${SECS}s runs, $ROUNDS rounds, $(nproc) vCPUs under QEMU TCG"
r=1
while [ $r -le "$ROUNDS" ]; do
	case $((r % 3)) in
	1) order="none other same" ;;
	2) order="other same none" ;;
	0) order="same none other" ;;
	esac
	for s in $order; do run "$s" "$r" || exit 1; done
	r=$((r + 1))
done
[ ! -e /dev/iopa ] || rmmod iopa

# Per round: ratios against that round's "none"; then median and range.
for s in other same; do
	awk -v s="$s" '
		$1 == "none" { ni[$2] = $3; nc[$2] = $4 }
		$1 == s { si[$2] = $3; sc[$2] = $4 }
		END {
			for (r in ni) if (r in si) {
				n++; ir[n] = si[r] / ni[r]; cr[n] = nc[r] / sc[r]
			}
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
				if (ir[j] < ir[i]) { t = ir[i]; ir[i] = ir[j]; ir[j] = t }
				if (cr[j] < cr[i]) { t = cr[i]; cr[i] = cr[j]; cr[j] = t }
			}
			m = int((n + 1) / 2)
			printf "bench hostcost dev=%s iops_ratio=%.3f cpu_ratio=%.3f rounds=%d range_iops=%.3f..%.3f range_cpu=%.3f..%.3f\n",
				s, ir[m], cr[m], n, ir[1], ir[n], cr[1], cr[n]
		}' /tmp/hostcost.runs
done
