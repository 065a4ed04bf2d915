#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The tuning walkthrough of Documentation/iopa-admin-guide.rst, in a QEMU
# guest (busybox sh, cwd /iopa): load the module, show the defaults, set a
# low ceiling (max_limit 8: the default, 256, is out of this workload's
# reach), start an adaptive workload (tools/iopactl/ctl-load run: 16
# worker threads, jobs of 4 KiB and 2 ms, policy iopa), raise max_limit
# and fast_cap, watch and trace.
# The output is what the guide quotes.  Run it with
#   make -C tools/iopactl && tools/guest/run-guest.sh --series 6.12 \
#       --ko "$(tools/guest/build-module.sh 6.12)" tools/iopactl/walkthrough.sh \
#       tools/iopactl/iopactl tools/iopactl/ctl-load
set -u
C=/iopa/iopactl
L=/iopa/ctl-load
[ -x "$C" ] || C=/iopa/tools/iopactl/iopactl
[ -x "$L" ] || L=/iopa/tools/iopactl/ctl-load
insmod "${IOPA_KO:-/iopa/kernel/iopa.ko}" || exit 1
say() { echo; echo "\$ iopactl $*"; "$C" "$@"; }

say status
say set max_limit=8
"$L" run --seconds 40 --workers 16 --policy iopa >/tmp/load.out 2>&1 &
sleep 3
say watch --count 3 --interval 1
say set max_limit=64 fast_cap=16
say trace --count 6
say watch --count 1
kill %1 2>/dev/null
wait
cat /tmp/load.out
rmmod iopa
