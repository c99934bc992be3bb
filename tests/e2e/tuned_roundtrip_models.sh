# The round trip of tuned_roundtrip.sh (lib_roundtrip.sh) for the model files: the
# Qwen2.5-1.5B decode shapes, and configs/llama-3.2-1b-prefill.json (10 prefill shapes up
# to 512x2048x128256) over a reduced space with --top 1: its full default space takes
# many minutes on the emulator (every candidate computes the whole product), the reduced
# one still has every launch mode. backend-demo, whose reference is a plain loop, does
# not run the prefill file (134 G MACs in its output layer alone): run --tuned does.
# Left to the plain make check: under CHECK_SCOPE=quick (qemu) and SANITIZE=1 these take
# the same code paths as tuned_roundtrip.sh's files.
. tests/e2e/lib.sh
. tests/e2e/lib_roundtrip.sh
if [ "${CHECK_SCOPE:-full}" = quick ] || [ "${SANITIZE:-}" = 1 ]; then
	ok "# SKIP the model files are left to the plain make check"
	exit 0
fi
cat >"$TMP/prefill-space.json" <<'SPACE'
{"mask": ["0x7"], "split": ["m"], "weights": ["even"], "align": [32],
 "banks": ["auto"], "kslice": ["auto"], "launch": ["fences", "threads", "multicore"]}
SPACE

roundtrip qwen configs/qwen2.5-1.5b.json
roundtrip prefill configs/llama-3.2-1b-prefill.json --space "$TMP/prefill-space.json" --top 1
# The report page of this prefill tune (lib_report.sh): a row per unique shape, under
# 6,000 px in Chromium.
. tests/e2e/lib_report.sh
report_prefill_check "$TMP/prefill.json"
