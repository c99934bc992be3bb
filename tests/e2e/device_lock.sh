# rknn-bench runs alone on an NPU (issue 32): every device open takes an exclusive
# flock on its node. The vendor driver drops another user's jobs older than their
# timeout in µs on every non-blocking submit (tests/unit/test_shared_npu.c shows the kill
# on the emulated kernel), so a second process on an NPU in use fails with exit 3 and a
# message, or waits with --wait-device. An emulated device locks the file
# $RKNN_BENCH_SIM_NODE names (two processes given the same file share its lock); flock(1)
# stands for the other process.
. tests/e2e/lib.sh
RUN="$RKNN_BENCH run --shape 4x64x16 --iters 1 --warmup 0"
NODE="$TMP/npu-node"
: >"$NODE"

if ! command -v flock >/dev/null 2>&1; then
	ok "# SKIP no flock(1) to hold the node"
	exit 0
fi
# held: until flock -n finds the node taken (at most ~5 s on a loaded machine)
held() {
	i=0
	while flock -n "$NODE" true && [ "$i" -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
flock "$NODE" sleep 5 &
holder=$!
held
expect_exit 3 "a second process on the node: exit 3" -- \
	env RKNN_BENCH_SIM_NODE="$NODE" $RUN --device sim
expect_grep "is in use by another rknn-bench process.*--wait-device" "$TMP/err" \
	"the message names the node in use and --wait-device"
expect_exit 3 "sim:rocket too" -- env RKNN_BENCH_SIM_NODE="$NODE" $RUN --device sim:rocket
expect_exit 0 "another node: no wait" -- env RKNN_BENCH_SIM_NODE="$TMP/other" $RUN --device sim
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# --wait-device: waits for the holder (1 s), then runs
flock "$NODE" sleep 1 &
holder=$!
held
expect_exit 0 "--wait-device waits for the node and runs" -- \
	env RKNN_BENCH_SIM_NODE="$NODE" $RUN --device sim --wait-device
wait "$holder" 2>/dev/null
expect_grep "verified" "$TMP/out" "the waiting run verified"
expect_exit 0 "tune --help" -- $RKNN_BENCH tune --help
expect_grep "--wait-device" "$TMP/out" "tune takes --wait-device too"
