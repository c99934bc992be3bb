#!/bin/sh
# Feeds every tests/bad-input/NAME.json to `rknn-bench run` and checks that it is refused
# cleanly: the exit code and a stderr substring come from NAME.expect (two lines), and
# no output file may appear. One TAP line per case.
# shellcheck source=tests/e2e/lib.sh
. tests/e2e/lib.sh

# check_case NAME FILE CODE WANT: runs the binary on FILE, one TAP line for all checks
check_case() {
	name=$1
	file=$2
	code=$3
	want=$4
	rm -f "$TMP/out.json" "$TMP"/.out.json.*
	"$RKNN_BENCH" run --device cpu "$file" -o "$TMP/out.json" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	left=
	for f in "$TMP/out.json" "$TMP"/.out.json.*; do
		[ -e "$f" ] && left=${f##*/}
	done
	if [ "$rc" -ne "$code" ]; then
		not_ok "$name" "exit $rc, wanted $code" "$(head -c 600 "$TMP/err")"
	elif ! grep -qF -- "$want" "$TMP/err"; then
		not_ok "$name" "stderr lacks: $want" "$(head -c 600 "$TMP/err")"
	elif [ -n "$left" ]; then
		not_ok "$name" "output file '$left' was created"
	else
		ok "$name"
	fi
}

found=0
for input in tests/bad-input/*.json; do
	[ -f "$input" ] || continue
	name=${input%.json}
	name=${name##*/}
	expect=${input%.json}.expect
	if [ ! -f "$expect" ]; then
		not_ok "$name" "missing $expect"
		continue
	fi
	{ IFS= read -r code && IFS= read -r want; } <"$expect"
	check_case "$name" "$input" "$code" "$want"
	found=$((found + 1))
done

# a shapes file that does not exist
check_case "no-such-file" "tests/bad-input/no-such-file.json" 2 \
	"cannot open 'tests/bad-input/no-such-file.json'"
# a directory given as the shapes file
check_case "directory" "tests/bad-input" 2 "cannot read 'tests/bad-input'"

if [ "$found" -lt 20 ]; then
	not_ok "bad-input suite" "only $found cases found in tests/bad-input, wanted at least 20"
fi

# Keys a person mistyped are not ignored; names that would reach a terminal as control
# sequences are refused; a hardware profile cannot change the CBUF the planner uses.
printf '{"pairs":[{"src0":{"row":1,"col":64},"src1":{"row":64,"col":64},"name":"a","dtpye":"int8"}]}' >"$TMP/typo.json"
expect_exit 2 "a misspelled pair key" -- $RKNN_BENCH run "$TMP/typo.json" --device sim
expect_grep 'typo.json: pairs\[0\]: unknown key "dtpye"; did you mean "dtype"\?' "$TMP/err" "did you mean dtype"
printf '{"pairs":[{"src0":{"rows":1,"col":64},"src1":{"row":64,"col":64},"name":"a"}]}' >"$TMP/rows.json"
expect_exit 2 "a misspelled matrix key" -- $RKNN_BENCH plan "$TMP/rows.json"
expect_grep 'pairs\[0\].src0.row is missing' "$TMP/err" "the missing key is named"
printf '{"pairs":[{"src0":{"row":1,"col":64,"cols":2},"src1":{"row":64,"col":64},"name":"a"}]}' >"$TMP/cols.json"
expect_exit 2 "a misspelled extra matrix key" -- $RKNN_BENCH plan "$TMP/cols.json"
expect_grep 'pairs\[0\].src0: unknown key "cols"; did you mean "col"\?' "$TMP/err" "did you mean col"
printf '{"pairs":[{"src0":{"row":1,"col":64},"src1":{"row":64,"col":64},"name":"a\\u001b[2J"}]}' >"$TMP/esc.json"
expect_exit 2 "a terminal escape in a name" -- $RKNN_BENCH run "$TMP/esc.json" --device sim
expect_grep 'name "a\\x1b\[2J" has a control character' "$TMP/err" "the name is shown escaped"
sed 's/"banks": {"value": 12/"banks": {"value": 8/' configs/soc/rk3588.json >"$TMP/8banks.json"
expect_exit 2 "a profile with 8 CBUF banks" -- $RKNN_BENCH run --shape 1x64x64 --device sim --soc "$TMP/8banks.json"
expect_grep 'cbuf is 8 banks of 32768 bytes: the planner and the programs are made for the RK3588' "$TMP/err" \
	"the profile's CBUF is refused up front"
grep -v '"schema"' configs/soc/rk3588.json >"$TMP/noschema.json"
expect_exit 2 "a profile without its schema" -- $RKNN_BENCH run --shape 1x64x64 --device sim --soc "$TMP/noschema.json"
expect_grep 'schema is missing' "$TMP/err" "the missing schema is named"
