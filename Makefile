# SPDX-License-Identifier: GPL-2.0
#
# iopa: out-of-tree kernel module, selftests and demo.
#
#   make                 module + tools (against KDIR); fetches no kernel source
#                        (the kselftest harness comes with `make selftests`)
#   make module          kernel/iopa.ko
#   make tools           tools/iopa-demo, liburing-glue (libiopa), tools/iopa-sum
#   make selftests       selftests/iopa (kselftest harness from KSFT_INC)
#   make lib             libiopa alone (liburing-glue/): no kernel headers,
#                        no package installed, no root (needs liburing-dev)
#   make install-lib     libiopa alone (.so, .a, libiopa.pc, <libiopa.h>,
#                        <linux/iopa.h>, man pages) under DESTDIR/PREFIX;
#                        nothing of the module; ldconfig only as root
#                        without DESTDIR; `make uninstall-lib` removes it
#   make deps            install the Debian packages the build and checks
#                        need (root); `make`, `make module` and `make tools`
#                        only say what is missing, while make check, make
#                        demo and the benches install it (a fresh machine)
#   make install         the module (kbuild modules_install into
#                        $(DESTDIR)/lib/modules/<KVER>/$(INSTALL_MOD_DIR)), the uapi
#                        header and iopa(4), libiopa (.so, .a, libiopa.pc, man pages),
#                        iopa-sum (+ man page), tools/iopactl if it has a
#                        Makefile, the udev rule, modules-load.d and
#                        sysusers.d files, and the DKMS source tree
#                        (install-dkms); without DESTDIR also depmod, ldconfig
#                        and the group "iopa" (groupadd --system).  Installs
#                        no package; builds the module for the running
#                        kernel's headers only, unless KDIR= (and KVER=)
#                        name another kernel: fails, saying so, when they
#                        are missing
#   make install-dkms    only the DKMS source tree $(DESTDIR)$(DKMSSRCDIR)/iopa-<version>
#                        (dkms.conf, kernel/, uapi/); then
#                        `dkms install -m iopa -v <version>` builds and installs
#   make uninstall       removes what install installed (same variables);
#                        without DESTDIR also depmod and ldconfig; the group stays
#                        (tools/check/install.sh and tools/check/dkms.sh test
#                        install, uninstall and dkms in scratch directories)
#   make version         prints the package version (PACKAGE_VERSION in dkms.conf)
#   make check           every check, host and QEMU guest (= .ci/run)
#   make demo            tools/iopa-demo/demo.sh in a QEMU guest (~5 min)
#   make bench           benchmarks in QEMU guests (figures printed, not asserted):
#                        dispatch rate; files on the SSD and HDD models, fixed
#                        against adaptive limits, steps, tenants, CPU-bound jobs
#                        (~80 min) -> bench/results/, bench/README.md
#   make bench-hostcost  what the module costs other I/O: fio on null_blk without
#                        the module vs with a device group on another device
#                        and on the same one (~4 min) -> bench/results/
#   make bench-quick     the file benchmark on 100 KB files, one step and one
#                        tenants count per device, one run per mode, short
#                        runs cold and warm, processes sharing a device
#                        (~19 min) -> build/bench-quick/
#   make bench-matrix    the default against the best fixed limit on 12 device
#                        settings drawn by a seeded generator (null_blk, HDD
#                        model, throttled virtio disk; BENCH_MATRIX_SEED=N
#                        repeats a draw), 10 s runs (~25 min) -> build/bench/
#   make check-debug     the selftests on a 6.12 kernel built with KASAN, lockdep,
#                        kmemleak... (Documentation/iopa-hardening.rst)
#   make fuzz            tools/fuzz/iopa-fuzz, 1,000,000 calls, on that kernel
#   make stress          tools/stress/iopa-stress, 1,000,000 jobs, on that kernel
#   make sim             the limit controller against synthetic devices (host)
#   make sim-test        the controller's unit tests (host)
#   make clean           build outputs; `make distclean` also drops .cache/
#
# Variables:
#   KDIR      kernel build dir; default: the running kernel's headers if
#             installed, else (not for install or uninstall) Debian's 6.12
#             cloud headers, fetched into .cache/ on first use
#             (tools/guest/fetch-kernel.sh)
#   KSFT_INC  dir with kselftest_harness.h; default: extracted from
#             linux-source-6.12 into .cache/ksrc (tools/guest/fetch-ksrc.sh)
#   for install, install-dkms and uninstall:
#   DESTDIR        staging root, prepended to every path below (default empty)
#   PREFIX         /usr/local; BINDIR $(PREFIX)/bin (iopa-sum), SBINDIR
#                  $(PREFIX)/sbin (iopactl), LIBDIR $(PREFIX)/lib,
#                  INCLUDEDIR $(PREFIX)/include, MANDIR $(PREFIX)/share/man,
#                  PKGCONFIGDIR $(LIBDIR)/pkgconfig
#   UDEVDIR        /usr/lib/udev (the rule goes to rules.d/60-iopa.rules)
#   MODULESLOADDIR /usr/lib/modules-load.d (iopa.conf: load at boot)
#   SYSUSERSDIR    /usr/lib/sysusers.d (iopa.conf: the group "iopa")
#   SYSTEMDUNITDIR /usr/lib/systemd/system (iopa-knees.service: the
#                  devices' knees kept across reboots, by $(SBINDIR)/iopa-knees;
#                  iopa-metrics.service and .timer: iopactl metrics for
#                  node_exporter's textfile collector every 15 s, not enabled)
#   DKMSSRCDIR     /usr/src (dkms's source tree; not under PREFIX)
#   INSTALL_MOD_DIR  updates (the module's directory under /lib/modules/<KVER>)
#   KVER           the kernel release of KDIR (its include/config/kernel.release)
#
# Nothing needs root except deps.sh, which installs missing Debian packages
# (build tools, QEMU, busybox, fio...) for `make deps`, `make check`, `make
# demo` and the benches, and `make install` or `make uninstall` without
# DESTDIR.

TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
GUEST := $(TOP)/tools/guest
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
UDEVDIR ?= /usr/lib/udev
MODULESLOADDIR ?= /usr/lib/modules-load.d
SYSUSERSDIR ?= /usr/lib/sysusers.d
SYSTEMDUNITDIR ?= /usr/lib/systemd/system
DKMSSRCDIR ?= /usr/src
INSTALL_MOD_DIR ?= updates

# The package version: PACKAGE_VERSION in dkms.conf, its only copy.
IOPA_VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\([^"]*\)"$$/\1/p' \
	$(TOP)/dkms.conf)
ifeq ($(IOPA_VERSION),)
$(error no PACKAGE_VERSION="..." line in $(TOP)/dkms.conf)
endif
# It names a directory that install-dkms and uninstall remove.
ifneq ($(shell echo '$(IOPA_VERSION)' | grep -Ex '[A-Za-z0-9.+~_-]+'),$(IOPA_VERSION))
$(error PACKAGE_VERSION "$(IOPA_VERSION)" in dkms.conf: only [A-Za-z0-9.+~_-])
endif
# INSTALL_MODULE=0: everything but the module itself, for hosts where DKMS
# builds and installs it (else both would be under /lib/modules, and dkms
# refuses to replace a module of the same version).
INSTALL_MODULE ?= 1

# The cache is IOPA_CACHE's, as tools/guest/fetch-ksrc.sh's.
IOPA_CACHE_DIR := $(if $(IOPA_CACHE),$(IOPA_CACHE),$(TOP)/.cache)
KSFT_INC_DEFAULT := $(IOPA_CACHE_DIR)/ksrc/tools/testing/selftests
KSFT_INC ?= $(KSFT_INC_DEFAULT)

# KDIR: only worked out (and, if need be, fetched) when a recipe uses it,
# then kept: `make clean` fetches nothing.  `make install` and `make
# uninstall` never fall back to downloaded headers: the running kernel's,
# or the kernel KDIR= names.  (HOST_KDIR= stands for the running kernel's
# headers in tools/check/install.sh.)
HOST_KDIR ?= /lib/modules/$(shell uname -r)/build
INSTALLING := $(filter install uninstall,$(MAKECMDGOALS))
ifeq ($(origin KDIR),undefined)
ifneq ($(wildcard $(HOST_KDIR)/Makefile),)
KDIR := $(HOST_KDIR)
else ifneq ($(INSTALLING),)
KDIR = $(error make $(INSTALLING): no headers of the running kernel \
	$(shell uname -r) ($(HOST_KDIR) is missing): install them \
	(Debian: linux-headers-$(shell uname -r)), or name the kernel to \
	install for with KDIR=<its build dir> (and KVER=))
else
KDIR = $(eval KDIR := $(call fetch_kdir))$(KDIR)
endif
endif
# Only `make deps` and the targets that boot guests (check, demo, the
# benches: what a fresh machine runs) install packages; `make`, `make
# module`, `make tools`, `make install` say what is missing (deps.sh
# --no-install) and the step that needs it fails with its own message.
DEPS_FLAGS := --no-install
fetch_kdir = $(strip $(shell $(GUEST)/deps.sh $(DEPS_FLAGS) build >&2 && \
	$(GUEST)/fetch-kernel.sh --print-kdir 6.12))$(if \
	$(filter 0,$(.SHELLSTATUS)),,$(error fetching the 6.12 headers failed))

.PHONY: all module tools selftests install install-dkms uninstall version \
	lib install-lib uninstall-lib deps-check \
	check demo bench bench-dispatch bench-files bench-hostcost bench-quick \
	bench-matrix check-debug \
	profile-dispatch fuzz stress sim sim-test clean distclean deps ksft

all: module tools

# Installs what is missing (as root; else says what to install).
deps:
	@$(GUEST)/deps.sh build guest check

deps-check:
	@$(GUEST)/deps.sh $(DEPS_FLAGS) build

module: deps-check
	$(MAKE) -C $(KDIR) M=$(TOP)/kernel modules

tools: deps-check
	@if [ -f $(TOP)/tools/iopa-demo/Makefile ]; then \
		$(MAKE) -C $(TOP)/tools/iopa-demo; \
	else \
		echo "tools: no tools/iopa-demo/Makefile yet, nothing to build"; \
	fi
	$(MAKE) -C $(TOP)/liburing-glue
	$(MAKE) -C $(TOP)/liburing-glue examples
	$(MAKE) -C $(TOP)/tools/iopa-sum
	$(MAKE) -C $(TOP)/tools/bench
	$(MAKE) -C $(TOP)/tools/fuzz
	$(MAKE) -C $(TOP)/tools/stress
	$(MAKE) -C $(TOP)/tools/iopactl

# The kselftest harness: fetched when the default KSFT_INC is used.
ksft:
	@if [ ! -f "$(KSFT_INC)/kselftest_harness.h" ]; then \
		if [ "$(KSFT_INC)" = "$(KSFT_INC_DEFAULT)" ]; then \
			$(GUEST)/fetch-ksrc.sh >/dev/null || exit 1; \
		else \
			echo "no kselftest_harness.h in KSFT_INC=$(KSFT_INC)" >&2; \
			exit 1; \
		fi; \
	fi

selftests: deps-check ksft
	$(MAKE) -C $(TOP)/selftests/iopa KSFT_INC=$(KSFT_INC)

# ---- install ---------------------------------------------------------------

# KVER: the release KDIR builds for, where modules_install puts the module
# (from the command line, else from KDIR; not from the environment).
ifneq ($(origin KVER),command line)
KVER = $(eval KVER := $(strip $(shell cat $(KDIR)/include/config/kernel.release \
	2>/dev/null)))$(or $(KVER),$(error no $(KDIR)/include/config/kernel.release: \
	KDIR is not a prepared kernel tree (or give KVER=)))
endif
MODDEST = $(DESTDIR)/lib/modules/$(KVER)/$(INSTALL_MOD_DIR)
# modules_install compresses the module as the kernel's config says.
MODFILES = $(foreach z,.ko .ko.xz .ko.gz .ko.zst,$(MODDEST)/iopa$(z))
DKMSDEST = $(DESTDIR)$(DKMSSRCDIR)/iopa-$(IOPA_VERSION)
# What DKMS builds from: kernel/'s sources (not kbuild's *.mod.c), the uapi
# header kernel/Kbuild includes from ../uapi, dkms.conf.
KERNEL_SRCS := $(filter-out %.mod.c,$(wildcard $(TOP)/kernel/*.c)) \
	$(wildcard $(TOP)/kernel/*.h) $(TOP)/kernel/Kbuild
IOPACTL := $(wildcard $(TOP)/tools/iopactl/Makefile)
SUBMAKE_DIRS = DESTDIR=$(DESTDIR) PREFIX=$(PREFIX) MANDIR=$(MANDIR)
LIB_DIRS = $(SUBMAKE_DIRS) LIBDIR=$(LIBDIR) INCLUDEDIR=$(INCLUDEDIR) \
	PKGCONFIGDIR=$(PKGCONFIGDIR)

version:
	@echo $(IOPA_VERSION)

# Without the kernel's signing key (distribution headers) do not try to
# sign.  kbuild's depmod is skipped (DEPMOD=true): under DESTDIR it would
# leave modules.dep & co. behind; without DESTDIR ours runs below.
install: $(if $(filter 0,$(INSTALL_MODULE)),,module) install-dkms
ifneq ($(INSTALL_MODULE),0)
	$(MAKE) -C $(KDIR) M=$(TOP)/kernel modules_install \
		INSTALL_MOD_PATH=$(DESTDIR) INSTALL_MOD_DIR=$(INSTALL_MOD_DIR) \
		DEPMOD=true $(if $(wildcard \
		$(KDIR)/certs/signing_key.pem),,CONFIG_MODULE_SIG_ALL=)
endif
	install -D -m 644 $(TOP)/uapi/linux/iopa.h \
		$(DESTDIR)$(INCLUDEDIR)/linux/iopa.h
	install -D -m 644 $(TOP)/Documentation/iopa.4 \
		$(DESTDIR)$(MANDIR)/man4/iopa.4
	$(MAKE) -C $(TOP)/liburing-glue install $(LIB_DIRS)
	$(MAKE) -C $(TOP)/tools/iopa-sum install $(SUBMAKE_DIRS) BINDIR=$(BINDIR)
	$(if $(IOPACTL),$(MAKE) -C $(TOP)/tools/iopactl install $(SUBMAKE_DIRS) \
		BINDIR=$(SBINDIR))
	install -D -m 644 $(TOP)/tools/udev/60-iopa.rules \
		$(DESTDIR)$(UDEVDIR)/rules.d/60-iopa.rules
	install -D -m 644 $(TOP)/tools/udev/iopa-modules-load.conf \
		$(DESTDIR)$(MODULESLOADDIR)/iopa.conf
	install -D -m 644 $(TOP)/tools/udev/iopa-sysusers.conf \
		$(DESTDIR)$(SYSUSERSDIR)/iopa.conf
	install -D -m 755 $(TOP)/tools/udev/iopa-knees \
		$(DESTDIR)$(SBINDIR)/iopa-knees
	install -d -m 755 $(DESTDIR)$(SYSTEMDUNITDIR)
	sed 's|@SBINDIR@|$(SBINDIR)|g' $(TOP)/tools/udev/iopa-knees.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/iopa-knees.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/iopa-knees.service
	sed 's|@SBINDIR@|$(SBINDIR)|g' $(TOP)/tools/iopactl/iopa-metrics.service.in \
		>$(DESTDIR)$(SYSTEMDUNITDIR)/iopa-metrics.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/iopa-metrics.service
	install -m 644 $(TOP)/tools/iopactl/iopa-metrics.timer \
		$(DESTDIR)$(SYSTEMDUNITDIR)/iopa-metrics.timer
	@if [ -z "$(DESTDIR)" ]; then \
		$(if $(filter 0,$(INSTALL_MODULE)),,echo "depmod -a $(KVER)"; \
		depmod -a $(KVER);) \
		echo ldconfig; ldconfig; \
	fi
	@if [ -z "$(DESTDIR)" ] && ! getent group iopa >/dev/null; then \
		echo "groupadd --system iopa"; groupadd --system iopa; \
	fi

# The library alone (Integrators 2): no KDIR, no deps.sh, no root.
lib:
	$(MAKE) -C $(TOP)/liburing-glue

install-lib: lib
	$(MAKE) -C $(TOP)/liburing-glue install $(LIB_DIRS)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		echo ldconfig; ldconfig; \
	fi

uninstall-lib:
	$(MAKE) -C $(TOP)/liburing-glue uninstall $(LIB_DIRS)
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then \
		echo ldconfig; ldconfig; \
	fi

# The tree `dkms add -m iopa -v $(IOPA_VERSION)` expects under /usr/src.
install-dkms:
	rm -rf '$(DKMSDEST)'
	install -d -m 755 '$(DKMSDEST)/kernel' '$(DKMSDEST)/uapi/linux'
	install -m 644 $(TOP)/dkms.conf '$(DKMSDEST)/dkms.conf'
	install -m 644 $(KERNEL_SRCS) '$(DKMSDEST)/kernel/'
	install -m 644 $(TOP)/uapi/linux/iopa.h '$(DKMSDEST)/uapi/linux/iopa.h'

# Does not build anything; needs KDIR only for KVER (or KVER=...).  The
# group "iopa" is left: files may belong to it.
uninstall:
	@if [ -z "$(DESTDIR)" ] && command -v dkms >/dev/null && \
	    [ -n "$$(dkms status -m iopa -v $(IOPA_VERSION) 2>/dev/null)" ]; then \
		echo "uninstall: dkms still has iopa/$(IOPA_VERSION): first run" \
			"dkms remove -m iopa -v $(IOPA_VERSION) --all" >&2; \
		exit 1; \
	fi
	rm -f $(MODFILES)
	rm -f $(DESTDIR)$(INCLUDEDIR)/linux/iopa.h
	rm -f $(DESTDIR)$(MANDIR)/man4/iopa.4
	$(MAKE) -C $(TOP)/liburing-glue uninstall $(LIB_DIRS)
	$(MAKE) -C $(TOP)/tools/iopa-sum uninstall $(SUBMAKE_DIRS) BINDIR=$(BINDIR)
	$(if $(IOPACTL),$(MAKE) -C $(TOP)/tools/iopactl uninstall $(SUBMAKE_DIRS) \
		BINDIR=$(SBINDIR))
	rm -f $(DESTDIR)$(UDEVDIR)/rules.d/60-iopa.rules
	rm -f $(DESTDIR)$(MODULESLOADDIR)/iopa.conf
	rm -f $(DESTDIR)$(SYSUSERSDIR)/iopa.conf
	rm -f $(DESTDIR)$(SBINDIR)/iopa-knees
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/iopa-knees.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/iopa-metrics.service \
		$(DESTDIR)$(SYSTEMDUNITDIR)/iopa-metrics.timer
	rm -rf '$(DKMSDEST)'
	@if [ -z "$(DESTDIR)" ]; then \
		echo "depmod -a $(KVER)"; depmod -a $(KVER); \
		echo ldconfig; ldconfig; \
	fi

check:
	$(TOP)/tools/check/run-checks.sh

# The demo runs in the 6.12 guest, so its module is built for that kernel
# (build/kbuild/6.12), whatever KDIR is.  It runs at the module's default
# settings and prints the adaptive runs' MB/s as a percentage of the best
# fixed limit's, runs of equal length interleaved in 3 rounds, the median
# ("demo: adaptive pct_of_best_fixed=F rounds=3 (range ...) best_fixed=N
# round_best_pct=M", M against each round's best run); DEMO_* variables
# are not passed to the guest (edit demo.sh's defaults to change it).
demo:
	@if [ ! -f $(TOP)/tools/iopa-demo/demo.sh ]; then \
		echo "demo: tools/iopa-demo/demo.sh does not exist yet" >&2; \
		exit 1; \
	fi
	@$(GUEST)/deps.sh build guest
	$(MAKE) -C $(TOP) tools
	ko=$$($(GUEST)/build-module.sh 6.12) && \
	$(GUEST)/run-guest.sh --series 6.12 --disk 256 --ko "$$ko" \
		--timeout $${DEMO_TIMEOUT:-1800} $(TOP)/tools/iopa-demo/demo.sh

# Figures are printed, not asserted: compare the ratios of one run.
# `make bench`: the dispatch bench (~3 min), then the file benchmark
# (issues 5 and 12) in two more guests, ssd (~39 min) then hdd (~39 min)
# (tools/bench/files-bench.sh, whose header has the time budget; ~80 min
# in all on 2 cores), at the module's default settings;
# tools/bench/report.py turns the consoles (build/bench/*.log) into
# bench/results/ (CSV, PNG) and bench/README.md and prints the "bench
# cell", "bench order", "bench step" and "bench tenants" lines, and the
# "bench short", "bench converge" and "bench share" lines of the guest.  BENCH_*
# variables are passed to the guest script (see its header);
# BENCH_NOTE="..." is a remark for the README (e.g. what else loaded the
# machine); IOPA_BENCH_KO=PATH boots that module instead of building one.
BENCH_LOGS := $(TOP)/build/bench
QUICK_LOGS := $(TOP)/build/bench-quick
PYTHON3 ?= /usr/bin/python3

# One guest at a time, also under make -j: the runs measure time.
bench:
	$(MAKE) -C $(TOP) bench-dispatch
	$(MAKE) -C $(TOP) bench-files
	$(MAKE) -C $(TOP) bench-hostcost

# What the module costs I/O that is not its own (issue 24, item 10):
# tools/bench/hostcost.sh in the guest, fio on null_blk without the module,
# with a device group on another device, and on the same one (~4 min).
bench-hostcost:
	$(GUEST)/deps.sh build guest
	$(MAKE) -C $(TOP)/tools/bench
	mkdir -p $(BENCH_LOGS)
	ko=$$($(GUEST)/build-module.sh 6.12) && cd $(TOP) && \
	$(GUEST)/run-guest.sh --series 6.12 --ko "$$ko" --mem 1024 \
		--timeout $${BENCH_TIMEOUT:-1200} --log $(BENCH_LOGS)/hostcost.log \
		tools/bench/hostcost.sh tools/bench/iopa-bench-hold | \
		grep -E '^(bench |# hostcost|run-guest: (PASS|FAIL))'

# The dispatch bench in the guest: $(1) the log directory, $(2) runs per
# configuration, $(3) jobs per run (the guest gets no environment: a
# wrapper script carries them to tools/bench/bench.sh).
define run_dispatch
	mkdir -p $(1)
	printf '#!/bin/sh\nexport BENCH_RUNS=%s BENCH_JOBS=%s\nexec sh /iopa/tools/bench/bench.sh\n' \
		$(2) $(3) >$(1)/guest-dispatch.sh
	ko=$$($(GUEST)/build-module.sh 6.12) && cd $(TOP) && \
	$(GUEST)/run-guest.sh --series 6.12 --ko "$$ko" \
		--timeout $${BENCH_TIMEOUT:-1800} --log $(1)/dispatch.log \
		$(1)/guest-dispatch.sh tools/bench/bench.sh \
		tools/bench/iopa-bench-dispatch | \
		grep -E '^(bench |# dispatch|run-guest: (PASS|FAIL))'
endef

bench-dispatch:
	$(GUEST)/deps.sh build guest
	$(MAKE) -C $(TOP)/tools/bench
	$(call run_dispatch,$(BENCH_LOGS),5,50000)

# Where one dispatch configuration spends its time (issue 14): perf
# samples every vCPU in the guest (tools/bench/profile-dispatch.sh).
# PROFILE=path:batch:fd (default ioctl:64:borrow), PROFILE_JOBS.
PROFILE ?= ioctl:64:borrow
PROFILE_JOBS ?= 200000
profile-dispatch:
	$(GUEST)/deps.sh build guest profile
	$(MAKE) -C $(TOP)/tools/bench
	mkdir -p $(BENCH_LOGS)
	printf '#!/bin/sh\nexport PROFILE=%s JOBS=%s\nexec sh /iopa/tools/bench/profile-dispatch.sh\n' \
		$(PROFILE) $(PROFILE_JOBS) >$(BENCH_LOGS)/guest-profile.sh
	ko=$$($(GUEST)/build-module.sh 6.12) && cd $(TOP) && \
	GUEST_BINS="/usr/bin/fio /usr/sbin/mke2fs /usr/bin/udevadm /usr/bin/perf" \
	$(GUEST)/run-guest.sh --series 6.12 --ko "$$ko" --timeout 900 \
		--log $(BENCH_LOGS)/profile.log $(BENCH_LOGS)/guest-profile.sh \
		tools/bench/profile-dispatch.sh tools/bench/iopa-bench-dispatch \
		>/dev/null
	sed -n '/^# profile/,/^IOPA-GUEST-EXIT/p' $(BENCH_LOGS)/profile.log | \
		grep -v '^IOPA-GUEST-EXIT'

bench-files:
	$(GUEST)/deps.sh build guest bench
	$(MAKE) -C $(TOP)/tools/bench
	$(MAKE) -C $(TOP)/tools/hdd-model
	mkdir -p $(BENCH_LOGS)
	$(TOP)/tools/bench/run-files-bench.sh ssd full $(BENCH_LOGS)/ssd.log
	$(TOP)/tools/bench/run-files-bench.sh hdd full $(BENCH_LOGS)/hdd.log
	$(PYTHON3) $(TOP)/tools/bench/report.py --out $(TOP)/bench/results \
		--readme $(TOP)/bench/README.md \
		$(if $(BENCH_NOTE),--note "$(BENCH_NOTE)") \
		$(if $(wildcard $(BENCH_LOGS)/dispatch.log),--dispatch-log $(BENCH_LOGS)/dispatch.log) \
		$(BENCH_LOGS)/ssd.log $(BENCH_LOGS)/hdd.log

# One file size (BENCH_SIZE, default 100k) per device, one run per mode,
# the load step and 2 tenants on the ssd, the size step and 4 tenants on
# the hdd, 5 s runs from a fresh module and again (bench short, bench
# converge): every kind of line for both devices in ~16 minutes (budget
# in files-bench.sh); writes build/bench-quick/ only.
bench-quick:
	$(GUEST)/deps.sh build guest bench
	$(MAKE) -C $(TOP)/tools/bench
	$(MAKE) -C $(TOP)/tools/hdd-model
	mkdir -p $(QUICK_LOGS)
	$(TOP)/tools/bench/run-files-bench.sh ssd quick $(QUICK_LOGS)/ssd.log
	$(TOP)/tools/bench/run-files-bench.sh hdd quick $(QUICK_LOGS)/hdd.log
	$(call run_dispatch,$(QUICK_LOGS),3,10000)
	$(PYTHON3) $(TOP)/tools/bench/report.py --out $(QUICK_LOGS) \
		--title "iopa benchmark, quick run (not the full table)" \
		--dispatch-log $(QUICK_LOGS)/dispatch.log \
		$(QUICK_LOGS)/ssd.log $(QUICK_LOGS)/hdd.log

# The device matrix (issue 25): tools/bench/matrix-bench.sh in one guest
# with a 512 MB virtio disk; prints a "bench matrix dev=..." line per
# setting and a "bench matrix seed=..." summary (its header has the time
# budget).  BENCH_MATRIX_SEED, _COUNT, _SECS, _FIXED, _ROUNDS (rounds
# of the default and the best fixed limit), _SETTINGS (given settings
# instead of a draw) and _TRACE (the default run's controller events in
# the log) go to the guest.
bench-matrix:
	$(GUEST)/deps.sh build guest bench
	$(MAKE) -C $(TOP)/tools/bench
	$(MAKE) -C $(TOP)/tools/hdd-model
	mkdir -p $(BENCH_LOGS)
	$(TOP)/tools/bench/run-files-bench.sh matrix full $(BENCH_LOGS)/matrix.log

# Hardening (issue 6): each prints "hardening <run> result=... count=...
# reports=..." last.  The debug kernel is built on first use (long: see
# Documentation/iopa-hardening.rst) and cached.
check-debug:
	$(GUEST)/deps.sh build guest check debug
	$(GUEST)/build-debug-kernel.sh
	$(TOP)/tools/check/run-checks.sh kbuild-debug guest-selftests-debug

fuzz stress:
	$(GUEST)/deps.sh build guest debug
	$(TOP)/tools/check/hardening.sh $@

sim:
	$(MAKE) -C $(TOP)/tools/sim sim

sim-test: ksft
	$(MAKE) -C $(TOP)/tools/sim test KSFT_INC=$(KSFT_INC)

clean:
	cd $(TOP)/kernel && rm -rf *.o *.ko *.mod *.mod.c .*.cmd *.a \
		Module.symvers modules.order .tmp_versions .module-common.o
	-$(MAKE) -C $(TOP)/selftests/iopa clean
	-$(MAKE) -C $(TOP)/tools/sim clean
	-$(MAKE) -C $(TOP)/tools/bench clean
	-$(MAKE) -C $(TOP)/tools/fuzz clean
	-$(MAKE) -C $(TOP)/tools/stress clean
	-$(MAKE) -C $(TOP)/liburing-glue clean
	-$(MAKE) -C $(TOP)/tools/iopa-sum clean
	-@if [ -f $(TOP)/tools/iopa-demo/Makefile ]; then \
		$(MAKE) -C $(TOP)/tools/iopa-demo clean; fi
	rm -rf $(TOP)/build

distclean: clean
	rm -rf $(TOP)/.cache
