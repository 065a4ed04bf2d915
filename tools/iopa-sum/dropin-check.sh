#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# iopa-sum as a drop-in for GNU sha256sum: each case runs both, and their
# standard output (byte for byte), standard error (with "iopa-sum" read
# as "sha256sum") and exit status must be equal.  The cases are those of
# coreutils' own tests of the digest programs where the options overlap
# (tests/cksum/md5sum.pl, md5sum-bsd.sh, md5sum-newline.pl, sha*sum-vec):
# operands in order, missing and empty files, standard input, names with
# a backslash, newline or carriage return in each output style (default,
# -b, --tag, -z), and -c with --quiet, --status, --strict, -w and
# --ignore-missing over good, bad, missing, improperly formatted, escaped,
# BSD-style, CRLF and uppercase lines, from a file and from stdin; and the
# option errors.  --files0-from, which GNU's sha256sum of coreutils 9.1
# lacks, is compared with xargs -0 sha256sum.  POSIX sh; TAP on stdout.
#
#   tools/iopa-sum/dropin-check.sh
#
# Environment: IOPA_SUM (default: next to this script), IOPA_SUM_FLAGS
# (e.g. -p, as host-check.sh runs it), SHA256SUM (default sha256sum: GNU's
# is needed), TMPDIR.
set -u
D=$(cd "$(dirname "$0")" && pwd)
SUM=${IOPA_SUM:-$D/iopa-sum}
FLAGS=${IOPA_SUM_FLAGS:-}
REF=${SHA256SUM:-sha256sum}
[ ! -x "$D/sha256sum" ] || [ -n "${SHA256SUM:-}" ] || REF=$D/sha256sum
W=$(mktemp -d "${TMPDIR:-/tmp}/iopa-dropin.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
export LC_ALL=C
cd "$W" || exit 1
n=0 failed=0

# same NAME [STDIN-FILE] -- ARGS...: both programs, the same answers
same() {
	name=$1 in=/dev/null
	shift
	if [ "$1" != -- ]; then in=$1; shift; fi
	shift
	"$REF" "$@" <"$in" >ref.out 2>ref.err
	rr=$?
	# shellcheck disable=SC2086
	"$SUM" $FLAGS "$@" <"$in" >sum.out 2>sum.err
	rs=$?
	# each program's name as "sha256sum" (the reference may be a path)
	sed -e 's|^[^ :]*sha256sum: |sha256sum: |' \
	    -e "s|^Try '[^ ']*sha256sum --help'|Try 'sha256sum --help'|" ref.err >ref.err2
	mv ref.err2 ref.err
	sed -e 's/^iopa-sum: /sha256sum: /' \
	    -e "s/^Try 'iopa-sum --help'/Try 'sha256sum --help'/" sum.err >sum.err2
	n=$((n + 1))
	if [ $rr = $rs ] && cmp -s ref.out sum.out && cmp -s ref.err sum.err2; then
		echo "ok $n $name (exit $rr)"
	else
		failed=$((failed + 1))
		echo "not ok $n $name (exit $rr, iopa-sum $rs)"
		diff ref.out sum.out | head -n 6 | sed 's/^/#   out: /'
		diff ref.err sum.err2 | head -n 6 | sed 's/^/#   err: /'
	fi
}

# --- files ---------------------------------------------------------------------
printf 'abc' >a
printf '' >empty
printf 'message digest' >b
head -c 100000 /dev/zero >big
printf 'x' >'back\slash'
printf 'y' >'new
line'
printf 'z' >"$(printf 'car\rret')"
printf 'w' >'sp ace'
same "files in the order given" -- b a big empty
same "a missing file among others: error in its turn, exit 1" -- a nofile b
same "only missing files" -- nofile1 nofile2
same "/dev/null" -- /dev/null
printf 'abc' >stdin
same "no operand: standard input" stdin --
same "- twice (the second reads EOF)" stdin -- - a -
same "names with \\, newline, CR: escaped, line starts with \\" -- 'back\slash' 'new
line' "$(printf 'car\rret')" a
same "-b: '*' before the name" -- -b a 'back\slash'
same "-t: ' ' before the name" -- -t a
same "--tag: BSD style, escaped names" -- --tag a 'back\slash' 'new
line'
same "-z: NUL-ended lines, nothing escaped" -- -z a 'back\slash' 'new
line'
same "--tag -z" -- --tag -z a 'new
line'
same "a name with a space, its error quoted" -- 'sp ace' 'no such'

# --- -c ------------------------------------------------------------------------
"$REF" a b empty 'back\slash' 'new
line' >good.sums
same "-c: every line OK" -- -c good.sums
{
	cat good.sums
	echo "this line is not one"
	echo "0000000000000000000000000000000000000000000000000000000000000000  a"
	echo "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  gone"
} >mixed.sums
same "-c: a mismatch, a missing file, a bad line" -- -c mixed.sums
same "-c --quiet" -- -c --quiet mixed.sums
same "-c --status" -- -c --status mixed.sums
same "-c --strict" -- -c --strict mixed.sums
same "-c -w" -- -c -w mixed.sums
same "-c --ignore-missing" -- -c --ignore-missing mixed.sums
{ cat good.sums; echo "bad line"; } >strict.sums
same "-c --strict: a bad line fails an otherwise good list" -- -c --strict strict.sums
same "-c without --strict: the same list passes" -- -c strict.sums
printf 'junk\nmore junk\n' >junk.sums
same "-c: no properly formatted line" -- -c junk.sums
echo "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  gone" >gone.sums
same "-c --ignore-missing: nothing verified" -- -c --ignore-missing gone.sums
same "-c: a missing list" -- -c nolist.sums good.sums
"$REF" --tag a 'back\slash' b >tag.sums
same "-c: BSD-style lines" -- -c tag.sums
"$REF" -b a b >bin.sums
same "-c: '*' lines" -- -c bin.sums
awk '{ printf "%s\r\n", $0 }' good.sums >crlf.sums
same "-c: CRLF lines" -- -c crlf.sums
"$REF" a | tr 'a-f' 'A-F' | sed 's/  A$/  a/' >upper.sums
same "-c: uppercase hex" -- -c upper.sums
sed 's/^/  /' bin.sums >indent.sums
same "-c: leading blanks" -- -c indent.sums
same "-c from standard input" good.sums -- -c
same "-c - (standard input)" mixed.sums -- -c -
same "-c: two lists" -- -c good.sums mixed.sums
echo "$("$REF" a | cut -c1-64)  ." >dir.sums
same "-c: a directory listed" -- -c dir.sums

# --- option errors ---------------------------------------------------------------
same "--tag with -c" -- --tag -c good.sums
same "-z with -c" -- -z -c good.sums
same "-b with -c" -- -b -c good.sums
same "--status without -c" -- --status a
same "--strict without -c" -- --strict a
same "-w without -c" -- -w a
same "--ignore-missing without -c" -- --ignore-missing a
same "--tag with -t" -- --tag -t a

# --- --files0-from (not in coreutils 9.1's sha256sum: against xargs -0) ----------
printf 'a\0back\\slash\0b\0' >list0
n=$((n + 1))
# shellcheck disable=SC2086
if "$SUM" $FLAGS --files0-from=list0 >sum.out 2>sum.err &&
   xargs -0 "$REF" <list0 >ref.out && cmp -s ref.out sum.out && [ ! -s sum.err ]; then
	echo "ok $n --files0-from=F == xargs -0 sha256sum <F"
else
	failed=$((failed + 1))
	echo "not ok $n --files0-from=F == xargs -0 sha256sum <F"
fi
n=$((n + 1))
# shellcheck disable=SC2086
if "$SUM" $FLAGS --files0-from=- <list0 >sum.out 2>sum.err && cmp -s ref.out sum.out; then
	echo "ok $n --files0-from=- (standard input)"
else
	failed=$((failed + 1))
	echo "not ok $n --files0-from=- (standard input)"
fi
n=$((n + 1))
# shellcheck disable=SC2086
"$SUM" $FLAGS --files0-from=list0 a >/dev/null 2>sum.err
if [ $? = 1 ] && grep -q "extra operand 'a'" sum.err; then
	echo "ok $n --files0-from with an operand: exit 1, extra operand"
else
	failed=$((failed + 1))
	echo "not ok $n --files0-from with an operand: exit 1, extra operand"
fi

echo "1..$n"
echo "# $((n - failed)) passed, $failed failed"
[ $failed = 0 ]
