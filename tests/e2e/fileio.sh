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
	timeout 60 $RKNN_BENCH run "$TMP/fifo" --device cpu
expect_grep "'$TMP/fifo': it is a FIFO and nothing was written to it for 10 s" "$TMP/err" \
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
