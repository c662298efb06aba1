# bpftrace-rec: one entry point to build, test, sanitize, benchmark and
# install. Quiet unless V=1; artifacts under $(OUT).
.DELETE_ON_ERROR:
.SUFFIXES:
.SECONDARY:

VERSION   := 0.1.0
OUT       ?= build
# One name for each build folder: inside the tree, relative (OUT=$PWD/build
# is build), so that the dependency files of one run name the targets of
# the next (an absolute name in them would leave objects stale).
override OUT := $(patsubst $(CURDIR)/%,%,$(abspath $(OUT)))
PREFIX    ?= /usr/local
DESTDIR   ?=
CC        ?= cc
CLANG     ?= clang
BPFTOOL   ?= bpftool
PROTOC_C  ?= protoc-c
BATS      ?= bats
ARCH      := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/' \
		-e 's/ppc64le/powerpc/' -e 's/riscv64/riscv/' -e 's/s390x/s390/')

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Library flags come from pkg-config when make reads this file, so a target
# that installs the packages first (record, test, sanitize, bench) builds in
# a second make invocation, after `deps`. A build without them stops with
# the names of the missing ones instead of failing to link.
PKGS      := libbpf libprotobuf-c json-c libarchive zlib libelf libdw libcap
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS  := $(shell pkg-config --libs $(PKGS) 2>/dev/null)
PKG_MISSING := $(shell for p in $(PKGS); do pkg-config --exists $$p 2>/dev/null || echo $$p; done)
need_pkgs = $(if $(PKG_MISSING),$(error missing libraries: $(PKG_MISSING) \
	(pkg-config); install the build dependencies first: make deps, as root))
# The same for the build's programs, before the first one is run: a bare
# `make` on a fresh clone says what to do instead of "protoc-c: No such
# file or directory".
TOOLS_MISSING = $(strip $(foreach t,$(PROTOC_C) $(CLANG) $(BPFTOOL),\
	$(if $(shell command -v $(t) 2>/dev/null),,$(t))))
need_tools = $(if $(TOOLS_MISSING),$(error missing programs: $(TOOLS_MISSING); \
	install the build dependencies first: make deps, as root (make record \
	and make test do it)))

CFLAGS    ?= -O2 -g
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
ifeq ($(SAN),1)
override CFLAGS += $(SAN_FLAGS) -O1
override LDFLAGS += $(SAN_FLAGS)
endif
WARN      := -Wall -Wextra -Werror
override CPPFLAGS += -D_GNU_SOURCE -DBTR_VERSION='"$(VERSION)"' \
		-Iuserspace -Ibpf -I$(OUT)/bpf -I$(OUT)/protos $(PKG_CFLAGS)
override CFLAGS += -std=c11 -MMD -MP
LDLIBS    := $(PKG_LIBS) -lm

# BPF: every X.bpf.c becomes $(OUT)/X.bpf.o and its skeleton
# $(OUT)/X.skel.h (named after the file: sched.bpf.c gives sched_bpf).
SKEL      := $(OUT)/bpf/sched.skel.h
CLANG_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

# Protos (generated, never committed)
PROTOS    := $(wildcard protos/perfetto/*.proto)
PB_C      := $(patsubst protos/%.proto,$(OUT)/protos/%.pb-c.c,$(PROTOS))
PB_H      := $(PB_C:.c=.h)
PB_OBJ    := $(PB_C:.c=.o)

# Userspace: every .c under userspace/, main.c only in the binary
SRCS      := $(shell find userspace -name '*.c' | sort)
OBJS      := $(patsubst %.c,$(OUT)/%.o,$(SRCS))
LIB_OBJS  := $(filter-out $(OUT)/userspace/main.o,$(OBJS)) $(PB_OBJ)
BIN       := $(OUT)/bpftrace-rec

# Tests: each tests/unit/test_*.c is a program; helpers in tests/tools/
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(UNIT_SRCS))
TOOL_SRCS := $(wildcard tests/tools/*.c)
TOOL_BINS := $(patsubst tests/tools/%.c,$(OUT)/tests/%,$(TOOL_SRCS))
# Workloads built as distributions build programs (tests/workloads/):
# -O2, no sanitizer, frame pointers as each one says
WORKLOAD_BINS := $(patsubst tests/workloads/%.c,$(OUT)/tests/%,$(wildcard tests/workloads/*.c))
# Test-only BPF programs (tests/synth/X.bpf.c), for the tools
SYNTH_SKELS := $(patsubst %.bpf.c,$(OUT)/%.skel.h,$(wildcard tests/synth/*.bpf.c))

.PHONY: all deps test unit cli sanitize clean install uninstall vmlinux record bench bench-run \
	static deb

all: $(BIN) $(TOOL_BINS) $(WORKLOAD_BINS)

deps:
	$(Q)scripts/install-deps.sh

$(OUT)/protos/%.pb-c.c $(OUT)/protos/%.pb-c.h: protos/%.proto
	$(need_tools)
	$(call msg,PROTOC,$<)
	$(Q)mkdir -p $(OUT)/protos
	$(Q)$(PROTOC_C) --c_out=$(OUT)/protos -Iprotos $<

$(OUT)/protos/%.pb-c.o: $(OUT)/protos/%.pb-c.c | $(PB_H)
	$(call msg,CC,$<)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -Wno-unused-parameter -c $< -o $@

$(OUT)/%.bpf.o: %.bpf.c vmlinux/$(ARCH)/vmlinux.h
	$(need_tools)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) $(CLANG_SYS_INCLUDES) \
		-Ivmlinux/$(ARCH) -Ibpf -Wall -Werror -MMD -MP -c $< -o $@

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(notdir $*)_bpf > $@

# Generated headers must exist before the first compile (order-only); what
# each object really includes is in its -MMD dependency file.
$(OUT)/userspace/%.o: userspace/%.c | $(PB_H) $(SKEL)
	$(need_pkgs)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(WARN) -c $< -o $@

# The program's BPF code is in the skeleton capture.c includes: a change
# to it rebuilds capture.o whatever the dependency files say.
$(OUT)/userspace/record/capture.o: $(SKEL)

$(BIN): $(OBJS) $(PB_OBJ)
	$(need_pkgs)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $(LDFLAGS) $^ $(LDLIBS) -o $@

# static: one file to copy to a host (docs/deploy.md). The same objects,
# linked with -static against Debian 12's .a files: no PT_INTERP, nothing
# read from the host at start-up but its BTF, /proc and /sys. libarchive
# comes in through the three readers sync/archive.c enables (tar, zip,
# gzip), which need nettle, zstd, xz, bzip2 and zlib, not its xml2, ICU,
# lz4 or acl. dlopen is wrapped (util/static_nodl.c): libdw's debuginfod
# client would load the host's libcurl into a static process.
STATIC_BIN  := $(OUT)/static/bpftrace-rec
STATIC_ARCHIVES := libbpf libelf libdw libarchive libnettle libprotobuf-c \
		libjson-c libcap libzstd liblzma libbz2 libz
STATIC_LIBS := -Wl,--start-group $(patsubst lib%,-l%,$(STATIC_ARCHIVES)) \
		-Wl,--end-group -lm -pthread
static_missing = $(strip $(foreach a,$(STATIC_ARCHIVES),\
	$(if $(filter /%,$(shell $(CC) -print-file-name=$(a).a)),,$(a).a)))
need_static = $(if $(static_missing),$(error missing static libraries: \
	$(static_missing); install the build dependencies first: make deps, as root))

ifeq ($(SAN),1)
ifneq ($(filter static deb,$(MAKECMDGOALS)),)
$(error make static: a sanitizer build (SAN=1) has no static link: ASan has no static runtime)
endif
endif

static: $(STATIC_BIN)

$(STATIC_BIN): $(OBJS) $(PB_OBJ)
	$(need_pkgs)
	$(need_static)
	$(call msg,LINK,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -static $(CFLAGS) $(LDFLAGS) -Wl,--wrap=dlopen $^ $(STATIC_LIBS) -o $@

# deb: the static binary, the man page, the bash completion and the
# systemd unit (disabled) in $(OUT)/bpftrace-rec_$(VERSION)_ARCH.deb,
# built with dpkg-deb alone (scripts/mkdeb.sh).
deb: $(STATIC_BIN)
	$(Q)OUT=$(OUT) VERSION=$(VERSION) scripts/mkdeb.sh $(STATIC_BIN)

$(OUT)/tests/%: tests/unit/%.c $(LIB_OBJS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -Itests/unit $(CFLAGS) $(WARN) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

# The user-stack workload: frame pointers and plain calls, whatever the
# build's optimization (tests/tools/fpstacks.c).
$(OUT)/tests/fpstacks: override CFLAGS += -O0 -fno-omit-frame-pointer \
	-fno-inline -fno-optimize-sibling-calls

$(OUT)/tests/%: tests/tools/%.c $(LIB_OBJS) | $(SYNTH_SKELS)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -I$(OUT)/tests/synth $(CFLAGS) $(WARN) $(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

$(OUT)/tests/libcwaits: WL_FLAGS := -fno-omit-frame-pointer -pthread
$(OUT)/tests/deepwait: WL_FLAGS := -fomit-frame-pointer
$(OUT)/tests/jitwait: WL_FLAGS := -fomit-frame-pointer
$(OUT)/tests/stall: WL_FLAGS := -pthread
$(WORKLOAD_BINS): $(OUT)/tests/%: tests/workloads/%.c
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) -O2 -g $(WL_FLAGS) $(WARN) $< -o $@

# unit: C tests of pure logic, no root. cli: bats tests that record for
# real (root). test: both.
unit: $(UNIT_BINS)
	$(Q)set -e; for t in $(UNIT_BINS); do echo "== $$t"; $$t; done

cli: all
	$(Q)BTR_BIN=$(abspath $(BIN)) BTR_TOOLS=$(abspath $(OUT)/tests) \
		$(BATS) tests/cli

test: deps
	$(Q)$(MAKE) --no-print-directory unit
	$(Q)$(MAKE) --no-print-directory cli

# The whole suite again, userspace built with ASan and UBSan.
sanitize: deps
	$(Q)ASAN_OPTIONS=detect_leaks=1 $(MAKE) --no-print-directory OUT=$(OUT)/san SAN=1 CC=clang unit cli

record: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)$(BIN) -o trace.pb $(RECORD_ARGS)

vmlinux:
	$(Q)scripts/gen-vmlinux.sh $(ARCH)

# bench: scripts/bench/run.sh (root) puts the recorder side by side with
# no recording, perf record, bpftrace and the floor: the cheapest BPF
# recorder of the same events (scripts/bench/floor*.c). ROUNDS=N, QUICK=1,
# RESULTS=FILE (default $(OUT)/bench-results.json).
BENCH_SKEL    := $(OUT)/scripts/bench/floor.skel.h
BENCH_FLOOR   := $(OUT)/bench/floor

$(BENCH_FLOOR): scripts/bench/floor.c | $(BENCH_SKEL)
	$(call msg,CC,$<)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CPPFLAGS) -I$(dir $(BENCH_SKEL)) $(CFLAGS) $(WARN) $(LDFLAGS) $< $(LDLIBS) -o $@

bench: deps
	$(Q)$(MAKE) --no-print-directory bench-run

bench-run: all $(BENCH_FLOOR)
	$(Q)OUT=$(OUT) BTR_BIN=$(abspath $(BIN)) BTR_TOOLS=$(abspath $(OUT)/tests) \
		BTR_FLOOR=$(abspath $(BENCH_FLOOR)) scripts/bench/run.sh

# fuzz: libFuzzer targets tests/fuzz/fuzz_*.c (clang), linked with the
# userspace objects built with the sanitizers in $(FUZZ_OUT); the runs
# themselves are scripts/fuzz.sh. `make fuzz` runs each target for
# FUZZ_SECONDS (default 60) on a copy of its seeds and stops at the first
# crash; FUZZ_TARGETS=... picks targets, FUZZ_ARGS passes libFuzzer options.
# fuzz-build only builds; fuzz-regress replays the seeds and
# tests/fuzz/regressions/ through every target; fuzz-coverage prints the
# line coverage of FUZZ_COV_DIRS (under userspace/) by the corpora
# (llvm-cov). See tests/fuzz/README.md.
FUZZ_OUT     ?= $(OUT)/fuzz
FUZZ_SECONDS ?= 60
FUZZ_ARGS    ?=
FUZZ_TARGETS ?= $(patsubst tests/fuzz/%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CFLAGS  := -O1 -g -fno-omit-frame-pointer -fno-sanitize-recover=all \
		-fsanitize=fuzzer-no-link,address,undefined
FUZZ_COV_OUT := $(OUT)/fuzz-cov
FUZZ_COV_DIRS := trace dump stats clock convert sync encode
FUZZ_ENV     = FUZZ_OUT=$(FUZZ_OUT) FUZZ_SECONDS=$(FUZZ_SECONDS) \
		FUZZ_ARGS='$(FUZZ_ARGS)' FUZZ_TARGETS='$(FUZZ_TARGETS)' \
		FUZZ_COV_OUT=$(FUZZ_COV_OUT) FUZZ_COV_DIRS='$(FUZZ_COV_DIRS)'

.PHONY: fuzz fuzz-build fuzz-regress fuzz-bins fuzz-coverage

fuzz-build:
	$(Q)$(MAKE) --no-print-directory OUT=$(FUZZ_OUT) CC=$(CLANG) \
		CFLAGS='$(FUZZ_CFLAGS)' FUZZ_TARGETS='$(FUZZ_TARGETS)' fuzz-bins

fuzz-bins: $(addprefix $(OUT)/,$(FUZZ_TARGETS))

$(OUT)/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(LIB_OBJS)
	$(call msg,FUZZ,$@)
	$(Q)$(CC) $(CPPFLAGS) -Itests/fuzz $(CFLAGS) $(WARN) -fsanitize=fuzzer \
		$(LDFLAGS) $< $(LIB_OBJS) $(LDLIBS) -o $@

fuzz: fuzz-build
	$(Q)$(FUZZ_ENV) scripts/fuzz.sh run

fuzz-regress: fuzz-build
	$(Q)$(FUZZ_ENV) scripts/fuzz.sh regress

fuzz-coverage:
	$(Q)$(MAKE) --no-print-directory OUT=$(FUZZ_COV_OUT) CC=$(CLANG) \
		CFLAGS='-O0 -g -fprofile-instr-generate -fcoverage-mapping -fsanitize=fuzzer-no-link' \
		FUZZ_TARGETS='$(FUZZ_TARGETS)' fuzz-bins
	$(Q)$(FUZZ_ENV) scripts/fuzz.sh coverage

SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)
	install -m 0755 $(BIN) $(DESTDIR)$(PREFIX)/bin/bpftrace-rec
	install -m 0644 scripts/bpftrace-rec.8 $(DESTDIR)$(PREFIX)/share/man/man8/bpftrace-rec.8
	install -m 0644 scripts/bpftrace-rec.bash-completion \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/bpftrace-rec
	sed 's|@BINDIR@|$(PREFIX)/bin|' scripts/bpftrace-rec.service \
		> $(DESTDIR)$(SYSTEMD_UNIT_DIR)/bpftrace-rec.service
	chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/bpftrace-rec.service

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/bpftrace-rec \
		$(DESTDIR)$(PREFIX)/share/man/man8/bpftrace-rec.8 \
		$(DESTDIR)$(PREFIX)/share/bash-completion/completions/bpftrace-rec \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/bpftrace-rec.service

clean:
	rm -rf $(OUT)

-include $(shell find $(OUT) -name '*.d' 2>/dev/null)
