# rknn-bench — build, test and install.
#
#   make              build build/rknn-bench and build/librknn-bench.a, and the tools the
#                     README and docs name: build/tests/backend-demo, build/tests/consumer,
#                     build/tests/prime-probe
#   make run          install missing build dependencies (when possible), build, run the seed shapes
#   make check        install missing test tools (when possible), build and run every
#                     test; ends with "N passed, N failed"
#   make check-quick  the edit-compile-test loop, under 2 minutes on 2 cores: every unit
#                     test and the end-to-end scripts of QUICK_E2E (below) with
#                     CHECK_SCOPE=quick; the model files' tunes, sharding, calibrate,
#                     the fake node, the shim, install and the file-reader timeouts are
#                     left to make check
#   make deps-check   fail when a folder of src/ includes or calls (the built objects'
#                     symbols) a higher floor or a folder its row of the floors table
#                     does not name, or folders form a cycle (scripts/deps-check.sh,
#                     docs/architecture.md); make check runs it first
#   make doc-keys-check  fail when a key of the run report, the tuned JSON or the tune
#                     cache is named outside its module (scripts/doc-keys-check.sh); make
#                     check runs it after deps-check
#   make shim         build/shim/librknnrt.so: the rknn_matmul_api on rknn-bench (docs/backend.md)
#   make bench        build the benchmarks under bench/ (build/bench-*) and write the table of
#                     rknn-bench against its baselines (OpenBLAS when pkg-config finds it,
#                     memcpy, the CPU reference) to bench/results.md; BENCH_BLAS=no leaves
#                     OpenBLAS out
#   make calibrate    run the emulator's timing model on the published anchors and
#                     write bench/calibration.md (fails when a target is missed)
#   make check-aarch64  cross build for aarch64 and run every test under qemu-aarch64
#                     user emulation (NEON paths; needs scripts/install-deps.sh --aarch64)
#   make lint         cppcheck and a focused clang-tidy set over every C file (must be clean)
#   make format-check every C file formatted by the checked-in .clang-format
#   make fuzz         build the fuzz targets with clang's libFuzzer and run each for
#                     FUZZ_SECONDS (default 30); fails on any finding (tests/fuzz/fuzz.mk)
#   make install      PREFIX=/usr/local DESTDIR=: binary, library, headers, rknn-bench.pc,
#                     man pages, bash/zsh completions, configs in PREFIX/share/rknn-bench
#   make uninstall    the same PREFIX and DESTDIR: removes what install wrote
#   make man          build/share/man/*.1 from the built binary's --help
#   make clean
#
# Knobs: SANITIZE=1 (ASan+UBSan, objects in build/san), CROSS=aarch64-linux-gnu-
# (cross build against the multiarch cJSON/libdrm, objects in build/<triplet>).
#
# Builds run one job per CPU (a -j on the command line wins; the tests run as many at
# once, tests/run-tests.sh): a plain `make check` uses the whole machine.
NPROC := $(shell getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
MAKEFLAGS += -j$(NPROC)

CROSS    ?=
PREFIX   ?= /usr/local
DESTDIR  ?=
SANITIZE ?=

ifneq ($(CROSS),)
CC         := $(CROSS)gcc
AR         := $(CROSS)ar
TRIPLET    := $(patsubst %-,%,$(CROSS))
PKG_CONFIG ?= PKG_CONFIG_LIBDIR=/usr/lib/$(TRIPLET)/pkgconfig:/usr/share/pkgconfig pkg-config
BUILD      ?= build/$(TRIPLET)
else
CC         ?= cc
PKG_CONFIG ?= pkg-config
BUILD      ?= build
endif

ifeq ($(SANITIZE),1)
BUILD      := $(BUILD)/san
SANFLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
endif

PKGS      := libcjson libdrm
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
CMOCKA_CFLAGS := $(shell $(PKG_CONFIG) --cflags cmocka 2>/dev/null)
CMOCKA_LIBS   := $(shell $(PKG_CONFIG) --libs cmocka 2>/dev/null || echo -lcmocka)

CFLAGS   ?= -O2 -g
WARN     := -Wall -Wextra -Wshadow -Wvla -Werror
CPPFLAGS += -Iinclude -Isrc -D_GNU_SOURCE
ALL_CFLAGS = -std=c11 $(WARN) $(CFLAGS) $(SANFLAGS) $(PKG_CFLAGS) -pthread -MMD -MP
LDLIBS   += $(PKG_LIBS) -lm -pthread
LDFLAGS  += $(SANFLAGS)

LIB_SRC  := $(sort $(wildcard src/core/*.c src/host/*.c src/numeric/*.c src/results/*.c src/hw/*.c src/model/*.c src/sim/*.c src/dev/*.c src/npu/*.c src/run/*.c src/tune/*.c src/selftest/*.c src/page/*.c))
CLI_SRC  := $(sort $(wildcard src/cli/*.c))
TEST_SRC := $(sort $(wildcard tests/unit/test_*.c))
BENCH_SRC := $(sort $(wildcard bench/*.c))

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# The hardware profiles (the default and one per memory type), embedded so an installed
# binary needs no data files: configs/soc/NAME.json becomes rb_soc_NAME_json.
SOC_JSON := configs/soc/rk3588.json configs/soc/rk3588-lpddr4x.json configs/soc/rk3588-lpddr5.json
SOC_GEN  := $(BUILD)/gen/soc_rk3588.c
SOC_OBJ  := $(BUILD)/obj/gen/soc_rk3588.o
LIB_OBJ  += $(SOC_OBJ)
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
# The commit the tool is built from (`rknn-bench --version`, every report's context):
# git describe, or "unknown" outside a git checkout. The stamp file changes only when
# the commit does, so a new commit rebuilds src/core/version.c alone.
GIT_COMMIT   := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
COMMIT_STAMP := $(BUILD)/gen/commit.txt
$(COMMIT_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(GIT_COMMIT)' >$@.tmp; if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/obj/src/core/version.o $(BUILD)/pic/src/core/version.o: $(COMMIT_STAMP)
$(BUILD)/obj/src/core/version.o $(BUILD)/pic/src/core/version.o: CPPFLAGS += -DRB_GIT_COMMIT='"$(GIT_COMMIT)"'
.PHONY: FORCE
FORCE:
LIB      := $(BUILD)/librknn-bench.a
BIN      := $(BUILD)/rknn-bench
TESTS    := $(TEST_SRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCHES  := $(BENCH_SRC:bench/%.c=$(BUILD)/bench-%)

# Quiet rules; V=1 shows the commands.
ifneq ($(V),1)
Q = @
quiet = @printf '  %-6s %s\n' $(1) $(2);
endif

.PHONY: FORCE all check check-build check-quick deps-check doc-keys-check check-aarch64 lint format-check format run bench calibrate install uninstall clean deps test-deps baseline shim man
.DEFAULT_GOAL := all
# Keep the test objects (intermediate files) so rebuilds stay incremental.
.SECONDARY:

# The tools README.md and docs/ tell a user to run are built by `make` (and `make run`).
TOOLS := $(BUILD)/tests/backend-demo $(BUILD)/tests/consumer $(BUILD)/tests/prime-probe \
         $(BUILD)/tests/maxrss
all: $(BIN) $(LIB) $(TOOLS)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(@D)
	$(call quiet,CC,$<)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(SOC_GEN): $(SOC_JSON) scripts/embed-c.sh
	@mkdir -p $(@D)
	$(call quiet,GEN,$@){ $(foreach f,$(SOC_JSON),sh scripts/embed-c.sh \
		rb_soc_$(subst -,_,$(basename $(notdir $(f))))_json $(f) &&) true; } >$@.tmp && mv $@.tmp $@

$(SOC_OBJ): $(SOC_GEN)
	@mkdir -p $(@D)
	$(call quiet,CC,$<)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(Q)rm -f $@
	$(call quiet,AR,$@)$(AR) rcs $@ $^

$(BIN): $(CLI_OBJ) $(LIB)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(LIB) $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(LIB)
	@mkdir -p $(@D)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(CMOCKA_LIBS) $(LDLIBS)

$(BUILD)/obj/tests/unit/%.o: ALL_CFLAGS += $(CMOCKA_CFLAGS)

$(BUILD)/bench-%: $(BUILD)/obj/bench/%.o $(LIB)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

$(BUILD)/tests/jsoncheck: $(BUILD)/obj/tests/tools/jsoncheck.o
	@mkdir -p $(@D)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/tests/mkgguf: $(BUILD)/obj/tests/tools/mkgguf.o
	@mkdir -p $(@D)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/tests/maxrss: $(BUILD)/obj/tests/tools/maxrss.o
	@mkdir -p $(@D)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $<

# The fake device node (tests/fakenode/fakenode.c): a preload library serving fake NPU
# nodes with the emulated kernels, which are compiled position-independent for it
# (objects in $(BUILD)/pic; the main binary is built as always).
FAKENODE     := $(BUILD)/tests/libfakenode.so
FAKENODE_SRC := tests/fakenode/fakenode.c $(sort $(wildcard src/sim/*.c)) src/core/error.c \
                src/core/fileio.c src/core/fp16.c src/core/json.c $(wildcard src/numeric/layout*.c src/numeric/ref*.c) src/hw/regs.c src/hw/conv.c src/hw/soc.c src/hw/board.c src/host/devtree.c
FAKENODE_OBJ := $(FAKENODE_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/gen/soc_rk3588.o

$(BUILD)/pic/%.o: %.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -c $< -o $@

$(BUILD)/pic/gen/soc_rk3588.o: $(SOC_GEN)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) -fPIC -c $< -o $@

$(FAKENODE): $(FAKENODE_OBJ)
	@mkdir -p $(@D)
	$(call quiet,LINK,$@)$(CC) -shared -Wl,--no-undefined $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm -pthread -ldl

# PRIME between two fds of a rocket node (tests/fakenode/prime_probe.c), for fakenode.sh.
$(BUILD)/tests/prime-probe: tests/fakenode/prime_probe.c
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) $(CPPFLAGS) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $<

# The rknn_matmul_api-compatible library (src/shim/): the library compiled
# position-independent, only the rknn_* functions exported (src/shim/exports.map).
SHIM     := $(BUILD)/shim/librknnrt.so
SHIM_OBJ := $(LIB_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/gen/soc_rk3588.o $(BUILD)/pic/src/shim/shim.o

shim: $(SHIM)

$(SHIM): $(SHIM_OBJ) src/shim/exports.map
	@mkdir -p $(@D)
	$(call quiet,LINK,$@)$(CC) -shared -Wl,--no-undefined -Wl,--version-script=src/shim/exports.map \
		-Wl,-soname,librknnrt.so $(LDFLAGS) -o $@ $(SHIM_OBJ) $(PKG_LIBS) -lm -pthread

# A program of the rknn_matmul_api alone (its declarations, no other header), on the shim.
$(BUILD)/tests/shim-api: tests/shim/api_test.c src/shim/rknn_matmul_api.h $(SHIM)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -Isrc $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(SHIM) \
		-Wl,-rpath,'$$ORIGIN/../shim' -pthread

# A CPU stand-in librknnrt of the same declarations (tests/shim/standin.c): the yardstick
# of the shim's memory (tests/e2e/shim.sh) and of scripts/test-llama.sh.
STANDIN := $(BUILD)/tests/standin/librknnrt.so
$(STANDIN): tests/shim/standin.c src/shim/rknn_matmul_api.h
	@mkdir -p $(@D)
	$(call quiet,LINK,$@)$(CC) -Isrc $(ALL_CFLAGS) -fPIC -shared -Wl,--no-undefined \
		-Wl,-soname,librknnrt.so $(LDFLAGS) -o $@ $< -pthread

# make bench: builds the benchmarks, then bench-summary measures rknn-bench against a
# baseline per row in one run and writes the table to bench/results.md (bench/summary.c).
# OpenBLAS, the baseline of its GEMM and GEMV rows, is optional and bench-only: found by
# pkg-config, or not used with BENCH_BLAS=no (those rows then say skipped).
# BENCH_ARGS go to bench-summary (e.g. BENCH_ARGS='-t 1').
ifeq ($(origin BENCH_BLAS),undefined)
BENCH_BLAS := $(shell $(PKG_CONFIG) --exists openblas 2>/dev/null && echo yes || echo no)
endif
ifeq ($(BENCH_BLAS),yes)
BLAS_CFLAGS := -DRB_HAVE_OPENBLAS $(shell $(PKG_CONFIG) --cflags openblas 2>/dev/null)
BLAS_LIBS   := $(shell $(PKG_CONFIG) --libs openblas 2>/dev/null)
endif
# Changes only when the OpenBLAS flags do, so BENCH_BLAS=no rebuilds bench-summary.
BLAS_STAMP := $(BUILD)/gen/bench-blas.txt
$(BLAS_STAMP): FORCE
	@mkdir -p $(@D)
	@echo '$(BLAS_CFLAGS) $(BLAS_LIBS)' >$@.tmp; if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/obj/bench/summary.o: $(BLAS_STAMP)
$(BUILD)/obj/bench/summary.o: ALL_CFLAGS += $(BLAS_CFLAGS)
$(BUILD)/bench-summary: LDLIBS += $(BLAS_LIBS)

bench: $(BENCHES)
	$(RUNNER) $(BUILD)/bench-summary $(BENCH_ARGS) -o bench/results.md
	$(RUNNER) $(BUILD)/bench-host -o bench/host.md

calibrate: $(BUILD)/bench-calibrate
	$(BUILD)/bench-calibrate -o bench/calibration.md

# The regression gate (tests/e2e/regression.sh) runs on DEVICE against BASELINE.
DEVICE   ?= sim
BASELINE ?= bench/baseline-sim.json

# A backend's view of the library: the public headers only (-Iinclude, no -Isrc).
$(BUILD)/tests/consumer: tests/consumer/consumer.c $(LIB)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -Iinclude $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# The matmul executor as a backend uses it (include/rknn_bench/matmul.h), same rules.
$(BUILD)/tests/backend-demo: tests/consumer/backend_demo.c $(LIB)
	@mkdir -p $(@D)
	$(call quiet,CC,$@)$(CC) -Iinclude $(ALL_CFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)

# RUNNER runs the test programs (check-aarch64 sets it to qemu user emulation).
RUNNER ?=

include tests/fuzz/fuzz.mk

# The include level reads the sources, the link level the symbols of every object of
# src/ (the shim's too, compiled here as any other object).
deps-check: $(LIB_OBJ) $(CLI_OBJ) $(BUILD)/obj/src/shim/shim.o
	@sh scripts/deps-check.sh . $(BUILD)/obj

# The keys of the run report, the tuned JSON and the tune cache in their modules only.
doc-keys-check:
	@sh scripts/doc-keys-check.sh .

# What the tests run: `make check-build` builds it without running anything.
CHECK_DEPS := $(BIN) $(TESTS) $(BUILD)/obj/src/shim/shim.o $(BUILD)/tests/jsoncheck $(BUILD)/tests/mkgguf $(BUILD)/tests/maxrss \
	$(BUILD)/tests/consumer $(BENCHES) \
	$(BUILD)/tests/backend-demo $(BUILD)/tests/shim-api $(STANDIN) $(FAKENODE) \
	$(BUILD)/tests/prime-probe $(FUZZ_REPLAYS)

check-build: $(CHECK_DEPS)

check: deps-check doc-keys-check $(CHECK_DEPS)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) CROSS=$(CROSS) DEVICE=$(DEVICE) BASELINE=$(BASELINE) \
		RUNNER="$(RUNNER)" sh tests/run-tests.sh $(TESTS)

# make check-quick: every unit test, and the end-to-end scripts that take a few CPU
# seconds each: the emulator's paths (sim, rocket, regcmd, plan, run, wreuse, mem, faults),
# the tuned round trip on two seed shapes, inputs and outputs (bad_input, limits, output,
# compare, report, shapes), the regression gate, the folder floors and the ggml-rknn
# slices. Measured on 2 shared, loaded cores (2026-11-28): 1402 checks, 87 CPU seconds,
# 85 s wall.
QUICK_E2E := bad_input bench_summary calibration compare deps_check disk_full faults \
	fuzz_replay info limits mem output perf plan regcmd regression report rocket run shapes \
	sim soc_profiles tuned_roundtrip wreuse ggml_slices

check-quick: deps-check doc-keys-check $(CHECK_DEPS)
	@BUILD=$(BUILD) SANITIZE=$(SANITIZE) CROSS=$(CROSS) DEVICE=$(DEVICE) BASELINE=$(BASELINE) \
		RUNNER="$(RUNNER)" CHECK_SCOPE=quick E2E="$(QUICK_E2E)" sh tests/run-tests.sh $(TESTS)

# CHECK_SCOPE=quick: the e2e tests replace their largest emulator workloads with smaller
# ones taking the same paths (tests/e2e/sim.sh says which).
# -L /: the arm64 multiarch loader and libraries (libc6:arm64, libcjson1:arm64, ...),
# which match each other; the cross toolchain's own loader may not match them.
check-aarch64:
	@CHECK_SCOPE=quick $(MAKE) --no-print-directory CROSS=aarch64-linux-gnu- \
		RUNNER="qemu-aarch64 -L /" check

# Refreshes the emulator's regression baseline, deliberately (review the diff).
baseline: $(BIN)
	$(BIN) run configs/regression.json --device sim --iters 1 --warmup 0 -o bench/baseline-sim.json

# Static analysis. cppcheck: warnings, portability, performance; a false positive is
# suppressed inline with the reason. invalidPointerCast is off: layouts, profiles and
# tests view malloc'd byte buffers as typed arrays on purpose. clang-tidy: the
# bug-finding families (clang-analyzer, bugprone) minus stylistic checks; see .clang-tidy.
# include/uapi holds a kernel header included as-is (MIT), which keeps the kernel's style.
C_FILES := $(filter-out include/uapi/%,$(sort $(shell git ls-files '*.c' '*.h' 2>/dev/null || \
	find src include tests bench -name '*.[ch]')))
LINT_FLAGS := -std=c11 $(CPPFLAGS) $(PKG_CFLAGS) $(CMOCKA_CFLAGS)

lint:
	$(call quiet,CPPCHECK,src-include-tests-bench)cppcheck -q --std=c11 --enable=warning,portability,performance \
		--inline-suppr --error-exitcode=1 --suppress=missingIncludeSystem \
		--suppress=invalidPointerCast \
		--template='{file}:{line}: {severity}: {message} [{id}]' \
		-j $(NPROC) -Iinclude -Isrc -D_GNU_SOURCE src include tests bench
	$(call quiet,TIDY,src-include-tests-bench)printf '%s\n' $(filter %.c,$(C_FILES)) | \
		xargs -P $(NPROC) -n 8 sh -c 'clang-tidy -quiet "$$@" -- $(LINT_FLAGS)' tidy 2>&1 | \
		awk '/(warning|error):/ { bad = 1 } bad || /(warning|error):/ { print } END { exit bad }'

format-check:
	$(call quiet,FORMAT,src-include-tests-bench)clang-format --dry-run --Werror $(C_FILES)

format:
	clang-format -i $(C_FILES)

# make run needs what building and running need; make check (and check-quick) installs the test tools
# first (cmocka, strace, valgrind, man): the unit tests' objects wait for it.
deps:
	@sh scripts/install-deps.sh

test-deps:
	@sh scripts/install-deps.sh --test $(if $(CROSS),--aarch64)

ifneq ($(filter check check-quick,$(MAKECMDGOALS)),)
$(TEST_SRC:tests/unit/%.c=$(BUILD)/obj/tests/unit/%.o): | test-deps
check check-quick: test-deps
endif

run: deps
	@$(MAKE) --no-print-directory all
	$(BIN) run configs/mat_kernel_size.json

# --- make install -----------------------------------------------------------------------
# The binary, librknn-bench.a with its public headers and rknn-bench.pc, the same library
# position-independent (librknn-bench_pic.a: the shim's objects, for shared libraries
# such as contrib/llama.cpp's backend) with a CMake package config, the shim, man
# pages and bash/zsh completions generated from the built binary's --help (so they list
# what it says; a cross build needs RUNNER to run it), and the shipped configs, which
# the installed binary finds in $(PREFIX)/share/rknn-bench (src/cli/datadir.c).
# The shim goes to a directory of its own, never over a system librknnrt: a program picks
# it with LD_LIBRARY_PATH=$(PREFIX)/lib/rknn-bench (docs/backend.md).
# rknn-bench.pc finds the tree from its own place (PREFIX/lib/pkgconfig) and the binary
# its configs from its own (PREFIX/bin): the directories below keep that layout.
BINDIR      = $(PREFIX)/bin
LIBDIR      = $(PREFIX)/lib
INCLUDEDIR  = $(PREFIX)/include
DATADIR     = $(PREFIX)/share
MANDIR      = $(DATADIR)/man
BASH_COMPDIR ?= $(DATADIR)/bash-completion/completions
ZSH_COMPDIR  ?= $(DATADIR)/zsh/site-functions
VERSION    := $(shell sed -n 's/^\#define RB_VERSION "\(.*\)"/\1/p' src/core/version.h)
GEN_SHARE  := $(BUILD)/share
MAN_STAMP  := $(GEN_SHARE)/man/.stamp
BASH_COMP  := $(GEN_SHARE)/rknn-bench.bash
ZSH_COMP   := $(GEN_SHARE)/_rknn-bench
PC_FILE    := $(GEN_SHARE)/rknn-bench.pc
CMAKE_FILE := $(GEN_SHARE)/rknn-bench-config.cmake
LIB_PIC    := $(BUILD)/librknn-bench_pic.a
# The scale-out and perf stat helpers, installed under PREFIX/share/rknn-bench/scripts:
# they run the rknn-bench on PATH when no build/ is beside them.
INSTALLED_SCRIPTS := scripts/tune-parallel.sh scripts/tune-slurm.sh scripts/perf-stat.sh
INSTALL_GEN := $(MAN_STAMP) $(BASH_COMP) $(ZSH_COMP) $(PC_FILE) $(CMAKE_FILE)

$(LIB_PIC): $(LIB_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/gen/soc_rk3588.o
	$(Q)rm -f $@
	$(call quiet,AR,$@)$(AR) rcs $@ $^

man: $(MAN_STAMP)

$(MAN_STAMP): $(BIN) scripts/help2man.sh scripts/cli-help.sh
	$(call quiet,GEN,$(@D))rm -rf $(@D) $(@D).tmp && \
		RUNNER="$(RUNNER)" sh scripts/help2man.sh $(BIN) $(VERSION) $(@D).tmp && \
		touch $(@D).tmp/.stamp && mv $(@D).tmp $(@D)

$(GEN_SHARE)/rknn-bench.bash $(GEN_SHARE)/_rknn-bench: $(BIN) scripts/completions.sh scripts/cli-help.sh
	@mkdir -p $(@D)
	$(call quiet,GEN,$@)RUNNER="$(RUNNER)" sh scripts/completions.sh $(BIN) \
		$(if $(filter %.bash,$@),bash,zsh) >$@.tmp && mv $@.tmp $@

# rknn-bench.pc and the CMake config find the installed tree from their own place, so
# a tree installed under DESTDIR, or moved, works as is: each holds the way from its own
# directory to PREFIX, and from PREFIX to LIBDIR and INCLUDEDIR, as the install was given
# them (Debian's multiarch LIBDIR=/usr/lib/x86_64-linux-gnu is one level deeper). They are
# made again whenever those directories change (FORCE; replaced only when different).
relpath = $(shell realpath -m --relative-to='$(2)' '$(1)')
INSTALL_PATHS = -e 's|@VERSION@|$(VERSION)|' \
	-e 's|@PC_TO_PREFIX@|$(call relpath,$(PREFIX),$(LIBDIR)/pkgconfig)|' \
	-e 's|@CMAKE_TO_PREFIX@|$(call relpath,$(PREFIX),$(LIBDIR)/cmake/rknn-bench)|' \
	-e 's|@PREFIX_TO_LIBDIR@|$(call relpath,$(LIBDIR),$(PREFIX))|' \
	-e 's|@PREFIX_TO_INCLUDEDIR@|$(call relpath,$(INCLUDEDIR),$(PREFIX))|'

$(PC_FILE) $(CMAKE_FILE): $(GEN_SHARE)/%: contrib/%.in src/core/version.h FORCE
	@mkdir -p $(@D)
	$(Q)sed $(INSTALL_PATHS) $< >$@.tmp && { cmp -s $@.tmp $@ && rm $@.tmp || mv $@.tmp $@; }

FORCE:

install: $(BIN) $(LIB) $(LIB_PIC) $(SHIM) $(INSTALL_GEN)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/rknn-bench \
		$(DESTDIR)$(LIBDIR)/cmake/rknn-bench \
		$(DESTDIR)$(INCLUDEDIR)/rknn_bench $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(DATADIR)/rknn-bench/soc $(DESTDIR)$(DATADIR)/rknn-bench/scripts \
		$(DESTDIR)$(BASH_COMPDIR) $(DESTDIR)$(ZSH_COMPDIR)
	install -m 755 $(BIN) $(DESTDIR)$(BINDIR)/rknn-bench
	install -m 644 $(LIB) $(DESTDIR)$(LIBDIR)/librknn-bench.a
	install -m 644 $(LIB_PIC) $(DESTDIR)$(LIBDIR)/librknn-bench_pic.a
	install -m 644 $(CMAKE_FILE) $(DESTDIR)$(LIBDIR)/cmake/rknn-bench/rknn-bench-config.cmake
	install -m 644 include/rknn_bench/*.h $(DESTDIR)$(INCLUDEDIR)/rknn_bench/
	install -m 644 $(PC_FILE) $(DESTDIR)$(LIBDIR)/pkgconfig/rknn-bench.pc
	install -m 755 $(SHIM) $(DESTDIR)$(LIBDIR)/rknn-bench/librknnrt.so
	install -m 644 $(GEN_SHARE)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 $(BASH_COMP) $(DESTDIR)$(BASH_COMPDIR)/rknn-bench
	install -m 644 $(ZSH_COMP) $(DESTDIR)$(ZSH_COMPDIR)/_rknn-bench
	install -m 644 configs/*.json $(DESTDIR)$(DATADIR)/rknn-bench/
	install -m 644 configs/soc/*.json $(DESTDIR)$(DATADIR)/rknn-bench/soc/
	install -m 755 $(INSTALLED_SCRIPTS) $(DESTDIR)$(DATADIR)/rknn-bench/scripts/

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/rknn-bench $(DESTDIR)$(LIBDIR)/librknn-bench.a \
		$(DESTDIR)$(LIBDIR)/librknn-bench_pic.a $(DESTDIR)$(LIBDIR)/cmake/rknn-bench/rknn-bench-config.cmake \
		$(DESTDIR)$(LIBDIR)/pkgconfig/rknn-bench.pc $(DESTDIR)$(MANDIR)/man1/rknn-bench.1 \
		$(DESTDIR)$(MANDIR)/man1/rknn-bench-*.1 $(DESTDIR)$(BASH_COMPDIR)/rknn-bench \
		$(DESTDIR)$(ZSH_COMPDIR)/_rknn-bench
	rm -rf $(DESTDIR)$(INCLUDEDIR)/rknn_bench $(DESTDIR)$(LIBDIR)/rknn-bench \
		$(DESTDIR)$(LIBDIR)/cmake/rknn-bench \
		$(DESTDIR)$(DATADIR)/rknn-bench

clean:
	rm -rf build

-include $(LIB_OBJ:.o=.d) $(CLI_OBJ:.o=.d) $(TEST_SRC:tests/unit/%.c=$(BUILD)/obj/tests/unit/%.d) $(BENCH_SRC:bench/%.c=$(BUILD)/obj/bench/%.d) \
	$(BUILD)/obj/tests/tools/jsoncheck.d $(BUILD)/obj/tests/tools/mkgguf.d $(FAKENODE_OBJ:.o=.d) \
	$(SHIM_OBJ:.o=.d)
