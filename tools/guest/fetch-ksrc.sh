#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the few kernel-tree files the build and checks need from Debian's
# linux-source-6.12 (a ~150 MB .deb around linux-source-6.12.tar.xz) into
# .cache/ksrc/, keeping the tree's relative paths.  Prints that directory.
#
#   tools/guest/fetch-ksrc.sh
#
# Cached: once .cache/ksrc/.complete exists nothing is downloaded again
# (delete .cache/ksrc to refresh).  Nothing from here goes into the repo.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${IOPA_CACHE:-$TOP/.cache}/ksrc
# shellcheck source=tools/guest/linux-source.sh
. "$TOP/tools/guest/linux-source.sh"
PKG=$LINUX_SOURCE_PKG

# Tree paths wanted (tar patterns, relative to the top of the tree).
FILES="
tools/testing/selftests/kselftest_harness.h
tools/testing/selftests/kselftest.h
tools/testing/selftests/kselftest_module.h
tools/testing/selftests/kselftest/*
tools/testing/selftests/lib.mk
scripts/checkpatch.pl
scripts/spelling.txt
scripts/const_structs.checkpatch
scripts/kernel-doc
scripts/kernel-doc.py
scripts/lib/kdoc/*
Documentation/userspace-api/ioctl/ioctl-number.rst
"

log() { echo "fetch-ksrc: $*" >&2; }

if [ -f "$OUT/.complete" ]; then
	echo "$OUT"
	exit 0
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/iopa-ksrc.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

ver=$(linux_source_version)
[ -n "$ver" ] || { log "apt knows no $PKG"; exit 1; }

log "downloading $PKG $ver (~150 MB)"
log "extracting"
rm -rf "$OUT"
mkdir -p "$OUT"
pats=""
for f in $FILES; do
	pats="$pats linux-source-6.12/$f"
done
# Missing optional members (kernel-doc.py is not in every version) are fine:
# tar exits non-zero for them, so check the must-haves afterwards instead.
# shellcheck disable=SC2086
linux_source_tar "$ver" "$tmp" |
	tar -xf - -C "$OUT" --strip-components=1 --wildcards $pats \
	2>/dev/null || true
for f in tools/testing/selftests/kselftest_harness.h \
	 tools/testing/selftests/kselftest.h scripts/checkpatch.pl \
	 scripts/kernel-doc Documentation/userspace-api/ioctl/ioctl-number.rst; do
	[ -f "$OUT/$f" ] || { log "missing $f in $PKG"; exit 1; }
done
echo "$PKG $ver" >"$OUT/.complete"
echo "$OUT"
