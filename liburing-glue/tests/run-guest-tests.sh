#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR MIT)
#
# Build libiopa, its guest tests and iopa-sum, build iopa.ko for SERIES and
# run liburing-glue/tests/guest.sh in the QEMU guest (tools/guest/).
#
#   liburing-glue/tests/run-guest-tests.sh [--series 6.12|6.1]
#       [--timeout SECS] [--log FILE] [--result FILE]
#
# Exit status: run-guest.sh's (0 only if every test passed and the
# kernel log is clean).  The console goes to stdout and to --log (default
# build/guest/guest-<series>.log).  Environment: KSFT_INC (kselftest
# harness; default .cache/ksrc/..., fetched if missing), LIBIOPA_SUM_FILES.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
SERIES=6.12
TIMEOUT=1800
LOG=
RESULT=
while [ $# -gt 0 ]; do
	case "$1" in
	--series) SERIES=$2; shift 2 ;;
	--timeout) TIMEOUT=$2; shift 2 ;;
	--log) LOG=$2; shift 2 ;;
	--result) RESULT=$2; shift 2 ;;
	-h|--help) sed -n '4,15p' "$0"; exit 0 ;;
	*) echo "run-guest-tests: unknown argument $1" >&2; exit 2 ;;
	esac
done

KSFT_INC=${KSFT_INC:-$TOP/.cache/ksrc/tools/testing/selftests}
[ -f "$KSFT_INC/kselftest_harness.h" ] || "$TOP/tools/guest/fetch-ksrc.sh" >/dev/null

mk() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s "$@"; }
mk -C "$TOP/liburing-glue" all
mk -C "$TOP/liburing-glue" tests KSFT_INC="$KSFT_INC"
mk -C "$TOP/liburing-glue" examples
mk -C "$TOP/tools/iopa-sum" all
ko=$("$TOP/tools/guest/build-module.sh" "$SERIES" 2>/dev/null) || {
	echo "run-guest-tests: module build failed: build/kbuild/$SERIES/build.log" >&2
	exit 1
}

# GNU sha256sum as the reference: busybox's does not escape names.
files=(
	liburing-glue/libiopa.so.1
	liburing-glue/tests/libiopa_wrappers
	liburing-glue/tests/libiopa_pool
	liburing-glue/tests/libiopa_uring
	tools/iopa-sum/iopa-sum
	tools/iopa-sum/mktree
	tools/iopa-sum/check.sh
	tools/iopa-sum/dropin-check.sh
	liburing-glue/examples/pool-sum
	liburing-glue/examples/uring-sum
	liburing-glue/examples/two-process
	liburing-glue/examples/run.sh
)
[ ! -x /usr/bin/sha256sum ] || files+=(/usr/bin/sha256sum)
# put_proj puts an absolute path at /iopa/<basename>: move it next to
# check.sh, where it looks first, from inside the guest script.
script=$(mktemp "${TMPDIR:-/tmp}/libiopa-guest.XXXXXX.sh")
trap 'rm -f "$script"' EXIT
{
	echo '#!/bin/sh'
	echo '[ ! -x /iopa/sha256sum ] || mv /iopa/sha256sum /iopa/tools/iopa-sum/sha256sum'
	echo "export LIBIOPA_SUM_FILES=${LIBIOPA_SUM_FILES:-10000}"
	cat "$TOP/liburing-glue/tests/guest.sh"
} >"$script"

# not exec: the EXIT trap removes the script
"$TOP/tools/guest/run-guest.sh" --series "$SERIES" --ko "$ko" \
	--mem 1024 --timeout "$TIMEOUT" \
	--log "${LOG:-$TOP/build/guest/libiopa-guest-$SERIES.log}" \
	${RESULT:+--result "$RESULT"} "$script" "${files[@]}"
