# End-to-end tests of weight reuse (CNA.CBUF_CON0.WEIGHT_REUSE on chained tasks that keep
# the weights of the task before) and of the mainline variant's M = 1 (padded to 4 rows,
# SURF_STRIDE 0): plan shows them, dump decodes them, the emulator verifies them, and
# the modeled time drops against --no-weight-reuse.
. tests/e2e/lib.sh
json() { "$JSONCHECK" "$1" "$2" 2>&1; }
RUN="--device sim --iters 1 --warmup 0 --format json"
# Under qemu (CHECK_SCOPE=quick) a smaller prefill shape takes the same path: M tiles
# that share their N tile's weights.
PREFILL=512x2048x8192
[ "${CHECK_SCOPE:-}" = quick ] && PREFILL=256x1024x1024
DECODE=1x2048x8192
[ "${CHECK_SCOPE:-}" = quick ] && DECODE=1x512x1024

# plan: the chained M tiles carry WEIGHT_REUSE, the first task of a submit does not.
expect_exit 0 "plan $PREFILL" -- $RKNN_BENCH plan --shape $PREFILL --tasks 3
expect_grep '^  config  .* wreuse=1  \[unproven on silicon\]$' "$TMP/out" "config wreuse=1, unproven"
expect_grep '^    0 .*[0-9]$' "$TMP/out" "task 0 keeps no weights"
expect_grep '^    1 .*  WEIGHT_REUSE$' "$TMP/out" "task 1 reuses the weights"
expect_grep '^  note    WEIGHT_REUSE .* unproven on silicon$' "$TMP/out" "note: unproven"
expect_exit 0 "plan --no-weight-reuse" -- $RKNN_BENCH plan --shape $PREFILL --tasks 3 --no-weight-reuse
if grep -q 'WEIGHT_REUSE\|unproven' "$TMP/out"; then
	not_ok "--no-weight-reuse plans no reuse" "$(grep 'WEIGHT_REUSE\|unproven' "$TMP/out")"
else ok "--no-weight-reuse plans no reuse"; fi
expect_grep ' wreuse=0$' "$TMP/out" "config wreuse=0"
expect_exit 0 "plan json" -- $RKNN_BENCH plan --shape $PREFILL --format json
cp "$TMP/out" "$TMP/plan.json"
[ "$(json "$TMP/plan.json" results.0.weight_reuse)" = true ] &&
	[ "$(json "$TMP/plan.json" results.0.unproven_on_silicon)" = true ] &&
	[ "$(json "$TMP/plan.json" results.0.cores.0.tasks.0.weight_reuse)" = false ] &&
	[ "$(json "$TMP/plan.json" results.0.cores.0.tasks.1.weight_reuse)" = true ] &&
	[ "$(json "$TMP/plan.json" results.0.cores.0.tasks.1.weight_bytes)" = 0 ] &&
	ok "json: weight_reuse per task and plan, unproven, no weight bytes re-read" ||
	not_ok "json: weight_reuse" "$(json "$TMP/plan.json" results.0.cores.0.tasks.1)"

# dump decodes the bit of a chained task's program.
ADDRS="--a-addr 0xffff8000 --b-addr 0xffff9000 --c-addr 0xffffa000"
expect_exit 0 "regcmd --weight-reuse" -- $RKNN_BENCH regcmd --shape 4x64x16 $ADDRS --weight-reuse
cp "$TMP/out" "$TMP/reuse.hex"
expect_exit 0 "dump the chained task" -- $RKNN_BENCH dump --strict "$TMP/reuse.hex"
expect_grep '^ *11 0201000020b11040 CNA.CBUF_CON0 .* WEIGHT_REUSE=1$' "$TMP/out" "dump decodes WEIGHT_REUSE=1"
expect_exit 0 "regcmd without" -- $RKNN_BENCH regcmd --shape 4x64x16 $ADDRS --format text
expect_grep 'CNA.CBUF_CON0 .* WEIGHT_REUSE=0$' "$TMP/out" "a lone task has WEIGHT_REUSE=0"

# The emulator verifies the reused weights, and the modeled time drops.
expect_exit 0 "run $PREFILL with weight reuse" -- $RKNN_BENCH run --shape $PREFILL $RUN
cp "$TMP/out" "$TMP/reuse.json"
expect_exit 0 "run $PREFILL --no-weight-reuse" -- $RKNN_BENCH run --shape $PREFILL $RUN --no-weight-reuse
cp "$TMP/out" "$TMP/plain.json"
for f in reuse plain; do
	[ "$(json "$TMP/$f.json" results.0.verify.status)" = verified ] && ok "$f run verified" ||
		not_ok "$f run verified" "$(json "$TMP/$f.json" results.0.verify)"
done
[ "$(json "$TMP/reuse.json" results.0.config.unproven_on_silicon)" = true ] &&
	[ "$(json "$TMP/plain.json" results.0.config.unproven_on_silicon)" = false ] &&
	ok "the run report marks reuse unproven" || not_ok "the run report marks reuse unproven"
with=$(json "$TMP/reuse.json" results.0.stats.median_us)
without=$(json "$TMP/plain.json" results.0.stats.median_us)
if awk "BEGIN { exit !($with < $without) }"; then
	ok "modeled time drops with weight reuse ($with us < $without us)"
else not_ok "modeled time drops with weight reuse" "$with us, $without us without"; fi

# Mainline M = 1: 4 padded rows, SURF_STRIDE 0; the vendor variant keeps -3.
expect_exit 0 "regcmd 1x32x32 --mainline" -- $RKNN_BENCH regcmd --shape 1x32x32 --dtype int8 $ADDRS --mainline --format text
expect_grep 'CNA.DMA_CON2 SURF_STRIDE=0$' "$TMP/out" "mainline M=1: SURF_STRIDE 0"
expect_grep 'CNA.DATA_SIZE0 DATAIN_HEIGHT=4 ' "$TMP/out" "mainline M=1: 4 rows"
expect_exit 0 "regcmd 1x32x32 vendor" -- $RKNN_BENCH regcmd --shape 1x32x32 --dtype int8 $ADDRS --format text
expect_grep 'CNA.DMA_CON2 SURF_STRIDE=-3$' "$TMP/out" "vendor M=1: SURF_STRIDE -3"
expect_exit 0 "run $DECODE on sim:rocket" -- $RKNN_BENCH run --shape $DECODE $RUN --device sim:rocket
[ "$(json "$TMP/out" results.0.verify.status)" = verified ] &&
	ok "sim:rocket M=1 verifies (mainline variant, padded to 4 rows)" ||
	not_ok "sim:rocket M=1 verifies" "$(json "$TMP/out" results.0.verify)"
expect_grep 'mainline=1' "$TMP/out" "sim:rocket ran the mainline variant"

# tune: the tuned JSON marks reuse unproven on silicon; --no-weight-reuse tunes without.
printf '%s\n' '{"mask": ["0x1"], "split": ["n"], "weights": ["even"], "align": [16],' \
	'"banks": ["auto"], "kslice": ["auto"], "launch": ["fences"]}' >"$TMP/tiny.json"
TUNE="--shape 256x1024x256 --device sim --iters 1 --warmup 0 --verify sample --quiet"
TUNE="$TUNE --space $TMP/tiny.json --top 1"
expect_exit 0 "tune a prefill shape" -- $RKNN_BENCH tune $TUNE -o "$TMP/tuned.json"
[ "$(json "$TMP/tuned.json" pairs.0.tuned.unproven_on_silicon)" = true ] &&
	ok "tuned JSON: weight reuse unproven on silicon" ||
	not_ok "tuned JSON: weight reuse unproven on silicon" "$(json "$TMP/tuned.json" pairs.0.tuned)"
expect_exit 0 "tune --no-weight-reuse" -- $RKNN_BENCH tune $TUNE --no-weight-reuse -o "$TMP/plain-tuned.json"
case "$(json "$TMP/plain-tuned.json" pairs.0.tuned.config)" in
*wreuse=0) [ "$(json "$TMP/plain-tuned.json" pairs.0.tuned.unproven_on_silicon)" = false ] &&
	ok "tune --no-weight-reuse: wreuse=0, not unproven" ||
	not_ok "tune --no-weight-reuse: not unproven" ;;
*) not_ok "tune --no-weight-reuse: wreuse=0" "$(json "$TMP/plain-tuned.json" pairs.0.tuned.config)" ;;
esac
expect_exit 0 "tune --list-space --no-weight-reuse" -- $RKNN_BENCH tune --list-space --no-weight-reuse
expect_grep ';wreuse=0;' "$TMP/out" "the space's wreuse knob holds 0"

# run and tune take the flag.
for cmd in run tune; do
	expect_exit 0 "$cmd --help" -- $RKNN_BENCH $cmd --help
	expect_grep "--no-weight-reuse" "$TMP/out" "$cmd --help lists --no-weight-reuse"
done
