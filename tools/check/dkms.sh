#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# dkms add, build, install and remove of iopa in a scratch DKMS tree,
# against Debian's 6.12 headers (.cache/kernel/6.12.env; fetched if
# missing).  Prints TAP; exits non-zero if a test fails.
#
#   tools/check/dkms.sh
#
# Installs Debian's dkms if missing (tools/guest/deps.sh pkg; root).  The
# source tree is what `make install-dkms` lays out, so this also checks that
# dkms.conf, kernel/ and uapi/ suffice to build the module.  Nothing of the
# host's DKMS is used: every dkms command gets --sourcetree, --dkmstree and
# --installtree in the scratch dir, --kernelsourcedir the cached headers,
# install and remove --no-depmod; the signing key dkms generates and signs
# with (variables mok_signing_key, mok_certificate, sign_file, which dkms
# takes from the environment) lives there too, and TMPDIR points there.
# The last test compares /var/lib/dkms, /usr/src, /lib/modules and
# /etc/dkms with how they were before.  Settings in /etc/dkms/framework.conf
# (or framework.conf.d) override the signing variables and could make dkms
# install modprobe: if that file sets modprobe_on_install, the install
# step is skipped.  Logs: build/check-dkms/.  KEEP=1 keeps the scratch dir.
# The checks are functions that t() calls: shellcheck takes them for dead code.
# shellcheck disable=SC2317
set -eu

# shellcheck source=tools/check/pkg-lib.sh
. "$(dirname "$0")/pkg-lib.sh"

LOG=$TOP/build/check-dkms
rm -rf "$LOG"
mkdir -p "$LOG"
"$GUEST/deps.sh" build pkg >&2
headers_612

S=$(mktemp -d "${TMPDIR:-/tmp}/iopa-dkms.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$S"' EXIT
VER=$(make -s -C "$TOP" version)
ARCH=$(uname -m)
mkdir -p "$S/tmp" "$S/dkms" "$S/lib/modules/$KVER"
export TMPDIR=$S/tmp
export sign_file=$KDIR/scripts/sign-file
export mok_signing_key=$S/mok.key
export mok_certificate=$S/mok.pub
DKMS=(dkms --sourcetree "$S/root/usr/src" --dkmstree "$S/dkms"
	--installtree "$S/lib/modules")
MV=(-m iopa -v "$VER")
BUILT=$S/dkms/iopa/$VER/$KVER/$ARCH/module/iopa.ko

# The host's DKMS state: names, sizes and times.
host_state() {
	find /var/lib/dkms /usr/src /lib/modules /etc/dkms -xdev \
		-printf '%p %y %s %T@\n' 2>/dev/null | sort
}
host_state >"$S/host.before"

# logged NAME CMD...: CMD's output to build/check-dkms/NAME.log; its tail
# if CMD fails.
logged() {
	local log=$LOG/$1.log rc=0
	shift
	"$@" >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || tail -n 20 "$log"
	return "$rc"
}

plan 11

t "dkms is installed ($(dkms --version 2>/dev/null || echo none))" \
	sh -c 'dkms --version | grep -q "^dkms-3\."'

t "make install-dkms DESTDIR=<scratch>/root: usr/src/iopa-$VER" \
	logged install-dkms make -C "$TOP" install-dkms DESTDIR="$S/root"

t "dkms add ${MV[*]} (log: build/check-dkms/add.log)" \
	logged add "${DKMS[@]}" add "${MV[@]}"

check_status() {
	local st
	st=$("${DKMS[@]}" status "${MV[@]}" 2>&1)
	echo "$st"
	printf '%s\n' "$st" | grep -q "$1"
}
t "dkms status: added" check_status "^iopa/$VER: added"

# BUILD_EXCLUSIVE_KERNEL: not for kernels older than 6.1 (dkms exits 77).
check_exclusive() {
	local rc=0
	"${DKMS[@]}" build "${MV[@]}" -k 6.0.0-1-amd64 --kernelsourcedir "$KDIR" \
		>"$LOG/build-6.0.log" 2>&1 || rc=$?
	[ "$rc" = 77 ] || { echo "exit $rc, not 77"; cat "$LOG/build-6.0.log"; return 1; }
	[ ! -e "$S/dkms/iopa/$VER/6.0.0-1-amd64" ] || { echo "built for 6.0"; return 1; }
}
t "dkms build -k 6.0.0-1-amd64 refuses (BUILD_EXCLUSIVE_KERNEL, exit 77)" check_exclusive

# On failure dkms leaves kbuild's output in the build dir's make.log.
check_build() {
	local mlog=$S/dkms/iopa/$VER/build/make.log
	logged build "${DKMS[@]}" build "${MV[@]}" -k "$KVER" \
		--kernelsourcedir "$KDIR" && return 0
	[ ! -f "$mlog" ] || { echo "--- $mlog"; tail -n 20 "$mlog"; }
	return 1
}
t "dkms build -k $KVER --kernelsourcedir <6.12 headers> (log: build/check-dkms/build.log)" \
	check_build

check_built() {
	[ -f "$BUILT" ] || { echo "no $BUILT"; return 1; }
	modinfo "$BUILT" | grep -E '^(vermagic|signer|sig_hashalgo):'
	modinfo -F vermagic "$BUILT" | grep -q "^$KVER " || return 1
}
t "built iopa.ko in the DKMS tree, modinfo vermagic $KVER" check_built

# dkms signed it with the key it generated in the scratch dir.
check_signed() {
	if [ ! -f "$mok_signing_key" ] || [ ! -f "$mok_certificate" ]; then
		echo "no key generated in $S"
		return 1
	fi
	[ "$(modinfo -F signer "$BUILT")" = "DKMS module signing key" ] ||
		{ echo "signer: '$(modinfo -F signer "$BUILT")'"; return 1; }
}
if [ -x "$sign_file" ]; then
	t "signed with the scratch key (signer: DKMS module signing key)" check_signed
else
	skip "signed with the scratch key" "no $sign_file in the headers"
fi

# Debian's dkms puts modules in /updates/dkms, like DEST_MODULE_LOCATION.
check_install() {
	local ko=$S/lib/modules/$KVER/updates/dkms/iopa.ko
	"${DKMS[@]}" install "${MV[@]}" -k "$KVER" --kernelsourcedir "$KDIR" \
		--no-depmod >"$LOG/install.log" 2>&1 ||
		{ cat "$LOG/install.log"; return 1; }
	[ -f "$ko" ] || { echo "no $ko:"; find "$S/lib/modules"; return 1; }
	cmp "$BUILT" "$ko" || return 1
	check_status "^iopa/$VER, $KVER, $ARCH: installed"
}
if grep -Eqs '^[[:space:]]*modprobe_on_install=' /etc/dkms/framework.conf \
		/etc/dkms/framework.conf.d/*.conf; then
	skip "dkms install --installtree <scratch>" \
		"/etc/dkms/framework.conf* sets modprobe_on_install"
else
	t "dkms install --installtree <scratch>: lib/modules/$KVER/updates/dkms/iopa.ko, status installed" \
		check_install
fi

check_remove() {
	"${DKMS[@]}" remove "${MV[@]}" --all --no-depmod >"$LOG/remove.log" 2>&1 ||
		{ cat "$LOG/remove.log"; return 1; }
	local left
	left=$(find "$S/dkms" "$S/lib/modules" ! -type d)
	[ -z "$left" ] || { echo "left behind:"; echo "$left"; return 1; }
	[ -z "$("${DKMS[@]}" status "${MV[@]}" 2>&1)" ] ||
		{ "${DKMS[@]}" status "${MV[@]}"; return 1; }
}
t "dkms remove ${MV[*]} --all: nothing left in the DKMS and install trees" check_remove

check_host() {
	host_state | diff "$S/host.before" - ||
		{ echo "changed: /var/lib/dkms, /usr/src, /lib/modules or /etc/dkms"; return 1; }
}
t "host untouched: /var/lib/dkms, /usr/src, /lib/modules, /etc/dkms" check_host

finish
