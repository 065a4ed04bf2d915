#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The iopa demo, run INSIDE the QEMU guest (busybox sh, as root) by
# `make demo`.  It needs a spare disk it may wipe (default /dev/vda).
#
#  1. load iopa.ko unless /dev/iopa exists already;
#  2. make a file system on the disk (mkfs.ext4 if the guest has it, else
#     busybox mke2fs: ext2, mounted by the ext4 driver) and write a file
#     set on it with `iopa-demo gen`;
#  3. drop the page cache and checksum every file through /dev/iopa with
#     `iopa-demo run`, once per in-flight limit in $DEMO_LIMITS (0: the
#     kernel adapts the limit to the throughput it measures);
#  4. check that every run printed the checksum `gen` predicted, and that
#     a single-threaded pass without iopa agrees (`verify: ok`).
#
# Exits non-zero on any failure.  Every setting below can be overridden
# from the environment (e.g. DEMO_NFILES=200 sh demo.sh).
set -u

# The guest runner (tools/guest/) puts the repository's files under /iopa
# and exports IOPA_KO and IOPA_DISK; the defaults follow it.
IOPA_KO=${IOPA_KO:-/iopa/kernel/iopa.ko}	# the module, if not loaded yet
if [ -z "${IOPA_DEMO:-}" ]; then		# the demo binary
	IOPA_DEMO=/iopa/tools/iopa-demo/iopa-demo
	command -v iopa-demo >/dev/null 2>&1 && IOPA_DEMO=iopa-demo
fi
DEMO_DISK=${DEMO_DISK:-${IOPA_DISK:-/dev/vda}}	# wiped!
DEMO_MNT=${DEMO_MNT:-/mnt/iopa-demo}
DEMO_NFILES=${DEMO_NFILES:-2000}
DEMO_SIZE=${DEMO_SIZE:-64k}
DEMO_WORKERS=${DEMO_WORKERS:-8}
DEMO_LIMITS=${DEMO_LIMITS:-1 8 0}
# Adjustment cycles for the adaptive run: this demo's runs last seconds,
# not the minutes the 1 s default cycle is meant for.
DEMO_FAST_MS=${DEMO_FAST_MS:-100}
DEMO_NORMAL_MS=${DEMO_NORMAL_MS:-200}

say() { echo "demo: $*"; }
fail() {
	echo "demo: FAILED: $*" >&2
	cleanup
	exit 1
}

mounted=0
cleanup() {
	if [ "$mounted" = 1 ]; then
		cd /
		umount "$DEMO_MNT" && mounted=0
	fi
}

# VALUE of the first " NAME=VALUE" in the text $2.
field() { echo "$2" | sed -n "s/.* $1=\([^ ]*\).*/\1/p" | head -n 1; }

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches || fail "cannot drop the page cache"
}

t_start=$(date +%s)
say "write $DEMO_NFILES files of $DEMO_SIZE to a fresh disk, then checksum" \
	"every file through /dev/iopa ($DEMO_WORKERS worker threads) once per in-flight" \
	"limit in '$DEMO_LIMITS', and check the results"

# --- 1. the module -------------------------------------------------------
command -v "$IOPA_DEMO" >/dev/null 2>&1 || fail "$IOPA_DEMO not found (PATH=$PATH)"
if [ ! -e /dev/iopa ]; then
	[ -f "$IOPA_KO" ] || fail "/dev/iopa is absent and $IOPA_KO does not exist"
	insmod "$IOPA_KO" || fail "insmod $IOPA_KO"
	# devtmpfs creates the node; without devtmpfs make it from sysfs.
	if [ ! -e /dev/iopa ] && [ -r /sys/class/misc/iopa/dev ]; then
		devno=$(cat /sys/class/misc/iopa/dev)
		mknod /dev/iopa c "${devno%%:*}" "${devno##*:}"
	fi
	[ -e /dev/iopa ] || fail "insmod worked but /dev/iopa did not appear"
	say "loaded $IOPA_KO"
fi
say "iopa: max_jobs=$(cat /sys/class/misc/iopa/max_jobs 2>/dev/null || echo '?')" \
	"max_submitters=$(cat /sys/class/misc/iopa/max_submitters 2>/dev/null || echo '?')" \
	"max_workers=$(cat /sys/class/misc/iopa/max_workers 2>/dev/null || echo '?')," \
	"$(grep -c ^processor /proc/cpuinfo) guest CPU(s)"

# --- 2. a file system and a file set --------------------------------------
[ -b "$DEMO_DISK" ] || fail "no block device $DEMO_DISK (the runner should attach a scratch disk)"
if command -v mkfs.ext4 >/dev/null 2>&1; then
	mkfs.ext4 -q -F "$DEMO_DISK" >/dev/null || fail "mkfs.ext4 $DEMO_DISK"
	fstype=ext4
else
	# busybox mke2fs makes ext2; the built-in ext4 driver mounts it.
	mke2fs -F "$DEMO_DISK" >/dev/null || fail "mke2fs $DEMO_DISK"
	fstype=ext2
fi
mkdir -p "$DEMO_MNT"
mount -t ext4 "$DEMO_DISK" "$DEMO_MNT" 2>/dev/null ||
	mount -t "$fstype" "$DEMO_DISK" "$DEMO_MNT" ||
	fail "mount $DEMO_DISK on $DEMO_MNT"
mounted=1
mib=$(($(cat "/sys/class/block/${DEMO_DISK##*/}/size") / 2048))
say "made $fstype on $DEMO_DISK ($mib MiB), mounted on $DEMO_MNT"

# Room for the file set (plus 10% for metadata)?
case "$DEMO_SIZE" in
*[kK]) kib=${DEMO_SIZE%?} ;;
*[mM]) kib=$((${DEMO_SIZE%?} * 1024)) ;;
*[gG]) kib=$((${DEMO_SIZE%?} * 1048576)) ;;
*) kib=$((DEMO_SIZE / 1024)) ;;
esac
need=$((DEMO_NFILES * kib * 11 / 10))
avail=$(df -k "$DEMO_MNT" | awk 'NR == 2 { print $4 }')
[ "$avail" -ge "$need" ] ||
	fail "$DEMO_DISK has $avail KiB free, the file set needs about $need KiB (give the guest a bigger disk)"

say "writing $DEMO_NFILES files x $DEMO_SIZE ..."
out=$("$IOPA_DEMO" gen "$DEMO_MNT/set" "$DEMO_NFILES" "$DEMO_SIZE") ||
	fail "iopa-demo gen"
echo "$out"
expect=$(field checksum "$out")
[ -n "$expect" ] || fail "iopa-demo gen printed no checksum"

# --- 3. the runs ----------------------------------------------------------
summary=""
for limit in $DEMO_LIMITS; do
	drop_caches
	echo
	if [ "$limit" = 0 ]; then
		sysfs=/sys/class/misc/iopa
		echo "$DEMO_FAST_MS" >$sysfs/fast_cycle_ms &&
			echo "$DEMO_NORMAL_MS" >$sysfs/normal_cycle_ms ||
			fail "cannot set the cycle lengths in $sysfs"
		say "run: $DEMO_WORKERS worker threads, adaptive in-flight limit (the kernel measures" \
			"the block-layer throughput each cycle and moves the limit; policy" \
			"$(cat $sysfs/default_policy), cycles set to ${DEMO_FAST_MS}/${DEMO_NORMAL_MS} ms" \
			"in $sysfs), page cache dropped"
	else
		say "run: $DEMO_WORKERS worker threads, in-flight limit $limit (the kernel lets at most" \
			"$limit of the submitter's jobs run at once), page cache dropped"
	fi
	extra=""
	case " $DEMO_LIMITS " in *" $limit ") extra=--check ;; esac
	# shellcheck disable=SC2086
	out=$("$IOPA_DEMO" run -w "$DEMO_WORKERS" -l "$limit" $extra "$DEMO_MNT/set")
	rc=$?
	echo "$out"
	[ $rc = 0 ] || fail "iopa-demo run -l $limit exited $rc"
	got=$(field checksum "$out")
	[ "$got" = "$expect" ] ||
		fail "run -l $limit: checksum $got, gen wrote $expect"
	if [ -n "$extra" ]; then
		echo "$out" | grep -q '^verify: ok' || fail "run -l $limit: no 'verify: ok'"
	fi
	name="limit $limit"
	[ "$limit" = 0 ] && name="adaptive (limit ranged $(echo "$out" |
		sed -n 's/.*ranged \([0-9.]*\), ended at \([0-9]*\).*/\1, final \2/p'))"
	line="$name: $(field jobs_per_s "$out") files/s,"
	line="$line $(field mbytes_per_s "$out") MB/s in $(field seconds "$out") s;"
	line="$line most jobs seen running at once: $(field max_running "$out")"
	summary="$summary
  $line"
done

# --- 4. iopa-sum: whole-tree checksums with kernel-chosen parallelism -----
IOPA_SUM=${IOPA_SUM:-/iopa/tools/iopa-sum/iopa-sum}
if [ -x "$IOPA_SUM" ]; then
	drop_caches
	echo
	say "iopa-sum: sha256 of every file under $DEMO_MNT/set through libiopa's worker" \
		"pool (adaptive limit), compared with sha256sum"
	t0=$(date +%s)
	"$IOPA_SUM" -v "$DEMO_MNT/set" >/tmp/iopa-sum.out 2>/tmp/iopa-sum.err ||
		{ cat /tmp/iopa-sum.err; fail "iopa-sum exited non-zero"; }
	t1=$(date +%s)
	find "$DEMO_MNT/set" -type f | LC_ALL=C sort | xargs sha256sum >/tmp/sha256sum.out ||
		fail "sha256sum"
	cmp -s /tmp/iopa-sum.out /tmp/sha256sum.out ||
		fail "iopa-sum and sha256sum disagree"
	grep -v '^$' /tmp/iopa-sum.err | tail -n 3
	say "iopa-sum: $(wc -l </tmp/iopa-sum.out) files in $((t1 - t0)) s, output identical to sha256sum's"
	summary="$summary
  iopa-sum: $(wc -l </tmp/iopa-sum.out) files, identical to sha256sum"
fi

# --- 5. tidy up -----------------------------------------------------------
cleanup
[ "$mounted" = 0 ] || fail "umount $DEMO_MNT"

echo
say "summary: $DEMO_NFILES files x $DEMO_SIZE read from $DEMO_DISK through /dev/iopa by $DEMO_WORKERS workers:$summary"
say "every run returned checksum $expect, the one gen wrote; a plain re-read agreed;" \
	"no fixed-limit run had more jobs running than its limit (MB = 10^6 bytes)"
say "PASS ($(($(date +%s) - t_start)) s)"
exit 0
