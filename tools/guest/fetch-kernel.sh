#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch the newest Debian cloud kernel of a series (image + headers) into the
# repository's cache, without installing anything on the host.
#
#   tools/guest/fetch-kernel.sh [--print-kdir] SERIES       SERIES: 6.12 | 6.1 | debug
#
# Result: .cache/kernel/<KVER>/root/ holds the dpkg -x of the image, the
# headers, their -common package and linux-kbuild, so the headers' relative
# symlinks resolve inside that root; .cache/kernel/<SERIES>.env says
#   KVER=     e.g. 6.12.117+deb12-cloud-amd64
#   KDIR=     root/usr/src/linux-headers-<KVER> (for make -C $KDIR M=...)
#   VMLINUZ=  root/boot/vmlinuz-<KVER>
#   MODDIR=   root/lib/modules/<KVER>
# A second run with the same newest version downloads nothing.  Progress goes
# to stderr; with --print-kdir the KDIR is printed on stdout.
set -eu

print_kdir=0
if [ "${1:-}" = --print-kdir ]; then
	print_kdir=1
	shift
fi
SERIES=${1:?usage: fetch-kernel.sh [--print-kdir] 6.12|6.1|debug}
TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${IOPA_CACHE:-$TOP/.cache}/kernel
ENVF=$CACHE/$SERIES.env

log() { echo "fetch-kernel: $*" >&2; }

case "$SERIES" in
debug)
	# Not fetched: built from linux-source-6.12 with the bug detectors on.
	"$TOP/tools/guest/build-debug-kernel.sh" >&2
	# shellcheck disable=SC1090
	[ $print_kdir = 0 ] || { . "$ENVF"; echo "$KDIR"; }
	exit 0 ;;
6.12) name_re='^linux-headers-(6\.12\.[0-9]+\+deb12-cloud-amd64)$' ;;
6.1) name_re='^linux-headers-(6\.1\.0-[0-9]+-cloud-amd64)$' ;;
*) log "unknown series '$SERIES' (want 6.12, 6.1 or debug)"; exit 2 ;;
esac

# Newest KVER of the series for which the headers and the unsigned image
# both have a candidate, of the same Debian version.  Prints "KVER VERSION".
resolve() {
	local kver cands
	apt-cache pkgnames "linux-headers-$SERIES" 2>/dev/null |
		sed -nE "s/$name_re/\1/p" | sort -rV |
	while read -r kver; do
		# "Candidate:" of the headers, then of the image (one apt-cache run).
		cands=$(apt-cache policy "linux-headers-$kver" \
				"linux-image-$kver-unsigned" 2>/dev/null |
			awk '/^[^ ]/ { pkg = $1 }
			     $1 == "Candidate:" && $2 != "(none)" { print pkg, $2 }')
		set -- $cands
		if [ $# = 4 ] && [ "$2" = "$4" ]; then
			echo "$kver $2"
			break
		fi
	done
}

found=$(resolve || true)
if [ -z "$found" ] && [ "$(id -u)" = 0 ]; then
	log "no $SERIES cloud kernel in the apt lists; running apt-get update"
	apt-get update -qq >&2
	found=$(resolve || true)
fi
if [ -z "$found" ]; then
	# Offline, or no apt lists: fall back to what is cached.
	if [ -f "$ENVF" ]; then
		log "cannot resolve $SERIES from apt; using cached $ENVF"
		# shellcheck disable=SC1090
		. "$ENVF"
		[ $print_kdir = 0 ] || echo "$KDIR"
		exit 0
	fi
	log "no linux-headers/linux-image-*-unsigned pair found for $SERIES"
	exit 1
fi
set -- $found
KVER=$1
VER=$2
DIR=$CACHE/$KVER
ROOT=$DIR/root
KDIR=$ROOT/usr/src/linux-headers-$KVER

if [ ! -f "$DIR/.complete" ]; then
	log "fetching $KVER ($VER)"
	# The headers' own dependencies: linux-headers-*-common, linux-kbuild-*.
	deps=$(apt-cache depends "linux-headers-$KVER=$VER" |
		awk '$1 == "Depends:" { print $2 }' |
		grep -E '^linux-(headers-.*-common|kbuild-)' || true)
	pkgs="linux-image-$KVER-unsigned linux-headers-$KVER $deps"
	rm -rf "$DIR"
	mkdir -p "$DIR/debs" "$ROOT"
	specs=""
	aptopt=""
	# As root, apt drops to user _apt, which cannot write into our cache.
	[ "$(id -u)" != 0 ] || aptopt="-o APT::Sandbox::User=root"
	for p in $pkgs; do
		specs="$specs $p=$VER"
	done
	# shellcheck disable=SC2086
	if ! (cd "$DIR/debs" && apt-get download -q $aptopt $specs >&2); then
		# Stale lists name a version the mirror dropped: refresh, retry.
		[ "$(id -u)" = 0 ] && apt-get update -qq >&2
		# shellcheck disable=SC2086
		(cd "$DIR/debs" && apt-get download -q $aptopt $specs >&2)
	fi
	for deb in "$DIR"/debs/*.deb; do
		dpkg -x "$deb" "$ROOT"
	done
	rm -rf "$DIR/debs"
	[ -f "$KDIR/Makefile" ] || { log "no $KDIR/Makefile after extraction"; exit 1; }
	[ -f "$ROOT/boot/vmlinuz-$KVER" ] || { log "no vmlinuz-$KVER"; exit 1; }
	touch "$DIR/.complete"
	# Drop older point releases of this series from the cache.
	for old in "$CACHE"/*/; do
		old=${old%/}
		o=${old##*/}
		[ "$o" != "$KVER" ] || continue
		[[ "linux-headers-$o" =~ $name_re ]] && rm -rf "$old"
	done
fi

# Debian's per-flavour Makefile is one line "include /usr/src/...-common/
# Makefile", and lib/modules/<KVER>/{build,source} are absolute links: point
# them into our root (again on every run, in case the checkout moved).
sed -i -E "s|^include .*/usr/src/|include $ROOT/usr/src/|" "$KDIR/Makefile"
for l in build source; do
	lnk=$ROOT/lib/modules/$KVER/$l
	if [ -L "$lnk" ]; then
		t=$(readlink "$lnk")
		case "$t" in /*) ln -sfn "../../..$t" "$lnk" ;; esac
	fi
done

tmp=$ENVF.tmp.$$
cat >"$tmp" <<EOF
KVER=$KVER
KDIR=$KDIR
VMLINUZ=$ROOT/boot/vmlinuz-$KVER
MODDIR=$ROOT/lib/modules/$KVER
EOF
mv "$tmp" "$ENVF"
log "$SERIES -> $KVER ($ENVF)"
[ $print_kdir = 0 ] || echo "$KDIR"
exit 0
