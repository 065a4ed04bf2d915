#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Where a dispatch configuration spends its time, INSIDE the guest: perf
# samples every CPU (cpu-clock: TCG has no PMU) while iopa-bench-dispatch
# runs one configuration, then prints the hottest symbols, kernel and
# user.  Run by `make profile-dispatch` (PROFILE=path:batch:fd, default
# ioctl:64:borrow), which carries perf into the guest.
set -u
IOPA_KO=${IOPA_KO:-/iopa/kernel/iopa.ko}
BENCH=${BENCH:-/iopa/tools/bench/iopa-bench-dispatch}
PROFILE=${PROFILE:-ioctl:64:borrow}
JOBS=${JOBS:-200000}

[ -e /dev/iopa ] || insmod "$IOPA_KO" || exit 1
command -v perf >/dev/null || { echo "profile: no perf in the guest"; exit 1; }
echo "# profile: $PROFILE, $JOBS jobs, $(nproc) vCPUs under QEMU TCG"
perf record -q -a -e cpu-clock -F 4999 -o /tmp/perf.data -- \
	"$BENCH" -n "$JOBS" -r 1 -o "$PROFILE" || exit 1
perf report -i /tmp/perf.data --stdio --no-children --sort sym \
	--percent-limit 0.7 2>/dev/null | grep -v '^$' | head -70
perf report -i /tmp/perf.data --stdio --no-children --sort dso \
	2>/dev/null | grep -v '^#' | grep -v '^$' | head -12
