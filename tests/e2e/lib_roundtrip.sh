# The round trip of tests/e2e/tuned_roundtrip.sh and tuned_roundtrip_models.sh (two
# scripts so that make check runs them at once): a tuned file read by every reader.
# Sourced after lib.sh.
FAST="--device sim --iters 1 --warmup 0 --verify sample"
DEMO=${BUILD:-build}/tests/backend-demo
json() { "$JSONCHECK" "$1" "$2" 2>/dev/null; }

# roundtrip NAME SHAPES [tune options...]
roundtrip() {
	name=$1 shapes=$2
	shift 2
	out="$TMP/$name.json"
	expect_exit 0 "$name: tune" -- $RKNN_BENCH --quiet tune "$shapes" $FAST "$@" -o "$out"
	expect_exit 0 "$name: the library finds every tuned pair by name and shape" -- \
		"$CONSUMER" --every "$out"
	expect_grep ' 0 missed$' "$TMP/out" "$name: no pair missed"
	"$CONSUMER" --seed-reader "$shapes" >"$TMP/seed-in" 2>&1
	"$CONSUMER" --seed-reader "$out" >"$TMP/seed-out" 2>&1
	cmp -s "$TMP/seed-in" "$TMP/seed-out" && ok "$name: the seed backend's reader reads it" ||
		not_ok "$name: the seed backend's reader reads it"
	expect_exit 0 "$name: run --tuned" -- $RKNN_BENCH --quiet run --tuned "$out" "$shapes" \
		$FAST --format json
	cp "$TMP/out" "$TMP/$name-run.json"
	results=$(json "$TMP/$name-run.json" results.#)
	pairs=$(json "$out" pairs.#)
	# Each result's pair is the one of its name and M (a name recurs at other batch
	# sizes): one jsoncheck run per file gives every value, a line each.
	i=0 paths=
	while [ "$i" -lt "$pairs" ]; do
		paths="$paths pairs.$i.name pairs.$i.src0.row pairs.$i.measured.median_us"
		i=$((i + 1))
	done
	"$JSONCHECK" "$out" $paths 2>/dev/null | paste - - - >"$TMP/$name-pairs"
	i=0 paths=
	while [ "$i" -lt "$results" ]; do
		paths="$paths results.$i.names.0 results.$i.shape.m results.$i.stats.median_us"
		paths="$paths results.$i.verify.status"
		i=$((i + 1))
	done
	"$JSONCHECK" "$TMP/$name-run.json" $paths 2>/dev/null | paste - - - - >"$TMP/$name-results"
	awk -F '\t' -v name="$name" 'FNR == NR { if (!(($1, $2) in want)) want[$1, $2] = $3; next }
		{ if ($4 != "verified") unverified++
		  if ($3 == want[$1, $2] && $3 != "") same++
		  else { differ++; printf "# %s: %s: run --tuned %s us, tuned %s us\n", name, $1, $3, want[$1, $2] } }
		END { printf "same=%d differ=%d unverified=%d\n", same, differ, unverified }' \
		"$TMP/$name-pairs" "$TMP/$name-results" >"$TMP/$name-compared"
	grep '^#' "$TMP/$name-compared"
	eval "$(tail -n 1 "$TMP/$name-compared")"
	[ "$results" -gt 0 ] && [ "$differ" -eq 0 ] &&
		ok "$name: run --tuned reproduces all $same modeled times" ||
		not_ok "$name: run --tuned reproduces every modeled time" "$differ of $results differ"
	[ "$unverified" -eq 0 ] && ok "$name: every shape verified" ||
		not_ok "$name: every shape verified" "$unverified not verified"
	expect_exit 0 "$name: every pair has an rknn_matmul_api section a backend can use" -- \
		"$CONSUMER" --api "$out"
	expect_exit 0 "$name: the patched backend's reader reads the contexts" -- \
		"$CONSUMER" --patched-reader "$out"
	expect_grep "^$pairs pairs, $pairs with contexts$" "$TMP/out" \
		"$name: the patched reader finds contexts for all $pairs pairs"
	[ "$name" = prefill ] && return
	for how in "" --api; do
		expect_exit 0 "$name: backend-demo $how runs every pair through the executor" -- \
			built "$DEMO" "$out" --device sim $how
		expect_grep "^$pairs verified, 0 failed$" "$TMP/out" \
			"$name: backend-demo $how verified all $pairs pairs"
		expect_grep "^modeled times as in the file: $pairs of $pairs$" "$TMP/out" \
			"$name: backend-demo $how reproduces every modeled time"
	done
	npu_time_line "$name" "$out"
}

# npu_time_line NAME TUNED: RKNN_BENCH_STATS=1 makes backend-demo print the process's NPU
# time at exit; its pairs run one after another, so the time is the sum of the file's
# modeled times, and every matmul came from the tuned file. Silent without the variable.
npu_time_line() {
	[ -s "$TMP/err" ] && not_ok "$1: no NPU time line without RKNN_BENCH_STATS" "$(head -3 "$TMP/err")" ||
		ok "$1: no NPU time line without RKNN_BENCH_STATS"
	RKNN_BENCH_STATS=1 built "$DEMO" "$2" --device sim >"$TMP/out" 2>"$TMP/stats"
	want=$(i=0; while [ "$i" -lt "$pairs" ]; do json "$2" pairs.$i.measured.median_us; i=$((i + 1)); done |
		awk '{ s += $1 } END { printf "%.3f", s }')
	got=$(sed -n "s/^rknn-bench: $pairs matmuls ($pairs tuned, 0 default), NPU time \([0-9.]*\) us (modeled)$/\1/p" "$TMP/stats")
	[ -n "$got" ] && awk -v g="$got" -v w="$want" -v n="$pairs" 'BEGIN { d = g - w; exit !(d < 0.002 * n + 0.01 && -d < 0.002 * n + 0.01) }' &&
		ok "$1: RKNN_BENCH_STATS=1: $pairs tuned matmuls, NPU time $got us = the file's sum" ||
		not_ok "$1: RKNN_BENCH_STATS=1: NPU time is the sum of the file's times" "want $want us" "$(cat "$TMP/stats")"
}

