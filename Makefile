# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# vhca top-level build.  See README.md and Documentation/building.md.
#
#   make            the module against Debian's stock 6.12 headers, the
#                   provider and the test programs
#   make deps       install every Debian package the project needs
#   make demo       boot the stock kernel in QEMU, load vhca, bind two ports,
#                   move data (ibv_rc_pingpong, ib_write_bw against rdma_rxe,
#                   the example); about 2 minutes
#   make examples   the example programs (examples/) into build/examples/
#   make check      every test; ends with "N passed, N failed, N skipped";
#                   T='GLOBS' runs what they name (make check T='rc/*')
#   make check-quick  host stages, KUnit, the stock kernel's smoke set
#   make bench      vhca against rdma_rxe and memcpy in stock-kernel VMs:
#                   perftest, NVMe over RDMA, scale (BENCH_SCALE=0: not)
#   make fuzz SECS=N [SEED=N] [BOOTS=N] [T=GLOBS]  the fuzzers on the debug kernel, N s each
#   make install    the module for the running kernel (its headers in
#                   /lib/modules/$(uname -r)/build; refused without them
#                   unless KDIR names a tree), depmod, the provider, man pages, vhca-links (DESTDIR,
#                   KDIR, PREFIX); make uninstall removes them
#   make load       modprobe what the built vhca.ko depends on, insmod it
#   make deb        vhca-dkms and ibverbs-provider-vhca into build/deb/;
#                   SUITE=trixie|sid: that release's, built in its root,
#                   into build/deb-SUITE/
#   make matrix-update  move scripts/pins to the registry's newest kernels
#                   and roots' rdma-core, rerun the other kernels' stages
#   make provider-abis  the provider for rdma-core's private ABIs 34, 57,
#                   59, 64 and 65, layouts proved per release

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
KBUILD_FLAGS := W=1 CONFIG_INFINIBAND_VHCA=m
# What kbuild needs of the tree, copied per kernel so that the stock and
# debug builds never share object files.
KSRC := Kbuild drivers include

.PHONY: all module module-debug provider provider-check provider-abis kbuild-check tests examples \
	deps demo matrix-update \
	check check-quick bench profile fuzz sparse sparse-debug checkpatch install uninstall load deb clean

all: module provider tests

# PABI=N (34, 57, 59, 64, 65) or RDMA_CORE=N builds for another rdma-core
# (providers/vhca/README.md); by default for the installed one.
provider:
	$(MAKE) -C providers/vhca

# Host tests of the provider (layout, dispatch), plain and with ASan/UBSan.
provider-check:
	$(MAKE) -C providers/vhca check

# The provider for every recorded private ABI, each layout proved against
# the real headers of its releases: Debian's source packages of the trixie
# and sid roots (scripts/distro-root.sh) where they have the release, else
# RDMA_CORE_GIT, an rdma-core clone; a release with neither is skipped.
provider-abis:
	$(MAKE) -s -C providers/vhca abis

# Host test of the top-level Kbuild: x86_64 only (Documentation/building.md).
kbuild-check:
	tests/host/kbuild-check.sh

# Programs the guest scripts run: the tests' (tests/progs/*.c) and the
# benchmarks' (tools/bench/*.c), on the tests' library (tests/lib/).
PROG_SRCS := $(wildcard tests/progs/*.c tools/bench/*.c)
TEST_PROGS := $(patsubst %.c,$(BUILD)/tests/%,$(notdir $(PROG_SRCS)))
PROG_DEPS := $(wildcard tests/lib/*.h) include/uapi/rdma/vhca-abi.h
PROG_CC = $(CC) -Wall -Wextra -O2 -g -Iinclude/uapi -Iproviders/vhca \
	-Itests/lib -o $@ $< -lrdmacm -libverbs
tests: $(TEST_PROGS) examples

# The example programs a user reads and copies (examples/, their own
# Makefile); installed nowhere.
examples:
	$(MAKE) -C examples OUT=$(BUILD)/examples

$(BUILD)/tests/%: tests/progs/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(PROG_CC)

# vhca_fuzz: its main (tests/progs/vhca_fuzz.c) and its parts, one file a
# concern (tests/progs/vhca_fuzz/); ring-race runs a second thread.  The
# programs of several files print one KTAP stream (KTAP_SHARED, ktap.h).
FUZZ_SRCS := tests/progs/vhca_fuzz.c $(wildcard tests/progs/vhca_fuzz/*.c)
$(BUILD)/tests/vhca_fuzz: $(FUZZ_SRCS) $(wildcard tests/progs/vhca_fuzz/*.h) $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) -Wall -Wextra -O2 -g -pthread -Iinclude/uapi -Iproviders/vhca \
		-Itests/lib -DKTAP_SHARED -o $@ $(FUZZ_SRCS) -libverbs

# vhca_fuzz_net: its main (tests/progs/vhca_fuzz_net.c) and its parts, one
# file a concern (tests/progs/vhca_fuzz_net/); netem runs a second thread.
FUZZ_NET_SRCS := tests/progs/vhca_fuzz_net.c $(wildcard tests/progs/vhca_fuzz_net/*.c)
$(BUILD)/tests/vhca_fuzz_net: $(FUZZ_NET_SRCS) $(wildcard tests/progs/vhca_fuzz_net/*.h) $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) -Wall -Wextra -O2 -g -pthread -Iinclude/uapi -Iproviders/vhca \
		-Itests/lib -DKTAP_SHARED -o $@ $(FUZZ_NET_SRCS) -libverbs

# vhca_rdma: its main (tests/progs/vhca_rdma.c) and its parts, one file a
# concern (tests/progs/vhca_rdma/).
RDMA_SRCS := tests/progs/vhca_rdma.c $(wildcard tests/progs/vhca_rdma/*.c)
$(BUILD)/tests/vhca_rdma: $(RDMA_SRCS) $(wildcard tests/progs/vhca_rdma/*.h) $(PROG_DEPS)
	@mkdir -p $(@D)
	$(CC) -Wall -Wextra -O2 -g -Iinclude/uapi -Iproviders/vhca \
		-Itests/lib -DKTAP_SHARED -o $@ $(RDMA_SRCS) -libverbs

$(BUILD)/tests/%: tools/bench/%.c $(PROG_DEPS)
	@mkdir -p $(@D)
	$(PROG_CC)

deps:
	scripts/deps.sh

# The stock kernel's headers (6.12; KERNEL=6.1: Debian 12's default
# kernel's; KERNEL=7.2: sid's, built inside the sid root), unless KDIR names
# another tree.  SPARSE=1: sparse over each file as it is compiled (C=1),
# make sparse's check and the build in one pass.
module:
	@set -e; \
	if [ -n "$(KDIR)" ]; then out=$(BUILD)/kdir; \
	mkdir -p $$out && cp -a $(KSRC) $$out/ && \
	$(MAKE) -C $(KDIR) M=$$out $(KBUILD_FLAGS) modules; \
	else scripts/kbuild.sh "$(or $(KERNEL),6.12)" \
		$(BUILD)/stock$(if $(KERNEL),-$(KERNEL)) $(KBUILD_FLAGS) \
		$(if $(SPARSE),C=1) modules; fi

# The debug test kernel: the module and the KUnit test module.
module-debug:
	@set -e; d=$$(scripts/test-kernel.sh); out=$(BUILD)/debug; \
	mkdir -p $$out && cp -a $(KSRC) $$out/ && \
	$(MAKE) -C $$d/linux M=$$out ARCH=x86_64 $(KBUILD_FLAGS) \
		CONFIG_INFINIBAND_VHCA_KUNIT_TEST=m modules

# sparse over every file (C=2), against the stock headers (KERNEL=6.1 or
# 7.2 as for module), in make module's tree: on this host's toolchain
# only what changed since is compiled again (7.2's, inside the sid root,
# builds afresh).
sparse:
	@scripts/kbuild.sh "$(or $(KERNEL),6.12)" \
		$(BUILD)/stock$(if $(KERNEL),-$(KERNEL)) $(KBUILD_FLAGS) C=2 modules

# sparse over the KUnit suites too, against the debug kernel: in make
# module-debug's tree, where C=2 checks every file and compiles only what
# changed since.
sparse-debug:
	@set -e; d=$$(scripts/test-kernel.sh); out=$(BUILD)/debug; \
	mkdir -p $$out && cp -a $(KSRC) $$out/ && \
	$(MAKE) -C $$d/linux M=$$out ARCH=x86_64 $(KBUILD_FLAGS) \
		CONFIG_INFINIBAND_VHCA_KUNIT_TEST=m C=2 modules

checkpatch:
	scripts/checkpatch.sh

demo:
	tools/demo.sh

# T='GLOBS' selects what runs (tests/runner/select.sh): make check T='rc/*'.
check:
	VHCA_T='$(T)' tests/runner/check.sh

# Host stages, KUnit and the stock kernel's smoke set, for iteration.
check-quick:
	tests/runner/check.sh --quick

# The fuzzers' scenarios (tests/guest/fuzz.sh and inject.sh) on the
# debug kernel, each fuzzing SECS seconds (default 60) with the seed SEED
# (default: random; each scenario prints the seed it used), dealt out over
# BOOTS debug guests at once (default 2), T= selecting scenarios as in
# make check (tests/runner/fuzz.sh).
fuzz: module-debug provider tests
	tests/runner/fuzz.sh $(or $(SECS),60) $(or $(BOOTS),2) '$(SEED)' '$(T)'

# Not part of make check: figures, never a verdict on speed.
bench:
	tools/bench/bench.sh

# Not part of make check: where the guest's CPU goes during 64 KiB WRITE
# and SEND streams, local and over the wire (perf record -e cpu-clock).
profile: module provider tests
	tests/runner/vm-run.sh -k stock -t 900 -o $(BUILD)/vm/profile \
		tools/bench/guest-profile.sh $(or $(ITERS),2000)

# make install: KDIR when given, else the running kernel's build tree when
# it exists (a real host with its headers), else the stock kernel's.
# kbuild's modules_install skips depmod without a System.map (a headers
# tree has none): it runs here, on DESTDIR's tree when DESTDIR is set.
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
LIBEXECDIR ?= $(PREFIX)/libexec/vhca
UNITDIR ?= $(PREFIX)/lib/systemd/system
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
INSTALL_KDIR = $(or $(KDIR),$(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR)))
MANPAGES := Documentation/man/vhca.7 Documentation/man/vhca-provider.7

NO_KDIR_MSG = vhca: the running kernel $(shell uname -r) has no headers \
	($(RUNNING_KDIR)): install them (Debian: apt-get install \
	linux-headers-$(shell uname -r)) or name a kernel tree with KDIR=

install: provider
	@set -e; kdir="$(INSTALL_KDIR)"; \
	[ -n "$$kdir" ] || { echo "$(NO_KDIR_MSG)" >&2; exit 1; }; \
	out=$(BUILD)/kdir; $(MAKE) module KDIR="$$kdir"; \
	kver=$$(cat "$$kdir/include/config/kernel.release"); \
	echo "vhca: installing for kernel $$kver"; \
	$(MAKE) -C $$kdir M=$$out $(KBUILD_FLAGS) INSTALL_MOD_DIR=updates \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install; \
	depmod -a $(if $(DESTDIR),-b $(DESTDIR)) $$kver
	$(MAKE) -C providers/vhca install
	install -d $(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(LIBEXECDIR) \
		$(DESTDIR)$(UNITDIR) $(DESTDIR)/etc/vhca
	install -m 644 $(MANPAGES) $(DESTDIR)$(MANDIR)/man7/
	install -m 755 packaging/vhca-links $(DESTDIR)$(LIBEXECDIR)/
	sed 's|/usr/libexec/vhca/|$(LIBEXECDIR)/|' packaging/vhca-links@.service \
		>$(DESTDIR)$(UNITDIR)/vhca-links@.service
	[ -e $(DESTDIR)/etc/vhca/links.conf ] || \
		install -m 644 packaging/vhca-links.conf $(DESTDIR)/etc/vhca/links.conf

# The same choice of kernel; /etc/vhca/links.conf stays when it was edited.
uninstall:
	@set -e; kdir="$(INSTALL_KDIR)"; \
	[ -n "$$kdir" ] || { echo "$(NO_KDIR_MSG)" >&2; exit 1; }; \
	kver=$$(cat "$$kdir/include/config/kernel.release"); \
	echo "vhca: uninstalling for kernel $$kver"; \
	rm -f $(DESTDIR)/lib/modules/$$kver/updates/drivers/infiniband/sw/vhca/vhca.ko*; \
	depmod -a $(if $(DESTDIR),-b $(DESTDIR)) $$kver
	$(MAKE) -C providers/vhca uninstall
	rm -f $(addprefix $(DESTDIR)$(MANDIR)/man7/,$(notdir $(MANPAGES))) \
		$(DESTDIR)$(LIBEXECDIR)/vhca-links $(DESTDIR)$(UNITDIR)/vhca-links@.service
	! cmp -s packaging/vhca-links.conf $(DESTDIR)/etc/vhca/links.conf || \
		rm -f $(DESTDIR)/etc/vhca/links.conf

# The built module (KDIR's build when KDIR is given, else the stock one)
# into the running kernel, its dependencies first (scripts/pkg-load.sh).
load:
	scripts/pkg-load.sh $(BUILD)/$(if $(KDIR),kdir,stock)/drivers/infiniband/sw/vhca/vhca.ko

# Move scripts/pins to what the registry offers today (remaking a root
# whose rdma-core moved), then rerun the stages of the other kernels and
# the pyverbs suites; a moved 6.12 pin wants the whole make check.
matrix-update:
	scripts/matrix-update.sh
	$(MAKE) check T='host/build-6.1 host/build-7.2 host/provider-trixie host/provider-sid stock-6.1 sid trixie stock/pyverbs'

# Debian packages (dpkg-buildpackage) and lintian's verdict: this host's
# release's in build/deb/, or (SUITE=trixie or sid) that release's, built
# inside its root (scripts/distro-root.sh), in build/deb-SUITE/.
deb:
	scripts/pkg-deb.sh $(SUITE)

clean:
	rm -rf $(BUILD)
