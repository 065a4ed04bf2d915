#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Which QEMU accelerator runs our guests on this host: prints "kvm" or
# "tcg" (and why, on stderr).  KVM when /dev/kvm can be opened and a probe
# boot of the guest kernel under it reaches a tiny /init; TCG otherwise
# (no /dev/kvm, no access, or a host whose KVM dies in the guest: some
# nested or emulated hosts answer "KVM internal error").  The answer is
# cached per host kernel, QEMU build and guest kernel, so the probe boots
# once; IOPA_ACCEL=kvm|tcg overrides it.
#
#   tools/guest/probe-accel.sh VMLINUZ
set -eu

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${IOPA_CACHE:-$TOP/.cache}
VMLINUZ=${1:?usage: probe-accel.sh VMLINUZ}

case "${IOPA_ACCEL:-}" in
kvm|tcg) echo "$IOPA_ACCEL"; exit 0 ;;
"") ;;
*) echo "probe-accel: IOPA_ACCEL must be kvm or tcg" >&2; exit 2 ;;
esac

if [ ! -e /dev/kvm ]; then
	echo "probe-accel: no /dev/kvm: TCG" >&2
	echo tcg
	exit 0
fi
if ! { exec 3<>/dev/kvm; } 2>/dev/null; then
	echo "probe-accel: /dev/kvm not accessible to $(id -un): TCG" >&2
	echo tcg
	exit 0
fi
exec 3>&-

qemu=$(command -v qemu-system-x86_64)
key=$( { uname -r; ls -lL "$qemu"; ls -lL "$VMLINUZ"; } | sha256sum | cut -c1-16)
cached=$CACHE/guest/accel-$key
if [ -f "$cached" ]; then
	cat "$cached"
	exit 0
fi
mkdir -p "$CACHE/guest"

# A probe initramfs: busybox and an /init that says so and powers off.
st=$(mktemp -d "${TMPDIR:-/tmp}/iopa-probe.XXXXXX")
trap 'rm -rf "$st"' EXIT
mkdir -p "$st/bin"
cp /bin/busybox "$st/bin/busybox"
printf '#!/bin/busybox sh\n/bin/busybox echo IOPA-KVM-PROBE-OK\n/bin/busybox poweroff -f\n' \
	>"$st/init"
chmod 755 "$st/init"
(cd "$st" && find . | cpio -o -H newc --quiet) >"$st.cpio"
trap 'rm -rf "$st" "$st.cpio"' EXIT

out=$(timeout -k 5 60 "$qemu" -accel kvm -cpu host -smp 1 -m 256 \
	-display none -vga none -monitor none -serial stdio -no-reboot \
	-nodefaults -kernel "$VMLINUZ" -initrd "$st.cpio" \
	-append "console=ttyS0 panic=-1 rdinit=/init" </dev/null 2>&1 || true)
if grep -q IOPA-KVM-PROBE-OK <<<"$out"; then
	echo "probe-accel: KVM boots the guest kernel: KVM" >&2
	echo kvm | tee "$cached"
else
	why=$(grep -m1 -iE 'kvm|error' <<<"$out" || true)
	echo "probe-accel: KVM does not run the guest here (${why:-no marker}): TCG" >&2
	echo tcg | tee "$cached"
fi
