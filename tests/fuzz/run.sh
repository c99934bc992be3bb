#!/bin/sh
# Runs fuzz targets, each for a time box, on a copy of its seed corpus; fails on any
# finding. Used by `make fuzz` (tests/fuzz/fuzz.mk).
#
# Usage: sh tests/fuzz/run.sh BUILD_DIR SECONDS TARGET...
#   BUILD_DIR/fuzz-TARGET is run on BUILD_DIR/corpus/TARGET (a fresh copy of
#   tests/fuzz/corpus/TARGET, where new inputs go) plus tests/fuzz/regressions/TARGET;
#   a crash, leak, timeout or out-of-memory is written to BUILD_DIR/artifacts/TARGET/.
#   FUZZ_ARGS adds libFuzzer options (e.g. FUZZ_ARGS=-jobs=2).
set -u
build=$1
seconds=$2
shift 2
failed=0
for t in "$@"; do
	corpus=$build/corpus/$t
	artifacts=$build/artifacts/$t
	log=$build/fuzz-$t.log
	rm -rf "$corpus" "$artifacts"
	mkdir -p "$corpus" "$artifacts"
	cp tests/fuzz/corpus/"$t"/* "$corpus"/ 2>/dev/null
	set -- "$corpus"
	[ -d tests/fuzz/regressions/"$t" ] && set -- "$@" tests/fuzz/regressions/"$t"
	# -timeout: one input may take at most 10 s; -rss_limit_mb/-malloc_limit_mb keep a
	# target from taking the machine (the targets bound their own sizes well below).
	if "$build/fuzz-$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
		-malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$artifacts/" \
		${FUZZ_ARGS:-} "$@" >"$log" 2>&1; then
		stats=$(grep -E '^stat::(number_of_executed_units|average_exec_per_sec):' "$log" |
			sed 's/^stat:://' | tr '\n' ' ')
		echo "fuzz $t: ok, ${stats}corpus $(ls "$corpus" | wc -l) files"
	else
		echo "fuzz $t: FAILED, see $log and $artifacts/"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|.*fuzz check failed)' "$log" | head -n 5
		failed=$((failed + 1))
	fi
done
[ "$failed" -eq 0 ] || { echo "$failed fuzz target(s) failed"; exit 1; }
