#!/bin/sh
# bench/calibration.md is what bench-calibrate prints today: every target met, every
# anchor compared with the statistic its source published (min of 20 / mean of 64),
# the LPDDR4x rows marked modeled, and the committed file current (`make calibrate`
# regenerates it). Skipped under CHECK_SCOPE=quick: ~10 s natively, minutes under qemu.
. tests/e2e/lib.sh

CALIBRATE=${CALIBRATE:-${BUILD:-build}/bench-calibrate}
if [ "${CHECK_SCOPE:-}" = quick ]; then
	ok "calibration skipped under CHECK_SCOPE=quick"
	exit 0
fi
expect_exit 0 "bench-calibrate: every target met" -- built "$CALIBRATE"
cp "$TMP/out" "$TMP/calibration.md"
expect_grep '^\| A2 \| 128,1024,8192 .*\| Orange Pi 5 Ultra, LPDDR5 \| min of 20 \|' "$TMP/calibration.md" \
	"A2 is compared as the minimum of 20 it is"
expect_grep '^\| A15 \| .*\| mean of 64 \|' "$TMP/calibration.md" "A15 is compared as the mean it is"
expect_grep 'every row.s modeled runs took exactly the same time \(min = max\)' "$TMP/calibration.md" \
	"the modeled runs repeat exactly, so min, median and mean agree"
expect_grep 'its rows below are \*\*modeled, not measured on LPDDR4x\*\*' "$TMP/calibration.md" \
	"the LPDDR4x rows say they are modeled"
if cmp -s "$TMP/calibration.md" bench/calibration.md; then
	ok "bench/calibration.md is current"
else
	not_ok "bench/calibration.md is current" "run 'make calibrate'; differences:" \
		"$(diff bench/calibration.md "$TMP/calibration.md" | head -20)"
fi
