#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The file-processing benchmark of issue 5 (the IOPA paper's
# microbenchmark): fixed limits against the adaptive policies, on one
# device, with fio's best as the physical limit.  Runs INSIDE the QEMU
# guest of `make bench` / `make bench-quick` (busybox sh), or as root on
# a real Linux host with iopa loaded.
#
#   files-bench.sh ssd|hdd [quick|full] [--dir DIR] [--fio-dev DEV]
#
# In the guest (no --dir) it builds the device itself:
#   ssd  null_blk, memory-backed, completions by timer after
#        BENCH_SSD_NSEC, BENCH_SSD_QD tags, BENCH_SSD_MBPS MiB/s: an SSD
#        slowed down below the speed of the emulated CPUs (see
#        BENCH_SSD_PARAMS below)
#   hdd  tools/hdd-model's iopa_hdd.ko (a 7200 rpm disk, its defaults) under
#        its default I/O scheduler, mq-deadline
# then mkfs.ext4 and mounts it on /mnt/bench.  With --dir DIR (a real
# host) it uses DIR, a directory on a mounted file system of the device
# under test, creating the file sets there if they are not there yet;
# with --fio-dev DEV (the block device holding DIR's file system: the
# partition, as FIEMAP offsets are relative to it) fio reads DEV (read
# only, O_DIRECT) for the physical limit, else fio and the competing-load
# run are skipped.  IOPA_KO (default /iopa/kernel/iopa.ko) is loaded if
# /dev/iopa is missing; BENCH_BIN (default: this script's directory) holds
# iopa-bench-files and iopa-bench-mkset.  ssd|hdd then only names the
# device in the results (hdd also runs the dispatch order comparison).
#
# What it runs, on each file size (10k, 100k, 1m = 10 KiB, 100 KiB,
# 1 MiB; quick: BENCH_QUICK_SIZE only):
#   fio      random reads of the file size over the region where the
#            files lie, O_DIRECT, libaio at each of BENCH_FIO_QDS; the
#            best is the physical limit
#   cells    iopa-bench-files fixed:1..64, adapt:iopa, adapt:hillclimb,
#            BENCH_RUNS runs each (interleaved: run 1 of every mode, then
#            run 2...), page cache dropped before each, BENCH_SECS each
#   order    (hdd) FIFO against SORTED dispatch (IOPA_IOC_SET_ORDER) at
#            one fixed limit, the knee of the cell just measured: the
#            smallest fixed limit whose mean is within 5% of the best
#            fixed mean (BENCH_ORDER_LIMIT=N instead), BENCH_RUNS runs each
#   compete  (the BENCH_QUICK_SIZE set) one run per adaptive policy of
#            2 x BENCH_SECS, with a fio random-read load on the same
#            region (libaio, BENCH_COMPETE_QD: the SSD's tag depth, 4 on
#            the HDD) from halfway to the end
#
# The controller's cycles are shortened (BENCH_SYSFS, written to
# /sys/class/misc/iopa/ and restored at the end) so that a run of seconds
# holds tens of cycles; the settings are printed as BENCH-CONF.
#
# Output on the console (the guest's only way out), parsed by report.py:
#   BENCH-CONF  key=value...           settings
#   BENCH-SET   device= size= files= bytes= span_lo= span_hi=
#   BENCH-FIO   device= size= bs= qd= mbps= iops=
#   BENCH-RUN   device= size= kind=cell|order|compete run= rid= mode= ...
#   BENCH-TS    RID t_ms bytes files limit mode inflight pending
#   BENCH-EVENT rid= t_ms= event=compete-start|compete-end fio_mbps=
#   BENCH-DIR   rid= up_files= up_secs= down_files= down_secs= reversals=
#               (order runs: fetches by direction of the dispatch sweep)
#   bench ...   progress for people (never "bench cell"/"bench order")
set -u

KIND=${1:-}
case "$KIND" in
ssd|hdd) shift ;;
*) echo "usage: files-bench.sh ssd|hdd [quick|full] [--dir DIR] [--fio-dev DEV]" >&2
	exit 2 ;;
esac
LEVEL=full
DIR=
FIODEV=
while [ $# -gt 0 ]; do
	case "$1" in
	quick|full) LEVEL=$1; shift ;;
	--dir) DIR=$2; shift 2 ;;
	--fio-dev) FIODEV=$2; shift 2 ;;
	*) echo "files-bench: unknown argument $1" >&2; exit 2 ;;
	esac
done

HERE=$(cd "$(dirname "$0")" && pwd)
BIN=${BENCH_BIN:-$HERE}
FILES=$BIN/iopa-bench-files
MKSET=$BIN/iopa-bench-mkset
IOPA_KO=${IOPA_KO:-/iopa/kernel/iopa.ko}
HDD_KO=${HDD_KO:-/iopa/tools/hdd-model/iopa_hdd.ko}
SYS=/sys/class/misc/iopa

if [ "$LEVEL" = quick ]; then
	RUNS=${BENCH_RUNS:-1}
	SIZES=${BENCH_SIZES:-${BENCH_QUICK_SIZE:-100k}}
	FIO_QDS=${BENCH_FIO_QDS:-"1 4 16 64"}
else
	RUNS=${BENCH_RUNS:-3}
	SIZES=${BENCH_SIZES:-"10k 100k 1m"}
	FIO_QDS=${BENCH_FIO_QDS:-"1 2 4 8 16 32 64"}
fi
QSIZE=${BENCH_QUICK_SIZE:-100k}
SECS=${BENCH_SECS:-8}
FIO_SECS=${BENCH_FIO_SECS:-2}
WORKERS=${BENCH_WORKERS:-64}
MODES=${BENCH_MODES:-"fixed:1 fixed:2 fixed:4 fixed:8 fixed:16 fixed:32 fixed:64 adapt:iopa adapt:hillclimb"}
# Time series on the console: adaptive runs (adapt), all runs, or none.
TS=${BENCH_TS:-adapt}
# The controller's cycles, a fifth of the defaults (500/1000/6000 ms);
# max_limit as high as the highest fixed limit (the default, 4 x CPUs,
# is 8 in a 2-vCPU guest).  Everything else at the module's defaults.
# BENCH_SYSFS="" (set and empty) writes nothing.
SYSFS=${BENCH_SYSFS-"fast_cycle_ms=100 normal_cycle_ms=200 hold_cycle_ms=1200 max_limit=64"}
# ssd: every request completes BENCH_SSD_NSEC after it was issued, at
# most BENCH_SSD_QD at once (1 hardware queue: the SSD's internal
# parallelism), at most BENCH_SSD_MBPS MiB/s (null_blk's token bucket,
# refilled every 20 ms): an SSD slowed down ~100 times, so that the
# emulated CPUs are not the bottleneck (buffered reads and the checksum
# top out near 55 MB/s on the 2 TCG vCPUs).  Measured: 10k and 100k
# files peak at 16 files in flight, 1m at 8.
SSD_NSEC=${BENCH_SSD_NSEC:-40000000}
SSD_QD=${BENCH_SSD_QD:-16}
SSD_MBPS=${BENCH_SSD_MBPS:-30}
SSD_PARAMS=${BENCH_SSD_PARAMS:-"queue_mode=2 irqmode=2 completion_nsec=$SSD_NSEC hw_queue_depth=$SSD_QD submit_queues=1 memory_backed=1 gb=1 mbps=$SSD_MBPS"}
HDD_PARAMS=${BENCH_HDD_PARAMS:-}
# Files per set, per device and size (BENCH_NFILES_<dev>_<size>): enough
# that the fastest run does not finish them in BENCH_SECS.
nfiles() {
	eval "v=\${BENCH_NFILES_${KIND}_$1:-}"
	if [ -n "$v" ]; then echo "$v"; return; fi
	case "$KIND-$1" in
	ssd-10k) echo 4000 ;;
	ssd-100k) echo 5000 ;;
	ssd-1m) echo 260 ;;
	hdd-10k) echo 5000 ;;
	hdd-100k) echo 3000 ;;
	hdd-1m) echo 350 ;;
	*) echo 1000 ;;
	esac
}
bytes_of() {
	case "$1" in
	10k) echo 10K ;; 100k) echo 100K ;; 1m) echo 1M ;;
	*) echo "$1" ;;
	esac
}
bs_of() {
	case "$1" in
	10k) echo 10240 ;; 100k) echo 102400 ;; 1m) echo 1048576 ;;
	*) echo "$1" ;;
	esac
}

say() { echo "bench $KIND: $*"; }
# The controller's sysfs parameters as they were, restored on the way out.
saved=
restore() {
	for kv in $saved; do echo "${kv#*=}" >"$SYS/${kv%%=*}"; done
	saved=
}
fail() {
	echo "files-bench: $*" >&2
	echo "bench $KIND: FAILED: $*"
	restore
	exit 1
}

[ "$(id -u)" = 0 ] || fail "must run as root (drop_caches, sysfs, modules)"
if [ ! -x "$FILES" ] || [ ! -x "$MKSET" ]; then
	fail "no $FILES or $MKSET (make -C tools/bench)"
fi
command -v fio >/dev/null 2>&1 || { [ -z "$DIR" ] && fail "no fio"; }

tmp=$(mktemp -d /tmp/files-bench.XXXXXX) || fail "mktemp"
RES=$tmp/results
: >"$RES"

# --- the module and its parameters -------------------------------------
[ -e /dev/iopa ] || insmod "$IOPA_KO" || fail "insmod $IOPA_KO"
[ -d "$SYS" ] || fail "no $SYS"
for kv in $SYSFS; do
	k=${kv%%=*}
	[ -f "$SYS/$k" ] || fail "no $SYS/$k"
	saved="$saved $k=$(cat "$SYS/$k")"
	echo "${kv#*=}" >"$SYS/$k" || fail "cannot write $kv to $SYS/$k"
done
params=
for f in increase_threshold decrease_threshold fast_cycle_ms normal_cycle_ms \
	hold_cycle_ms history init_limit fast_cap max_limit default_policy; do
	[ -f "$SYS/$f" ] && params="$params $f=$(cat "$SYS/$f")"
done

# --- the device ---------------------------------------------------------
MNT=
BLK=
setup_ssd() {
	# shellcheck disable=SC2086
	modprobe null_blk nr_devices=1 $SSD_PARAMS || fail "modprobe null_blk"
	BLK=/dev/nullb0
}
setup_hdd() {
	# mq-deadline is a module in Debian's kernel: load it first, so that
	# the new rotational single-queue disk gets it as its default.
	modprobe mq-deadline 2>/dev/null
	# shellcheck disable=SC2086
	insmod "$HDD_KO" $HDD_PARAMS || fail "insmod $HDD_KO"
	BLK=/dev/iopahdd0
}
if [ -z "$DIR" ]; then
	case "$KIND" in
	ssd) setup_ssd ;;
	hdd) setup_hdd ;;
	esac
	i=0
	while [ ! -b "$BLK" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	[ -b "$BLK" ] || fail "no $BLK"
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$BLK" ||
		fail "mkfs.ext4 $BLK"
	MNT=/mnt/bench
	mkdir -p $MNT
	mount -t ext4 "$BLK" $MNT || fail "mount $BLK"
	DIR=$MNT
	FIODEV=$BLK
else
	[ -d "$DIR" ] || fail "--dir $DIR: not a directory"
	[ -z "$FIODEV" ] || [ -b "$FIODEV" ] || fail "--fio-dev $FIODEV: not a block device"
fi
qinfo=
if [ -n "$FIODEV" ]; then
	q=/sys/block/$(basename "$(readlink -f "$FIODEV")")/queue
	if [ -d "$q" ]; then
		qinfo="rotational=$(cat "$q/rotational")"
		qinfo="$qinfo scheduler=$(sed 's/.*\[\(.*\)\].*/\1/' "$q/scheduler")"
		qinfo="$qinfo nr_requests=$(cat "$q/nr_requests")"
		qinfo="$qinfo max_sectors_kb=$(cat "$q/max_sectors_kb")"
		qinfo="$qinfo read_ahead_kb=$(cat "$q/read_ahead_kb")"
	fi
fi
case "$KIND" in
ssd) devdesc="null_blk $SSD_PARAMS" ;;
hdd) devdesc="iopa_hdd ${HDD_PARAMS:-defaults}" ;;
esac
[ -n "$MNT" ] || devdesc="host dir=$DIR fio_dev=${FIODEV:-none}"
echo "BENCH-CONF device=$KIND level=$LEVEL vcpus=$(nproc) mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo) kernel=$(uname -r) secs=$SECS runs=$RUNS workers=$WORKERS fio_secs=$FIO_SECS sizes=$(echo "$SIZES" | tr ' ' ,) fio_qds=$(echo "$FIO_QDS" | tr ' ' ,)"
echo "BENCH-CONF device=$KIND dev=$devdesc"
echo "BENCH-CONF device=$KIND queue $qinfo"
echo "BENCH-CONF device=$KIND sysfs$params"
echo "BENCH-CONF device=$KIND sysfs_changed $SYSFS"
say "controller cycles shortened for runs of ${SECS}s: $SYSFS (module defaults: fast_cycle_ms=500 normal_cycle_ms=1000 hold_cycle_ms=6000 max_limit=4xCPUs)"

# --- file sets ----------------------------------------------------------
made=
for s in $SIZES $QSIZE; do
	case " $made " in *" $s "*) continue ;; esac
	made="$made $s"
	set_dir=$DIR/set-$s
	if [ -d "$set_dir" ]; then
		out=$("$MKSET" -x "$set_dir") || fail "mkset -x $set_dir"
	else
		out=$("$MKSET" "$set_dir" "$(nfiles "$s")" "$(bytes_of "$s")") ||
			fail "mkset $set_dir"
	fi
	echo "BENCH-SET device=$KIND size=$s ${out#mkset }"
	eval "span_lo_$s=$(echo "$out" | sed 's/.*span_lo=\([0-9]*\).*/\1/')"
	eval "span_hi_$s=$(echo "$out" | sed 's/.*span_hi=\([0-9]*\).*/\1/')"
done
sync

drop() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# fio_args SIZE: the region of the set of SIZE on FIODEV, O_DIRECT reads.
fio_args() {
	lo=0 hi=0
	eval "lo=\$span_lo_$1 hi=\$span_hi_$1"
	bs=$(bs_of "$1")
	# Whole blocks of the fio block size inside the region.
	len=$(( (hi - lo) / bs * bs ))
	[ "$len" -ge "$bs" ] || len=$bs
	echo "--filename=$FIODEV --readonly --direct=1 --rw=randread --bs=$bs --offset=$lo --size=$len --ioengine=libaio --norandommap --randrepeat=0"
}

# --- fio: the physical limit --------------------------------------------
if [ -n "$FIODEV" ]; then
	for s in $SIZES; do
		best=0
		for qd in $FIO_QDS; do
			drop
			# shellcheck disable=SC2046
			out=$(fio --name=char $(fio_args "$s") --iodepth="$qd" \
				--time_based --runtime="$FIO_SECS" --minimal) ||
				fail "fio $s qd $qd"
			# terse v3: field 7 read KiB/s, 8 read IOPS
			line=$(echo "$out" | awk -F';' -v d="$KIND" -v s="$s" -v qd="$qd" -v bs="$(bs_of "$s")" \
				'{ printf "device=%s size=%s bs=%s qd=%s mbps=%.3f iops=%.1f", d, s, bs, qd, $7 * 1024 / 1e6, $8 }')
			echo "BENCH-FIO $line"
			m=$(echo "$line" | sed 's/.*mbps=\([0-9.]*\).*/\1/')
			best=$(awk -v a="$best" -v b="$m" 'BEGIN { print (b > a) ? b : a }')
		done
		say "fio size=$s best=${best} MB/s over qd $FIO_QDS"
	done
else
	say "no --fio-dev: fio characterisation skipped"
fi

# --- runs -----------------------------------------------------------------
# run SIZE KIND RUN MODE ORDER [SECS]: one iopa-bench-files run, after
# dropping the page cache (unless NODROP=1); its line goes to the console
# and to $RES.
rid_of() { echo "$KIND.$1.$2.$(echo "$4" | tr : -).$5.$3"; }
run() {
	size=$1 kind=$2 n=$3 mode=$4 order=$5 secs=${6:-$SECS}
	rid=$(rid_of "$@")
	series=
	case "$TS:$mode:$kind" in
	all:*|adapt:adapt*|*:compete) series=$tmp/ts ;;
	esac
	# Order runs log each fetched job's first block (FIBMAP), to see
	# which way the dispatch sweeps.
	dlog=
	[ "$kind" != order ] || dlog=$tmp/dlog
	[ "${NODROP:-0}" = 1 ] || drop
	out=$("$FILES" -m "$mode" -o "$order" -w "$WORKERS" -t "$secs" \
		${series:+-s "$series" -p BENCH-TS} ${dlog:+-D "$dlog"} \
		-l "$rid" "$DIR/set-$size") ||
		fail "iopa-bench-files $mode $order on set-$size"
	line="BENCH-RUN device=$KIND size=$size kind=$kind run=$n rid=$rid ${out#files }"
	echo "$line"
	echo "$line" >>"$RES"
	case "$out" in
	*stopped=done*) say "note: $rid read the whole set before ${secs}s (its MB/s is over its shorter time; BENCH_NFILES_${KIND}_$size makes the set larger)" ;;
	esac
	if [ -n "$series" ]; then
		grep -v '^#' "$series" | sed "s/^BENCH-TS /BENCH-TS $rid /"
		rm -f "$series"
	fi
	if [ -n "$dlog" ]; then
		# Fetches until the cap, each counted in the direction of its
		# step from the previous one (up: a higher first block), with
		# the time since the previous fetch; reversals: changes of the
		# majority direction over the last 16 steps (local inversions
		# of jobs fetched at the same time do not count).
		awk -v rid="$rid" -v cap="$secs" '
			$1 > cap * 1e6 { exit }
			NR > 1 && $4 >= 0 && pb >= 0 && $4 != pb {
				dt = $1 - pt
				if ($4 > pb) { up++; tu += dt; sg = 1 } else { dn++; td += dt; sg = -1 }
				k = n++ % 16
				sum += sg - w[k]
				w[k] = sg
				dir = sum > 0 ? 1 : sum < 0 ? -1 : pdir
				if (n >= 16 && pdir && dir != pdir) rev++
				if (n >= 16) pdir = dir
			}
			{ pt = $1; pb = $4 }
			END { printf "BENCH-DIR rid=%s up_files=%d up_secs=%.3f down_files=%d down_secs=%.3f reversals=%d\n", rid, up, tu / 1e6, dn, td / 1e6, rev }' "$dlog"
		rm -f "$dlog"
	fi
}

# mean_of SIZE KIND MODE ORDER: mean MB/s of the matching runs in $RES.
mean_of() {
	awk -v s="$1" -v k="$2" -v m="$3" -v o="$4" '
		index($0, " size=" s " ") && index($0, " kind=" k " ") &&
		index($0, " mode=" m " ") && index($0, " order=" o " ") {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^mbps=/) { t += substr($i, 6); n++ }
		}
		END { if (n) printf "%.2f", t / n; else print "nan" }' "$RES"
}

for s in $SIZES; do
	i=1
	while [ $i -le "$RUNS" ]; do
		for m in $MODES; do
			run "$s" cell $i "$m" fifo
		done
		i=$((i + 1))
	done
	summary=
	best_v=0 fixed=
	for m in $MODES; do
		v=$(mean_of "$s" cell "$m" fifo)
		summary="$summary ${m#adapt:}=$v"
		case "$m" in
		fixed:*)
			fixed="$fixed ${m#fixed:}=$v"
			if awk -v a="$v" -v b="$best_v" 'BEGIN { exit !(a > b) }'; then
				best_v=$v
			fi ;;
		esac
	done
	say "size=$s MB/s (mean of $RUNS):$summary"

	if [ "$KIND" = hdd ]; then
		# Dispatch order at the knee: the smallest fixed limit within 5%
		# of the best fixed mean just measured.
		knee=$(echo "$fixed" | tr ' ' '\n' | awk -F= -v b="$best_v" '
			NF == 2 && $2 >= 0.95 * b && (k == "" || $1 + 0 < k + 0) { k = $1 }
			END { print (k == "") ? 1 : k }')
		lim=${BENCH_ORDER_LIMIT:-$knee}
		if [ -n "${BENCH_ORDER_LIMIT:-}" ]; then from="env"; else from="knee"; fi
		echo "BENCH-CONF device=$KIND order_size=$s order_limit=$lim order_limit_from=$from"
		i=1
		while [ $i -le "$RUNS" ]; do
			run "$s" order $i "fixed:$lim" fifo
			run "$s" order $i "fixed:$lim" sorted
			i=$((i + 1))
		done
		say "order size=$s limit=$lim fifo=$(mean_of "$s" order "fixed:$lim" fifo) sorted=$(mean_of "$s" order "fixed:$lim" sorted) MB/s"
	fi
done

# --- competing load -------------------------------------------------------
compete() {
	mode=$1
	half=$SECS
	total=$((2 * SECS))
	rid=$(rid_of "$QSIZE" compete 1 "$mode" fifo)
	case "$KIND" in
	ssd) cqd=${BENCH_COMPETE_QD:-$SSD_QD} ;;
	*) cqd=${BENCH_COMPETE_QD:-4} ;;
	esac
	drop
	# fio takes a second or two to start under TCG: it starts now and
	# waits (--startdelay) until halfway, so its I/O begins on time.
	(
		# shellcheck disable=SC2046
		o=$(fio --name=compete $(fio_args "$QSIZE") --iodepth="$cqd" \
			--startdelay="$half" --time_based --runtime="$half" \
			--minimal 2>&1)
		echo "BENCH-EVENT rid=$rid t_ms=$((2 * half * 1000)) event=compete-end qd=$cqd fio_mbps=$(echo "$o" | awk -F';' 'NF > 8 { printf "%.3f", $7 * 1024 / 1e6 }')"
	) &
	cpid=$!
	echo "BENCH-EVENT rid=$rid t_ms=$((half * 1000)) event=compete-start qd=$cqd"
	NODROP=1
	run "$QSIZE" compete 1 "$mode" fifo "$total"
	NODROP=0
	wait "$cpid"
}
if [ -n "$FIODEV" ]; then
	for m in adapt:hillclimb adapt:iopa; do
		compete "$m"
	done
	say "compete done (fio qd ${BENCH_COMPETE_QD:-default} from ${SECS}s of $((2 * SECS))s)"
else
	say "no --fio-dev: competing-load run skipped"
fi

# --- done -------------------------------------------------------------------
restore
if [ -n "$MNT" ]; then
	umount $MNT || fail "umount $MNT"
	case "$KIND" in
	ssd) rmmod null_blk ;;
	hdd) rmmod iopa_hdd ;;
	esac
fi
rm -rf "$tmp"
say "done"
