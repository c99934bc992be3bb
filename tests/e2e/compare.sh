# End-to-end tests of `rknn-bench compare`: the regression gate between two reports.
. tests/e2e/lib.sh
SHAPES="--shape 1x256x512 --shape 4x64x64"

# scale FACTOR FILE: the report with every median and raw sample multiplied by FACTOR
# (run writes each of "median_us" and "samples_us" on one line).
scale() {
	awk -v f="$1" '
	/"(median_us|samples_us)":/ {
		line = $0; out = ""
		sub(/^[^:]*:/, "", line); out = substr($0, 1, length($0) - length(line))
		while (match(line, /-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?/)) {
			out = out substr(line, 1, RSTART - 1) sprintf("%.17g", substr(line, RSTART, RLENGTH) * f)
			line = substr(line, RSTART + RLENGTH)
		}
		$0 = out line
	}
	{ print }' "$2"
}

# The emulator is deterministic: two runs are identical.
expect_exit 0 "sim run 1" -- $RKNN_BENCH run --device sim $SHAPES -o "$TMP/base.json"
expect_exit 0 "sim run 2" -- $RKNN_BENCH run --device sim $SHAPES -o "$TMP/again.json"
expect_exit 0 "two sim runs: no regression" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/again.json"
expect_grep '^1x256x512 .* identical +exact \(modeled\)$' "$TMP/out" "sim rows are identical"
expect_grep '^geomean: \+0\.00% over 2 matched rows' "$TMP/out" "ends with a geomean line"
last=$(tail -n 1 "$TMP/out")
case $last in geomean:*) ok "geomean is the last line" ;; *) not_ok "geomean is the last line" "$last" ;; esac

# +10 % on every median and sample: each row is a regression, exit 1.
scale 1.10 "$TMP/base.json" >"$TMP/slow10.json"
expect_exit 0 "scaled report is valid JSON" -- "$JSONCHECK" "$TMP/slow10.json" results.0.stats.median_us
expect_exit 1 "10 % slower: exit 1" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/slow10.json"
expect_grep '^1x256x512 .*\+10\.00% +regression' "$TMP/out" "regression names the row"
expect_grep '^geomean: \+10\.00%.*2 regressions' "$TMP/out" "geomean +10 %"

# +1 %: within the 5 % threshold.
scale 1.01 "$TMP/base.json" >"$TMP/slow1.json"
expect_exit 0 "1 % slower: exit 0" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/slow1.json"
expect_grep '^1x256x512 .*\+1\.00% +same' "$TMP/out" "1 % is the same"
expect_exit 1 "1 % slower with --threshold 0.5: exit 1" -- \
	$RKNN_BENCH compare --threshold 0.5 "$TMP/base.json" "$TMP/slow1.json"

# 10 % faster is an improvement, not a failure.
scale 0.90 "$TMP/base.json" >"$TMP/fast.json"
expect_exit 0 "10 % faster: exit 0" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/fast.json"
expect_grep 'improvement' "$TMP/out" "improvement shown"

# JSON output carries rows and the summary.
expect_exit 1 "--format json" -- $RKNN_BENCH compare --format json "$TMP/base.json" "$TMP/slow10.json"
cp "$TMP/out" "$TMP/cmp.json"
check_field() { # path expected
	got=$("$JSONCHECK" "$TMP/cmp.json" "$1" 2>&1)
	[ "$got" = "$2" ] && ok "json $1 = $2" || not_ok "json $1 = $2" "got '$got'"
}
check_field schema rknn-bench-compare/1
check_field rows.0.verdict regression
check_field rows.0.test exact
check_field rows.0.p null
check_field summary.regressions 2
check_field summary.matched 2

# Unpaired rows are listed, not an error.
expect_exit 0 "sim other shapes" -- $RKNN_BENCH run --device sim --shape 1x256x512 --shape 8x32x32 -o "$TMP/other.json"
expect_exit 0 "unpaired rows: exit 0" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/other.json"
expect_grep '^4x64x64 .* only in base' "$TMP/out" "only in base"
expect_grep '^8x32x32 .* only in new' "$TMP/out" "only in new"

# A failed verification in NEW is a regression.
expect_exit 1 "sim with a corrupted C" -- \
	env RKNN_BENCH_DEBUG=corrupt_c $RKNN_BENCH run --device sim $SHAPES -o "$TMP/wrong.json"
expect_exit 1 "verification failed: exit 1" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/wrong.json"
expect_grep 'regression +verification failed in new' "$TMP/out" "verification failure named"

# Measured samples (a hand-written report): the U test decides with >= 9 samples.
cat >"$TMP/cpu.json" <<'EOF'
{"schema": "rknn-bench/1", "results": [{
	"shape": {"m": 1, "k": 2048, "n": 8192, "dtype": "fp16"}, "names": ["ffn_up-0"],
	"device": "cpu", "modeled": false,
	"stats": {"median_us": 1000,
		"samples_us": [990, 1010, 1005, 995, 1000, 1020, 980, 1001, 999, 1003]},
	"verify": {"status": "verified"}}]}
EOF
scale 1.10 "$TMP/cpu.json" >"$TMP/cpu10.json"
scale 1.01 "$TMP/cpu.json" >"$TMP/cpu1.json"
expect_exit 0 "measured, same file: exit 0" -- $RKNN_BENCH compare "$TMP/cpu.json" "$TMP/cpu.json"
expect_grep 'identical +U=50 p=1$' "$TMP/out" "same samples: U test p = 1"
expect_exit 1 "measured 10 % slower: exit 1" -- $RKNN_BENCH compare "$TMP/cpu.json" "$TMP/cpu10.json"
expect_grep '^ffn_up-0 .* regression +U=100 p=1\.1e-05$' "$TMP/out" "significant regression"
expect_exit 0 "measured 1 % slower: exit 0" -- $RKNN_BENCH compare "$TMP/cpu.json" "$TMP/cpu1.json"
expect_grep '^ffn_up-0 .* same ' "$TMP/out" "1 % is the same"
sed 's/990, 1010, 1005, //' "$TMP/cpu.json" >"$TMP/few1.json"
scale 1.10 "$TMP/few1.json" >"$TMP/few.json"
expect_exit 1 "7 samples: threshold only" -- $RKNN_BENCH compare "$TMP/cpu.json" "$TMP/few.json"
expect_grep 'no significance test \(fewer than 9 samples\)' "$TMP/out" "says no significance test"

# Input errors: exit 2 with the file named.
sed 's|"rknn-bench/1"|"rknn-bench/2"|' "$TMP/base.json" >"$TMP/v2.json"
expect_exit 2 "schema mismatch: exit 2" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/v2.json"
expect_grep 'v2.json: schema is "rknn-bench/2" but compare reads "rknn-bench/1"' "$TMP/err" "schema message"
expect_exit 2 "shapes file is not a report" -- $RKNN_BENCH compare configs/mat_kernel_size.json "$TMP/base.json"
expect_grep 'mat_kernel_size.json: no "schema" field' "$TMP/err" "no schema message"
expect_exit 2 "missing file: exit 2" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/nope.json"
expect_grep "nope.json" "$TMP/err" "missing file named"
head -c 300 "$TMP/base.json" >"$TMP/cut.json"
expect_exit 2 "truncated file: exit 2" -- $RKNN_BENCH compare "$TMP/cut.json" "$TMP/base.json"
expect_grep 'cut.json: invalid JSON at line [0-9]+, column [0-9]+: (unexpected end of file|string not closed before the end of the file)' "$TMP/err" "truncation position"

# Different devices (sim against cpu) are refused unless allowed.
expect_exit 0 "cpu run" -- $RKNN_BENCH run --device cpu $SHAPES -o "$TMP/cpu-run.json"
expect_exit 2 "device mismatch: exit 2" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/cpu-run.json"
expect_grep "ran on 'sim' \(modeled\) in '.*base.json' but on 'cpu' \(measured\)" "$TMP/err" "mismatch message"
$RKNN_BENCH compare --allow-device-mismatch "$TMP/base.json" "$TMP/cpu-run.json" >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -le 1 ] && ok "--allow-device-mismatch compares" || not_ok "--allow-device-mismatch compares" "exit $rc" "$(cat "$TMP/err")"
expect_grep 'sim \(modeled\) -> cpu' "$TMP/out" "both devices shown"

# Usage.
expect_exit 2 "one file: exit 2" -- $RKNN_BENCH compare "$TMP/base.json"
expect_exit 2 "--format csv refused" -- $RKNN_BENCH compare --format csv "$TMP/base.json" "$TMP/base.json"
expect_exit 2 "--alpha 2 refused" -- $RKNN_BENCH compare --alpha 2 "$TMP/base.json" "$TMP/base.json"
expect_exit 0 "compare --help" -- $RKNN_BENCH compare --help
expect_grep 'Mann-Whitney' "$TMP/out" "help explains the test"

# A gate that compares nothing passes nothing: no row of NEW matches one of BASE.
expect_exit 0 "a run of other shapes" -- $RKNN_BENCH run --device sim --shape 2x64x64 --iters 1 --warmup 0 -o "$TMP/other.json"
expect_exit 2 "nothing matched: exit 2" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/other.json"
expect_grep 'nothing compared: no result of .*other.json has the shape and name of one of .*base.json' \
	"$TMP/err" "the message says nothing was compared"
expect_exit 0 "the same run of int8 shapes" -- $RKNN_BENCH run --device sim $SHAPES --dtype int8 --iters 1 --warmup 0 -o "$TMP/int8.json"
expect_exit 2 "another dtype matches nothing: exit 2" -- $RKNN_BENCH compare "$TMP/base.json" "$TMP/int8.json"
