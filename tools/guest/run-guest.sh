#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot a Debian cloud kernel under QEMU with an initramfs that runs
# SCRIPT, stream the console, and judge the run.  KVM where it runs our
# guests (tools/guest/probe-accel.sh probes once per host and caches the
# answer; IOPA_ACCEL=kvm|tcg overrides), else TCG.
#
#   tools/guest/run-guest.sh [--series 6.12|6.1] [--timeout SECS] [--mem MB]
#       [--smp N] [--disk SIZE_MB] [--disk-opts OPTS] [--ko PATH]
#       [--log FILE] [--result FILE] [--append ARGS] SCRIPT [FILES...]
#
# SCRIPT runs in the guest as /guest-script (busybox sh, cwd /iopa); see
# mkinitramfs.sh for what else is in the guest.  --disk attaches a sparse
# host file of SIZE_MB as /dev/vda (raw, cache=none); --disk-opts adds
# -drive options, e.g. throttling.iops-total=200.
#
# Exit status 0 only if the guest printed "IOPA-GUEST-EXIT rc=0" and the
# console shows no kernel warning, BUG, oops, lockup, hung task, refcount,
# list corruption, sanitizer report or call trace.  A guest still running
# after --timeout seconds is killed and fails; one that has not printed
# "IOPA-GUEST-START" within GUEST_BOOT_TIMEOUT seconds (default 180) is
# killed and booted once more (see below).  The console goes to stdout as
# it comes and to --log (default build/guest/<script name>-<series>.log).
# --result FILE gets the verdict as shell variables: TIMED_OUT=0|1,
# MARKER=0|1, GUEST_RC=N (empty without marker), PROBLEMS=N (kernel lines).
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${IOPA_CACHE:-$TOP/.cache}

SERIES=6.12
TIMEOUT=900
MEM=512
SMP=2
DISK=
DISK_OPTS=
KO=
LOG=
RESULT=
APPEND=
while [ $# -gt 0 ]; do
	case "$1" in
	--series) SERIES=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--mem) MEM=$2; shift 2 ;;
	--smp) SMP=$2; shift 2 ;;
	--disk) DISK=$2; shift 2 ;;
	--disk-opts) DISK_OPTS=$2; shift 2 ;;
	--ko) KO=$2; shift 2 ;;
	--log) LOG=$2; shift 2 ;;
	--result) RESULT=$2; shift 2 ;;
	--append) APPEND=$2; shift 2 ;;
	-h|--help) sed -n '4,22p' "$0"; exit 0 ;;
	--) shift; break ;;
	-*) echo "run-guest: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
SCRIPT=${1:?usage: run-guest.sh [options] SCRIPT [FILES...] (see --help)}
shift

name=$(basename "$SCRIPT" .sh)-$SERIES
# Several runs may share build/guest: per-run files carry our PID.
WORK=$TOP/build/guest
mkdir -p "$WORK"
[ -n "$LOG" ] || LOG=$WORK/$name.log
mkdir -p "$(dirname "$LOG")"
initrd=$WORK/$name.$$.cpio
img=$WORK/$name.$$.disk
problems=$WORK/$name.$$.problems
trap 'rm -f "$initrd" "$img" "$problems"' EXIT

"$TOP/tools/guest/deps.sh" guest
"$TOP/tools/guest/fetch-kernel.sh" "$SERIES" >/dev/null
# shellcheck disable=SC1090
. "$CACHE/kernel/$SERIES.env"

"$TOP/tools/guest/mkinitramfs.sh" --series "$SERIES" ${KO:+--ko "$KO"} \
	--out "$initrd" "$SCRIPT" "$@"

disk_args=()
if [ -n "$DISK" ]; then
	truncate -s "${DISK}M" "$img"
	# cache=none needs O_DIRECT, which tmpfs and some overlays lack.
	cache=none
	if ! dd if=/dev/zero of="$img" bs=4096 count=1 oflag=direct \
		conv=notrunc status=none 2>/dev/null; then
		echo "run-guest: no O_DIRECT under $WORK, using cache=writeback" >&2
		cache=writeback
	fi
	disk_args=(-drive "file=$img,if=virtio,format=raw,cache=$cache${DISK_OPTS:+,$DISK_OPTS}")
fi

# Kernel messages at KERN_INFO and above reach the console (pr_info of the
# module); time stamps let the scan below tell kernel lines from test
# output.  An oops panics and a panic ends QEMU (-no-reboot): fail fast.
# Hung tasks are reported after 60 s; the soft-lockup and RCU-stall
# detectors wait 60 s too, as an emulated CPU on a loaded host can stall
# for a while without any bug.
cmdline="console=ttyS0 loglevel=7 printk.time=1 panic=-1 oops=panic"
cmdline="$cmdline sysctl.kernel.hung_task_timeout_secs=60 watchdog_thresh=30"
cmdline="$cmdline rcupdate.rcu_cpu_stall_timeout=60 rdinit=/init"
cmdline="$cmdline ${APPEND}"

accel=$("$TOP/tools/guest/probe-accel.sh" "$VMLINUZ")
if [ "$accel" = kvm ]; then
	accel_args=(-accel kvm -cpu host)
else
	accel_args=(-accel tcg,thread=multi -cpu max)
fi
echo "run-guest: $KVER, $SMP vCPU, $MEM MB, ${accel^^}, timeout ${TIMEOUT}s, log $LOG" >&2
start=$(date +%s.%N)
# A guest that crashes before it reaches /init (seen once in ~40 boots:
# an int3 oops in sched_clock_cpu under TCG), or hangs after the kernel
# ran /init without the script's first line (seen once, on 6.1, under
# TCG, spinning until the --timeout), has not loaded the module nor run
# anything: that boot is retried once, its log kept beside.  A watcher
# polls the log for the first line (a boot takes 3-10 s here) and kills
# QEMU when GUEST_BOOT_TIMEOUT passes without it.
BOOT_TIMEOUT=${GUEST_BOOT_TIMEOUT:-180}
for attempt in 1 2; do
	: >"$LOG"
	(
		i=0
		while [ "$i" -lt "$BOOT_TIMEOUT" ]; do
			sleep 1
			grep -q '^IOPA-GUEST-START' "$LOG" && exit 0
			i=$((i + 1))
		done
		echo "run-guest: no IOPA-GUEST-START within ${BOOT_TIMEOUT}s of the boot: killing QEMU" >&2
		pkill -f -- "-initrd $initrd "
	) &
	watcher=$!
	set +e
	# -serial stdio with stdin from /dev/null: nothing touches the terminal.
	timeout -k 10 "$TIMEOUT" qemu-system-x86_64 \
		"${accel_args[@]}" -smp "$SMP" -m "$MEM" \
		-display none -vga none -monitor none -serial stdio \
		-no-reboot -nodefaults \
		-kernel "$VMLINUZ" -initrd "$initrd" -append "$cmdline" \
		"${disk_args[@]}" </dev/null 2>&1 |
		sed -u 's/\r$//' | tee "$LOG"
	qrc=${PIPESTATUS[0]}
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null
	set -e
	if [ "$attempt" = 2 ] || grep -q '^IOPA-GUEST-START' "$LOG"; then
		break
	fi
	mv "$LOG" "$LOG.boot-failure"
	echo "run-guest: the guest crashed or hung before its script started" \
		"(log: $LOG.boot-failure); nothing ran yet, booting once more" >&2
done
end=$(date +%s.%N)

fail=0
timed_out=0
grc=
nproblems=0
if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
	echo "run-guest: FAIL: guest still running after ${TIMEOUT}s, killed" >&2
	timed_out=1
	fail=1
elif [ "$qrc" != 0 ]; then
	echo "run-guest: FAIL: qemu exited with status $qrc" >&2
	fail=1
fi

marker=$(grep -E '^IOPA-GUEST-EXIT rc=[0-9]+$' "$LOG" | tail -n 1 || true)
if [ -z "$marker" ]; then
	echo "run-guest: FAIL: no IOPA-GUEST-EXIT marker (guest crashed or hung)" >&2
	fail=1
else
	grc=${marker#IOPA-GUEST-EXIT rc=}
	if [ "$grc" != 0 ]; then
		echo "run-guest: FAIL: guest script exited with status $grc" >&2
		fail=1
	fi
fi

# Kernel lines ("[   12.345678] ...", possibly after test output on the same
# line) reporting a problem; the echo of our own command line is not one.
bad_re='WARNING:|BUG:|Oops|general protection fault|soft lockup|hung_task|blocked for more than|refcount_t:|suspected memory leak|UBSAN|KASAN|list_add corruption|list_del corruption|Call Trace:|kernel BUG at|Kernel panic|detected stalls|unreferenced object'
if grep -nE "\[ *[0-9]+\.[0-9]{6}\] .*($bad_re)" "$LOG" |
	grep -vi 'command line:' >"$problems"; then
	nproblems=$(wc -l <"$problems")
	echo "run-guest: FAIL: kernel reported problems:" >&2
	head -n 20 "$problems" >&2
	fail=1
fi

# Boot time: from QEMU start to /init, and the guest's own uptime then.
t0=$(grep -m1 -E '^IOPA-GUEST-START' "$LOG" | sed -n 's/.*uptime=//p' || true)
total=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
echo "run-guest: guest uptime at /init ${t0:-?}s; whole run ${total}s" >&2
if [ -n "$RESULT" ]; then
	cat >"$RESULT" <<EOF
TIMED_OUT=$timed_out
MARKER=$([ -n "$marker" ] && echo 1 || echo 0)
GUEST_RC=$grc
PROBLEMS=$nproblems
EOF
fi
if [ $fail = 0 ]; then
	echo "run-guest: PASS" >&2
else
	echo "run-guest: see $LOG" >&2
fi
exit $fail
