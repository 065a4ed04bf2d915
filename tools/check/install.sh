#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make install` and `make uninstall` into a scratch DESTDIR (PREFIX=/usr),
# against Debian's 6.12 headers (.cache/kernel/6.12.env; fetched if
# missing).  Prints TAP; exits non-zero if a test fails.
#
#   tools/check/install.sh
#
# Checks that every file lands where it should with its mode, that nothing
# else is installed, that a program compiled and linked with the installed
# header, library and pkg-config file runs, that uninstall leaves only empty
# directories, and that nothing was written outside DESTDIR (no iopa files
# in the system directories, no group, no depmod/ldconfig).  Builds in the
# checkout (kernel/, liburing-glue/, tools/iopa-sum/) like `make install`.
# Logs: build/check-install/.  Environment: KEEP=1 keeps the scratch tree.
# The checks are functions that t() calls: shellcheck takes them for dead code.
# shellcheck disable=SC2317
set -eu

# shellcheck source=tools/check/pkg-lib.sh
. "$(dirname "$0")/pkg-lib.sh"

LOG=$TOP/build/check-install
mkdir -p "$LOG"
"$GUEST/deps.sh" build check >&2
headers_612

S=$(mktemp -d "${TMPDIR:-/tmp}/iopa-install.XXXXXX")
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$S"' EXIT
R=$S/root
VER=$(make -s -C "$TOP" version)
MK=(make -C "$TOP" DESTDIR="$R" PREFIX=/usr KDIR="$KDIR")
IOPACTL=$TOP/tools/iopactl

# The host's state, to compare with afterwards.
host_state() {
	getent group iopa || true
	cksum /etc/group /etc/gshadow /etc/ld.so.cache 2>/dev/null || true
}
host_state >"$S/host.before"
touch "$S/stamp"
sleep 1

plan 28

# logged LOG CMD...: CMD's output to LOG; its tail if CMD fails.
logged() {
	local log=$1 rc=0
	shift
	"$@" >"$log" 2>&1 || rc=$?
	[ "$rc" = 0 ] || tail -n 20 "$log"
	return "$rc"
}

t "make install DESTDIR=... PREFIX=/usr (log: build/check-install/install.log)" \
	logged "$LOG/install.log" "${MK[@]}" install

# ---- what install laid out --------------------------------------------------

# check_file PATH MODE [SOURCE]: a regular file with that mode (and content).
check_file() {
	if [ ! -f "$1" ] || [ -L "$1" ]; then
		echo "missing: $1"
		return 1
	fi
	[ "$(mode "$1")" = "$2" ] || { echo "mode $(mode "$1") != $2: $1"; return 1; }
	[ $# -lt 3 ] || cmp "$3" "$1"
}

check_module() {
	local ko n
	n=$(find "$R/lib/modules/$KVER/updates" -maxdepth 1 -name 'iopa.ko*' | wc -l)
	[ "$n" = 1 ] || { echo "$n iopa.ko* in $R/lib/modules/$KVER/updates"; return 1; }
	ko=$(echo "$R/lib/modules/$KVER/updates"/iopa.ko*)
	check_file "$ko" 644 || return 1
	modinfo -F vermagic "$ko" | grep -q "^$KVER " ||
		{ echo "vermagic: $(modinfo -F vermagic "$ko")"; return 1; }
}
t "module: lib/modules/$KVER/updates/iopa.ko*, 0644, vermagic $KVER" check_module

t "uapi header: usr/include/linux/iopa.h, 0644" \
	check_file "$R/usr/include/linux/iopa.h" 644 "$TOP/uapi/linux/iopa.h"
t "libiopa header: usr/include/libiopa.h, 0644" \
	check_file "$R/usr/include/libiopa.h" 644 "$TOP/liburing-glue/include/libiopa.h"

# libiopa.so -> libiopa.so.<major> (the SONAME) -> the file, 0755.
check_shlib() {
	local d=$R/usr/lib soname real
	[ -L "$d/libiopa.so" ] || { echo "libiopa.so is not a symlink"; return 1; }
	soname=$(readlink "$d/libiopa.so")
	[ -L "$d/$soname" ] || { echo "libiopa.so -> $soname, not a symlink"; return 1; }
	real=$(readlink "$d/$soname")
	case "$soname/$real" in
	*/*/*) echo "links leave the directory: $soname -> $real"; return 1 ;;
	esac
	check_file "$d/$real" 755 || return 1
	readelf -d "$d/$real" | grep -q "(SONAME).*\[$soname\]" ||
		{ echo "SONAME of $real is not $soname"; return 1; }
	echo "libiopa.so -> $soname -> $real"
}
t "libiopa.so -> libiopa.so.N (SONAME) -> libiopa.so.N.M, 0755" check_shlib
t "libiopa.a, 0644" check_file "$R/usr/lib/libiopa.a" 644

check_pc() {
	local pc=$R/usr/lib/pkgconfig/libiopa.pc
	check_file "$pc" 644 || return 1
	PKG_CONFIG_PATH=$R/usr/lib/pkgconfig pkg-config --print-errors \
		--exists libiopa || return 1
	[ "$(PKG_CONFIG_PATH=$R/usr/lib/pkgconfig pkg-config \
		--variable=prefix libiopa)" = /usr ] || { cat "$pc"; return 1; }
	if ! grep -qx 'libdir=/usr/lib' "$pc" ||
			! grep -qx 'includedir=/usr/include' "$pc"; then
		cat "$pc"
		return 1
	fi
}
t "libiopa.pc: prefix=/usr, libdir, includedir, 0644" check_pc

# Every man page the tree has, in its section.
man_pages() {
	local f
	for f in "$TOP"/liburing-glue/man/*.[0-9] "$TOP/tools/iopa-sum/iopa-sum.1" \
			"$IOPACTL/iopactl.8" "$TOP/Documentation/iopa.4"; do
		[ -f "$f" ] || continue
		echo "usr/share/man/man${f##*.}/${f##*/} $f"
	done
}
# libiopa's pages: installed with the footer "libiopa VERSION", VERSION
# from liburing-glue/Makefile (one source; the sources say "libiopa").
LIBV=$(sed -n 's/^VERSION_MAJOR := //p' "$TOP/liburing-glue/Makefile").$(sed -n 's/^VERSION_MINOR := //p' "$TOP/liburing-glue/Makefile")
check_man() {
	local rel src n=0
	while read -r rel src; do
		case $src in
		*/liburing-glue/man/*)
			check_file "$R/$rel" 644 || return 1
			sed '1,/^\.TH/s/^\(\.TH .*\) "libiopa"/\1 "libiopa '"$LIBV"'"/' "$src" |
				cmp - "$R/$rel" || return 1
			grep -q "^\.TH .* \"libiopa $LIBV\" " "$R/$rel" ||
				{ echo "footer: $(grep '^\.TH' "$R/$rel")"; return 1; } ;;
		*)
			check_file "$R/$rel" 644 "$src" || return 1 ;;
		esac
		n=$((n + 1))
	done < <(man_pages)
	echo "$n man pages"
}
t "man pages: iopa.4, libiopa's (3, 7; footer libiopa $LIBV), iopa-sum.1$([ ! -f "$IOPACTL/iopactl.8" ] ||
	echo ", iopactl.8"), 0644" check_man

t "usr/bin/iopa-sum, 0755" check_file "$R/usr/bin/iopa-sum" 755

check_iopactl() {
	local f
	f=$(find "$R/usr/bin" "$R/usr/sbin" -name iopactl 2>/dev/null | head -n 1)
	[ -n "$f" ] || { echo "no iopactl in usr/bin or usr/sbin"; return 1; }
	check_file "$f" 755
}
if [ -f "$IOPACTL/Makefile" ]; then
	t "iopactl in usr/bin or usr/sbin, 0755" check_iopactl
else
	skip "iopactl" "no tools/iopactl/Makefile"
fi

t "udev rule: usr/lib/udev/rules.d/60-iopa.rules, 0644" \
	check_file "$R/usr/lib/udev/rules.d/60-iopa.rules" 644 "$TOP/tools/udev/60-iopa.rules"
t "modules-load.d: usr/lib/modules-load.d/iopa.conf, 0644" \
	check_file "$R/usr/lib/modules-load.d/iopa.conf" 644 \
	"$TOP/tools/udev/iopa-modules-load.conf"
t "sysusers.d: usr/lib/sysusers.d/iopa.conf, 0644" \
	check_file "$R/usr/lib/sysusers.d/iopa.conf" 644 \
	"$TOP/tools/udev/iopa-sysusers.conf"
t "usr/sbin/iopa-knees, 0755" \
	check_file "$R/usr/sbin/iopa-knees" 755 "$TOP/tools/udev/iopa-knees"
check_unit() {
	local u=$R/usr/lib/systemd/system/iopa-knees.service
	check_file "$u" 644 || return 1
	grep -qx 'ExecStart=/usr/sbin/iopa-knees restore /var/lib/iopa/knees' "$u" &&
		! grep -q @SBINDIR@ "$u"
}
t "unit: usr/lib/systemd/system/iopa-knees.service, 0644, runs usr/sbin/iopa-knees" \
	check_unit
check_metrics_units() {
	local u=$R/usr/lib/systemd/system/iopa-metrics.service
	check_file "$u" 644 || return 1
	check_file "${u%.service}.timer" 644 "$TOP/tools/iopactl/iopa-metrics.timer" ||
		return 1
	grep -qx 'ExecStart=/usr/sbin/iopactl metrics --textfile /var/lib/prometheus/node-exporter' "$u" &&
		! grep -q @SBINDIR@ "$u" && grep -qx 'OnUnitActiveSec=15s' "${u%.service}.timer"
}
t "units: iopa-metrics.service (iopactl metrics --textfile) and .timer (15 s), 0644" \
	check_metrics_units

# The DKMS source tree: dkms.conf of this version, kernel/'s tracked
# sources and the uapi header, nothing built.
dkms_files() {
	echo dkms.conf
	local f
	if ! (cd "$TOP" && git ls-files kernel) 2>/dev/null; then
		echo kernel/Kbuild
		for f in "$TOP"/kernel/*.[ch]; do
			case "$f" in *.mod.c) ;; *) echo "kernel/${f##*/}" ;; esac
		done
	fi
	echo uapi/linux/iopa.h
}
check_dkms_src() {
	local d=$R/usr/src/iopa-$VER f
	[ -d "$d" ] || { echo "no $d"; return 1; }
	grep -qx "PACKAGE_VERSION=\"$VER\"" "$d/dkms.conf" ||
		{ echo "PACKAGE_VERSION of $d/dkms.conf is not $VER"; return 1; }
	for f in $(dkms_files); do
		check_file "$d/$f" 644 "$TOP/$f" || return 1
	done
	diff <(dkms_files | sort) <(cd "$d" && find . -type f | sed 's|^\./||' | sort)
}
t "DKMS source: usr/src/iopa-$VER/ (dkms.conf, kernel/ sources, uapi/), 0644" \
	check_dkms_src

# Nothing installed beyond the list (iopactl's own extras aside).
expected() {
	local f
	echo "lib/modules/$KVER/updates/$(basename "$R/lib/modules/$KVER/updates"/iopa.ko*)"
	echo usr/include/linux/iopa.h
	echo usr/include/libiopa.h
	for f in "$R"/usr/lib/libiopa.so*; do echo "usr/lib/${f##*/}"; done
	echo usr/lib/libiopa.a
	echo usr/lib/pkgconfig/libiopa.pc
	man_pages | cut -d' ' -f1
	echo usr/bin/iopa-sum
	echo usr/lib/udev/rules.d/60-iopa.rules
	echo usr/lib/modules-load.d/iopa.conf
	echo usr/lib/sysusers.d/iopa.conf
	echo usr/sbin/iopa-knees
	echo usr/lib/systemd/system/iopa-knees.service
	echo usr/lib/systemd/system/iopa-metrics.service
	echo usr/lib/systemd/system/iopa-metrics.timer
	dkms_files | sed "s|^|usr/src/iopa-$VER/|"
}
check_nothing_else() {
	local extra
	extra=$(comm -13 <(expected | sort -u) \
		<(cd "$R" && find . ! -type d | sed 's|^\./||' | sort) |
		{ if [ -f "$IOPACTL/Makefile" ]; then grep -v iopactl; else cat; fi } || true)
	[ -z "$extra" ] || { echo "not expected:"; echo "$extra"; return 1; }
}
t "nothing installed but the above" check_nothing_else

# A program built from the installed tree only: header, pkg-config file,
# library.
check_link() {
	local pcflags
	cat >"$S/prog.c" <<-'EOF'
	#include <stdio.h>
	#include <string.h>
	#include <linux/iopa.h>
	#include <libiopa.h>

	int main(void)
	{
		struct iopa_features f;
		int fd = iopa_open();

		if (fd < 0) {
			printf("iopa_open: %d (no module here)\n", fd);
			return 0;
		}
		memset(&f, 0, sizeof(f));
		printf("iopa_get_features: %d, abi %u (want %d)\n",
		       iopa_get_features(fd, &f), f.abi_version, IOPA_ABI_VERSION);
		return 0;
	}
	EOF
	pcflags=$(PKG_CONFIG_PATH=$R/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$R \
		pkg-config --cflags --libs libiopa)
	echo "pkg-config --cflags --libs libiopa: $pcflags"
	# shellcheck disable=SC2086
	cc -std=gnu11 -Wall -Wextra -Werror -MD -MF "$S/prog.d" -o "$S/prog" \
		"$S/prog.c" $pcflags || return 1
	if ! grep -q "$R/usr/include/libiopa.h" "$S/prog.d" ||
			! grep -q "$R/usr/include/linux/iopa.h" "$S/prog.d"; then
		echo "headers not from $R:"
		cat "$S/prog.d"
		return 1
	fi
	LD_LIBRARY_PATH=$R/usr/lib ldd "$S/prog" | grep -q "libiopa.so.[0-9]* => $R/usr/lib/" ||
		{ LD_LIBRARY_PATH=$R/usr/lib ldd "$S/prog"; return 1; }
	LD_LIBRARY_PATH=$R/usr/lib "$S/prog"
}
t "cc \$(pkg-config --cflags --libs libiopa) with the installed tree: builds, links, runs" \
	check_link

# ---- uninstall ---------------------------------------------------------------

t "make uninstall DESTDIR=... PREFIX=/usr (log: build/check-install/uninstall.log)" \
	logged "$LOG/uninstall.log" "${MK[@]}" uninstall

check_empty() {
	local left
	left=$(cd "$R" && find . ! -type d)
	[ -z "$left" ] || { echo "left behind:"; echo "$left"; return 1; }
}
t "uninstall leaves no files (only empty directories)" check_empty

# Nothing outside DESTDIR: no file named *iopa* in the system directories
# newer than the start, the same group and ld.so.cache, and neither log
# shows groupadd, depmod or ldconfig.
check_host() {
	local new
	new=$(find /usr /etc /var/lib /opt /srv -xdev -newer "$S/stamp" \
		-name '*iopa*' -print 2>/dev/null || true)
	[ -z "$new" ] || { echo "written outside DESTDIR:"; echo "$new"; return 1; }
	host_state | diff "$S/host.before" - ||
		{ echo "group or ld.so.cache changed"; return 1; }
	! grep -E '^(groupadd|depmod|ldconfig)( |$)' "$LOG/install.log" "$LOG/uninstall.log"
}
t "nothing written outside DESTDIR (no groupadd, depmod, ldconfig)" check_host

# INSTALL_MODULE=0 (DKMS installs the module): all the rest, no module.
check_no_module() {
	local d=$S/nomod
	rm -rf "$d"
	mkdir -p "$d"
	logged "$LOG/install-nomod.log" "${MK[@]/DESTDIR=$R/DESTDIR=$d}" \
		install INSTALL_MODULE=0 || return 1
	[ -z "$(find "$d" -path '*/lib/modules/*' -name 'iopa.ko*')" ] ||
		{ echo "a module was installed"; return 1; }
	[ -f "$d/usr/src/iopa-$VER/dkms.conf" ] &&
		[ -f "$d/usr/lib/udev/rules.d/60-iopa.rules" ] &&
		[ -f "$d/usr/include/linux/iopa.h" ]
}
t "make install INSTALL_MODULE=0: no module, the DKMS tree and the rest" check_no_module

# ---- a real host whose running kernel has no headers ---------------------

# `make install` with no DESTDIR, KDIR or KVER, where the running
# kernel's headers are missing (HOST_KDIR= stands for them): it must
# refuse, saying why, before it builds or installs anything, and without
# falling back to downloaded headers.  Run with -n: recipes are only
# printed (kbuild's sub-make too), so a refusal that failed could still
# install nothing; the deps step it prints must not install packages.
check_refuse() {
	local out rc=0
	# (headers_612 exported KDIR and KVER: not here.)
	out=$(env -u KDIR -u KVER make -n -C "$TOP" install \
		HOST_KDIR=/nonexistent/build 2>&1) || rc=$?
	echo "$out" | tail -n 5
	[ "$rc" != 0 ] || { echo "make install did not fail"; return 1; }
	echo "$out" | grep -q "no headers of the running kernel $(uname -r)" ||
		{ echo "no clear message"; return 1; }
	if echo "$out" | grep -q 'fetch-kernel'; then
		echo "fell back to fetched headers"
		return 1
	fi
	echo "$out" | grep -q 'deps.sh --no-install build' ||
		{ echo "deps step may install packages"; return 1; }
}
t "make install (no DESTDIR, KDIR, KVER) without the running kernel's headers: refuses, clearly" \
	check_refuse

# `make` builds the module, the library and the tools: it fetches no
# kernel source for the selftests (`make -n`: what it would run).
check_make_fetches_nothing() {
	local out
	out=$(make -n -C "$TOP" KDIR="$KDIR" 2>&1) || { echo "$out" | tail; return 1; }
	if echo "$out" | grep -E 'fetch-ksrc|selftests/iopa'; then
		echo "make would fetch the kernel source or build the selftests"
		return 1
	fi
}
t "make (all): no kselftest source fetched, no selftests built" \
	check_make_fetches_nothing

# `make` as root installs no package unasked (Integrators 2, item 4):
# deps.sh says what is missing; `make deps` installs.
check_make_installs_nothing() {
	local out
	out=$(make -n -C "$TOP" KDIR="$KDIR" tools 2>&1) || { echo "$out" | tail; return 1; }
	echo "$out" | grep -q 'deps.sh --no-install build' ||
		{ echo "make tools may install packages"; echo "$out" | grep deps; return 1; }
}
t "make tools: deps.sh --no-install (no apt-get unasked)" check_make_installs_nothing

# `make lib`, then `make install-lib` as nobody into a scratch DESTDIR,
# with no kernel headers: the library's files only, nothing of the module.
check_install_lib() {
	local L out rc=0

	# not under $S (0700, root's): nobody's own scratch root
	L=$(mktemp -d "${TMPDIR:-/tmp}/iopa-libroot.XXXXXX") || return 1
	check_install_lib_in "$L" || rc=$?
	rm -rf "$L"
	return $rc
}
check_install_lib_in() {
	local L=$1 out
	logged "$LOG/lib.log" make -C "$TOP" lib || return 1
	out=$(make -n -C "$TOP" lib HOST_KDIR=/nonexistent 2>&1)
	if echo "$out" | grep -E 'deps\.sh|fetch-kernel|M=.*kernel'; then
		echo "make lib would install packages or touch the kernel"
		return 1
	fi
	chown nobody "$L" || return 1
	logged "$LOG/install-lib.log" setpriv --reuid=nobody --regid=nogroup \
		--clear-groups env -u KDIR -u KVER HOME="$L" \
		make -C "$TOP" install-lib DESTDIR="$L" PREFIX=/usr \
		HOST_KDIR=/nonexistent/build || return 1
	out=$(cd "$L" && find . -type f -o -type l | sed 's|^\./||' |
		grep -Ev '^usr/lib/libiopa\.(so(\.[0-9]+)*|a)$|^usr/lib/pkgconfig/libiopa\.pc$|^usr/include/(libiopa|linux/iopa)\.h$|^usr/share/man/man3/iopa_[a-z_]+\.3$|^usr/share/man/man7/libiopa\.7$')
	[ -z "$out" ] || { echo "not the library's: $out"; return 1; }
	[ -f "$L/usr/lib/libiopa.a" ] && [ -f "$L/usr/include/libiopa.h" ] &&
		[ -f "$L/usr/lib/pkgconfig/libiopa.pc" ] ||
		{ echo "library files missing"; return 1; }
	logged "$LOG/uninstall-lib.log" setpriv --reuid=nobody --regid=nogroup \
		--clear-groups make -C "$TOP" uninstall-lib DESTDIR="$L" \
		PREFIX=/usr || return 1
	out=$(cd "$L" && find . -type f -o -type l)
	[ -z "$out" ] || { echo "left after uninstall-lib: $out"; return 1; }
}
t "make lib; make install-lib as nobody, no kernel headers: the library only; uninstall-lib" \
	check_install_lib

# The library's host tests without the kernel's kselftest harness: the
# others run, the pool's test says it was skipped.
check_lib_test_without_ksft() {
	local out rc=0
	out=$(make -C "$TOP/liburing-glue" test KSFT_INC=/nonexistent 2>&1) || rc=$?
	echo "$out" | tail -n 3
	[ "$rc" = 0 ] && echo "$out" | grep -q 'pool in process (skipped: no kselftest harness'
}
t "make -C liburing-glue test without a kselftest harness: runs, says what it skipped" \
	check_lib_test_without_ksft

finish
