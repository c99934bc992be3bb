#!/bin/sh
# Resource limits (src/host/limits.h, src/npu/job.h): shapes whose buffers would not fit
# the 4 GiB NPU address space or the machine's memory are refused up front with the
# number that does not fit (exit 2, no output file), and shapes just under still plan
# and run. The machine's memory comes from a meminfo fixture (RKNN_BENCH_MEMINFO), so
# the limits are exact and nothing big is ever allocated. The sizes are those of the
# planner's fixed default plan (--split auto); without a config flag the model-guided
# default may rank another plan, with other buffers.
FIXED="--split auto"
# shellcheck source=tests/e2e/lib.sh
. tests/e2e/lib.sh

# expect_refusal DESCRIPTION TEXT -- COMMAND...: exit 2, TEXT on stderr, no -o file
expect_refusal() {
	desc=$1
	text=$2
	shift 3
	rm -f "$TMP/out.json"
	"$@" -o "$TMP/out.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne 2 ]; then
		not_ok "$desc" "exit $rc, wanted 2" "$(head -c 600 "$TMP/err")"
	elif ! grep -qF -- "$text" "$TMP/err"; then
		not_ok "$desc" "stderr lacks: $text" "$(head -c 600 "$TMP/err")"
	elif [ -e "$TMP/out.json" ]; then
		not_ok "$desc" "an output file was written"
	else
		ok "$desc"
	fi
}

# 4 GiB NPU address space: B of 1x32768x65296 fits with A and C (the planner's own
# check), but not with the programs and task descriptors; 16 kernels fewer fit.
expect_exit 2 "plan: just over the NPU address space" -- "$RKNN_BENCH" plan $FIXED --shape 1x32768x65296
expect_grep "needs 4\.0 GiB of NPU buffers \(4295114752 bytes: A 64\.0 KiB, B 4\.0 GiB, C 1\.0 MiB, regcmd 13\.5 MiB, task descriptors 640\.0 KiB\), more than the 4 GiB NPU address space \(4294963200 bytes\)" \
	"$TMP/err" "plan: the refusal gives the number and the limit"
expect_exit 0 "plan: just under the NPU address space" -- "$RKNN_BENCH" plan $FIXED --shape 1x32768x65280
# run refuses it before allocating its 4 GiB of inputs (a 1 MiB machine proves it:
# the NPU limit is named, not the memory)
printf 'MemAvailable:       1024 kB\n' >"$TMP/tiny"
expect_refusal "run: just over the NPU address space, before any input exists" \
	"1x32768x65296: shape 1x32768x65296 fp16 needs 4.0 GiB of NPU buffers (4295114752 bytes" \
	-- env RKNN_BENCH_MEMINFO="$TMP/tiny" "$RKNN_BENCH" run $FIXED --device sim --shape 1x32768x65296

# The machine's memory: 1x4096x8192 fp16 needs A 8 KiB + B 64 MiB + 2 x C 32 KiB =
# 65608 KiB of host copies, and on the emulator 64 MiB more of NPU buffers.
printf 'MemTotal: 99999 kB\nMemAvailable:      65607 kB\n' >"$TMP/host-over"
printf 'MemTotal: 99999 kB\nMemAvailable:      65608 kB\n' >"$TMP/host-under"
expect_refusal "run cpu: just over the host memory" \
	"shape 1x4096x8192 fp16 (A 8.0 KiB, B 64.0 MiB, reference and output C 2 x 32.0 KiB) needs 64.1 MiB of host memory (67182592 bytes), more than the 64.1 MiB available (67181568 bytes, MemAvailable of $TMP/host-over)" \
	-- env RKNN_BENCH_MEMINFO="$TMP/host-over" "$RKNN_BENCH" run --device cpu --shape 1x4096x8192 --iters 1 --warmup 0
expect_exit 0 "run cpu: just under the host memory" -- env RKNN_BENCH_MEMINFO="$TMP/host-under" \
	"$RKNN_BENCH" run --device cpu --shape 1x4096x8192 --iters 1 --warmup 0
printf 'MemAvailable:      131415 kB\n' >"$TMP/both-over"
printf 'MemAvailable:      131416 kB\n' >"$TMP/both-under"
expect_refusal "run sim: NPU buffers and host copies just over the memory" \
	"shape 1x4096x8192 fp16 needs 128.3 MiB of memory for its NPU buffers and host copies of A, B and 2 of C (134569984 bytes), more than the 128.3 MiB available (134568960 bytes" \
	-- env RKNN_BENCH_MEMINFO="$TMP/both-over" "$RKNN_BENCH" run $FIXED --device sim --shape 1x4096x8192 --iters 1 --warmup 0
expect_exit 0 "run sim: NPU buffers and host copies just fit" -- env RKNN_BENCH_MEMINFO="$TMP/both-under" \
	"$RKNN_BENCH" run $FIXED --device sim --shape 1x4096x8192 --iters 1 --warmup 0

# A + B + C beyond 4 GiB (the planner's own check) is refused by run before its 8 GiB of
# inputs exist: with 1 MiB of memory it is still the NPU limit that is named.
expect_refusal "run sim: A + B + C over 4 GiB, before any input exists" \
	"1x65536x65536: buffers need 8592162816 bytes (A 131072 + B 8589934592 + C 2097152 in 8 K-slice cubes), more than the 4 GiB (4294967296 bytes) NPU address space" \
	-- env RKNN_BENCH_MEMINFO="$TMP/tiny" "$RKNN_BENCH" run --device sim --shape 1x65536x65536
# A size that does not fit this machine's address space at all
expect_refusal "run cpu: C beyond the address space" \
	"2147483648x2147483648x2147483648: matrix C (2147483648x2147483648, 4-byte elements) is too large for this machine's address space" \
	-- "$RKNN_BENCH" run --device cpu --shape 2147483648x2147483648x2147483648
