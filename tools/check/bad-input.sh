#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Every test Documentation/iopa-bad-input.rst and iopa-security.rst name
# ("program:fixture.test", as list items, several to an item allowed)
# exists as TEST_F[_TIMEOUT](fixture, test) in selftests/iopa/program.c.
# Prints the missing ones; exit status 1 if any, or if a document names none.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
rc=0
for DOC in "$TOP/Documentation/iopa-bad-input.rst" \
	   "$TOP/Documentation/iopa-security.rst"; do
	name=$(basename "$DOC")
	n=0 bad=0
	for ref in $(grep -oE '(^|[ ,])iopa_[a-z_]+:[a-z_]+\.[a-z0-9_]+' "$DOC" |
		     sed 's/^[ ,]*//' | sort -u); do
		prog=${ref%%:*} rest=${ref#*:}
		fix=${rest%%.*} test=${rest#*.}
		n=$((n + 1))
		if ! grep -qE "^TEST_F(_TIMEOUT)?\($fix, $test[,)]" \
			"$TOP/selftests/iopa/$prog.c" 2>/dev/null; then
			echo "bad-input: $name: $ref: no such test"
			bad=1
		fi
	done
	if [ $n = 0 ]; then
		echo "bad-input: no tests named in $name"
		bad=1
	fi
	echo "bad-input: $name: $n tests named, $([ $bad = 0 ] && echo all exist || echo some missing)"
	[ $bad = 0 ] || rc=1
done
exit $rc
