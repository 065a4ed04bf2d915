#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The `iopactl metrics` outputs guest-check.sh printed in the guest (real
# module, a workload in a cgroup of its own), taken from the console log
# and checked on the host by metrics-check.py: a real parser of each
# format, the workload's submitter with its cgroup path.  The guest has
# no python.
#
#   tools/iopactl/metrics-guest-check.sh CONSOLE-LOG
#
# Exit status 0 only if the log holds both outputs and both pass.
set -u
D=$(cd "$(dirname "$0")" && pwd)
LOG=${1:?usage: metrics-guest-check.sh CONSOLE-LOG}
W=$(mktemp -d "${TMPDIR:-/tmp}/iopactl-mg.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
[ -r "$LOG" ] || { echo "$LOG: not readable (did the guest run?)"; exit 1; }
# Each block to W/FORMAT; its cgroup (if any) to W/FORMAT.cgroup.  The
# console ends lines with CR LF.
tr -d '\r' <"$LOG" | awk -v w="$W" '
	/^IOPA-METRICS-BEGIN / {
		out = w "/" $2
		printf "" >out
		if ($3 ~ /^cgroup=/) { sub(/^cgroup=/, "", $3); print $3 >(out ".cgroup") }
		next
	}
	/^IOPA-METRICS-END$/ { out = ""; next }
	out != "" { print >out }'
rc=0
for f in openmetrics prometheus textfile; do
	if [ ! -s "$W/$f" ]; then
		echo "no $f output in $LOG"
		rc=1
		continue
	fi
	cg=
	[ ! -s "$W/$f.cgroup" ] || cg=$(cat "$W/$f.cgroup")
	fmt=$f
	[ "$f" != textfile ] || fmt=prometheus	# --textfile: 0.0.4
	/usr/bin/python3 "$D/metrics-check.py" --format "$fmt" --min-subs 1 \
		--module-loaded 1 ${cg:+--cgroup "$cg"} "$W/$f" || rc=1
done
exit $rc
