#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every test Documentation/iopa-bad-input.rst names ("program:fixture.test")
# exists as TEST_F[_TIMEOUT](fixture, test) in selftests/iopa/program.c.
# Prints the missing ones; exit status 1 if any, or if the table names none.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
DOC=$TOP/Documentation/iopa-bad-input.rst
n=0 bad=0
for ref in $(grep -oE '^ +- iopa_[a-z_]+:[a-z_]+\.[a-z0-9_]+$' "$DOC" |
	     sed 's/^ *- //' | sort -u); do
	prog=${ref%%:*} rest=${ref#*:}
	fix=${rest%%.*} test=${rest#*.}
	n=$((n + 1))
	if ! grep -qE "^TEST_F(_TIMEOUT)?\($fix, $test[,)]" \
		"$TOP/selftests/iopa/$prog.c" 2>/dev/null; then
		echo "bad-input: $ref: no such test"
		bad=1
	fi
done
[ $n -gt 0 ] || { echo "bad-input: no tests named in $DOC"; exit 1; }
echo "bad-input: $n tests named, $([ $bad = 0 ] && echo all exist || echo some missing)"
exit $bad
