#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest script: load iopa_hdd.ko and show, with fio, that /dev/iopahdd0
# behaves like a 7200 rpm disk.  Run from the host:
#
#   ko=$(tools/guest/build-module.sh 6.12 | tail -1)
#   make -C tools/hdd-model
#   tools/guest/run-guest.sh --series 6.12 --ko "$ko" \
#       tools/hdd-model/fio-check.sh tools/hdd-model/iopa_hdd.ko
#
# `make check` runs it as the check "guest-hdd-model".  Output: one line per
# fio run (name, IOPS, MB/s of 10^6 bytes, the model's expectation), then
# kselftest-style TAP framed by IOPA-TEST-BEGIN/END hdd-model, one result
# per property of a hard disk; exit status 1 if any fails.  The bounds are
# wide (the model runs on a virtual clock, so they hold on a loaded host)
# but each fails for a disk that is not one: an SSD-like device (no seek)
# fails random IOPS and stream interleaving, a device without a media rate
# fails the sequential bound.
#
# Environment: HDD_KO (default /iopa/tools/hdd-model/iopa_hdd.ko),
# HDD_PARAMS (module parameters), HDD_RUNTIME (seconds per run, default 3).
set -u

KO=${HDD_KO:-/iopa/tools/hdd-model/iopa_hdd.ko}
RT=${HDD_RUNTIME:-3}
DEV=/dev/iopahdd0
q=/sys/block/iopahdd0/queue

echo "IOPA-TEST-BEGIN hdd-model"
echo "1..9"
n=0
fail=0
tap() {	# RESULT(0 = pass) DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fail=1
	fi
}
finish() {
	echo "IOPA-TEST-END hdd-model rc=$fail"
	exit $fail
}
# awk comparisons of floats: ge A B, le A B
ge() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a <= b) }'; }

# shellcheck disable=SC2086
insmod "$KO" ${HDD_PARAMS:-}
i=0
while [ ! -b $DEV ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if [ ! -b $DEV ] || [ "$(cat $q/rotational)" != 1 ]; then
	tap 1 "insmod: $DEV exists and is rotational"
	finish
fi
tap 0 "insmod: $DEV exists and is rotational"
echo "fio-check: scheduler='$(cat $q/scheduler)'" \
	"max_sectors_kb=$(cat $q/max_sectors_kb) nr_requests=$(cat $q/nr_requests)"

# run NAME EXPECT FIO-ARGS...: one fio run; sets IOPS and MBPS (field 7:
# read KiB/s, 8: read IOPS of fio's terse output; all jobs together).
run() {
	name=$1 expect=$2
	shift 2
	out=$(fio --name="$name" --filename=$DEV --direct=1 --rw=read \
		--ioengine=psync --time_based --runtime="$RT" --group_reporting \
		--minimal "$@" 2>&1) || { echo "fio-check: $name: fio failed: $out"; IOPS=0 MBPS=0; return 1; }
	IOPS=$(echo "$out" | awk -F';' '{ printf "%.1f", $8 }')
	MBPS=$(echo "$out" | awk -F';' '{ printf "%.2f", $7 * 1024 / 1e6 }')
	printf "fio-check: %-16s IOPS %8s  MB/s %7s   (model: %s)\n" \
		"$name" "$IOPS" "$MBPS" "$expect"
}

# The device's own service order first: no scheduler.
echo none >$q/scheduler
run rand-4k-qd1 "~80 IOPS" --rw=randread --bs=4k
tap "$(ge "$IOPS" 50 && le "$IOPS" 110; echo $?)" \
	"random 4k reads at qd1: $IOPS IOPS in [50, 110] (seek + half a turn)"
r1=$IOPS
run seq-1M "~100 MB/s" --bs=1M
tap "$(ge "$MBPS" 70 && le "$MBPS" 105; echo $?)" \
	"sequential 1M reads: $MBPS MB/s in [70, 105] (the media rate)"
# Streams 64 MiB apart, each reading its own 64 MiB sequentially; served in
# arrival order, every request seeks and waits for the platter.
run streams-1 "~100 MB/s" --bs=1M --size=64M --offset_increment=64M --numjobs=1
s1=$MBPS
run streams-4 "~55 MB/s" --bs=1M --size=64M --offset_increment=64M --numjobs=4
s4=$MBPS
run streams-16 "~50 MB/s" --bs=1M --size=64M --offset_increment=64M --numjobs=16
s16=$MBPS
tap "$(ge "$(awk -v a="$s1" 'BEGIN { print a * 0.75 }')" "$s4" &&
	ge "$(awk -v a="$s1" 'BEGIN { print a * 0.75 }')" "$s16"; echo $?)" \
	"interleaved streams: total falls, 1/4/16 streams $s1/$s4/$s16 MB/s (4 and 16 <= 75% of 1)"

# Queue depth.  The model serves its queue in arrival order (no NCQ), so
# reload it with one tag (a disk without command queueing) and let
# mq-deadline hold the requests: sorting them shortens the seeks as depth
# grows, but one actuator does not scale like an SSD.
rmmod iopa_hdd
# shellcheck disable=SC2086
insmod "$KO" ${HDD_PARAMS:-} queue_depth=1
i=0
while [ ! -b $DEV ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
modprobe mq-deadline 2>/dev/null
echo mq-deadline >$q/scheduler
# one tag gives nr_requests 2: let the elevator hold 128 to sort
echo 128 >$q/nr_requests
echo "fio-check: scheduler now '$(cat $q/scheduler)'"
for d in 1 4 16 64; do
	run "rand-4k-qd$d" "~80 at qd1, sorted: ~2x at 64" --rw=randread --bs=4k \
		--ioengine=libaio --iodepth=$d
	eval "qd$d=\$IOPS"
done
# shellcheck disable=SC2154
tap "$(ge "$qd64" "$(awk -v a="$qd1" 'BEGIN { print a * 1.2 }')" &&
	le "$qd64" "$(awk -v a="$qd1" 'BEGIN { print a * 4 }')"; echo $?)" \
	"random 4k by queue depth 1/4/16/64: $qd1/$qd4/$qd16/$qd64 IOPS (64 in [1.2x, 4x] 1: sorting shortens seeks, one actuator)"
echo "fio-check: (qd1 without scheduler: $r1 IOPS)"

# Data: a verified write, zeros where nothing was written, a filesystem.
fio --name=verify --filename=$DEV --direct=1 --rw=write --bs=64k \
	--offset=512M --size=8M --verify=crc32c --do_verify=1 \
	--ioengine=psync --minimal >/dev/null 2>&1
tap $? "8 MiB written and verified (crc32c)"
nz=$(dd if=$DEV bs=4096 skip=4096 count=16 2>/dev/null | od -An -v -tx1 |
	tr -d ' \n0' | wc -c)
tap "$([ "$nz" = 0 ]; echo $?)" "unwritten sectors read as zeros"
mkdir -p /mnt/hdd
dd if=/dev/urandom of=/tmp/blob bs=1M count=4 2>/dev/null
{ mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 $DEV &&
	mount -t ext4 $DEV /mnt/hdd && cp /tmp/blob /mnt/hdd/blob &&
	umount /mnt/hdd && mount -t ext4 $DEV /mnt/hdd &&
	cmp /tmp/blob /mnt/hdd/blob && umount /mnt/hdd; } >/dev/null 2>&1
tap $? "ext4: mkfs, write 4 MiB, remount, read back identical"
rmmod iopa_hdd
tap $? "rmmod iopa_hdd"
finish
