#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-check.sh on the host, against fake-iopa.so (an LD_PRELOAD
# stand-in for /dev/iopa and the module's sysfs files): a dry run of the
# script's logic and of ctl-load before the real thing in the guest.
# What the fake cannot do is skipped there (the trace event); the mode of
# /dev/iopa is that of a stand-in file (IOPA_NODE).  Needs root (for the "nobody" tests), make -C
# tools/iopactl all fake-iopa.so.
#
#   tools/iopactl/host-guest-check.sh
set -u
D=$(cd "$(dirname "$0")" && pwd)
R=$(mktemp -d "${TMPDIR:-/tmp}/iopactl-fake.XXXXXX") || exit 1
trap 'rm -rf "$R"' EXIT
chmod 755 "$R"
mkdir -p "$R/class/stats" "$R/module" "$R/subs" "$R/bin"
chmod 777 "$R/subs"
# The module's defaults.
set -- max_jobs 16384 max_submitters 256 max_user_submitters 1024 \
	max_workers 1024 \
	max_total_jobs 262144 learn_knees 1 increase_threshold 1100 \
	decrease_threshold 900 \
	fast_cycle_ms 500 normal_cycle_ms 1000 hold_cycle_ms 6000 history 3 \
	init_limit 0 fast_cap 0 max_limit 256 gain_threshold 1050 \
	default_policy bracket
while [ $# -gt 1 ]; do
	echo "$2" >"$R/class/$1"
	shift 2
done
for f in contexts submitters workers submitted dispatched completed \
	cancelled requeued pending inflight unreaped jobs; do
	echo 0 >"$R/class/stats/$f"
done
chmod 644 "$R"/class/* "$R"/class/stats/*
: >"$R/node"	# /dev/iopa's mode, as fake-iopa.so sees it
chmod 600 "$R/node"
echo 0123456789ABCDEF01234567 >"$R/module/srcversion"
# busybox's usleep, for a host without busybox in PATH.
cat >"$R/bin/usleep" <<'EOS'
#!/bin/sh
sleep "$(awk "BEGIN { print $1 / 1000000 }")"
EOS
chmod 755 "$R/bin/usleep"
PATH=$PATH:$R/bin FAKE_IOPA_ROOT=$R IOPA_NODE=$R/node IOPA_TRACEFS=none IOPA_CGROUP=none IOPA_ADMIN=none \
	LD_PRELOAD=$D/fake-iopa.so \
	sh "$D/guest-check.sh"
