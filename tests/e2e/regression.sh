# The regression gate of `make check`: rerun configs/regression.json and compare with
# the committed baseline. On the emulator times are modeled and deterministic, so any
# change beyond the threshold fails; on a board (DEVICE=rknpu BASELINE=FILE) the same
# gate uses real samples and a Mann-Whitney U test (see `rknn-bench compare`).
. tests/e2e/lib.sh
DEVICE=${DEVICE:-sim}
BASELINE=${BASELINE:-bench/baseline-sim.json}
ITERS="--iters 1 --warmup 0"
[ "$DEVICE" = sim ] || ITERS="--iters 15 --min-time 1"

expect_exit 0 "regression shapes run on $DEVICE" -- \
	"$RKNN_BENCH" run configs/regression.json --device "$DEVICE" $ITERS -o "$TMP/new.json"
"$RKNN_BENCH" compare "$BASELINE" "$TMP/new.json" >"$TMP/cmp" 2>&1
rc=$?
if [ "$rc" -eq 0 ]; then
	ok "no regression against $BASELINE ($(grep '^geomean' "$TMP/cmp"))"
else
	not_ok "no regression against $BASELINE (compare exit $rc)" "$(cat "$TMP/cmp")" \
		"if the change is intended: make baseline, and commit bench/baseline-sim.json"
fi
