#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR MIT)
#
# libiopa's host tests (`make test` in liburing-glue/): nothing here needs
# the iopa module.  One TAP line per test; the last line is
# "N passed, M failed"; exit status 0 only if M = 0.
#
#   tests/host/run.sh            (from liburing-glue/, after `make all`)
#
# Environment: CC, CXX (default cc, c++); INPROC_TEST empty: no kselftest
# harness, the pool-in-process test skipped (the Makefile sets it).
set -u

cd "$(dirname "$0")/../.." || exit 2
# libiopa.so.MAJOR.MINOR as the Makefile builds it.
VERSION=$(sed -n "s/^VERSION_MAJOR := //p" Makefile).$(sed -n "s/^VERSION_MINOR := //p" Makefile)
LIBDIR=$PWD
OUT=$LIBDIR/tests/host/out
rm -rf "$OUT"
mkdir -p "$OUT"
CC=${CC:-cc}
CXX=${CXX:-c++}
WARN="-Wall -Wextra -Werror"
INC="-Iinclude -I../uapi"

n=0 passed=0 failed=0
t() {	# NAME COMMAND...: one test; its output goes to $OUT/NAME.log
	local name=$1 log
	shift
	n=$((n + 1))
	log=$OUT/$(echo "$name" | tr ' /+' '___').log
	if "$@" >"$log" 2>&1; then
		passed=$((passed + 1))
		echo "ok $n $name"
	else
		failed=$((failed + 1))
		echo "not ok $n $name"
		sed 's/^/#   /' "$log" | tail -n 30
	fi
}

echo "TAP version 13"

# ---- the SQE helpers and the wrappers' error paths ----------------------------
t "sqe helpers fill the SQE" ./tests/host/sqe
t "wrappers: -errno paths (libiopa.so)" ./tests/host/wrappers
t "wrappers: -errno paths (libiopa.a)" ./tests/host/wrappers-static

# ---- the pool without the module: one line per harness test -------------------
if [ -z "${INPROC_TEST-tests/host/inproc}" ] || [ ! -x ./tests/host/inproc ]; then
	# built only with the kernel's kselftest harness (KSFT_INC)
	t "pool in process (skipped: no kselftest harness in KSFT_INC; make -C .. ksft fetches it)" true
else
	./tests/host/inproc >"$OUT/inproc.log" 2>&1
	inproc_rc=$?
	while read -r line; do
		case $line in
		"ok "*" # SKIP"*) t "pool in process: ${line#ok * } (skipped)" true ;;
		"ok "*) t "pool in process: $(echo "$line" | cut -d' ' -f3-)" true ;;
		"not ok "*) t "pool in process: $(echo "$line" | cut -d' ' -f4-)" \
			sh -c "grep -v '^ok ' '$OUT/inproc.log'; false" ;;
		esac
	done < <(grep -E '^(not )?ok [0-9]+ ' "$OUT/inproc.log")
	t "pool in process: the test program exits 0" test "$inproc_rc" = 0
fi

# ---- the examples: each passes, or says it needs the module ------------------
if [ ! -e /dev/iopa ]; then
	t "examples/run.sh without the module: pool-sum runs, the others skip, saying why" \
		sh -c 'sh examples/run.sh >"$0" 2>&1; rc=$?; cat "$0";
		       [ $rc = 0 ] && grep -q "# SKIP needs the module" "$0"' "$OUT/examples.tap"
fi

# ---- the header as C and C++ --------------------------------------------------
# GNU modes, and strict ISO C and C++ with -pedantic (Integrators 2: under
# -std=c99 <libiopa.h> failed, libc's <string.h> before <liburing.h>).
for std in gnu99 gnu11 gnu17 c99 c11 c17; do
	case $std in c*) ped=-pedantic ;; *) ped= ;; esac
	t "header compiles, links and runs as C ($std${ped:+ $ped})" sh -c \
		"$CC -std=$std $ped $WARN $INC -o $OUT/header-$std \
			tests/host/header.c -L. -liopa -Wl,-rpath,$LIBDIR && \
			$OUT/header-$std"
done
for std in c++11 c++17 c++20; do
	t "header compiles, links and runs as C++ ($std -pedantic)" sh -c \
		"$CXX -std=$std -pedantic $WARN $INC -x c++ -o $OUT/header-$std \
			tests/host/header.c -L. -liopa -Wl,-rpath,$LIBDIR && \
			$OUT/header-$std"
done

# ---- exported symbols against libiopa.map -------------------------------------
# "symbol@@NODE" for every function of the map, in the node that names it.
map_syms() {
	sed -e 's|/\*.*\*/||' -e '/^\s*\/\?\*/d' libiopa.map | awk '
		/^IOPA_[0-9.]+ *\{/ { node = $1 }
		{ gsub(/[ \t]/, "") }
		/^iopa_[a-z_0-9]+;$/ { sub(/;$/, ""); print $0 "@@" node }' | sort
}
check_symbols() {
	local want got soname bad=0
	want=$(map_syms)
	[ -n "$want" ] || { echo "no symbols found in libiopa.map"; return 1; }
	# Defined dynamic symbols, text or data, with their version; the
	# version nodes' own symbols (IOPA_1.0@@IOPA_1.0) left out.
	got=$(nm -D --defined-only --with-symbol-versions libiopa.so.$VERSION |
		awk '$2 ~ /^[TtDdBbRrVvWwi]$/ { print $3 }' |
		grep -v '^IOPA_' | sort)
	echo "exported:"; echo "$got"
	if [ "$got" != "$want" ]; then
		echo "exported functions or their versions differ from libiopa.map:"
		diff <(echo "$want") <(echo "$got")
		bad=1
	fi
	soname=$(readelf -d libiopa.so.$VERSION | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[ "$soname" = libiopa.so.1 ] || { echo "SONAME '$soname'"; bad=1; }
	[ "$(readlink libiopa.so.1)" = libiopa.so.$VERSION ] || { echo "libiopa.so.1 link"; bad=1; }
	[ "$(readlink libiopa.so)" = libiopa.so.1 ] || { echo "libiopa.so link"; bad=1; }
	# The static library defines the same public functions (and no other
	# global function without the iopa_ prefix).
	got=$(nm --defined-only -g libiopa.a | awk 'NF == 3 && $2 == "T" { print $3 }' | sort)
	if [ "$got" != "$(echo "$want" | sed 's/@.*//')" ]; then
		echo "libiopa.a global functions differ from libiopa.map:"
		diff <(echo "$want" | sed 's/@.*//') <(echo "$got")
		bad=1
	fi
	return $bad
}
t "exported symbols = libiopa.map, each @@ its node, soname libiopa.so.1" check_symbols

# LIBIOPA_VERSION_MINOR/MAJOR of the header = the Makefile's version.
check_version_macros() {
	local h=include/libiopa.h
	[ "$(sed -n 's/^#define LIBIOPA_VERSION_MAJOR[[:space:]]*//p' $h).$(sed -n 's/^#define LIBIOPA_VERSION_MINOR[[:space:]]*//p' $h)" = "$VERSION" ]
}
t "LIBIOPA_VERSION_MAJOR.MINOR in libiopa.h = the library's $VERSION" check_version_macros

# ---- man pages: one per public function, groff-clean --------------------------
inline_fns() {
	sed -n 's/^static inline [a-z_ ]*[ *]\(iopa_[a-z][a-z_0-9]*\)(.*/\1/p' \
		include/libiopa.h | sort -u
}
check_man() {
	local f page bad=0 out fns
	fns=$( { map_syms | sed "s/@.*//"; inline_fns; } | sort -u)
	for f in $fns; do
		page=man/$f.3
		[ -f "$page" ] || { echo "no man page for $f"; bad=1; continue; }
		grep -q "^\\\\fB$f\\\\fP\|^$f \\\\-\|^\.B $f\|$f" "$page" ||
			{ echo "$page does not name $f"; bad=1; }
	done
	for page in man/*.3; do
		f=$(basename "$page" .3)
		echo "$fns" | grep -qx "$f" ||
			{ echo "$page documents no public function"; bad=1; }
	done
	for page in man/*.3 man/*.7; do
		out=$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" 2>&1)
		[ -z "$out" ] || { echo "$page:"; echo "$out"; bad=1; }
		out=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
		[ -z "$out" ] || { echo "man -l $page:"; echo "$out"; bad=1; }
	done
	echo "$(echo "$fns" | wc -l) public functions, $(ls man/*.3 | wc -l) pages in man3"
	return $bad
}
t "a man page for every public function; groff -ww and man -l clean" check_man

# Every struct a caller fills (a const pointer argument of a function in
# the synopsis; not the opaque struct iopa_pool, nor what a callback is
# handed) is shown in the page's synopsis.
check_man_structs() {
	local page st bad=0 n=0
	for page in man/*.3; do
		for st in $(sed -n '/^\.SH SYNOPSIS/,/^\.SH DESCRIPTION/p' "$page" |
			grep -v typedef | grep -o 'const struct iopa_[a-z_]* \*' |
			awk '$3 != "iopa_pool" { print $3 }' | sort -u); do
			n=$((n + 1))
			grep -q "^\.B struct $st {" "$page" ||
				{ echo "$page: struct $st not shown"; bad=1; }
		done
	done
	echo "$n structs a caller fills, each shown"
	return $bad
}
t "man pages show every struct a caller fills" check_man_structs

# The complete programs of the EXAMPLE sections build warning-free.
check_examples() {
	local page src n=0
	for page in man/*.3; do
		grep -q '^\.EX' "$page" || continue
		src=$OUT/example-$(basename "$page" .3).c
		sed -n '/^\.EX/,/^\.EE/p' "$page" | sed -e '1d' -e '$d' \
			-e 's/\\-/-/g' -e 's/\\e/\\/g' >"$src"
		grep -q '^int main' "$src" || continue
		echo "$page"
		$CC -std=gnu11 $WARN $INC -o "${src%.c}" "$src" -L. -liopa || return 1
		n=$((n + 1))
	done
	[ $n -gt 0 ]
}
t "man page examples compile" check_examples

# ---- pkg-config, install, use, uninstall --------------------------------------
check_install() {
	local d=$OUT/destdir pc cflags libs left
	rm -rf "$d"
	make -s install DESTDIR="$d" PREFIX=/opt/iopa || return 1
	find "$d" | sort
	pc=$d/opt/iopa/lib/pkgconfig/libiopa.pc
	pkg-config --validate "$pc" || return 1
	export PKG_CONFIG_PATH=$d/opt/iopa/lib/pkgconfig
	export PKG_CONFIG_SYSROOT_DIR=$d
	[ "$(pkg-config --modversion libiopa)" = "$VERSION" ] || return 1
	# the pages' footers: this version (the sources say "libiopa")
	! grep -L "^\.TH .* \"libiopa $VERSION\" " "$d"/opt/iopa/share/man/man[37]/* |
		grep . || return 1
	cflags=$(pkg-config --cflags libiopa) && libs=$(pkg-config --libs libiopa) || return 1
	echo "cflags: $cflags"; echo "libs: $libs"
	# Against the installed header (both <libiopa.h> and <linux/iopa.h>
	# from DESTDIR: no -I of the source tree) and library.
	$CC $WARN $cflags -o "$OUT/inst-dyn" tests/host/wrappers.c $libs \
		-Wl,-rpath,"$d/opt/iopa/lib" || return 1
	"$OUT/inst-dyn" || return 1
	ldd "$OUT/inst-dyn" | grep -q "$d/opt/iopa/lib/libiopa.so.1" || return 1
	$CC $WARN $cflags -static-libgcc -o "$OUT/inst-static" tests/host/wrappers.c \
		"$d/opt/iopa/lib/libiopa.a" $(pkg-config --libs --static libiopa | sed 's/-liopa//') || return 1
	"$OUT/inst-static" || return 1
	! ldd "$OUT/inst-static" | grep -q libiopa || return 1
	for f in iopa_pool_init.3 libiopa.7; do
		[ -f "$d/opt/iopa/share/man/man${f##*.}/$f" ] || return 1
	done
	make -s uninstall DESTDIR="$d" PREFIX=/opt/iopa || return 1
	left=$(find "$d" -type f -o -type l)
	[ -z "$left" ] || { echo "left after uninstall:"; echo "$left"; return 1; }
}
t "install (DESTDIR, PREFIX), pkg-config, build against it, uninstall" check_install

echo "1..$n"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
