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
# Environment: HDD_KO (default /iopa/tools/hdd-model/iopa_hdd.ko),
# HDD_PARAMS (module parameters), HDD_RUNTIME (seconds per run, default 6),
# HDD_SCHED (I/O scheduler, default none: the device's own FIFO is measured).
#
# One line per run: name, IOPS, MB/s (10^6 bytes) and the model's expectation.
set -eu

KO=${HDD_KO:-/iopa/tools/hdd-model/iopa_hdd.ko}
RT=${HDD_RUNTIME:-6}
DEV=/dev/iopahdd0

# shellcheck disable=SC2086
insmod "$KO" ${HDD_PARAMS:-}
i=0
while [ ! -b $DEV ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -b $DEV ] || { echo "fio-check: no $DEV"; exit 1; }
q=/sys/block/iopahdd0/queue
echo "fio-check: rotational=$(cat $q/rotational) scheduler='$(cat $q/scheduler)'" \
	"max_sectors_kb=$(cat $q/max_sectors_kb) nr_requests=$(cat $q/nr_requests)"
[ "$(cat $q/rotational)" = 1 ] || { echo "fio-check: not rotational"; exit 1; }
echo "${HDD_SCHED:-none}" >$q/scheduler

# run NAME EXPECT FIO-ARGS...: one summary line from fio's terse output
# (field 7: read KiB/s, 8: read IOPS; with group_reporting, all jobs).
run() {
	name=$1 expect=$2
	shift 2
	out=$(fio --name="$name" --filename=$DEV --direct=1 --rw=read \
		--ioengine=psync --time_based --runtime="$RT" --group_reporting \
		--minimal "$@") || { echo "fio-check: $name: fio failed"; exit 1; }
	echo "$out" | awk -F';' -v n="$name" -v e="$expect" '{
		printf "fio-check: %-14s IOPS %8.1f  MB/s %7.2f   (model: %s)\n",
			n, $8, $7 * 1024 / 1e6, e }'
}

run rand-4k-qd1 "~80 IOPS" --rw=randread --bs=4k
run seq-1M "~100 MB/s" --bs=1M
# Streams 64 MiB apart, each reading its own 64 MiB sequentially; served in
# arrival order, every request seeks and waits for the platter.
run streams-1 "~100 MB/s" --bs=1M --size=64M --offset_increment=64M --numjobs=1
run streams-4 "~55 MB/s" --bs=1M --size=64M --offset_increment=64M --numjobs=4
run streams-16 "~50 MB/s" --bs=1M --size=64M --offset_increment=64M --numjobs=16

# Data: a verified write, zeros where nothing was written, a filesystem.
fio --name=verify --filename=$DEV --direct=1 --rw=write --bs=64k \
	--offset=512M --size=8M --verify=crc32c --do_verify=1 \
	--ioengine=psync --minimal >/dev/null
echo "fio-check: write+verify 8 MiB ok"
nz=$(dd if=$DEV bs=4096 skip=4096 count=16 2>/dev/null | od -An -v -tx1 |
	tr -d ' \n0' | wc -c)
[ "$nz" = 0 ] || { echo "fio-check: unwritten sectors not zero"; exit 1; }
echo "fio-check: unwritten sectors read as zeros"
mkfs.ext4 -q -F -E lazy_itable_init=1,lazy_journal_init=1 $DEV
mkdir -p /mnt/hdd
mount -t ext4 $DEV /mnt/hdd
dd if=/dev/urandom of=/tmp/blob bs=1M count=4 2>/dev/null
cp /tmp/blob /mnt/hdd/blob
umount /mnt/hdd
mount -t ext4 $DEV /mnt/hdd
cmp /tmp/blob /mnt/hdd/blob
umount /mnt/hdd
echo "fio-check: ext4 mkfs, write, remount, read back ok"
rmmod iopa_hdd
echo "fio-check: PASS"
