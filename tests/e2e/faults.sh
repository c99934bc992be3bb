# Data-driven fault injection through the whole NPU path on the emulator: the cases in
# tests/faults/cases.txt break the first task of a job (see src/npu/fault.h).
. tests/e2e/lib.sh
# 1x2048x8192 gives every core a chain of many tasks, so a chained tail exists.
SHAPE="--shape 1x2048x8192"

while IFS='|' read -r flag code text; do
	flag=$(echo "$flag" | tr -d ' ')
	case "$flag" in '' | '#'*) continue ;; esac
	code=$(echo "$code" | tr -d ' ')
	text=$(echo "$text" | sed 's/^ *//; s/ *$//')
	env RKNN_BENCH_DEBUG="$flag" "$RKNN_BENCH" run --device sim $SHAPE --iters 1 --warmup 0 \
		-o "$TMP/out.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		not_ok "$flag exits $code" "exit $rc" "$(head -c 600 "$TMP/err")"
	elif ! grep -qF -- "$text" "$TMP/out" "$TMP/err"; then
		not_ok "$flag reports '$text'" "$(head -c 600 "$TMP/err")" "$(head -c 600 "$TMP/out")"
	else
		ok "$flag: exit $code, '$text'"
	fi
	# A device error leaves no report behind; a failed verification does write one.
	if [ "$code" -eq 3 ] && [ -e "$TMP/out.json" ]; then
		not_ok "$flag leaves no output file"
	fi
	rm -f "$TMP/out.json"
done <tests/faults/cases.txt

# After faults the emulator recovers: a clean run in the same process is not needed
# (each run is a fresh emulator), but a clean run right after must still verify.
expect_exit 0 "clean run after the faults" -- "$RKNN_BENCH" run --device sim $SHAPE --iters 1 --warmup 0
