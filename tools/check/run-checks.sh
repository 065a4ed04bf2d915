#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iopa's test suite (`make check`, .ci/run): host checks, then the kselftests
# in a QEMU guest.  Prints a TAP-ish report; the last line is exactly
# "N passed, M failed", counting each host check as one test and each
# kselftest "ok"/"not ok" line of the guest as one (a program that crashed,
# hung or was never run counts as failed).  Exit status 0 only if M = 0.
#
#   tools/check/run-checks.sh [--list] [CHECK...]      (default: all checks)
#
# Logs: build/check/<check>.log (the tail is shown on failure); the guests'
# consoles: build/check/guest-selftests*.console.log.
# Environment: GUEST_TIMEOUT (seconds for each whole guest run, default 1200;
# each selftest program has its own limit, "timeout=" in selftests/iopa/settings).
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP" || exit 2
LOGDIR=$TOP/build/check
GUEST=$TOP/tools/guest
KSRC=${IOPA_CACHE:-$TOP/.cache}/ksrc	# tools/guest/fetch-ksrc.sh's
GUEST_TIMEOUT=${GUEST_TIMEOUT:-1200}

ALL="setup kbuild-6.12 kbuild-6.1 kernel-layers checkpatch kernel-doc docs ctl-sim uapi-c uapi-c++
	ioctl-number userspace-build libiopa-host rust-host iopactl-host knees-tool bench-report install dkms
	guest-selftests metrics-guest guest-bpftrace
	guest-selftests-6.1 guest-libiopa guest-libiopa-6.1 guest-rust guest-hdd-model"

# Not in the default set: `make check-debug` (the kernel with KASAN,
# lockdep, kmemleak...: tools/guest/build-debug-kernel.sh).
DEBUG_CHECKS="kbuild-debug guest-selftests-debug"

if [ "${1:-}" = --list ]; then
	echo $ALL
	exit 0
fi
CHECKS=${*:-$ALL}
for c in $CHECKS; do
	case " $(echo $ALL $DEBUG_CHECKS) " in
	*" $c "*) ;;
	*) echo "run-checks: unknown check '$c' (have: $(echo $ALL $DEBUG_CHECKS))" >&2; exit 2 ;;
	esac
done

# One run at a time per checkout (they share build/check and the scratch
# builds).
mkdir -p "$TOP/build"
exec 8>"$TOP/build/.check.lock"
if ! flock -n 8; then
	echo "# waiting for another run-checks.sh in this checkout" >&2
	flock 8
fi
rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"

n=0		# report lines
passed=0	# tests passed / failed (host checks + guest kselftest results)
failed=0

# The kernel sources the source checks look at (not kbuild's *.mod.c).
kfiles() {
	local f
	for f in kernel/*.c kernel/*.h; do
		case "$f" in *.mod.c) ;; *) [ ! -f "$f" ] || echo "$f" ;; esac
	done
	echo uapi/linux/iopa.h
}

# --- the checks: each writes to stdout/stderr (its log), returns 0 on pass --

check_setup() {
	"$GUEST/deps.sh" all pkg &&
	"$GUEST/fetch-kernel.sh" 6.12 &&
	"$GUEST/fetch-kernel.sh" 6.1 &&
	"$GUEST/fetch-ksrc.sh"
}

# RST parses; every sysfs file has its ABI block; every test the bad-input
# table names exists.
check_docs() {
	"$TOP/tools/check/docs.sh" && "$TOP/tools/check/bad-input.sh"
}

# The limit controller on the host: unit tests (including the simulator's
# done criteria) and one simulator run.
check_ctl_sim() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$TOP/tools/sim" \
		KSFT_INC="$KSRC/tools/testing/selftests" test sim
}

# libiopa and iopa-sum on the host (no module needed): SQE helpers, error
# paths, header as C/C++, exported symbols vs the map, man pages, a staged
# install used through pkg-config; iopa-sum's own host checks.
check_libiopa_host() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$TOP/liburing-glue" \
		KSFT_INC="$KSRC/tools/testing/selftests" test &&
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$TOP/tools/iopa-sum" check
}

# tools/bench/report.py against canned guest logs: the cell and order lines,
# the CSVs, the plots and the README it makes.
# make install and uninstall into a scratch DESTDIR; dkms add, build,
# install and remove in a scratch DKMS tree against Debian 6.12 headers.
check_install() {
	"$TOP/tools/check/install.sh"
}

check_dkms() {
	"$TOP/tools/check/dkms.sh"
}

# iopa-knees (save and restore of the devices' knees across boots)
# against a stand-in knees file and /dev/disk tree.
check_knees_tool() {
	"$TOP/tools/udev/test-iopa-knees.sh"
}

# iopactl's host tests: parsing, JSON, the watch layout, and its guest
# check against an LD_PRELOAD stand-in for the module.
check_iopactl_host() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$TOP/tools/iopactl" test
}

# The `iopactl metrics` outputs of guest-selftests' iopactl step (real
# module, a workload in a cgroup of its own), through prometheus_client's
# parsers on the host: the guest has no python.
check_metrics_guest() {
	"$TOP/tools/iopactl/metrics-guest-check.sh" \
		"$LOGDIR/guest-selftests.console.log"
}

check_bench_report() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$TOP/tools/bench" test
}

# libiopa's tests and iopa-sum's 10,000-file check against sha256sum, in a
# guest.
run_guest_libiopa() {	# SERIES CHECK-NAME
	KSFT_INC=$KSRC/tools/testing/selftests \
	"$TOP/liburing-glue/tests/run-guest-tests.sh" --series "$1" \
		--timeout "$GUEST_TIMEOUT" --log "$LOGDIR/$2.console.log" \
		--result "$LOGDIR/$2.result"
}
check_guest_libiopa() { run_guest_libiopa 6.12 guest-libiopa; }

# The Rust crate (liburing-glue/rust/): cargo test on the host (no module:
# its host tests; the guest's say they skip), the tree hasher against
# find | sort | xargs sha256sum, and with the module in the guest.
check_rust_host() {
	command -v cargo >/dev/null || { echo "no cargo: install Rust (rustup or Debian's cargo)"; return 1; }
	(cd "$TOP/liburing-glue/rust" && cargo test 2>&1) || return 1
	local t
	t=$(mktemp -d "${TMPDIR:-/tmp}/iopa-rs.XXXXXX") || return 1
	"$TOP/tools/iopa-sum/mktree" "$t/tree" 500 >/dev/null &&
	(cd "$TOP/liburing-glue/rust" && cargo run -q --example tree_hash -- "$t/tree") \
		>"$t/out" 2>"$t/err" &&
	find "$t/tree" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum -- >"$t/ref" &&
	cmp "$t/ref" "$t/out"
	local rc=$?
	[ $rc = 0 ] && echo "tree_hash: $(wc -l <"$t/out") lines, byte for byte as find | sort | xargs sha256sum"
	rm -rf "$t"
	return $rc
}
check_guest_rust() {
	"$TOP/liburing-glue/rust/guest-test.sh" --timeout "$GUEST_TIMEOUT" \
		--log "$LOGDIR/guest-rust.console.log" --result "$LOGDIR/guest-rust.result"
}

# The HDD model of the benchmarks (tools/hdd-model), built with W=1 against
# 6.12, behaves like a 7200 rpm disk under fio (fio-check.sh's TAP).
check_guest_hdd_model() {
	local out=$LOGDIR/guest-hdd-model.build.log
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$TOP/tools/hdd-model" \
		>"$out" 2>&1 || { cat "$out"; return 1; }
	if grep -i 'warning:' "$out"; then
		echo "W=1 build of iopa_hdd has warnings (above)"
		return 1
	fi
	"$GUEST/run-guest.sh" --series 6.12 --timeout "$GUEST_TIMEOUT" \
		--log "$LOGDIR/guest-hdd-model.console.log" \
		--result "$LOGDIR/guest-hdd-model.result" \
		"$TOP/tools/hdd-model/fio-check.sh" "$TOP/tools/hdd-model/iopa_hdd.ko"
}
check_guest_libiopa_6_1() { run_guest_libiopa 6.1 guest-libiopa-6.1; }

# The bpftrace recipe of Documentation/iopa.rst on a workload, in a guest
# that carries bpftrace (and its LLVM: 1 GiB of memory).
check_guest_bpftrace() {
	local ko

	ko=$("$GUEST/build-module.sh" 6.12) || return 1
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -C "$TOP/tools/iopactl" \
		ctl-load || return 1
	GUEST_BINS="/usr/bin/fio /usr/sbin/mke2fs /usr/bin/udevadm /usr/bin/trace-cmd /usr/bin/bpftrace" \
	"$GUEST/run-guest.sh" --series 6.12 --ko "$ko" --mem 1024 \
		--timeout "$GUEST_TIMEOUT" --log "$LOGDIR/guest-bpftrace.console.log" \
		--result "$LOGDIR/guest-bpftrace.result" \
		"$TOP/tools/check/guest-bpftrace.sh" tools/iopactl/ctl-load
}

# W=1 build against the Debian headers, zero warnings.
check_kbuild() {
	"$GUEST/build-module.sh" "$1" || return 1
	if grep -niE 'warning:' "$TOP/build/kbuild/$1/build.log"; then
		echo "W=1 build against $1 has warnings (above)"
		return 1
	fi
}
check_kbuild_6_12() { check_kbuild 6.12; }
check_kbuild_6_1() { check_kbuild 6.1; }
check_kbuild_debug() { check_kbuild debug; }

# The files of the module use each other in layers, without a cycle
# (the map in kernel/main.c), on the objects of the 6.12 build; the
# checker's own self-test first, so that it is seen to fail a cycle.
check_kernel_layers() {
	python3 "$TOP/tools/check/kernel-layers.py" --self-test &&
	"$GUEST/build-module.sh" 6.12 >/dev/null &&
	python3 "$TOP/tools/check/kernel-layers.py" "$TOP/build/kbuild/6.12/kernel"
}

check_checkpatch() {
	local f out bad=0 t
	for f in $(kfiles); do
		out=$(perl "$KSRC/scripts/checkpatch.pl" --strict --no-tree \
			--show-types --color=never -f "$f" 2>&1)
		echo "$out"
		t=$(echo "$out" | sed -n 's/^total: \([0-9]*\) errors, \([0-9]*\) warnings, \([0-9]*\) checks.*/\1 \2 \3/p')
		case "$t" in
		"0 0 0") ;;
		"") echo "checkpatch gave no verdict for $f"; bad=1 ;;
		*) bad=1 ;;
		esac
	done
	return $bad
}

check_kernel_doc() {
	local out
	# shellcheck disable=SC2046
	out=$(perl "$KSRC/scripts/kernel-doc" -none $(kfiles) 2>&1)
	[ -z "$out" ] || { echo "$out"; return 1; }
	echo "kernel-doc: no warnings in $(kfiles | tr '\n' ' ')"
}

# The uapi header on its own, as the kernel's usr/include compile test
# (-std=c90) and as C and C++ with every warning an error.
check_uapi_c() {
	gcc -Wall -Wextra -Werror -fsyntax-only -x c uapi/linux/iopa.h &&
	gcc -std=c90 -Wall -Wextra -Werror -fsyntax-only -x c uapi/linux/iopa.h &&
	echo "uapi/linux/iopa.h compiles as C (gnu17, c90)"
}
check_uapi_cxx() {
	g++ -Wall -Wextra -Werror -fsyntax-only -x c++ uapi/linux/iopa.h &&
	echo "uapi/linux/iopa.h compiles as C++"
}

check_ioctl_number() {
	"$TOP/tools/check/ioctl-number.sh"
}

# The selftests and the demo tool, for the guest (host compiler, host libs);
# -k: one program that does not build does not hold back the others.
check_userspace_build() {
	env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -k -C "$TOP" selftests tools
}

# Boot the guest, insmod, run every selftest, rmmod.  The console goes to
# the terminal as it comes; the TAP in it is counted afterwards.
check_guest() {	# SERIES CHECK-NAME
	local ko p stale=""
	# Normally built by userspace-build already; a failure shows there.  If
	# the build fails, leave out the programs older than their sources (a
	# stale binary must not pass): the guest reports them as not built.
	if ! env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
		make -k -s -C "$TOP" selftests tools; then
		for p in $("$GUEST/list-selftests.sh"); do
			p=selftests/iopa/$p
			[ -f "$p.c" ] || continue
			if [ -n "$(find "$p.c" selftests/iopa/*.h uapi/linux/*.h \
				   -newer "$p" 2>/dev/null)" ] || [ ! -f "$p" ]; then
				stale="$stale $p"
			fi
		done
		echo "not shipping stale or missing programs:${stale:- none}"
	fi
	ko=$("$GUEST/build-module.sh" "$1") || return 1
	IOPA_EXCLUDE=$stale "$GUEST/run-guest.sh" --series "$1" --ko "$ko" \
		${GUEST_MEM:+--mem "$GUEST_MEM"} \
		--timeout "$GUEST_TIMEOUT" --log "$LOGDIR/$2.console.log" \
		--result "$LOGDIR/$2.result" "$TOP/tools/check/guest-selftests.sh"
}
check_guest_selftests() { check_guest 6.12 guest-selftests; }
check_guest_selftests_6_1() { check_guest 6.1 guest-selftests-6.1; }
# KASAN needs memory: shadow (1/8) and redzones.
check_guest_selftests_debug() {
	GUEST_MEM=${GUEST_MEM:-2048} check_guest debug guest-selftests-debug
}

# --- reporting ---------------------------------------------------------------

report() {	# OK(0/1) NAME [NOTE]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2${3:+ # $3}"
	else
		echo "not ok $n $2${3:+ # $3}"
	fi
}

tail_log() {
	echo "#   --- last lines of $1 ---"
	tail -n "${2:-25}" "$1" | sed 's/^/#   /'
}

# Count the kselftest TAP of a guest console, program by program.  Prints
# "name<TAB>passed<TAB>failed<TAB>skipped<TAB>note" per program.
count_guest_tap() {	# CONSOLE-LOG [EXPECTED-STEPS]
	local expect=${2:-}
	[ -n "$expect" ] ||
		expect="insmod $("$GUEST/list-selftests.sh" | tr '\n' ' ') rmmod"
	awk -v expect="$expect" -v OFS='\t' '
	/^IOPA-TEST-BEGIN / {
		cur = $2; seen[cur] = 1; order[++no] = cur
		plan[cur] = 0; ok[cur] = 0; nok[cur] = 0; skip[cur] = 0
		next
	}
	/^IOPA-TEST-END / {
		rc[$2] = substr($3, 4); ended[$2] = 1; cur = ""
		next
	}
	cur == "" { next }
	/^1\.\.[0-9]+/ { split($1, a, "\\.\\."); plan[cur] = a[2] + 0; next }
	/^ok [0-9]+/ { ok[cur]++; if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) skip[cur]++; next }
	/^not ok [0-9]+/ { nok[cur]++; bad[cur] = bad[cur] "; " $0; next }
	END {
		for (i = 1; i <= no; i++) {
			p = order[i]; pass = ok[p]; fail = nok[p]
			got = pass + fail; note = substr(bad[p], 3)
			if (plan[p] > got) {
				fail += plan[p] - got
				note = note (note ? "; " : "") (plan[p] - got) " of " plan[p] " results missing"
			}
			if (!ended[p]) {
				if (got == 0 && plan[p] == 0) fail++
				note = note (note ? "; " : "") "did not finish (crash, hang or timeout)"
			} else if (rc[p] != 0 && rc[p] != 4) {
				if (fail == 0)
					fail++
				note = note (note ? "; " : "") "exit status " rc[p]
			} else if (got == 0 && plan[p] == 0 && rc[p] == 0) {
				pass++		# a program without TAP that succeeded
			}
			print p, pass, fail, skip[p], note
		}
		m = split(expect, e, " ")
		for (i = 1; i <= m; i++)
			if (!(e[i] in seen))
				print e[i], 0, 1, 0, "never ran"
	}' "$1" 2>/dev/null
}

echo "TAP version 13"
echo "# iopa checks: $(echo $CHECKS)"
t_all=$(date +%s)
for c in $CHECKS; do
	fn=check_$(echo "$c" | sed 's/[-.]/_/g; s/+/x/g')
	log=$LOGDIR/$c.log
	echo "# --- $c"
	t0=$(date +%s)
	case "$c" in guest-*) guest=1 ;; *) guest=0 ;; esac
	if [ $guest = 1 ]; then
		# Streamed live (stdout is the CI log) as TAP comments, the
		# kselftest way of nesting; kept in the log as is.
		$fn 2>&1 | tee "$log" | sed -u 's/^/# /'
		rc=${PIPESTATUS[0]}
	else
		$fn >"$log" 2>&1
		rc=$?
	fi
	dt=$(( $(date +%s) - t0 ))s
	if [ $guest = 1 ]; then
		# The run itself (booted, finished, kernel log clean) is one test;
		# every TAP result in it is one more.
		TIMED_OUT=1 MARKER=0 PROBLEMS=0
		# shellcheck disable=SC1090
		[ ! -f "$LOGDIR/$c.result" ] || . "$LOGDIR/$c.result"
		tapfail=0
		case "$c" in
		guest-libiopa*) steps="insmod libiopa_wrappers libiopa_pool libiopa_uring examples iopa-sum-check iopa-sum-dropin rmmod" ;;
		guest-rust) steps="rust-guest" ;;
		guest-hdd-model) steps="hdd-model" ;;
		guest-bpftrace) steps="bpftrace" ;;
		guest-selftests-debug) steps="insmod $("$GUEST/list-selftests.sh" |
			tr '\n' ' ')iopactl trace-cmd rmmod udev-rule kmemleak" ;;
		*) steps="" ;;
		esac
		while IFS=$'\t' read -r name p f s note; do
			passed=$((passed + p))
			failed=$((failed + f))
			tapfail=$((tapfail + f))
			[ "$s" != 0 ] || s=
			report "$([ "$f" = 0 ] && echo 0 || echo 1)" "$c: $name" \
				"$p passed${s:+ ($s skipped)}, $f failed${note:+: $note}"
		done < <(count_guest_tap "$LOGDIR/$c.console.log" "$steps")
		why=""
		[ "$TIMED_OUT" = 0 ] || why="timed out after ${GUEST_TIMEOUT}s"
		[ "$MARKER" = 1 ] || why="${why:+$why; }guest did not finish"
		[ "$PROBLEMS" = 0 ] || why="${why:+$why; }$PROBLEMS kernel warning/BUG/oops lines"
		if [ -z "$why" ] && [ "$rc" != 0 ] && [ "$tapfail" = 0 ]; then
			why="guest run failed (status $rc)"
		fi
		if [ -z "$why" ]; then
			passed=$((passed + 1))
			report 0 "$c" "$dt, kernel log clean"
		else
			failed=$((failed + 1))
			report 1 "$c" "$dt, $why"
			# run-guest.sh's verdict, with the kernel's problem lines.
			tail_log "$log" 25
		fi
	elif [ "$rc" = 0 ]; then
		passed=$((passed + 1))
		report 0 "$c" "$dt"
	else
		failed=$((failed + 1))
		report 1 "$c" "$dt"
		tail_log "$log"
	fi
done
echo "1..$n"
echo "# total time $(( $(date +%s) - t_all ))s; logs in build/check/"
echo "$passed passed, $failed failed"
# `make check-debug`: the issue's one-line verdict, after the count.
case " $CHECKS " in
*" guest-selftests-debug "*)
	PROBLEMS=0
	# shellcheck disable=SC1091
	[ ! -f "$LOGDIR/guest-selftests-debug.result" ] ||
		. "$LOGDIR/guest-selftests-debug.result"
	leaks=$(sed -n 's/^# kmemleak: \([0-9]*\) unreferenced.*/\1/p' \
		"$LOGDIR/guest-selftests-debug.console.log" 2>/dev/null | tail -1)
	echo "hardening check-debug result=$([ "$failed" = 0 ] && echo pass ||
		echo fail) count=$passed reports=$((PROBLEMS + ${leaks:-0}))"
	;;
esac
[ "$failed" = 0 ]
