#!/bin/sh
# Peak memory of `run` on an NPU device (run/measure.c, numeric/inputs.h): a B of 64 MiB or
# more is streamed, made and packed a block of columns at a time, so it exists once, in
# the device's buffer, and a C of 16 MiB or more stays in the device's output cube,
# read a block at a time as it is checked, so the process peaks near A+B+C instead of
# twice B or twice C. And neither changes a result: RKNN_BENCH_DEBUG=stream_b streams
# small Bs and device_c leaves small Cs on the device, whose results (verdict, errors,
# modeled time) must equal those of the whole B and C.
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

# 512x2048x16384 fp16: B 64 MiB (streamed), C 32 MiB, A 2 MiB: the class of
# 512x2048x128256, whose C matters too. Its C stays in the device's output cube and is
# read a block at a time as it is checked (run/measure.c): held on the host next to the
# cube it peaked at 1.45x in sample mode (the mode of 512x2048x128256, M·N·K > 2^36) and
# at 1.94x in full mode (the whole reference C too). Full mode adds the reference
# GEMM's working set per thread (~13 MiB each here: --threads 2), hence its own bound.
# rss_within NAME TENTHS -- run ARGS...: the run's peak RSS <= TENTHS/10 of A+B+C.
rss_within() {
	name=$1 tenths=$2
	shift 3
	"$MAXRSS" "$TMP/rss" "$RKNN_BENCH" "$@" -o "$TMP/big.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	abc_kib=$(((2097152 + 67108864 + 33554432) / 1024))
	rss=$(cat "$TMP/rss" 2>/dev/null || echo 0)
	if [ "$rc" -eq 0 ] && [ "$rss" -gt 0 ] && [ $((rss * 10)) -le $((abc_kib * tenths)) ] &&
		grep -q '"status":[[:space:]]*"verified"' "$TMP/big.json"; then
		ok "$name: verified, peak RSS $rss KiB <= $tenths/10 x A+B+C ($abc_kib KiB)"
	else
		not_ok "$name: verified, peak RSS <= $tenths/10 x A+B+C" \
			"exit $rc, peak $rss KiB, A+B+C $abc_kib KiB" "$(head -c 600 "$TMP/err")"
	fi
}
if [ -n "${RUNNER:-}" ]; then
	ok "peak RSS of run --device sim, M = 512 # SKIP under $RUNNER the RSS is the emulator's"
	ok "peak RSS of run --device sim, M = 512, full # SKIP under $RUNNER"
elif [ "${SANITIZE:-}" = 1 ]; then
	ok "peak RSS of run --device sim, M = 512 # SKIP SANITIZE=1: shadow memory and quarantine count"
	ok "peak RSS of run --device sim, M = 512, full # SKIP SANITIZE=1"
else
	rss_within "run --device sim 512x2048x16384 --verify sample" 13 -- run --device sim \
		--threads 2 --verify sample --shape 512x2048x16384
	rss_within "run --device sim 512x2048x16384 --verify full" 15 -- run --device sim \
		--threads 2 --verify full --shape 512x2048x16384
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

# same NAME -- run ARGS...: the run with a held and with a streamed B (with $FLAG,
# default stream_b: device_c for a C held and left on the device) report the same
# verification and modeled time, and exit the same way ($DEBUG: more debug switches).
same() {
	name=$1
	flag=${FLAG:-stream_b}
	shift 2
	RKNN_BENCH_DEBUG=$DEBUG "$RKNN_BENCH" "$@" -o "$TMP/held.json" >/dev/null 2>"$TMP/err"
	rc_held=$?
	RKNN_BENCH_DEBUG=$DEBUG${DEBUG:+,}$flag "$RKNN_BENCH" "$@" -o "$TMP/streamed.json" \
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
		ok "$name: $flag, the same results (exit $rc_held)"
	else
		not_ok "$name: $flag, the same results" "exit $rc_held and $rc_streamed" \
			"$(diff "$TMP/held.txt" "$TMP/streamed.txt" | head -c 600)" "$(head -c 300 "$TMP/err")"
	fi
}

DEBUG= same "fp16 full" -- run --device sim --data uniform --shape 1x1000x2100 --shape 7x300x1234
DEBUG= same "int8 sample" -- run --device sim --dtype int8 --verify sample --shape 5x700x1500 \
	--shape 1x64x3000
DEBUG= same "sim:rocket" -- run --device sim:rocket --data uniform --shape 3x500x900 --shape 1x96x96
DEBUG=corrupt_c same "a wrong C" -- run --device sim --data uniform --shape 4x256x700 --shape 1x512x600
FLAG=device_c DEBUG= same "fp16 full" -- run --device sim --data uniform --shape 1x1000x2100 \
	--shape 70x300x1234
FLAG=device_c DEBUG=stream_b same "int8 sample" -- run --device sim --dtype int8 --verify sample \
	--shape 5x700x1500 --shape 64x64x3000
FLAG=device_c DEBUG= same "sim:rocket" -- run --device sim:rocket --data uniform --shape 3x500x900 \
	--shape 1x96x96
FLAG=device_c DEBUG=corrupt_c same "a wrong C" -- run --device sim --data uniform --shape 4x256x700 \
	--shape 1x512x600
echo "1..$n"
