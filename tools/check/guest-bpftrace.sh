#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The bpftrace recipe of Documentation/iopa.rst ("Job events": the queue
# wait per submitter, as a histogram), run in the QEMU guest against a
# workload of ctl-load: the probe attaches to the iopa_job_dispatch
# trace point, every dispatch lands in its submitter's histogram, and the
# p99 bucket is read off it.  Runs INSIDE the guest (busybox sh) with
# bpftrace carried in (run-checks.sh's guest-bpftrace: GUEST_BINS).
#
# The program is the recipe's; its output is bpftrace's JSON (-f json):
# bpftrace 0.17 prints hist() as text with no buckets on the guest's
# console, where its JSON is whole (on a terminal the text is fine).
#
# TAP framed by IOPA-TEST-BEGIN/END bpftrace; exit 0 only if all pass.
set -u
fail=0 n=0
ok() {	# STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		fail=1
	fi
}
echo "IOPA-TEST-BEGIN bpftrace"
echo "1..3"
if ! command -v bpftrace >/dev/null || ! insmod /iopa/kernel/iopa.ko; then
	echo "# no bpftrace in the guest, or no module"
	for i in 1 2 3; do ok 1 "bpftrace recipe (not run)"; done
	echo "IOPA-TEST-END bpftrace rc=1"
	exit 1
fi
/iopa/tools/iopactl/ctl-load run --seconds 60 --workers 2 >/tmp/load.out 2>&1 &
load=$!
# The recipe, ended after 3 s of the workload.
timeout 300 bpftrace -f json -e 'tracepoint:iopa:iopa_job_dispatch
	{ @wait_us[args->ctx_id, args->sub_id] = hist(args->wait_us); }
	interval:s:3 { exit(); }' >/tmp/bt.json 2>/tmp/bt.err
rc=$?
kill -TERM $load 2>/dev/null
wait $load
grep -q '"type": "hist"' /tmp/bt.json
ok $? "bpftrace recipe: exit $rc, a histogram printed"
sed 's/^/# /' /tmp/bt.err | head -n 5
# {"type": "hist", "data": {"@wait_us": {"C,S": [{"min": a, "max": b,
# "count": c}, ...]}}}: the buckets of the first submitter, one a line.
grep '"type": "hist"' /tmp/bt.json | head -n 1 |
	sed 's/.*"@wait_us": {"\([0-9]*,[0-9]*\)": \[\([^]]*\)\].*/\1 \2/' >/tmp/bt.sub
key=$(cut -d' ' -f1 /tmp/bt.sub)
tr '{' '\n' </tmp/bt.sub | sed -n 's/.*"min": \([0-9-]*\), "max": \([0-9-]*\), "count": \([0-9]*\).*/\1 \2 \3/p' >/tmp/bt.buckets
total=$(awk '{ t += $3 } END { print t + 0 }' /tmp/bt.buckets)
echo "# submitter ${key:-none}: $total dispatches in $(wc -l </tmp/bt.buckets) buckets"
[ -n "$key" ] && [ "$total" -gt 10 ]
ok $? "the workload's submitter ($key) has its dispatches in the histogram"
# The p99: the first bucket where the running count reaches 99%.
p99=$(awk -v t="$total" '{ c += $3; if (c * 100 >= t * 99) { print "[" $1 ", " $2 "]"; exit } }' /tmp/bt.buckets)
echo "# p99 queue wait of ${key:-none}: $p99 us"
[ -n "$p99" ]
ok $? "its p99 queue-wait bucket: $p99 us"
rmmod iopa
echo "IOPA-TEST-END bpftrace rc=$fail"
exit $fail
