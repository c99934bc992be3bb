# The seed ggml-rknn backend's contexts get their tuned configs through the shim: a
# model's pairs written as the backend creates them (shapes --for ggml-rknn: per-core
# slices), tuned slice by slice on their cores (tune --target ggml-rknn), then the
# backend's call sequence (tests/shim/api_test.c --shapes: three single-core contexts
# per pair, core masks set, one thread each) on build/shim/librknnrt.so with that file:
# every context runs a tuned config, the one tune chose for its slice, verified.
. tests/e2e/lib.sh
API=${BUILD:-build}/tests/shim-api
MODEL="--arch llama --embd 256 --ff 512 --layers 1 --heads 4 --heads-kv 2 --vocab 512 --tokens 1,16"
# Every pair of that model: Q/K/V at both M (K and V have N = 128: slices 32, 32, 64),
# the FFN and result_output at M = 1 (one layer: the last, whose FFN a prompt runs for
# its output row only).
SHAPES="1x256x256 1x256x128 1x256x512 1x512x256 16x256x256 16x256x128"

expect_exit 0 "shapes --for ggml-rknn" -- $RKNN_BENCH shapes $MODEL --for ggml-rknn -o "$TMP/slices.json"
expect_exit 0 "tune --target ggml-rknn" -- $RKNN_BENCH --quiet tune "$TMP/slices.json" --target ggml-rknn \
	--device sim --iters 1 --warmup 0 -o "$TMP/tuned.json"
RKNN_BENCH_TUNED="$TMP/tuned.json" RKNN_BENCH_DEBUG=shim RKNN_BENCH_DEVICE=sim \
	built "$API" --shapes $SHAPES >"$TMP/run.out" 2>"$TMP/run.err"
expect_grep '^6 verified, 0 failed$' "$TMP/run.out" "the backend's contexts of 6 pairs verified with the tuned file"

# What tune chose per slice shape, without the core mask (the backend's
# rknn_matmul_set_core_mask sets it): "MxKxN config" lines.
pairs=$("$JSONCHECK" "$TMP/tuned.json" 'pairs.#')
i=0
while [ "$i" -lt "$pairs" ]; do
	m=$("$JSONCHECK" "$TMP/tuned.json" pairs.$i.src0.row)
	k=$("$JSONCHECK" "$TMP/tuned.json" pairs.$i.src0.col)
	w=$("$JSONCHECK" "$TMP/tuned.json" pairs.$i.src1.col)
	echo "${m}x${k}x$w $("$JSONCHECK" "$TMP/tuned.json" pairs.$i.tuned.config | sed 's/mask=0x[0-9a-f]* //')"
	i=$((i + 1))
done | sort -u >"$TMP/chosen"
# What each context ran: "MxKxN config" per debug line.
sed -n "s/^rknn-bench shim: \([0-9x]*\) tuned config '\([^']*\)' .*/\1 \2/p" "$TMP/run.err" |
	sed 's/mask=0x[0-9a-f]* //' >"$TMP/ran"
contexts=$(grep -c '^rknn-bench shim: [0-9x]* .* config ' "$TMP/run.err")
tuned=$(wc -l <"$TMP/ran")
[ "$contexts" -eq 54 ] && [ "$tuned" -eq "$contexts" ] &&
	ok "every context ran a tuned config (54 runs: 6 pairs, 3 contexts, 3 runs each)" ||
	not_ok "every context ran a tuned config" "$tuned tuned of $contexts runs" "$(head -3 "$TMP/run.err")"
missing=$(sort -u "$TMP/ran" | comm -23 - "$TMP/chosen")
[ -z "$missing" ] && [ -s "$TMP/ran" ] && ok "each context's config is the one tune chose for its slice" ||
	not_ok "each context's config is the one tune chose for its slice" "$missing"
RKNN_BENCH_DEBUG=shim RKNN_BENCH_DEVICE=sim built "$API" --shapes $SHAPES >/dev/null 2>"$TMP/plain.err"
[ "$(grep -c ' default config ' "$TMP/plain.err")" -eq 54 ] && ok "without the file, all 54 runs use the default" ||
	not_ok "without the file, all 54 runs use the default" "$(grep -c ' default config ' "$TMP/plain.err")"
expect_exit 2 "shim-api --shapes refuses a bad shape" -- built "$API" --shapes 1x256
