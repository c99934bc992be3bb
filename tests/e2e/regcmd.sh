# End-to-end tests of `rknn-bench regcmd` and `rknn-bench dump`: the golden programs of
# docs/npu-facts.md Appendix A/B byte for byte, decoding, flagging, and bad input.
. tests/e2e/lib.sh
ADDRS="--a-addr 0xffff8000 --b-addr 0xffff9000 --c-addr 0xffffa000"

# expect_same FILE GOLDEN DESCRIPTION
expect_same() {
	if cmp -s "$1" "$2"; then ok "$3"; else
		not_ok "$3" "$(cmp "$1" "$2" 2>&1)" "$(diff "$1" "$2" | head -n 8)"
	fi
}

# expect_lines N FILE DESCRIPTION
expect_lines() {
	got=$(wc -l <"$2" | tr -d ' ')
	if [ "$got" -eq "$1" ]; then ok "$3"; else not_ok "$3" "$got lines, wanted $1"; fi
}

# The programs of Appendix A (fp16 → fp32) and B (int8 → int32).
expect_exit 0 "regcmd fp16 4x64x16" -- \
	$RKNN_BENCH regcmd --shape 4x64x16 --dtype fp16 $ADDRS --format hex
expect_same "$TMP/out" tests/golden/fp16_4x64x16.hex "fp16 4x64x16 matches Appendix A"
expect_exit 0 "regcmd int8 1x32x32" -- \
	$RKNN_BENCH regcmd --shape 1x32x32 --dtype int8 --out int32 $ADDRS --format hex
expect_same "$TMP/out" tests/golden/int8_1x32x32.hex "int8 1x32x32 matches Appendix B"
expect_exit 0 "hex is the default format" -- $RKNN_BENCH regcmd --shape 4x64x16 $ADDRS
expect_same "$TMP/out" tests/golden/fp16_4x64x16.hex "default output is hex"
# K and N are padded: 4x50x10 is planned as 4x64x16.
expect_exit 0 "regcmd pads K and N" -- $RKNN_BENCH regcmd --shape 4x50x10 $ADDRS
expect_grep '^0201003f00401024$' "$TMP/out" "K padded to 64 (DATA_SIZE1)"
expect_grep '^0201010100101038$' "$TMP/out" "N padded to 16 (WEIGHT_SIZE2)"

# Variants: fp16 out, mainline rocket.
expect_exit 0 "regcmd --out fp16" -- $RKNN_BENCH regcmd --shape 4x64x16 --out fp16 $ADDRS
expect_grep '^1001480000024010$' "$TMP/out" "fp16 out: DATA_FORMAT 0x48000002"
expect_exit 0 "regcmd --mainline" -- $RKNN_BENCH regcmd --shape 4x64x16 --mainline $ADDRS
expect_lines 126 "$TMP/out" "mainline program has 126 words"
expect_grep '^00810000001d0008$' "$TMP/out" "mainline op-enable 0x1D"

# Text format and dump of the golden files.
expect_exit 0 "regcmd --format text" -- $RKNN_BENCH regcmd --shape 4x64x16 $ADDRS --format text
expect_lines 108 "$TMP/out" "text has one line per word"
expect_grep '^  4 0201000100041020 CNA\.DATA_SIZE0 DATAIN_HEIGHT=4 DATAIN_WIDTH=1$' "$TMP/out" \
	"text decodes DATA_SIZE0"
expect_exit 0 "dump Appendix A" -- $RKNN_BENCH dump tests/golden/fp16_4x64x16.hex
expect_lines 108 "$TMP/out" "dump prints 108 lines"
expect_grep 'CNA\.FEATURE_DATA_ADDR FEATURE_BASE_ADDR=0xffff8000$' "$TMP/out" "dump: A address"
expect_grep 'DPU\.DATA_FORMAT .*IN_PRECISION=2 OUT_PRECISION=5$' "$TMP/out" "dump: fp16 → fp32"
expect_grep 'DPU\.SURFACE_ADD SURF_ADD=0x100$' "$TMP/out" "dump: SURFACE_ADD in bytes"
expect_grep '^104 0000000000000000 end \(0\)$' "$TMP/out" "dump: end word"
expect_grep '^105 0101000000000014 PC\.REGISTER_AMOUNTS PC_DATA_AMOUNT=0$' "$TMP/out" \
	"dump: PC amount"
expect_grep '^106 0041000000000000 sync \(0x0041\)$' "$TMP/out" "dump: sync word"
expect_grep '^107 00810000000d0008 op_enable CNA\|CORE\|DPU$' "$TMP/out" "dump: op-enable"
expect_exit 0 "dump Appendix B from stdin" -- sh -c \
	"$RKNN_BENCH dump - <tests/golden/int8_1x32x32.hex"
expect_grep 'CNA\.DMA_CON2 SURF_STRIDE=-3$' "$TMP/out" "dump: M=1 surface stride is -3"
expect_exit 0 "dump --strict on a clean program" -- \
	$RKNN_BENCH dump --strict tests/golden/int8_1x32x32.hex

# Comments, blank lines, 0x prefixes; raw binary words.
printf '# a program\n\n0x0041000000000000  # sync\n  00810000000D0008\n' >"$TMP/c.hex"
expect_exit 0 "dump accepts comments and 0x" -- $RKNN_BENCH dump "$TMP/c.hex"
expect_lines 2 "$TMP/out" "comments and blank lines ignored"
printf '\000\000\000\000\000\000\101\000\010\000\015\000\000\000\201\000' >"$TMP/w.bin"
expect_exit 0 "dump --binary" -- $RKNN_BENCH dump --binary "$TMP/w.bin"
expect_grep '^  0 0041000000000000 sync' "$TMP/out" "binary word 0 is little-endian"
expect_grep '^  1 00810000000d0008 op_enable CNA\|CORE\|DPU$' "$TMP/out" "binary word 1"

# Words the database does not explain are flagged; --strict makes them an error.
printf '0201000000001234\n1234000000001000\n0201000000014010\n' >"$TMP/u.hex"
expect_exit 0 "unknown words are printed" -- $RKNN_BENCH dump "$TMP/u.hex"
expect_grep 'unknown CNA offset 0x1234' "$TMP/out" "unknown offset flagged"
expect_grep 'unknown target 0x1234' "$TMP/out" "unknown target flagged"
expect_grep 'DPU\.DATA_FORMAT .*# target 0x0201 \(CNA\) does not match' "$TMP/out" \
	"target/offset mismatch flagged"
expect_grep '3 of 3 words' "$TMP/err" "flagged words counted on stderr"
expect_exit 1 "dump --strict with unknown words" -- $RKNN_BENCH dump --strict "$TMP/u.hex"

# Bad input: exit 2 with a message naming the file and line.
printf '0041000000000000\n0041000000000\n' >"$TMP/bad.hex"
expect_exit 2 "short word" -- $RKNN_BENCH dump "$TMP/bad.hex"
expect_grep 'bad\.hex:2:' "$TMP/err" "message names file and line"
printf '0041000000000000 zz\n' >"$TMP/bad2.hex"
expect_exit 2 "trailing junk" -- $RKNN_BENCH dump "$TMP/bad2.hex"
printf '# nothing\n' >"$TMP/empty.hex"
expect_exit 2 "no words" -- $RKNN_BENCH dump "$TMP/empty.hex"
printf 'abc' >"$TMP/odd.bin"
expect_exit 2 "binary not a whole number of words" -- $RKNN_BENCH dump --binary "$TMP/odd.bin"
expect_grep '3 bytes' "$TMP/err" "binary size named"
expect_exit 2 "missing file" -- $RKNN_BENCH dump "$TMP/none.hex"
expect_grep 'none\.hex' "$TMP/err" "missing file named"
expect_exit 2 "two files" -- $RKNN_BENCH dump "$TMP/c.hex" "$TMP/c.hex"
expect_exit 2 "dump unknown option" -- $RKNN_BENCH dump --frob

# regcmd refusals: exit 2 naming the constraint.
expect_exit 2 "feature data over 11 banks" -- $RKNN_BENCH regcmd --shape 1024x4096x16 $ADDRS
expect_grep 'CBUF data banks' "$TMP/err" "bank limit named"
expect_exit 2 "rows over DATAIN_HEIGHT" -- $RKNN_BENCH regcmd --shape 2048x64x16 $ADDRS
expect_grep 'CNA\.DATA_SIZE0\.DATAIN_HEIGHT: 2048 does not fit 11 bits' "$TMP/err" \
	"overflowing field named"
expect_exit 2 "--out int32 with fp16" -- $RKNN_BENCH regcmd --shape 4x64x16 --out int32 $ADDRS
expect_exit 2 "address over 32 bits" -- \
	$RKNN_BENCH regcmd --shape 4x64x16 --a-addr 0x100000000 --b-addr 0 --c-addr 0
expect_exit 2 "unaligned C" -- $RKNN_BENCH regcmd --shape 4x64x16 --a-addr 0 --b-addr 0 --c-addr 8
expect_grep '16-byte aligned' "$TMP/err" "alignment named"
expect_exit 2 "missing --c-addr" -- $RKNN_BENCH regcmd --shape 4x64x16 --a-addr 0 --b-addr 0
expect_grep '\-\-c-addr is required' "$TMP/err" "missing option named"
expect_exit 2 "bad --shape" -- $RKNN_BENCH regcmd --shape 4x64 $ADDRS
expect_exit 2 "bad --format" -- $RKNN_BENCH regcmd --shape 4x64x16 $ADDRS --format json
expect_exit 0 "regcmd --help" -- $RKNN_BENCH regcmd --help
expect_grep '\-\-mainline' "$TMP/out" "regcmd --help documents --mainline"
expect_exit 0 "dump --help" -- $RKNN_BENCH dump --help
expect_grep '\-\-binary' "$TMP/out" "dump --help documents --binary"
