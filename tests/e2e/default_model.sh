# The model-guided default against the tuned best, both read from one tune: for every
# pair of the seed file (decode) and of representative prefill and Qwen shapes (an
# 8192-channel K that needs K-slices, a 512-row shape the planner's auto axis cuts along
# M, Qwen's ffn_down), the default config's modeled time (device + host) is within
# 1.10x of the tuned best. `run` and the executor take the same default (tests/unit/
# test_plan_model.c, test_matmul.c). The full three model files are checked the same way
# by hand (README, "The default config"): their tune takes minutes.
. tests/e2e/lib.sh

# ratio_check FILE LABEL: every pair's default_total_us / total_us <= 1.10
ratio_check() {
	n=$("$JSONCHECK" "$1" pairs.#)
	worst=$(i=0; while [ "$i" -lt "$n" ]; do
		d=$("$JSONCHECK" "$1" "pairs.$i.measured.default_total_us")
		t=$("$JSONCHECK" "$1" "pairs.$i.measured.total_us")
		echo "$d $t"
		i=$((i + 1))
	done | awk '{ r = $1 / $2; if (r > w) w = r } END { printf "%.3f", w }')
	awk -v w="$worst" 'BEGIN { exit !(w > 0 && w <= 1.10) }' &&
		ok "$2: the default within 1.10x of the tuned best on all $n pairs (worst $worst)" ||
		not_ok "$2: the default within 1.10x of the tuned best" "worst ratio $worst over $n pairs"
}

expect_exit 0 "tune the seed file" -- \
	$RKNN_BENCH tune --device sim --quiet configs/mat_kernel_size.json -o "$TMP/seed.json"
ratio_check "$TMP/seed.json" "seed file"

if [ "${CHECK_SCOPE:-full}" = quick ] || [ "${SANITIZE:-}" = 1 ]; then
	ok "# SKIP the prefill and Qwen shapes are left to the plain make check"
	exit 0
fi
expect_exit 0 "tune prefill and qwen shapes" -- \
	$RKNN_BENCH tune --device sim --quiet --shape 128x8192x2048 --shape 512x2048x512 \
	--shape 1x8960x1536 -o "$TMP/mixed.json"
ratio_check "$TMP/mixed.json" "prefill and qwen shapes"
