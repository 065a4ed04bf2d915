#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build iopa.ko against the fetched Debian headers of a series, out of the
# source tree: kbuild writes its objects next to the sources, so kernel/ and
# uapi/ are copied (same relative layout: kernel/Kbuild uses
# -I$(src)/../uapi) to build/kbuild/<SERIES>/ and built there with W=1.
#
#   tools/guest/build-module.sh SERIES        SERIES: 6.12 | 6.1 | debug
#
# Prints the path of the .ko on stdout; the build output goes to stderr and
# to build/kbuild/<SERIES>/build.log.  Exit status is make's.  Unchanged
# sources (same content, same kernel) are not rebuilt: the saved log is
# shown again.
set -eu

SERIES=${1:?usage: build-module.sh 6.12|6.1|debug}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${IOPA_CACHE:-$TOP/.cache}
OUT=$TOP/build/kbuild/$SERIES

"$TOP/tools/guest/deps.sh" build
"$TOP/tools/guest/fetch-kernel.sh" "$SERIES" >/dev/null
# shellcheck disable=SC1090
. "$CACHE/kernel/$SERIES.env"

# Sources only: not the objects of an in-tree build.
srcs() {	# what the DKMS source tree has: dkms.conf (the version), kernel/, uapi/
	(cd "$TOP" && find dkms.conf kernel uapi -type f \
		! -name '*.o' ! -name '*.ko' ! -name '*.mod' ! -name '*.mod.c' \
		! -name '*.cmd' ! -name 'Module.symvers' ! -name 'modules.order' \
		! -name '*.a' ! -name '.*.d' ! -name '*~' | LC_ALL=C sort)
}

mkdir -p "$OUT"
# One build at a time per series (others may run checks or a demo).
exec 9>"$OUT.lock"
flock 9

stamp=$( { echo "$KVER"; srcs | (cd "$TOP" && xargs -r sha256sum); } |
	sha256sum | cut -c1-16)
if [ -f "$OUT/stamp" ] && [ "$(cat "$OUT/stamp")" = "$stamp" ] &&
   [ -f "$OUT/kernel/iopa.ko" ]; then
	cat "$OUT/build.log" >&2
	echo "$OUT/kernel/iopa.ko"
	exit 0
fi

rm -rf "$OUT/kernel" "$OUT/uapi" "$OUT/dkms.conf" "$OUT/stamp"
srcs | (cd "$TOP" && cpio --quiet -pdm "$OUT")
set +e
make -C "$KDIR" M="$OUT/kernel" W=1 modules >"$OUT/build.log" 2>&1
rc=$?
set -e
cat "$OUT/build.log" >&2
[ $rc = 0 ] || exit $rc
echo "$stamp" >"$OUT/stamp"
echo "$OUT/kernel/iopa.ko"
