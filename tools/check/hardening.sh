#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host side of `make fuzz` and `make stress`: build the tool and the module,
# boot the debug kernel (tools/guest/build-debug-kernel.sh builds it once)
# and run tools/check/hardening-guest.sh KIND there.  The console goes to
# stdout and to build/hardening/KIND.log; the last line is the guest's
#   hardening <fuzz|stress> result=<pass|fail> count=<n> reports=<n>
# with result=fail also when the guest itself failed (crash, timeout, a
# kernel problem seen by run-guest.sh).
#
#   tools/check/hardening.sh fuzz|stress
# Environment: HARDENING_COUNT (calls or jobs, default 1000000),
# HARDENING_SEED, HARDENING_SERIES (default debug; 6.12 for a quick run on
# Debian's kernel), HARDENING_TIMEOUT (guest seconds, default 3600).
set -u
KIND=${1:?usage: hardening.sh fuzz|stress}
case "$KIND" in fuzz|stress) ;; *) echo "hardening: fuzz or stress" >&2; exit 2 ;; esac
TOP=$(cd "$(dirname "$0")/../.." && pwd)
GUEST=$TOP/tools/guest
SERIES=${HARDENING_SERIES:-debug}
TIMEOUT=${HARDENING_TIMEOUT:-3600}
OUT=$TOP/build/hardening
mkdir -p "$OUT"

fail() {
	echo "hardening: $*" >&2
	echo "hardening $KIND result=fail count=0 reports=0"
	exit 1
}

mk() { env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s "$@"; }
mk -C "$TOP/tools/$KIND" || fail "building tools/$KIND failed"
ko=$("$GUEST/build-module.sh" "$SERIES" 2>/dev/null | tail -1) ||
	fail "building iopa.ko for $SERIES failed (build/kbuild/$SERIES/build.log)"

# The guest gets no environment: the settings go into its script.
script=$OUT/$KIND-guest.sh
{
	echo '#!/bin/sh'
	echo "HARDENING_COUNT=${HARDENING_COUNT:-1000000}" \
		"${HARDENING_SEED:+HARDENING_SEED=$HARDENING_SEED}" \
		"HARDENING_TIMEOUT=$((TIMEOUT - 120))" \
		"exec /iopa/tools/check/hardening-guest.sh $KIND"
} >"$script"
prog=tools/$KIND/iopa-$KIND

"$GUEST/run-guest.sh" --series "$SERIES" --mem 2048 --ko "$ko" \
	--timeout "$TIMEOUT" --log "$OUT/$KIND.console.log" \
	"$script" "$TOP/tools/check/hardening-guest.sh" "$TOP/$prog" |
	tee "$OUT/$KIND.log"
rc=${PIPESTATUS[0]}
line=$(grep -a "^hardening $KIND result=" "$OUT/$KIND.log" | tail -1)
[ -n "$line" ] || fail "the guest printed no verdict (see $OUT/$KIND.console.log)"
if [ "$rc" != 0 ]; then
	line=$(echo "$line" | sed 's/result=pass/result=fail/')
fi
echo "$line"
[ "$rc" = 0 ] && case "$line" in *result=pass*) true ;; *) false ;; esac
