#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The device matrix (issue 25): does the module's default hold on device
# settings nobody tuned it to?  Runs INSIDE the QEMU guest of `make
# bench-matrix` (busybox sh, as root, a spare virtio disk as IOPA_DISK).
#
#   matrix-bench.sh
#
# A seeded generator draws BENCH_MATRIX_COUNT (12) device settings, one
# class after the other (null_blk, HDD model, throttled virtio disk):
#   nullb   null_blk through configfs, memory-backed, every request
#           completing lat_us after it was issued (log-uniform, 0.5-50 ms),
#           tags hardware tags (log-uniform, 1-128)
#   hdd     tools/hdd-model's iopa_hdd.ko at rpm (uniform, 5400-15000, in
#           steps of 100) and queue_depth (log-uniform, 1-64), under
#           mq-deadline
#   virtio  the guest's virtio disk with the reads of the runs' cgroup
#           held to riops (log-uniform, 100-5000) by cgroup v2 io.max
# and for each a file size (10k, 100k or 1m, uniform).  The seed is
# BENCH_MATRIX_SEED, else drawn from /dev/urandom; it is printed, so that
# a run can be repeated on the same settings.  BENCH_MATRIX_SETTINGS
# replaces the draw with given settings, ';' between them, each
# "class size a b" as the draw prints them ("hdd 100k 7600 10;nullb 1m
# 600 76;virtio 10k 300 -"): to run one setting again, or several times.
#
# Per setting: the module reloaded (no device seen, nothing learnt, its
# default settings), one run of adapt:default (no SET_LIMIT, no
# SET_ADAPT: what a user who tunes nothing gets), then one run at each
# fixed limit of BENCH_MATRIX_FIXED ("1 2 4 8 16 32 64"); then
# BENCH_MATRIX_ROUNDS - 1 (1) more rounds of the best of those fixed
# limits and of adapt:default from a reloaded module.  Each run is
# BENCH_MATRIX_SECS (10) long, the page cache dropped before it and each
# file's pages after its job (iopa-bench-files -r -d: every pass reads
# the device).  Prints
#
#   bench matrix dev=D params=P best_fixed=N default_pct_of_best=F
#         default_mbps=A best_mbps=B edge=0|1 rounds=R range=LO..HI
#         sweep_pct=S
#
# where A and B are the medians over the rounds of the default's runs
# and of the best fixed limit's (the sweep's run among them), F = 100 *
# A / B, LO..HI the range of that ratio round by round, and S the first
# round's alone: the default's one run against the best of the sweep's.
# S leans against the default: of several fixed limits that read alike
# (a plateau), the best is the one whose run was luckiest (null_blk's
# 1 MB sets at 0.6 and 0.9 ms, two runs of each: fixed 4 read 257-264
# MB/s, 8 251-271, 16 250-259); the rounds after measure that limit
# again, unpicked.  edge=1: the best fixed limit is
# the largest one tried, so the true best may lie beyond it.  Last:
#
#   bench matrix seed=S settings=N secs=T rounds=R median_pct=F
#         min_pct=F max_pct=F sweep_median_pct=F sweep_min_pct=F
#
# Time: a run costs its length plus ~1.5 s; 10 runs a setting (two
# rounds), ~115 s; device set-up ~10-20 s a setting (the null_blk and
# virtio file sets are written once, at full speed, and reused); 12
# settings ~25 min.
#
# Raw lines for the log: BENCH-MATRIX-RUN (one per run, the tool's
# summary) and BENCH-CONF (the module's parameters).  With
# BENCH_MATRIX_TRACE=1, the first default run's iopa_cycle,
# iopa_group_cycle and iopa_limit_change trace events too, as
# BENCH-MATRIX-TRACE lines (how the controller got where it did).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${BENCH_BIN:-$HERE}
FILES=$BIN/iopa-bench-files
MKSET=$BIN/iopa-bench-mkset
IOPA_KO=${IOPA_KO:-/iopa/kernel/iopa.ko}
HDD_KO=${HDD_KO:-/iopa/tools/hdd-model/iopa_hdd.ko}
SYS=/sys/class/misc/iopa
DISK=${IOPA_DISK:-/dev/vda}

COUNT=${BENCH_MATRIX_COUNT:-12}
SECS=${BENCH_MATRIX_SECS:-10}
FIXED=${BENCH_MATRIX_FIXED:-"1 2 4 8 16 32 64"}
SEED=${BENCH_MATRIX_SEED:-}
ROUNDS=${BENCH_MATRIX_ROUNDS:-2}
WORKERS=${BENCH_WORKERS:-64}
OUTSTANDING=${BENCH_OUTSTANDING:-256}
CFG=/sys/kernel/config
NB=$CFG/nullb/iopamx
CG=/sys/fs/cgroup
MNT=/mnt/matrix

say() { echo "bench matrix: $*"; }
fail() {
	echo "matrix-bench: $*" >&2
	echo "bench matrix: FAILED: $*"
	exit 1
}
[ "$(id -u)" = 0 ] || fail "must run as root"
[ -x "$FILES" ] && [ -x "$MKSET" ] || fail "no $FILES or $MKSET (make -C tools/bench)"
[ -b "$DISK" ] || fail "no spare disk $DISK (run-guest.sh --disk)"
case "$SEED" in
'') SEED=$(od -An -N3 -tu4 /dev/urandom | tr -d ' ') ;;
*[!0-9]*) fail "BENCH_MATRIX_SEED must be a number, not $SEED" ;;
esac
case "$ROUNDS" in
'' | *[!0-9]* | 0) fail "BENCH_MATRIX_ROUNDS must be 1 or more, not $ROUNDS" ;;
esac

tmp=$(mktemp -d /tmp/matrix.XXXXXX) || fail "mktemp"

# --- the settings ----------------------------------------------------------
# One line per setting: class size a b (nullb: lat_us tags; hdd: rpm
# queue_depth; virtio: riops -), in class order.  Log-uniform draws:
# lo * (hi / lo)^u, u in 1/1024 steps, without exp() and log() (busybox
# awk may have no maths library): (hi / lo)^(1/1024) by ten square roots.
awk -v seed="$SEED" -v n="$COUNT" '
	function sqr(a,  x, i) { x = a; for (i = 0; i < 60; i++) x = (x + a / x) / 2; return x }
	function lu(lo, hi,  f, k, i, r) {
		f = hi / lo
		for (i = 0; i < 10; i++) f = sqr(f)
		k = int(rand() * 1025)
		for (r = lo; k > 0; k--) r *= f
		return r
	}
	function size() { return sz[int(rand() * 3)] }
	BEGIN {
		srand(seed)
		sz[0] = "10k"; sz[1] = "100k"; sz[2] = "1m"
		for (i = 0; i < n; i++) {
			c = i % 3
			if (c == 0)
				line[i] = sprintf("nullb %s %d %d", size(), lu(500, 50000), lu(1, 128.99))
			else if (c == 1)
				line[i] = sprintf("hdd %s %d %d", size(), 5400 + 100 * int(rand() * 97), lu(1, 64.99))
			else
				line[i] = sprintf("virtio %s %d -", size(), lu(100, 5000))
		}
		for (c = 0; c < 3; c++)
			for (i = c; i < n; i += 3)
				print line[i]
	}' >"$tmp/settings" && [ -s "$tmp/settings" ] || fail "no settings drawn"
if [ -n "${BENCH_MATRIX_SETTINGS:-}" ]; then
	echo "$BENCH_MATRIX_SETTINGS" | tr ';' '\n' | awk '
		NF == 0 { next }
		NF != 4 || $1 !~ /^(nullb|hdd|virtio)$/ || $2 !~ /^(10k|100k|1m)$/ {
			print "bad setting: " $0 > "/dev/stderr"; exit 1
		}
		{ print }' >"$tmp/settings" && [ -s "$tmp/settings" ] ||
		fail "BENCH_MATRIX_SETTINGS: class size a b, ';' between"
	COUNT=$(wc -l <"$tmp/settings")
	SEED="given"
fi
say "seed=$SEED settings=$COUNT secs=$SECS rounds=$ROUNDS fixed=$(echo $FIXED | tr ' ' ,)"

# Files per set.  Runs walk their set again and again (-r), so a set must
# be several times the most jobs in flight (64 workers): with 100 files
# of 1 MB, a file was read by two jobs at once or again before its drop
# (-d), and fixed 64 read 11% more than 48 from the page cache while the
# device gave both the same (null_blk, 2.6 ms, 4 tags).  300 MB fits the
# 512 MB virtio disk beside the other two sets.
nfiles() {
	case "$1" in
	10k) echo 2000 ;; 100k) echo 500 ;; 1m) echo 300 ;;
	esac
}
bytes_of() {
	case "$1" in
	10k) echo 10K ;; 100k) echo 100K ;; 1m) echo 1M ;;
	esac
}
drop() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}
# mksets SIZE...: the file sets of SIZEs under $MNT.
mksets() {
	for s in "$@"; do
		[ -d "$MNT/set-$s" ] && continue
		"$MKSET" "$MNT/set-$s" "$(nfiles "$s")" "$(bytes_of "$s")" >/dev/null ||
			fail "mkset $s"
	done
	sync
}
# mountfs DEV [mkfs]: DEV's file system on $MNT.
mountfs() {
	if [ "${2:-}" = mkfs ]; then
		mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$1" ||
			fail "mkfs.ext4 $1"
	fi
	mkdir -p $MNT
	mount -t ext4 "$1" $MNT || fail "mount $1"
}
waitdev() {
	i=0
	while [ ! -b "$1" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -b "$1" ] || fail "no $1"
}

TR=/sys/kernel/tracing
# trace_on, trace_off: the default run's controller events, if asked for
trace_on() {
	[ "${BENCH_MATRIX_TRACE:-0}" = 1 ] || return 0
	[ -d $TR/events ] || mount -t tracefs none $TR || fail "mount tracefs"
	echo 0 >$TR/tracing_on && : >$TR/trace || fail "tracefs"
	for e in iopa_cycle iopa_group_cycle iopa_limit_change; do
		echo 1 >$TR/events/iopa/$e/enable || fail "enable $e"
	done
	echo 1 >$TR/tracing_on
}
trace_off() {
	[ "${BENCH_MATRIX_TRACE:-0}" = 1 ] || return 0
	echo 0 >$TR/tracing_on
	echo 0 >$TR/events/iopa/enable
	grep -v '^#' $TR/trace | sed 's/^/BENCH-MATRIX-TRACE /'
}

reload() {
	if [ -e /dev/iopa ]; then rmmod iopa || fail "rmmod iopa"; fi
	insmod "$IOPA_KO" || fail "insmod $IOPA_KO"
}
reload
params=
for f in "$SYS"/*; do
	n=${f##*/}
	case "$n" in uevent|dev) continue ;; esac
	[ -f "$f" ] && [ -r "$f" ] || continue
	params="$params $n=$(tr ' ' , <"$f")"
done
echo "BENCH-CONF device=matrix sysfs$params"
say "controller parameters: the module's defaults (none changed; default_policy=$(cat $SYS/default_policy))"

# --- one setting --------------------------------------------------------------
# run MODE SET [CGROUP]: one run (in CGROUP if given); its summary on the
# console, its MB/s in $tmp/mbps.
run() {
	drop
	if [ -n "${3:-}" ]; then
		# shellcheck disable=SC2016
		sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$3" \
			"$FILES" -m "$1" -w "$WORKERS" -t "$SECS" -r -d \
			-q "$OUTSTANDING" "$2" >"$tmp/out" || fail "iopa-bench-files $1 $2"
	else
		"$FILES" -m "$1" -w "$WORKERS" -t "$SECS" -r -d \
			-q "$OUTSTANDING" "$2" >"$tmp/out" || fail "iopa-bench-files $1 $2"
	fi
	line=$(grep '^files ' "$tmp/out")
	echo "BENCH-MATRIX-RUN dev=$dev params=$p $line"
	echo "$line" | sed -n 's/.* mbps=\([0-9.]*\).*/\1/p' >"$tmp/mbps"
	[ -s "$tmp/mbps" ] || fail "no mbps in: $line"
}
# measure SET [CGROUP]: the default from a fresh module, then the fixed
# limits; then, ROUNDS - 1 times, the best of them and the default (a
# fresh module) again; prints the setting's line.
measure() {
	reload
	trace_on
	run adapt:default "$@"
	trace_off
	echo "1 $(cat "$tmp/mbps")" >"$tmp/adapt"
	: >"$tmp/fixed"
	for l in $FIXED; do
		run "fixed:$l" "$@"
		echo "$l $(cat "$tmp/mbps")" >>"$tmp/fixed"
	done
	best=$(awk 'BEGIN { bm = -1 } $2 + 0 > bm { bm = $2 + 0; b = $1 }
		END { print b }' "$tmp/fixed")
	awk -v b="$best" '$1 == b { print 1, $2 }' "$tmp/fixed" >"$tmp/best"
	r=2
	while [ "$r" -le "$ROUNDS" ]; do
		run "fixed:$best" "$@"
		echo "$r $(cat "$tmp/mbps")" >>"$tmp/best"
		reload
		run adapt:default "$@"
		echo "$r $(cat "$tmp/mbps")" >>"$tmp/adapt"
		r=$((r + 1))
	done
	awk -v dev="$dev" -v p="$p" -v b="$best" -v edge="$([ "$best" = "${FIXED##* }" ] && echo 1 || echo 0)" '
		function med(v, n,  i, j, x) {	# v[1..n], sorted in place
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
					x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
				}
			return (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}
		FILENAME ~ /adapt$/ { a[$1] = $2 + 0; va[++na] = $2 + 0 }
		FILENAME ~ /best$/ { f[$1] = $2 + 0; vf[++nf] = $2 + 0 }
		END {
			dm = med(va, na); bm = med(vf, nf)
			lo = 1e9; hi = 0
			for (r in a) {
				q = f[r] > 0 ? 100 * a[r] / f[r] : 0
				if (q < lo) lo = q
				if (q > hi) hi = q
			}
			pct = (bm > 0) ? 100 * dm / bm : 0
			sw = (f[1] > 0) ? 100 * a[1] / f[1] : 0
			printf "bench matrix dev=%s params=%s best_fixed=%d default_pct_of_best=%.1f default_mbps=%.2f best_mbps=%.2f edge=%d rounds=%d range=%.1f..%.1f sweep_pct=%.1f\n",
				dev, p, b, pct, dm, bm, edge, na, lo, hi, sw
		}' "$tmp/adapt" "$tmp/best" >"$tmp/line" || fail "awk"
	cat "$tmp/line"
	cat "$tmp/line" >>"$tmp/lines"
}

nb_up=0
vd_up=0
cg_up=0
while read -r dev size a b; do
	case "$dev" in
	nullb)
		p="lat_us=$a,tags=$b,size=$size"
		if [ $nb_up = 0 ]; then
			# configfs device: the file sets written once at full
			# speed; each setting powers it off, sets latency and
			# tags, powers it on (memory-backed data stays)
			modprobe null_blk nr_devices=0 || fail "modprobe null_blk"
			grep -q " $CFG configfs" /proc/mounts ||
				mount -t configfs none $CFG || fail "mount configfs"
			mkdir $NB || fail "mkdir $NB"
			for kv in memory_backed=1 size=1024 queue_mode=2 irqmode=0 \
				submit_queues=1 max_sectors=256 power=1; do
				echo "${kv#*=}" >"$NB/${kv%%=*}" || fail "null_blk $kv"
			done
			waitdev /dev/iopamx
			mountfs /dev/iopamx mkfs
			mksets 10k 100k 1m
			umount $MNT || fail "umount"
			nb_up=1
		fi
		echo 0 >$NB/power
		for kv in irqmode=2 completion_nsec=$((a * 1000)) hw_queue_depth=$b power=1; do
			echo "${kv#*=}" >"$NB/${kv%%=*}" || fail "null_blk $kv"
		done
		waitdev /dev/iopamx
		mountfs /dev/iopamx
		measure "$MNT/set-$size"
		umount $MNT || fail "umount"
		;;
	hdd)
		p="rpm=$a,queue_depth=$b,size=$size"
		if [ $nb_up = 1 ]; then
			echo 0 >$NB/power
			rmdir $NB
			rmmod null_blk
			nb_up=0
		fi
		modprobe mq-deadline 2>/dev/null
		insmod "$HDD_KO" rpm="$a" queue_depth="$b" || fail "insmod $HDD_KO"
		waitdev /dev/iopahdd0
		mountfs /dev/iopahdd0 mkfs
		mksets "$size"
		measure "$MNT/set-$size"
		umount $MNT || fail "umount"
		rmmod iopa_hdd || fail "rmmod iopa_hdd"
		;;
	virtio)
		p="riops=$a,size=$size"
		if [ $vd_up = 0 ]; then
			mountfs "$DISK" mkfs
			mksets 10k 100k 1m
			grep -q " $CG cgroup2" /proc/mounts ||
				mount -t cgroup2 none $CG || fail "mount cgroup2"
			echo +io >$CG/cgroup.subtree_control || fail "io controller"
			mkdir -p $CG/iopamx
			vd_up=1 cg_up=1
		fi
		echo "$(cat "/sys/block/${DISK##*/}/dev") riops=$a" >$CG/iopamx/io.max ||
			fail "io.max riops=$a"
		measure "$MNT/set-$size" $CG/iopamx
		;;
	esac
done <"$tmp/settings"
[ $vd_up = 0 ] || umount $MNT
[ $cg_up = 0 ] || rmdir $CG/iopamx

# median and lowest of a field of the settings' lines
pcts() {
	awk -v k="$1=" '{ for (i = 1; i <= NF; i++)
		if (index($i, k) == 1) print substr($i, length(k) + 1) }' \
		"$tmp/lines" | sort -n | awk '
		{ v[NR] = $1 }
		END {
			med = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%d %.1f %.1f %.1f", NR, med, v[1], v[NR]
		}'
}
set -- $(pcts default_pct_of_best) $(pcts sweep_pct)
echo "bench matrix seed=$SEED settings=$1 secs=$SECS rounds=$ROUNDS" \
     "median_pct=$2 min_pct=$3 max_pct=$4 sweep_median_pct=$6 sweep_min_pct=$7"
rm -rf "$tmp"
