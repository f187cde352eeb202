# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# vhca top-level build.  See README.md and Documentation/building.md.
#
#   make            the module against Debian's stock 6.12 headers, the
#                   provider and the test programs
#   make deps       install every Debian package the project needs
#   make demo       boot the stock kernel in QEMU, load vhca, bind two ports
#   make check      every test; ends with "N passed, N failed, N skipped";
#                   T='GLOBS' runs what they name (make check T='rc/*')
#   make check-quick  host stages, KUnit, the stock kernel's smoke set
#   make bench      vhca against rdma_rxe and memcpy in one stock-kernel VM
#   make fuzz SECS=N [SEED=N]  the fuzzers on the debug kernel, N s each
#   make KDIR=/lib/modules/$(uname -r)/build && sudo make install KDIR=...
#                   build and install for a real host's running kernel

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
KBUILD_FLAGS := W=1 CONFIG_INFINIBAND_VHCA=m
# What kbuild needs of the tree, copied per kernel so that the stock and
# debug builds never share object files.
KSRC := Kbuild drivers include kunit

.PHONY: all module module-debug provider provider-check kbuild-check tests deps demo \
	check check-quick bench fuzz sparse sparse-debug checkpatch install clean

all: module provider tests

provider:
	$(MAKE) -C providers/vhca

# Host tests of the provider (layout, dispatch), plain and with ASan/UBSan.
provider-check:
	$(MAKE) -C providers/vhca check

# Host test of the top-level Kbuild: x86_64 only (Documentation/building.md).
kbuild-check:
	scripts/kbuild-check.sh

# Test programs the guest scripts run (scripts/tests/*.c).
TEST_PROGS := $(patsubst scripts/tests/%.c,$(BUILD)/tests/%,$(wildcard scripts/tests/*.c))
tests: $(TEST_PROGS)

$(BUILD)/tests/%: scripts/tests/%.c scripts/tests/vhca_test.h scripts/tests/ktap.h scripts/tests/roce.h scripts/tests/fuzz_rng.h \
		include/uapi/rdma/vhca-abi.h
	@mkdir -p $(@D)
	$(CC) -Wall -Wextra -O2 -g -Iinclude/uapi -Iproviders/vhca -o $@ $< -lrdmacm -libverbs

deps:
	scripts/deps.sh

# The stock kernel's headers, unless KDIR names another tree.
module:
	@set -e; \
	if [ -n "$(KDIR)" ]; then kdir="$(KDIR)"; out=$(BUILD)/kdir; \
	else s=$$(scripts/stock-kernel.sh); kdir=$$s/headers; out=$(BUILD)/stock; \
	echo "vhca: building against stock kernel $$(cat $$s/kernel.release)"; fi; \
	mkdir -p $$out && cp -a $(KSRC) $$out/ && \
	$(MAKE) -C $$kdir M=$$out $(KBUILD_FLAGS) modules

# The debug test kernel: the module and the KUnit test module.
module-debug:
	@set -e; d=$$(scripts/test-kernel.sh); out=$(BUILD)/debug; \
	mkdir -p $$out && cp -a $(KSRC) $$out/ && \
	$(MAKE) -C $$d/linux M=$$out ARCH=x86_64 $(KBUILD_FLAGS) \
		CONFIG_INFINIBAND_VHCA_KUNIT_TEST=m modules

# sparse over every file (C=2), against the stock headers.
sparse:
	@set -e; s=$$(scripts/stock-kernel.sh); out=$(BUILD)/sparse; \
	mkdir -p $$out && cp -a $(KSRC) $$out/ && \
	$(MAKE) -C $$s/headers M=$$out $(KBUILD_FLAGS) C=2 modules

# sparse over the KUnit suites too, against the debug kernel.
sparse-debug:
	@set -e; d=$$(scripts/test-kernel.sh); out=$(BUILD)/sparse-debug; \
	mkdir -p $$out && cp -a $(KSRC) $$out/ && \
	$(MAKE) -C $$d/linux M=$$out ARCH=x86_64 $(KBUILD_FLAGS) \
		CONFIG_INFINIBAND_VHCA_KUNIT_TEST=m C=2 modules

checkpatch:
	scripts/checkpatch.sh

demo:
	scripts/demo.sh

# T='GLOBS' selects what runs (scripts/select.sh): make check T='rc/*'.
check:
	VHCA_T='$(T)' scripts/check.sh

# Host stages, KUnit and the stock kernel's smoke set, for iteration.
check-quick:
	scripts/check.sh --quick

# The fuzzers (scripts/guest/fuzz.sh, and inject.sh when it exists) on the
# debug kernel, each scenario fuzzing SECS seconds (default 60), with the
# seed SEED (default: random; each scenario prints the seed it used).  The
# VM's limit: 600 s, and six scenarios' SECS with a minute each for setup,
# tripled on the debug kernel.
fuzz: module-debug provider tests
	@set -e; secs=$(or $(SECS),60); g=fuzz; \
	[ ! -e scripts/guest/inject.sh ] || g="$$g inject"; \
	FUZZ_SECS=$$secs $(if $(SEED),FUZZ_SEED=$(SEED)) scripts/vm-run.sh -v \
		-k debug -t $$((600 + 18 * (secs + 60))) -o $(BUILD)/vm/fuzz \
		scripts/guest/suite.sh $$g

# Not part of make check: figures, never a verdict on speed.
bench:
	scripts/bench.sh

install: module provider
	@set -e; kdir="$(or $(KDIR),$$(scripts/stock-kernel.sh)/headers)"; \
	out=$(BUILD)/$(if $(KDIR),kdir,stock); \
	$(MAKE) -C $$kdir M=$$out $(KBUILD_FLAGS) modules_install
	$(MAKE) -C providers/vhca install

clean:
	rm -rf $(BUILD)
