# SPDX-License-Identifier: MIT
# ibvct: the one build entry. GNU make. Out-of-tree objects in build/.
# V=1 shows full commands. SANITIZE=1 builds with ASan+UBSan+LSan into
# build-san/, COVERAGE=1 with --coverage into build-cov/, so that builds with
# different flags never share objects. `make help` lists the targets.

.DEFAULT_GOAL := all
SHELL := /bin/sh

TOP    := $(abspath .)
CC     ?= cc
PROVE  ?= prove
JOBS   ?= 2
PREFIX ?= /usr/local
DESTDIR ?=

ifeq ($(V),1)
Q :=
else
Q := @
endif

# One build dir per flavour (keep in step with .gitignore: build*/).
B := build$(if $(filter 1,$(SANITIZE)),-san)$(if $(filter 1,$(COVERAGE)),-cov)$(if $(filter 1,$(INSTALL_BUILD)),-inst)

WARN    := -Wall -Wextra -Werror -Wno-unused-parameter
CSTD    := -std=gnu11
OPT     ?= -O2 -g
SAN     :=
ifeq ($(SANITIZE),1)
SAN     := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif
ifeq ($(COVERAGE),1)
# -O0 so that line counts map onto the source as written.
OPT     := -O0 -g
SAN     += --coverage
endif
CFLAGS_COMMON := $(CSTD) $(OPT) $(WARN) $(SAN) -fPIC -D_GNU_SOURCE -pthread
# COVERAGE=1: test and suite programs dump the counters in _exit() too, or
# forked test children would count for nothing (testkit/runner/gcov-exit.c).
COV_EXIT := $(if $(filter 1,$(COVERAGE)),$(B)/obj/testkit/runner/gcov-exit.o)
COV_WRAP := -Wl,--wrap=_exit
TEST_LDEXTRA := $(if $(COV_EXIT),$(COV_EXIT) $(COV_WRAP))
REF_INC := -I$(TOP)/ref-impl/include
# The fake provider's trees, from the ground up: common (what both sides of
# the fake kernel's socket share), script (the script language), uapi (the
# top-level uapi/: the fake kernel's interface, its protocol and message
# table, the modify-QP rules both sides apply; ref-impl sees it too), then
# on it kernel (the daemon) and engine (the fake HCA), and verbs (the
# provider ops and the daemon's client) on top. An object is compiled with
# the include dirs of the trees below its own and no others (the per-tree lines after each
# tree's definitions), so that a header of a tree above it does not compile;
# FP_INC, all of them, is for the tests, the fuzz harnesses and the tools'
# users of the script.
FP_COMMON_INC := -I$(TOP)/fake-provider/common
FP_SCRIPT_INC := -I$(TOP)/fake-provider/script
FP_UAPI_INC   := -I$(TOP)/uapi
FP_KERNEL_INC := -I$(TOP)/fake-provider/kernel
FP_ENGINE_INC := -I$(TOP)/fake-provider/engine
FP_VERBS_INC  := -I$(TOP)/fake-provider/verbs
FP_INC  := $(FP_COMMON_INC) $(FP_SCRIPT_INC) $(FP_UAPI_INC) $(FP_KERNEL_INC) $(FP_ENGINE_INC) \
	$(FP_VERBS_INC)

# The install tree (`make install`, `make deb`): LIBDIR/ibvct is laid out as
# build/ is (bin/ lib/ suites/ t/), PREFIX/share/ibvct as the checkout's
# folders of the installed scripts and fixtures/ are (its build links to
# LIBDIR/ibvct).
LIBDIR     ?= $(PREFIX)/lib
INST_LIB   := $(LIBDIR)/ibvct
INST_SHARE := $(PREFIX)/share/ibvct
# Paths compiled into the library (provider dir), ibvct-run (library dir),
# the plugin (daemon dir) and the ref suites (plugin; library as their
# rpath): the build tree normally, the install tree for `make install`,
# where the suites find the library beside them wherever the tree sits.
# Each is a fallback, behind the environment (RDMAV_DRIVERS, IBVCT_LIBDIR,
# IBVCT_PROVIDER) or a search beside the program.
ifeq ($(INSTALL_BUILD),1)
RUN_LIBDIR  := $(INST_LIB)/lib
RUN_BINDIR  := $(INST_LIB)/bin
SUITE_RPATH := '$$ORIGIN/../../lib'
else
RUN_LIBDIR  := $(TOP)/$(B)/lib
RUN_BINDIR  := $(TOP)/$(B)/bin
SUITE_RPATH := $(TOP)/$(B)/lib
endif
REF_DRIVER_DIR := $(RUN_LIBDIR)/ibvct
DEFS := -DIBVCT_DRIVER_DIR='"$(REF_DRIVER_DIR)"' -DIBVCT_LIBDIR='"$(RUN_LIBDIR)"' \
	-DIBVCT_BINDIR='"$(RUN_BINDIR)"'

# ---- dependencies: Debian packages, checked on every make run --------------
# The Debian release this machine runs, and the one a goal builds for or
# boots (RELEASE=13 on a Debian 12 machine: that release's root and
# kernel, tools/vm/release-root)
HOST_RELEASE := $(shell sh tools/vm/release-root host)
RELEASE ?= $(HOST_RELEASE)

# DEPS_<goal> names the ci/install-deps groups that hold every program the
# goal, its scripts and its tests run (t7007-deps-lint checks this against
# what the recipes, the project's scripts and tests really call). Each make run makes
# one `ci/install-deps` call for the union over its goals, before anything
# else: a single dpkg-query, silent when all is there, so packages removed
# since the last build are noticed and reinstalled. Not root: it names what
# is missing and the apt-get command, and make stops. NODEPS=1 skips it
# (non-Debian systems, packagers). A goal not listed here gets build.
DEPS_all          := build
DEPS_tests        := build
DEPS_suites       := build
DEPS_bench        := build
DEPS_bench-wire   := build vm wire
DEPS_check        := build test browser abi valgrind deb vm kmod wire slurm
DEPS_failed       := $(DEPS_check)
DEPS_valgrind     := $(DEPS_check)
DEPS_coverage     := $(DEPS_check) coverage
DEPS_conformance  := build test abi valgrind vm $(if $(filter xrc-vm,$(TARGET)),kmod)
DEPS_certify      := $(DEPS_conformance)
DEPS_abi-check    := build abi
DEPS_abi-baseline := build abi
DEPS_abi-releases := build abi
DEPS_install      := build
DEPS_install-files := build
DEPS_deb          := build deb
DEPS_deb-package  := build deb
DEPS_deb-chroot-check := $(DEPS_conformance) deb chroot
DEPS_release-check := build chroot
DEPS_release-matrix := $(DEPS_conformance) kmod chroot
DEPS_deps         := build test browser valgrind coverage abi vm wire
DEPS_soak         := $(DEPS_check)
DEPS_fuzz         := build fuzz
DEPS_kmod         := build kmod $(if $(filter-out $(HOST_RELEASE),$(RELEASE)),chroot)
DEPS_xrc-vm       := build kmod vm
DEPS_xrc-vm-suites := build test kmod vm
DEPS_fault-sweep  := $(DEPS_check)
DEPS_fault-sweep-run := $(DEPS_check)
DEPS_mutate       := build test
DEPS_clean        :=
DEPS_help         :=
deps_of = $(if $(filter undefined,$(origin DEPS_$(1))),build,$(DEPS_$(1)))
DEPS := $(sort $(foreach g,$(or $(MAKECMDGOALS),all),$(call deps_of,$(g))) \
	$(if $(filter 1,$(VALGRIND)),valgrind))
# What the other rules wait for (order-only): nothing when NODEPS=1.
DEPS_FIRST := $(if $(filter 1,$(NODEPS)),,deps)

deps:
	$(if $(DEPS),$(Q)sh ci/install-deps $(DEPS))

# ---- ref-impl: build/lib/libibverbs.so.1 ---------------------------------
REF_SRCS := $(sort $(wildcard ref-impl/src/*.c))
REF_OBJS := $(REF_SRCS:%.c=$(B)/obj/%.o)
REF_MAP  := ref-impl/libibverbs.map
REF_LIB  := $(B)/lib/libibverbs.so.1
# Per-tree flags: ref-impl is held to -Wmissing-prototypes (a function is
# static, or declared in ri.h or a public header); its library includes no
# fake-provider header but the fake kernel's interface (uapi: fk_ufile.h,
# the name of a context's file), its self-tests fp_script.h, nothing else.
$(B)/obj/ref-impl/%.o: CFLAGS_COMMON += -Wmissing-prototypes
$(B)/obj/ref-impl/src/%.o: FP_INC := $(FP_UAPI_INC)
$(B)/obj/ref-impl/tests/%.o: FP_INC := $(FP_SCRIPT_INC)
# The release the reference plays unless told (ref-impl/src/release.c): the
# installed libibverbs-dev's (pkg-config 1.14.44.0 is 44, 1.14.56.1 56; one
# between plays 44), 56 without one.
SYS_RDMA_CORE := $(shell pkg-config --modversion libibverbs 2>/dev/null | cut -d. -f3)
REF_RELEASE := $(if $(SYS_RDMA_CORE),$(if $(shell [ "$(SYS_RDMA_CORE)" -ge 56 ] 2>/dev/null && echo y),56,44),56)
$(B)/obj/ref-impl/src/release.o: DEFS += -DRI_RDMA_CORE_DEFAULT=$(REF_RELEASE)

# ---- fake provider --------------------------------------------------------
# fp_script.a: the script language (fake-provider/script), shared by the
# plugin, the daemon, ibvct-run and tests.
# And what both sides of the daemon's socket share (fake-provider/common).
FP_SCRIPT_SRCS  := $(sort $(wildcard fake-provider/script/*.c fake-provider/common/*.c))
FP_SCRIPT_OBJS  := $(FP_SCRIPT_SRCS:%.c=$(B)/obj/%.o)
FP_SCRIPT_LIB   := $(B)/lib/fp_script.a
# fp_uapi.a: the fake kernel's interface (uapi): message
# names and sizes from its table, the modify-QP rules; linked by the daemon,
# the plugin and the tests that speak to the daemon.
FP_UAPI_SRCS    := $(sort $(wildcard uapi/*.c))
FP_UAPI_OBJS    := $(FP_UAPI_SRCS:%.c=$(B)/obj/%.o)
FP_UAPI_LIB     := $(B)/lib/fp_uapi.a
# The plugin: the fake HCA engine (fake-provider/engine) and the verbs
# provider on top of it (fake-provider/verbs).
FP_PLUGIN_SRCS  := $(sort $(wildcard fake-provider/engine/*.c fake-provider/verbs/*.c))
FP_PLUGIN_OBJS  := $(FP_PLUGIN_SRCS:%.c=$(B)/obj/%.o)
# the RoCE room (engine/roce.c) sends and parses with the wire codec
FP_WIRE_OBJS    := $(patsubst %.c,$(B)/obj/%.o,$(sort $(wildcard fake-provider/wire/*.c)))
FP_PLUGIN       := $(B)/lib/ibvct/libibvct-fake.so
IBVCT_RUN       := $(B)/bin/ibvct-run
# The fake kernel daemon (fake-provider/kernel/), started on demand by the plugin.
FKD_SRCS := $(sort $(wildcard fake-provider/kernel/*.c))
FKD_OBJS := $(FKD_SRCS:%.c=$(B)/obj/%.o)
FKD      := $(B)/bin/ibvct-fkd
# Per-tree include dirs (see FP_INC): each tree sees the trees below it.
$(B)/obj/fake-provider/common/%.o: FP_INC :=
$(B)/obj/fake-provider/script/%.o: FP_INC := $(FP_COMMON_INC)
$(B)/obj/uapi/%.o: FP_INC := $(FP_COMMON_INC) $(FP_SCRIPT_INC)
$(B)/obj/fake-provider/kernel/%.o: FP_INC := $(FP_COMMON_INC) $(FP_SCRIPT_INC) $(FP_UAPI_INC)
$(B)/obj/fake-provider/engine/%.o: FP_INC := $(FP_COMMON_INC) $(FP_SCRIPT_INC) $(FP_UAPI_INC) \
	-I$(TOP)/fake-provider/wire
# The plugin's engine and verbs are one program on the data path: link-time
# optimisation inlines across their files (a verb is a score of calls);
# fat objects, for the tests and the fuzz harness that link some of them.
# Not for COVERAGE=1, whose counts follow the source as written.
FP_LTO := $(if $(filter 1,$(COVERAGE)),,-flto=auto -ffat-lto-objects)
$(B)/obj/fake-provider/engine/%.o: CFLAGS_COMMON += $(FP_LTO)
$(B)/obj/fake-provider/verbs/%.o: CFLAGS_COMMON += $(FP_LTO)
$(B)/obj/fake-provider/verbs/%.o: FP_INC := $(FP_COMMON_INC) $(FP_SCRIPT_INC) $(FP_UAPI_INC) \
	$(FP_ENGINE_INC)
# ibvct-run and ibvct-bench (tools/run, tools/bench) write scripts: the script
# language and what it rests on, no other tree of the fake provider.
$(B)/obj/tools/run/%.o $(B)/obj/tools/bench/%.o: FP_INC := $(FP_COMMON_INC) $(FP_SCRIPT_INC)

# ---- tests ----------------------------------------------------------------
TEST_C_SRCS  := $(sort $(wildcard ref-impl/tests/t[0-9]*.c fake-provider/tests/t[0-9]*.c))
# The folders of tools whose tests sit beside them (tNNNN-*.sh): CI glue,
# quality runs, packaging, the test runner's shell half and each of tools/. Which test
# numbers each folder of tests holds: testkit/test-numbers.txt.
TOOL_TEST_DIRS := ci quality pkg testkit/sh $(patsubst %/,%,$(sort $(wildcard tools/*/)))
TEST_SH_SRCS := $(sort $(wildcard ref-impl/tests/t[0-9]*.sh fake-provider/tests/t[0-9]*.sh ixrc/tests/t[0-9]*.sh \
	$(addsuffix /t[0-9]*.sh,$(TOOL_TEST_DIRS))))
TEST_C_BINS  := $(foreach s,$(TEST_C_SRCS),$(B)/t/$(basename $(notdir $(s))).t)
TEST_SH_BINS := $(foreach s,$(TEST_SH_SRCS),$(B)/t/$(basename $(notdir $(s))).t)
# What the C tests link besides their own object, as one archive (a test
# takes the members it uses): the runner of every C test (testkit/runner/tr.h)
# and their fixtures (tf.h), the fixtures of the fake provider's and
# ref-impl's tests (testkit/fixtures/), and the fake kernel's client
# library, which the daemon tests speak through (a part of the plugin
# otherwise).
TEST_HELPERS := testkit/runner/tr.c testkit/runner/tf.c $(sort $(wildcard testkit/fixtures/*.c))
TEST_HELPER_OBJS := $(TEST_HELPERS:%.c=$(B)/obj/%.o) $(B)/obj/fake-provider/verbs/fk_client.o
TEST_LIB := $(B)/lib/ibvct-test.a
# Tools of the test runs (rules below): the environment fingerprint, and the
# runner every test program goes through (testkit/sh/test-exec).
FINGERPRINT := $(B)/bin/ibvct-fingerprint
REAP        := $(B)/bin/ibvct-reap

all: $(REF_LIB) $(B)/lib/libibverbs.so $(FP_PLUGIN) $(IBVCT_RUN) $(if $(FKD_SRCS),$(FKD))

# Order-only on the deps stamp: nothing compiles before the toolchain is in.
$(B)/obj/%.o: %.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(REF_INC) $(FP_INC) $(DEFS) -MMD -MP -c $< -o $@

$(REF_LIB): $(REF_OBJS) $(REF_MAP)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -shared -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=$(REF_MAP) -Wl,--no-undefined \
		-o $@ $(REF_OBJS) -ldl -pthread

$(B)/lib/libibverbs.so: $(REF_LIB)
	$(Q)ln -sf libibverbs.so.1 $@

$(FP_SCRIPT_LIB): $(FP_SCRIPT_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FP_UAPI_LIB): $(FP_UAPI_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(FP_PLUGIN): $(FP_PLUGIN_OBJS) $(FP_WIRE_OBJS) $(FP_UAPI_LIB) $(FP_SCRIPT_LIB) $(REF_LIB) fake-provider/verbs/plugin.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) $(FP_LTO) -shared -Wl,--version-script=fake-provider/verbs/plugin.map \
		-o $@ $(FP_PLUGIN_OBJS) $(FP_WIRE_OBJS) $(FP_UAPI_LIB) $(FP_SCRIPT_LIB) \
		-L$(B)/lib -l:libibverbs.so.1 -pthread

$(IBVCT_RUN): $(B)/obj/tools/run/ibvct-run.o $(FP_SCRIPT_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $^ -ldl -pthread

$(FKD): $(FKD_OBJS) $(FP_UAPI_LIB) $(FP_SCRIPT_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $^ -pthread

$(TEST_LIB): $(TEST_HELPER_OBJS)
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^
# A test's objects find the runner (tr.h) and the fixtures (fp_test.h, rt_env.h).
$(B)/obj/ref-impl/tests/%.o $(B)/obj/fake-provider/tests/%.o $(B)/obj/testkit/fixtures/%.o: \
	CFLAGS_COMMON += -I$(TOP)/testkit/runner -I$(TOP)/testkit/fixtures

$(B)/t/%.t: $(B)/obj/ref-impl/tests/%.o $(TEST_LIB) $(FP_UAPI_LIB) $(FP_SCRIPT_LIB) $(REF_LIB) $(COV_EXIT)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $< $(TEST_LIB) $(FP_UAPI_LIB) $(FP_SCRIPT_LIB) $(TEST_LDEXTRA) \
		-L$(B)/lib -l:libibverbs.so.1 -Wl,-rpath,$(TOP)/$(B)/lib -lcmocka -pthread

$(B)/t/%.t: $(B)/obj/fake-provider/tests/%.o $(TEST_LIB) $(FP_UAPI_LIB) $(FP_SCRIPT_LIB) $(REF_LIB) $(COV_EXIT)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $< $(TEST_OBJS_$*) $(TEST_LIB) $(FP_UAPI_LIB) $(FP_SCRIPT_LIB) $(TEST_LDEXTRA) \
		-L$(B)/lib -l:libibverbs.so.1 -Wl,-rpath,$(TOP)/$(B)/lib -lcmocka -pthread

# The fuzz corpus tests replay fixtures/fuzz/ through the harnesses of
# fake-provider/fuzz/, built here like any test object but with FZ_LIB (no
# main); the daemon's corpus test also links the daemon but its main.o.
FZ_INC := -I$(TOP)/fake-provider/fuzz
$(B)/obj/fake-provider/fuzz/%.lib.o: fake-provider/fuzz/%.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) $(REF_INC) $(FP_INC) $(FZ_INC) -DFZ_LIB -MMD -MP -c $< -o $@
TEST_OBJS_t5004-fuzz-script-corpus := $(B)/obj/fake-provider/fuzz/fz-script.lib.o
TEST_OBJS_t5203-fuzz-fkd-corpus := $(B)/obj/fake-provider/fuzz/fz-fkd.lib.o \
	$(filter-out %/main.o,$(FKD_OBJS))
$(B)/t/t5004-fuzz-script-corpus.t: $(TEST_OBJS_t5004-fuzz-script-corpus)
$(B)/t/t5203-fuzz-fkd-corpus.t: $(TEST_OBJS_t5203-fuzz-fkd-corpus)
# t5300 tests the engine's registered memory on the engine itself, linked in.
TEST_OBJS_t5300-mem-engine := $(filter $(B)/obj/fake-provider/engine/%,$(FP_PLUGIN_OBJS)) $(FP_WIRE_OBJS)
$(B)/t/t5300-mem-engine.t: $(TEST_OBJS_t5300-mem-engine)
# t5302 reads its own tables as a peer does, with the engine's code.
TEST_OBJS_t5302-mem-tables := $(TEST_OBJS_t5300-mem-engine)
$(B)/t/t5302-mem-tables.t: $(TEST_OBJS_t5302-mem-tables)
# The wire room (fake-provider/wire): the RoCE v2 codec and its pcap files,
# on nothing of the rest; its tests, t59xx, link its objects.
$(B)/obj/fake-provider/wire/%.o: FP_INC :=
$(B)/obj/fake-provider/tests/t59%.o: CFLAGS_COMMON += -I$(TOP)/fake-provider/wire
TEST_OBJS_t5900-wire-captures := $(FP_WIRE_OBJS)
TEST_OBJS_t5901-wire-tshark := $(FP_WIRE_OBJS)
TEST_OBJS_t5902-wire-udp := $(FP_WIRE_OBJS)
$(B)/t/t5900-wire-captures.t $(B)/t/t5901-wire-tshark.t $(B)/t/t5902-wire-udp.t: $(FP_WIRE_OBJS)
# ibvct-wire-ud: ud_pingpong's client on the codec, for real rxe in a guest (t6130)
WIRE_UD := $(B)/bin/ibvct-wire-ud
$(B)/obj/tools/wire/ibvct-wire-ud.o: FP_INC := -I$(TOP)/fake-provider/wire
$(WIRE_UD): $(B)/obj/tools/wire/ibvct-wire-ud.o $(FP_WIRE_OBJS)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $^
all: $(WIRE_UD)
# ibvct-wire-rdma: RDMA WRITE, READ and both atomics between two hosts, checked;
# against the system's verbs.h and libibverbs as ibvct-verbs-gen is, so that
# one binary runs on real rxe and, under ibvct-run, on the reference (t6150)
WIRE_RDMA := $(B)/bin/ibvct-wire-rdma
$(B)/obj/tools/wire/ibvct-wire-rdma.o: tools/wire/ibvct-wire-rdma.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) -Wmissing-prototypes $(SYS_VERBS_CFLAGS) -MMD -MP -c $< -o $@
$(WIRE_RDMA): $(B)/obj/tools/wire/ibvct-wire-rdma.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $< $(SYS_VERBS_LIBS)
all: $(WIRE_RDMA)
# ibvct-wire-xrc: XRC SENDs, WRITE and READ between two hosts, to a named SRQ (t5904)
WIRE_XRC := $(B)/bin/ibvct-wire-xrc
$(B)/obj/tools/wire/ibvct-wire-xrc.o: tools/wire/ibvct-wire-xrc.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) -Wmissing-prototypes $(SYS_VERBS_CFLAGS) -MMD -MP -c $< -o $@
$(WIRE_XRC): $(B)/obj/tools/wire/ibvct-wire-xrc.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $< $(SYS_VERBS_LIBS)
all: $(WIRE_XRC)

# ibvct-bench: the machine's limit, then the fake HCA's figures against it and
# their goals (`make bench`, a measurement: missed goals never fail it; t6040
# runs it tiny in `make check`). BENCH_ITERS, BENCH_SECONDS, BENCH_ROUNDS, BENCH_SCRIPT
# change its counts, time bound, rounds and script; rows also in reports/bench/.
BENCH_OBJS  := $(patsubst %.c,$(B)/obj/%.o,$(sort $(wildcard tools/bench/bench_*.c)) \
	tools/bench/ibvct-bench.c)
IBVCT_BENCH := $(B)/bin/ibvct-bench
$(IBVCT_BENCH): $(BENCH_OBJS) $(FP_SCRIPT_LIB) $(REF_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $(BENCH_OBJS) $(FP_SCRIPT_LIB) \
		-L$(B)/lib -l:libibverbs.so.1 -Wl,-rpath,$(TOP)/$(B)/lib -lm -pthread
tests: $(IBVCT_BENCH)

BENCH_ARGS := --out $(TOP)/reports/bench $(if $(BENCH_ITERS),--iters $(BENCH_ITERS)) \
	$(if $(BENCH_SECONDS),--seconds $(BENCH_SECONDS)) $(if $(BENCH_ROUNDS),--rounds $(BENCH_ROUNDS)) \
	$(if $(BENCH_SCRIPT),--script $(BENCH_SCRIPT))
bench: all $(IBVCT_BENCH) | $(DEPS_FIRST)
	$(IBVCT_BENCH) $(strip $(BENCH_ARGS))

# bench-icrc: the ICRC's CRC-32 of the wire codec, eight bytes a step against
# the byte loop, MB/s in one run (tools/bench/ibvct-bench-icrc.c). Not in make check.
BENCH_ICRC := $(B)/bin/ibvct-bench-icrc
$(B)/obj/tools/bench/ibvct-bench-icrc.o: FP_INC := -I$(TOP)/fake-provider/wire
$(BENCH_ICRC): $(B)/obj/tools/bench/ibvct-bench-icrc.o $(FP_WIRE_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $^
tests: $(BENCH_ICRC)
bench-icrc: $(BENCH_ICRC) | $(DEPS_FIRST)
	$(BENCH_ICRC)

# bench-wire: the reference's RoCE v2 against real rxe (perftest: RC SEND and WRITE
# latency and rate), rxe <-> rxe then reference <-> rxe in one pair boot of two
# guests (tools/vm/wire-bench; rows in reports/bench-wire/). Not in make check: it
# boots its own pair and takes minutes under TCG. WIRE_BENCH_ARGS= its options.
bench-wire: all | $(DEPS_FIRST)
	IBVCT_BUILD=$(TOP)/$(B) sh tools/vm/wire-bench $(WIRE_BENCH_ARGS)

$(B)/t/%.t: ref-impl/tests/%.sh
	@mkdir -p $(dir $@)
	$(Q)cp $< $@ && chmod +x $@

$(B)/t/%.t: fake-provider/tests/%.sh
	@mkdir -p $(dir $@)
	$(Q)cp $< $@ && chmod +x $@

$(B)/t/%.t: ixrc/tests/%.sh
	@mkdir -p $(dir $@)
	$(Q)cp $< $@ && chmod +x $@

# the tools' own tests live beside them (TOOL_TEST_DIRS)
define tool_test_rule
$$(B)/t/%.t: $(1)/%.sh
	@mkdir -p $$(dir $$@)
	$$(Q)cp $$< $$@ && chmod +x $$@
endef
$(foreach d,$(TOOL_TEST_DIRS),$(eval $(call tool_test_rule,$(d))))

# ---- tools/verbs-gen: the verbs request generator ---------------------------
# Built against the system's verbs.h and libibverbs, as the system suites
# are (never ours, never fp_script.a): the same binary runs on a real device
# and, through ibvct-run, on the reference target (t6060; ibvct run --compare).
VERBS_GEN := $(B)/bin/ibvct-verbs-gen
$(B)/obj/tools/verbs-gen/%.o: tools/verbs-gen/%.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_COMMON) -Wmissing-prototypes $(SYS_VERBS_CFLAGS) \
		$(if $(SYS_RDMA_CORE),-DVG_RDMA_CORE=$(SYS_RDMA_CORE)) -MMD -MP -c $< -o $@
$(VERBS_GEN): $(B)/obj/tools/verbs-gen/ibvct-verbs-gen.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $< $(SYS_VERBS_LIBS)
tests: $(VERBS_GEN)

tests: all $(TEST_C_BINS) $(TEST_SH_BINS)

# ---- running the tests ----------------------------------------------------
# Environment every test gets. Every test runs through testkit/sh/test-exec, which
# applies the per-program time limit and, with IBVCT_VALGRIND=1, valgrind
# (C tests only). IBVCT_PRELOAD is what a test must put in LD_PRELOAD when it
# runs a foreign (non-sanitized) binary such as Debian's ibv_devinfo against
# our sanitized library: ASan insists on being first in the initial library
# list. It is empty in normal builds.
TEST_ENV = IBVCT_SRC=$(TOP) IBVCT_BUILD=$(TOP)/$(B) \
	IBVCT_PROVIDER=$(TOP)/$(FP_PLUGIN) IBVCT_LIBDIR=$(TOP)/$(B)/lib
ifeq ($(SANITIZE),1)
TEST_ENV += IBVCT_SANITIZE=1 IBVCT_PRELOAD=$(shell $(CC) -print-file-name=libasan.so) \
	ASAN_OPTIONS=detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	LSAN_OPTIONS=suppressions=$(TOP)/ci/lsan.supp:print_suppressions=0
# The sanitizers slow a program two to three times (more for fork and exit):
# the time limits and waits grow with them, as they do under valgrind.
TEST_ENV += IBVCT_TIMEOUT_MULT=$(or $(IBVCT_TIMEOUT_MULT),3)
endif
ifeq ($(VALGRIND),1)
ifeq ($(SANITIZE),1)
$(error VALGRIND=1 and SANITIZE=1 do not mix: pick one)
endif
TEST_ENV += IBVCT_VALGRIND=1 IBVCT_TIMEOUT_MULT=$(or $(IBVCT_TIMEOUT_MULT),10)
endif

TEST_BINS := $(sort $(TEST_C_BINS) $(TEST_SH_BINS))

# ---- conformance suites (suites/): one source, two targets ----------------
# TARGET=ref: our verbs.h, our library (rpath), fake provider set up by
# testkit/runner/th_ref.c. TARGET=system: the system's verbs.h and library
# through pkg-config, never fp_script.a. Both get the layout table of the
# installed rdma-core header (th_layout_sys) to compare with (ABI-*).
SUITE_SRCS     := $(sort $(wildcard suites/t[0-9]*.c))
SUITE_SH_SRCS  := $(sort $(wildcard suites/t[0-9]*.sh))
SUITE_REF_BINS := $(foreach s,$(SUITE_SRCS),$(B)/suites/ref/$(basename $(notdir $(s))).t)
SUITE_SYS_BINS := $(foreach s,$(SUITE_SRCS),$(B)/suites/system/$(basename $(notdir $(s))).t)
SUITE_SH_BINS  := $(foreach s,$(SUITE_SH_SRCS),$(B)/t/$(basename $(notdir $(s))).t)
SYS_VERBS_CFLAGS = $(shell pkg-config --cflags libibverbs 2>/dev/null)
SYS_VERBS_LIBS   = $(or $(shell pkg-config --libs libibverbs 2>/dev/null),-libverbs)
SUITE_CFLAGS := $(CFLAGS_COMMON) -Itestkit/runner -DTH_SRCDIR='"$(TOP)"'
# Per-tree flags: the suites are held to -Wmissing-prototypes; of the ref
# target's objects only the runner's th_ref.c (it writes the fake host's
# script) includes a fake-provider header. The suites' runner
# (testkit/runner/) is compiled for each target beside the suites.
$(B)/obj/suites/%.o: SUITE_CFLAGS += -Wmissing-prototypes
$(B)/obj/suites/ref/%.o: FP_INC :=
$(B)/obj/suites/ref/runner/th_ref.o: FP_INC := $(FP_SCRIPT_INC)

define suite_obj_rules
$$(B)/obj/suites/ref/$(1)%.o: $(2)%.c testkit/runner/th.h | $$(DEPS_FIRST)
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  CC      $$@")
	$$(Q)$$(CC) $$(SUITE_CFLAGS) $$(REF_INC) $$(FP_INC) -DTH_TARGET_REF \
		-DTH_PROVIDER='"$$(REF_DRIVER_DIR)/libibvct-fake.so"' -MMD -MP -c $$< -o $$@
$$(B)/obj/suites/system/$(1)%.o: $(2)%.c testkit/runner/th.h | $$(DEPS_FIRST)
	@mkdir -p $$(dir $$@)
	@$$(if $$(Q),echo "  CC      $$@")
	$$(Q)$$(CC) $$(SUITE_CFLAGS) $$(SYS_VERBS_CFLAGS) -DTH_TARGET_SYSTEM -MMD -MP -c $$< -o $$@
endef
$(eval $(call suite_obj_rules,,suites/))
$(eval $(call suite_obj_rules,runner/,testkit/runner/))
# layout-app: our header; layout-sys: the system's; layout-appsys: the
# system's again under the app name (the system build has only that one).
$(B)/obj/suites/layout-%.o: testkit/runner/th_layout.c testkit/runner/th_layout.def | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(SUITE_CFLAGS) $(if $(filter app,$*),$(REF_INC)) $(SYS_VERBS_CFLAGS) \
		-DTH_LAYOUT_NAME=th_layout_$(if $(filter sys,$*),sys,app) -c $< -o $@

$(B)/suites/ref/%.t: $(B)/obj/suites/ref/%.o $(B)/obj/suites/ref/runner/th.o $(B)/obj/suites/ref/runner/tr.o \
		$(B)/obj/suites/ref/runner/tf.o \
		$(B)/obj/suites/ref/runner/th_host.o \
		$(B)/obj/suites/ref/runner/th_ref.o \
		$(B)/obj/suites/layout-app.o $(B)/obj/suites/layout-sys.o $(FP_SCRIPT_LIB) $(REF_LIB) $(COV_EXIT)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $(filter-out $(COV_EXIT),$(filter %.o %.a,$^)) $(TEST_LDEXTRA) \
		-L$(B)/lib -l:libibverbs.so.1 -Wl,-rpath,$(SUITE_RPATH) -lcmocka -pthread
$(B)/suites/system/%.t: $(B)/obj/suites/system/%.o $(B)/obj/suites/system/runner/th.o $(B)/obj/suites/system/runner/tr.o \
		$(B)/obj/suites/system/runner/tf.o \
		$(B)/obj/suites/system/runner/th_host.o \
		$(B)/obj/suites/system/runner/th_ref_stub.o $(B)/obj/suites/layout-appsys.o \
		$(B)/obj/suites/layout-sys.o $(COV_EXIT)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $(filter-out $(COV_EXIT),$(filter %.o,$^)) $(TEST_LDEXTRA) \
		$(SYS_VERBS_LIBS) -lcmocka -pthread

$(B)/t/%.t: suites/%.sh
	@mkdir -p $(dir $@)
	$(Q)cp $< $@ && chmod +x $@

suites: all $(SUITE_REF_BINS) $(SUITE_SYS_BINS) $(SUITE_SH_BINS)
tests: suites
TEST_BINS += $(SUITE_REF_BINS) $(SUITE_SH_BINS)
# make check and make failed: each test must leave nothing in /tmp or
# /dev/shm and no process running (testkit/sh/test-exec, IBVCT_LITTER_CHECK); and
# they run under a pool of guests (tools/vm/vm-pool.sh): the tests that run
# a command in an rxe-vm or xrc-vm guest share one boot of each kind (two,
# when two tests want one at once), stopped when prove ends.
PROVE_RUN = $(TEST_ENV) IBVCT_LITTER_CHECK=1 sh $(TOP)/tools/vm/ibvct-vm pool -- $(PROVE) -j$(JOBS) \
	--statefile=$(TOP)/$(B)/.prove --exec "sh $(TOP)/testkit/sh/test-exec"

# t6050 checks the Debian package that `make deb-package` leaves in $(B)/deb/.
# t6104 and t6105 boot a guest with the soft XRC device: make kmod first.
# The longest tests first, so that prove's JOBS slots end together rather
# than with one long test alone at the end (guests, the .deb, the lints that
# rebuild the tree).
CHECK_FIRST := $(addprefix $(B)/t/,$(addsuffix .t,t6100-vm-run t6107-vm-pool t6105-vm-xrc-conformance \
	t6120-vm-release-13 t6106-vm-stuck-guests t6050-deb-package t6111-xrc-agreement t7008-mutate-sample \
	t7007-deps-lint t7100-quirk-matrix t6110-rxe-agreement t6140-vm-pair-slurm t6101-vm-pair-pingpong))
CHECK_BINS := $(filter $(CHECK_FIRST),$(TEST_BINS)) $(filter-out $(CHECK_FIRST),$(TEST_BINS))
# make check boots a guest of the other Debian release (t6120, t6121): its
# root and kernel are made before the tests' clocks start (once, kept:
# tools/vm/release-root; debootstrap from the mirror the first time)
RELEASE_OTHER := $(if $(filter 12,$(HOST_RELEASE)),13)
release-roots: | $(DEPS_FIRST)
	$(if $(RELEASE_OTHER),$(Q)sh tools/vm/release-root -q root --release $(RELEASE_OTHER) >/dev/null && \
		sh tools/vm/release-root -q kernel --release $(RELEASE_OTHER) >/dev/null)
check: tests kmod release-roots $(if $(filter %/t6050-deb-package.t,$(TEST_BINS)),deb-package) | $(DEPS_FIRST)
	$(PROVE_RUN) --failures --comments --state=save $(CHECK_BINS)

valgrind: | $(DEPS_FIRST)
	$(Q)$(MAKE) --no-print-directory check VALGRIND=1

# make soak [SOAK_RUNS=200] [SOAK_LOAD=0]: the two-process interop runs and
# the cross-process tests and suites, SOAK_RUNS times each on a loaded
# machine; failures and hangs per test (quality/soak). Not part of `make check`.
SOAK_RUNS ?= 200
SOAK_TESTS = interop=$(B)/t/t6030-rc-pingpong.t \
	xrc-crossproc=$(B)/t/t5820-xrc-crossproc-verbs.t rc-crossproc=$(B)/t/t5821-rc-crossproc.t \
	stress-traffic=$(B)/t/t5830-stress-traffic.t \
	suite-lifetime-current=$(B)/suites/ref/t3100-lifetime.t \
	suite-lifetime-seed=$(B)/suites/ref/t3100-lifetime.t@$(TOP)/fixtures/scripts/seed.fps \
	suite-send-wr=$(B)/suites/ref/t1000-send-wr.t \
	place=$(B)/t/t5320-place.t import-crossproc=$(B)/t/t5840-import-multiproc.t \
	suite-onesided=$(B)/suites/ref/t3102-onesided-target.t \
	suite-shared-context=$(B)/suites/ref/t3103-shared-context.t \
	suite-fork-mr=$(B)/suites/ref/t3104-fork-mr.t
soak: tests
	$(TEST_ENV) sh quality/soak -n $(SOAK_RUNS) $(if $(filter 0,$(SOAK_LOAD)),--no-load) $(SOAK_TESTS)

# The fault sweep (quality/fault-sweep): always on the SANITIZE=1 build; not
# part of check (t7006 runs a sample of it through the same script).
fault-sweep:
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 fault-sweep-run

fault-sweep-run: tests
	$(TEST_ENV) JOBS=$(JOBS) sh quality/fault-sweep

# Mutation testing of the rule sites (quality/mutate): every `/* @rule ID */`
# condition is mutated in scratch copies of the tree and must make a test
# naming ID fail. Not part of check (t7008 runs a sample). MUTATE_ONLY=ID,...
# MUTATE_JOBS=n (default 2) MUTATE_MIN=percent (default 100).
mutate: $(REAP) | $(DEPS_FIRST)
	perl quality/mutate --jobs $(or $(MUTATE_JOBS),2) --min $(or $(MUTATE_MIN),100) $(if $(MUTATE_ONLY),--only '$(MUTATE_ONLY)')

# Reruns what failed in the last `make check` of this build flavour.
failed: tests kmod | $(DEPS_FIRST)
	$(PROVE_RUN) --failures --comments --state=failed,save

# Coverage of ref-impl, the fake provider and its kernel daemon by every
# test, with branches, into reports/coverage/ (HTML); lcov's summary and one
# line per component on stdout (quality/coverage-summary). The report is written
# even when tests fail; the target then fails, and it fails too when lines
# or functions of ref-impl, or of the fake provider (src and kernel
# together), are under COVERAGE_MIN percent (default 90).
COV_DIR  := build-cov
COV_INFO := $(COV_DIR)/coverage.info
COVERAGE_MIN ?= 90
LCOV_RC  := --rc lcov_branch_coverage=1
coverage: | $(DEPS_FIRST)
	$(Q)$(MAKE) --no-print-directory COVERAGE=1 tests
	$(Q)find $(COV_DIR) -name '*.gcda' -delete
	$(Q)rc=0; $(MAKE) --no-print-directory COVERAGE=1 check || rc=$$?; \
	lcov -q $(LCOV_RC) --capture --directory $(COV_DIR)/obj --base-directory $(TOP) \
		--output-file $(COV_DIR)/coverage.all.info 2>$(COV_DIR)/lcov.log || \
		{ cat $(COV_DIR)/lcov.log >&2; exit 1; }; \
	lcov -q $(LCOV_RC) --extract $(COV_DIR)/coverage.all.info \
		'$(TOP)/ref-impl/src/*' '$(TOP)/fake-provider/engine/*' '$(TOP)/fake-provider/verbs/*' \
		'$(TOP)/fake-provider/script/*' '$(TOP)/uapi/*' '$(TOP)/fake-provider/kernel/*' \
		'$(TOP)/fake-provider/common/*' \
		--output-file $(COV_INFO) && \
	rm -rf reports/coverage && \
	genhtml -q $(LCOV_RC) --branch-coverage --output-directory reports/coverage $(COV_INFO) && \
	lcov $(LCOV_RC) --summary $(COV_INFO) && \
	{ sh quality/coverage-summary $(COV_INFO) $(TOP) $(COVERAGE_MIN) || \
		{ [ $$? -eq 1 ] && { [ $$rc -ne 0 ] || rc=1; }; }; } && \
	$(if $(and $(filter conformance certify,$(MAKECMDGOALS)),$(REPORT_OUT)),{ test ! -f $(REPORT_DIR)/summary.txt || $(COV_INTO_REPORT); } && )\
	echo "coverage: HTML in reports/coverage/index.html" && exit $$rc

# The conformance run and its report folder reports/<date>-TARGET-DEVICE/,
# by `tools/ibvct/ibvct conformance` (the installed `ibvct conformance`: one
# implementation for both).
TARGET ?= ref
DEVICE ?= $(if $(filter rxe-vm,$(TARGET)),rxe0,$(if $(filter xrc-vm,$(TARGET)),ixrc0,$(if $(filter system,$(TARGET)),,fake0)))
# TARGET=system: the suites built against the system's libibverbs, on
# DEVICE (default: IBVCT_DEVICE, else the first device with an active port);
# TAP in the report dir. Where the device is not there, or there is none,
# the run is a NO RESULT that says why (exit status 3).
# On ref it is the conformance run only: the smoke, the four suites in every
# configuration and the interop runs of unmodified ibverbs-utils clients
# (INTEROP_BINS, with requirement IDs; tools/ibvct/ibvct names the same three); the
# self-tests stay in `make check`.
# TARGET=rxe-vm: the system-built suites and ibverbs-utils (t6102) in a QEMU
# guest of the distribution's kernel on its rxe0, the pingpongs across two
# guests (t6101; VM_BINS); KERNEL=FILE.deb another Debian kernel package.
# TARGET=xrc-vm: the same in one guest on ibvct's soft XRC device ixrc0
# (make kmod, its provider; t6104's ibv_xsrq_pingpong there too).
# MIN_RAN=N or N%: the mandatory requirements that must have run for the
# run to be a result (ibvct conformance --min-ran; default 1).
# RELEASE=13 (rxe-vm, xrc-vm): a guest of Debian 13, its kernel and root
# (tools/vm/release-root), xrc-vm with build/kmod-13/ixrc.ko.
INTEROP_BINS := $(filter $(B)/t/t6010-% $(B)/t/t6011-% $(B)/t/t6030-%,$(TEST_SH_BINS))
VM_BINS := $(filter $(B)/t/t6101-% $(B)/t/t6102-% $(B)/t/t6104-%,$(TEST_SH_BINS))
CONFORMANCE_ARGS = --target $(TARGET) $(if $(KERNEL),--kernel $(KERNEL)) \
	$(if $(filter-out $(HOST_RELEASE),$(RELEASE)),--release $(RELEASE)) $(if $(DEVICE),--device $(DEVICE)) \
	$(if $(MIN_RAN),--min-ran $(MIN_RAN))
# A system run without DEVICE is named after the device it finds
# (reports/<date>-system-<device>): ibvct names the folder then, with this
# make run's date (IBVCT_REPORT_DATE).
REPORT_OUT = $(if $(and $(filter system,$(TARGET)),$(if $(DEVICE),,1)),,--out $(REPORT_DIR))
# make coverage conformance (either order): coverage/ goes into the run's
# folder when both are done, by whichever goal ends last
conformance: all suites $(INTEROP_BINS) $(VM_BINS) $(FINGERPRINT) $(REAP) $(if $(filter xrc-vm,$(TARGET)),kmod) | $(DEPS_FIRST)
	$(Q)rc=0; $(TEST_ENV) PROVE="$(PROVE)" JOBS=$(JOBS) IBVCT_REPORT_DATE=$(REPORT_DATE) \
		sh tools/ibvct/ibvct conformance $(CONFORMANCE_ARGS) $(REPORT_OUT) || rc=$$?; \
	$(if $(and $(filter coverage,$(MAKECMDGOALS)),$(REPORT_OUT)),{ test ! -f $(REPORT_DIR)/summary.txt || \
		test ! -f reports/coverage/index.html || $(COV_INTO_REPORT); } &&) \
	exit $$rc

# ---- reports: fingerprint tool, one report folder per make run, certify ---
# ibvct-fingerprint links libibverbs.so.1 without an rpath: run directly it
# describes the system's rdma-core, under ibvct-run the reference target.
# The tools under tools/ibvct/ see the public headers only.
$(B)/obj/tools/ibvct/%.o: FP_INC :=
$(FINGERPRINT): $(B)/obj/tools/ibvct/ibvct-fingerprint.o $(REF_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $< -L$(B)/lib -l:libibverbs.so.1 -ldl -pthread
tests: $(FINGERPRINT)

# ibvct-reap: testkit/sh/test-exec runs every test program under it (time limit, and
# every process the test started ends with it, whatever its process group).
# It shares the stretched clock of the suites' runner (testkit/runner/tr_clock.h).
$(B)/obj/tools/ibvct/ibvct-reap.o: CFLAGS_COMMON += -I$(TOP)/testkit/runner
$(REAP): $(B)/obj/tools/ibvct/ibvct-reap.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $<
tests: $(REAP)
# ibvct-vm-watch: tools/vm/ibvct-vm runs every guest under it (its time limit
# on the same stretched clock; a KVM error, a panic or a silent console end
# the guest at once). Built with the library: every goal that boots a guest
# has it.
VM_WATCH := $(B)/bin/ibvct-vm-watch
$(B)/obj/tools/vm/%.o: FP_INC :=
$(B)/obj/tools/vm/ibvct-vm-watch.o: CFLAGS_COMMON += -I$(TOP)/testkit/runner
$(VM_WATCH): $(B)/obj/tools/vm/ibvct-vm-watch.o
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(CFLAGS_COMMON) -o $@ $<
all: $(VM_WATCH)
# Named once per make run, so that `make conformance coverage` (either
# order) fills one folder: coverage/ is copied in and linked from index.html.
REPORT_DATE := $(shell date -u +%Y%m%d-%H%M%S)
REPORT_DIR := $(TOP)/reports/$(REPORT_DATE)-$(TARGET)-$(DEVICE)
COV_INTO_REPORT = mkdir -p $(REPORT_DIR) && rm -rf $(REPORT_DIR)/coverage && \
	cp -R reports/coverage $(REPORT_DIR)/coverage && \
	{ lcov $(LCOV_RC) --summary $(COV_INFO) 2>&1; \
	  sh quality/coverage-summary $(COV_INFO) $(TOP) $(COVERAGE_MIN) || true; } \
		>$(REPORT_DIR)/coverage/summary.txt && \
	{ test ! -f $(REPORT_DIR)/summary.txt || perl tools/report/report-html $(REPORT_DIR); } && \
	echo "coverage: also in $(REPORT_DIR)/coverage/"

# make certify TARGET=system DEVICE=mlx5_0 [WAIVERS=file]: the conformance
# run (its failures do not stop this), then the vendor bundle
# reports/<run>.tar.gz with a SHA-256 manifest (tools/report/certify), checked by
# tools/report/verify-bundle: this target fails when the bundle would be rejected.
# `tools/ibvct/ibvct certify` does it all, as the installed `ibvct certify`.
certify: all suites $(INTEROP_BINS) $(VM_BINS) $(FINGERPRINT) $(REAP) | $(DEPS_FIRST)
	$(Q)$(TEST_ENV) PROVE="$(PROVE)" JOBS=$(JOBS) IBVCT_REPORT_DATE=$(REPORT_DATE) \
		sh tools/ibvct/ibvct certify $(CONFORMANCE_ARGS) \
		$(subst --out,--report,$(REPORT_OUT)) $(if $(WAIVERS),--waivers $(WAIVERS))

# ---- fuzzing: make fuzz (AFL++, fake-provider/fuzz/; not part of check) ---
# Each harness built by afl-cc with ASan+UBSan (persistent mode) into
# build-fuzz/, then run by quality/fuzz-run, one after another on one core, for
# FUZZ_EXECS executions each, or FUZZ_SECONDS seconds when that is set.
# Seeds: the kept corpus (fixtures/fuzz/<name>/, with its crashes-fixed/),
# plus the example scripts, or the daemon harness's generated exchanges.
# Prints executions, corpus size, crashes and hangs per target; fails if
# there is any crash or hang. FUZZ_CMIN=1 then minimises each queue
# (afl-cmin) into fixtures/fuzz/<name>/.
FUZZ_EXECS   ?= 1000000
FUZZ_SECONDS ?=
FUZZ_DIR     := build-fuzz
FZ_AFL_CFLAGS := $(CSTD) -O2 -g -Wall -Wextra -Wno-unused-parameter -D_GNU_SOURCE \
	$(REF_INC) $(FP_INC) $(FZ_INC)
FZ_HDRS := $(wildcard fake-provider/fuzz/*.h fake-provider/common/*.h fake-provider/script/*.h fake-provider/script/*.def \
	uapi/*.h uapi/*.def fake-provider/kernel/*.h)
FZ_SCRIPT_SRCS := fake-provider/fuzz/fz-script.c $(FP_SCRIPT_SRCS)
FZ_FKD_SRCS := fake-provider/fuzz/fz-fkd.c $(filter-out %/main.c,$(FKD_SRCS)) $(FP_UAPI_SRCS) $(FP_SCRIPT_SRCS)
FZ_RUN := sh quality/fuzz-run $(if $(FUZZ_SECONDS),-e 0 -s $(FUZZ_SECONDS),-e $(FUZZ_EXECS))

FZ_AFL_CC = @mkdir -p $(dir $@); $(if $(Q),echo "  AFL-CC  $@";) \
	AFL_USE_ASAN=1 AFL_USE_UBSAN=1 AFL_QUIET=1 afl-cc $(FZ_AFL_CFLAGS) -o $@
$(FUZZ_DIR)/fz-script: $(FZ_SCRIPT_SRCS) $(FZ_HDRS) | $(DEPS_FIRST)
	$(FZ_AFL_CC) $(FZ_SCRIPT_SRCS) -pthread
$(FUZZ_DIR)/fz-fkd: $(FZ_FKD_SRCS) $(FZ_HDRS) | $(DEPS_FIRST)
	$(FZ_AFL_CC) $(FZ_FKD_SRCS) -pthread

fuzz: $(FUZZ_DIR)/fz-script $(FUZZ_DIR)/fz-fkd
	$(Q)rm -rf $(FUZZ_DIR)/seeds-fkd && mkdir -p $(FUZZ_DIR)/seeds-fkd && \
	$(FUZZ_DIR)/fz-fkd --seeds $(FUZZ_DIR)/seeds-fkd
	$(Q)rc=0; \
	$(FZ_RUN) $(if $(filter 1,$(FUZZ_CMIN)),-c fixtures/fuzz/script) script \
		$(FUZZ_DIR)/fz-script $(FUZZ_DIR)/work fixtures/fuzz/script fixtures/scripts \
		fixtures/scripts/bad || rc=1; \
	$(FZ_RUN) $(if $(filter 1,$(FUZZ_CMIN)),-c fixtures/fuzz/fkd) fkd \
		$(FUZZ_DIR)/fz-fkd $(FUZZ_DIR)/work fixtures/fuzz/fkd $(FUZZ_DIR)/seeds-fkd || rc=1; \
	exit $$rc

# ---- ABI gate (tools/abi/abi-gate, fixtures/abi/README.md) -----------------------
# make abi-check [ABI_INCLUDE=dir] [ABI_LIB=path] [ABI_BASELINE=name]
# [ABI_WAIVERS=file]: the gate's findings and summary, against each baseline
# (default: both Debian releases, 44 and 56: ref-impl serves programs of
# either). Its status is bit flags (tools/abi/abi-gate --help: 1 error, 2
# usage, 4 change, 8 incompatible, 16 a node grown in place, 32 a changed
# meaning): succeeds on 0, 4 and 36, fails when a break or a grown node no
# waiver accepts (8, 16) or a check that could not run (1, 2) is in it.
# ABI_WAIVERS= (empty) checks without the project's waivers.
# `ibvct abi-check` runs the same gate with the same defaults and status rule.
# make abi-baseline: rewrites fixtures/abi/ref-impl.abi (abidw of our library)
# after an intended change of ref-impl's exported interface.
ABI_BASELINE ?= rdma-core-44 rdma-core-56
ABI_INCLUDE  ?= $(TOP)/ref-impl/include
ABI_LIB      ?= $(TOP)/$(REF_LIB)
ABI_WAIVERS  ?= $(TOP)/fixtures/abi/waivers.txt
abi-check: all | $(DEPS_FIRST)
	$(Q)fail=0; for b in $(ABI_BASELINE); do rc=0; \
		sh tools/abi/abi-gate --baseline $$b --include $(ABI_INCLUDE) \
		--lib $(ABI_LIB) $(if $(ABI_WAIVERS),--waivers $(ABI_WAIVERS)) || rc=$$?; \
		test $$((rc & 27)) -eq 0 || fail=1; done; test $$fail = 0

# make abi-releases [ABI_RELEASES_DIR=dir]: Debian 12's and 13's libibverbs
# from their packages (tools/abi/abi-release check: apt-get download from
# the mirror this machine's apt sources name, unpacked in the scratch dir),
# held to the committed tables, symbol lists and the 44 -> 56 findings.
# Network to the mirror; not part of check (t0205 checks the committed data).
ABI_RELEASES_DIR ?= $(or $(TMPDIR),/tmp)/ibvct-abi-releases
abi-releases: | $(DEPS_FIRST)
	sh tools/abi/abi-release check $(ABI_RELEASES_DIR)

abi-baseline: all | $(DEPS_FIRST)
	abidw --no-corpus-path --no-comp-dir-path --no-show-locs --drop-private-types \
		--headers-dir ref-impl/include/infiniband $(REF_LIB) >fixtures/abi/ref-impl.abi.new
	mv fixtures/abi/ref-impl.abi.new fixtures/abi/ref-impl.abi

# ---- install --------------------------------------------------------------
# A separate build (build-inst/) whose compiled-in paths point at the
# install tree (INST_LIB, INST_SHARE above). What goes where is stated once,
# in INSTALL_MAP below: install-files does what it says and nothing else,
# `make install-map` prints it, and t6050 holds the Debian package to it.
#   $(LIBDIR)/ibvct/            laid out as build/ is, so that everything that
#     bin/ibvct-run, ibvct-fkd,  looks beside itself finds the rest: ibvct-run
#       ibvct-fingerprint,       its lib/, the plugin its daemon in ../../bin,
#       ibvct-reap, -vm-watch    the suites the library through their rpath
#     lib/libibverbs.so.1 (+ .so)  the reference library, in this private
#     lib/ibvct/libibvct-fake.so   dir only (never over the system's)
#     suites/ref/, suites/system/  the prebuilt suites of both targets
#     t/                        the conformance run's interop tests
#   $(PREFIX)/share/ibvct/      the scripts the ibvct commands run, at the
#     tools/<family>/           paths below share/ibvct that they have below
#     testkit/sh/               the checkout (they find each other so, from
#                               either): the commands' tools/ and the test
#                               runner they run programs under (INST_SCRIPTS)
#     fixtures/                 ABI tables, expectations, requirement
#                               catalogue, mandatory list, example scripts
#     VERSION                   tools/ibvct/version's answer at install time
#     build -> $(LIBDIR)/ibvct, ref-impl/include -> $(PREFIX)/include/ibvct
#   $(PREFIX)/bin/ibvct         tools/ibvct/ibvct, which finds share/ibvct beside it
#   $(PREFIX)/bin/ibvct-run     -> $(LIBDIR)/ibvct/bin/ibvct-run
#   $(PREFIX)/include/ibvct/infiniband/*.h   verbs.h, driver.h, ...
#   $(PREFIX)/share/man/man1/   ibvct(1) and a page per command (doc/man/)
# Symlinks are relative, so that the tree works wherever DESTDIR puts it.
ifeq ($(INSTALL_BUILD),1)
# The suites' fixtures dir when IBVCT_SRC is unset: the install tree's.
$(B)/obj/suites/%.o: SUITE_CFLAGS += -UTH_SRCDIR -DTH_SRCDIR='"$(INST_SHARE)"'
endif
# The scripts of the ibvct commands, by their checkout paths: the command and
# its runners and version, the ABI gate, the report tools, the VM targets'
# guest runner, the guest's /init and rxe-setup, and the test runner they
# run programs under.
INST_SCRIPTS := $(addprefix tools/ibvct/,ibvct conformance suites-run version) \
	$(addprefix tools/abi/,abi-gate abi-table abi-dwarf abi-release) $(wildcard tools/abi/*.awk tools/abi/*.suppr) \
	$(addprefix tools/report/,report-all report-fingerprint report-html report-junit \
		report-summary report-verdict report-lib.pm report-ranon certify compare-runs verify-bundle) \
	$(addprefix tools/vm/,ibvct-vm vm-pool.sh guest-init guest-conformance release-root rdma-core-root \
		rxe-setup) \
	$(addprefix testkit/sh/,test-exec test-lib.sh)
INST_FIXTURES := fixtures/requirements.txt fixtures/mustpass.txt $(wildcard fixtures/expect/*.txt \
	fixtures/abi/*.table fixtures/abi/*.symbols fixtures/abi/*.abi fixtures/abi/*.findings \
	fixtures/abi/waivers.txt \
	fixtures/scripts/*.fps)
INST_HEADERS := $(wildcard ref-impl/include/infiniband/*.h ref-impl/include/infiniband/*.def)
INST_MAN := $(wildcard doc/man/*.1)
# The install layout, one row per installed path: MODE:SOURCE:INSTALLED.
# MODE x: installed 0755; r: 0644; s: a script, 0755 when it starts with
# #!, else 0644; o: the file is what SOURCE prints (run by sh); l: a
# relative symlink to the installed path SOURCE. inst_in MODE,FILES,DIR:
# each file in DIR by its own name; inst_at MODE,FILES,DIR: each at its
# checkout path below DIR.
inst_in = $(foreach f,$(2),$(1):$(f):$(3)/$(notdir $(f)))
inst_at = $(foreach f,$(2),$(1):$(f):$(3)/$(f))
INSTALL_MAP = \
	$(call inst_in,x,$(IBVCT_RUN) $(FKD) $(FINGERPRINT) $(REAP) $(VM_WATCH),$(INST_LIB)/bin) \
	r:$(REF_LIB):$(INST_LIB)/lib/libibverbs.so.1 \
	l:$(INST_LIB)/lib/libibverbs.so.1:$(INST_LIB)/lib/libibverbs.so \
	r:$(FP_PLUGIN):$(INST_LIB)/lib/ibvct/libibvct-fake.so \
	$(call inst_in,x,$(SUITE_REF_BINS),$(INST_LIB)/suites/ref) \
	$(call inst_in,x,$(SUITE_SYS_BINS),$(INST_LIB)/suites/system) \
	$(call inst_in,x,$(INTEROP_BINS) $(VM_BINS),$(INST_LIB)/t) \
	$(call inst_at,s,$(INST_SCRIPTS),$(INST_SHARE)) \
	$(call inst_at,r,$(INST_FIXTURES),$(INST_SHARE)) \
	o:tools/ibvct/version:$(INST_SHARE)/VERSION \
	l:$(INST_LIB):$(INST_SHARE)/build \
	l:$(PREFIX)/include/ibvct:$(INST_SHARE)/ref-impl/include \
	x:tools/ibvct/ibvct:$(PREFIX)/bin/ibvct \
	l:$(INST_LIB)/bin/ibvct-run:$(PREFIX)/bin/ibvct-run \
	$(call inst_in,r,$(INST_HEADERS),$(PREFIX)/include/ibvct/infiniband) \
	$(call inst_in,r,$(INST_MAN),$(PREFIX)/share/man/man1)
define inst_newline


endef
# The map as text, a row a line: MODE SOURCE INSTALLED.
inst_map_text = $(subst $(inst_newline) ,$(inst_newline),$(foreach r,$(INSTALL_MAP),$(subst :, ,$(r))$(inst_newline)))
install: | $(DEPS_FIRST)
	$(Q)$(call inst_paths,$(PREFIX),$(LIBDIR))
	$(Q)$(MAKE) --no-print-directory INSTALL_BUILD=1 PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) install-files

# make install-map [PREFIX=] [LIBDIR=]: the table (MODE SOURCE INSTALLED);
# with INSTALL_BUILD=1 its sources are those install-files takes.
install-map:
	$(info $(inst_map_text))@:

# The map is written to $(B)/install.map (a few hundred rows: too long for
# one command line), then installed a row at a time.
install-files: all suites $(INTEROP_BINS) $(VM_BINS) $(FINGERPRINT) $(REAP) | $(DEPS_FIRST)
	$(file >$(B)/install.map,$(inst_map_text))
	$(Q)while read -r mode from to; do \
		[ -n "$$mode" ] || continue; \
		dest=$(DESTDIR)$$to; mkdir -p "$${dest%/*}" || exit 1; \
		case $$mode in \
		x) install -m 0755 "$$from" "$$dest" ;; \
		r) install -m 0644 "$$from" "$$dest" ;; \
		s) if [ "$$(head -c 2 "$$from")" = '#!' ]; then m=0755; else m=0644; fi; \
			install -m $$m "$$from" "$$dest" ;; \
		o) sh "$$from" >"$$dest" && chmod 0644 "$$dest" ;; \
		l) ln -sfn "$$(realpath -ms --relative-to="$${to%/*}" "$$from")" "$$dest" ;; \
		*) echo "install-files: bad row: $$mode $$from $$to" >&2; false ;; \
		esac || exit 1; \
	done <$(B)/install.map

# ---- Debian package -------------------------------------------------------
# make deb: build/deb/ibvct_<version>_<arch>.deb (pkg/deb-build; the version
# is tools/ibvct/version's), from the install tree of PREFIX=/usr and the multiarch
# LIBDIR, staged in build-inst/deb-root/; then lintian, which must report no
# error and no warning. make deb-package: the same without lintian (t6050
# runs it on the package). build-inst/ is rebuilt from scratch when its
# paths (PREFIX, LIBDIR) are not those it was built with.
DEB_OUT  := $(TOP)/$(B)/deb
DEB_ROOT := $(TOP)/build-inst/deb-root
# inst_paths P L: clears build-inst/ unless it was built for PREFIX P, LIBDIR L
inst_paths = { want="PREFIX=$(1) LIBDIR=$(2)"; \
	[ "$$(cat build-inst/.paths 2>/dev/null)" = "$$want" ] || \
	{ rm -rf build-inst && mkdir -p build-inst && echo "$$want" >build-inst/.paths; }; }
deb-package: | $(DEPS_FIRST)
	$(Q)ma=$$(dpkg-architecture -qDEB_HOST_MULTIARCH) && \
	$(call inst_paths,/usr,/usr/lib/$$ma) && rm -rf $(DEB_ROOT) && \
	$(MAKE) --no-print-directory INSTALL_BUILD=1 SANITIZE= COVERAGE= VALGRIND= \
		PREFIX=/usr LIBDIR=/usr/lib/$$ma DESTDIR=$(DEB_ROOT) install-files >build-inst/install.log || \
		{ cat build-inst/install.log; exit 1; }
	$(Q)sh pkg/deb-build $(DEB_ROOT) $(DEB_OUT)

deb: deb-package | $(DEPS_FIRST)
	lintian --fail-on error,warning $(DEB_OUT)/ibvct_*.deb

# make deb-chroot-check: the package on a clean machine. A fresh Debian 12
# chroot (debootstrap minbase), the package installed there with apt-get,
# its `ibvct conformance` run there and compared with this make run's own
# report (pkg/deb-chroot-check). Root, and the Debian mirror; not in make
# check (minutes, and the network).
deb-chroot-check: deb-package conformance | $(DEPS_FIRST)
	$(Q)sh pkg/deb-chroot-check $(DEB_OUT)/ibvct_*.deb $(REPORT_DIR)

# make release-check RELEASE=13: the README's two commands on another
# Debian release, from this machine: a fresh chroot of it (its minbase root
# debootstrapped once and kept), a clone of HEAD inside, `make conformance`
# and `make check` there as root with the network to the mirror, each
# installing what it needs from that release's packages
# (tools/vm/release-check; logs, reports and summary.txt in
# build/release-check-N/). Not in make check (the better part of an hour).
release-check: | $(DEPS_FIRST)
	sh tools/vm/release-check --release $(RELEASE)

# make release-matrix: the suites on {12, 13} x {ref, rxe-vm, xrc-vm} and the
# agreement tests (t6110, t6111) on each release, then one report of which
# verdicts differ between the releases and why (tools/vm/release-matrix,
# tools/report/report-matrix, fixtures/release-diffs.txt): HTML and
# matrix.tsv in reports/<date>-release-matrix/. Not in make check (an hour).
release-matrix: all suites tests kmod $(INTEROP_BINS) $(VM_BINS) $(FINGERPRINT) $(REAP) $(IXRC_RNR) | $(DEPS_FIRST)
	$(TEST_ENV) sh tools/vm/release-matrix

# ---- the xrc-vm target: ibvct's soft XRC device (ixrc) ------
# Its rdma-core provider is part of `all`: built against the system's
# <infiniband/verbs.h> and linked to its libibverbs (never ref-impl's), named
# as libibverbs 44 loads an RDMAV_DRIVERS path (PATH + "-rdmav34.so").
# `make kmod` builds the module against the guest kernel's headers: KDIR,
# by default those of the kernel ABI that linux-image-amd64 names now (the
# one ibvct-vm boots; install group kmod: linux-headers-amd64), in $(B)/kmod
# (Kbuild builds in its source dir, so the sources are copied there first).
# `make xrc-vm` runs Debian's ibv_devinfo, ibv_rc_pingpong and
# ibv_xsrq_pingpong on it in the guest (minutes; not in make check).
IXRC_DIR  := $(B)/lib/ixrc
IXRC_PROV := $(IXRC_DIR)/libibvct-ixrc-rdmav34.so
IXRC_ROUTE := $(IXRC_DIR)/ixrc-xrc-route
IXRC_RNR := $(IXRC_DIR)/ixrc-rnr
IXRC_KO   := $(B)/kmod/ixrc.ko
IXRC_SRC  := ixrc
KMOD_ABI   = $(shell apt-cache depends linux-image-amd64 2>/dev/null | sed -n 's/^ *Depends: linux-image-\(.*\)-amd64$$/\1/p' | head -n 1)
KDIR      ?= /usr/src/linux-headers-$(KMOD_ABI)-amd64

all: $(IXRC_PROV)

$(IXRC_PROV): $(IXRC_SRC)/provider/ixrc.c $(IXRC_SRC)/provider/verbs-private-34.h $(IXRC_SRC)/ixrc-abi.h | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CSTD) $(OPT) $(WARN) -fPIC -shared $(SYS_VERBS_CFLAGS) -o $@ $< $(SYS_VERBS_LIBS) -Wl,-z,defs

$(IXRC_ROUTE): $(IXRC_SRC)/tests/ixrc-xrc-route.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CSTD) $(OPT) $(WARN) $(SYS_VERBS_CFLAGS) -o $@ $< $(SYS_VERBS_LIBS)

# t6104 runs it in the guest: the RC requester's RNR retry on ixrc0
$(IXRC_RNR): $(IXRC_SRC)/tests/ixrc-rnr.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CCLD    $@")
	$(Q)$(CC) $(CSTD) $(OPT) $(WARN) $(SYS_VERBS_CFLAGS) -o $@ $< $(SYS_VERBS_LIBS)
tests: $(IXRC_RNR)
# the xrc-vm conformance run has t6104 run it in its guest (built for every
# target: a few seconds, and the goal is the same whatever it runs)
conformance certify: $(IXRC_RNR)
certify: $(if $(filter xrc-vm,$(TARGET)),kmod)

# Kbuild is run as a plain command, not as a recursive make: `make -n`
# (quality/lint-deps, t7004) prints it instead of running the kernel's whole
# make, which takes seconds of CPU each time; three files build serially.
KBUILD_MAKE = $(MAKE)
# make kmod RELEASE=N, N another Debian release than the host's: ixrc.ko
# for that release's kernel, built in its root (tools/vm/release-root: the
# root debootstrapped once and kept; Kbuild there, with the release's
# compiler and kbuild tools, against its linux-headers-amd64) into
# $(B)/kmod-N/ (beside it kernel.abi: the kernel it is for).
ifneq ($(RELEASE),$(HOST_RELEASE))
kmod: | $(DEPS_FIRST)
	$(Q)sh tools/vm/release-root $(if $(Q),-q) kbuild --release $(RELEASE) --src $(IXRC_SRC) --out $(TOP)/$(B)/kmod-$(RELEASE)
	@echo "make kmod: $(B)/kmod-$(RELEASE)/ixrc.ko for $$(cat $(B)/kmod-$(RELEASE)/kernel.abi) (Debian $(RELEASE))"
else
kmod: | $(DEPS_FIRST)
	@test -f $(KDIR)/Makefile || { echo "make kmod: no kernel build tree in KDIR=$(KDIR) (ci/install-deps kmod, or KDIR=)" >&2; exit 1; }
	@mkdir -p $(B)/kmod
	$(Q)for f in $(IXRC_SRC)/Kbuild $(IXRC_SRC)/*.c $(IXRC_SRC)/*.h; do \
		cmp -s "$$f" $(B)/kmod/$${f##*/} || cp "$$f" $(B)/kmod/ || exit 1; done
	$(Q)MAKEFLAGS= $(KBUILD_MAKE) -C $(KDIR) M=$(TOP)/$(B)/kmod $(if $(Q),-s) modules
	@echo "make kmod: $(IXRC_KO) for $(notdir $(KDIR))"
endif

xrc-vm: kmod $(IXRC_PROV) $(IXRC_ROUTE) | $(DEPS_FIRST)
	$(Q)IBVCT_XRC_KO=$(TOP)/$(IXRC_KO) IXRC_ROUTE=$(TOP)/$(IXRC_ROUTE) IXRC_PROV=$(TOP)/$(IXRC_DIR)/libibvct-ixrc sh $(IXRC_SRC)/xrc-vm-smoke

# the system-built suites on ixrc0 in the guest (prove -v; tens of minutes)
xrc-vm-suites: kmod $(IXRC_PROV) suites | $(DEPS_FIRST)
	$(Q)IBVCT_BUILD=$(TOP)/$(B) IBVCT_XRC_KO=$(TOP)/$(IXRC_KO) IXRC_PROV=$(TOP)/$(IXRC_DIR)/libibvct-ixrc sh $(IXRC_SRC)/xrc-vm-suites

# Removes every build flavour; reports/ is left alone.
clean:
	rm -rf build build-san build-cov build-inst build-san-cov build-fuzz

help:
	@echo "make [all]            build library, plugin, ibvct-run, ibvct-fkd"
	@echo "make check            build and run every test (prove)"
	@echo "make check SANITIZE=1 the same with ASan+UBSan+LSan, in build-san/"
	@echo "make valgrind         check with the C tests under valgrind"
	@echo "make bench            the machine's limit, then the fake HCA's figures against it and their"
	@echo "                      goals; rows in reports/bench/ (BENCH_ITERS= BENCH_SECONDS= BENCH_ROUNDS= BENCH_SCRIPT=)"
	@echo "make bench-icrc       the ICRC's CRC-32, eight bytes a step against the byte loop: MB/s in one run"
	@echo "make bench-wire       the reference's RoCE v2 against real rxe in two guests: perftest's RC SEND and"
	@echo "                      WRITE latency and rate, rxe<->rxe then ref<->rxe, ratios (WIRE_BENCH_ARGS=)"
	@echo "make failed           rerun the tests that failed last time"
	@echo "make soak             cross-process tests SOAK_RUNS=200 times each on a loaded machine"
	@echo "make fault-sweep      every op a suite calls fails on its 1st/2nd/3rd call (SANITIZE=1)"
	@echo "make mutate           mutate every /* @rule ID */ site, require a failing test (MUTATE_ONLY= MUTATE_JOBS= MUTATE_MIN=)"
	@echo "make coverage         check with --coverage, HTML in reports/coverage/, fails under COVERAGE_MIN (90)"
	@echo "make conformance      smoke, tests and the four suites (both modes, both models)"
	@echo "                      report in reports/<date>-ref-fake0/; TARGET=system DEVICE=mlx5_0:"
	@echo "                      the suites on a real device (tools/vm/rxe-setup makes an rxe one)"
	@echo "make suites           build the suites for both targets (build/suites/{ref,system})"
	@echo "make certify          TARGET= DEVICE= [WAIVERS=file]: conformance + vendor bundle .tar.gz"
	@echo "make fuzz             AFL++ on the script parser and the daemon protocol, FUZZ_EXECS="
	@echo "                      (default 1000000) or FUZZ_SECONDS= each; FUZZ_CMIN=1 keeps the corpus"
	@echo "make abi-check        ABI gate: ref-impl (or ABI_INCLUDE=, ABI_LIB=) vs ABI_BASELINE=\"rdma-core-44 rdma-core-56\", ABI_WAIVERS="
	@echo "make abi-baseline     rewrite fixtures/abi/ref-impl.abi (abidw of our library)"
	@echo "make abi-releases     Debian 12's and 13's libibverbs from their packages vs fixtures/abi (network)"
	@echo "make install          PREFIX=$(PREFIX) LIBDIR=$(LIBDIR) DESTDIR=  (separate build-inst/)"
	@echo "make deb              the Debian package build/deb/ibvct_<version>_<arch>.deb, lintian clean"
	@echo "make deb-chroot-check the package installed in a fresh Debian 12 chroot, its conformance = ours"
	@echo "make release-check    RELEASE=13: make conformance and make check in a fresh Debian 13 chroot"
	@echo "make release-matrix   the suites on {12, 13} x {ref, rxe-vm, xrc-vm}: what differs between the releases, and why"
	@echo "make kmod             the soft XRC device's module, build/kmod/ixrc.ko (KDIR=: headers of the guest kernel)"
	@echo "make xrc-vm           ibv_devinfo, rc and xsrq pingpongs on it in the QEMU guest (minutes)"
	@echo "make xrc-vm-suites    the system-built conformance suites on it in the guest"
	@echo "make clean            remove all build dirs"
	@echo "options: V=1 JOBS=n NODEPS=1 SANITIZE=1 COVERAGE=1 VALGRIND=1"

# Objects of tests are intermediate in the pattern chain; keep them.
.SECONDARY:

.PHONY: fuzz suites all kmod xrc-vm xrc-vm-suites bench bench-wire bench-icrc deps tests check valgrind soak failed fault-sweep fault-sweep-run mutate coverage conformance certify abi-check abi-baseline abi-releases install install-files install-map deb deb-package deb-chroot-check release-check release-matrix release-roots clean help

-include $(shell find $(B)/obj -name '*.d' 2>/dev/null)
