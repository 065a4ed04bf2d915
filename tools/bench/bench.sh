#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The benchmarks, run INSIDE the QEMU guest by `make bench`.
set -u
IOPA_KO=${IOPA_KO:-/iopa/kernel/iopa.ko}
BENCH=${BENCH:-/iopa/tools/bench/iopa-bench-dispatch}
BENCH_JOBS=${BENCH_JOBS:-50000}
BENCH_RUNS=${BENCH_RUNS:-5}

[ -e /dev/iopa ] || insmod "$IOPA_KO" || exit 1
echo "# dispatch: empty jobs, $(nproc) vCPUs under QEMU TCG"
"$BENCH" -n "$BENCH_JOBS" -w "$(nproc)" -r "$BENCH_RUNS" || exit 1
# The rings' teardown finishes in a kernel worker after the program exits,
# holding the module until then: wait for it (EAGAIN) rather than fail.
i=0
until rmmod iopa 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || { rmmod iopa; exit 1; }
	sleep 0.1
done
