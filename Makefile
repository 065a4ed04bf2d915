# SPDX-License-Identifier: GPL-2.0
#
# iopa: out-of-tree kernel module, selftests and demo.
#
#   make                 module + tools + selftests (against KDIR)
#   make module          kernel/iopa.ko
#   make tools           tools/iopa-demo, liburing-glue (libiopa), tools/iopa-sum
#   make selftests       selftests/iopa (kselftest harness from KSFT_INC)
#   make install         module (modules_install) + uapi header + libiopa + iopa-sum
#   make check           every check, host and QEMU guest (= .ci/run)
#   make demo            tools/iopa-demo/demo.sh in a QEMU guest
#   make bench           benchmarks in a QEMU guest (figures printed, not asserted)
#   make sim             the limit controller against synthetic devices (host)
#   make sim-test        the controller's unit tests (host)
#   make clean           build outputs; `make distclean` also drops .cache/
#
# Variables:
#   KDIR      kernel build dir; default: the running kernel's headers if
#             installed, else Debian's 6.12 cloud headers, fetched into
#             .cache/ on first use (tools/guest/fetch-kernel.sh)
#   KSFT_INC  dir with kselftest_harness.h; default: extracted from
#             linux-source-6.12 into .cache/ksrc (tools/guest/fetch-ksrc.sh)
#   DESTDIR, PREFIX (/usr/local)   for install
#
# Nothing is run as root except by deps.sh, which installs missing Debian
# packages (build tools, QEMU, busybox, fio...) when it can.

TOP := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))
GUEST := $(TOP)/tools/guest
PREFIX ?= /usr/local
DESTDIR ?=

KSFT_INC_DEFAULT := $(TOP)/.cache/ksrc/tools/testing/selftests
KSFT_INC ?= $(KSFT_INC_DEFAULT)

# KDIR: only worked out (and, if need be, fetched) when a recipe uses it,
# then kept: `make clean` fetches nothing.
ifeq ($(origin KDIR),undefined)
HOST_KDIR := /lib/modules/$(shell uname -r)/build
ifneq ($(wildcard $(HOST_KDIR)/Makefile),)
KDIR := $(HOST_KDIR)
else
KDIR = $(eval KDIR := $(call fetch_kdir))$(KDIR)
endif
endif
fetch_kdir = $(strip $(shell $(GUEST)/deps.sh build >&2 && \
	$(GUEST)/fetch-kernel.sh --print-kdir 6.12))$(if \
	$(filter 0,$(.SHELLSTATUS)),,$(error fetching the 6.12 headers failed))

.PHONY: all module tools selftests install check demo bench sim sim-test clean distclean deps ksft

all: module tools selftests

deps:
	@$(GUEST)/deps.sh build

module: deps
	$(MAKE) -C $(KDIR) M=$(TOP)/kernel modules

tools: deps
	@if [ -f $(TOP)/tools/iopa-demo/Makefile ]; then \
		$(MAKE) -C $(TOP)/tools/iopa-demo; \
	else \
		echo "tools: no tools/iopa-demo/Makefile yet, nothing to build"; \
	fi
	$(MAKE) -C $(TOP)/liburing-glue
	$(MAKE) -C $(TOP)/tools/iopa-sum

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

selftests: deps ksft
	$(MAKE) -C $(TOP)/selftests/iopa KSFT_INC=$(KSFT_INC)

# Without the kernel's signing key (distribution headers) do not try to sign.
install: module
	$(MAKE) -C $(KDIR) M=$(TOP)/kernel modules_install \
		INSTALL_MOD_PATH=$(DESTDIR) $(if $(wildcard \
		$(KDIR)/certs/signing_key.pem),,CONFIG_MODULE_SIG_ALL=)
	install -D -m 644 $(TOP)/uapi/linux/iopa.h \
		$(DESTDIR)$(PREFIX)/include/linux/iopa.h
	$(MAKE) -C $(TOP)/liburing-glue install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)
	$(MAKE) -C $(TOP)/tools/iopa-sum install DESTDIR=$(DESTDIR) PREFIX=$(PREFIX)

check:
	$(TOP)/tools/check/run-checks.sh

# The demo runs in the 6.12 guest, so its module is built for that kernel
# (build/kbuild/6.12), whatever KDIR is.
demo: tools
	@if [ ! -f $(TOP)/tools/iopa-demo/demo.sh ]; then \
		echo "demo: tools/iopa-demo/demo.sh does not exist yet" >&2; \
		exit 1; \
	fi
	ko=$$($(GUEST)/build-module.sh 6.12) && \
	$(GUEST)/run-guest.sh --series 6.12 --disk 256 --ko "$$ko" \
		--timeout $${DEMO_TIMEOUT:-1800} $(TOP)/tools/iopa-demo/demo.sh

# Figures are printed, not asserted: compare the ratios of one run.
bench:
	$(GUEST)/deps.sh build guest
	$(MAKE) -C $(TOP)/tools/bench
	ko=$$($(GUEST)/build-module.sh 6.12) && \
	$(GUEST)/run-guest.sh --series 6.12 --ko "$$ko" \
		--timeout $${BENCH_TIMEOUT:-1800} $(TOP)/tools/bench/bench.sh \
		$(TOP)/tools/bench/iopa-bench-dispatch | \
		grep -E '^(bench |# dispatch|# [0-9]+ empty|run-guest: (PASS|FAIL))'

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
	-$(MAKE) -C $(TOP)/liburing-glue clean
	-$(MAKE) -C $(TOP)/tools/iopa-sum clean
	-@if [ -f $(TOP)/tools/iopa-demo/Makefile ]; then \
		$(MAKE) -C $(TOP)/tools/iopa-demo clean; fi
	rm -rf $(TOP)/build

distclean: clean
	rm -rf $(TOP)/.cache
