# Replays every fuzz input kept in the tree (tests/fuzz/corpus/<target> and
# tests/fuzz/regressions/<target>) through its fuzz target built with the normal
# compiler (build/tests/fuzz-replay-<target>), so crashes once found by `make fuzz`
# stay regression tests without clang. A finding aborts the replay: not ok.
. tests/e2e/lib.sh
BUILD=${BUILD:-build}

for src in tests/fuzz/fuzz_*.c; do
	t=$(basename "$src" .c)
	t=${t#fuzz_}
	set -- tests/fuzz/corpus/"$t"
	[ -d tests/fuzz/regressions/"$t" ] && set -- "$@" tests/fuzz/regressions/"$t"
	expect_exit 0 "fuzz replay $t" -- built "$BUILD/tests/fuzz-replay-$t" "$@"
	expect_grep '^[1-9][0-9]* inputs$' "$TMP/out" "fuzz replay $t ran its inputs"
done
