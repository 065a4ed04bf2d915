#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest script of `make fuzz` and `make stress`: load iopa, run the tool,
# unload, and judge the kernel log.  Prints at the end
#   hardening <fuzz|stress> result=<pass|fail> count=<n> reports=<n>
# count: calls made (fuzz) or jobs ended (stress).  A report is a kernel
# log line of WARNING, BUG, KASAN, UBSAN, lockdep, refcount or list
# corruption, a hung task, a user-space segfault (of the tool: a wild
# kernel write into its memory shows so), or a kmemleak leak (scanned after the unload
# when the kernel has kmemleak).
#
#   hardening-guest.sh fuzz|stress
# Environment: HARDENING_COUNT (fuzz: calls, stress: jobs; default
# 1000000), HARDENING_SEED (default: time), IOPA_KO.
set -u
KIND=${1:-${HARDENING_KIND:-}}
KO=${IOPA_KO:-/iopa/kernel/iopa.ko}
N=${HARDENING_COUNT:-1000000}
PAT='WARNING:|BUG:|BUG |KASAN|UBSAN|kernel BUG|Oops|possible .*deadlock|possible recursive locking|suspicious RCU|refcount_t:|list_add corruption|list_del corruption|INFO: task .* blocked for more than|general protection|segfault at'

count=0 rc=1 leaks=0
case "$KIND" in
fuzz) cmd="/iopa/tools/fuzz/iopa-fuzz -n $N -k $KO ${HARDENING_SEED:+-s $HARDENING_SEED}"
      key=calls ;;
stress) cmd="/iopa/tools/stress/iopa-stress -j $N ${HARDENING_SEED:+-S $HARDENING_SEED}"
	key=jobs ;;
*) echo "usage: hardening-guest.sh fuzz|stress" >&2; exit 2 ;;
esac

if insmod "$KO"; then
	grep -E '^iopa' /proc/slabinfo 2>/dev/null
	slab0=$(sed -n 's/^Slab: *\([0-9]*\).*/\1/p' /proc/meminfo)
	# A watchdog: a run still going after HARDENING_TIMEOUT seconds is
	# hung; show where its tasks are in the kernel, then kill it.
	$cmd >/tmp/hardening.out 2>&1 &
	pid=$!
	t=0
	while kill -0 $pid 2>/dev/null && [ $t -lt "${HARDENING_TIMEOUT:-1200}" ]; do
		sleep 1
		t=$((t + 1))
	done
	if kill -0 $pid 2>/dev/null; then
		echo "hardening: $KIND still running after ${t}s: hung; kernel stacks:"
		for task in /proc/[0-9]*; do
			case "$(cat $task/comm 2>/dev/null)" in iopa-*) ;; *) continue ;; esac
			for th in $task/task/*; do
				echo "--- ${th#/proc/} $(cut -d' ' -f3 $th/stat) wchan=$(cat $th/wchan)"
				cat $th/stack 2>/dev/null
			done
		done
		pkill -9 -f "/iopa/tools/" 2>/dev/null
		sleep 2
		wait $pid
		rc=1
	else
		wait $pid
		rc=$?
	fi
	out=$(cat /tmp/hardening.out)
	echo "$out"
	count=$(echo "$out" | sed -n "s/^$KIND $key=\([0-9]*\) .*/\1/p" | tail -1)
	# after every fd is closed: the module's caches hold nothing
	grep -E '^iopa' /proc/slabinfo 2>/dev/null
	echo "hardening: Slab $slab0 kB before, $(sed -n 's/^Slab: *\([0-9]*\).*/\1/p' /proc/meminfo) kB after"
	# SLUB's active_objs counts per-CPU slabs as in use: the module's
	# own count of job objects is the exact one.
	jobs=$(cat /sys/class/misc/iopa/stats/jobs)
	echo "hardening: stats/jobs after close: $jobs"
	[ "$jobs" = 0 ] || rc=1
	rmmod iopa || rc=1
	[ -d /sys/kernel/debug/tracing ] || mount -t debugfs none /sys/kernel/debug 2>/dev/null
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan >/sys/kernel/debug/kmemleak
		sleep 6		# kmemleak reports objects older than 5 s
		echo scan >/sys/kernel/debug/kmemleak
		head -60 /sys/kernel/debug/kmemleak
		leaks=$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)
	else
		echo "hardening: no kmemleak in this kernel"
	fi
fi
reports=$(( $(dmesg | grep -cE "$PAT") + leaks ))
dmesg | grep -E "$PAT" | head -20
result=pass
[ "$rc" = 0 ] && [ "$reports" = 0 ] && [ -n "$count" ] && [ "$count" -gt 0 ] ||
	result=fail
echo "hardening $KIND result=$result count=${count:-0} reports=$reports"
[ $result = pass ]
