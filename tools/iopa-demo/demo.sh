#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The iopa demo, run INSIDE the QEMU guest (busybox sh, as root) by
# `make demo`.  It needs a spare disk it may wipe (default /dev/vda).
#
#  1. load iopa.ko unless /dev/iopa exists already;
#  2. make a file system on the disk (mkfs.ext4 if the guest has it, else
#     busybox mke2fs: ext2, mounted by the ext4 driver) and write a file
#     set on it with `iopa-demo gen`;
#  3. drop the page cache and checksum every file through /dev/iopa with
#     `iopa-demo run`, once per in-flight limit in $DEMO_LIMITS (0: the
#     kernel adapts the limit to the throughput it measures, with the
#     module's default settings: its default policy and cycles), each
#     file dropped from the page cache after its job so that every pass
#     reads the disk; every run, adaptive or fixed, reads the set
#     $DEMO_PASSES times (runs of the same length: the adaptive run's
#     start-up counts, as it does for a user), in $DEMO_ROUNDS rounds,
#     the limits' order rotating each round (interleaved);
#  4. check that every run (every pass) printed the checksum `gen`
#     predicted, and that a single-threaded pass without iopa agrees
#     (`verify: ok`);
#  5. iopa-sum (libiopa's worker pool, sha256) over the set, adaptive,
#     compared with sha256sum, and at each fixed limit of $DEMO_SUM_LIMITS,
#     in $DEMO_ROUNDS rounds the same way;
#  6. print, for each tool, the median over the rounds of the adaptive
#     run's MB/s as a percentage of that, in its round, of the best fixed
#     limit (the one whose median over the rounds is highest: vs_best):
#       demo: adaptive pct_of_best_fixed=F rounds=R  (iopa-demo, DEMO_LIMITS)
#       demo: iopa-sum pct_of_best_fixed=F rounds=R  (iopa-sum, DEMO_SUM_LIMITS)
#     with the range, best_fixed=N, and round_best_pct=M: against each
#     round's best fixed run, whatever its limit (the figure before
#     2026-11-28; it leans against the adaptive run); figures to read,
#     not to assert: a low one does not fail the demo.
#
# Exits non-zero on any failure (a wrong checksum, a limit exceeded, a
# tool that fails).  Every setting below can be overridden from the
# environment (e.g. DEMO_NFILES=200 sh demo.sh).
set -u

# The guest runner (tools/guest/) puts the repository's files under /iopa
# and exports IOPA_KO and IOPA_DISK; the defaults follow it.
IOPA_KO=${IOPA_KO:-/iopa/kernel/iopa.ko}	# the module, if not loaded yet
if [ -z "${IOPA_DEMO:-}" ]; then		# the demo binary
	IOPA_DEMO=/iopa/tools/iopa-demo/iopa-demo
	command -v iopa-demo >/dev/null 2>&1 && IOPA_DEMO=iopa-demo
fi
DEMO_DISK=${DEMO_DISK:-${IOPA_DISK:-/dev/vda}}	# wiped!
DEMO_MNT=${DEMO_MNT:-/mnt/iopa-demo}
DEMO_NFILES=${DEMO_NFILES:-2000}
DEMO_SIZE=${DEMO_SIZE:-64k}
DEMO_WORKERS=${DEMO_WORKERS:-32}
DEMO_LIMITS=${DEMO_LIMITS:-1 4 8 16 0}
# Passes over the set of every run (~1.5 s a pass in the 2-vCPU TCG
# guest at a good limit), and rounds of all the runs.
DEMO_PASSES=${DEMO_PASSES:-3}
DEMO_ROUNDS=${DEMO_ROUNDS:-3}
# iopa-sum at these fixed limits too ("best": the best limit of the
# iopa-demo runs; empty: none, and no iopa-sum percentage).
DEMO_SUM_LIMITS=${DEMO_SUM_LIMITS-1 4 8 16}
# The controller's cycles stay the module's unless these are set (ms):
# written to sysfs before the first run, restored at the end.
DEMO_FAST_MS=${DEMO_FAST_MS:-}
DEMO_NORMAL_MS=${DEMO_NORMAL_MS:-}
SYSFS=/sys/class/misc/iopa

say() { echo "demo: $*"; }
fail() {
	echo "demo: FAILED: $*" >&2
	cleanup
	exit 1
}

mounted=0
saved=
cleanup() {
	for kv in $saved; do echo "${kv#*=}" >"$SYSFS/${kv%%=*}"; done
	saved=
	if [ "$mounted" = 1 ]; then
		cd /
		umount "$DEMO_MNT" && mounted=0
	fi
}

# pct A B: A as a percentage of B, one decimal ("nan" if B is not > 0).
pct() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.1f", 100 * a / b; else print "nan" }'; }

# median_range V...: "MEDIAN (range MIN..MAX)" of numbers.
median_range() {
	echo "$@" | tr ' ' '\n' | grep -v '^$' | sort -n | awk '
		{ v[NR] = $1 }
		END { if (!NR) { print "nan"; exit }
		      m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		      printf "%.1f (range %.1f..%.1f)", m, v[1], v[NR] }'
}

# vs_best FILE KEY: of the runs in FILE ("ROUND LIMIT MB/s" lines), the
# run at LIMIT KEY (the adaptive one) of each round against that round's
# run at the best fixed limit: the limit whose median over the rounds is
# highest, as a user picks one limit for every run.  Prints "MEDIAN
# (range MIN..MAX) best_fixed=N round_best_pct=M", M the median against
# each round's best fixed run instead: on a plateau of limits that read
# alike, that best is the luckiest run of the round, not a limit.
vs_best() {
	awk -v key="$2" '
		function med(v, n,  i, j, x) {	# v[1..n], sorted in place
			for (i = 2; i <= n; i++)
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
					x = v[j]; v[j] = v[j - 1]; v[j - 1] = x
				}
			return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}
		$2 == key { a[$1] = $3 + 0; next }
		{ t[$1 "," $2] = $3 + 0; lim[$2] = 1; rnd[$1] = 1 }
		END {
			bm = -1
			for (l in lim) {
				split("", v); n = 0
				for (r in rnd)
					if ((r "," l) in t)
						v[++n] = t[r "," l]
				if (n && (m = med(v, n)) > bm) { bm = m; bl = l }
			}
			split("", v); split("", w); n = 0
			for (r in a) {
				if (!((r "," bl) in t) || t[r "," bl] <= 0)
					continue
				v[++n] = 100 * a[r] / t[r "," bl]
				mx = 0
				for (l in lim)
					if ((r "," l) in t && t[r "," l] > mx)
						mx = t[r "," l]
				w[n] = 100 * a[r] / mx
			}
			if (!n) { print "nan"; exit }
			m = med(v, n); lo = v[1]; hi = v[n]
			printf "%.1f (range %.1f..%.1f) best_fixed=%s round_best_pct=%.1f\n",
				m, lo, hi, bl, med(w, n)
		}' "$1"
}

# rotate N WORD...: the words, rotated left N times (interleaving).
rotate() {
	n=$1
	shift
	while [ "$n" -gt 0 ]; do
		first=$1
		shift
		set -- "$@" "$first"
		n=$((n - 1))
	done
	echo "$@"
}


# VALUE of the first " NAME=VALUE" in the text $2.
field() { echo "$2" | sed -n "s/.* $1=\([^ ]*\).*/\1/p" | head -n 1; }

drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches || fail "cannot drop the page cache"
}

t_start=$(date +%s)
say "write $DEMO_NFILES files of $DEMO_SIZE to a fresh disk, then checksum" \
	"every file through /dev/iopa ($DEMO_WORKERS worker threads) once per in-flight" \
	"limit in '$DEMO_LIMITS', and check the results"

# --- 1. the module -------------------------------------------------------
command -v "$IOPA_DEMO" >/dev/null 2>&1 || fail "$IOPA_DEMO not found (PATH=$PATH)"
if [ ! -e /dev/iopa ]; then
	[ -f "$IOPA_KO" ] || fail "/dev/iopa is absent and $IOPA_KO does not exist"
	insmod "$IOPA_KO" || fail "insmod $IOPA_KO"
	# devtmpfs creates the node; without devtmpfs make it from sysfs.
	if [ ! -e /dev/iopa ] && [ -r /sys/class/misc/iopa/dev ]; then
		devno=$(cat /sys/class/misc/iopa/dev)
		mknod /dev/iopa c "${devno%%:*}" "${devno##*:}"
	fi
	[ -e /dev/iopa ] || fail "insmod worked but /dev/iopa did not appear"
	say "loaded $IOPA_KO"
fi
say "iopa: max_jobs=$(cat $SYSFS/max_jobs 2>/dev/null || echo '?')" \
	"max_submitters=$(cat $SYSFS/max_submitters 2>/dev/null || echo '?')" \
	"max_workers=$(cat $SYSFS/max_workers 2>/dev/null || echo '?')," \
	"$(grep -c ^processor /proc/cpuinfo) guest CPU(s)"
for kv in ${DEMO_FAST_MS:+fast_cycle_ms=$DEMO_FAST_MS} \
	${DEMO_NORMAL_MS:+normal_cycle_ms=$DEMO_NORMAL_MS}; do
	saved="$saved ${kv%%=*}=$(cat "$SYSFS/${kv%%=*}")"
	echo "${kv#*=}" >"$SYSFS/${kv%%=*}" || fail "cannot write $kv to $SYSFS"
done
say "controller: default_policy=$(cat $SYSFS/default_policy 2>/dev/null || echo '?')" \
	"fast_cycle_ms=$(cat $SYSFS/fast_cycle_ms 2>/dev/null || echo '?')" \
	"normal_cycle_ms=$(cat $SYSFS/normal_cycle_ms 2>/dev/null || echo '?')" \
	"max_limit=$(cat $SYSFS/max_limit 2>/dev/null || echo '?')" \
	"(${saved:+changed for the demo:$saved; }otherwise the module's defaults)"

# --- 2. a file system and a file set --------------------------------------
[ -b "$DEMO_DISK" ] || fail "no block device $DEMO_DISK (the runner should attach a scratch disk)"
if command -v mkfs.ext4 >/dev/null 2>&1; then
	# Inode tables and journal zeroed now, not by ext4lazyinit during
	# the runs (it would take disk time from the first of them).
	mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$DEMO_DISK" \
		>/dev/null || fail "mkfs.ext4 $DEMO_DISK"
	fstype=ext4
else
	# busybox mke2fs makes ext2; the built-in ext4 driver mounts it.
	mke2fs -F "$DEMO_DISK" >/dev/null || fail "mke2fs $DEMO_DISK"
	fstype=ext2
fi
mkdir -p "$DEMO_MNT"
mount -t ext4 "$DEMO_DISK" "$DEMO_MNT" 2>/dev/null ||
	mount -t "$fstype" "$DEMO_DISK" "$DEMO_MNT" ||
	fail "mount $DEMO_DISK on $DEMO_MNT"
mounted=1
mib=$(($(cat "/sys/class/block/${DEMO_DISK##*/}/size") / 2048))
say "made $fstype on $DEMO_DISK ($mib MiB), mounted on $DEMO_MNT"

# Room for the file set (plus 10% for metadata)?
case "$DEMO_SIZE" in
*[kK]) kib=${DEMO_SIZE%?} ;;
*[mM]) kib=$((${DEMO_SIZE%?} * 1024)) ;;
*[gG]) kib=$((${DEMO_SIZE%?} * 1048576)) ;;
*) kib=$((DEMO_SIZE / 1024)) ;;
esac
need=$((DEMO_NFILES * kib * 11 / 10))
avail=$(df -k "$DEMO_MNT" | awk 'NR == 2 { print $4 }')
[ "$avail" -ge "$need" ] ||
	fail "$DEMO_DISK has $avail KiB free, the file set needs about $need KiB (give the guest a bigger disk)"

say "writing $DEMO_NFILES files x $DEMO_SIZE ..."
out=$("$IOPA_DEMO" gen "$DEMO_MNT/set" "$DEMO_NFILES" "$DEMO_SIZE") ||
	fail "iopa-demo gen"
echo "$out"
expect=$(field checksum "$out")
[ -n "$expect" ] || fail "iopa-demo gen printed no checksum"

# --- 3. the runs ----------------------------------------------------------
summary=""
adapt_pcts=""	# per round: the adaptive run against the round's best fixed
DEMO_RUNS=/tmp/iopa-demo.runs	# every run: "ROUND LIMIT MB/s" (vs_best)
: >"$DEMO_RUNS" || fail "$DEMO_RUNS"
round=1
while [ "$round" -le "$DEMO_ROUNDS" ]; do
	best_fixed=0	# MB/s, this round
	best_limit=
	adapt_mbps=
	# shellcheck disable=SC2086
	for limit in $(rotate $((round - 1)) $DEMO_LIMITS); do
		drop_caches
		echo
		if [ "$limit" = 0 ]; then
			# What the module remembers of the devices (knees).
			knees=$(tr '\n' ';' <"$SYSFS/knees" 2>/dev/null)
			say "round $round: devices' knees known: ${knees:-none}"
			say "round $round: $DEMO_WORKERS worker threads, adaptive in-flight limit (the" \
				"kernel measures the block-layer throughput each cycle and moves the" \
				"limit; policy $(cat $SYSFS/default_policy), cycles of" \
				"$(cat $SYSFS/normal_cycle_ms) ms normally), the set read $DEMO_PASSES" \
				"time(s) over, page cache dropped"
		else
			say "round $round: $DEMO_WORKERS worker threads, in-flight limit $limit (the" \
				"kernel lets at most $limit of the submitter's jobs run at once), the set" \
				"read $DEMO_PASSES time(s) over, page cache dropped"
		fi
		extra=""
		[ "$round" != "$DEMO_ROUNDS" ] || [ "$limit" != 0 ] || extra=--check
		# shellcheck disable=SC2086
		out=$("$IOPA_DEMO" run -w "$DEMO_WORKERS" -l "$limit" -p "$DEMO_PASSES" \
			--drop $extra "$DEMO_MNT/set")
		rc=$?
		echo "$out"
		[ $rc = 0 ] || fail "iopa-demo run -l $limit exited $rc"
		got=$(field checksum "$out")
		[ "$got" = "$expect" ] ||
			fail "run -l $limit: checksum $got, gen wrote $expect"
		if [ -n "$extra" ]; then
			echo "$out" | grep -q '^verify: ok' || fail "run -l $limit: no 'verify: ok'"
		fi
		mbps=$(field mbytes_per_s "$out")
		echo "$round $limit $mbps" >>"$DEMO_RUNS"
		name="limit $limit"
		if [ "$limit" = 0 ]; then
			adapt_mbps=$mbps
			name="adaptive (limit ranged $(echo "$out" |
				sed -n 's/.*ranged \([0-9.]*\), ended at \([0-9]*\).*/\1, final \2/p'))"
		elif awk -v a="$mbps" -v b="$best_fixed" 'BEGIN { exit !(a > b) }'; then
			best_fixed=$mbps
			best_limit=$limit
		fi
		line="round $round, $name: $(field jobs_per_s "$out") files/s,"
		line="$line $mbps MB/s in $(field seconds "$out") s ($DEMO_PASSES pass(es));"
		line="$line most jobs seen running at once: $(field max_running "$out")"
		summary="$summary
  $line"
	done
	if [ -n "$adapt_mbps" ] && [ -n "$best_limit" ]; then
		p=$(pct "$adapt_mbps" "$best_fixed")
		adapt_pcts="$adapt_pcts $p"
		summary="$summary
  round $round: adaptive $p% of the best fixed (limit $best_limit)"
	fi
	round=$((round + 1))
done

# --- 5. iopa-sum: whole-tree checksums with kernel-chosen parallelism -----
# iopa-sum -v ends with "... X MiB in S s (... files/s, M MiB/s); ...".
sum_mibps() { sed -n 's/.* MiB in [0-9.]* s ([0-9]* files\/s, \([0-9.]*\) MiB\/s).*/\1/p' "$1" | tail -n 1; }
IOPA_SUM=${IOPA_SUM:-/iopa/tools/iopa-sum/iopa-sum}
sum_pcts=""
DEMO_SUM_RUNS=/tmp/iopa-sum.runs	# every run: "ROUND LIMIT|adaptive MiB/s"
: >"$DEMO_SUM_RUNS" || fail "$DEMO_SUM_RUNS"
if [ -x "$IOPA_SUM" ]; then
	find "$DEMO_MNT/set" -type f | LC_ALL=C sort | xargs sha256sum >/tmp/sha256sum.out ||
		fail "sha256sum"
	echo
	say "iopa-sum: sha256 of every file under $DEMO_MNT/set through libiopa's worker" \
		"pool, adaptive and at the limits '$DEMO_SUM_LIMITS', compared with" \
		"sha256sum, in $DEMO_ROUNDS rounds"
	round=1
	while [ "$round" -le "$DEMO_ROUNDS" ]; do
		sum_adapt=
		sum_best=0
		sum_best_limit=
		# shellcheck disable=SC2086
		for l in $(rotate $((round - 1)) adaptive $DEMO_SUM_LIMITS); do
			drop_caches
			lim=""
			[ "$l" = adaptive ] || lim="-l $l"
			t0=$(date +%s)
			# shellcheck disable=SC2086
			"$IOPA_SUM" -v $lim "$DEMO_MNT/set" >/tmp/iopa-sum.out 2>/tmp/iopa-sum.err ||
				{ cat /tmp/iopa-sum.err; fail "iopa-sum $lim exited non-zero"; }
			t1=$(date +%s)
			cmp -s /tmp/iopa-sum.out /tmp/sha256sum.out ||
				fail "iopa-sum $lim and sha256sum disagree"
			m=$(sum_mibps /tmp/iopa-sum.err)
			say "round $round, iopa-sum ${lim:-(adaptive)}: ${m:-?} MiB/s," \
				"$(wc -l </tmp/iopa-sum.out) files in $((t1 - t0)) s, output identical to sha256sum's"
			[ -z "$m" ] || echo "$round $l $m" >>"$DEMO_SUM_RUNS"
			if [ "$l" = adaptive ]; then
				sum_adapt=$m
			elif [ -n "$m" ] && awk -v a="$m" -v b="$sum_best" 'BEGIN { exit !(a > b) }'; then
				sum_best=$m
				sum_best_limit=$l
			fi
		done
		if [ -n "$sum_adapt" ] && [ -n "$sum_best_limit" ]; then
			p=$(pct "$sum_adapt" "$sum_best")
			sum_pcts="$sum_pcts $p"
			summary="$summary
  round $round: iopa-sum adaptive ${sum_adapt} MiB/s, $p% of the best fixed (limit $sum_best_limit, $sum_best MiB/s)"
		fi
		round=$((round + 1))
	done
fi

# --- 6. tidy up, the figures ----------------------------------------------
cleanup
[ "$mounted" = 0 ] || fail "umount $DEMO_MNT"

echo
say "summary: $DEMO_NFILES files x $DEMO_SIZE read from $DEMO_DISK through /dev/iopa by $DEMO_WORKERS workers:$summary"
say "every run returned checksum $expect, the one gen wrote; a plain re-read agreed;" \
	"no fixed-limit run had more jobs running than its limit (MB = 10^6 bytes)"
# Figures, not verdicts: the adaptive runs against the best fixed
# limit's run of their round, runs of equal length; the median over the
# rounds.
if [ -n "$adapt_pcts" ]; then
	# shellcheck disable=SC2086
	set -- $(vs_best "$DEMO_RUNS" 0)
	say "adaptive pct_of_best_fixed=$1 rounds=$(echo $adapt_pcts | wc -w) $2 $3" \
		"$4 $5 (runs of $DEMO_PASSES passes each)"
fi
if [ -n "$sum_pcts" ]; then
	# shellcheck disable=SC2086
	set -- $(vs_best "$DEMO_SUM_RUNS" adaptive)
	say "iopa-sum pct_of_best_fixed=$1 rounds=$(echo $sum_pcts | wc -w) $2 $3 $4 $5"
fi
say "PASS ($(($(date +%s) - t_start)) s)"
exit 0
