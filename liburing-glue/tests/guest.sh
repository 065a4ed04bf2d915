#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR MIT)
#
# Runs INSIDE the guest (busybox sh, cwd /iopa; see tools/guest/): load
# iopa.ko, run libiopa's test programs and iopa-sum's check, unload the
# module.  Each step is framed like tools/check/guest-selftests.sh:
#     IOPA-TEST-BEGIN <name>
#     ... TAP ...
#     IOPA-TEST-END <name> rc=<exit status>
# so that tools/check/run-checks.sh can count it.  Exits non-zero if any
# step failed (kselftest: 0 pass, 4 all skipped; anything else fails).
#
# Started by liburing-glue/tests/run-guest-tests.sh, which ships the
# programs.  Environment: LIBIOPA_SUM_FILES (iopa-sum check tree size,
# default 10000).

KO=${IOPA_KO:-/iopa/kernel/iopa.ko}
T=/iopa/liburing-glue/tests
S=/iopa/tools/iopa-sum
fail=0

run() {	# NAME COMMAND...
	name=$1
	shift
	echo "IOPA-TEST-BEGIN $name"
	"$@"
	rc=$?
	echo "IOPA-TEST-END $name rc=$rc"
	[ $rc = 0 ] || [ $rc = 4 ] || fail=1
}

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

step insmod "insmod $KO" insmod "$KO"
grep -q . /sys/class/misc/iopa/max_limit 2>/dev/null &&
	echo "# max_limit $(cat /sys/class/misc/iopa/max_limit), $(nproc) CPUs"

for p in libiopa_wrappers libiopa_pool libiopa_uring; do
	if [ -x "$T/$p" ]; then
		run "$p" timeout -s KILL 600 "$T/$p"
	else
		echo "IOPA-TEST-BEGIN $p"
		echo "# $p: not shipped"
		echo "IOPA-TEST-END $p rc=127"
		fail=1
	fi
done

if [ -f /iopa/liburing-glue/examples/run.sh ]; then
	run examples timeout -s KILL 300 sh /iopa/liburing-glue/examples/run.sh
fi

if [ -x "$S/check.sh" ]; then
	run iopa-sum-check timeout -s KILL 900 sh "$S/check.sh" \
		"${LIBIOPA_SUM_FILES:-10000}"
fi
# iopa-sum against GNU sha256sum, case by case, with the module
if [ -f "$S/dropin-check.sh" ]; then
	run iopa-sum-dropin timeout -s KILL 300 sh "$S/dropin-check.sh"
fi

unload() {
	grep -q '^iopa ' /proc/modules || {
		echo "# iopa is not loaded any more"
		return 1
	}
	rmmod iopa
}
step rmmod "rmmod iopa (no fd left open)" unload

exit $fail
