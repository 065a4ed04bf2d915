# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Sourced (bash) by fetch-ksrc.sh and build-debug-kernel.sh: Debian's
# linux-source-6.12 package, which holds the kernel tree as a .tar.xz.

LINUX_SOURCE_PKG=linux-source-6.12

# Print the candidate version apt offers (after an apt-get update if root
# and apt knows none); nothing if there is none.
linux_source_version() {
	local ver
	ver=$(apt-cache policy "$LINUX_SOURCE_PKG" 2>/dev/null |
		awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }')
	if [ -z "$ver" ] && [ "$(id -u)" = 0 ]; then
		apt-get update -qq >&2
		ver=$(apt-cache policy "$LINUX_SOURCE_PKG" |
			awk '$1 == "Candidate:" && $2 != "(none)" { print $2 }')
	fi
	echo "$ver"
}

# linux_source_tar VERSION DIR: download the package of VERSION into DIR
# (~150 MB) and write the tree's .tar (uncompressed) to stdout.
linux_source_tar() {
	local aptopt=""
	[ "$(id -u)" != 0 ] || aptopt="-o APT::Sandbox::User=root"
	# shellcheck disable=SC2086
	(cd "$2" && apt-get download -q $aptopt "$LINUX_SOURCE_PKG=$1" >&2) || return 1
	dpkg-deb --fsys-tarfile "$2"/*.deb |
		tar -xOf - "./usr/src/$LINUX_SOURCE_PKG.tar.xz" | xz -dc
}
