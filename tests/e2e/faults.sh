# Data-driven fault injection through the whole NPU path on the emulator: the cases in
# tests/faults/cases.txt break the first task of a job (see src/npu/fault.h), and are
# refused by the program validator, or with --unsafe-skip-validation by the emulator.
. tests/e2e/lib.sh
# 1x2048x8192 gives every core a chain of many tasks, so a chained tail exists.
SHAPE="--shape 1x2048x8192"

while IFS='|' read -r flag opts code text; do
	flag=$(echo "$flag" | tr -d ' ')
	case "$flag" in '' | '#'*) continue ;; esac
	opts=$(echo "$opts" | sed 's/^ *//; s/ *$//')
	code=$(echo "$code" | tr -d ' ')
	text=$(echo "$text" | sed 's/^ *//; s/ *$//')
	name="$flag${opts:+ $opts}"
	# shellcheck disable=SC2086 # opts is a list of options
	env RKNN_BENCH_DEBUG="$flag" "$RKNN_BENCH" run --device sim $SHAPE --iters 1 --warmup 0 \
		$opts -o "$TMP/out.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		not_ok "$name exits $code" "exit $rc" "$(head -c 600 "$TMP/err")"
	elif ! grep -qF -- "$text" "$TMP/out" "$TMP/err"; then
		not_ok "$name reports '$text'" "$(head -c 600 "$TMP/err")" "$(head -c 600 "$TMP/out")"
	elif [ -n "$opts" ] && ! grep -qF -- "WITHOUT being checked" "$TMP/err"; then
		not_ok "$name warns about $opts" "$(head -c 600 "$TMP/err")"
	else
		ok "$name: exit $code, '$text'"
	fi
	# A device error leaves no report behind; a failed verification does write one.
	if [ "$code" -eq 3 ] && [ -e "$TMP/out.json" ]; then
		not_ok "$name leaves no output file"
	fi
	rm -f "$TMP/out.json"
done <tests/faults/cases.txt

# After faults the emulator recovers: a clean run in the same process is not needed
# (each run is a fresh emulator), but a clean run right after must still verify.
expect_exit 0 "clean run after the faults" -- "$RKNN_BENCH" run --device sim $SHAPE --iters 1 --warmup 0

# tune: a config whose program the validator refuses is recorded as failed with the
# validator's message, and tuning goes on to the next config.
env RKNN_BENCH_DEBUG=fault_banks "$RKNN_BENCH" tune --device sim --shape 1x256x256 --top 2 \
	--quiet -o "$TMP/t.json" >"$TMP/out" 2>"$TMP/err"
rc=$?
failed=$(grep -c '"status":"failed".*task 0 (core 0): CNA.CBUF_CON0: DATA_BANK 8' \
	"$TMP/t.json.cache.jsonl" 2>/dev/null)
if [ "$rc" -eq 1 ] && [ "${failed:-0}" -gt 1 ]; then
	ok "tune records $failed refused configs as failed and goes on (exit 1)"
else
	not_ok "tune records refused configs as failed" "exit $rc, $failed failed records" \
		"$(head -c 600 "$TMP/err")"
fi

# --unsafe-skip-validation is recorded in the outputs of run and tune.
"$RKNN_BENCH" run --device sim --shape 1x64x64 --iters 1 --warmup 0 --unsafe-skip-validation \
	-o "$TMP/run.json" >/dev/null 2>"$TMP/err"
"$RKNN_BENCH" tune --device sim --shape 1x64x64 --top 1 --quiet --unsafe-skip-validation \
	-o "$TMP/tuned.json" >/dev/null 2>>"$TMP/err"
if [ "$("$JSONCHECK" "$TMP/run.json" context.unsafe_skip_validation)" = true ] &&
	[ "$("$JSONCHECK" "$TMP/tuned.json" unsafe_skip_validation)" = true ] &&
	[ "$(grep -c 'WITHOUT being checked' "$TMP/err")" -eq 2 ]; then
	ok "--unsafe-skip-validation warns and is recorded by run and tune"
else
	not_ok "--unsafe-skip-validation recorded" "$(head -c 600 "$TMP/err")"
fi
