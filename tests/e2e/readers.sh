# Readers never wait forever (issue 35, docs/reliability.md): every named input is read
# through the bounded reader (core/fileio.h), so a FIFO nobody writes to, a pipe that
# sends part of a file and then stalls, and an endless stream behind a hostile count are
# refused within the read limit. RKNN_BENCH_READ_TIMEOUT_MS=1000 makes the limit 1 s
# here (the default: 10 s for a FIFO's first data, 60 s for a whole read).
. tests/e2e/lib.sh
MKGGUF=${MKGGUF:-${BUILD:-build}/tests/mkgguf}
RKNN_BENCH_READ_TIMEOUT_MS=1000
export RKNN_BENCH_READ_TIMEOUT_MS

built $MKGGUF "$TMP/m.gguf" llama 256 512 2 4 2 300 tokens >/dev/null
$RKNN_BENCH shapes --arch llama --embd 64 --ff 128 --heads 2 --heads-kv 2 --vocab 128 \
	--layers 1 --nodes ffn_up -o "$TMP/s.json" 2>/dev/null

ms() { echo $(($(date +%s%N) / 1000000)); }

# stalls NAME FILE BYTES EXPECT COMMAND...: COMMAND reads /dev/stdin from a pipe that
# sends the first BYTES of FILE and then stays open for 2 s without writing; it must
# fail with exit 2 and EXPECT in its message: after the 1 s limit, not at the end of the
# file (a reader without the limit gets the end of file at 2 s and calls it truncated).
stalls() {
	name=$1 file=$2 bytes=$3 want=$4
	shift 4
	start=$(ms)
	{ head -c "$bytes" "$file"; sleep 2; } | timeout 30 "$@" >"$TMP/out" 2>"$TMP/err"
	rc=$? took=$(($(ms) - start))
	if [ "$rc" -eq 2 ] && grep -qF -- "$want" "$TMP/err"; then
		ok "$name: a stalled pipe is refused (exit 2, '$want')"
	else
		not_ok "$name: a stalled pipe is refused" "exit $rc after $took ms" "$(head -c 400 "$TMP/err")"
	fi
}

# Each measured apart from the pipeline (which waits for its writer's `sleep`): the
# reader's process must end within 5 s.
within() {
	name=$1
	shift
	start=$(ms)
	"$@" &
	pid=$!
	while kill -0 $pid 2>/dev/null && [ $(($(ms) - start)) -lt 5000 ]; do sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		pkill -P $pid
		kill $pid
		not_ok "$name: ends within 5 s"
	else
		ok "$name: ends within 5 s ($(($(ms) - start)) ms)"
	fi
	wait $pid 2>/dev/null
}

STALL="the pipe stalled; its whole read must finish within 1 s"
stalls "shapes --gguf" "$TMP/m.gguf" 300 "$STALL" $RKNN_BENCH shapes --gguf /dev/stdin
stalls "run (a shapes file)" "$TMP/s.json" 20 "$STALL" $RKNN_BENCH run --device cpu /dev/stdin
stalls "plan (a shapes file)" "$TMP/s.json" 20 "$STALL" $RKNN_BENCH plan /dev/stdin
stalls "--soc (a hardware profile)" configs/soc/rk3588.json 200 "$STALL" \
	$RKNN_BENCH run --device sim --shape 1x64x64 --soc /dev/stdin
stalls "dump (a register program)" /dev/zero 64 "$STALL" $RKNN_BENCH dump /dev/stdin

# The reader itself ends in time, whatever its writer does.
mkfifo "$TMP/stall"
stall_reader() {
	$RKNN_BENCH shapes --gguf "$TMP/stall" >/dev/null 2>"$TMP/stall.err"
}
{ head -c 300 "$TMP/m.gguf"; sleep 3; } >"$TMP/stall" &
writer=$!
within "shapes --gguf of a FIFO that stalls after 300 bytes" stall_reader
wait $writer
expect_grep "$STALL" "$TMP/stall.err" "the FIFO that stalled: the message gives the limit"

# A FIFO with no writer: refused after the first-data limit.
mkfifo "$TMP/fifo"
nowriter() { $RKNN_BENCH shapes --gguf "$TMP/fifo" >/dev/null 2>"$TMP/fifo.err"; }
within "shapes --gguf of a FIFO with no writer" nowriter
expect_grep "it is a FIFO and nothing was written to it for 1 s" "$TMP/fifo.err" \
	"the FIFO with no writer: the message says why"

# An array of 2^62 bytes then /dev/zero on a pipe: refused at once by its size, not read
# (it would take years).
endless() {
	{
		printf 'GGUF\003\000\000\000'                          # magic, version 3
		printf '\000\000\000\000\000\000\000\000'              # 0 tensors
		printf '\001\000\000\000\000\000\000\000'              # 1 key/value
		printf '\001\000\000\000\000\000\000\000k'             # the key "k"
		printf '\011\000\000\000\000\000\000\000'              # an array of uint8
		printf '\000\000\000\000\000\000\000\100'              # 2^62 of them
		cat /dev/zero
	} 2>/dev/null | $RKNN_BENCH shapes --gguf /dev/stdin >/dev/null 2>"$TMP/endless.err"
}
within "an array of 2^62 bytes followed by /dev/zero" endless
expect_grep "byte 49: an array \(4611686018427387904 bytes\) would take the header past 256 MiB" \
	"$TMP/endless.err" "the endless array: refused by its size"

# A directory is called a directory, not a truncated file.
expect_exit 2 "shapes --gguf DIRECTORY" -- $RKNN_BENCH shapes --gguf "$TMP"
expect_grep "cannot read '$TMP': Is a directory" "$TMP/err" "the message says it is a directory"

# Files named by the environment (RKNN_BENCH_MEMINFO, RKNN_BENCH_DTROOT, ...) are read
# the same way, and SIGTERM ends a wait for one: with the default limit (10 s for a
# FIFO's first data) a run or tune blocked on a FIFO ends within 3 s of a SIGTERM sent
# after 1 s, with the exit code of a stop (143). Before, run and tune (which catch the
# signal to stop cleanly) kept waiting: forever on a blocking read.
for cmd in "run --device sim --shape 1x64x64 --iters 1 --warmup 0" \
	"tune --device sim --shape 1x64x64 --top 1 --quiet -o $TMP/t.json"; do
	start=$(ms)
	# shellcheck disable=SC2086 # cmd is a command line
	(RKNN_BENCH_MEMINFO=$TMP/fifo RKNN_BENCH_READ_TIMEOUT_MS= exec $RKNN_BENCH $cmd \
		>/dev/null 2>"$TMP/sig.err") &
	pid=$!
	sleep 1
	kill -TERM $pid
	while kill -0 $pid 2>/dev/null && [ $(($(ms) - start)) -lt 4000 ]; do sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		kill -KILL $pid
		wait $pid 2>/dev/null
		not_ok "${cmd%% *} blocked on RKNN_BENCH_MEMINFO (a FIFO): SIGTERM ends it" \
			"still running 3 s after SIGTERM"
	else
		wait $pid
		rc=$?
		[ "$rc" -eq 143 ] &&
			ok "${cmd%% *} blocked on RKNN_BENCH_MEMINFO (a FIFO): SIGTERM ends it (143, $(($(ms) - start)) ms)" ||
			not_ok "${cmd%% *} blocked on RKNN_BENCH_MEMINFO: SIGTERM ends it" "exit $rc" \
				"$(head -c 300 "$TMP/sig.err")"
	fi
done
