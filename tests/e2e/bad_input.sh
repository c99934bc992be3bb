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
