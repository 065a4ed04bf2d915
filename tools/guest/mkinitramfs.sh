#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the initramfs for a guest run: a cached base archive (busybox, kernel
# modules, fio, mke2fs and their libraries, /init) plus a small per-run
# archive (the guest script and the project's files), concatenated.
#
#   tools/guest/mkinitramfs.sh [--series 6.12] [--ko PATH] --out FILE
#                              SCRIPT [FILES...]
#
# In the guest:
#   /init                mounts proc, sys, dev, tmp; loads the virtio modules;
#                        runs /guest-script from /iopa; prints
#                        "IOPA-GUEST-EXIT rc=N"; poweroff -f
#   /guest-script        SCRIPT (run with busybox sh)
#   /iopa/kernel/iopa.ko --ko PATH (default kernel/iopa.ko, if built)
#   /iopa/selftests/iopa/<prog>   the selftest programs, listed one per line
#                        in /iopa/selftests/iopa/PROGS
#   /iopa/tools/iopa-demo/iopa-demo  and the *.sh next to it, if present
#   /iopa/<path>         each of FILES (given relative to the repository, or
#                        absolute: then /iopa/<basename>)
#   modprobe NAME        works for the modules in GUEST_MODULES (decompressed,
#                        with a modules.dep), e.g. modprobe null_blk nr_devices=1
# Environment in the guest: IOPA_KVER, IOPA_SERIES, IOPA_KO, IOPA_DISK (the
# extra virtio disk, /dev/vda, if the kernel sees one), PATH.
#
# Knobs (environment): GUEST_MODULES (modules to carry, with dependencies),
# GUEST_EXTRA_MODULES (added to them), GUEST_BINS (host programs to carry,
# with their libraries), IOPA_EXCLUDE (repository paths not to carry, e.g.
# stale selftest binaries).
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${IOPA_CACHE:-$TOP/.cache}

SERIES=6.12
KO=
OUT=
while [ $# -gt 0 ]; do
	case "$1" in
	--series) SERIES=$2; shift 2 ;;
	--ko) KO=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "mkinitramfs: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
SCRIPT=${1:?usage: mkinitramfs.sh [--series S] [--ko PATH] --out FILE SCRIPT [FILES...]}
shift
[ -n "$OUT" ] || { echo "mkinitramfs: --out FILE is required" >&2; exit 2; }
[ -f "$SCRIPT" ] || { echo "mkinitramfs: no script $SCRIPT" >&2; exit 2; }

GUEST_MODULES=${GUEST_MODULES:-"virtio_pci virtio_blk null_blk loop brd mq-deadline bfq
	scsi_debug dm_delay dm_flakey ublk_drv"}
GUEST_MODULES="$GUEST_MODULES ${GUEST_EXTRA_MODULES:-}"
GUEST_BINS=${GUEST_BINS:-"/usr/bin/fio /usr/sbin/mke2fs /usr/bin/udevadm /usr/bin/trace-cmd"}
# Modules /init loads at boot (for the --disk virtio disk).
BOOT_MODULES="virtio_pci virtio_blk"

log() { echo "mkinitramfs: $*" >&2; }

# run-guest.sh has just fetched (resolved) the kernel; on our own, fetch it.
[ -f "$CACHE/kernel/$SERIES.env" ] ||
	"$TOP/tools/guest/fetch-kernel.sh" "$SERIES" >/dev/null
# shellcheck disable=SC1090
. "$CACHE/kernel/$SERIES.env"
KROOT=${MODDIR%/lib/modules/*}

# Copy a host file to the same path under $1 (following symlinks), unless
# the base archive (file list $BASE_LIST, once built) has it already.
BASE_LIST=
put() {
	local dst=$1$2
	[ -e "$dst" ] && return 0
	[ -z "$BASE_LIST" ] || ! grep -qxF ".$2" "$BASE_LIST" || return 0
	mkdir -p "$(dirname "$dst")"
	cp -L "$2" "$dst"
}

# Copy the shared libraries an ELF program needs (and the loader) into $1.
put_libs() {
	local root=$1 bin=$2 lib
	file_is_elf "$bin" || return 0
	for lib in $(ldd "$bin" 2>/dev/null |
		     awk '/=> \// { print $3 } /^[ \t]*\// { print $1 }'); do
		put "$root" "$lib"
	done
}

file_is_elf() {
	[ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' \n')" = '177ELF' ]
}

# --- the base archive, cached per kernel and content of this recipe ---------
key=$( {
	echo "$KVER $GUEST_MODULES $GUEST_BINS $BOOT_MODULES"
	cat "$0" "$TOP/tools/guest/init"
	for b in /bin/busybox $GUEST_BINS; do ls -lL "$b" 2>/dev/null || true; done
} | sha256sum | cut -c1-16)
BASE=$CACHE/guest/$KVER/base-$key.cpio

build_base() {
	local st m f mods rel
	st=$(mktemp -d "${TMPDIR:-/tmp}/iopa-initramfs.XXXXXX")
	mkdir -p "$st"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root,mnt}
	# mktemp -d made the root 0700: other users (the security tests
	# run as nobody) could reach no path at all
	chmod 755 "$st"
	chmod 1777 "$st/tmp"
	mkdir -p "$st/lib/modules/$KVER"

	cp /bin/busybox "$st/bin/busybox"
	for a in $(/bin/busybox --list); do
		[ "$a" = busybox ] || ln -s busybox "$st/bin/$a"
	done

	for b in $GUEST_BINS; do
		if [ ! -x "$b" ]; then
			log "warning: no $b on the host, not in the guest"
			continue
		fi
		put "$st" "$b"
		put_libs "$st" "$b"
	done
	ln -sf mke2fs "$st/usr/sbin/mkfs.ext4"
	[ ! -f /etc/mke2fs.conf ] || put "$st" /etc/mke2fs.conf

	# Kernel modules with their dependencies, decompressed (busybox's
	# insmod does not read .xz), and a modules.dep for busybox modprobe.
	[ -f "$MODDIR/modules.dep" ] || depmod -b "$KROOT" "$KVER"
	mods=""
	for m in $GUEST_MODULES; do
		f=$(modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" 2>/dev/null) || {
			log "note: no module $m in $KVER"
			continue
		}
		mods="$mods $(echo "$f" | awk '$1 == "insmod" { print $2 }')"
	done
	for f in $(echo "$mods" | tr ' ' '\n' | sort -u); do
		rel=${f#"$MODDIR"/}
		mkdir -p "$st/lib/modules/$KVER/$(dirname "$rel")"
		case "$f" in
		*.xz) xz -dc "$f" >"$st/lib/modules/$KVER/${rel%.xz}" ;;
		*.zst) zstd -qdc "$f" >"$st/lib/modules/$KVER/${rel%.zst}" ;;
		*) cp "$f" "$st/lib/modules/$KVER/$rel" ;;
		esac
	done
	for f in modules.builtin modules.builtin.modinfo modules.order; do
		[ ! -f "$MODDIR/$f" ] || cp "$MODDIR/$f" "$st/lib/modules/$KVER/"
	done
	depmod -b "$st" "$KVER"
	# Boot-time modules that are modules in this kernel (not built in).
	: >"$st/etc/iopa-boot-modules"
	for m in $BOOT_MODULES; do
		f=$(modprobe -d "$KROOT" -S "$KVER" --show-depends "$m" 2>/dev/null || true)
		case "$f" in *insmod*) echo "$m" >>"$st/etc/iopa-boot-modules" ;; esac
	done

	cat >"$st/etc/iopa-guest.env" <<EOF
IOPA_KVER=$KVER
IOPA_SERIES=$SERIES
EOF
	install -m 755 "$TOP/tools/guest/init" "$st/init"

	mkdir -p "$(dirname "$BASE")"
	# Drop bases of older recipes (not the temporary files of others).
	rm -f "$(dirname "$BASE")"/base-*.cpio "$(dirname "$BASE")"/base-*.cpio.list
	# Other guest runs may be reading the cache: write, then rename.
	(cd "$st" && find . | LC_ALL=C sort) >"$BASE.list.$$"
	(cd "$st" && cpio --quiet -o -H newc -R 0:0 <"$BASE.list.$$") >"$BASE.$$"
	mv "$BASE.$$" "$BASE"
	mv "$BASE.list.$$" "$BASE.list"
	rm -rf "$st"
	log "base $(du -h "$BASE" | cut -f1) -> $BASE"
}
if [ ! -f "$BASE" ] || [ ! -f "$BASE.list" ]; then
	build_base
fi
BASE_LIST=$BASE.list

# --- the per-run archive -----------------------------------------------------
st=$(mktemp -d "${TMPDIR:-/tmp}/iopa-initramfs.XXXXXX")
trap 'rm -rf "$st"' EXIT
mkdir -p "$st/iopa"
install -m 755 "$SCRIPT" "$st/guest-script"

# Copy repository-relative or absolute path $1 to /iopa/..., with libraries.
put_proj() {
	local src=$1 rel
	case "$src" in
	"$TOP"/*) rel=${src#"$TOP"/} ;;
	/*) rel=$(basename "$src") ;;
	*) rel=$src; src=$TOP/$src ;;
	esac
	case " ${IOPA_EXCLUDE:-} " in
	*" $rel "*) log "leaving out $rel (IOPA_EXCLUDE)"; return 0 ;;
	esac
	[ -e "$src" ] || { log "warning: no $src"; return 0; }
	mkdir -p "$st/iopa/$(dirname "$rel")"
	cp -rL "$src" "$st/iopa/$rel"
	if [ -f "$src" ] && [ -x "$src" ]; then
		put_libs "$st" "$src"
	fi
}

# The module.
[ -n "$KO" ] || KO=$TOP/kernel/iopa.ko
if [ -f "$KO" ]; then
	mkdir -p "$st/iopa/kernel"
	cp "$KO" "$st/iopa/kernel/iopa.ko"
else
	log "warning: no $KO (build it first); /iopa/kernel/iopa.ko missing"
fi

# The selftest programs.
progs=$("$TOP/tools/guest/list-selftests.sh")
mkdir -p "$st/iopa/selftests/iopa"
: >"$st/iopa/selftests/iopa/PROGS"
for p in $progs; do
	echo "$p" >>"$st/iopa/selftests/iopa/PROGS"
	put_proj "selftests/iopa/$p"
done
# selftests/iopa/settings (kselftest timeout) and config, for the runner.
for f in settings config; do
	[ ! -f "$TOP/selftests/iopa/$f" ] || put_proj "selftests/iopa/$f"
done

# The demo program and its scripts.
[ ! -x "$TOP/tools/iopa-demo/iopa-demo" ] || put_proj tools/iopa-demo/iopa-demo
for f in "$TOP"/tools/iopa-demo/*.sh; do
	[ ! -f "$f" ] || put_proj "$f"
done

# iopa-sum (put_libs brings libcrypto along), for the demo and its check.
# The udev rule, applied by guest-selftests.sh; iopactl and its check.
put_proj tools/udev/60-iopa.rules
for f in tools/iopactl/iopactl tools/iopactl/ctl-load tools/iopactl/guest-check.sh; do
	[ ! -f "$TOP/$f" ] || put_proj "$f"
done

for f in tools/iopa-sum/iopa-sum tools/iopa-sum/mktree tools/iopa-sum/check.sh; do
	[ ! -f "$TOP/$f" ] || put_proj "$f"
done
for f in "$@"; do
	put_proj "$f"
done

mkdir -p "$(dirname "$OUT")"
{
	cat "$BASE"
	(cd "$st" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0)
} >"$OUT.$$"
mv "$OUT.$$" "$OUT"
log "initramfs $(du -h "$OUT" | cut -f1) -> $OUT"
