# End-to-end tests of the NPU path on the emulator: plan -> regcmd -> rknpu userspace
# driver -> emulated kernel -> emulated NPU -> unpack -> verify.
. tests/e2e/lib.sh
FAST="--iters 1 --warmup 0"

field() { "$JSONCHECK" "$1" "$2" 2>&1; }
# all_verified FILE MODE...: every result verified, each in one of the modes
all_verified() {
	count=$(field "$1" results.#)
	i=0
	while [ "$i" -lt "$count" ]; do
		st=$(field "$1" results.$i.verify.status)
		mode=$(field "$1" results.$i.verify.mode)
		m=$(field "$1" results.$i.shape.m)
		want="full|sample"
		[ "$m" -le 128 ] && want=full
		if [ "$st" != verified ] || ! echo "$mode" | grep -qxE "$want"; then
			echo "result $i (M=$m): $st ($mode, wanted $want)"
			return 1
		fi
		i=$((i + 1))
	done
}


# Every shape with M <= 128 is verified in full, larger ones in full or sampled (auto).
expect_exit 0 "seed shapes on sim" -- $RKNN_BENCH run configs/mat_kernel_size.json --device sim --format json $FAST
cp "$TMP/out" "$TMP/seed.json"
msg=$(all_verified "$TMP/seed.json") && ok "seed shapes verified (full)" || not_ok "seed shapes verified (full)" "$msg"
[ "$(field "$TMP/seed.json" results.0.modeled)" = true ] && ok "sim results are modeled" ||
	not_ok "sim results are modeled"
[ "$(field "$TMP/seed.json" results.0.device)" = sim ] && ok "device is sim" || not_ok "device is sim"
expect_grep 'plan' "$TMP/seed.json" "config carries the plan"

expect_exit 0 "qwen decode shapes on sim" -- $RKNN_BENCH run configs/qwen2.5-1.5b.json --device sim --format json $FAST
cp "$TMP/out" "$TMP/qwen.json"
msg=$(all_verified "$TMP/qwen.json") && ok "qwen shapes verified" || not_ok "qwen shapes verified" "$msg"

# Under emulation of another architecture (make check-aarch64 sets CHECK_SCOPE=quick)
# the prefill file (its 512x2048x128256 output layer alone is 134 G MACs) would take most
# of an hour: two smaller shapes take the same paths (M = 128 and 512, K-slices, N splits).
PREFILL=configs/llama-3.2-1b-prefill.json
[ "${CHECK_SCOPE:-}" = quick ] && PREFILL="--shape 128x2048x512 --shape 512x8192x256"
expect_exit 0 "llama prefill shapes on sim" -- $RKNN_BENCH run $PREFILL --device sim --format json $FAST
cp "$TMP/out" "$TMP/prefill.json"
msg=$(all_verified "$TMP/prefill.json") && ok "prefill shapes verified (full M=128, sample M=512)" ||
	not_ok "prefill shapes verified" "$msg"

# int8 is bit-exact on the NPU path.
expect_exit 0 "int8 seed shapes on sim" -- $RKNN_BENCH run configs/mat_kernel_size.json --device sim --dtype int8 --shape 1x2048x8192 --shape 1x8192x2048 --dtype int8 --format json $FAST
expect_grep '"dtype":[[:space:]]*"int8"' "$TMP/out" "int8 shapes ran"
cp "$TMP/out" "$TMP/int8.json"
msg=$(all_verified "$TMP/int8.json") && ok "int8 verified exactly" || not_ok "int8 verified exactly" "$msg"
[ "$(field "$TMP/int8.json" results.3.verify.max_abs)" = 0 ] && ok "int8 max_abs is 0" ||
	not_ok "int8 max_abs is 0" "$(field "$TMP/int8.json" results.3.verify)"

# Odd shapes, every core mask, the threads launch, fp16 output, K-slices, M split.
for args in "--shape 1x1x1" "--shape 3x33x17" "--shape 5x100x47 --dtype int8" \
	"--shape 7x40x300 --core-mask 0x1" "--shape 7x40x300 --core-mask 0x2" \
	"--shape 7x40x300 --core-mask 0x4" "--shape 7x40x300 --core-mask 0x3" \
	"--shape 7x40x300 --core-mask 0x5" "--shape 7x40x300 --core-mask 0x6" \
	"--shape 64x96x200 --launch threads" "--shape 9x64x48 --out fp16" \
	"--shape 1x2048x8192 --launch multicore" "--shape 7x40x300 --launch multicore --core-mask 0x3" \
	"--shape 1x2048x8192 --launch multicore --no-chain" \
	"--shape 20x20000x64 --k-slice 4096" "--shape 300x64x64 --split m" \
	"--shape 33x9000x100 --dtype int8" "--shape 4x64x16 --no-chain"; do
	expect_exit 0 "sim run $args" -- $RKNN_BENCH run --device sim $args $FAST --verify full
	expect_grep 'verified' "$TMP/out" "sim $args verified"
done

# A multi-core submit with mask 0x5 never runs on the vendor driver (§d.1): a device
# error, as on a board.
expect_exit 3 "multicore submit with mask 0x5" -- $RKNN_BENCH run --device sim --shape 1x64x64 --launch multicore --core-mask 0x5 $FAST
expect_grep 'unknown core mask 0x5' "$TMP/err" "mask 0x5 never committed"

# A config the planner cannot honour is an input error naming the constraint.
expect_exit 2 "impossible bank split" -- $RKNN_BENCH run --device sim --shape 4x64x16 --data-banks 8 --weight-banks 8
expect_grep 'bank' "$TMP/err" "bank constraint named"

# A wrong result on the NPU path is caught too.
expect_exit 1 "corrupted C fails on sim" -- env RKNN_BENCH_DEBUG=corrupt_c $RKNN_BENCH run --device sim --shape 4x64x16 $FAST

# Reproducer replays the planned config.
expect_exit 0 "sim json for reproducer" -- $RKNN_BENCH run --device sim --shape 8x64x64 --format json $FAST
repro=$(field "$TMP/out" results.0.reproducer)
case "$repro" in
*"--config '"*) ok "reproducer carries the config" ;;
*) not_ok "reproducer carries the config" "$repro" ;;
esac
expect_exit 0 "reproducer runs" -- sh -c "$(echo "$repro" | sed "s|^rknn-bench|$RKNN_BENCH|") --iters 1"

# The seed backend's way (blocking submits, a thread per core) runs the cores at once, as
# on a board: on 3 cores at least 2x faster than on one. A modeled time is computed once
# (--iters asks for 3 samples; tests/unit/test_measure.c shows that every run repeats the
# first run's time exactly, on both kernels and in every launch mode).
median() { field "$TMP/out" results.0.stats.median_us; }
expect_exit 0 "threads launch on core 0" -- $RKNN_BENCH run --shape 1x2048x8192 --launch threads --core-mask 0x1 --device sim --format json $FAST
one=$(median)
expect_exit 0 "threads launch on cores 0-2" -- $RKNN_BENCH run --shape 1x2048x8192 --launch threads --core-mask 0x7 --device sim --format json --iters 3 --warmup 0
three=$(median)
awk -v a="$one" -v b="$three" 'BEGIN { exit !(a >= 2 * b) }' &&
	ok "threads on 0x7 at least 2x faster than on 0x1 (modeled: $three vs $one us)" ||
	not_ok "threads on 0x7 at least 2x faster than on 0x1" "0x1 $one us, 0x7 $three us"
[ "$(field "$TMP/out" results.0.stats.samples_us.#)" = 1 ] &&
	ok "threads launch: the modeled time is computed once" ||
	not_ok "threads launch: the modeled time is computed once" "$(field "$TMP/out" results.0.stats)"
