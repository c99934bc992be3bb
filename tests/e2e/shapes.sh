# rknn-bench shapes: shapes files from a model's numbers or its GGUF header, named as
# llama.cpp's graph names the matmuls, compared with the seed backend's own file.
. tests/e2e/lib.sh
MKGGUF=${BUILD:-build}/tests/mkgguf
LLAMA_1B="--arch llama --embd 2048 --ff 8192 --layers 16 --heads 32 --heads-kv 8 --vocab 128256"

# pairs FILE: one "name MxKxN" line per pair (any JSON spacing), sorted
pairs() {
	tr -d ' \t\n' <"$1" | sed 's/"},/"}\n/g' |
		sed -n 's/.*"src0":{"row":\([0-9]*\),"col":\([0-9]*\)},"src1":{"row":[0-9]*,"col":\([0-9]*\)},"name":"\([^"]*\)".*/\4 \1x\2x\3/p' |
		sort
}
seed_pairs() { pairs configs/mat_kernel_size.json; }

expect_exit 0 "shapes from Llama-3.2-1B's numbers" -- $RKNN_BENCH shapes $LLAMA_1B -o "$TMP/l.json"
expect_grep 'warning: 97 pairs; .* at most 85 pairs' "$TMP/err" "more pairs than the seed table: a warning with the limit"
expect_exit 0 "the file loads as a shapes file" -- $RKNN_BENCH plan "$TMP/l.json"
pairs "$TMP/l.json" >"$TMP/l.pairs"
seed_pairs >"$TMP/seed.pairs"
[ "$(wc -l <"$TMP/seed.pairs")" -eq 35 ] && ok "the seed file has 35 pairs" || not_ok "the seed file has 35 pairs"
missing=$(comm -23 "$TMP/seed.pairs" "$TMP/l.pairs" | tr '\n' ' ')
# Llama-3.2-1B has 16 blocks (0..15): the seed file's ffn_up-16 and ffn_out-16 name no
# node of its graph. Every other seed pair is generated, name and shape.
[ "$missing" = "ffn_out-16 1x8192x2048 ffn_up-16 1x2048x8192 " ] &&
	ok "33 of the 35 seed pairs; the two of block 16 do not exist in a 16-block model" ||
	not_ok "every seed pair but block 16's" "missing: $missing"
expect_exit 0 "shapes with the seed's 17 blocks and nodes" -- $RKNN_BENCH shapes $LLAMA_1B \
	--layers 17 --nodes ffn_up,ffn_out,result_output -o "$TMP/l17.json"
pairs "$TMP/l17.json" >"$TMP/l17.pairs"
cmp -s "$TMP/seed.pairs" "$TMP/l17.pairs" && ok "with --layers 17 all 35 seed pairs, nothing else" ||
	not_ok "with --layers 17 all 35 seed pairs" "$(diff "$TMP/seed.pairs" "$TMP/l17.pairs" | head -5)"
! grep -q warning "$TMP/err" && ok "35 pairs fit the seed table: no warning" || not_ok "no warning for 35 pairs"

# The shipped model files are this command's output (README: Shapes files).
expect_exit 0 "qwen2.5-1.5b.json regenerates" -- $RKNN_BENCH shapes --arch qwen2 --embd 1536 \
	--ff 8960 --layers 28 --heads 12 --heads-kv 2 --vocab 151936 -o "$TMP/q.json"
cmp -s "$TMP/q.json" configs/qwen2.5-1.5b.json && ok "configs/qwen2.5-1.5b.json is the shapes output" ||
	not_ok "configs/qwen2.5-1.5b.json is the shapes output"
# 85 pairs fill 255 of the backend's 256 contexts at init; result_output (N = 151936:
# init 50624/50624/50688, run 50624/50656/50656) makes two more at run time.
expect_grep "warning: 85 pairs make 257 contexts with 3 threads .* holds 256" "$TMP/err" \
	"Qwen2.5-1.5B's decode pairs overflow the kernel table at run time"
expect_exit 0 "llama-3.2-1b-prefill.json regenerates" -- $RKNN_BENCH shapes $LLAMA_1B \
	--tokens 128,512 --all-logits -o "$TMP/p.json"
cmp -s "$TMP/p.json" configs/llama-3.2-1b-prefill.json &&
	ok "configs/llama-3.2-1b-prefill.json is the shapes output" ||
	not_ok "configs/llama-3.2-1b-prefill.json is the shapes output"

# From a GGUF header (no tensor data): the same pairs as from the numbers.
built "$MKGGUF" "$TMP/l.gguf" llama 2048 8192 16 32 8 128256 tokens
expect_exit 0 "shapes --gguf" -- $RKNN_BENCH shapes --gguf "$TMP/l.gguf" -o "$TMP/g.json"
pairs "$TMP/g.json" | cmp -s - "$TMP/l.pairs" && ok "the GGUF gives the same pairs as the numbers" ||
	not_ok "the GGUF gives the same pairs as the numbers"
built "$MKGGUF" "$TMP/q.gguf" qwen2 1536 8960 28 12 2 151936 tensor
expect_exit 0 "shapes --gguf, vocabulary from output.weight" -- $RKNN_BENCH shapes --gguf "$TMP/q.gguf" -o "$TMP/gq.json"
pairs "$TMP/gq.json" | cmp -s - "$(pairs configs/qwen2.5-1.5b.json >"$TMP/qp"; echo "$TMP/qp")" &&
	ok "qwen2 from its GGUF header" || not_ok "qwen2 from its GGUF header"
expect_exit 0 "a flag overrides the GGUF's number" -- $RKNN_BENCH shapes --gguf "$TMP/l.gguf" \
	--layers 2 --nodes ffn_up
expect_grep '"name":"ffn_up-1"' "$TMP/out" "--layers 2 gives ffn_up-1"
! grep -q '"ffn_up-2"' "$TMP/out" && ok "and no ffn_up-2" || not_ok "and no ffn_up-2"

# Bad models: exit 2, the file and the byte offset, no output file.
head -c 5000 "$TMP/l.gguf" >"$TMP/cut.gguf"
expect_exit 2 "a truncated GGUF" -- $RKNN_BENCH shapes --gguf "$TMP/cut.gguf" -o "$TMP/cut.json"
expect_grep "cut.gguf: byte [0-9]+: .*truncated" "$TMP/err" "the message names the file and the byte offset"
[ ! -e "$TMP/cut.json" ] && ok "no output file after a bad GGUF" || not_ok "no output file after a bad GGUF"
printf 'GGML\003\000\000\000' >"$TMP/bad.gguf"
expect_exit 2 "not a GGUF" -- $RKNN_BENCH shapes --gguf "$TMP/bad.gguf"
expect_grep 'bad.gguf: byte 0: not a GGUF file' "$TMP/err" "not a GGUF: byte 0"
expect_exit 2 "an architecture whose names are unknown" -- $RKNN_BENCH shapes --arch gpt2 \
	--embd 768 --ff 3072 --layers 12 --heads 12 --heads-kv 12 --vocab 50257
expect_grep "'gpt2'" "$TMP/err" "names the architecture"
expect_exit 2 "a missing number" -- $RKNN_BENCH shapes --arch llama --embd 2048
expect_grep 'ff is 0' "$TMP/err" "names the missing number"
expect_exit 2 "--tokens 0" -- $RKNN_BENCH shapes $LLAMA_1B --tokens 1,0
expect_exit 0 "--help" -- $RKNN_BENCH shapes --help

# Pairs the ggml-rknn backend cannot create (model/ggml_rknn.h): a tiny model whose
# Kcur/Vcur have N = 64 (the backend's 3-way split gives a core N = 0) and whose
# vocabulary (1000) is no multiple of 16. Each is warned about by name and marked.
TINY="--arch llama --embd 256 --ff 320 --layers 2 --heads 4 --heads-kv 1 --head-dim 64"
expect_exit 0 "shapes of a tiny model" -- $RKNN_BENCH shapes $TINY --vocab 1000 -o "$TMP/t.json"
expect_grep "warning: Kcur-0 \(1x256x64\): the ggml-rknn backend cannot take it: N = 64 < 96" \
	"$TMP/err" "an N = 64 pair is warned about by name, with why"
expect_grep "warning: result_output \(1x256x1000\): .*N = 1000 is not a multiple of 16" \
	"$TMP/err" "N = 1000: not a multiple of 16"
expect_grep "warning: 5 of 13 pairs cannot be created by the ggml-rknn backend" "$TMP/err" \
	"the count of unusable pairs"
marked=$(grep -c '"ggml_rknn_unusable":' "$TMP/t.json")
[ "$marked" -eq 5 ] && ok "the five are marked in the file" || not_ok "the five are marked" "$marked"
grep '"name":"Kcur-0"' "$TMP/t.json" | grep -q '"ggml_rknn_unusable":"N = 64 < 96' &&
	ok "Kcur-0's mark says why" || not_ok "Kcur-0's mark says why"
! grep '"name":"ffn_up-0"' "$TMP/t.json" | grep -q unusable && ok "a usable pair is not marked" ||
	not_ok "a usable pair is not marked"
expect_exit 0 "the marked file still loads" -- $RKNN_BENCH plan "$TMP/t.json"
"$CONSUMER" --seed-reader "$TMP/t.json" >"$TMP/seed-t" 2>&1
[ "$(grep -c '^matrix_pair' "$TMP/seed-t")" -eq 13 ] && ok "the seed reader reads all 13 pairs" ||
	not_ok "the seed reader reads all 13 pairs" "$(head -3 "$TMP/seed-t")"
expect_exit 0 "more threads than 32-column blocks" -- $RKNN_BENCH shapes $TINY --vocab 1024 \
	--threads 16 --nodes ffn_out
expect_grep "warning: ffn_out-0 \(1x320x256\): .*over 16 threads: a thread's columns are empty" \
	"$TMP/err" "--threads 16: N = 256 leaves a thread without columns"

# --for ggml-rknn: each pair as the contexts the backend creates for it.
expect_exit 0 "shapes --for ggml-rknn" -- $RKNN_BENCH shapes $TINY --vocab 1024 \
	--for ggml-rknn -o "$TMP/s.json"
expect_grep "warning: Kcur-0 \(1x256x64\): .*N = 64 < 96.*; left out" "$TMP/err" \
	"an unusable pair is left out with a note"
j() { "$JSONCHECK" "$TMP/s.json" "$1" 2>/dev/null; }
[ "$(j target)" = ggml-rknn ] && [ "$(j threads)" = 3 ] && ok "target and threads at the top" ||
	not_ok "target and threads at the top"
! grep -q '"of":"Kcur-' "$TMP/s.json" && ok "no slice of Kcur" || not_ok "no slice of Kcur"
# ffn_up (N = 320): init 96/96/128 on cores 0/1/2, the same widths at run time.
grep '"of":"ffn_up-0"' "$TMP/s.json" |
	sed -n 's/.*"src1":{"row":256,"col":\([0-9]*\)},"name":"\([^"]*\)","core":\([0-9]*\).*"created":"\([a-z]*\)".*"runs":\([a-z]*\).*/\2 \1 \3 \4 \5/p' \
		>"$TMP/up"
printf '%s\n' "ffn_up-0:core0:0-96 96 0 init true" "ffn_up-0:core1:96-192 96 1 init true" \
	"ffn_up-0:core2:192-320 128 2 init true" | cmp -s - "$TMP/up" &&
	ok "N = 320: three init slices 96/96/128, one per core, each run" ||
	not_ok "N = 320: three init slices 96/96/128" "$(cat "$TMP/up")"
# Qcur (N = 256): init 64/64/128, run 64/96/96: two contexts made at run time, and the
# init ones of cores 1 and 2 never run (backend-facts: new contexts at run time).
grep '"of":"Qcur-0"' "$TMP/s.json" |
	sed -n 's/.*"col":\([0-9]*\)},"name":"[^"]*","core":\([0-9]*\).*"created":"\([a-z]*\)".*"runs":\([a-z]*\).*/\1 \2 \3 \4/p' \
		>"$TMP/q"
printf '%s\n' "64 0 init true" "64 1 init false" "128 2 init false" "96 1 run true" \
	"96 2 run true" | cmp -s - "$TMP/q" &&
	ok "N = 256: init 64/64/128, run 64/96/96 on cores 0/1/2" ||
	not_ok "N = 256: init 64/64/128, run 64/96/96" "$(cat "$TMP/q")"
"$CONSUMER" --seed-reader "$TMP/s.json" >"$TMP/seed-s" 2>&1
[ "$(grep -c '^matrix_pair' "$TMP/seed-s")" -eq "$(j pairs.#)" ] &&
	ok "the seed reader reads every slice" || not_ok "the seed reader reads every slice"
expect_exit 0 "the slices load as a shapes file" -- $RKNN_BENCH plan "$TMP/s.json"
expect_exit 0 "--threads 4" -- $RKNN_BENCH shapes $TINY --vocab 1024 --nodes ffn_up \
	--for ggml-rknn --threads 4
grep '"of":"ffn_up-0"' "$TMP/out" | grep '"created":"run"' |
	sed -n 's/.*"name":"\([^"]*\)","core":\([0-9a-z]*\).*/\1 \2/p' >"$TMP/t4"
# N = 320 over 4 threads: 64/96/64/96; thread 1's width is its init context's (96), the
# others are made at run time, the fourth with no core mask.
printf '%s\n' "ffn_up-0:core0:0-64 0" "ffn_up-0:core2:160-224 2" "ffn_up-0:thread3:224-320 null" |
	cmp -s - "$TMP/t4" && ok "--threads 4: three run-time contexts, the fourth thread's with no core" ||
	not_ok "--threads 4: three run-time contexts" "$(cat "$TMP/t4")"
expect_exit 2 "--for ggml-rknn --dtype int8" -- $RKNN_BENCH shapes $TINY --vocab 1024 \
	--for ggml-rknn --dtype int8
expect_grep "creates every context as fp16" "$TMP/err" "int8: the backend makes fp16 contexts"
expect_exit 2 "--for another backend" -- $RKNN_BENCH shapes $TINY --vocab 1024 --for cuda
expect_exit 2 "--threads 0" -- $RKNN_BENCH shapes $TINY --vocab 1024 --threads 0

# Linear in the pairs (issue 35): each pair is checked against the others through a hash
# set. 12,000 layers (72,001 pairs) took ~7 s of CPU with the scan of the whole list it
# replaced (8,000: 3.1 s); now ~0.4 s. The CPU-time limit (not a wall clock: the
# machine may be busy) kills a quadratic build.
BIG="--arch llama --embd 4096 --ff 11008 --heads 32 --heads-kv 32 --vocab 32000"
cpu=2
[ -n "${RUNNER:-}" ] && cpu=60 # an emulated CPU (make check-aarch64)
(ulimit -t "$cpu" && exec $RKNN_BENCH shapes $BIG --layers 12000 -o "$TMP/big.json") 2>"$TMP/err"
rc=$?
[ "$rc" -eq 0 ] && [ "$(grep -c '"name":' "$TMP/big.json")" -eq 72001 ] &&
	ok "shapes --layers 12000: 72,001 pairs within $cpu s of CPU" ||
	not_ok "shapes --layers 12000 within $cpu s of CPU" "exit $rc" "$(head -c 300 "$TMP/err")"

# shapes never writes a file that its own loader (plan, run) refuses: every variant
# round-trips, and a pair outside the loader's 1..2^31 is refused before writing.
SMALL="--arch llama --embd 256 --ff 512 --heads 4 --heads-kv 2 --vocab 512 --layers 2"
for v in "" "--tokens 1,32,1" "--tokens 1,32 --all-logits" "--dtype int8 --tokens 1,8" \
	"--for ggml-rknn --tokens 1,32" "--for ggml-rknn --threads 4" \
	"--nodes ffn_up,result_output --tokens 3,1"; do
	# shellcheck disable=SC2086 # v is a list of options
	$RKNN_BENCH shapes $SMALL $v -o "$TMP/rt.json" 2>"$TMP/err" &&
		$RKNN_BENCH plan "$TMP/rt.json" >/dev/null 2>>"$TMP/err" &&
		ok "shapes ${v:-(defaults)}: its output loads (plan)" ||
		not_ok "shapes ${v:-(defaults)}: its output loads" "$(head -c 600 "$TMP/err")"
done
rm -f "$TMP/rt.json"
expect_exit 2 "a head of 2^31 x 4 heads (N = 2^33) is refused" -- $RKNN_BENCH shapes \
	--arch llama --embd 64 --ff 64 --heads 4 --heads-kv 4 --head-dim 2147483647 --vocab 64 \
	--layers 1 -o "$TMP/rt.json"
expect_grep 'Qcur-0 would be 1x64x8589934588: every dimension must be 1 to 2\^31' "$TMP/err" \
	"the refusal names the pair and the rule"
[ ! -e "$TMP/rt.json" ] && ok "no file written for it" || not_ok "no file written for it"
