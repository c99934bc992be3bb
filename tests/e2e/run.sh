# End-to-end tests of `rknn-bench run --device cpu` and the command line.
. tests/e2e/lib.sh
FAST="--iters 2 --warmup 0"

# The seed shapes: three unique shapes, each verified, in a table.
expect_exit 0 "run seed shapes on cpu" -- $RKNN_BENCH run configs/mat_kernel_size.json --device cpu $FAST
expect_grep 'GFLOP/s' "$TMP/out" "table has a GFLOP/s column"
rows=$(grep -cE '^(ffn_up-0|ffn_out-0|result_output) ' "$TMP/out")
[ "$rows" -eq 3 ] && ok "table has the three unique seed shapes" ||
	not_ok "table has the three unique seed shapes" "found $rows rows" "$(cat "$TMP/out")"
verified=$(grep -c 'verified' "$TMP/out")
[ "$verified" -ge 3 ] && ok "every seed shape verified" || not_ok "every seed shape verified" "$(cat "$TMP/out")"

# JSON on stdout is valid and carries the documented fields.
expect_exit 0 "run --format json" -- $RKNN_BENCH run configs/mat_kernel_size.json --device cpu --format json $FAST
cp "$TMP/out" "$TMP/report.json"
expect_exit 0 "json output parses" -- "$JSONCHECK" "$TMP/report.json"
check_field() { # path expected
	got=$("$JSONCHECK" "$TMP/report.json" "$1" 2>&1)
	[ "$got" = "$2" ] && ok "json $1 = $2" || not_ok "json $1 = $2" "got '$got'"
}
check_field schema rknn-bench/1
check_field results.# 3
check_field results.0.shape.m 1
check_field results.0.shape.k 2048
check_field results.0.shape.n 8192
check_field results.0.shape.dtype fp16
check_field results.0.names.# 17
check_field results.0.device cpu
check_field results.0.modeled false
check_field results.0.verify.status verified
check_field results.2.names.0 result_output
check_field results.0.stats.samples_us.# 2
expect_exit 0 "json has context.tool_version" -- "$JSONCHECK" "$TMP/report.json" context.tool_version

# CSV: a header and one line per shape.
expect_exit 0 "run --format csv" -- $RKNN_BENCH run --device cpu --shape 4x64x32 --shape 2x16x8 --format csv $FAST
lines=$(wc -l <"$TMP/out")
[ "$lines" -eq 3 ] && ok "csv has header + 2 rows" || not_ok "csv has header + 2 rows" "$(cat "$TMP/out")"

# int8 is exact; --verify sample and full both verify.
expect_exit 0 "int8 shape verifies" -- $RKNN_BENCH run --device cpu --shape 3x100x70 --dtype int8 --format json $FAST
expect_grep '"status":[[:space:]]*"verified"' "$TMP/out" "int8 result verified"
expect_exit 0 "sample verification" -- $RKNN_BENCH run --device cpu --shape 64x256x96 --verify sample --samples 100 --format json $FAST
expect_grep '"mode":[[:space:]]*"sample"' "$TMP/out" "sample mode reported"
expect_exit 0 "uniform data verifies" -- $RKNN_BENCH run --device cpu --shape 33x517x65 --data uniform $FAST

# -o writes the JSON report in addition to the table, and replaces an old file.
echo old >"$TMP/r.json"
expect_exit 0 "run -o FILE" -- $RKNN_BENCH run --device cpu --shape 8x64x64 -o "$TMP/r.json" $FAST
expect_grep 'GFLOP/s' "$TMP/out" "-o still prints the table"
expect_exit 0 "-o file is valid JSON" -- "$JSONCHECK" "$TMP/r.json" results.0.reproducer
expect_grep 'rknn-bench run --device cpu --shape 8x64x64' "$TMP/out" "reproducer names the shape"

# A wrong result is caught: exit 1, reported as failed with the position.
expect_exit 1 "corrupted C fails verification" -- \
	env RKNN_BENCH_DEBUG=corrupt_c $RKNN_BENCH run --device cpu --shape 4x32x16 -o "$TMP/bad.json" $FAST
expect_grep 'failed' "$TMP/out" "failure shown in the table"
expect_grep 'C\[2,8\]' "$TMP/out" "first mismatch position shown"
got=$("$JSONCHECK" "$TMP/bad.json" results.0.verify.mismatches 2>&1)
[ "$got" = 1 ] && ok "json counts one mismatch" || not_ok "json counts one mismatch" "got '$got'"
expect_exit 1 "corrupted int8 C fails" -- \
	env RKNN_BENCH_DEBUG=corrupt_c $RKNN_BENCH run --device cpu --shape 5x9x7 --dtype int8 $FAST

# Command line: help, version, usage errors (exit 2).
expect_exit 0 "--version" -- $RKNN_BENCH --version
expect_grep '^rknn-bench [0-9]+\.[0-9]+' "$TMP/out" "--version prints the version"
expect_exit 0 "--help" -- $RKNN_BENCH --help
expect_grep 'run' "$TMP/out" "--help lists run"
expect_exit 0 "run --help" -- $RKNN_BENCH run --help
expect_grep '--shape' "$TMP/out" "run --help documents --shape"
expect_exit 0 "help run" -- $RKNN_BENCH help run
expect_exit 2 "no command" -- $RKNN_BENCH
expect_exit 2 "unknown command" -- $RKNN_BENCH frobnicate
expect_grep "'frobnicate' is not a command" "$TMP/err" "unknown command named"
expect_exit 2 "unknown option" -- $RKNN_BENCH run --frob
expect_exit 2 "unknown device" -- $RKNN_BENCH run --device tpu --shape 1x2x3
expect_grep "tpu" "$TMP/err" "unknown device named"
expect_exit 2 "bad --iters" -- $RKNN_BENCH run --shape 1x2x3 --iters 0
expect_exit 2 "bad --threads" -- $RKNN_BENCH run --shape 1x2x3 --threads x
expect_exit 2 "bad --format" -- $RKNN_BENCH run --shape 1x2x3 --format xml
expect_exit 2 "bad --dtype" -- $RKNN_BENCH run --shape 1x2x3 --dtype bf16
expect_exit 2 "bad --shape" -- $RKNN_BENCH run --shape 1x2
expect_exit 2 "no shapes" -- $RKNN_BENCH run
expect_exit 2 "missing shapes file" -- $RKNN_BENCH run "$TMP/none.json" -o "$TMP/none-out.json"
expect_grep "none.json" "$TMP/err" "missing file named"
[ ! -e "$TMP/none-out.json" ] && ok "no output file on error" || not_ok "no output file on error"
expect_exit 2 "unwritable -o" -- $RKNN_BENCH run --shape 2x8x8 $FAST -o "$TMP/no/such/dir/r.json"

# RKNN_BENCH_DEBUG is read once against a table of valid flags: a misspelling warns.
RKNN_BENCH_DEBUG=corupt_c expect_exit 0 "an unknown debug flag is ignored" -- \
	$RKNN_BENCH run --device cpu --shape 1x64x64 --iters 1 --warmup 0
expect_grep "RKNN_BENCH_DEBUG: unknown flag 'corupt_c' ignored; valid flags: corrupt_c," "$TMP/err" \
	"an unknown debug flag is named with the valid ones"
RKNN_BENCH_DEBUG=fault_dma,corrupt_c expect_exit 1 "valid debug flags still act" -- \
	$RKNN_BENCH run --device cpu --shape 1x64x64 --iters 1 --warmup 0

# Per model: every pair's median summed per M (decode per token, prefill per prompt).
expect_exit 0 "totals: run the seed shapes" -- $RKNN_BENCH run configs/mat_kernel_size.json \
	--device sim --iters 1 --warmup 0 --verify sample --format json
cp "$TMP/out" "$TMP/totals.json"
want=$(for i in 0 1 2; do
	echo "$("$JSONCHECK" "$TMP/totals.json" results.$i.stats.median_us) $("$JSONCHECK" "$TMP/totals.json" results.$i.names.#)"
done | awk '{ s += $1 * $2 } END { printf "%.3f", s }')
got=$("$JSONCHECK" "$TMP/totals.json" totals.0.total_us)
[ "$("$JSONCHECK" "$TMP/totals.json" totals.0.pairs)" = 35 ] && ok "totals: all 35 pairs counted" ||
	not_ok "totals: all 35 pairs counted"
awk -v g="$got" -v w="$want" 'BEGIN { exit !(g - w < 0.01 && w - g < 0.01) }' &&
	ok "totals: decode total is each median times its pairs" ||
	not_ok "totals: decode total is each median times its pairs" "$got vs $want"
expect_exit 0 "totals: the table" -- $RKNN_BENCH run configs/mat_kernel_size.json \
	--device sim --iters 1 --warmup 0 --verify sample
expect_grep '^  decode \(M = 1\): [0-9.]+ µs per token over 35 pairs' "$TMP/out" \
	"totals: the table says the per-token total"

# A prompt's total counts the matmuls it runs at M = 1: llama.cpp computes the last
# layer after attention and result_output for the output row only, so for a 128-token
# prompt of Qwen2.5-1.5B, ffn_up/gate/out-27 and result_output run at M = 1 (listed once,
# as decode pairs). The total is each M = 128 median times its pairs plus those four.
QWEN="--arch qwen2 --embd 1536 --ff 8960 --layers 28 --heads 12 --heads-kv 2 --vocab 151936"
$RKNN_BENCH shapes $QWEN --tokens 1,128 -o "$TMP/qwen.json" 2>/dev/null
expect_exit 0 "totals: a Qwen2.5-1.5B decode and 128-token prompt" -- $RKNN_BENCH run \
	"$TMP/qwen.json" --device sim --iters 1 --warmup 0 --verify none --format json
cp "$TMP/out" "$TMP/qwen-run.json"
q() { "$JSONCHECK" "$TMP/qwen-run.json" "$1"; }
i=0
while [ "$i" -lt "$(q results.#)" ]; do
	rows=$(q results.$i.names | tr ',' '\n' | grep -cE '"(ffn_(up|gate|out)-27|result_output)"')
	echo "$(q results.$i.shape.m) $(q results.$i.stats.median_us) $(q results.$i.names.#) $rows"
	i=$((i + 1))
done >"$TMP/qwen-rows"
want=$(awk '$1 == 128 { s += $2 * $3 } $1 == 1 { s += $2 * $4 } END { printf "%.3f", s }' "$TMP/qwen-rows")
before=$(awk '$1 == 128 { s += $2 * $3 } END { printf "%.3f", s }' "$TMP/qwen-rows")
got=$(q totals.1.total_us)
[ "$(q totals.1.m)" = 128 ] && [ "$(q totals.1.pairs)" = 85 ] && [ "$(q totals.1.output_rows)" = 4 ] &&
	ok "totals: the prompt runs 85 pairs, 4 of them at M = 1" ||
	not_ok "totals: the prompt runs 85 pairs, 4 at M = 1" "$(q totals.1)"
awk -v g="$got" -v w="$want" 'BEGIN { exit !(g - w < 0.01 && w - g < 0.01) }' &&
	ok "totals: the prompt's total includes its four M = 1 matmuls" ||
	not_ok "totals: the prompt's total includes its M = 1 matmuls" "$got vs $want"
echo "# Qwen2.5-1.5B, 128-token prompt (modeled): $got us, $before us without its M = 1 matmuls" \
	"($(awk -v g="$got" -v b="$before" 'BEGIN { printf "%+.1f %%", (g / b - 1) * 100 }'))"
[ "$(q totals.0.pairs)" = 85 ] && ok "totals: decode still counts its 85 pairs once" ||
	not_ok "totals: decode still counts its 85 pairs once"

# run --tuned FILE alone: the tuned JSON lists its pairs, each run with its config.
printf '%s\n' '{"pairs": [' \
	'{"src0":{"row":1,"col":64},"src1":{"row":64,"col":96},"name":"a-0"},' \
	'{"src0":{"row":1,"col":64},"src1":{"row":64,"col":96},"name":"a-1"},' \
	'{"src0":{"row":4,"col":128},"src1":{"row":128,"col":64},"name":"b-0"}]}' >"$TMP/small.json"
expect_exit 0 "tune a small file" -- $RKNN_BENCH --quiet tune "$TMP/small.json" --device sim \
	--iters 1 --warmup 0 -o "$TMP/small-tuned.json"
expect_exit 0 "run --tuned FILE without shapes" -- $RKNN_BENCH run --tuned "$TMP/small-tuned.json" \
	--device sim --iters 1 --warmup 0 --format json
cp "$TMP/out" "$TMP/alone.json"
a() { "$JSONCHECK" "$TMP/alone.json" "$1"; }
t() { "$JSONCHECK" "$TMP/small-tuned.json" "$1"; }
[ "$(a results.#)" = 2 ] && [ "$(a results.0.names.#)" = 2 ] && [ "$(a results.1.names.0)" = b-0 ] &&
	ok "run --tuned alone runs the file's pairs" || not_ok "run --tuned alone runs the file's pairs"
[ "$(a results.0.stats.median_us)" = "$(t pairs.0.measured.median_us)" ] &&
	[ "$(a results.1.stats.median_us)" = "$(t pairs.2.measured.median_us)" ] &&
	ok "each with its tuned config: the tuned modeled times" ||
	not_ok "each with its tuned config" "$(a results.0.stats.median_us) vs $(t pairs.0.measured.median_us)"
expect_exit 0 "run --tuned FILE --shape S" -- $RKNN_BENCH --quiet run \
	--tuned "$TMP/small-tuned.json" --shape 2x64x32 --device sim --iters 1 --warmup 0 --format json
cp "$TMP/out" "$TMP/with-shape.json"
[ "$("$JSONCHECK" "$TMP/with-shape.json" results.#)" = 1 ] &&
	ok "with a shape given, the tuned file's pairs are not added" ||
	not_ok "with a shape given, the tuned file's pairs are not added"
expect_exit 2 "run --tuned with a missing file" -- $RKNN_BENCH run --tuned "$TMP/none.json"

# `make` builds every program README.md and docs/ tell a user to run from build/tests.
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -n BUILD="$TMP/mk" all >"$TMP/make-n" 2>&1
for prog in $(grep -ohE 'build/tests/[a-z][a-z/-]*(\.so)?' README.md docs/*.md | grep -v '\.so$' | sort -u); do
	grep -q -- "-o $TMP/mk/tests/${prog#build/tests/}\( \|$\)" "$TMP/make-n" &&
		ok "make builds $prog (named in the docs)" || not_ok "make builds $prog (named in the docs)"
done
