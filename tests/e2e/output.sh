#!/bin/sh
# Output formats, progress, provenance and the honesty of tune's table:
#   --format md, -o - (stdout), -o's format from its extension, --export-*, --filter;
#   progress lines on a piped stderr (done/total, elapsed, ETA) and --quiet;
#   the tune table row against the tuned JSON; the CPU comparison of a modeled device;
#   the default space without multicore 0x5/0x6; commit, board, driver and the clock
#   warning in run and tune.
. tests/e2e/lib.sh
FIXTURE=tests/fixtures/sysfs-rock5b
TWO="--device sim --shape 4x64x64 --shape 1x64x128 --iters 2 --warmup 0"
json() { "$JSONCHECK" "$1" "$2" 2>&1; }
check_eq() { # DESCRIPTION GOT WANTED
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', wanted '$3'"; fi
}
lines() { grep -cE -- "$1" "$2"; }

# --- formats --------------------------------------------------------------------------
expect_exit 0 "run --format md" -- "$RKNN_BENCH" run $TWO --format md
expect_grep '^\| name +\| shape +\| dtype +\|' "$TMP/out" "md: title row"
expect_grep '^\| -+ \| -+ \| -+ \| -+ \| -+: \|' "$TMP/out" "md: rule row, numbers aligned right"
check_eq "md: one row per shape" "$(lines '^\| (4x64x64|1x64x128) ' "$TMP/out")" 2

had_dash=$([ -e ./- ] && echo yes)
expect_exit 0 "run -o - writes the JSON report to stdout" -- "$RKNN_BENCH" run $TWO -o -
if "$JSONCHECK" "$TMP/out" >/dev/null; then ok "-o -: stdout is one JSON document"; else
	not_ok "-o -: stdout is one JSON document" "$(head -c 300 "$TMP/out")"; fi
[ -n "$had_dash" ] || [ ! -e ./- ] && ok "-o -: no file named '-'" || not_ok "-o -: no file named '-'"

expect_exit 0 "-o x.csv" -- "$RKNN_BENCH" run $TWO -o "$TMP/x.csv"
check_eq "-o x.csv: a CSV file" "$(head -c 14 "$TMP/x.csv")" "names,m,k,n,dt"
expect_grep '^name +shape ' "$TMP/out" "-o x.csv: stdout keeps the table"
expect_exit 0 "-o x.md" -- "$RKNN_BENCH" run $TWO -o "$TMP/x.md"
expect_grep '^\| 4x64x64 ' "$TMP/x.md" "-o x.md: a Markdown table"
expect_exit 0 "-o y.csv --format json" -- "$RKNN_BENCH" run $TWO -o "$TMP/y.csv" --format json
if "$JSONCHECK" "$TMP/y.csv" >/dev/null; then ok "--format wins over the extension"; else
	not_ok "--format wins over the extension"; fi
expect_exit 0 "-o report (no extension)" -- "$RKNN_BENCH" run $TWO -o "$TMP/report"
check_eq "-o without an extension: JSON" "$(json "$TMP/report" schema)" "rknn-bench/1"

expect_exit 0 "--export-json, --export-csv and --export-md together" -- "$RKNN_BENCH" run $TWO \
	--export-json "$TMP/e.json" --export-csv "$TMP/e.csv" --export-md "$TMP/e.md"
check_eq "--export-json" "$(json "$TMP/e.json" results.#)" 2
check_eq "--export-csv: header and two rows" "$(wc -l <"$TMP/e.csv" | tr -d ' ')" 3
expect_grep '^\| 1x64x128 ' "$TMP/e.md" "--export-md"
expect_grep '^name +shape ' "$TMP/out" "--export-*: stdout keeps the table"
expect_exit 0 "--export-csv -" -- "$RKNN_BENCH" run $TWO --export-csv -
check_eq "--export-csv -: stdout is the CSV" "$(head -c 14 "$TMP/out")" "names,m,k,n,dt"
expect_exit 2 "two outputs on stdout" -- "$RKNN_BENCH" run $TWO -o - --export-md -
expect_grep 'both write to standard output' "$TMP/err" "two outputs on stdout: said"
expect_exit 2 "--export-csv - with --format json" -- "$RKNN_BENCH" run $TWO --export-csv - \
	--format json
expect_exit 2 "two outputs on one file" -- "$RKNN_BENCH" run $TWO -o "$TMP/same.json" \
	--export-json "$TMP/same.json"
expect_grep "^rknn-bench: --export-json and -o both write to '.*same.json'" "$TMP/err" \
	"two outputs on one file: named"
expect_exit 2 "--export-csv into a missing directory" -- "$RKNN_BENCH" run $TWO \
	--export-csv "$TMP/nodir/x.csv"
[ ! -e "$TMP/e2.json" ] && ok "nothing written before the check" || not_ok "nothing written"

# --- --filter -------------------------------------------------------------------------
expect_exit 0 "--filter on pair names" -- "$RKNN_BENCH" run configs/mat_kernel_size.json \
	--device sim --iters 1 --warmup 0 --verify none --filter '^ffn_up-(1|2)$' --format json
check_eq "--filter: one shape" "$(json "$TMP/out" results.#)" 1
check_eq "--filter: the matching names only" "$(json "$TMP/out" results.0.names.#)" 2
check_eq "--filter: ffn_up-1" "$(json "$TMP/out" results.0.names.0)" ffn_up-1
expect_exit 2 "--filter: a bad expression" -- "$RKNN_BENCH" run $TWO --filter 'ffn_(up'
expect_grep "^rknn-bench: --filter 'ffn_\(up' is not a valid regular expression" "$TMP/err" \
	"--filter: the message names the expression"
expect_exit 2 "--filter matching nothing" -- "$RKNN_BENCH" run $TWO --filter '^nothing$'
expect_grep "matches no pair name" "$TMP/err" "--filter matching nothing: said"

# --- progress -------------------------------------------------------------------------
expect_exit 0 "run with stderr to a file" -- "$RKNN_BENCH" run $TWO
expect_grep '^rknn-bench: \[1/2\] 4x64x64 \(4x64x64 fp16\) on sim: [0-9.]+ µs \(modeled\), verified \| 1/2 done, [0-9]+ s elapsed, ETA [0-9]+ s$' \
	"$TMP/err" "progress: shape 1 of 2 with done/total, elapsed and ETA"
expect_grep '^rknn-bench: \[2/2\] 1x64x128 .*\| 2/2 done, [0-9]+ s elapsed, ETA 0 s$' "$TMP/err" \
	"progress: shape 2 of 2"
if grep -q "$(printf '\r')" "$TMP/err"; then not_ok "no carriage return in a log"; else
	ok "no carriage return in a log"; fi
expect_exit 0 "run --quiet" -- "$RKNN_BENCH" run $TWO --quiet
check_eq "--quiet: nothing on stderr" "$(wc -c <"$TMP/err" | tr -d ' ')" 0
expect_exit 0 "rknn-bench --quiet run" -- "$RKNN_BENCH" --quiet run $TWO
check_eq "global --quiet: nothing on stderr" "$(wc -c <"$TMP/err" | tr -d ' ')" 0

# --- tune: progress, the table against the JSON, the CPU, the space -------------------
T="$TMP/t.json"
expect_exit 0 "tune two shapes" -- "$RKNN_BENCH" tune --device sim --shape 4x256x256 \
	--shape 1x128x512 -o "$T"
cp "$TMP/out" "$TMP/tune.out"
expect_grep '^rknn-bench: \[1/2\] 4x256x256 \(4x256x256\): [0-9.]+ µs \(modeled\), .* \| 1/2 done, [0-9]+ s elapsed, ETA [0-9]+ s$' \
	"$TMP/err" "tune progress: a line per shape with done/total, elapsed, ETA"
expect_grep '^rknn-bench: \[2/2\] 1x128x512 .*\| 2/2 done' "$TMP/err" "tune progress: the last shape"
for i in 0 1; do
	name=$(json "$T" pairs.$i.name)
	row=$(grep "^$name " "$TMP/tune.out")
	config=$(json "$T" pairs.$i.tuned.config)
	launch=$(json "$T" pairs.$i.tuned.launch)
	us=$(printf '%.1f' "$(json "$T" pairs.$i.measured.median_us)")
	case $row in
	*" $launch "*" $us "*" $config") ok "tune table row of $name is the tuned JSON's" ;;
	*) not_ok "tune table row of $name is the tuned JSON's" "row: $row" \
		"json: $launch $us $config" ;;
	esac
done
case $(json "$T" pairs.0.tuned.config) in
*banks=0:0* | *kslice=0\ * | *out=auto*) not_ok "the tuned config is explicit" ;;
*) ok "the tuned config is explicit (no banks=0:0, kslice=0, out=auto)" ;;
esac
json "$T" pairs.0.measured >"$TMP/measured"
if grep -q speedup_vs_cpu "$TMP/measured"; then
	not_ok "modeled: no speedup_vs_cpu in the headline" "$(cat "$TMP/measured")"
else ok "modeled: no speedup_vs_cpu in the headline"; fi
check_eq "modeled: the CPU comparison names its host" \
	"$(json "$T" pairs.0.measured.cpu_reference.host)" "$(json "$T" context.host)"
json "$T" pairs.0.measured.cpu_reference.note >"$TMP/note"
expect_grep 'not a board number' "$TMP/note" "modeled: the CPU comparison says it is no board number"

expect_exit 0 "tune --format md" -- "$RKNN_BENCH" tune --device sim --shape 4x256x256 \
	-o "$T" --format md --quiet
expect_grep '^\| 4x256x256 +\| 4x256x256 +\| ' "$TMP/out" "tune --format md: a Markdown row"
check_eq "tune --quiet: nothing on stderr" "$(wc -c <"$TMP/err" | tr -d ' ')" 0
expect_exit 0 "tune -o -" -- "$RKNN_BENCH" tune --device sim --shape 4x256x256 -o - \
	--cache "$TMP/stdout.cache.jsonl" --quiet
check_eq "tune -o -: the tuned JSON on stdout" "$(json "$TMP/out" schema)" rknn-bench-tuned/1
expect_grep '^4x256x256 +4x256x256 ' "$TMP/err" "tune -o -: the summary on stderr"
expect_exit 2 "tune -o - without --cache" -- "$RKNN_BENCH" tune --device sim --shape 4x256x256 -o -
expect_grep 'give --cache FILE' "$TMP/err" "tune -o - without --cache: says what to give"
expect_exit 2 "tune --format csv" -- "$RKNN_BENCH" tune --device sim --shape 4x256x256 \
	-o "$T" --format csv

expect_exit 0 "the default space" -- "$RKNN_BENCH" tune --list-space --shape 1x2048x8192
check_eq "no multicore config with mask 0x5 or 0x6" \
	"$(lines '^  multicore .*mask=0x[56] ' "$TMP/out")" 0
expect_grep '^  fences +mask=0x5 ' "$TMP/out" "mask 0x5 stays with fences"
echo '{"mode": "extend", "mask": ["0x5", "0x6"]}' >"$TMP/space.json"
expect_exit 0 "a space naming 0x5 and 0x6" -- "$RKNN_BENCH" tune --list-space \
	--space "$TMP/space.json" --shape 1x2048x8192
expect_grep '^  multicore +mask=0x5 ' "$TMP/out" "--space can still ask for them"

# --- provenance and warnings ----------------------------------------------------------
expect_exit 0 "--version" -- "$RKNN_BENCH" --version
expect_grep '^rknn-bench [0-9.]+ \(commit [0-9a-z.-]+\)$' "$TMP/out" "--version names the commit"
commit=$(sed -n 's/.*(commit \(.*\))$/\1/p' "$TMP/out")
expect_exit 0 "run on a board's sysfs" -- env RKNN_BENCH_SYSFS=$FIXTURE "$RKNN_BENCH" run $TWO \
	--format json
cp "$TMP/out" "$TMP/run.json"
check_eq "run: context.tool_commit" "$(json "$TMP/run.json" context.tool_commit)" "$commit"
check_eq "run: context.board (device tree)" "$(json "$TMP/run.json" context.board)" "Radxa ROCK 5B"
check_eq "run: context.driver" "$(json "$TMP/run.json" context.driver)" "rknpu 0.9.8 (emulated)"
check_eq "run: one warning line for the clocks" "$(lines 'warning: clocks are not pinned' "$TMP/err")" 1
expect_grep "clocks are not pinned.*DDR governor is 'dmc_ondemand'.*DDR runs at 528000000 Hz" \
	"$TMP/err" "the warning sums up info's checks"
expect_exit 0 "run --quiet on a board's sysfs" -- env RKNN_BENCH_SYSFS=$FIXTURE "$RKNN_BENCH" \
	run $TWO --quiet
check_eq "--quiet: no clock warning" "$(wc -c <"$TMP/err" | tr -d ' ')" 0
expect_exit 0 "run where nothing can be checked" -- env RKNN_BENCH_SYSFS="$TMP/nothing" \
	"$RKNN_BENCH" run $TWO
check_eq "no settings to check: no warning" "$(lines 'warning' "$TMP/err")" 0
check_eq "no device tree: board null" "$(env RKNN_BENCH_SYSFS="$TMP/nothing" "$RKNN_BENCH" \
	run $TWO --format json 2>/dev/null | "$JSONCHECK" - context.board)" null
expect_exit 0 "tune on a board's sysfs" -- env RKNN_BENCH_SYSFS=$FIXTURE "$RKNN_BENCH" tune \
	--device sim --shape 4x256x256 -o "$T"
check_eq "tune: one warning line for the clocks" "$(lines 'warning: clocks are not pinned' "$TMP/err")" 1
check_eq "tuned JSON: context.tool_commit" "$(json "$T" context.tool_commit)" "$commit"
check_eq "tuned JSON: context.board" "$(json "$T" context.board)" "Radxa ROCK 5B"
check_eq "tuned JSON: host settings" "$(json "$T" context.host_settings.ddr.governor)" dmc_ondemand
check_eq "tuned JSON: the kernel" "$(json "$T" context.kernel)" "$(json "$TMP/run.json" context.kernel)"

echo "1..$n"
