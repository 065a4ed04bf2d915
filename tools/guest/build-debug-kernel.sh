#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build a 6.12 kernel with the kernel's own bug detectors from Debian's
# linux-source-6.12, for `make check-debug`, `make fuzz` and `make stress`.
#
#   tools/guest/build-debug-kernel.sh [--print-env]
#
# The tree comes from the linux-source-6.12 package (downloaded once, kept
# in .cache/debug-kernel/); the configuration is x86_64_defconfig plus the
# fragment tools/guest/debug.config (KASAN, lockdep, DEBUG_ATOMIC_SLEEP,
# kmemleak, debugobjects, list and sg debugging, UBSAN bounds, KFENCE, and
# what the guest, the module and the selftests need).  The result is
# installed under .cache/debug-kernel/root and described, like a fetched
# Debian kernel, by .cache/kernel/debug.env (KVER, KDIR, VMLINUZ, MODDIR),
# so run-guest.sh --series debug and build-module.sh debug use it.
#
# Cached: nothing is rebuilt while the package version and debug.config are
# unchanged (stamp in .cache/debug-kernel/.stamp); an interrupted build
# resumes where it stopped.  The first build takes long (about an hour on
# a 2-core machine: see Documentation/iopa-hardening.rst for the figure
# measured); progress goes to .cache/debug-kernel/build.log.
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${IOPA_CACHE:-$TOP/.cache}
D=$CACHE/debug-kernel
# shellcheck source=tools/guest/linux-source.sh
. "$TOP/tools/guest/linux-source.sh"
PKG=$LINUX_SOURCE_PKG
FRAG=$TOP/tools/guest/debug.config
JOBS=${JOBS:-$(nproc)}

log() { echo "build-debug-kernel: $*" >&2; }

print_env=0
[ "${1:-}" != --print-env ] || print_env=1

"$TOP/tools/guest/deps.sh" build debug >&2

ver=$(linux_source_version)
[ -n "$ver" ] || { log "apt knows no $PKG"; exit 1; }
stamp="$PKG $ver $(sha256sum "$FRAG" | cut -c1-16)"

if [ -f "$D/.stamp" ] && [ "$(cat "$D/.stamp")" = "$stamp" ] &&
   [ -f "$CACHE/kernel/debug.env" ]; then
	[ $print_env = 0 ] || cat "$CACHE/kernel/debug.env"
	exit 0
fi

mkdir -p "$D"
# The source tree: once per package version.
if [ "$(cat "$D/.src-version" 2>/dev/null)" != "$ver" ]; then
	log "downloading $PKG $ver (~150 MB)"
	rm -rf "$D/src" "$D"/*.deb
	mkdir -p "$D/src"
	linux_source_tar "$ver" "$D" |
		tar -xf - -C "$D/src" --strip-components=1
	rm -f "$D"/*.deb
	echo "$ver" >"$D/.src-version"
fi

cd "$D/src"
log "configuring (x86_64_defconfig + $(basename "$FRAG"))"
make -s ARCH=x86_64 x86_64_defconfig >&2
scripts/kconfig/merge_config.sh -m .config "$FRAG" >&2
make -s ARCH=x86_64 olddefconfig >&2
# Every option of the fragment must have survived olddefconfig.
missing=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*) grep -qx "$line" .config ||
		{ log "not set as asked: $line"; missing=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		! grep -q "^$opt=" .config ||
			{ log "not unset: $opt"; missing=1; } ;;
	esac
done <"$FRAG"
[ $missing = 0 ] || { log "debug.config does not apply to $ver"; exit 1; }

log "building with $JOBS jobs (log: $D/build.log)"
t0=$(date +%s)
if ! make ARCH=x86_64 -j"$JOBS" bzImage modules >"$D/build.log" 2>&1; then
	tail -30 "$D/build.log" >&2
	exit 1
fi
kver=$(make -s ARCH=x86_64 kernelrelease)
rm -rf "$D/root"
make -s ARCH=x86_64 INSTALL_MOD_PATH="$D/root" INSTALL_MOD_STRIP=1 \
	modules_install >>"$D/build.log" 2>&1
rm -f "$D/root/lib/modules/$kver/build" "$D/root/lib/modules/$kver/source"
log "built $kver in $(( $(date +%s) - t0 )) s"

mkdir -p "$CACHE/kernel"
cat >"$CACHE/kernel/debug.env" <<EOF
KVER=$kver
KDIR=$D/src
VMLINUZ=$D/src/arch/x86/boot/bzImage
MODDIR=$D/root/lib/modules/$kver
EOF
echo "$stamp" >"$D/.stamp"
[ $print_env = 0 ] || cat "$CACHE/kernel/debug.env"
