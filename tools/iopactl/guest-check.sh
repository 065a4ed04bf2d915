#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# iopactl against the real module.  Runs INSIDE the QEMU guest (busybox
# sh, as root, cwd /iopa; see tools/guest/) with iopa.ko already loaded.
# TAP on stdout ("1..N" first, exactly N results, diagnostics as "# "
# lines); exit status 0 only if every test passed.
#
#   sh tools/iopactl/guest-check.sh
#
# Needs, next to this script or in /iopa/tools/iopactl/ (or IOPACTL and
# CTL_LOAD in the environment): iopactl and ctl-load (make -C
# tools/iopactl).  No python in the guest: ctl-load parses and checks the
# JSON.  Changes tunables, the trace event and the mode of /dev/iopa
# for a while and restores them, also on failure.
#
# What it checks:
#   - --version; status as text; a knee written to knees listed in it
#   - status --json against a workload's own view (ctl-load check): valid
#     JSON, the submitter listed by pid with its odd command name escaped
#     right, state and stats equal to GET_STATE/GET_STATS, abi and
#     tunables equal to GET_FEATURES and sysfs
#   - set: out of range (exit 1, the range), unknown name (exit 2), a
#     value read back with get, a refusal mid-list (what was applied),
#     default_policy iopa and bracket, a policy name that is none (exit 2,
#     the three names); as user nobody: "need root", get still works
#   - with default_policy bracket, a new adaptive submitter (ctl-load
#     times): status --json names its policy "bracket"; its wait_us,
#     svc_us, completions and noise_permille equal GET_STATE's, and are
#     plausible (svc_us >= 2000: its jobs sleep 2 ms)
#   - status as nobody: /dev/iopa 0600 (not opened, a note), 0666
#     (EPERM on IOPA_LIST_F_ALL: own context only, a note)
#   - watch --count 2 with a bracket workload running: 2 frames, lines
#     <= 80 columns, no escape codes when not on a terminal; its line
#     shows policy "brkt" and a mean service time (SVC) of >= 2 ms
#   - metrics, OpenMetrics and Prometheus 0.0.4, with a workload in a
#     cgroup of its own (cgroup2 mounted if it is not): exit 0, the
#     workload's histograms and labels; each output is printed between
#     IOPA-METRICS-BEGIN FORMAT and IOPA-METRICS-END lines, for the host
#     to check with a real parser (metrics-guest-check.sh)
#   - sub, with that workload: pin its submitter's limit, free it within
#     bounds (seen in metrics), refused to nobody and for unknown ids
#     (IOPA_ADMIN=none skips these: the fake cannot reach another
#     process's submitter)
#   - trace --count 1, text and --json, with short cycles and an
#     adaptive workload: one limit change, the event's enable restored
#   - every tunable back to its value from before
set -u

D=
case "$0" in */*) D=$(cd "$(dirname "$0")" && pwd) ;; esac
[ -n "$D" ] && [ -x "$D/iopactl" ] || D=/iopa/tools/iopactl
IOPACTL=${IOPACTL:-$D/iopactl}
CTL_LOAD=${CTL_LOAD:-$D/ctl-load}
S=/sys/class/misc/iopa
# The node whose mode the tests change (host-guest-check.sh: a stand-in).
NODE=${IOPA_NODE:-/dev/iopa}
PLAN=39
TUNABLES="max_jobs max_submitters max_user_submitters max_workers max_total_jobs learn_knees
	increase_threshold decrease_threshold fast_cycle_ms normal_cycle_ms
	hold_cycle_ms history init_limit fast_cap max_limit gain_threshold
	default_policy"
NOBODY=65534

W=$(mktemp -d "${TMPDIR:-/tmp}/iopactl-check.XXXXXX") || exit 1
chmod 755 "$W"	# nobody's iopactl writes nothing here, but may look
n=0
failed=0

ok() {	# STATUS DESCRIPTION
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}
skip() {	# DESCRIPTION REASON
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}
# Show a file as TAP diagnostics.
show() {	# FILE [LINES]
	[ -s "$1" ] || return 0
	head -n "${2:-20}" "$1" | sed 's/^/#   /'
}
# Run iopactl (bounded), stdout to $W/out, stderr to $W/err; status in rc.
ctl() {
	timeout -s KILL 60 "$IOPACTL" "$@" </dev/null >"$W/out" 2>"$W/err"
	rc=$?
}
as_nobody() {
	timeout -s KILL 60 "$CTL_LOAD" asuser $NOBODY "$IOPACTL" "$@" \
		</dev/null >"$W/out" 2>"$W/err"
	rc=$?
}

# --- state to restore ---------------------------------------------------------
# old_max_jobs, old_max_submitters, ...: the values before the tests.
for t in $TUNABLES; do
	eval "old_$t=\$(cat $S/$t 2>/dev/null)"
done
# shellcheck disable=SC2154	# assigned by the eval above
: "$old_max_jobs" "$old_max_submitters" "$old_max_workers" "$old_default_policy"
# IOPA_TRACEFS=none skips the trace tests (host-guest-check.sh).
T=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ "${IOPA_TRACEFS:-}" != none ] || break
	if [ -e "$d/events/iopa/iopa_limit_change/enable" ]; then
		T=$d
		break
	fi
done
EV=$T/events/iopa/iopa_limit_change/enable
old_ev=
[ -z "$T" ] || old_ev=$(cat "$EV")
old_node=$(stat -c %a "$NODE" 2>/dev/null)
loadpid=

restore() {
	[ -z "$loadpid" ] || { kill -TERM "$loadpid" 2>/dev/null; wait "$loadpid"; }
	loadpid=
	for t in $TUNABLES; do
		eval "v=\$old_$t"
		[ -z "$v" ] || [ "$(cat "$S/$t")" = "$v" ] || echo "$v" >"$S/$t"
	done
	[ -z "$T" ] || [ "$(cat "$EV")" = "$old_ev" ] || echo "$old_ev" >"$EV"
	[ -z "$old_node" ] || chmod "$old_node" "$NODE"
	[ ! -w "$S/knees" ] || echo "7:77 knee=0" >"$S/knees" 2>/dev/null
}
trap 'restore; rm -rf "$W"' EXIT
trap 'exit 1' INT TERM

# Start ctl-load run ARGS in the background; wait until it is running.
start_load() {
	"$CTL_LOAD" run "$@" >"$W/load.out" 2>&1 &
	loadpid=$!
	i=0
	while ! grep -q '^# ctl-load run: pid' "$W/load.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || { echo "# ctl-load run did not start"; show "$W/load.out"; return 1; }
		usleep 100000
	done
}
stop_load() {
	[ -n "$loadpid" ] || return 0
	kill -TERM "$loadpid" 2>/dev/null
	wait "$loadpid"
	loadpid=
	show "$W/load.out" 5
}

echo "1..$PLAN"
echo "# iopactl: $IOPACTL; ctl-load: $CTL_LOAD; tracefs: ${T:-none}"
if [ ! -x "$IOPACTL" ] || [ ! -x "$CTL_LOAD" ]; then
	echo "# iopactl or ctl-load missing: build with make -C tools/iopactl"
	while [ $n -lt $PLAN ]; do ok 1 "iopactl and ctl-load present"; done
	exit 1
fi

# --- 1-2: version, status as text ------------------------------------------------
ctl --version
[ $rc = 0 ] && grep -q '^iopactl [0-9]' "$W/out"
ok $? "iopactl --version"
ctl status
[ $rc = 0 ] && grep -q '^ABI version 1, features' "$W/out" &&
	grep -q '^submitters (all contexts): ' "$W/out" &&
	grep -q '^  max_jobs  *[0-9]' "$W/out"
ok $? "status (text): exit 0, ABI version, tunables, submitters of all contexts"
[ $rc = 0 ] || { show "$W/out"; show "$W/err"; }
# A knee set for a device number nothing uses, shown, then forgotten.
if [ -w "$S/knees" ] && echo "7:77 knee=5 diskseq=9" >"$S/knees"; then
	ctl status
	[ $rc = 0 ] && grep -qx '  7:77 knee 5 diskseq 9 set job_kb 0' "$W/out"
	ok $? "status (text): a knee written to knees is listed (device, knee, diskseq, set, job_kb)"
	[ $rc = 0 ] || { show "$W/out"; show "$W/err"; }
	echo "7:77 knee=0" >"$S/knees"
else
	skip "status (text): a knee written to knees is listed" "no writable $S/knees"
fi

# --- 3-6: status --json against the workload's own answers --------------------
timeout -s KILL 120 "$CTL_LOAD" check "$IOPACTL" >"$W/check.out" 2>&1
echo "# ctl-load check: exit $?"
grep '^#' "$W/check.out" | head -n 40
for r in parse found numbers abi; do
	grep -q "^RESULT $r 0\$" "$W/check.out"
	case $r in
	parse) ok $? "status --json is one valid JSON document (exit 0, scope all)" ;;
	found) ok $? "status --json lists ctl-load's submitter by pid, comm escaped right (quote, backslash, controls, UTF-8, invalid byte)" ;;
	numbers) ok $? "status --json: the submitter's state and stats equal its own GET_STATE/GET_STATS" ;;
	abi) ok $? "status --json: abi and tunables equal GET_FEATURES and sysfs" ;;
	esac
done

# --- 7-18: set, get, ctl-load times ------------------------------------------------------------------
ctl set max_jobs=0
[ $rc = 1 ] && [ "$(cat "$W/err")" = "iopactl: max_jobs=0: invalid value (range 1..1048576)" ] &&
	[ "$(cat $S/max_jobs)" = "$old_max_jobs" ]
ok $? "set max_jobs=0: exit 1, 'iopactl: max_jobs=0: invalid value (range 1..1048576)', unchanged"
[ $rc = 1 ] || { echo "# exit $rc"; show "$W/err"; }

ctl set bogus=1
[ $rc = 2 ] && grep -q '^iopactl: bogus: unknown tunable' "$W/err"
ok $? "set bogus=1: exit 2, unknown tunable"

ctl set max_jobs=5000
r1=$rc
ctl get max_jobs
[ $r1 = 0 ] && [ $rc = 0 ] && [ "$(cat "$W/out")" = 5000 ] && [ "$(cat $S/max_jobs)" = 5000 ]
ok $? "set max_jobs=5000, get max_jobs: 5000"

ctl set "max_jobs=$old_max_jobs"
r1=$rc
ctl get max_jobs
[ $r1 = 0 ] && [ "$(cat "$W/out")" = "$old_max_jobs" ]
ok $? "set max_jobs back to $old_max_jobs"

ctl set max_jobs=6000 max_workers=0 max_submitters=7
[ $rc = 1 ] && [ "$(cat $S/max_jobs)" = 6000 ] &&
	[ "$(cat $S/max_submitters)" = "$old_max_submitters" ] &&
	[ "$(cat $S/max_workers)" = "$old_max_workers" ] &&
	grep -qx 'iopactl: max_workers=0: invalid value (range 1..65536)' "$W/err" &&
	grep -qx 'iopactl: applied: max_jobs=6000' "$W/err" &&
	grep -qx 'iopactl: not applied: max_workers=0 max_submitters=7' "$W/err"
ok $? "set a=ok b=0 c: exit 1, a applied, b and c not, and it says so"
[ $rc = 1 ] || { echo "# exit $rc"; show "$W/err"; }
echo "$old_max_jobs" >$S/max_jobs

ctl set default_policy=iopa
r1=$rc
ctl get default_policy
[ $r1 = 0 ] && [ "$(cat "$W/out")" = iopa ]
ok $? "set default_policy=iopa, get: iopa"

ctl set default_policy=bracket
r1=$rc
ctl get default_policy
[ $r1 = 0 ] && [ "$(cat "$W/out")" = bracket ] && [ "$(cat $S/default_policy)" = bracket ]
ok $? "set default_policy=bracket, get: bracket"

# The times of the last cycle, and the policy's name, against GET_STATE.
timeout -s KILL 120 "$CTL_LOAD" times "$IOPACTL" bracket >"$W/times.out" 2>&1
echo "# ctl-load times: exit $?"
grep '^#' "$W/times.out" | head -n 20
grep -q '^RESULT policy 0$' "$W/times.out"
ok $? "default_policy bracket: a new adaptive submitter's policy is bracket in GET_STATE and status --json"
grep -q '^RESULT times 0$' "$W/times.out"
ok $? "status --json: wait_us, svc_us, completions, noise_permille equal GET_STATE's (svc_us >= 2000 for 2 ms jobs)"
echo "$old_default_policy" >$S/default_policy

ctl set default_policy=fifo
[ $rc = 2 ] && grep -qx 'iopactl: default_policy=fifo: not a policy (iopa, hillclimb or bracket)' "$W/err" &&
	[ "$(cat $S/default_policy)" = "$old_default_policy" ]
ok $? "set default_policy=fifo: exit 2, 'not a policy (iopa, hillclimb or bracket)', unchanged"
[ $rc = 2 ] || { echo "# exit $rc"; show "$W/err"; }

# The guest has no /etc/passwd for su: ctl-load asuser switches users.
if "$CTL_LOAD" asuser $NOBODY /bin/true 2>"$W/err"; then
	as_nobody set max_jobs=5000
	[ $rc = 1 ] && [ "$(cat "$W/err")" = "iopactl: max_jobs=5000: need root (Permission denied)" ] &&
		[ "$(cat $S/max_jobs)" = "$old_max_jobs" ]
	ok $? "set as user nobody: exit 1, 'need root', unchanged"
	[ $rc = 1 ] || { echo "# exit $rc"; show "$W/err"; }
	as_nobody get max_jobs
	[ $rc = 0 ] && [ "$(cat "$W/out")" = "$old_max_jobs" ]
	ok $? "get as user nobody: works (sysfs is 0644)"
else
	show "$W/err"
	skip "set as user nobody: need root" "cannot run as uid $NOBODY"
	skip "get as user nobody" "cannot run as uid $NOBODY"
fi

# --- 19-20: status as nobody ---------------------------------------------------------
if "$CTL_LOAD" asuser $NOBODY /bin/true 2>/dev/null && [ -n "$old_node" ]; then
	# Root can always open it: the modes matter to nobody only.
	chmod 600 "$NODE"
	as_nobody status --json
	[ $rc = 0 ] && grep -q '"opened": false' "$W/out" && grep -q 'need root' "$W/out" &&
		grep -q '"max_jobs": [0-9]' "$W/out"
	ok $? "status --json as nobody, /dev/iopa 0600: exit 0, tunables shown, a note that root is needed"
	[ $rc = 0 ] || { show "$W/out" 60; show "$W/err"; }
	chmod 666 "$NODE"
	as_nobody status --json
	[ $rc = 0 ] && grep -q '"submitters_scope": "own"' "$W/out" &&
		grep -q 'CAP_SYS_ADMIN' "$W/out" && grep -q '"opened": true' "$W/out"
	ok $? "status --json as nobody, /dev/iopa 0666: EPERM on IOPA_LIST_F_ALL, own context only, a note"
	[ $rc = 0 ] || { show "$W/out" 80; show "$W/err"; }
	chmod "$old_node" "$NODE"
else
	skip "status as nobody, /dev/iopa 0600" "cannot run as uid $NOBODY, or no $NODE"
	skip "status as nobody, /dev/iopa 0666" "cannot run as uid $NOBODY, or no $NODE"
fi

# --- 21-26: watch ---------------------------------------------------------------------
# A bracket workload (the default policy, whatever the guest's is now),
# running for a second: its cycles have ended, with their times.
echo bracket >$S/default_policy
if start_load --seconds 60 --workers 2 && usleep 1000000; then
	ctl watch --count 2 --interval 0.3
	frames=$(grep -c '^iopa  jobs/s' "$W/out")
	long=$(awk 'length($0) > 80' "$W/out" | wc -l)
	[ $rc = 0 ] && [ "$frames" = 2 ]
	ok $? "watch --count 2: exit 0 after 2 frames"
	[ "$long" = 0 ] && ! grep -q "$(printf '\033')" "$W/out"
	ok $? "watch: no line over 80 columns, no escape codes when not on a terminal"
	grep -q ' ctl-load ' "$W/out"
	ok $? "watch: shows the workload's submitter"
	# Its line in the last frame: CTX.SUB COMM POL MODE ... WAIT SVC.
	awk '/ ctl-load / { l = $0 } END { n = split(l, f, " ");
		exit !(n == 12 && f[3] == "brkt" && f[n] + 0 >= 2) }' "$W/out"
	ok $? "watch: the workload's policy 'brkt', its SVC (ms) >= 2 (its jobs sleep 2 ms)"
	show "$W/out" 8
	[ $rc = 0 ] || show "$W/err"
	ctl watch -n2 -i0.2 --lines
	# Titles once, then per interval a stamped line per submitter with
	# 13 fields: TIME CTX.SUB PID COMM POLICY MODE ... WAIT_MS SVC_MS.
	[ $rc = 0 ] && [ "$(grep -c '^TIME ' "$W/out")" = 1 ] &&
		[ "$(grep -c ' ctl-load ' "$W/out")" = 2 ] &&
		awk '/ ctl-load / { n = split($0, f, " ");
			if (n != 13 || f[5] != "bracket" ||
			    f[1] !~ /^[0-9]+-[0-9]+-[0-9]+T[0-9:]+$/) bad = 1 }
			END { exit bad }' "$W/out"
	ok $? "watch -n2 -i0.2 --lines: titles once, 2 stamped lines of 13 fields for the workload"
	ctl watch --count=2 --interval=200ms --json
	[ $rc = 0 ] && [ "$(wc -l <"$W/out")" = 2 ] &&
		[ "$(grep -c '^{"time_ms":[0-9]*,"loaded":true,.*"comm":"ctl-load".*}$' "$W/out")" = 2 ]
	ok $? "watch --json: 2 lines, each one JSON object with time_ms and the workload"
	show "$W/out" 2
	stop_load
else
	stop_load
	ok 1 "watch --count 2 (no workload)"
	ok 1 "watch: line length (no workload)"
	ok 1 "watch: the workload's submitter (no workload)"
	ok 1 "watch: policy and SVC (no workload)"
	ok 1 "watch --lines (no workload)"
	ok 1 "watch --json (no workload)"
fi
echo "$old_default_policy" >$S/default_policy

# --- 27-33: metrics, sub ------------------------------------------------------------------------
# The workload in a cgroup of its own, so that its submitter's cgroup
# label is a path (the root cgroup's is "/").
# IOPA_CGROUP=none leaves cgroups alone (host-guest-check.sh).
CG=/sys/fs/cgroup
cg_mounted= cg_dir=
if [ "${IOPA_CGROUP:-}" != none ]; then
	if [ ! -e $CG/cgroup.controllers ] && mkdir -p $CG 2>/dev/null &&
	   mount -t cgroup2 none $CG 2>/dev/null; then
		cg_mounted=1
	fi
	if [ -e $CG/cgroup.controllers ] && mkdir $CG/iopactl-metrics 2>/dev/null; then
		cg_dir=$CG/iopactl-metrics
		# This shell, and so the workload, in it.
		echo $$ >"$cg_dir/cgroup.procs" 2>/dev/null ||
			{ rmdir "$cg_dir"; cg_dir=; }
	fi
fi
# Print a metrics output for the host's parser.
dump_metrics() {	# FORMAT
	echo "IOPA-METRICS-BEGIN $1${cg_dir:+ cgroup=/iopactl-metrics}"
	cat "$W/out"
	echo "IOPA-METRICS-END"
}
# Until the workload's submitter has completed jobs (its first cycle).
metrics_busy() {
	i=0
	while [ $i -lt 100 ]; do
		ctl metrics
		grep -q '^iopa_submitter_jobs_completed_total{.*comm="ctl-load".*} [1-9]' "$W/out" &&
			return 0
		i=$((i + 1))
		usleep 100000
	done
	return 1
}
if start_load --seconds 60 --workers 2 && metrics_busy; then
	[ $rc = 0 ] && [ "$(tail -n 1 "$W/out")" = "# EOF" ] &&
		grep -q '^iopa_module_info{version="[^"]*",abi="1"} 1$' "$W/out" &&
		grep -q '^iopa_submitter_service_seconds_bucket{.*comm="ctl-load".*le="+Inf"} [1-9]' "$W/out" &&
		grep -q "^iopa_submitter_limit{.*cgroup=\"${cg_dir:+/iopactl-metrics}" "$W/out"
	ok $? "metrics: exit 0, OpenMetrics ending in # EOF, the workload's histograms and cgroup"
	dump_metrics openmetrics
	ctl metrics --format=prometheus
	[ $rc = 0 ] && ! grep -q '^# EOF' "$W/out" &&
		grep -q '^# TYPE iopa_submitter_jobs_completed_total counter$' "$W/out"
	ok $? "metrics --format=prometheus: exit 0, counters typed by their _total name, no # EOF"
	dump_metrics prometheus
	mkdir -p "$W/tf"
	ctl metrics --textfile "$W/tf"
	[ $rc = 0 ] && [ ! -s "$W/out" ] && [ "$(ls -A "$W/tf")" = iopa.prom ] &&
		grep -qx 'iopa_module_loaded 1' "$W/tf/iopa.prom"
	ok $? "metrics --textfile DIR: exit 0, DIR/iopa.prom alone, iopa_module_loaded 1"
	cp "$W/tf/iopa.prom" "$W/out" 2>/dev/null
	dump_metrics textfile
	[ $rc = 0 ] || show "$W/err"
	# --- 30-33: sub, root's commands on the workload's submitter
	ctl watch --count 1 --lines
	id=$(awk '$4 == "ctl-load" { print $2; exit }' "$W/out")
	sel="ctx=\"${id%.*}\",sub=\"${id#*.}\","
	echo "# the workload's submitter: ${id:-none}"
	if [ "${IOPA_ADMIN:-}" = none ] || [ -z "$id" ]; then
		for t in "sub limit=3" "sub limit=adapt min=2 max=2" \
			"sub as nobody" "sub of no submitter"; do
			skip "$t" "${id:+the fake cannot reach another process}${id:-no workload id}"
		done
	else
		ctl sub "$id" limit=3
		r1=$rc
		ctl metrics
		[ $r1 = 0 ] && grep -q "^iopa_submitter_limit{$sel.*} 3\$" "$W/out" &&
			grep -q "^iopa_submitter_info{$sel.*mode=\"fixed\"} 1\$" "$W/out"
		ok $? "sub $id limit=3: exit 0, its limit 3 and pinned (metrics)"
		ctl sub "$id" limit=adapt min=2 max=2
		r1=$rc
		ctl metrics
		[ $r1 = 0 ] && grep -q "^iopa_submitter_limit{$sel.*} 2\$" "$W/out" &&
			! grep -q "^iopa_submitter_info{$sel.*mode=\"fixed\"} 1\$" "$W/out"
		ok $? "sub $id limit=adapt min=2 max=2: adapting again, held at 2"
		as_nobody sub "$id" limit=1
		[ $rc = 1 ] && grep -q "needs root" "$W/err"
		ok $? "sub as nobody: exit 1, needs root"
		show "$W/err" 2
		ctl sub 999999.1 limit=1
		[ $rc = 1 ] && grep -q "no such open submitter" "$W/err"
		ok $? "sub 999999.1: exit 1, no such open submitter"
	fi
else
	ok 1 "metrics (no workload)"
	ok 1 "metrics --format=prometheus (no workload)"
	ok 1 "metrics --textfile (no workload)"
	for t in 1 2 3 4; do ok 1 "sub (no workload)"; done
fi
stop_load
# The shell back to the root cgroup, then the workload's removed.
[ -z "$cg_dir" ] || { echo $$ >$CG/cgroup.procs; rmdir "$cg_dir"; }
[ -z "$cg_mounted" ] || umount $CG

# --- 34-37: trace -------------------------------------------------------------------------
# Short cycles, a low start and room to grow: the iopa policy doubles
# the limit at the end of its first cycle with demand.
trace_run() {	# OPTIONS...: a limit change while a new workload starts
	: >"$T/trace"
	rm -f "$W/trace.rc"
	( timeout -s INT 40 "$IOPACTL" trace --count 1 "$@" </dev/null \
		>"$W/trace.out" 2>"$W/trace.err"
	  echo $? >"$W/trace.rc" ) &
	tsub=$!
	i=0
	# iopactl enables the event in a trace instance of its own.
	while ! grep -qs 1 "$T"/instances/iopactl-*/events/iopa/iopa_limit_change/enable &&
	      [ ! -e "$W/trace.rc" ] && [ $i -lt 100 ]; do
		usleep 100000
		i=$((i + 1))
	done
	start_load --seconds 40 --workers 4 --policy iopa
	i=0
	while [ ! -e "$W/trace.rc" ] && [ $i -lt 450 ]; do
		usleep 100000
		i=$((i + 1))
	done
	wait "$tsub"
	stop_load
	trc=$(cat "$W/trace.rc" 2>/dev/null)
	echo "# iopactl trace $*: exit ${trc:-?}"
	show "$W/trace.out" 3
	show "$W/trace.err" 5
}
if [ -n "$T" ]; then
	echo 200 >$S/fast_cycle_ms
	echo 200 >$S/normal_cycle_ms
	echo 400 >$S/hold_cycle_ms
	echo 1 >$S/init_limit
	echo 8 >$S/fast_cap
	echo 16 >$S/max_limit

	trace_run
	[ "$trc" = 0 ] && [ "$(wc -l <"$W/trace.out")" = 1 ] &&
		grep -Eq '^[0-9.]+ +ctx [0-9]+ sub [0-9]+ limit [0-9]+ -> [0-9]+ mode [a-z]+ r [0-9]+\.[0-9]{3} tput [0-9]+$' "$W/trace.out"
	ok $? "trace --count 1: one limit change, 'TIME ctx C sub S limit A -> B mode M r R tput T'"
	[ "$(cat "$EV")" = "$old_ev" ] && ! ls -d "$T"/instances/iopactl-* >/dev/null 2>&1
	ok $? "trace: the global event switch untouched ($old_ev), its own trace instance removed"

	trace_run --json
	[ "$trc" = 0 ] && [ "$(wc -l <"$W/trace.out")" = 1 ] &&
		grep -Eq '^\{"time": [0-9.]+, "ctx": [0-9]+, "sub": [0-9]+, "old_limit": [0-9]+, "new_limit": [0-9]+, "mode": "[a-z]+", "r_permille": [0-9]+, "tput": [0-9]+, "task": ".*"\}$' "$W/trace.out"
	ok $? "trace --count 1 --json: one JSON object per line"
	[ "$(cat "$EV")" = "$old_ev" ] && ! ls -d "$T"/instances/iopactl-* >/dev/null 2>&1
	ok $? "trace --json: the global event switch untouched, the instance removed"
else
	skip "trace --count 1" "no tracefs with events/iopa/iopa_limit_change"
	skip "trace: enable restored" "no tracefs"
	skip "trace --count 1 --json" "no tracefs"
	skip "trace --json: enable restored" "no tracefs"
fi

# --- 38: everything back ----------------------------------------------------------------------
restore
bad=
for t in $TUNABLES; do
	eval "v=\$old_$t"
	[ "$(cat "$S/$t")" = "$v" ] || bad="$bad $t"
done
[ -z "$bad" ] && [ "$(stat -c %a "$NODE" 2>/dev/null)" = "$old_node" ]
ok $? "every tunable and the mode of /dev/iopa as before${bad:+ (differ:$bad)}"

[ $n = $PLAN ] || echo "# planned $PLAN tests, ran $n"
echo "# $((n - failed)) passed, $failed failed"
[ $failed = 0 ] && [ $n = $PLAN ]
