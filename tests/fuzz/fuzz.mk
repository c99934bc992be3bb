# Fuzzing (included by the Makefile).
#
#   make fuzz                 build every tests/fuzz/fuzz_<target>.c with clang's libFuzzer
#                             and run each for FUZZ_SECONDS (default 30) on a copy of its
#                             seed corpus; fails on any finding
#   make fuzz FUZZ_TARGETS=soc  only some targets
#
# The library is rebuilt with clang and -fsanitize=fuzzer-no-link,address,undefined in
# build/fuzz (a recursive make with BUILD=build/fuzz). New corpus entries go to
# build/fuzz/corpus/<target>, findings to build/fuzz/artifacts/<target>; the checked-in
# corpora (tests/fuzz/corpus/) are never written. `make check` replays every corpus and
# regression input through the same targets built with the normal compiler
# (build/tests/fuzz-replay-<target>, tests/e2e/fuzz_replay.sh).
#
# The checked-in corpora are the hand-written seeds plus what a 10-minute campaign
# found, minimized to one input per new edge, which keeps them small:
#   build/fuzz/fuzz-T -merge=1 -use_counters=0 NEW_DIR SEEDS_DIR CAMPAIGN_CORPUS_DIR

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 30
FUZZ_BUILD   := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_ALL     := $(patsubst tests/fuzz/fuzz_%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_TARGETS ?= $(FUZZ_ALL)
FUZZ_LIB     := $(FUZZ_BUILD)/librknn-bench.a
FUZZ_REPLAYS := $(FUZZ_ALL:%=$(BUILD)/tests/fuzz-replay-%)

.PHONY: fuzz fuzz-build FORCE

# Not in the recursive make itself, where $(LIB) is this very file.
ifneq ($(FUZZ_SUBMAKE),1)
$(FUZZ_LIB): FORCE
	@$(MAKE) -s --no-print-directory CC=$(FUZZ_CC) BUILD=$(FUZZ_BUILD) SANITIZE= CROSS= \
		SANFLAGS='$(FUZZ_SAN) -fsanitize=fuzzer-no-link' FUZZ_SUBMAKE=1 $@
endif

$(FUZZ_BUILD)/fuzz-%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz.h $(FUZZ_LIB)
	$(call quiet,FUZZ,$@)$(FUZZ_CC) $(CPPFLAGS) -Itests/fuzz -std=c11 $(WARN) -O1 -g \
		$(FUZZ_SAN) -fsanitize=fuzzer $(PKG_CFLAGS) -o $@ $< $(FUZZ_LIB) $(LDLIBS)

fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/fuzz-%)

fuzz: fuzz-build
	@sh tests/fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

$(BUILD)/tests/fuzz-replay-%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/replay.o $(LIB)
	@mkdir -p $(@D)
	$(call quiet,LINK,$@)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/obj/tests/fuzz/%.o: CPPFLAGS += -Itests/fuzz

-include $(FUZZ_ALL:%=$(BUILD)/obj/tests/fuzz/fuzz_%.d) $(BUILD)/obj/tests/fuzz/replay.d
