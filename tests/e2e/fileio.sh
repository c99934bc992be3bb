# The one file reader (core/fileio.c) as users pass inputs: pipes and /dev/stdin read
# to the end (not cut at 4 KiB), a FIFO nobody writes to refused after a timeout
# instead of hanging, an endless device refused at the limit for its kind.
. tests/e2e/lib.sh
SEED=configs/mat_kernel_size.json

[ "$(wc -c <$SEED)" -gt 4096 ] && ok "the seed shapes file is larger than one pipe read" ||
	not_ok "the seed shapes file is larger than one pipe read"
expect_exit 0 "shapes from a pipe (/dev/stdin)" -- \
	sh -c "cat $SEED | $RKNN_BENCH run /dev/stdin --device sim --iters 1 --warmup 0 --verify sample"
expect_grep '^result_output +1x2048x128256' "$TMP/out" "the last pair of the piped file is read"
$RKNN_BENCH --quiet run --device cpu --shape 1x64x64 --iters 1 --warmup 0 -o "$TMP/r.json" >/dev/null
expect_exit 0 "a report from a pipe (compare)" -- \
	sh -c "cat '$TMP/r.json' | $RKNN_BENCH compare /dev/stdin '$TMP/r.json'"

mkfifo "$TMP/fifo"
start=$(date +%s)
expect_exit 2 "a FIFO with no writer is refused, not waited for forever" -- \
	env RKNN_BENCH_READ_TIMEOUT_MS=1000 timeout 60 $RKNN_BENCH run "$TMP/fifo" --device cpu
expect_grep "'$TMP/fifo': it is a FIFO and nothing was written to it for 1 s" "$TMP/err" \
	"the FIFO refusal says why"
[ $(($(date +%s) - start)) -lt 30 ] && ok "the FIFO is given up after the timeout" ||
	not_ok "the FIFO is given up after the timeout"
(sleep 1; cat $SEED >"$TMP/fifo") &
expect_exit 0 "a FIFO whose writer comes later is read" -- $RKNN_BENCH plan "$TMP/fifo" --tasks 1
wait

expect_exit 2 "dump /dev/zero stops at the limit" -- timeout 60 $RKNN_BENCH dump /dev/zero
expect_grep "larger than the 64 MiB limit for a register program" "$TMP/err" "names the limit"
expect_exit 2 "dump --binary /dev/urandom stops at the limit" -- \
	timeout 60 $RKNN_BENCH dump --binary /dev/urandom

# --- outputs: checked before the work, never over an input, not lost to stdout --------
ONE="--shape 4x64x64 --device sim --iters 1 --warmup 0"
cp configs/regression.json "$TMP/mine.json"
expect_exit 2 "run X -o X is refused" -- $RKNN_BENCH run "$TMP/mine.json" -o "$TMP/mine.json"
expect_grep "is also an input of this command" "$TMP/err" "the message says -o is an input"
cmp -s "$TMP/mine.json" configs/regression.json && ok "the input is untouched" || not_ok "the input is untouched"
expect_exit 2 "-o in a missing directory: refused before running" -- \
	$RKNN_BENCH run configs/mat_kernel_size.json --device sim -o "$TMP/no/such/dir/r.json"
expect_grep "cannot write in '.*no/such/dir'" "$TMP/err" "the message names the directory"
mkfifo "$TMP/outfifo"
expect_exit 2 "-o a FIFO nobody reads: refused, no hang" -- timeout 60 $RKNN_BENCH run $ONE -o "$TMP/outfifo"
expect_grep "a FIFO that nobody reads" "$TMP/err" "the message says why"
$RKNN_BENCH run $ONE -o "$TMP/closed.json" >&- 2>"$TMP/closed.err"
expect_exit 0 "stdout closed: -o is still written (valid JSON)" -- "$JSONCHECK" "$TMP/closed.json" results.0.stats.median_us
expect_exit 2 "tune -o /dev/null without --cache" -- $RKNN_BENCH tune $ONE -o /dev/null
expect_grep "give --cache FILE" "$TMP/err" "the message asks for --cache"
[ ! -e /dev/null.cache.jsonl ] && ok "no /dev/null.cache.jsonl" || not_ok "no /dev/null.cache.jsonl"
expect_exit 2 "tune --cache equal to -o" -- $RKNN_BENCH tune $ONE -o "$TMP/t.json" --cache "$TMP/t.json"
# A tune where no config verifies (every C corrupted) keeps an earlier tuned JSON.
expect_exit 0 "a good tune" -- $RKNN_BENCH --quiet tune $ONE --top 1 -o "$TMP/good.json"
cp "$TMP/good.json" "$TMP/good.before"
expect_exit 1 "a tune where nothing verifies" -- env RKNN_BENCH_DEBUG=corrupt_c \
	$RKNN_BENCH --quiet tune $ONE --top 1 -o "$TMP/good.json" --cache "$TMP/bad.cache"
expect_grep "'.*good.json' \(from an earlier tune\) is kept" "$TMP/err" "it says the earlier file is kept"
cmp -s "$TMP/good.json" "$TMP/good.before" && ok "the earlier tuned JSON is untouched" ||
	not_ok "the earlier tuned JSON is untouched"
# tune reads a piped shapes file once and writes its tuned JSON from what it read: 60
# pairs of three small shapes, a file larger than one pipe read (the regression file
# took 7 CPU seconds here, and is smaller than one read).
PIPED="$TMP/piped-shapes.json" PIPED_PAIRS=60
awk 'BEGIN { printf "{\"pairs\": ["; for (i = 0; i < 60; i++)
	printf "%s\n{\"src0\": {\"row\": %d, \"col\": 256}, \"src1\": {\"row\": 256, \"col\": 512}, \"name\": \"layer-%d\"}",
		i ? "," : "", i % 3 == 0 ? 1 : 16 * (i % 3), i; print "]}" }' >"$PIPED"
[ "$(wc -c <"$PIPED")" -gt 4096 ] && ok "the piped tune's shapes file is larger than one pipe read" ||
	not_ok "the piped tune's shapes file is larger than one pipe read"
expect_exit 0 "tune from a pipe" -- sh -c "cat $PIPED | $RKNN_BENCH --quiet tune /dev/stdin \
	--device sim --iters 1 --warmup 0 --verify sample --top 1 -o '$TMP/piped.json' >/dev/null"
expect_exit 0 "the piped tune's file has every pair" -- "$CONSUMER" --every "$TMP/piped.json"
expect_grep "^$PIPED_PAIRS pairs found, 0 missed\$" "$TMP/out" "$PIPED_PAIRS pairs, none missed"
# 100,000 pairs load in linear time (it took 51 s when every name was compared with every
# other; 0.5 s now): the timeout only catches a return to quadratic loading.
awk 'BEGIN { printf "{\"pairs\": ["; for (i = 0; i < 100000; i++)
	printf "%s{\"src0\":{\"row\":%d,\"col\":64},\"src1\":{\"row\":64,\"col\":%d},\"name\":\"n%d\"}",
		i ? "," : "", 1 + i % 7, 64 + 32 * (i % 50), i; print "]}" }' >"$TMP/100k.json"
expect_exit 0 "100,000 pairs load (linear)" -- timeout 20 $RKNN_BENCH plan "$TMP/100k.json" --tasks 0
