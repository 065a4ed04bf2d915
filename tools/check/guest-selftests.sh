#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs INSIDE the guest (busybox sh, cwd /iopa; see tools/guest/): load
# iopa.ko, run every selftest program listed in selftests/iopa/PROGS, unload
# the module.  Each step is framed by
#     IOPA-TEST-BEGIN <name>
#     ... kselftest TAP ...
#     IOPA-TEST-END <name> rc=<exit status>
# which tools/check/run-checks.sh counts.  Exits non-zero if any step failed.

KO=${IOPA_KO:-/iopa/kernel/iopa.ko}
DIR=/iopa/selftests/iopa
# Per-program time limit: kselftest's "timeout=" in settings, else 300 s.
T=$(sed -n 's/^timeout=\([0-9][0-9]*\)$/\1/p' "$DIR/settings" 2>/dev/null)
T=${T:-300}
fail=0

step() {	# NAME DESCRIPTION COMMAND...: one step as a one-test TAP program
	name=$1 desc=$2
	shift 2
	echo "IOPA-TEST-BEGIN $name"
	echo "1..1"
	"$@"
	rc=$?
	if [ $rc = 0 ]; then
		echo "ok 1 $desc"
	else
		echo "not ok 1 $desc (exit $rc)"
		fail=1
	fi
	echo "IOPA-TEST-END $name rc=$rc"
}

# A block device for the tests that want one (selftests/iopa/config lists
# the drivers): null_blk's /dev/nullb0.
modprobe null_blk nr_devices=1 2>/dev/null ||
	echo "# null_blk not available: no /dev/nullb0"

step insmod "insmod $KO" insmod "$KO"

cd "$DIR" || exit 1
for p in $(cat PROGS); do
	echo "IOPA-TEST-BEGIN $p"
	if [ -x "./$p" ]; then
		timeout -s KILL "$T" "./$p"
		rc=$?
	else
		echo "# $p: not built (missing from the initramfs)"
		rc=127
	fi
	echo "IOPA-TEST-END $p rc=$rc"
	# kselftest: 0 pass, 4 (KSFT_SKIP) all skipped; anything else fails.
	[ $rc = 0 ] || [ $rc = 4 ] || fail=1
done

# iopactl against the loaded module: its own TAP, counted like a program's.
G=/iopa/tools/iopactl/guest-check.sh
echo "IOPA-TEST-BEGIN iopactl"
if [ -f "$G" ]; then
	timeout -s KILL "$T" sh "$G"
	rc=$?
else
	echo "# $G: not in the initramfs"
	rc=127
fi
echo "IOPA-TEST-END iopactl rc=$rc"
[ $rc = 0 ] || fail=1

# The trace-cmd recipe of Documentation/iopa.rst (Job events), on a
# workload of ctl-load: the job events recorded in an instance of their
# own, every dispatch with its wait and every completion with its time.
trace_cmd_recipe() {
	command -v trace-cmd >/dev/null || { echo "# no trace-cmd in the guest"; return 1; }
	cd /tmp || return 1
	trace-cmd record -B iopa -e iopa:iopa_job_dispatch \
		-e iopa:iopa_job_complete \
		/iopa/tools/iopactl/ctl-load run --seconds 2 --workers 2 \
		>/tmp/tc-record.out 2>&1 || { cat /tmp/tc-record.out; return 1; }
	trace-cmd report >/tmp/tc-report.out 2>/dev/null || return 1
	d=$(grep -c 'iopa_job_dispatch: *ctx=[0-9]* sub=[0-9]* job=[0-9]* tgid=[0-9]* wait_us=[0-9]*$' /tmp/tc-report.out)
	c=$(grep -c 'iopa_job_complete: *ctx=[0-9]* sub=[0-9]* job=[0-9]* tgid=[0-9]* svc_us=[0-9]* res=' /tmp/tc-report.out)
	echo "# trace-cmd: $d dispatch and $c complete events"
	grep -m2 'iopa_job_' /tmp/tc-report.out | sed 's/^/# /'
	# Every job completed was dispatched (those of the last moment may
	# still run when the record stops).
	rc=1
	[ "$d" -gt 10 ] && [ "$c" -gt 10 ] && [ "$c" -le "$d" ] && rc=0
	rmdir /sys/kernel/tracing/instances/iopa 2>/dev/null
	return $rc
}
step trace-cmd "trace-cmd record -B iopa -e iopa:iopa_job_dispatch ...: the recipe of iopa.rst" trace_cmd_recipe
cd "$DIR" || exit 1

unload() {
	if ! grep -q '^iopa ' /proc/modules; then
		echo "# iopa is not loaded any more (did a test unload it?)"
		return 1
	fi
	rmmod iopa
}
step rmmod "rmmod iopa" unload

# The shipped udev rule, applied by a real udevd to the node of a fresh
# load: root:iopa 0660 (devtmpfs alone makes it root:root 0600).
RULE=/iopa/tools/udev/60-iopa.rules
udev_rule() {
	if [ ! -x /usr/bin/udevadm ] || [ ! -f "$RULE" ]; then
		echo "# udevadm or $RULE missing from the guest"
		return 1
	fi
	mkdir -p /etc/udev/rules.d /run/udev
	cp "$RULE" /etc/udev/rules.d/
	grep -q '^iopa:' /etc/group 2>/dev/null || echo 'iopa:x:990:' >>/etc/group
	ln -sf /usr/bin/udevadm /run/systemd-udevd
	/run/systemd-udevd --daemon || return 1
	insmod "$KO" || { udevadm control --exit; return 1; }
	udevadm settle --timeout=60
	got=$(ls -ln /dev/iopa | awk '{ print $1, $3, $4 }')
	udevadm control --exit
	rmmod iopa || return 1
	echo "# /dev/iopa after udev: $got (want crw-rw---- 0 990)"
	[ "$got" = "crw-rw---- 0 990" ]
}
step udev-rule "tools/udev/60-iopa.rules: /dev/iopa root:iopa 0660" udev_rule

# With kmemleak (the debug kernel of `make check-debug`): after the unload
# nothing the module allocated may be left unreferenced.
if [ -d /sys/kernel/debug ] && [ ! -e /sys/kernel/debug/kmemleak ]; then
	mount -t debugfs none /sys/kernel/debug 2>/dev/null
fi
if [ -e /sys/kernel/debug/kmemleak ]; then
	kmemleak_scan() {
		echo scan >/sys/kernel/debug/kmemleak || return 1
		sleep 6		# only objects older than 5 s are reported
		echo scan >/sys/kernel/debug/kmemleak || return 1
		n=$(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)
		head -80 /sys/kernel/debug/kmemleak
		echo "# kmemleak: $n unreferenced objects"
		[ "$n" = 0 ]
	}
	step kmemleak "kmemleak scan after unload: nothing leaked" kmemleak_scan
fi

exit $fail
