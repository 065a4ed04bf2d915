# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Sourced by tools/check/install.sh and tools/check/dkms.sh: TAP output and
# the Debian 6.12 headers they build against.
#
#   plan N                  prints "1..N"
#   t DESC CMD [ARG...]     runs CMD; "ok n - DESC" if it exits 0, else
#                           "not ok n - DESC" and CMD's output as "# " lines
#   skip DESC REASON        "ok n - DESC # SKIP REASON"
#   finish                  exit status: 1 if a test failed or the count
#                           differs from the plan
#   headers_612             sets KVER, KDIR from .cache/kernel/6.12.env,
#                           fetching the headers first if they are not there
#                           or no longer work (tools/guest/fetch-kernel.sh)

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
GUEST=$TOP/tools/guest

tap_n=0
tap_failed=0
tap_plan=0

plan() {
	tap_plan=$1
	echo "1..$1"
}

t() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	tap_n=$((tap_n + 1))
	if [ "$rc" = 0 ]; then
		echo "ok $tap_n - $desc"
	else
		tap_failed=$((tap_failed + 1))
		echo "not ok $tap_n - $desc"
		[ -z "$out" ] || printf '%s\n' "$out" | tail -n 40 | sed 's/^/#   /'
	fi
}

skip() {
	tap_n=$((tap_n + 1))
	echo "ok $tap_n - $1 # SKIP $2"
}

finish() {
	if [ "$tap_n" != "$tap_plan" ]; then
		echo "# planned $tap_plan tests, ran $tap_n"
		exit 1
	fi
	[ "$tap_failed" = 0 ] || { echo "# $tap_failed of $tap_n failed"; exit 1; }
	exit 0
}

# The env file names KDIR by the path of whichever checkout last fetched
# into the shared cache: use it only if kbuild still answers there.
headers_612() {
	local envf=${IOPA_CACHE:-$TOP/.cache}/kernel/6.12.env
	if ! _headers_load "$envf"; then
		"$GUEST/fetch-kernel.sh" 6.12 >&2 || true
		_headers_load "$envf" || {
			echo "Bail out! no usable Debian 6.12 headers ($envf)"
			exit 1
		}
	fi
	export KVER KDIR
}

_headers_load() {
	[ -f "$1" ] || return 1
	KVER=$(sed -n 's/^KVER=//p' "$1")
	KDIR=$(sed -n 's/^KDIR=//p' "$1")
	[ -n "$KVER" ] && [ -f "$KDIR/Makefile" ] &&
		[ "$(make -s -C "$KDIR" kernelrelease 2>/dev/null)" = "$KVER" ]
}

# File mode as octal digits, e.g. 644.
mode() {
	stat -c %a "$1"
}
