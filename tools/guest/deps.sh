#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages a build/check step needs, only if missing.
#
#   tools/guest/deps.sh [--no-install] [GROUP...]
#                                      GROUP: build guest check bench debug pkg profile
#                                      all (default all)
#
#   build  compile the module against Debian headers, the selftests, the tools
#   guest  build an initramfs and boot it under QEMU (TCG)
#   check  checkpatch, kernel-doc, the uapi C/C++ compile test; python3-prometheus-client (iopactl metrics checks)
#   bench  tools/bench/report.py: python3 and matplotlib for the plots
#   debug  build a kernel from linux-source-6.12 (build-debug-kernel.sh)
#   pkg    tools/check/dkms.sh: dkms add/build in a scratch DKMS tree
#   profile  linux-perf: perf carried into the guest (make profile-dispatch)
#
# Quiet and fast (one dpkg-query) when nothing is missing.  When something is
# missing and we are not root (or there is no apt-get), or with --no-install
# (`make install`, which never installs packages), print what is missing
# and carry on: the step that needs it will fail with its own message.
set -eu

no_install=0
if [ "${1:-}" = --no-install ]; then
	no_install=1
	shift
fi

pkgs_build="make gcc gcc-12 libc6-dev libelf1 libssl3 zlib1g pahole bc
	liburing-dev pkg-config apt dpkg xz-utils ca-certificates libssl-dev"
pkgs_guest="qemu-system-x86 busybox-static fio cpio kmod e2fsprogs xz-utils trace-cmd bpftrace
	coreutils udev procps"
pkgs_check="perl python3 python3-docutils python3-prometheus-client g++ groff-base man-db"
pkgs_bench="python3 python3-matplotlib"
pkgs_debug="flex bison bc libelf-dev libssl-dev dpkg-dev xz-utils"
pkgs_pkg="dkms kmod"
pkgs_profile="linux-perf"

[ $# -gt 0 ] || set -- all
want=""
for g in "$@"; do
	case "$g" in
	build) want="$want $pkgs_build" ;;
	guest) want="$want $pkgs_guest" ;;
	check) want="$want $pkgs_check" ;;
	bench) want="$want $pkgs_bench" ;;
	debug) want="$want $pkgs_debug" ;;
	pkg) want="$want $pkgs_pkg" ;;
	profile) want="$want $pkgs_profile" ;;
	all) want="$want $pkgs_build $pkgs_guest $pkgs_check $pkgs_bench" ;;
	*) echo "deps.sh: unknown group '$g'" >&2; exit 2 ;;
	esac
done

if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "deps.sh: not a Debian system; make sure the equivalents of these are installed:" \
		$want >&2
	exit 0
fi

# Packages not in state "install ok installed".
missing=""
for p in $want; do
	case " $missing " in *" $p "*) continue ;; esac
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing="$missing $p"
done
[ -n "$missing" ] || exit 0

if [ "$no_install" = 1 ] || [ "$(id -u)" != 0 ] ||
		! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: missing packages:$missing" >&2
	echo "deps.sh: install them with: sudo apt-get install$missing" >&2
	exit 0
fi

echo "deps.sh: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
