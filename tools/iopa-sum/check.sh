#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# iopa-sum against sha256sum, with the iopa module loaded (the QEMU guest:
# liburing-glue/tests/guest.sh runs it; or as root on a host with
# /dev/iopa).  POSIX sh + busybox are enough.
#
#   tools/iopa-sum/check.sh [NFILES]          (default 10000)
#
# Environment: IOPA_SUM, MKTREE (default: next to this script),
# IOPA_SUM_FLAGS (options for every run, e.g. -p: without the module, as
# host-check.sh runs it), SHA256SUM
# (default: GNU sha256sum next to this script if there, else
# sha256sum on PATH; GNU's is needed for the names it escapes), TMPDIR.
#
# Generates a tree of >= NFILES files (tools/iopa-sum/mktree: sizes around
# SHA-256's block and padding, names with spaces, UTF-8, backslash,
# newline, CR, a deep directory, symlinks and a FIFO that must be left
# out) and compares, byte for byte, `iopa-sum TREE` with
#     find TREE -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
# then the other cases below.  TAP on stdout; exit 0 only if all pass.
set -u

D=$(cd "$(dirname "$0")" && pwd)
SUM=${IOPA_SUM:-$D/iopa-sum}
SUM_FLAGS=${IOPA_SUM_FLAGS:-}
MKTREE=${MKTREE:-$D/mktree}
if [ -z "${SHA256SUM:-}" ]; then
	SHA256SUM=sha256sum
	[ ! -x "$D/sha256sum" ] || SHA256SUM=$D/sha256sum
fi
NFILES=${1:-10000}
W=$(mktemp -d "${TMPDIR:-/tmp}/iopa-sum-check.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
export LC_ALL=C

n=0
failed=0
ok() {	# STATUS NAME
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n $2"
	else
		echo "not ok $n $2"
		failed=$((failed + 1))
	fi
}
now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

# sha256sum of the regular files under/at the operands, sorted by path.
reference() {
	find "$@" -type f -print0 | sort -z | xargs -0 -r "$SHA256SUM" --
}
# iopa-sum's order: the operands as given, a directory's files sorted.
reference_ops() {
	for op in "$@"; do
		if [ -d "$op" ]; then
			reference "$op"
		else
			"$SHA256SUM" -- "$op"
		fi
	done
}

echo "# iopa-sum: $SUM $SUM_FLAGS; reference: $SHA256SUM ($("$SHA256SUM" --version 2>&1 | head -n 1))"
cd "$W" || exit 1
t0=$(now_ms)
made=$("$MKTREE" tree "$NFILES") || { echo "not ok 1 mktree"; exit 1; }
echo "# mktree: $made regular files, $(du -sk tree | cut -f1) KiB, $(( $(now_ms) - t0 )) ms"
[ "$made" -ge "$NFILES" ]
ok $? "the tree has >= $NFILES regular files ($made)"

# --- 1. the whole tree, byte for byte -------------------------------------------
t0=$(now_ms)
reference tree >ref.out
t_ref=$(( $(now_ms) - t0 ))
t0=$(now_ms)
"$SUM" $SUM_FLAGS tree >sum.out 2>sum.err
rc=$?
t_sum=$(( $(now_ms) - t0 ))
echo "# sha256sum: ${t_ref} ms; iopa-sum: ${t_sum} ms (exit $rc)"
[ $rc = 0 ] && [ ! -s sum.err ]
ok $? "iopa-sum TREE exits 0, nothing on stderr (not a tty)"
lines=$(wc -l <sum.out)
echo "# $lines lines; reference $(wc -l <ref.out)"
if cmp ref.out sum.out; then
	ok 0 "iopa-sum TREE == find | sort | xargs sha256sum, byte for byte ($lines lines)"
else
	ok 1 "iopa-sum TREE == find | sort | xargs sha256sum, byte for byte"
	diff ref.out sum.out | head -n 20 | sed 's/^/#   /'
fi
[ "$lines" -ge "$made" ]
ok $? "one line per regular file ($lines >= $made; escaped names take one line)"
grep -q '^\\[0-9a-f]\{64\}  tree/odd/new\\nline$' sum.out
ok $? "a name with a newline is escaped as sha256sum does"
! grep -q 'special/\|fifo' sum.out
ok $? "symlinks and the FIFO are left out"
"$SHA256SUM" -c --quiet sum.out >check.out 2>&1
ok $? "sha256sum -c accepts the output"

# --- 2. operands: files, a symlink to a file, several trees ---------------------
"$SUM" $SUM_FLAGS tree/odd tree/edge/size-0 tree/special/link-to-file tree/sort >ops.out 2>ops.err
rc=$?
reference_ops tree/odd tree/edge/size-0 tree/special/link-to-file tree/sort >ops.ref
[ $rc = 0 ] && cmp ops.ref ops.out
ok $? "file, symlink and directory operands: in the order given, each tree's files sorted"

# --- 3. per-file errors do not stop the run ---------------------------------------
"$SUM" $SUM_FLAGS tree/odd no-such-file 'no such' >err.out 2>err.err
rc=$?
reference tree/odd >err.ref
[ $rc = 1 ]
ok $? "two missing operands: exit status 1 ($rc)"
grep -qx 'iopa-sum: no-such-file: No such file or directory' err.err &&
	grep -qx "iopa-sum: 'no such': No such file or directory" err.err
ok $? "each error on stderr as sha256sum's: 'iopa-sum: PATH: reason', PATH quoted as coreutils quotes"
cmp err.ref err.out
ok $? "the other files are still summed"
sed 's/^/#   stderr: /' err.err

# A readable file the module refuses as a job (no read_iter): hashed all
# the same, as sha256sum does.
"$SUM" $SUM_FLAGS /proc/self/personality >proc.out 2>proc.err
rc=$?
"$SHA256SUM" /proc/self/personality >proc.ref
[ $rc = 0 ] && [ ! -s proc.err ] && cmp proc.ref proc.out
ok $? "/proc/self/personality (refused as a job): summed in-process, as sha256sum"

# --- 4. limits and threads change nothing in the output ---------------------------
"$SUM" $SUM_FLAGS -j 2 tree/bulk00/d000 tree/edge >j2.out 2>j2.err && [ ! -s j2.err ] && reference tree/bulk00/d000 tree/edge >j2.ref &&
	cmp j2.ref j2.out
ok $? "-j 2: same output"
"$SUM" $SUM_FLAGS -l 1 tree/edge tree/deep >l1.out 2>l1.err && [ ! -s l1.err ] && reference_ops tree/edge tree/deep >l1.ref &&
	cmp l1.ref l1.out
ok $? "-l 1 (pinned limit, one file at a time): same output"

# Under a low RLIMIT_NOFILE, as low as `find | sort | xargs sha256sum`
# works with (Integrators 2, item 2: at ulimit -n 64 it printed nothing):
# the pool and the walk keep within the limit, the output the same.
for nofile in 16 32 64; do
	(ulimit -n $nofile && exec "$SUM" $SUM_FLAGS tree) >nofile.out 2>nofile.err
	rc=$?
	[ $rc = 0 ] && [ ! -s nofile.err ] && cmp ref.out nofile.out
	ok $? "ulimit -n $nofile: the whole tree, same output, exit 0 ($rc)"
	sed 's/^/#   stderr: /' nofile.err | head -n 3
done

# For the record (no check): the whole tree again, adaptive and pinned.
for a in "" "-l 1" "-l 2" "-l 4"; do
	"$SUM" $SUM_FLAGS -q -v $a tree 2>&1 >/dev/null | sed "s/^/# [${a:-adaptive}] /"
done

# --- 5. empty input, progress -----------------------------------------------------
out=$("$SUM" $SUM_FLAGS tree/empty 2>&1)
[ $? = 0 ] && [ -z "$out" ]
ok $? "an empty directory: no output, exit 0"
"$SUM" $SUM_FLAGS --progress tree/bulk00 >prog.out 2>prog.err
rc=$?
reference tree/bulk00 >prog.ref
[ $rc = 0 ] && cmp prog.ref prog.out
ok $? "--progress: stdout unchanged"
# The status line is erased at the end: what stderr ends with is ESC [ K.
if [ -s prog.err ]; then
	[ "$(tail -c 3 prog.err | od -An -tx1 | tr -d ' \n')" = 1b5b4b ]
	ok $? "--progress: status lines on stderr, erased at the end"
else
	ok 0 "--progress: no status line (the run took < 0.2 s)"
fi

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
