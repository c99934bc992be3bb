#!/bin/sh
# The option tables (src/cli) against what is made from them: every option of every
# command (rknn-bench --list-options) is in its --help, its man page and both shell
# completions, with the values of an enumerated option; nothing else is. And what one
# table makes cheap: "did you mean", accepted values listed, the planner's key list.
# shellcheck source=tests/e2e/lib.sh
. tests/e2e/lib.sh
B=$RKNN_BENCH

"$B" --list-options >"$TMP/table" || not_ok "--list-options"
sh scripts/completions.sh "$B" bash >"$TMP/bash" && sh scripts/completions.sh "$B" zsh >"$TMP/zsh" ||
	not_ok "the completions are generated"
sh scripts/help2man.sh "$B" 0 "$TMP/man" || not_ok "the man pages are generated"
commands=$(cut -f1 "$TMP/table" | uniq)
[ "$(echo "$commands" | wc -l)" -ge 11 ] && ok "--list-options lists every command" ||
	not_ok "--list-options lists every command" "$commands"

# arm SHELL COMMAND: the lines of a command's case arm in a completion
arm() { awk -v c="$2" '$1 == c ")" { on = 1; next } on && /^\t*esac/ { exit } on' "$TMP/$1"; }
# words: one per line, sorted
words() { tr ' ' '\n' | sed '/^$/d' | sort -u; }
# same DESCRIPTION A B: the two files hold the same lines
same() {
	if cmp -s "$2" "$3"; then ok "$1"; else not_ok "$1" "$(diff "$2" "$3" | head -5 | tr '\n' ' ')"; fi
}

for c in $commands; do
	awk -F'\t' -v c="$c" '$1 == c { print $2; if ($3 != "-") print $3 }' "$TMP/table" | sort -u >"$TMP/t"
	awk -F'\t' -v c="$c" '$1 == c && $5 != "-" { v = $5; gsub(/\|/, " ", v); print $2 " " v }' \
		"$TMP/table" | sort >"$TMP/tv"
	"$B" "$c" --help | grep -oE -- '(^| |\[)--?[a-z][a-z0-9-]*' | sed 's/^[ []*//' | sort -u >"$TMP/h"
	comm -23 "$TMP/t" "$TMP/h" >"$TMP/not-in-help"
	same "$c: --help documents every option of the table" "$TMP/not-in-help" /dev/null
	sed -n '/^\.TP/{n;p}' "$TMP/man/rknn-bench-$c.1" | sed 's/\\-/-/g' |
		grep -oE -- '(^|[ ,B])--?[a-z][a-z0-9-]*' | sed 's/^[ ,B]*//' | sort -u >"$TMP/m"
	same "$c: the man page's options are the table's" "$TMP/t" "$TMP/m"
	for sh in bash zsh; do
		arm "$sh" "$c" | sed -n 's/.*opts=["(]\(.*\)[")]$/\1/p' | words >"$TMP/o"
		same "$c: the $sh completion's options are the table's" "$TMP/t" "$TMP/o"
		arm "$sh" "$c" | sed -n 's/^\t*\(--[a-z0-9-]*\)) vals=["(]\(.*\)[")] ;;$/\1 \2/p' |
			sort >"$TMP/v"
		same "$c: the $sh completion's values are the table's" "$TMP/tv" "$TMP/v"
	done
done

# --- one table, cheap extras ----------------------------------------------------------
expect_exit 2 "a mistyped command" -- "$B" rnu
expect_grep "'rnu' is not a command; did you mean 'run'\?" "$TMP/err" "a mistyped command: did you mean"
expect_exit 2 "a mistyped option" -- "$B" tune --stratgy model
expect_grep "unknown option '--stratgy' for tune; did you mean --strategy\?" "$TMP/err" \
	"a mistyped option: did you mean"
expect_exit 2 "a bad enumerated value" -- "$B" tune --strategy exhaustiv --shape 4x64x64
expect_grep "--strategy 'exhaustiv' must be model, exhaustive or random \(did you mean exhaustive\?\)" \
	"$TMP/err" "a bad enumerated value: the accepted values, the nearest"
expect_exit 2 "a missing value" -- "$B" run --device
expect_grep "--device needs a value: auto\|sim" "$TMP/err" "a missing value: the values"
expect_exit 2 "a missing required option" -- "$B" calibrate r.json
expect_grep "-o is required: calibrate needs -o PROFILE.json" "$TMP/err" "a missing required option: named"
expect_exit 2 "the planner's unknown key" -- "$B" plan --shape 4x64x64 --config 'nope=1'
expect_grep "keys are mask, split, axis, weights, align, banks, dbanks, wbanks, kslice, res, chain, out, mainline, wreuse" \
	"$TMP/err" "the planner's unknown key: every key of its table"
expect_exit 0 "help COMMAND" -- "$B" help plan
expect_grep "^usage: rknn-bench plan " "$TMP/out" "help COMMAND is COMMAND --help"
