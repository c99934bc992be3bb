#!/bin/sh
# Every command that writes, as data: (1) the output guard: an output onto one of the
# command's inputs, or two outputs on one file, is refused before any work with exit 2, a
# message naming both, and the input untouched; (2) the full disk: stdout on /dev/full
# and, where the command writes a file, -o /dev/full: exit 2 and the reason, never 0 or 3.
# The tables are the tests: a command that writes goes in both.
# shellcheck source=tests/e2e/lib.sh
. tests/e2e/lib.sh
MKGGUF=${MKGGUF:-${BUILD:-build}/tests/mkgguf}
T=$TMP
B=$RKNN_BENCH
SIM="--device sim --iters 1 --warmup 0"
RKNN_BENCH_STATE=$T/state # where selftest keeps its last report
export RKNN_BENCH_STATE

# --- fixtures -------------------------------------------------------------------------
echo '{"pairs": [{"name": "a", "src0": {"row": 4, "col": 64}, "src1": {"row": 64, "col": 64}}]}' \
	>"$T/s.json"
cp configs/soc/rk3588.json "$T/soc.json"
echo '{"mode": "extend"}' >"$T/space.json"
built "$MKGGUF" "$T/m.gguf" llama 64 128 1 2 2 64 tokens >/dev/null 2>&1 ||
	not_ok "mkgguf writes a GGUF"
# shellcheck disable=SC2086
$B run $SIM --no-verify --core-mask 0x1 --shape 1x64x64 --shape 1x1024x4096 \
	--shape 256x512x1024 --shape 64x512x4096 --shape 1x64x8192 --shape 1x64x192 \
	--shape 512x1024x16 --shape 512x64x16 --shape 8x256x256 --shape 16x128x512 \
	-o "$T/r.json" >/dev/null 2>&1 || not_ok "a run report for the fixtures"
# shellcheck disable=SC2086
$B tune --device sim --shape 4x64x64 --top 1 --quiet --shard 1/1 -o "$T/sh.json" >/dev/null 2>&1 ||
	not_ok "a tune shard for the fixtures"
$B tune --device sim --shape 4x64x64 --top 1 --quiet -o "$T/tuned.json" >/dev/null 2>&1 ||
	not_ok "a tuned JSON for the fixtures"
ln -s s.json "$T/link.json"
cp "$T/space.json" "$T/d.json.cache.jsonl" # a space file where tune's default cache goes

sum() { cksum <"$1" 2>/dev/null; }

# --- the output guard -----------------------------------------------------------------
# NAME; FILE THAT MUST STAY; WORDS THE MESSAGE NAMES (a regex); COMMAND LINE ($T, $SIM)
while IFS=';' read -r name keep words cmd; do
	[ -n "$name" ] || continue
	before=$(sum "$T/$keep")
	# shellcheck disable=SC2086
	expect_exit 2 "guard: $name" -- $(eval echo "$cmd")
	expect_grep "$words" "$T/err" "guard: $name: the message names both"
	if [ "$(sum "$T/$keep")" = "$before" ]; then ok "guard: $name: $keep untouched"; else
		not_ok "guard: $name: $keep untouched"; fi
done <<'CASES'
run -o onto its shapes file;s.json;-o .*also an input.*SHAPES.json;$B run $SIM $T/s.json -o $T/s.json
run -o through a link onto its shapes file;s.json;-o .*also an input.*SHAPES.json;$B run $SIM $T/s.json -o $T/link.json
run --export-csv onto --soc;soc.json;--export-csv .*also an input.*--soc;$B run $SIM --shape 4x64x64 --soc $T/soc.json --export-csv $T/soc.json
run -o onto --tuned;tuned.json;-o .*also an input.*--tuned;$B run $SIM --tuned $T/tuned.json -o $T/tuned.json
run -o and --export-json on one new file;s.json;--export-json and -o both write to;$B run $SIM --shape 4x64x64 -o $T/new.json --export-json $T/./new.json
tune -o onto its shapes file;s.json;-o .*also an input.*SHAPES.json;$B tune --device sim $T/s.json -o $T/s.json
tune --cache onto --space;space.json;--cache .*also an input.*--space;$B tune --device sim --shape 4x64x64 --space $T/space.json --cache $T/space.json -o $T/t2.json
tune's default cache onto --space;d.json.cache.jsonl;--cache .*also an input.*--space;$B tune --device sim --shape 4x64x64 --space $T/d.json.cache.jsonl -o $T/d.json
tune -o and --cache on one file;s.json;--cache and -o both write to;$B tune --device sim --shape 4x64x64 -o $T/t3.json --cache $T/t3.json
tune -o onto --soc;soc.json;-o .*also an input.*--soc;$B tune --device sim --shape 4x64x64 --soc $T/soc.json -o $T/soc.json
merge OUT onto a shard;sh.json;OUT.json .*also an input.*SHARD.json;$B merge $T/sh.json $T/sh.json
merge --cache onto OUT;sh.json;(--cache and OUT.json|OUT.json and --cache) both write to;$B merge $T/m.json $T/sh.json --cache $T/m.json
merge --cache onto a shard's cache;sh.json.cache.jsonl;--cache .*also an input.*a shard's cache;$B merge $T/m2.json $T/sh.json --cache $T/sh.json.cache.jsonl
calibrate -o onto --soc;soc.json;-o .*also an input.*--soc;$B calibrate $T/r.json --soc $T/soc.json -o $T/soc.json
calibrate -o onto a report;r.json;-o .*also an input.*REPORT.json;$B calibrate $T/r.json -o $T/r.json
shapes -o onto --gguf;m.gguf;-o .*also an input.*--gguf;$B shapes --gguf $T/m.gguf -o $T/m.gguf
compare -o onto NEW;r.json;-o .*also an input.*(BASE|NEW).json;$B compare $T/r.json $T/r.json -o $T/r.json
report -o onto its input;tuned.json;-o .*also an input.*FILE;$B report $T/tuned.json -o $T/tuned.json
selftest -o onto --soc;soc.json;-o .*also an input.*--soc;$B selftest --device sim --soak 0 --soc $T/soc.json -o $T/soc.json
bugreport -o onto --report;r.json;-o .*also an input.*--report;$B bugreport -d sim --report $T/r.json -o $T/r.json
CASES

# --- the full disk --------------------------------------------------------------------
# NAME | COMMAND LINE: stdout goes to /dev/full; a "-o /dev/full" in it is the file.
while IFS='|' read -r name cmd; do
	[ -n "$name" ] || continue
	# shellcheck disable=SC2046
	$(eval echo "$cmd") >/dev/full 2>"$T/err"
	rc=$?
	if [ "$rc" -eq 2 ]; then ok "full disk: $name: exit 2"; else
		not_ok "full disk: $name: exit 2" "exit $rc" "$(head -c 400 "$T/err")"; fi
	expect_grep "No space left on device" "$T/err" "full disk: $name: the reason is named"
done <<'CASES'
--help|$B --help
--version|$B --version
--list-options|$B --list-options
run --help|$B run --help
run|$B run $SIM --shape 4x64x64
run --format json|$B run $SIM --shape 4x64x64 --format json
run -o /dev/full|$B run $SIM --shape 4x64x64 -o /dev/full
run --export-md /dev/full|$B run $SIM --shape 4x64x64 --export-md /dev/full
tune's summary|$B tune --device sim --shape 4x64x64 --top 1 -o $T/full-t.json
tune -o /dev/full|$B tune --device sim --shape 4x64x64 --top 1 -o /dev/full --cache $T/full.cache
tune --list-space|$B tune --list-space --shape 4x64x64
plan|$B plan --shape 64x64x64
plan --format json|$B plan --shape 64x64x64 --format json
regcmd|$B regcmd --shape 4x64x16 --a-addr 0 --b-addr 0x1000 --c-addr 0x2000
dump|$B dump tests/golden/fp16_4x64x16.hex
info|$B info --device sim
info --format json|$B info --device sim --format json
compare|$B compare $T/r.json $T/r.json
compare --format json|$B compare $T/r.json $T/r.json --format json
compare -o /dev/full|$B compare $T/r.json $T/r.json -o /dev/full
shapes|$B shapes --gguf $T/m.gguf
shapes -o /dev/full|$B shapes --gguf $T/m.gguf -o /dev/full
calibrate's fit|$B calibrate $T/r.json -o $T/full-fit.json
calibrate -o /dev/full|$B calibrate $T/r.json -o /dev/full
report|$B report $T/tuned.json
report -o /dev/full|$B report $T/tuned.json -o /dev/full
merge /dev/full|$B merge /dev/full $T/sh.json
selftest|$B --quiet selftest --device sim --soak 0
selftest -o /dev/full|$B --quiet selftest --device sim --soak 0 -o /dev/full
bugreport -o /dev/full|$B bugreport -d sim --report $T/r.json -o /dev/full
CASES
