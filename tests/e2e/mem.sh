#!/bin/sh
# Peak memory of `run` on an NPU device (run/measure.c, core/inputs.h): a B of 64 MiB or
# more is streamed, made and packed a block of columns at a time, so it exists once, in
# the device's buffer, and the process peaks near A+B+C instead of twice B. And
# streaming changes no result: RKNN_BENCH_DEBUG=stream_b streams small Bs, whose
# results (verdict, errors, modeled time) must equal those of the whole B.
. tests/e2e/lib.sh

MAXRSS=${BUILD:-build}/tests/maxrss

# 1x2048x32768 fp16: B 128 MiB (A 4 KiB, C 128 KiB); held twice it peaked at 2.05x.
if [ -n "${RUNNER:-}" ]; then
	ok "peak RSS of run --device sim # SKIP under $RUNNER the RSS is the emulator's"
elif [ "${SANITIZE:-}" = 1 ]; then
	ok "peak RSS of run --device sim # SKIP SANITIZE=1: shadow memory and quarantine count"
else
	"$MAXRSS" "$TMP/rss" "$RKNN_BENCH" run --device sim --shape 1x2048x32768 \
		-o "$TMP/big.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	abc_kib=$(((4096 + 134217728 + 131072) / 1024))
	rss=$(cat "$TMP/rss" 2>/dev/null || echo 0)
	if [ "$rc" -eq 0 ] && [ "$rss" -gt 0 ] && [ $((rss * 10)) -le $((abc_kib * 13)) ]; then
		ok "run --device sim 1x2048x32768: peak RSS $rss KiB <= 1.3 x A+B+C ($abc_kib KiB)"
	else
		not_ok "run --device sim 1x2048x32768: peak RSS <= 1.3 x A+B+C" \
			"exit $rc, peak $rss KiB, A+B+C $abc_kib KiB" "$(head -c 600 "$TMP/err")"
	fi
	expect_grep '"status":[[:space:]]*"verified"' "$TMP/big.json" "the streamed 1x2048x32768 is verified"
fi

# The threshold: B of 64 MiB streams, a B one column short of it is held.
if [ -n "${RUNNER:-}" ]; then
	ok "64 MiB threshold # SKIP under $RUNNER (minutes of emulated generator)"
else
	expect_exit 0 "run 1x2048x16384 and 1x2048x16383" -- $RKNN_BENCH run --device sim \
		--verify none --shape 1x2048x16384 --shape 1x2048x16383 -o "$TMP/edge.json"
	[ "$($JSONCHECK "$TMP/edge.json" results.0.config.b_streamed)" = true ] &&
		[ -z "$($JSONCHECK "$TMP/edge.json" results.1.config.b_streamed 2>/dev/null)" ] &&
		ok "B of 64 MiB is streamed (config b_streamed), one column less is held" ||
		not_ok "B of 64 MiB is streamed (config b_streamed), one column less is held" \
			"$(grep b_streamed "$TMP/edge.json")"
fi

# same NAME -- run ARGS...: the run with a held and with a streamed B report the same
# verification and modeled time, and exit the same way ($DEBUG: more debug switches).
same() {
	name=$1
	shift 2
	RKNN_BENCH_DEBUG=$DEBUG "$RKNN_BENCH" "$@" -o "$TMP/held.json" >/dev/null 2>"$TMP/err"
	rc_held=$?
	RKNN_BENCH_DEBUG=$DEBUG${DEBUG:+,}stream_b "$RKNN_BENCH" "$@" -o "$TMP/streamed.json" \
		>/dev/null 2>>"$TMP/err"
	rc_streamed=$?
	for f in held streamed; do
		for i in 0 1; do
			$JSONCHECK "$TMP/$f.json" results.$i.verify
			$JSONCHECK "$TMP/$f.json" results.$i.stats.median_us
		done >"$TMP/$f.txt"
	done
	if [ "$rc_held" -eq "$rc_streamed" ] && [ -s "$TMP/held.txt" ] &&
		cmp -s "$TMP/held.txt" "$TMP/streamed.txt"; then
		ok "$name: streamed B, the same results (exit $rc_held)"
	else
		not_ok "$name: streamed B, the same results" "exit $rc_held and $rc_streamed" \
			"$(diff "$TMP/held.txt" "$TMP/streamed.txt" | head -c 600)" "$(head -c 300 "$TMP/err")"
	fi
}

DEBUG= same "fp16 full" -- run --device sim --data uniform --shape 1x1000x2100 --shape 7x300x1234
DEBUG= same "int8 sample" -- run --device sim --dtype int8 --verify sample --shape 5x700x1500 \
	--shape 1x64x3000
DEBUG= same "sim:rocket" -- run --device sim:rocket --data uniform --shape 3x500x900 --shape 1x96x96
DEBUG=corrupt_c same "a wrong C" -- run --device sim --data uniform --shape 4x256x700 --shape 1x512x600
echo "1..$n"
