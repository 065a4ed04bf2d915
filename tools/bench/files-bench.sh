#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The file-processing benchmark (issues 5 and 12; the IOPA paper's
# microbenchmark): fixed limits against the adaptive policies on one
# device, at the module's default settings, with fio's best as the
# physical limit, and scenarios that change under the controller's feet.
# Runs INSIDE the QEMU guest of `make bench` / `make bench-quick` (busybox
# sh), or as root on a real Linux host with iopa loaded.
#
#   files-bench.sh ssd|hdd [quick|full] [--dir DIR] [--fio-dev DEV]
#
# In the guest (no --dir) it builds the device itself:
#   ssd  null_blk, memory-backed, every request completing BENCH_SSD_NSEC
#        (40 ms) after it was issued, BENCH_SSD_QD (16) tags, requests of up
#        to 128 KiB: an SSD ~100 times slower than a real one, so that its
#        knee is its tag depth (16 jobs in flight, for every file size) and
#        the emulated CPUs are not the limit (400 requests/s; measured
#        under TCG: 3.7, 36 and 49 MB/s for 10k, 100k and 1m files at 16
#        in flight with the CPUs 20-30% busy; fio 50 MB/s).  No bandwidth
#        throttle (null_blk's mbps re-arms an hrtimer that warned on a
#        re-run)
#   hdd  tools/hdd-model's iopa_hdd.ko (a 7200 rpm disk, its defaults) under
#        its default I/O scheduler, mq-deadline
# then mkfs.ext4 and mounts it on /mnt/bench.  With --dir DIR (a real
# host) it uses DIR, a directory on a mounted file system of the device
# under test, creating the file sets there if they are not there yet;
# with --fio-dev DEV (the block device holding DIR's file system: the
# partition, as FIEMAP offsets are relative to it) fio reads DEV (read
# only, O_DIRECT) for the physical limit and makes the competing load,
# else fio and the load scenario are skipped.  IOPA_KO (default
# /iopa/kernel/iopa.ko) is loaded if /dev/iopa is missing; BENCH_BIN
# (default: this script's directory) holds iopa-bench-files and
# iopa-bench-mkset.  ssd|hdd then only names the device in the results
# (hdd also runs the dispatch order comparison).
#
# Every run: one submitter (per tenant) walks a file set in readdir
# order, again and again until the run's time cap (iopa-bench-files -r;
# each file's pages are dropped once its job is done, -d, so every pass
# reads the device), at most BENCH_OUTSTANDING jobs submitted and not
# reaped; BENCH_WORKERS workers per submitter read and checksum each
# file; the page cache is dropped before each run.  Scenarios (the
# BENCH_SCENARIOS words):
#   cells    per file size of BENCH_SIZES: the fixed limits BENCH_FIXED,
#            adapt:default (no SET_ADAPT: the module's default_policy) and
#            the explicit policies BENCH_POLICIES, BENCH_RUNS runs
#            interleaved (run 1 of every mode, then run 2, ...).  Run 1
#            screens every fixed limit; runs 2.. repeat the BENCH_SCREEN
#            best of run 1 (0: all) and adapt:default; the explicit
#            policies run in the first BENCH_POLICY_RUNS runs.
#            BENCH_MODES, if set, is instead the mode list of every run
#   order    (hdd) per size of BENCH_ORDER_SIZES: FIFO against SORTED
#            dispatch (IOPA_IOC_SET_ORDER) at one fixed limit, the knee of
#            the cell: the smallest fixed limit whose mean is within 5% of
#            the best fixed mean (BENCH_ORDER_LIMIT=N instead), BENCH_RUNS
#            runs each, BENCH_ORDER_OUTSTANDING jobs queued (SORTED sorts
#            what is pending)
#   load     a load step: BENCH_STEP_SECS runs of BENCH_LOAD_MODES on the
#            BENCH_LOAD_SIZE set (ssd BENCH_SIZE, hdd 1m: one stream is
#            best alone, more hold their own against fio), with fio random
#            reads of that size (libaio, BENCH_COMPETE_QD: the SSD's tag
#            depth, 4 on the HDD) on the same region from 1/3 to 2/3 of
#            the run
#   size     a file-size step, a batch: BENCH_SIZE_MODES runs of one
#            submitter processing N1 files of the BENCH_SWITCH_FROM set
#            (10k), then N2 of the BENCH_SWITCH_TO set (1m), to the last
#            (BENCH_SIZE_WORK "N1:N2": each phase about half of
#            BENCH_STEP_SECS at its best fixed limit; 4 x BENCH_STEP_SECS
#            is a safety cap)
#   tenants  per count N of BENCH_TENANTS: N processes, each with its own
#            /dev/iopa context, submitter and workers, taking every N-th
#            file of the BENCH_SIZE set; the last one starts
#            BENCH_TENANT_JOIN seconds late (default a quarter of the run);
#            BENCH_TENANT_SECS runs of BENCH_TENANT_MODES (every tenant in
#            the same mode), BENCH_TENANT_RUNS interleaved runs
#   short    what a user of a short job sees (issue 25): per S of
#            BENCH_SHORT_SECS, BENCH_SHORT_ROUNDS rounds of: the module
#            reloaded (no device seen, no knee remembered), adapt:default
#            for S s (state=cold), adapt:default again (state=warm: the
#            device seen by the run before), then the fixed limits
#            BENCH_SHORT_FIXED for S s each, on the BENCH_SIZE set.
#            Prints "bench short device=D secs=S state=cold|warm
#            default_pct_of_best=F best_fixed=N rounds=R range=LO..HI"
#            (the median MB/s of the state's runs over that of the best
#            fixed limit's; the range over the rounds) and, from the cold
#            runs of the longest S, "bench converge device=D
#            ms_to_90pct=N rounds=R range=LO..HI": from the first job
#            (its SUBMIT; first_job_ms of the run's line) until the
#            throughput over the last second first reached 90% of the best
#            fixed limit's mean (-1: never), and "fixed_ms_to_90pct=M
#            fixed=N": the same count for that limit's runs (a second's
#            window and 100 ms samples put it at 900 to 1000 ms for a
#            limit right from the first job).  After each adaptive run,
#            "BENCH-KNEES kind=shortS run=R state=cold|warm <knees>": the
#            module's knees file, lines joined by ';' (what the warm run
#            starts from)
#   share    several tools on one disk (issue 25): per K of
#            BENCH_SHARE_N, BENCH_SHARE_ROUNDS rounds of K processes (-n K,
#            all from the start) in adapt:default for BENCH_SHARE_SECS on
#            the BENCH_SHARE_SIZE set, and in each round one process alone
#            at each fixed limit of BENCH_SHARE_FIXED.  Prints "bench
#            share device=D size=S n=K total_pct_of_solo=F jain=F
#            solo_fixed=N rounds=R": the K processes' total MB/s (median
#            over the rounds) over the best solo fixed limit's median, and
#            Jain's index of the processes' bytes over 5 s windows (the
#            mean over the windows of every round)
#   cpu      CPU-bound jobs: the 64k set, read once beforehand and kept in
#            the page cache, each job BENCH_CPU_PASSES more checksum
#            passes over its data (the knee is the CPU count; no block
#            I/O, so the controller measures jobs/s); a cell like the
#            others with BENCH_CPU_FIXED and BENCH_CPU_RUNS runs
# and first fio: random reads of each cell's file size over the region
# where its files lie, O_DIRECT, libaio at each of BENCH_FIO_QDS for
# BENCH_FIO_SECS; the best is the physical limit.
#
# The module runs at its DEFAULT settings: BENCH_SYSFS (default empty)
# lists key=value settings to write to /sys/class/misc/iopa/ for the run
# (restored at the end); every parameter is printed as BENCH-CONF either
# way, with "sysfs_changed none" when nothing was written.
#
# Knobs and defaults (full / quick):
#   BENCH_SECS 20             cell run length (s): start-up a fair share
#   BENCH_RUNS 3 / 1          runs per cell mode
#   BENCH_SIZES "10k 100k 1m" / BENCH_SIZE      cell file sizes
#   BENCH_SIZE 100k           size of the load and tenants scenarios and
#                             of the quick cell (BENCH_QUICK_SIZE: same)
#   BENCH_FIXED "1 2 4 8 16 32 64" / "4 16 64"  cell fixed limits
#   BENCH_SCREEN 3            fixed limits repeated after run 1
#   BENCH_POLICIES            explicit policies: iopa hillclimb bracket
#                             without the default one / iopa (hillclimb
#                             if iopa is the default); a policy the module
#                             refuses is skipped with a note
#   BENCH_POLICY_RUNS 1       runs of the explicit policies
#   BENCH_MODES               (unset) fixed mode list of every cell run
#   BENCH_SCENARIOS           full: ssd "cells load size tenants cpu",
#                             hdd "cells order load size tenants";
#                             quick: ssd "cells load tenants", hdd
#                             "cells order size tenants"
#   BENCH_STEP_SECS 30        load and size step run length
#   BENCH_LOAD_MODES "fixed:4 fixed:16 fixed:64 adapt:default" (hdd: and
#                    fixed:1) / "fixed:16 fixed:64 adapt:default"
#   BENCH_LOAD_SIZE  ssd BENCH_SIZE, hdd 1m
#   BENCH_COMPETE_QD          fio's queue depth in the load step
#   BENCH_SIZE_MODES ssd "fixed:4 fixed:16 fixed:64 adapt:default", hdd
#                    "fixed:1 fixed:2 fixed:4 fixed:16 adapt:default" /
#                    ssd "fixed:16 fixed:64 adapt:default", hdd "fixed:1
#                    fixed:4 adapt:default"
#   BENCH_SWITCH_FROM 10k, BENCH_SWITCH_TO 1m   the size step's sets
#   BENCH_SIZE_WORK  ssd "5600:720", hdd "2500:640": the size step's files
#                    of each set (the models' best fixed MB/s: 3.9 and 50,
#                    1.7 and 44, times 15 s)
#   BENCH_TENANTS "2 4" / ssd "2", hdd "4"
#   BENCH_TENANT_SECS 30, BENCH_TENANT_JOIN (a quarter of the run)
#   BENCH_TENANT_RUNS 3 / 1   runs 2.. repeat the default mode and the
#                             best fixed mode of run 1
#   BENCH_TENANT_MODES "fixed:4 fixed:16 adapt:default"
#   BENCH_CPU_FIXED "1 2 4 16", BENCH_CPU_RUNS 2 / 1, BENCH_CPU_PASSES 256
#   BENCH_SHORT_SECS "2 5" / 5, BENCH_SHORT_ROUNDS 3 / 2,
#   BENCH_SHORT_FIXED ssd "4 16", hdd "1 4 16"
#   BENCH_SHARE_N "2 4", BENCH_SHARE_ROUNDS 3 / 1, BENCH_SHARE_SECS 15,
#   BENCH_SHARE_SIZE ssd BENCH_SIZE, hdd 1m, BENCH_SHARE_FIXED ssd "4 16",
#   hdd "1 2 4"
#   BENCH_ORDER_SIZES 10k / BENCH_SIZE, BENCH_ORDER_LIMIT (the knee),
#   BENCH_ORDER_OUTSTANDING 4096
#   BENCH_FIO_QDS "1 4 16 64", BENCH_FIO_SECS 2
#   BENCH_WORKERS 64, BENCH_OUTSTANDING 256
#   BENCH_SYSFS ""            controller settings to write (none)
#   BENCH_TS adapt            time series of cell runs: adapt, all, none
#                             (scenario runs always have theirs)
#   BENCH_SSD_NSEC 40000000, BENCH_SSD_QD 16, BENCH_SSD_GB 1,
#   BENCH_SSD_PARAMS (all of null_blk's parameters), BENCH_HDD_PARAMS
#   BENCH_NFILES_<dev>_<size> files per set (see nfiles below)
#
# The fixed limits, chosen so that each scenario's best one is among
# them: the SSD model's knee is 16 for every file size (its 16 tags); the
# HDD model's is 4 for 10k and 100k files (flat beyond) and 1 for 1m
# files (one stream at a time reads sequentially); 64 shows the far side
# of the knee.  The full cells screen 1..64; the quick cell (100k) needs
# 4, 16 and 64 (best: 16 on the SSD, 4-64 flat on the HDD).  Load step:
# fio takes tags, so the best is at or past the knee (16, 64; full: 4
# too).  Size step: 10k wants >= 4 (SSD 16), 1m wants 1 (HDD) or 16
# (SSD): 1 and 16 (full: 4 and 64 too).  Tenants: n tenants share the
# knee, 16/n each on the SSD: 4 (= 16/4) and 16 (past it for any n).
# CPU-bound: the knee is the CPU count (2 vCPUs): 1, 2, 4, 16.
#
# Time budget (seconds).  A run costs its length plus ~1.5 s (dropping
# the caches, starting 64 workers, stopping: 1-1.5 s measured under TCG
# on 2 cores); boot, mkfs and the file sets ~50 s; fio 3.5 s a depth.
#   full ssd:  setup 50 + fio 3 sizes x 4 depths x 3.5 = 42
#              + cells 3 sizes x (run 1: 7 fixed + default + 2 policies,
#                runs 2-3: 3 fixed + default: 18 runs) x 21.5 = 1161
#              + cpu (7 + 4) x 21.5 = 237 + load 4 x 31.5 = 126
#              + size 5 x 31.5 = 158 + tenants 2 counts x 3 x 41.5 = 249
#              = ~2020 (34 min)
#   full hdd:  the same without cpu, with order 10k 2 x 3 x 21.5 = 129
#              = ~1915 (32 min)
#   quick ssd: setup 35 + fio 4 x 3.5 = 14 + cell 100k (3 fixed + default
#              + iopa) 5 x 21.5 = 108 + load 3 x 31.5 = 95 + tenants 2:
#              3 x 31.5 = 95 + short 2 rounds x (reload 1 + 4 x 6.5) = 55
#              + share 1 round x (2 solo + 2) x 16.5 = 66 = ~470 (8 min)
#   quick hdd: setup 50 + fio 14 + cell 108 + order 2 x 21.5 = 43 + size
#              3 x 31.5 = 95 + tenants 4: 95 + short 2 x (1 + 5 x 6.5) = 67
#              + share (3 solo + 2) x 16.5 = 83 = ~555 (9 min)
#   full, short: ssd 3 x (2 + 4 x (3.5 + 6.5)) = 126, hdd 3 x (2 + 5 x 10)
#              = 156; share: ssd 3 x 66 = 198, hdd 3 x 83 = 249
# With the dispatch bench (~1.5 min), the host's builds and report.py
# (~1 min), `make bench` takes ~80 min and `make bench-quick` ~19 min.
# More runs, sizes or modes cost 21.5 s a run.
#
# Output on the console (the guest's only way out), parsed by report.py:
#   BENCH-CONF  device= key=value...     settings
#   BENCH-SET   device= size= files= bytes= span_lo= span_hi=
#   BENCH-FIO   device= size= bs= qd= mbps= iops=
#   BENCH-RUN   device= size= kind=cell|order|cpu|load|size|tenants run=
#               rid= mode= ... policy= cycles= [tenant= tenants= start_ms=
#               group=]   (one line per tenant)
#   BENCH-TS    RID t_ms bytes files limit mode inflight pending cycles group_cycles
#   BENCH-EVENT rid= t_ms= event=load-start|load-end|size-switch|join ...
#   BENCH-DIR   rid= up_files= up_secs= down_files= down_secs= reversals=
#               (order runs: fetches by direction of the dispatch sweep)
#   bench ...   progress for people (never "bench cell"/"bench order"/
#               "bench step"/"bench tenants")
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

SIZE=${BENCH_SIZE:-${BENCH_QUICK_SIZE:-100k}}
SECS=${BENCH_SECS:-20}
STEP_SECS=${BENCH_STEP_SECS:-30}
FIO_SECS=${BENCH_FIO_SECS:-2}
FIO_QDS=${BENCH_FIO_QDS:-"1 4 16 64"}
WORKERS=${BENCH_WORKERS:-64}
OUTSTANDING=${BENCH_OUTSTANDING:-256}
ORDER_OUT=${BENCH_ORDER_OUTSTANDING:-4096}
SCREEN=${BENCH_SCREEN:-3}
POLICY_RUNS=${BENCH_POLICY_RUNS:-1}
SWITCH_FROM=${BENCH_SWITCH_FROM:-10k}
SWITCH_TO=${BENCH_SWITCH_TO:-1m}
case "$KIND" in
ssd) SIZE_WORK=${BENCH_SIZE_WORK:-5600:720}
	LOAD_SIZE=${BENCH_LOAD_SIZE:-$SIZE} ;;
*) SIZE_WORK=${BENCH_SIZE_WORK:-2500:640}
	LOAD_SIZE=${BENCH_LOAD_SIZE:-1m} ;;
esac
TENANT_MODES=${BENCH_TENANT_MODES:-"fixed:4 fixed:16 adapt:default"}
CPU_FIXED=${BENCH_CPU_FIXED:-"1 2 4 16"}
CPU_PASSES=${BENCH_CPU_PASSES:-256}
CPU_SIZE=64k
if [ "$LEVEL" = quick ]; then
	RUNS=${BENCH_RUNS:-1}
	SIZES=${BENCH_SIZES:-$SIZE}
	FIXED=${BENCH_FIXED:-"4 16 64"}
	LOAD_MODES=${BENCH_LOAD_MODES:-"fixed:16 fixed:64 adapt:default"}
	case "$KIND" in
	ssd) SIZE_MODES=${BENCH_SIZE_MODES:-"fixed:16 fixed:64 adapt:default"} ;;
	*) SIZE_MODES=${BENCH_SIZE_MODES:-"fixed:1 fixed:4 adapt:default"} ;;
	esac
	TENANT_SECS=${BENCH_TENANT_SECS:-30}
	TENANT_RUNS=${BENCH_TENANT_RUNS:-1}
	CPU_RUNS=${BENCH_CPU_RUNS:-1}
	ORDER_SIZES=${BENCH_ORDER_SIZES:-$SIZE}
	SHORT_SECS=${BENCH_SHORT_SECS:-5}
	SHORT_ROUNDS=${BENCH_SHORT_ROUNDS:-2}
	SHARE_ROUNDS=${BENCH_SHARE_ROUNDS:-1}
	case "$KIND" in
	ssd) SCENARIOS=${BENCH_SCENARIOS:-"cells load tenants short share"}
		TENANTS=${BENCH_TENANTS:-2} ;;
	hdd) SCENARIOS=${BENCH_SCENARIOS:-"cells order size tenants short share"}
		TENANTS=${BENCH_TENANTS:-4} ;;
	esac
else
	RUNS=${BENCH_RUNS:-3}
	SIZES=${BENCH_SIZES:-"10k 100k 1m"}
	FIXED=${BENCH_FIXED:-"1 2 4 8 16 32 64"}
	case "$KIND" in
	ssd) LOAD_MODES=${BENCH_LOAD_MODES:-"fixed:4 fixed:16 fixed:64 adapt:default"} ;;
	*) LOAD_MODES=${BENCH_LOAD_MODES:-"fixed:1 fixed:4 fixed:16 fixed:64 adapt:default"} ;;
	esac
	case "$KIND" in
	ssd) SIZE_MODES=${BENCH_SIZE_MODES:-"fixed:4 fixed:16 fixed:64 adapt:default"} ;;
	*) SIZE_MODES=${BENCH_SIZE_MODES:-"fixed:1 fixed:2 fixed:4 fixed:16 adapt:default"} ;;
	esac
	TENANT_SECS=${BENCH_TENANT_SECS:-30}
	TENANT_RUNS=${BENCH_TENANT_RUNS:-3}
	CPU_RUNS=${BENCH_CPU_RUNS:-2}
	ORDER_SIZES=${BENCH_ORDER_SIZES:-10k}
	TENANTS=${BENCH_TENANTS:-"2 4"}
	SHORT_SECS=${BENCH_SHORT_SECS:-"2 5"}
	SHORT_ROUNDS=${BENCH_SHORT_ROUNDS:-3}
	SHARE_ROUNDS=${BENCH_SHARE_ROUNDS:-3}
	case "$KIND" in
	ssd) SCENARIOS=${BENCH_SCENARIOS:-"cells load size tenants cpu short share"} ;;
	hdd) SCENARIOS=${BENCH_SCENARIOS:-"cells order load size tenants short share"} ;;
	esac
fi
case "$KIND" in
ssd) SHORT_FIXED=${BENCH_SHORT_FIXED:-"4 16"}
	SHARE_FIXED=${BENCH_SHARE_FIXED:-"4 16"}
	SHARE_SIZE=${BENCH_SHARE_SIZE:-$SIZE} ;;
*) SHORT_FIXED=${BENCH_SHORT_FIXED:-"1 4 16"}
	SHARE_FIXED=${BENCH_SHARE_FIXED:-"1 2 4"}
	SHARE_SIZE=${BENCH_SHARE_SIZE:-1m} ;;
esac
SHARE_N=${BENCH_SHARE_N:-"2 4"}
SHARE_SECS=${BENCH_SHARE_SECS:-15}
TENANT_JOIN=${BENCH_TENANT_JOIN:-$((TENANT_SECS / 4))}
# Time series on the console for cell runs: adaptive (adapt), all, none.
TS=${BENCH_TS:-adapt}
# The module's parameters stay as they are unless BENCH_SYSFS says.
SYSFS=${BENCH_SYSFS:-}
# ssd: 40 ms per request, 16 tags, one hardware queue, requests up to
# 128 KiB (max_sectors=256: the default, 255 sectors, splits every
# 128 KiB readahead into 127 + 1 KiB requests, halving the 1m files'
# throughput), memory-backed (BENCH_SSD_GB of guest RAM at most).
SSD_NSEC=${BENCH_SSD_NSEC:-40000000}
SSD_QD=${BENCH_SSD_QD:-16}
SSD_GB=${BENCH_SSD_GB:-1}
SSD_PARAMS=${BENCH_SSD_PARAMS:-"queue_mode=2 irqmode=2 completion_nsec=$SSD_NSEC hw_queue_depth=$SSD_QD submit_queues=1 memory_backed=1 gb=$SSD_GB max_sectors=256"}
HDD_PARAMS=${BENCH_HDD_PARAMS:-}
# Files per set, per device and size (BENCH_NFILES_<dev>_<size>).  Runs
# repeat their set, so a set only has to be large enough that the
# in-flight jobs are a small part of it and that its region on the
# device is not trivially small (the 10k set on the HDD: SORTED needs a
# few thousand files to sort).
nfiles() {
	eval "v=\${BENCH_NFILES_${KIND}_$1:-}"
	if [ -n "$v" ]; then echo "$v"; return; fi
	case "$KIND-$1" in
	*-10k) echo 4000 ;;
	ssd-100k) echo 2000 ;;
	hdd-100k) echo 1500 ;;
	*-1m) echo 200 ;;
	*-64k) echo 500 ;;
	*) echo 1000 ;;
	esac
}
bytes_of() {
	case "$1" in
	10k) echo 10K ;; 64k) echo 64K ;; 100k) echo 100K ;; 1m) echo 1M ;;
	*) echo "$1" ;;
	esac
}
bs_of() {
	case "$1" in
	10k) echo 10240 ;; 64k) echo 65536 ;; 100k) echo 102400 ;;
	1m) echo 1048576 ;;
	*) echo "$1" ;;
	esac
}
has() { case " $SCENARIOS " in *" $1 "*) return 0 ;; esac; return 1; }

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
for w in $SCENARIOS; do
	case "$w" in
	cells|order|load|size|tenants|cpu|short|share) ;;
	*) fail "BENCH_SCENARIOS: unknown scenario '$w' (cells order load size tenants cpu short share)" ;;
	esac
done
if has order && ! has cells && [ -z "${BENCH_ORDER_LIMIT:-}" ]; then
	fail "the order scenario needs the cells (for the knee) or BENCH_ORDER_LIMIT"
fi

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
for f in "$SYS"/*; do
	n=${f##*/}
	case "$n" in uevent|dev) continue ;; esac
	if [ ! -f "$f" ] || [ ! -r "$f" ]; then continue; fi
	params="$params $n=$(tr ' ' , <"$f")"
done
DEFAULT_POLICY=$(cat "$SYS/default_policy" 2>/dev/null || echo unknown)

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

# Explicit policies: those the module takes (iopa-bench-files -k).
if [ -n "${BENCH_POLICIES+set}" ]; then
	want=$BENCH_POLICIES
elif [ "$LEVEL" = quick ]; then
	want=iopa
	[ "$DEFAULT_POLICY" != iopa ] || want=hillclimb
else
	want=
	for p in iopa hillclimb bracket; do
		[ "$p" = "$DEFAULT_POLICY" ] || want="$want $p"
	done
fi
POLICIES=
for p in $want; do
	if "$FILES" -k -m "adapt:$p" "$DIR" >/dev/null 2>"$tmp/err"; then
		POLICIES="$POLICIES $p"
	else
		say "note: policy $p skipped: $(cat "$tmp/err")"
	fi
done
POLICIES=${POLICIES# }

list() { echo "$*" | tr -s ' ' , | sed 's/^,//; s/,$//'; }
echo "BENCH-CONF device=$KIND level=$LEVEL vcpus=$(nproc) mem_kb=$(awk '/MemTotal/ {print $2}' /proc/meminfo) kernel=$(uname -r) secs=$SECS runs=$RUNS workers=$WORKERS outstanding=$OUTSTANDING fio_secs=$FIO_SECS sizes=$(list "$SIZES") fio_qds=$(list "$FIO_QDS")"
echo "BENCH-CONF device=$KIND scenarios=$(list "$SCENARIOS") fixed=$(list "$FIXED") screen=$SCREEN policies=$(list "$POLICIES") policy_runs=$POLICY_RUNS step_secs=$STEP_SECS load_modes=$(list "$LOAD_MODES") size_modes=$(list "$SIZE_MODES") switch=$SWITCH_FROM,$SWITCH_TO size_work=$SIZE_WORK load_size=$LOAD_SIZE tenants=$(list "$TENANTS") tenant_secs=$TENANT_SECS tenant_join=$TENANT_JOIN tenant_modes=$(list "$TENANT_MODES") tenant_runs=$TENANT_RUNS cpu_fixed=$(list "$CPU_FIXED") cpu_runs=$CPU_RUNS cpu_passes=$CPU_PASSES short_secs=$(list "$SHORT_SECS") short_rounds=$SHORT_ROUNDS short_fixed=$(list "$SHORT_FIXED") share_n=$(list "$SHARE_N") share_rounds=$SHARE_ROUNDS share_secs=$SHARE_SECS share_size=$SHARE_SIZE share_fixed=$(list "$SHARE_FIXED") scenario_size=$SIZE"
echo "BENCH-CONF device=$KIND dev=$devdesc"
echo "BENCH-CONF device=$KIND queue $qinfo"
echo "BENCH-CONF device=$KIND sysfs$params"
echo "BENCH-CONF device=$KIND sysfs_changed ${SYSFS:-none}"
if [ -n "$SYSFS" ]; then
	say "controller parameters changed for this run: $SYSFS"
else
	say "controller parameters: the module's defaults (none changed; default_policy=$DEFAULT_POLICY)"
fi

# --- file sets ----------------------------------------------------------
need=
has cells && need="$need $SIZES"
has tenants && need="$need $SIZE"
has short && need="$need $SIZE"
has share && need="$need $SHARE_SIZE"
has load && need="$need $LOAD_SIZE"
has size && need="$need $SWITCH_FROM $SWITCH_TO"
[ "$KIND" != hdd ] || ! has order || need="$need $ORDER_SIZES"
has cpu && need="$need $CPU_SIZE"
made=
for s in $need; do
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
if [ -n "$FIODEV" ] && has cells; then
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
elif [ -z "$FIODEV" ]; then
	say "no --fio-dev: fio characterisation skipped"
fi

# --- runs -----------------------------------------------------------------
# run SIZE KIND N MODE ORDER SECS ARGS...: one iopa-bench-files run (ARGS:
# more options, then the set's directory), after dropping the page cache
# (unless NODROP=1); its lines (one per tenant) go to the console and to
# $RES.  RIDKIND (default KIND) names the kind in the run's id.
rid_of() { echo "$KIND.$1.${RIDKIND:-$2}.$(echo "$4" | tr : -).$5.$3"; }
run() {
	size=$1 kind=$2 n=$3 mode=$4 order=$5 secs=$6
	rid=$(rid_of "$@")
	shift 6
	series=
	case "$kind:$TS:$mode" in
	cell:all:*|cell:adapt:adapt*|order:all:*|cpu:all:*|cpu:adapt:adapt*) series=$tmp/ts ;;
	cell:*|order:*|cpu:*) ;;
	*) series=$tmp/ts ;;	# scenarios: always
	esac
	# Order runs log each fetched job's first block (FIBMAP), to see
	# which way the dispatch sweeps.
	dlog=
	[ "$kind" != order ] || dlog=$tmp/dlog
	[ "${NODROP:-0}" = 1 ] || drop
	rm -f "$tmp"/ts "$tmp"/ts.*
	out=$("$FILES" -m "$mode" -o "$order" -w "$WORKERS" -t "$secs" \
		${series:+-s "$series" -p BENCH-TS} ${dlog:+-D "$dlog"} \
		-l "$rid" "$@") ||
		fail "iopa-bench-files $mode $order $*"
	echo "$out" | while read -r w rest; do
		[ "$w" = files ] || continue
		t=$(echo " $rest" | sed -n 's/.* tenant=\([0-9]*\).*/\1/p')
		if [ -n "$t" ]; then
			line="BENCH-RUN device=$KIND size=$size kind=$kind run=$n rid=$rid.t$t group=$rid $rest"
		else
			line="BENCH-RUN device=$KIND size=$size kind=$kind run=$n rid=$rid $rest"
		fi
		echo "$line"
		echo "$line" >>"$RES"
	done
	if [ -n "$series" ]; then
		if [ -f "$series" ]; then
			grep -v '^#' "$series" | sed "s/^BENCH-TS /BENCH-TS $rid /"
		fi
		for f in "$series".*; do
			[ -f "$f" ] || continue
			grep -v '^#' "$f" | sed "s/^BENCH-TS /BENCH-TS $rid.t${f##*.} /"
		done
		rm -f "$series" "$series".*
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

# screened SIZE KIND: the BENCH_SCREEN fixed modes of run 1 with the most
# MB/s (all of them if BENCH_SCREEN is 0).
screened() {
	awk -v s="$1" -v k="$2" '
		index($0, " size=" s " ") && index($0, " kind=" k " ") &&
		index($0, " run=1 ") && index($0, " mode=fixed:") {
			m = v = ""
			for (i = 1; i <= NF; i++) {
				if ($i ~ /^mode=/) m = substr($i, 6)
				if ($i ~ /^mbps=/) v = substr($i, 6)
			}
			print v, m
		}' "$RES" | sort -rn | awk -v n="$SCREEN" 'n == 0 || NR <= n { print $2 }' |
		sort -t: -k2 -n | tr '\n' ' '
}

# cell SIZE KIND FIXED RUNS ARGS...: the fixed limits FIXED, adapt:default
# and the explicit policies, RUNS runs interleaved (see the header).
cell() {
	csize=$1 ckind=$2 cfixed=$3 cruns=$4
	shift 4
	ci=1
	while [ $ci -le "$cruns" ]; do
		if [ -n "${BENCH_MODES:-}" ] && [ "$ckind" = cell ]; then
			modes=$BENCH_MODES
		else
			if [ $ci = 1 ]; then
				modes=
				for l in $cfixed; do modes="$modes fixed:$l"; done
			else
				modes=$(screened "$csize" "$ckind")
			fi
			modes="$modes adapt:default"
			if [ $ci -le "$POLICY_RUNS" ]; then
				for p in $POLICIES; do modes="$modes adapt:$p"; done
			fi
		fi
		for m in $modes; do
			run "$csize" "$ckind" $ci "$m" fifo "$SECS" "$@"
		done
		ci=$((ci + 1))
	done
	summary=
	for m in $(awk -v s="$csize" -v k="$ckind" '
		index($0, " size=" s " ") && index($0, " kind=" k " ") {
			for (i = 1; i <= NF; i++) if ($i ~ /^mode=/) print substr($i, 6)
		}' "$RES" | sort -t: -k1,1 -k2n | uniq); do
		summary="$summary ${m#adapt:}=$(mean_of "$csize" "$ckind" "$m" fifo)"
	done
	say "$ckind size=$csize MB/s (means; runs 2.. repeat the $SCREEN best fixed of run 1):$summary"
}

COMMON="-r -d -q $OUTSTANDING"

# --- cells (and the dispatch order on the HDD) ---------------------------
if has cells; then
	for s in $SIZES; do
		# shellcheck disable=SC2086
		cell "$s" cell "$FIXED" "$RUNS" $COMMON "$DIR/set-$s"
	done
fi
if [ "$KIND" = hdd ] && has order; then
	for s in $ORDER_SIZES; do
		# Dispatch order at the knee: the smallest fixed limit within 5%
		# of the best fixed mean of the cell.
		knee=$(awk -v s="$s" '
			index($0, " size=" s " ") && index($0, " kind=cell ") {
				for (i = 1; i <= NF; i++) if ($i ~ /^mode=fixed:/) print substr($i, 6)
			}' "$RES" | sort -u | while read -r m; do
				echo "${m#fixed:} $(mean_of "$s" cell "$m" fifo)"
			done | awk '
			{ l[NR] = $1; v[NR] = $2; if ($2 > b) b = $2 }
			END {
				for (i = 1; i <= NR; i++)
					if (v[i] >= 0.95 * b && (k == "" || l[i] + 0 < k + 0)) k = l[i]
				print (k == "") ? 1 : k
			}')
		lim=${BENCH_ORDER_LIMIT:-$knee}
		if [ -n "${BENCH_ORDER_LIMIT:-}" ]; then from="env"; else from="knee"; fi
		echo "BENCH-CONF device=$KIND order_size=$s order_limit=$lim order_limit_from=$from"
		i=1
		while [ $i -le "$RUNS" ]; do
			for o in fifo sorted; do
				run "$s" order $i "fixed:$lim" $o "$SECS" -r -d \
					-q "$ORDER_OUT" "$DIR/set-$s"
			done
			i=$((i + 1))
		done
		say "order size=$s limit=$lim fifo=$(mean_of "$s" order "fixed:$lim" fifo) sorted=$(mean_of "$s" order "fixed:$lim" sorted) MB/s"
	done
fi

# --- CPU-bound jobs ---------------------------------------------------------
if has cpu; then
	# Read the set once: from now on its jobs find it in the page cache
	# (nothing drops it: NODROP, and no -d).
	drop
	find "$DIR/set-$CPU_SIZE" -type f -exec cat {} + >/dev/null ||
		fail "reading set-$CPU_SIZE"
	NODROP=1
	cell "$CPU_SIZE" cpu "$CPU_FIXED" "$CPU_RUNS" -r -q "$OUTSTANDING" \
		-c "$CPU_PASSES" "$DIR/set-$CPU_SIZE"
	NODROP=0
fi

# --- a load step: fio from 1/3 to 2/3 of the run -----------------------------
if has load && [ -n "$FIODEV" ]; then
	a=$((STEP_SECS / 3))
	case "$KIND" in
	ssd) cqd=${BENCH_COMPETE_QD:-$SSD_QD} ;;
	*) cqd=${BENCH_COMPETE_QD:-4} ;;
	esac
	for m in $LOAD_MODES; do
		rid=$(rid_of "$LOAD_SIZE" load 1 "$m" fifo)
		drop
		# fio takes a second or two to start under TCG: it starts now
		# and waits (--startdelay) until the mark.
		(
			# shellcheck disable=SC2046
			o=$(fio --name=load $(fio_args "$LOAD_SIZE") --iodepth="$cqd" \
				--startdelay="$a" --time_based --runtime="$a" \
				--minimal 2>&1)
			echo "BENCH-EVENT rid=$rid t_ms=$((2 * a * 1000)) event=load-end qd=$cqd fio_mbps=$(echo "$o" | awk -F';' 'NF > 8 { printf "%.3f", $7 * 1024 / 1e6 }')"
		) &
		cpid=$!
		echo "BENCH-EVENT rid=$rid t_ms=$((a * 1000)) event=load-start qd=$cqd"
		NODROP=1
		# shellcheck disable=SC2086
		run "$LOAD_SIZE" load 1 "$m" fifo "$STEP_SECS" $COMMON "$DIR/set-$LOAD_SIZE"
		NODROP=0
		wait "$cpid"
	done
	say "load step done (fio qd $cqd from ${a}s to $((2 * a))s of ${STEP_SECS}s): $(for m in $LOAD_MODES; do printf ' %s=%s' "${m#adapt:}" "$(mean_of "$LOAD_SIZE" load "$m" fifo)"; done)"
elif has load; then
	say "no --fio-dev: load step skipped"
fi

# --- a file-size step: N1 SWITCH_FROM files, then N2 SWITCH_TO files --------
# A batch (a fixed amount of work, to the last job): a phase run at a poor
# limit costs its own time, as it would a service with that work to do.
if has size; then
	ssz=$SWITCH_FROM-$SWITCH_TO
	for m in $SIZE_MODES; do
		rid=$(rid_of "$ssz" size 1 "$m" fifo)
		echo "BENCH-EVENT rid=$rid t_ms=0 event=size-batch from=$SWITCH_FROM to=$SWITCH_TO work=$SIZE_WORK"
		run "$ssz" size 1 "$m" fifo "$((4 * STEP_SECS))" -d \
			-q "$OUTSTANDING" \
			-W "$SIZE_WORK:$DIR/set-$SWITCH_TO" "$DIR/set-$SWITCH_FROM"
	done
	say "size step done ($SIZE_WORK files of $SWITCH_FROM, then $SWITCH_TO, to the last): $(for m in $SIZE_MODES; do printf ' %s=%s' "${m#adapt:}" "$(mean_of "$ssz" size "$m" fifo)"; done)"
fi

# --- tenants ------------------------------------------------------------------
# tenants_total RID: the MB/s of all tenants of tenants run RID.
tenants_total() {
	awk -v g="group=$1 " '
		index($0 " ", g) { for (i = 1; i <= NF; i++) if ($i ~ /^bytes=/) b += substr($i, 7) }
		END { printf "%.2f", b / 1e6 / '"$TENANT_SECS"' }' "$RES"
}
if has tenants; then
	# Interleaved: run 1 every mode; runs 2.. the default mode and the
	# best fixed mode of run 1 (per count), as the cells screen.
	r=1
	while [ "$r" -le "$TENANT_RUNS" ]; do
		for nt in $TENANTS; do
			RIDKIND=tenants$nt
			modes=$TENANT_MODES
			if [ "$r" -gt 1 ]; then
				best= bt=-1
				for m in $TENANT_MODES; do
					case "$m" in fixed:*) ;; *) continue ;; esac
					t=$(tenants_total "$(rid_of "$SIZE" tenants 1 "$m" fifo)")
					if awk -v a="$t" -v b="$bt" 'BEGIN { exit !(a > b) }'; then
						best=$m bt=$t
					fi
				done
				modes="$best"
				for m in $TENANT_MODES; do
					case "$m" in adapt:*) modes="$modes $m" ;; esac
				done
			fi
			for m in $modes; do
				rid=$(rid_of "$SIZE" tenants "$r" "$m" fifo)
				echo "BENCH-EVENT rid=$rid t_ms=$((TENANT_JOIN * 1000)) event=join tenant=$((nt - 1)) tenants=$nt"
				# shellcheck disable=SC2086
				run "$SIZE" tenants "$r" "$m" fifo "$TENANT_SECS" $COMMON \
					-n "$nt" -j "$TENANT_JOIN" "$DIR/set-$SIZE"
				say "tenants n=$nt $m run $r: total $(tenants_total "$rid") MB/s"
			done
			RIDKIND=
		done
		r=$((r + 1))
	done
fi

# --- short runs: the start, cold and warm ------------------------------------
# reload: the module afresh (no device seen, no knee), its parameters as
# BENCH_SYSFS set them.
reload() {
	rmmod iopa || fail "rmmod iopa"
	insmod "$IOPA_KO" || fail "insmod $IOPA_KO"
	for kv in $SYSFS; do
		echo "${kv#*=}" >"$SYS/${kv%%=*}" || fail "cannot write $kv"
	done
}
# short_mbps S STATE|fixed:N: the MB/s of each round's matching short run.
short_mbps() {
	awk -v k="kind=short$1 " -v m="$2" '
		{ l = $0 " " }
		index(l, k) && (index(l, " state=" m " ") ||
				index(l, " mode=" m " ")) {
			for (i = 1; i <= NF; i++) if ($i ~ /^mbps=/) print substr($i, 6)
		}' "$RES"
}
# median: of the numbers on stdin, one a line (of an even count, the mean
# of the two in the middle).
median() {
	sort -n | awk '{ v[NR] = $1 }
		END {
			if (!NR) print "nan"
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2
		}'
}
# best_fixed FN LIMIT...: of the LIMITs, the one whose MB/s (one a line
# from `FN LIMIT`) have the highest median: sets best, and bm to it.
best_fixed() {
	local fn=$1 lim m
	shift
	best= bm=-1
	for lim in "$@"; do
		m=$($fn "$lim" | median)
		if awk -v a="$m" -v b="$bm" 'BEGIN { exit !(a > b) }'; then
			best=$lim bm=$m
		fi
	done
}
short_fixed_mbps() { short_mbps "$secs" "fixed:$1"; }
if has short; then
	for secs in $SHORT_SECS; do
		r=1
		while [ "$r" -le "$SHORT_ROUNDS" ]; do
			RIDKIND=short$secs
			reload
			for st in cold warm; do
				run "$SIZE" "short$secs" "$r" adapt:default fifo "$secs" \
					$COMMON "$DIR/set-$SIZE" >"$tmp/out"
				sed "s/^BENCH-RUN .*/& state=$st/" "$tmp/out"
				# what the module remembers after it (the warm start's)
				echo "BENCH-KNEES kind=short$secs run=$r state=$st" \
					"$(tr '\n' ';' <"$SYS/knees" 2>/dev/null)"
				# the state on the run's line in $RES too
				sed -i '$ s/$/ state='"$st"'/' "$RES"
				if [ "$st" = cold ]; then
					grep "^BENCH-TS" "$tmp/out" | \
						sed "s/^BENCH-TS [^ ]* /$r /" >>"$tmp/cold$secs"
					sed -n "s/^BENCH-RUN .* first_job_ms=\([-0-9]*\) .*/$r \1/p" \
						"$tmp/out" >>"$tmp/first$secs"
				fi
			done
			for l in $SHORT_FIXED; do
				run "$SIZE" "short$secs" "$r" "fixed:$l" fifo "$secs" \
					$COMMON "$DIR/set-$SIZE" >"$tmp/out"
				grep -v "^BENCH-TS" "$tmp/out"
				# the fixed runs' series too: converge's floor
				grep "^BENCH-TS" "$tmp/out" | \
					sed "s/^BENCH-TS [^ ]* /$r /" >>"$tmp/cold$secs.$l"
				sed -n "s/^BENCH-RUN .* first_job_ms=\([-0-9]*\) .*/$r \1/p" \
					"$tmp/out" >>"$tmp/first$secs.$l"
			done
			RIDKIND=
			r=$((r + 1))
		done
		# shellcheck disable=SC2086
		best_fixed short_fixed_mbps $SHORT_FIXED
		for st in cold warm; do
			short_mbps "$secs" "$st" >"$tmp/a"
			short_mbps "$secs" "fixed:$best" >"$tmp/b"
			am=$(median <"$tmp/a")
			echo "bench short device=$KIND secs=$secs state=$st default_pct_of_best=$(awk -v a="$am" -v b="$bm" 'BEGIN { printf "%.1f", 100 * a / b }') best_fixed=$best rounds=$SHORT_ROUNDS range=$(paste "$tmp/a" "$tmp/b" | awk '{ p = 100 * $1 / $2; if (NR == 1 || p < lo) lo = p; if (NR == 1 || p > hi) hi = p } END { printf "%.1f..%.1f", lo, hi }')"
		done
		last=$secs bestm=$bm bestl=$best
	done
	# From the cold runs of the longest S: the first sample whose last
	# second read 90% of the best fixed limit's mean MB/s, less the time
	# of the run's first job (the tool's walk of a cold directory and
	# its first batch's opens come before: 0.5 s on the SSD model).
	# The same of the best fixed limit's runs is the floor the count
	# puts under a limit right from the first job: a second's window
	# and 100 ms samples (900 to 1000 ms).
	converge() {	# FIRST-FILE SERIES-FILE: one count a run, sorted
		awk -v want="$bestm" '
			FILENAME == ARGV[1] { first[$1] = $2; next }
			{ r = $1; t[r, ++n[r]] = $2; b[r, n[r]] = $3 }
			END {
				for (r in n) {
					hit = -1
					for (i = 1; i <= n[r] && hit < 0; i++)
						for (j = i - 1; j >= 1; j--)
							if (t[r, i] - t[r, j] >= 1000) {
								mbps = (b[r, i] - b[r, j]) / 1e6 * 1000 / (t[r, i] - t[r, j])
								if (mbps >= 0.9 * want) hit = t[r, i]
								break
							}
					if (hit >= 0 && first[r] > 0)
						hit -= first[r]
					print hit
				}
			}' "$1" "$2" | sort -n
	}
	# the median of those counts, -1 (never) counted as the longest
	conv_median() {
		awk '''$1 < 0 { $1 = 1e9 } { print }''' "$1" | median |
			awk '''{ print ($1 >= 5e8) ? -1 : int($1 + 0.5) }'''
	}
	converge "$tmp/first$last" "$tmp/cold$last" >"$tmp/conv"
	converge "$tmp/first$last.$bestl" "$tmp/cold$last.$bestl" >"$tmp/fconv"
	echo "bench converge device=$KIND ms_to_90pct=$(conv_median "$tmp/conv") rounds=$SHORT_ROUNDS range=$(head -1 "$tmp/conv")..$(tail -1 "$tmp/conv") fixed_ms_to_90pct=$(conv_median "$tmp/fconv") fixed=$bestl"
fi

# --- several processes on one device -----------------------------------------
# group_mbps RID: the MB/s of all processes of run RID (one or a group).
group_mbps() {
	awk -v r="rid=$1 " -v g="group=$1 " '
		{ l = $0 " " }
		index(l, r) || index(l, g) {
			for (i = 1; i <= NF; i++) if ($i ~ /^bytes=/) b += substr($i, 7)
		}
		END { printf "%.3f", b / 1e6 / '"$SHARE_SECS"' }' "$RES"
}
solo_mbps() { awk -v l="$1" '$1 == l { print $2 }' "$tmp/solo"; }
if has share; then
	r=1
	while [ "$r" -le "$SHARE_ROUNDS" ]; do
		for l in $SHARE_FIXED; do
			RIDKIND=sharesolo
			run "$SHARE_SIZE" sharesolo "$r" "fixed:$l" fifo "$SHARE_SECS" \
				$COMMON "$DIR/set-$SHARE_SIZE" | grep -v "^BENCH-TS"
			echo "$l $(group_mbps "$(rid_of "$SHARE_SIZE" sharesolo "$r" "fixed:$l" fifo)")" >>"$tmp/solo"
		done
		for nt in $SHARE_N; do
			RIDKIND=share$nt
			rid=$(rid_of "$SHARE_SIZE" "share$nt" "$r" adapt:default fifo)
			run "$SHARE_SIZE" "share$nt" "$r" adapt:default fifo "$SHARE_SECS" \
				$COMMON -n "$nt" "$DIR/set-$SHARE_SIZE" >"$tmp/out"
			grep -v "^BENCH-TS" "$tmp/out"
			echo "$nt $(group_mbps "$rid")" >>"$tmp/total"
			# Jain's index of the processes' bytes over 5 s windows
			grep "^BENCH-TS $rid\.t" "$tmp/out" | sed 's/^BENCH-TS [^ ]*\.t\([0-9]*\) /\1 /' |
				awk -v n="$nt" -v w=5000 -v secs="$SHARE_SECS" '
					{ k = $1; t = $2; b = $3
					  for (e = w; e <= secs * 1000; e += w)
						if (t <= e) at[k, e] = b }
					END {
						for (e = w; e <= secs * 1000; e += w) {
							s = q = 0
							for (k = 0; k < n; k++) {
								x = at[k, e] - at[k, e - w]
								s += x; q += x * x
							}
							if (q > 0) print s * s / (n * q)
						}
					}' | sed "s/^/$nt /" >>"$tmp/jain"
			say "share n=$nt run $r: total $(group_mbps "$rid") MB/s"
		done
		RIDKIND=
		r=$((r + 1))
	done
	# shellcheck disable=SC2086
	best_fixed solo_mbps $SHARE_FIXED
	for nt in $SHARE_N; do
		tm=$(awk -v n="$nt" '$1 == n { print $2 }' "$tmp/total" | median)
		echo "bench share device=$KIND size=$SHARE_SIZE n=$nt total_pct_of_solo=$(awk -v a="$tm" -v b="$bm" 'BEGIN { printf "%.1f", 100 * a / b }') jain=$(awk -v n="$nt" '$1 == n { s += $2; c++ } END { if (c) printf "%.3f", s / c; else print "nan" }' "$tmp/jain") solo_fixed=$best rounds=$SHARE_ROUNDS"
	done
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
