#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR MIT)
#
# The crate's tests with the module: builds them on the host (cargo test
# --no-run), boots the 6.12 guest with iopa.ko loaded, runs tests/guest.rs
# there (and tests/host.rs, whose tests say they skip with /dev/iopa), and
# frames each as tools/check/run-checks.sh counts them.  Exit 0 only if
# they pass and the console shows no kernel warning.
#
#   liburing-glue/rust/guest-test.sh [run-guest.sh options: --log F --result F]
set -eu
D=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$D/../.." && pwd)
# Static (glibc's crt-static): the guest's initramfs has libc but not
# libgcc_s; its own target directory, not to rebuild the host's each time.
bins=$(cd "$D" && RUSTFLAGS="-C target-feature=+crt-static" \
	cargo test --no-run --message-format=json --target-dir target/guest \
	--target x86_64-unknown-linux-gnu 2>/dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    try:
        m = json.loads(l)
    except ValueError:
        continue
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and t.get("name") in ("guest", "host"):
        print(t["name"], m["executable"])
')
guest_bin=$(echo "$bins" | awk '$1 == "guest" { print $2 }')
[ -n "$guest_bin" ] || { echo "guest-test: no guest test program built" >&2; exit 1; }
script=$(mktemp "${TMPDIR:-/tmp}/iopa-rust-guest.XXXXXX.sh")
trap 'rm -f "$script"' EXIT
# libtest's lines as TAP ("test NAME ... ok" -> "ok N NAME"), for
# run-checks.sh to count.
cat >"$script" <<EOS
#!/bin/sh
insmod /iopa/kernel/iopa.ko || exit 1
echo "IOPA-TEST-BEGIN rust-guest"
/iopa/${guest_bin#"$TOP"/} --test-threads=1 >/tmp/rust.out 2>&1
rc=\$?
sed 's/^/# /' /tmp/rust.out
awk '/^test .* \\.\\.\\. / { n++; st = \$NF; sub(/^test /, ""); sub(/ \\.\\.\\. .*/, "");
	if (st == "ok") print "ok " n " " \$0; else print "not ok " n " " \$0 }
	END { print "1.." n }' /tmp/rust.out
echo "IOPA-TEST-END rust-guest rc=\$rc"
rmmod iopa || rc=1
exit \$rc
EOS
ko=$("$TOP/tools/guest/build-module.sh" 6.12)
# not exec: the EXIT trap removes the script
"$TOP/tools/guest/run-guest.sh" --series 6.12 --ko "$ko" --timeout 600 \
	"$@" "$script" "$guest_bin"
