#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `iopactl metrics` on the host, against fake-iopa.so (canned submitters
# with counters and histograms), checked by metrics-check.py: a real
# parser of each format (prometheus_client's), then iopa's own rules.
# And the checker itself must reject broken outputs.  TAP on stdout;
# exit 0 only if all pass.  Needs make -C tools/iopactl iopactl
# fake-iopa.so, and python3-prometheus-client.
#
#   tools/iopactl/metrics-host-check.sh
set -u
D=$(cd "$(dirname "$0")" && pwd)
R=$(mktemp -d "${TMPDIR:-/tmp}/iopactl-metrics.XXXXXX") || exit 1
trap 'rm -rf "$R"' EXIT
CHECK="/usr/bin/python3 $D/metrics-check.py"
mkdir -p "$R/class/stats" "$R/module"
for f in contexts submitters workers submitted dispatched completed \
	cancelled requeued pending inflight unreaped jobs; do
	echo 3 >"$R/class/stats/$f"
done
echo bracket >"$R/class/default_policy"
echo 1.0 >"$R/module/version"
n=0 failed=0
t() {	# NAME COMMAND...
	local name=$1
	shift
	n=$((n + 1))
	if "$@" >"$R/log" 2>&1; then
		echo "ok $n $name"
	else
		failed=$((failed + 1))
		echo "not ok $n $name"
		sed 's/^/#   /' "$R/log" | tail -n 20
	fi
}
# metrics with the fake: ENV... -- ARGS; output in $R/out
fake() {
	local env=()
	while [ "$1" != -- ]; do env+=("$1"); shift; done
	shift
	env FAKE_IOPA_ROOT="$R" "${env[@]}" LD_PRELOAD="$D/fake-iopa.so" \
		"$D/iopactl" metrics "$@" >"$R/out" 2>"$R/err"
}
# The cgroup2 root's id (its inode), if this host has cgroup2 there.
cgid=0 cgpath=
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	cgid=$(stat -c %i /sys/fs/cgroup) cgpath=/
fi

ok_om() {
	fake FAKE_IOPA_NSUBS=7 FAKE_IOPA_CGROUP_ID="$cgid" -- &&
		[ ! -s "$R/err" ] &&
		$CHECK --min-subs 7 ${cgpath:+--cgroup "$cgpath"} "$R/out"
}
t "OpenMetrics: 7 submitters, accepted by prometheus_client's OpenMetrics parser${cgpath:+, cgroup path /}" ok_om
cp "$R/out" "$R/good"
ok_prom() {
	fake FAKE_IOPA_NSUBS=7 -- --format prometheus &&
		$CHECK --format prometheus --min-subs 7 "$R/out"
}
t "--format prometheus: accepted by the 0.0.4 parser, no # EOF or # UNIT" ok_prom
ok_fmt_bad() {
	! fake -- --format json && grep -q "openmetrics or prometheus" "$R/err"
}
t "--format json: refused, the two names" ok_fmt_bad
ok_eperm() {
	fake FAKE_IOPA_NSUBS=3 FAKE_IOPA_LIST=eperm -- &&
		grep -q "needs CAP_SYS_ADMIN" "$R/err" &&
		! grep -q '^iopa_submitter_limit{' "$R/out" &&
		$CHECK "$R/out"
}
t "F_ALL refused: exit 0, why on stderr, the totals only, still valid" ok_eperm
ok_nofeat() {
	fake FAKE_IOPA_NSUBS=3 FAKE_IOPA_FEATURES=0xff -- &&
		$CHECK --without-metrics --min-subs 3 "$R/out"
}
t "a module without IOPA_FEAT_METRICS: limits, no histograms, valid" ok_nofeat
ok_counts() {
	# Canned submitter 2: 18 completions, all in bucket 5 (32 us).
	grep -q '^iopa_submitter_service_seconds_bucket{ctx="2",sub="1",.*le="0.000016"} 0$' "$R/good" &&
		grep -q '^iopa_submitter_service_seconds_bucket{ctx="2",sub="1",.*le="0.000032"} 18$' "$R/good" &&
		grep -q '^iopa_submitter_service_seconds_count{ctx="2",sub="1",.*} 18$' "$R/good" &&
		grep -q '^iopa_submitter_service_seconds_sum{ctx="2",sub="1",.*} 0.018000$' "$R/good"
}
t "histogram: cumulative buckets in seconds, count, sum" ok_counts
ok_escape() {
	grep -q 'comm="fake\\"1\\n"' "$R/good"
}
t "label values escaped (a quote and a newline in comm)" ok_escape
ok_loaded() {
	grep -qx 'iopa_module_loaded 1' "$R/good" &&
		$CHECK --module-loaded 1 "$R/good"
}
t "with the module: iopa_module_loaded 1" ok_loaded
# Without the module (this host's real sysfs, no fake): still a valid
# exposition, saying so, exit 0 (Integrators 2, item 6: it wrote nothing).
if [ ! -e /sys/class/misc/iopa ]; then
	ok_absent() {
		"$D/iopactl" metrics >"$R/out" 2>"$R/err" &&
			grep -q "not loaded" "$R/err" &&
			$CHECK --module-loaded 0 "$R/out" &&
			"$D/iopactl" metrics --format prometheus >"$R/out" 2>/dev/null &&
			$CHECK --format prometheus --module-loaded 0 "$R/out"
	}
	t "without the module: iopa_module_loaded 0 alone, both formats, exit 0" ok_absent
	ok_textfile_absent() {
		local d=$R/textfile
		mkdir -p "$d" && echo 'iopa_module_loaded 1' >"$d/iopa.prom" &&
			"$D/iopactl" metrics --textfile "$d" 2>/dev/null &&
			$CHECK --format prometheus --module-loaded 0 "$d/iopa.prom" &&
			[ "$(stat -c %a "$d/iopa.prom")" = 644 ] &&
			[ "$(ls -A "$d")" = iopa.prom ]
	}
	t "--textfile DIR without the module: DIR/iopa.prom replaced, loaded 0, 0644, no temporary left" \
		ok_textfile_absent
fi
ok_textfile() {
	local d=$R/textfile2
	mkdir -p "$d" &&
		fake FAKE_IOPA_NSUBS=4 -- --textfile "$d" && [ ! -s "$R/out" ] &&
		$CHECK --format prometheus --module-loaded 1 --min-subs 4 "$d/iopa.prom" &&
		[ "$(ls -A "$d")" = iopa.prom ]
}
t "--textfile DIR with the module: Prometheus 0.0.4 in DIR/iopa.prom, nothing on stdout" ok_textfile
ok_textfile_bad() {
	! "$D/iopactl" metrics --textfile "$R/no/such/dir" 2>"$R/err" &&
		grep -q "textfile $R/no/such/dir: No such file or directory" "$R/err" &&
		! "$D/iopactl" metrics --textfile "$R" --format openmetrics 2>"$R/err" &&
		grep -q "writes the Prometheus format" "$R/err"
}
t "--textfile: a missing directory, or with --format openmetrics: refused, clearly" ok_textfile_bad
# The checker can fail.
rej() {	# SED-SCRIPT: a broken copy of the good output must be refused
	sed "$1" "$R/good" >"$R/bad" && ! $CHECK "$R/bad"
}
t "checker rejects: no # EOF" rej '/^# EOF$/d'
t "checker rejects: buckets out of order" rej '0,/le="0.000002"/s//le="0.000000"/'
t "checker rejects: a quote left unescaped in a label" rej '0,/comm="fake\\"/s//comm="fake"/'
t "checker rejects: a service count not the completed jobs" rej \
	'0,/^\(iopa_submitter_jobs_completed_total{ctx="1",sub="2".*}\) [0-9]*$/s//\1 999/'
echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
