#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print the selftest programs of selftests/iopa, one per line, relative to
# that directory: `make print-progs` if the selftests Makefile has that
# target, else the names in selftests/iopa/TESTS, else every executable file
# there (scripts included).
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
D=$TOP/selftests/iopa

if [ -f "$D/Makefile" ] &&
   out=$(env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS \
	 make -s --no-print-directory -C "$D" print-progs 2>/dev/null); then
	echo "$out" | tr ' \t' '\n\n' | sed '/^$/d'
elif [ -f "$D/TESTS" ]; then
	sed -e 's/#.*//' "$D/TESTS" | tr ' \t' '\n\n' | sed '/^$/d'
else
	for f in "$D"/*; do
		[ -f "$f" ] && [ -x "$f" ] && basename "$f"
	done
	exit 0
fi
