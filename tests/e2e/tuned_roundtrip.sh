# Every file tune writes loads everywhere it will be read: tune each shipped shapes file
# over the WHOLE default space (every launch mode, multicore included), then read the
# result with the library as a backend does (consumer --every: each pair found by name
# and shape), with the seed backend's own reader, and replay it with run --tuned, which
# must reproduce every pair's modeled time exactly and verify every shape; and run it
# through the matmul executor as ggml-rknn would (backend-demo: weights N×K, fp32 A),
# which must verify every pair. This script takes the seed and regression files;
# tuned_roundtrip_models.sh the model files (make check runs the two at once), with the
# same round trip (lib_roundtrip.sh). Under CHECK_SCOPE=quick (qemu) two seed shapes
# stand for the seed file and the regression file is left out.
. tests/e2e/lib.sh
. tests/e2e/lib_roundtrip.sh

printf '%s\n' '{"pairs": [' \
	'{"src0": {"row": 1, "col": 2048}, "src1": {"row": 2048, "col": 8192}, "name": "ffn_up-0"},' \
	'{"src0": {"row": 1, "col": 8192}, "src1": {"row": 8192, "col": 2048}, "name": "ffn_out-0"}]}' \
	>"$TMP/two.json"
# Under qemu (make check-aarch64) two seed shapes stand for the seed file: the same paths,
# a fraction of the emulated work; the sanitizers and the plain check take the whole file.
SEED=configs/mat_kernel_size.json SEED_PAIRS=35
[ "${CHECK_SCOPE:-full}" = quick ] && SEED="$TMP/two.json" SEED_PAIRS=2
roundtrip seed "$SEED"
[ "$(json "$TMP/seed.json" totals.tuned.0.pairs)" = $SEED_PAIRS ] &&
	[ -n "$(json "$TMP/seed.json" totals.default.0.total_us)" ] &&
	[ -n "$(json "$TMP/seed.json" totals.rknn_matmul_api.0.total_us)" ] &&
	ok "the tuned file holds the per-token totals: default, tuned, rknn_matmul_api" ||
	not_ok "the tuned file holds the per-token totals: default, tuned, rknn_matmul_api"
# multicore ties threads on the emulator, which the search meets first: a space of
# multicore alone makes sure that launch loads everywhere too.
echo '{"launch": ["multicore"]}' >"$TMP/multicore-space.json"
roundtrip multicore "$TMP/two.json" --space "$TMP/multicore-space.json"
[ "$(grep -c '"launch":	"multicore"' "$TMP/multicore.json")" = 2 ] &&
	ok "multicore: both pairs tuned to multicore" || not_ok "multicore: both pairs tuned to multicore"
[ "${CHECK_SCOPE:-full}" = quick ] || roundtrip regression configs/regression.json

# --target rknn-api: only what rknn_matmul_api expresses, so the tuned config is the
# rknn_matmul_api section itself. The seed file's three shapes stand for it, each under
# two names but the output layer (its 35 pairs' rknn_matmul_api configs already went
# through backend-demo --api in the seed round trip, and the check after the loop ties
# the two tunes together): backend-demo on all 35 again took 80 CPU seconds.
printf '%s\n' '{"pairs": [' \
	'{"src0": {"row": 1, "col": 2048}, "src1": {"row": 2048, "col": 8192}, "name": "ffn_up-0"},' \
	'{"src0": {"row": 1, "col": 2048}, "src1": {"row": 2048, "col": 8192}, "name": "ffn_up-1"},' \
	'{"src0": {"row": 1, "col": 8192}, "src1": {"row": 8192, "col": 2048}, "name": "ffn_out-0"},' \
	'{"src0": {"row": 1, "col": 8192}, "src1": {"row": 8192, "col": 2048}, "name": "ffn_out-1"},' \
	'{"src0": {"row": 1, "col": 2048}, "src1": {"row": 2048, "col": 128256}, "name": "result_output"}]}' \
	>"$TMP/seed-shapes.json"
API_FILES="$TMP/seed-shapes.json configs/regression.json"
# (under the sanitizers the seed's shapes alone, under qemu its two shapes)
[ "${SANITIZE:-}" = 1 ] && API_FILES="$TMP/seed-shapes.json"
[ "${CHECK_SCOPE:-full}" = quick ] && API_FILES="$TMP/two.json"
for file in $API_FILES; do
	f=$(basename "$file" .json)
	roundtrip "$f-api" "$file" --target rknn-api
	bad=$(grep -c '"launch":	"[a-z]*"' "$TMP/$f-api.json")
	thr=$(grep -c '"launch":	"threads"' "$TMP/$f-api.json")
	[ "$bad" = "$thr" ] && ok "$f-api: every config launches threads" ||
		not_ok "$f-api: every config launches threads" "$thr of $bad"
	np=$(json "$TMP/$f-api.json" pairs.#) i=0 same=0
	while [ "$i" -lt "$np" ]; do
		cfg=$(json "$TMP/$f-api.json" pairs.$i.tuned.config)
		case $cfg in *split=n*align=32*) ;; *) cfg=bad ;; esac
		[ "$cfg" = "$(json "$TMP/$f-api.json" pairs.$i.rknn_matmul_api.config)" ] &&
			[ "$(json "$TMP/$f-api.json" pairs.$i.rknn_matmul_api.best_overall_speedup)" = 1 ] &&
			same=$((same + 1))
		i=$((i + 1))
	done
	[ "$same" = "$np" ] && ok "$f-api: each tuned config splits N at 32 and is its API section" ||
		not_ok "$f-api: each tuned config splits N at 32 and is its API section" "$same of $np"
done
# The seed's pairs tuned for rknn-api are the seed tune's rknn_matmul_api sections: the
# same config, launch and modeled time, pair by pair.
api=$(basename "${API_FILES%% *}" .json)-api
np=$(json "$TMP/$api.json" pairs.#) i=0 same=0
while [ "$i" -lt "$np" ]; do
	j=0 name=$(json "$TMP/$api.json" pairs.$i.name)
	while [ "$j" -lt "$SEED_PAIRS" ] && [ "$(json "$TMP/seed.json" pairs.$j.name)" != "$name" ]; do
		j=$((j + 1))
	done
	[ "$("$JSONCHECK" "$TMP/$api.json" pairs.$i.tuned.config pairs.$i.tuned.launch \
		pairs.$i.measured.median_us 2>&1)" = "$("$JSONCHECK" "$TMP/seed.json" \
		pairs.$j.rknn_matmul_api.config pairs.$j.rknn_matmul_api.launch \
		pairs.$j.rknn_matmul_api.median_us 2>&1)" ] && same=$((same + 1))
	i=$((i + 1))
done
[ "$np" -gt 0 ] && [ "$same" = "$np" ] &&
	ok "$api: each pair's tuned config, launch and time are the seed tune's rknn_matmul_api section" ||
	not_ok "$api: each pair is the seed tune's rknn_matmul_api section" "$same of $np"
expect_exit 2 "--space and --target rknn-api together are refused" -- $RKNN_BENCH tune \
	--shape 1x64x64 $FAST --target rknn-api --space "$TMP/multicore-space.json" -o "$TMP/x.json"
expect_grep 'give one of them' "$TMP/err" "the message says to give one"

# A file of a newer schema 1.x: what this version does not know is a warning, not an
# error, and the pair still runs.
cat >"$TMP/newer.json" <<'NEWER'
{"schema": "rknn-bench-tuned/1.9", "pairs": [
 {"src0": {"row": 1, "col": 64}, "src1": {"row": 64, "col": 64}, "name": "x",
  "tuned": {"config": "mask=0x3", "launch": "warp-drive", "turbo": true}}]}
NEWER
expect_exit 0 "a newer 1.x file loads in the library" -- "$CONSUMER" --every "$TMP/newer.json"
expect_grep 'tuned.turbo: unknown key, ignored' "$TMP/out" "the library warns about the unknown key"
expect_exit 0 "run --tuned runs a newer 1.x file" -- $RKNN_BENCH run --tuned "$TMP/newer.json" \
	--shape 1x64x64 $FAST
expect_grep 'tuned.launch "warp-drive" is not known to this version: runs with "fences"' \
	"$TMP/err" "run --tuned says which launch it falls back to"
sed 's#tuned/1.9#tuned/2#' "$TMP/newer.json" >"$TMP/major2.json"
expect_exit 2 "another major schema is refused" -- $RKNN_BENCH run --tuned "$TMP/major2.json" \
	--shape 1x64x64 $FAST

# The default config is a candidate only inside the space.
echo '{"launch": ["threads"], "mask": ["0x1", "0x7"]}' >"$TMP/threads-space.json"
expect_exit 0 "tune a threads-only space" -- $RKNN_BENCH --quiet tune --shape 1x2048x8192 $FAST \
	--space "$TMP/threads-space.json" -o "$TMP/threads.json"
[ "$(json "$TMP/threads.json" pairs.0.tuned.launch)" = threads ] &&
	ok "the default (fences) is not chosen outside the space" ||
	not_ok "the default (fences) is not chosen outside the space" \
		"$(json "$TMP/threads.json" pairs.0.tuned.launch)"
[ -n "$(json "$TMP/threads.json" pairs.0.measured.default_us)" ] &&
	ok "the default is still timed as the baseline" || not_ok "the default is still timed"
