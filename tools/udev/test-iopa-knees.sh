#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of tools/udev/iopa-knees against a stand-in knees file and
# /dev/disk tree (links to /dev/null and /dev/zero, 1:3 and 1:5).  TAP.
set -u
TOP=$(cd "$(dirname "$0")/../.." && pwd)
K=$TOP/tools/udev/iopa-knees
W=$(mktemp -d "${TMPDIR:-/tmp}/iopa-knees.XXXXXX") || exit 1
trap 'rm -rf "$W"' EXIT
n=0 failed=0
t() {
	local what=$1
	shift
	n=$((n + 1))
	if "$@" >"$W/out" 2>&1; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		sed 's/^/# /' "$W/out"
		failed=$((failed + 1))
	fi
}
mkdir -p "$W/disk/by-id" "$W/disk/by-path"
ln -s /dev/null "$W/disk/by-id/ata-MODEL_SERIAL"
ln -s /dev/zero "$W/disk/by-path/pci-0000:00:04.0"
ln -s /dev/zero "$W/disk/by-path/pci-0000:00:04.0-part1-gone-XX"
printf '%s\n' "1:3 knee=7 diskseq=4 src=learned job_kb=100" \
	"1:5 knee=2 diskseq=0 src=set" "9:9 knee=3 diskseq=1 src=learned" \
	>"$W/knees"
export IOPA_KNEES_SYSFS=$W/knees IOPA_KNEES_DISKS=$W/disk

saved() {
	"$K" save "$W/state" 2>"$W/err" || return 1
	diff <(printf '%s\n' "# iopa knees v1" "by-id/ata-MODEL_SERIAL knee=7 job_kb=100" \
		"by-path/pci-0000:00:04.0 knee=2") "$W/state" &&
		grep -q "9:9 has no stable name" "$W/err"
}
t "save: by-id first, else by-path, job_kb kept if told; a device without a name left out" saved

restored() {
	: >"$W/knees"
	"$K" restore "$W/state" || return 1
	diff <(printf '%s\n' "1:3 knee=7 job_kb=100" "1:5 knee=2") "$W/knees"
}
t "restore: each saved name resolved to MAJ:MIN and written" restored

gone() {
	rm "$W/disk/by-id/ata-MODEL_SERIAL"
	: >"$W/knees"
	"$K" restore "$W/state" || return 1
	diff <(printf '%s\n' "1:5 knee=2") "$W/knees"
}
t "restore: a device not here now is skipped" gone

nothing_saved() {
	"$K" restore "$W/none"
}
t "restore: no state file yet is no error" nothing_saved

bad_header() {
	echo "by-id/x knee=3" >"$W/bad"
	! "$K" restore "$W/bad"
}
t "restore: a file without the v1 header is refused" bad_header

usage() {
	"$K" save
	[ $? = 2 ]
}
t "usage error: exit 2" usage

echo "1..$n"
[ "$failed" = 0 ]
