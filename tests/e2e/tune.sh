# End-to-end tests of `rknn-bench tune` on the emulator: the tuned JSON, its readers,
# run --tuned, the cache (resume after SIGKILL and SIGINT, header mismatch), strategies.
. tests/e2e/lib.sh
SEED=configs/mat_kernel_size.json
# Small spaces and short measurements keep this fast; the full default space on the
# seed shapes is the documented manual run (README, tune section).
FAST="--device sim --iters 1 --warmup 0 --verify sample --quiet"
cat >"$TMP/tiny.json" <<'EOF'
{"mask": ["0x1", "0x7"], "split": ["n"], "weights": ["even"], "align": [16],
 "banks": ["auto"], "kslice": ["auto"], "launch": ["fences"]}
EOF

json() { "$JSONCHECK" "$1" "$2" 2>&1; }

# --- the seed shapes: tune, readers, run --tuned ---------------------------------
expect_exit 0 "tune the seed shapes" -- \
	$RKNN_BENCH tune $SEED $FAST --space "$TMP/tiny.json" --top 1 -o "$TMP/tuned.json"
expect_grep '^result_output +1x2048x128256' "$TMP/out" "summary row per unique shape"
expect_exit 0 "tuned.json is JSON" -- "$JSONCHECK" "$TMP/tuned.json"
[ "$(json "$TMP/tuned.json" schema)" = rknn-bench-tuned/1 ] && ok "schema rknn-bench-tuned/1" ||
	not_ok "schema rknn-bench-tuned/1" "$(json "$TMP/tuned.json" schema)"
[ "$(json "$TMP/tuned.json" pairs.#)" = 35 ] && ok "every pair of the input kept" ||
	not_ok "every pair of the input kept" "$(json "$TMP/tuned.json" pairs.#)"
multi=0
for i in 0 17 34; do
	mask=$(json "$TMP/tuned.json" pairs.$i.tuned.core_mask)
	case $mask in 3|5|6|7) multi=$((multi + 1)) ;; esac
done
[ $multi -eq 3 ] && ok "M = 1 shapes get a multi-core config" || not_ok "M = 1 shapes get a multi-core config"
[ "$(json "$TMP/tuned.json" pairs.34.measured.modeled)" = true ] && ok "times labelled modeled" ||
	not_ok "times labelled modeled"
[ "$(json "$TMP/tuned.json" pairs.5.tuned.config)" = "$(json "$TMP/tuned.json" pairs.0.tuned.config)" ] &&
	ok "identical shapes share one tuned config" || not_ok "identical shapes share one tuned config"

# The seed backend's reader sees exactly the input's pairs; our shapes loader too.
"$CONSUMER" --seed-reader $SEED >"$TMP/seed-in.txt" 2>&1
"$CONSUMER" --seed-reader "$TMP/tuned.json" >"$TMP/seed-out.txt" 2>&1
cmp -s "$TMP/seed-in.txt" "$TMP/seed-out.txt" && [ -s "$TMP/seed-in.txt" ] &&
	ok "seed reader: same pairs, names and order" ||
	not_ok "seed reader: same pairs, names and order" "$(diff "$TMP/seed-in.txt" "$TMP/seed-out.txt" | head -5)"
expect_exit 0 "shapes loader reads the tuned file" -- $RKNN_BENCH plan "$TMP/tuned.json" --tasks 1
expect_exit 0 "consumer looks up the seed shapes" -- "$CONSUMER" "$TMP/tuned.json"
expect_grep '^ffn_up-0 1x2048x8192: match=name .*verify=verified' "$TMP/out" "lookup by name"
expect_grep '^no-such-name 1x2048x8192: match=shape' "$TMP/out" "lookup falls back to the shape"
expect_grep '^\(no name\) 4x2048x8192: match=bucket' "$TMP/out" "lookup falls back to the nearest M"
expect_grep '^\(no name\) 1x4096x4096: match=none' "$TMP/out" "no match: the default"

# run --tuned replays each tuned config: modeled times are equal.
expect_exit 0 "run --tuned" -- $RKNN_BENCH run --tuned "$TMP/tuned.json" $SEED --device sim \
	--iters 1 --warmup 0 --verify sample --format json
cp "$TMP/out" "$TMP/run.json"
same=0
for r in 0:0 1:17 2:34; do
	got=$(json "$TMP/run.json" results.${r%%:*}.stats.median_us)
	want=$(json "$TMP/tuned.json" pairs.${r##*:}.measured.median_us)
	[ "$got" = "$want" ] && same=$((same + 1)) || echo "# result ${r%%:*}: run $got, tuned $want"
done
[ $same -eq 3 ] && ok "run --tuned reproduces the tuned times" || not_ok "run --tuned reproduces the tuned times"

# --- the cache ---------------------------------------------------------------------
lines=$(wc -l <"$TMP/tuned.json.cache.jsonl")
expect_exit 0 "rerun resumes from the cache" -- \
	$RKNN_BENCH tune $SEED $FAST --space "$TMP/tiny.json" --top 1 -o "$TMP/tuned.json"
[ "$(wc -l <"$TMP/tuned.json.cache.jsonl")" -eq "$lines" ] && ok "rerun measures nothing again" ||
	not_ok "rerun measures nothing again" "$lines lines before, $(wc -l <"$TMP/tuned.json.cache.jsonl") after"
expect_exit 2 "a cache from other settings is refused" -- \
	$RKNN_BENCH tune $SEED $FAST --space "$TMP/tiny.json" --seed 7 -o "$TMP/tuned.json"
expect_grep "delete it or give another --cache" "$TMP/err" "mismatch says what to do"

# Killed (SIGKILL), then interrupted (SIGINT), then finished: nothing is run twice,
# the cache only grows, no tuned JSON appears before the end.
cat >"$TMP/eight.json" <<'EOF'
{"mask": ["0x1", "0x2", "0x3", "0x5", "0x6", "0x7"], "split": ["n"], "weights": ["even"],
 "align": [16], "banks": ["auto"], "kslice": ["auto"], "launch": ["fences", "threads"]}
EOF
SLOW="--shape 1x2048x8192 --device sim --strategy exhaustive --space $TMP/eight.json --iters 40 --warmup 0 --verify sample --quiet -o $TMP/k.json"
cache=$TMP/k.json.cache.jsonl
wait_lines() { # N: until the cache has N lines (10 s at most)
	i=0
	while [ "$(cat "$cache" 2>/dev/null | wc -l)" -lt "$1" ] && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
}
$RKNN_BENCH tune $SLOW >/dev/null 2>&1 &
pid=$!
wait_lines 3
kill -KILL $pid 2>/dev/null
wait $pid 2>/dev/null
l1=$(wc -l <"$cache")
cp "$cache" "$TMP/after-kill"
$RKNN_BENCH tune $SLOW >/dev/null 2>"$TMP/int.err" &
pid=$!
wait_lines $((l1 + 2))
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && ok "SIGINT: exit 130" || not_ok "SIGINT: exit 130" "exit $rc" "$(cat "$TMP/int.err")"
expect_grep "interrupted: .* kept in" "$TMP/int.err" "SIGINT says the results are kept"
[ ! -e "$TMP/k.json" ] && ok "no tuned JSON after an interrupted run" || not_ok "no tuned JSON after an interrupted run"
l2=$(wc -l <"$cache")
expect_exit 0 "rerun after kill and interrupt finishes" -- $RKNN_BENCH tune $SLOW --verbose
cached=$(grep -c '(cached)' "$TMP/err")
[ "$cached" -eq $((l2 - 1)) ] && ok "rerun reuses every kept result ($cached)" ||
	not_ok "rerun reuses every kept result" "$cached cached, $l2 lines"
head -c "$(wc -c <"$TMP/after-kill")" "$cache" | cmp -s - "$TMP/after-kill" &&
	ok "the cache is append-only" || not_ok "the cache is append-only"
dups=$(tail -n +2 "$cache" | sed 's/"status".*//' | sort | uniq -d | wc -l)
total=$(tail -n +2 "$cache" | wc -l)
[ "$dups" -eq 0 ] && [ "$total" -eq 16 ] &&
	ok "each config measured once (12, + the default: the model's choice, outside this space, + cpu; the rknn_matmul_api pass: 1 of its 16 modeled, the others pruned as they cannot win, its best run: on a modeled device no other can beat it)" ||
	not_ok "each config measured once" "$dups duplicates, $total records"
expect_exit 0 "tuned JSON after the resumed run" -- "$JSONCHECK" "$TMP/k.json" pairs.0.tuned.config
# The model phase runs on one timing-model engine per thread (--threads): the cache
# (results in the space's order) and the tuned JSON are the same on 1 and 2 threads.
for t in 1 2; do
	expect_exit 0 "tune with the model phase on $t thread(s)" -- $RKNN_BENCH tune --shape 64x512x1024 \
		--device sim --threads $t --quiet -o "$TMP/thr$t.json"
	grep -v '"kind":"cpu"' "$TMP/thr$t.json.cache.jsonl" | tail -n +2 >"$TMP/thr$t.records"
	"$JSONCHECK" "$TMP/thr$t.json" pairs.0.tuned >"$TMP/thr$t.tuned"
done
[ "$(wc -l <"$TMP/thr1.records")" -gt 40 ] && cmp -s "$TMP/thr1.records" "$TMP/thr2.records" &&
	ok "1 and 2 model threads: the same records in the same order" ||
	not_ok "1 and 2 model threads: the same records in the same order" "$(diff "$TMP/thr1.records" "$TMP/thr2.records" | head -4)"
cmp -s "$TMP/thr1.tuned" "$TMP/thr2.tuned" && ok "1 and 2 model threads: the same tuned config" ||
	not_ok "1 and 2 model threads: the same tuned config"
# On a modeled device a candidate's run takes its modeled time, so the candidates (in
# modeled order) stop once none can beat the best verified: every run took exactly its
# model's time, the tuned time is the fastest modeled one, and the rest are counted.
# (The backend's own split, a baseline run beside the candidates, is no candidate of
# the model's ranking: its split, "split=n:5,5,6 align=32" for N = 1024, is left out.)
backend_split=$(json "$TMP/thr1.json" pairs.0.rknn_matmul_api.backend_split.config | sed 's/.*\(split=[^ ]* align=[0-9]*\).*/\1/')
[ "$backend_split" = "split=n:5,5,6 align=32" ] && ok "the backend's split of N = 1024: 320, 320, 384 columns" ||
	not_ok "the backend's split of N = 1024: 320, 320, 384 columns" "$backend_split"
awk -F'"' -v skip="$backend_split" '{ key = $12 "|" $16; us = $0; sub(/.*"median_us":/, "", us); sub(/,.*/, "", us) }
	$4 == "model" && $0 ~ /"status":"ok"/ { model[key] = us; if (best == "" || us + 0 < best + 0) best = us }
	$4 == "run" && $0 ~ /"status":"ok"/ && index($12, skip) == 0 { runs++; if (!(key in model) || model[key] != us) bad++ }
	END { printf "%d %d %s\n", runs, bad, best }' "$TMP/thr1.records" >"$TMP/thr1.check"
read -r runs bad best <"$TMP/thr1.check"
[ "$runs" -ge 1 ] && [ "$bad" -eq 0 ] && ok "every run on sim took its modeled time ($runs runs)" ||
	not_ok "every run on sim took its modeled time" "$runs runs, $bad differ"
tuned_us=$(json "$TMP/thr1.json" pairs.0.measured.median_us)
awk -v a="$tuned_us" -v b="$best" 'BEGIN { exit !(a + 0 == b + 0) }' &&
	ok "the tuned time is the fastest modeled ($best us)" ||
	not_ok "the tuned time is the fastest modeled" "tuned $tuned_us, fastest modeled $best"
not_run=$(json "$TMP/thr1.json" pairs.0.measured.configs_not_run)
ran=$(json "$TMP/thr1.json" pairs.0.measured.configs_run)
[ "$not_run" -gt 0 ] && [ $((ran + not_run)) -ge 8 ] &&
	ok "candidates that cannot win are not run, and counted ($ran run, $not_run not)" ||
	not_ok "candidates that cannot win are not run, and counted" "$ran run, $not_run not run"
# SIGINT in the middle of a parallel model phase: exit 130, what was modeled is kept in
# order, and the rerun models only the rest. (The phase has 459 points with
# RKNN_BENCH_DEBUG=no_prune, which models even those that cannot win: a few records in,
# it is under way on any machine, sanitizers included.)
MODEL="--shape 1x2048x128256 --device sim --threads 2 --verify sample --quiet -o $TMP/mp.json"
RKNN_BENCH_DEBUG=no_prune $RKNN_BENCH tune $MODEL >/dev/null 2>"$TMP/mint.err" &
pid=$!
i=0
while [ "$(cat "$TMP/mp.json.cache.jsonl" 2>/dev/null | wc -l)" -lt 4 ] && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -INT $pid
wait $pid
rc=$?
[ $rc -eq 130 ] && ok "SIGINT in the model phase: exit 130" || not_ok "SIGINT in the model phase: exit 130" "exit $rc" "$(cat "$TMP/mint.err")"
l1=$(wc -l <"$TMP/mp.json.cache.jsonl")
expect_exit 0 "the model phase resumes" -- env RKNN_BENCH_DEBUG=no_prune $RKNN_BENCH tune $MODEL --verbose
cached=$(grep -c '(cached)' "$TMP/err")
[ "$l1" -ge 4 ] && [ "$cached" -eq $((l1 - 1)) ] && ok "the resumed model phase reuses every kept result ($cached)" ||
	not_ok "the resumed model phase reuses every kept result" "$cached cached, $l1 lines"

# A crash mid-write leaves a truncated last line: dropped on resume.
printf '{"kind":"run","shape":"1x2' >>"$cache"
expect_exit 0 "a truncated last line is dropped" -- $RKNN_BENCH tune $SLOW
[ "$(tail -c 1 "$cache" | od -An -c | tr -d ' ')" = '\n' ] && ok "cache ends with a whole line" ||
	not_ok "cache ends with a whole line"

# --- strategies ------------------------------------------------------------------
cat >"$TMP/cmp.json" <<'EOF'
{"mask": ["0x1", "0x3", "0x7"], "split": ["n"], "weights": ["even", "2,1,1", "2,1"], "align": [16],
 "banks": ["auto"], "kslice": ["auto", "2048"], "launch": ["fences", "threads"]}
EOF
CMP="--shape 1x8192x2048 --device sim --space $TMP/cmp.json --iters 1 --warmup 0 --verify sample --quiet"
expect_exit 0 "strategy model --top 8" -- $RKNN_BENCH tune $CMP --strategy model --top 8 -o "$TMP/m.json"
expect_exit 0 "strategy exhaustive" -- $RKNN_BENCH tune $CMP --strategy exhaustive -o "$TMP/e.json"
m=$(json "$TMP/m.json" pairs.0.measured.median_us)
e=$(json "$TMP/e.json" pairs.0.measured.median_us)
echo "# 1x8192x2048: model --top 8 finds $m us, exhaustive $e us ($(json "$TMP/e.json" pairs.0.measured.configs_run) configs run)"
awk -v m="$m" -v e="$e" 'BEGIN { exit !(m > 0 && e > 0 && m <= 1.03 * e) }' &&
	ok "model --top 8 within 3 % of exhaustive" || not_ok "model --top 8 within 3 % of exhaustive" "$m vs $e"
expect_exit 0 "strategy random" -- $RKNN_BENCH tune $CMP --strategy random --max-evals 5 --seed 3 -o "$TMP/r.json"
case $(json "$TMP/r.json" pairs.0.measured.configs_run) in
5|6) ok "random runs --max-evals configs (and the default)" ;;
*) not_ok "random runs --max-evals configs" "$(json "$TMP/r.json" pairs.0.measured.configs_run)" ;;
esac

# --- baselines: the backend's own split, the host part (issue 30 items 5, 6) ------------
# --target rknn-api on two seed shapes: the section states its gain over the backend's own
# split (three single-core contexts of N/32/3*32 columns, threads), here the split itself
# (the section is that split); the totals print the backend, the best rknn_matmul_api
# config and our best overall, and say why the API is slower.
expect_exit 0 "tune --target rknn-api" -- $RKNN_BENCH tune --shape 1x2048x8192 --shape 1x8192x2048 \
	--device sim --target rknn-api --iters 1 --warmup 0 --verify sample -o "$TMP/api2.json"
cp "$TMP/out" "$TMP/api2.out"
[ "$(json "$TMP/api2.json" pairs.0.rknn_matmul_api.backend_split.config | cut -d' ' -f1-3)" = "mask=0x7 split=n:85,85,86 align=32" ] &&
	[ "$(json "$TMP/api2.json" pairs.0.rknn_matmul_api.backend_split.launch)" = threads ] &&
	ok "the backend's split of 1x2048x8192: cores 0,1,2 with 2720, 2720, 2752 columns, threads" ||
	not_ok "the backend's split of 1x2048x8192" "$(json "$TMP/api2.json" pairs.0.rknn_matmul_api.backend_split.config)"
for i in 0 1; do
	b=$(json "$TMP/api2.json" pairs.$i.rknn_matmul_api.backend_split_us)
	a=$(json "$TMP/api2.json" pairs.$i.rknn_matmul_api.total_us)
	g=$(json "$TMP/api2.json" pairs.$i.rknn_matmul_api.gain_vs_backend)
	awk -v a="$a" -v b="$b" -v g="$g" 'BEGIN { exit !(a > 0 && b >= a && (g - b / a) ^ 2 < 1e-18) }' &&
		ok "pair $i: gain_vs_backend = backend_split_us / total_us ($b / $a)" ||
		not_ok "pair $i: gain_vs_backend = backend_split_us / total_us" "$b / $a = $g"
done
expect_grep '^  backend    decode \(M = 1\): [0-9.]+ µs per token' "$TMP/api2.out" "totals: the backend as it is"
expect_grep '^  rknn-api   decode \(M = 1\): ' "$TMP/api2.out" "totals: the best librknnrt can express"
expect_grep '^  rknn-bench decode \(M = 1\): ' "$TMP/api2.out" "totals: our best overall"
# The default config (fences) beats every config of the API space on the emulator: the
# API total is worse, and a line says why (the knobs librknnrt cannot set).
expect_grep '^    why: rknn_matmul_api is [0-9.]+ µs slower: rknn-bench.s configs differ in launch' \
	"$TMP/api2.out" "totals: why the API is slower, in one line"
# A pair the backend cannot create (N < 96): the baseline is null, with the reason.
expect_exit 0 "tune --target rknn-api, N = 64" -- $RKNN_BENCH tune --shape 1x64x64 --device sim \
	--target rknn-api --iters 1 --warmup 0 --verify sample -o "$TMP/api64.json"
[ "$(json "$TMP/api64.json" pairs.0.rknn_matmul_api.backend_split_us)" = null ] &&
	grep -q '"backend_split_note":.*N < 96' "$TMP/api64.json" &&
	ok "N < 96: no backend baseline, and why" || not_ok "N < 96: no backend baseline, and why"

# The host part is ranked: on 64x4096x4096 K-slices of 512 are the fastest on the NPU,
# but their 7 partial sums on the host cost more than they save; 1024 wins on device +
# host. The tuned JSON shows the parts apart.
cat >"$TMP/ks.json" <<'EOF'
{"mask": ["0x7"], "split": ["n"], "weights": ["even"], "align": [16], "banks": ["auto"],
 "kslice": ["auto", "512", "1024", "2048"], "launch": ["fences"]}
EOF
expect_exit 0 "tune K-slices with the host part" -- $RKNN_BENCH tune --shape 64x4096x4096 --device sim \
	--space "$TMP/ks.json" --strategy exhaustive --iters 1 --warmup 0 --verify sample --verbose -o "$TMP/ks-out.json"
fastest=$(awk '$1 == "run" && $6 == "us" && $7 == "verified" { print $5, $0 }' "$TMP/err" | sort -n | head -1 | grep -o 'kslice=[0-9]*')
[ "$fastest" = kslice=512 ] && [ "$(json "$TMP/ks-out.json" pairs.0.tuned.k_slice)" = 1024 ] &&
	ok "ranked by device + host: kslice=1024 over the NPU's fastest, kslice=512" ||
	not_ok "ranked by device + host" "fastest on the device: $fastest, tuned: $(json "$TMP/ks-out.json" pairs.0.tuned.k_slice)"
d=$(json "$TMP/ks-out.json" pairs.0.measured.device_us)
h=$(json "$TMP/ks-out.json" pairs.0.measured.host_us)
t=$(json "$TMP/ks-out.json" pairs.0.measured.total_us)
awk -v d="$d" -v h="$h" -v t="$t" 'BEGIN { exit !(d > 0 && h > 0 && (t - d - h) ^ 2 < 1e-12) }' &&
	ok "measured: device_us + host_us = total_us ($d + $h)" || not_ok "measured: device_us + host_us = total_us" "$d + $h != $t"
[ "$(json "$TMP/ks-out.json" pairs.0.measured.host.modeled)" = true ] &&
	json "$TMP/ks-out.json" pairs.0.measured.host.model | grep -q 'cortex-a76' &&
	[ "$(json "$TMP/ks-out.json" pairs.0.tuned.host_us)" = "$h" ] &&
	ok "the host part is labelled modeled for the A76, and the tuned config carries it" ||
	not_ok "the host part is labelled modeled for the A76"
# A cache of the former ranking (device time alone) is another setup: refused.
sed '1s/ rank=device+host([^)]*)//' "$TMP/ks-out.json.cache.jsonl" >"$TMP/old.cache.jsonl"
expect_exit 2 "a cache ranked by device time alone is refused" -- $RKNN_BENCH tune --shape 64x4096x4096 \
	--device sim --space "$TMP/ks.json" --strategy exhaustive --iters 1 --warmup 0 --verify sample \
	--cache "$TMP/old.cache.jsonl" -o "$TMP/ks-old.json"
expect_grep "measure" "$TMP/err" "the refusal names the field"

# --- tune --target ggml-rknn: the slices the backend creates (issue 30 item 4) ------------
# A file as `shapes --for ggml-rknn` writes it: one pair per per-core slice, its "core"
# the core the backend pins the context to. Each slice is tuned as a single-core matmul
# on that core; its rknn_matmul_api section is that one context; the backend's own way
# (the context as librknnrt runs it: auto, threads) is its baseline.
cat >"$TMP/slices.json" <<'EOF'
{"target": "ggml-rknn", "threads": 3, "dtype": "fp16", "pairs": [
 {"src0": {"row": 64, "col": 4096}, "src1": {"row": 4096, "col": 1344}, "name": "Qcur-0:core0:0-1344", "core": 0,
  "slice": {"of": "Qcur-0", "n": 4096, "n_begin": 0, "n_end": 1344, "created": "init", "runs": true}},
 {"src0": {"row": 64, "col": 4096}, "src1": {"row": 4096, "col": 1344}, "name": "Qcur-0:core1:1344-2688", "core": 1,
  "slice": {"of": "Qcur-0", "n": 4096, "n_begin": 1344, "n_end": 2688, "created": "init", "runs": true}},
 {"src0": {"row": 64, "col": 4096}, "src1": {"row": 4096, "col": 1408}, "name": "Qcur-0:core2:2688-4096", "core": 2,
  "slice": {"of": "Qcur-0", "n": 4096, "n_begin": 2688, "n_end": 4096, "created": "init", "runs": true}}]}
EOF
expect_exit 0 "tune --target ggml-rknn" -- $RKNN_BENCH tune "$TMP/slices.json" --target ggml-rknn \
	--device sim --iters 1 --warmup 0 --verify sample -o "$TMP/slices-tuned.json"
cp "$TMP/out" "$TMP/slices.out"
pinned=0
for i in 0 1 2; do
	core=$(json "$TMP/slices-tuned.json" pairs.$i.core)
	[ "$(json "$TMP/slices-tuned.json" pairs.$i.tuned.core_mask)" = $((1 << core)) ] &&
		[ "$(json "$TMP/slices-tuned.json" pairs.$i.rknn_matmul_api.contexts.#)" = 1 ] &&
		[ "$(json "$TMP/slices-tuned.json" pairs.$i.rknn_matmul_api.contexts.0.core)" = "$core" ] &&
		json "$TMP/slices-tuned.json" pairs.$i.rknn_matmul_api.backend_split.config | grep -q "^mask=0x$((1 << core)) " &&
		pinned=$((pinned + 1))
done
[ $pinned = 3 ] && ok "each slice tuned on its own core, its API section and baseline that one context" ||
	not_ok "each slice tuned on its own core" "$pinned of 3"
# By default only configs that read B in place from the backend's memory (the native
# layout: no K-slice on K = 4096), so the shim keeps one copy of the weights; none is
# slower than the backend's own context, which is among them.
native=0
for i in 0 1 2; do
	[ "$(json "$TMP/slices-tuned.json" pairs.$i.tuned.k_slice)" = 4096 ] &&
		awk -v g="$(json "$TMP/slices-tuned.json" pairs.$i.measured.speedup_vs_backend)" 'BEGIN { exit !(g >= 1) }' &&
		native=$((native + 1))
done
[ $native = 3 ] && ok "each slice's config reads B in place (no K-slice), none slower than the backend's" ||
	not_ok "each slice's config reads B in place" "$native of 3"
# --weight-copies opens the K-slice layouts, which the shim holds as a second, packed
# copy of B: K-slices of 2048 gain over the backend's own context (host sums counted).
expect_exit 0 "tune --target ggml-rknn --weight-copies" -- $RKNN_BENCH tune "$TMP/slices.json" --target ggml-rknn \
	--weight-copies --device sim --iters 1 --warmup 0 --verify sample -o "$TMP/copies-tuned.json"
g=$(json "$TMP/copies-tuned.json" pairs.0.measured.speedup_vs_backend)
awk -v g="$g" 'BEGIN { exit !(g > 1.2) }' && [ "$(json "$TMP/copies-tuned.json" pairs.0.tuned.k_slice)" -lt 4096 ] &&
	ok "with copies, slice 0 gains over the backend's context on K-slices (${g}x, device + host)" ||
	not_ok "with copies, slice 0 gains over the backend's context" "$g"
expect_exit 2 "--weight-copies without --target ggml-rknn" -- $RKNN_BENCH tune "$TMP/slices.json" --weight-copies \
	--device sim -o "$TMP/nothing.json"
expect_grep 'ggml-rknn slices: each slice.s time on its core, summed' "$TMP/slices.out" "the totals say what they sum"
# Per graph pair the slices run at once: Qcur-0 takes its slowest slice, counted once.
slowest=$(for i in 0 1 2; do json "$TMP/slices-tuned.json" pairs.$i.measured.total_us; done | sort -g | tail -1)
[ "$(json "$TMP/slices-tuned.json" totals.per_graph_pair.best_overall.0.pairs)" = 1 ] &&
	awk -v a="$(json "$TMP/slices-tuned.json" totals.per_graph_pair.best_overall.0.total_us)" -v b="$slowest" \
		'BEGIN { exit !(a == b && a > 0) }' &&
	ok "per graph pair: Qcur-0 is its slowest slice ($slowest us)" ||
	not_ok "per graph pair: Qcur-0 is its slowest slice" "$(json "$TMP/slices-tuned.json" totals.per_graph_pair)"
expect_grep '^  rknn-bench prefill \(M = 64\): [0-9.]+ µs per 64-token prompt over 1 pairs' "$TMP/slices.out" \
	"the summary prints the per-graph-pair totals"
expect_exit 0 "the seed reader reads the tuned slices" -- "$CONSUMER" --seed-reader "$TMP/slices-tuned.json"
expect_exit 0 "the library finds every slice by its name" -- "$CONSUMER" --every "$TMP/slices-tuned.json"
expect_grep '^3 pairs found, 0 missed' "$TMP/out" "every slice found"
expect_exit 0 "run --tuned replays the tuned slices" -- $RKNN_BENCH run --tuned "$TMP/slices-tuned.json" \
	"$TMP/slices.json" --device sim --iters 1 --warmup 0 --verify sample --format json
[ "$(json "$TMP/out" results.0.stats.median_us)" = "$(json "$TMP/slices-tuned.json" pairs.0.measured.median_us)" ] &&
	ok "run --tuned reproduces slice 0's time" || not_ok "run --tuned reproduces slice 0's time"
expect_exit 0 "--list-space --target ggml-rknn" -- $RKNN_BENCH tune --list-space --target ggml-rknn "$TMP/slices.json"
! grep -q 'mask=0x[3567] ' "$TMP/out" && grep -q 'mask=0x4 ' "$TMP/out" &&
	ok "the ggml-rknn space holds single cores only" || not_ok "the ggml-rknn space holds single cores only"

# --- the command line --------------------------------------------------------------
expect_exit 0 "tune --help" -- $RKNN_BENCH tune --help
expect_grep '--strategy' "$TMP/out" "help documents --strategy"
expect_exit 0 "--list-space" -- $RKNN_BENCH tune --list-space $SEED
expect_grep '^result_output \(1x2048x128256 fp16\): [0-9]+ configs' "$TMP/out" "space listed per shape"
expect_grep 'mask=0x5 split=n' "$TMP/out" "masks 0x5 and 0x6 are in the space"
echo '{"mask": ["0x1"], "align": [48]}' >"$TMP/bad-space.json"
expect_exit 2 "bad space file" -- $RKNN_BENCH tune --list-space --space "$TMP/bad-space.json"
expect_grep "bad-space.json: align\[0\]: alignment '48'" "$TMP/err" "space error names file and path"
expect_exit 2 "tune on cpu refused" -- $RKNN_BENCH tune --shape 1x64x64 --device cpu -o "$TMP/x.json"
expect_exit 2 "bad --strategy" -- $RKNN_BENCH tune --shape 1x64x64 --strategy greedy
expect_exit 2 "no shapes" -- $RKNN_BENCH tune -o "$TMP/x.json"
expect_exit 2 "run --tuned with a missing file" -- $RKNN_BENCH run --tuned "$TMP/none.json" --shape 1x64x64

# --- a shared cache, host memory running short ----------------------------------------
# Two tunes on one cache: the second is refused while the first holds it (no interleaved
# lines, nothing lost). The holder here is flock(1) on the cache, the same lock a tune
# takes (tests/unit/test_tune.c shows two opens exclude each other), so the test does not
# depend on how long a tune runs.
LOCK="--shape 1x256x512 --device sim --target rknn-api --iters 5 --warmup 0 --verify sample --quiet -o $TMP/lock.json"
cache="$TMP/lock.json.cache.jsonl"
expect_exit 0 "a tune" -- $RKNN_BENCH tune $LOCK
l1=$(wc -l <"$cache")
(exec 9>>"$cache" && flock 9 && sleep 60 9>&-; :) & # the subshell holds it, not sleep
holder=$!
i=0
while flock -n "$cache" true 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
expect_exit 2 "a second tune on the same cache is refused" -- $RKNN_BENCH tune $LOCK
expect_grep "cache '.*lock.json.cache.jsonl' is in use by another rknn-bench tune" "$TMP/err" \
	"the message names the cache and says why"
kill $holder 2>/dev/null
wait $holder 2>/dev/null
[ "$(wc -l <"$cache")" -eq "$l1" ] && ok "the refused tune wrote nothing" || not_ok "the refused tune wrote nothing"
expect_exit 0 "a resume reads the whole cache" -- $RKNN_BENCH tune $LOCK --verbose
[ "$(grep -c '(cached)' "$TMP/err")" -eq $((l1 - 1)) ] && [ "$(wc -l <"$cache")" -eq "$l1" ] &&
	ok "every result reused, nothing measured again" || not_ok "every result reused"
mkfifo "$TMP/fifo"
expect_exit 2 "a FIFO as the cache is refused, without hanging" -- $RKNN_BENCH tune $LOCK --cache "$TMP/fifo"
expect_grep "is not a regular file" "$TMP/err" "a FIFO cache: the message says why"

# The host short of memory (a 1 MiB meminfo fixture) fails the shape for now (exit 2)
# and caches nothing of it: a resume with memory measures everything and finishes.
printf 'MemAvailable:       1024 kB\n' >"$TMP/tiny"
MEM="--shape 1x4096x8192 --device sim --iters 1 --warmup 0 --verify sample --top 2 -o $TMP/mem.json"
expect_exit 2 "tune with the host short of memory" -- env RKNN_BENCH_MEMINFO="$TMP/tiny" $RKNN_BENCH tune $MEM
expect_grep 'needs 64.1 MiB of host memory .* more than the 1.0 MiB available' "$TMP/err" \
	"the message gives the memory needed and available"
[ "$(wc -l <"$TMP/mem.json.cache.jsonl")" -eq 1 ] && ok "no failure cached while memory was short" ||
	not_ok "no failure cached while memory was short" "$(wc -l <"$TMP/mem.json.cache.jsonl") lines"
expect_exit 0 "the resume with memory finishes" -- $RKNN_BENCH tune $MEM

# A space too large to enumerate is refused before anything runs; the work is announced.
cat >"$TMP/huge.json" <<'HUGE'
{"mode": "extend", "banks": ["1:11", "2:10", "3:9", "5:7", "6:6", "7:5", "8:4", "9:3", "10:2", "11:1"],
 "kslice": [32, 64, 96, 128, 160, 256, 512, 1024, 8192, 16384], "align": [16, 32, 64]}
HUGE
expect_exit 2 "a space of too many combinations" -- $RKNN_BENCH tune --shape 1x64x64 --device sim --space "$TMP/huge.json" -o "$TMP/huge-out.json"
expect_grep 'combinations of knob values per shape, more than 100000: give fewer values' "$TMP/err" \
	"the refusal gives the count and the limit"
expect_exit 0 "tune announces its work" -- $RKNN_BENCH tune --shape 1x64x64 --device sim --iters 1 --warmup 0 --top 1 -o "$TMP/ann.json"
expect_grep '^rknn-bench: tuning 1 shapes, [0-9]+ to [0-9]+ configs each' "$TMP/err" "the estimate comes before the work"
# A device timeout (a hung program, retried once after a reset) fails the config for this
# tune only: not cached, so a resume tries it again.
expect_exit 1 "tune where every program hangs" -- env RKNN_BENCH_DEBUG=fault_word $RKNN_BENCH tune \
	--shape 1x64x64 --device sim --iters 1 --warmup 0 --top 1 --unsafe-skip-validation \
	-o "$TMP/hang.json" --verbose
expect_grep '\(a timeout: not cached, a resume tries again\)' "$TMP/err" "the timeout is said to be retried later"
! grep -q '"kind":"run".*timed out' "$TMP/hang.json.cache.jsonl" && ok "no timeout in the cache" ||
	not_ok "no timeout in the cache"

# A prompt's totals count the M = 1 pairs of its output row (the last block's FFN and
# result_output, which llama.cpp computes for the last token only), in the summary, in
# the file and after a merge of shards.
$RKNN_BENCH shapes --arch llama --embd 256 --ff 512 --layers 2 --heads 4 --heads-kv 2 --vocab 512 \
	--tokens 1,16 -o "$TMP/rows.json" 2>/dev/null
expect_exit 0 "tune of decode and a 16-token prompt" -- $RKNN_BENCH tune "$TMP/rows.json" --device sim \
	--iters 1 --warmup 0 --top 1 -o "$TMP/rows-tuned.json"
expect_grep '^  rknn-bench prefill \(M = 16\): [0-9.]+ µs per 16-token prompt over 13 pairs, 4 of them at M = 1 \(output row\)' \
	"$TMP/out" "tune: the prompt's total counts its 4 output-row pairs at M = 1"
found=
for i in 0 1; do
	[ "$(json "$TMP/rows-tuned.json" totals.best_overall.$i.m)" = 16 ] &&
		found=$(json "$TMP/rows-tuned.json" totals.best_overall.$i.output_rows)
done
[ "$found" = 4 ] && ok "the file's prompt total has output_rows 4" ||
	not_ok "the file's prompt total has output_rows 4" "got '$found': $(json "$TMP/rows-tuned.json" totals)"
