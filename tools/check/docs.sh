#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Documentation checks: every .rst under Documentation/ parses with
# docutils without warnings; every sysfs file kernel/sysfs.c creates
# has a What: block in Documentation/ABI/testing/ (and no block names a
# file that does not exist); every feature bit, ioctl and io_uring
# command of the uapi header is documented in iopa.rst and iopa(4)
# (tools/check/docs-abi.py); iopa(4) renders cleanly.
set -eu
TOP=$(cd "$(dirname "$0")/../.." && pwd)
cd "$TOP"

rc=0
for f in $(git ls-files 'Documentation/*.rst' 2>/dev/null || ls Documentation/*.rst); do
	# source_path: an include (the user guide's examples) is found
	# relative to the document, as any docutils front end finds it.
	if python3 -c "import docutils.core,sys; docutils.core.publish_doctree(open(sys.argv[1]).read(), source_path=sys.argv[1], settings_overrides={'report_level':2,'halt_level':2})" "$f" >/dev/null; then
		echo "ok: $f parses"
	else
		echo "FAIL: $f does not parse cleanly (above)"
		rc=1
	fi
done

abi=Documentation/ABI/testing/sysfs-class-misc-iopa
base=/sys/class/misc/iopa
# Attribute names as kernel/sysfs.c declares them: top-level tunables and
# controller parameters, and the module totals under stats/.
top=$(sed -n -e 's/.*__ATTR(\([a-z][a-z_]*\),.*/\1/p' \
	-e 's/.*IOPA_PARAM_ATTR(\([a-z][a-z_]*\),.*/\1/p' \
	-e 's/^static DEVICE_ATTR_RW(\([a-z_]*\)).*/\1/p' kernel/sysfs.c)
stats=$(sed -n 's/^IOPA_TOTAL(\([a-z_]*\),.*/\1/p' kernel/sysfs.c)
want=$( (for a in $top; do echo "$base/$a"; done
	 for a in $stats; do echo "$base/stats/$a"; done) | sort)
have=$(sed -n 's/^What:[[:space:]]*//p' "$abi" | sort)
missing=$(comm -23 <(echo "$want") <(echo "$have"))
extra=$(comm -13 <(echo "$want") <(echo "$have"))
if [ -n "$missing" ]; then
	echo "FAIL: sysfs files without a block in $abi:"
	echo "$missing"
	rc=1
fi
if [ -n "$extra" ]; then
	echo "FAIL: blocks in $abi for files kernel/sysfs.c does not create:"
	echo "$extra"
	rc=1
fi
[ -n "$missing$extra" ] || echo "ok: $(echo "$want" | wc -l) sysfs files, each documented in $abi"

# Every feature bit, ioctl and io_uring command in iopa.rst and iopa(4)
# (its self-test first: an undocumented name must fail it).
python3 tools/check/docs-abi.py --self-test || rc=1
python3 tools/check/docs-abi.py || rc=1

# The iopa(4) page renders without warnings.
out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z Documentation/iopa.4 2>&1) ||
	out="groff failed (status $?): $out"
if [ -n "$out" ]; then
	echo "FAIL: groff -ww Documentation/iopa.4:"
	echo "$out"
	rc=1
else
	echo "ok: Documentation/iopa.4 renders (groff -man -ww)"
fi

# Every man page of the tree fits a terminal of 80 columns: man(1) at
# MANWIDTH=80 warns of nothing (tables) and writes no line longer
# (examples).  Integrators 2: iopactl.8 overflowed.
wide=0
for m in Documentation/iopa.4 liburing-glue/man/*.[37] tools/iopa-sum/iopa-sum.1 \
	tools/iopactl/iopactl.8; do
	out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$m" 2>&1 >/dev/null)
	long=$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$m" 2>/dev/null |
		python3 -c 'import sys; print("".join(l for l in sys.stdin if len(l.rstrip("\n")) > 80), end="")')
	if [ -n "$out$long" ]; then
		echo "FAIL: $m at 80 columns:"
		echo "$out$long"
		wide=1
	fi
done
[ $wide = 0 ] && echo "ok: every man page fits 80 columns (man -l, MANWIDTH=80)"
[ $wide = 0 ] || rc=1
exit $rc
