# End-to-end tests of `rknn-bench report` and `compare --format html`: the page from a
# run report, a tuned JSON and its tune cache (marks counted against the inputs), bad
# inputs (file named, exit 2, no output file), and a real browser: headless Chromium
# renders the page to build/artifacts/report.png, with no console error and the same
# marks in the DOM it built, and lays it out under a height. The browser part is skipped
# under a RUNNER (qemu) and where Chromium is missing. The structure checks shared with
# the prefill tune (tuned_roundtrip_models.sh) are in lib_report.sh.
. tests/e2e/lib.sh
. tests/e2e/lib_report.sh
ARTIFACTS=${BUILD:-build}/artifacts
RUN_FAST="--device sim --iters 1 --warmup 0 --verify sample"
FAST="$RUN_FAST --quiet"
# Two shapes of configs/regression.json (decode and prefill); smaller ones under qemu.
if [ "${CHECK_SCOPE:-}" = quick ]; then
	SHAPES="--shape 1x512x1024 --shape 16x256x256"
else
	SHAPES="--shape 1x2048x8192 --shape 128x2048x2048"
fi
cat >"$TMP/space.json" <<'EOF'
{"mask": ["0x1", "0x3", "0x7"], "banks": ["auto", "2:10", "4:8"], "weights": ["even", "2,1"],
 "launch": ["fences", "threads"], "align": [32], "kslice": ["auto"]}
EOF

json() { "$JSONCHECK" "$1" "$2" 2>&1; }

# The heatmap cells a cache should give: per shape, with the timing model's records if
# it has any (else the device's), distinct masks x distinct bank splits plus distinct
# split weights x distinct launch modes. Written apart from the C code on purpose.
expected_cells() {
	awk -F'"' '
	FNR == NR { if (FNR > 1 && $4 == "model") model[$8] = 1; next }
	FNR > 1 && $4 != "cpu" && (($8 in model) ? $4 == "model" : $4 == "run") {
		s = $8; n = split($12, kv, " ")
		for (i = 1; i <= n; i++) {
			split(kv[i], p, "=")
			if (p[1] == "mask") mask = p[2]
			if (p[1] == "banks") banks = (p[2] == "0:0") ? "auto" : p[2]
			if (p[1] == "split") { w = p[2]; sub(/^[^:]*(:|$)/, "", w); if (w == "") w = "even" }
		}
		if (!((s, "m", mask) in seen)) { seen[s, "m", mask] = 1; nm[s]++ }
		if (!((s, "b", banks) in seen)) { seen[s, "b", banks] = 1; nb[s]++ }
		if (!((s, "w", w) in seen)) { seen[s, "w", w] = 1; nw[s]++ }
		if (!((s, "l", $16) in seen)) { seen[s, "l", $16] = 1; nl[s]++ }
		shapes[s] = 1
	}
	END { for (s in shapes) c += nm[s] * nb[s] + nw[s] * nl[s]; print c + 0 }' "$1" "$1"
}

# --- inputs: a run report, a tuned JSON and its cache ------------------------------
expect_exit 0 "run two regression shapes" -- $RKNN_BENCH run $SHAPES $RUN_FAST -o "$TMP/run.json"
expect_exit 0 "tune them in a small space" -- \
	$RKNN_BENCH tune $SHAPES $FAST --space "$TMP/space.json" --top 2 -o "$TMP/tuned.json"
CACHE=$TMP/tuned.json.cache.jsonl

# --- the page -------------------------------------------------------------------------
PAGE=$TMP/report.html
expect_exit 0 "report on a run report, a tuned JSON and a cache" -- \
	$RKNN_BENCH report "$TMP/run.json" "$TMP/tuned.json" "$CACHE" -o "$PAGE"
expect_grep '^<!DOCTYPE html>' "$PAGE" "the page is HTML"
[ -s "$PAGE" ] && [ "$(count '<script' "$PAGE")" = 0 ] && ! grep -qE '(src|href)=' "$PAGE" &&
	ok "no script and no external resource" || not_ok "no script and no external resource"
expect_grep 'class="badge modeled"' "$PAGE" "emulator times carry the modeled badge"

results=$(json "$TMP/run.json" 'results.#')
pairs=$(json "$TMP/tuned.json" 'pairs.#')
points=$((results + pairs)) # every run result and every (distinct) tuned shape
got=$(count '<circle class="point' "$PAGE")
[ "$got" = "$points" ] && ok "roofline: one point per shape ($got)" ||
	not_ok "roofline points" "got $got, wanted $points"
api=0
i=0
while [ $i -lt "$pairs" ]; do
	[ "$(json "$TMP/tuned.json" "pairs.$i.rknn_matmul_api")" != null ] && api=$((api + 1))
	i=$((i + 1))
done
bars=$((2 * pairs + api)) # default and tuned per pair, and the rknn_matmul_api config
got=$(count '<rect class="bar ' "$PAGE")
[ "$got" = "$bars" ] && ok "per-layer bars: default, tuned, rknn_matmul_api ($got)" ||
	not_ok "per-layer bars" "got $got, wanted $bars"
cells=$(expected_cells "$CACHE")
got=$(count '<rect class="cell' "$PAGE")
[ "$got" = "$cells" ] && [ "$cells" -gt 0 ] && ok "heatmap cells as in the cache ($got)" ||
	not_ok "heatmap cells" "got $got, wanted $cells"
[ "$(count 'class="heatmap"' "$PAGE")" = $((2 * pairs)) ] &&
	ok "two heatmaps per tuned shape" || not_ok "two heatmaps per tuned shape"
expect_grep '>mask=0x7 split=n:1,1,1' "$PAGE" "the tuned config beside its bars"
expect_grep 'core 0: n \[0, ' "$PAGE" "the rknn_matmul_api contexts beside its bars"
expect_grep 'decode \(M = 1\) per token' "$PAGE" "decode total per token"
expect_grep 'prefill \(M = [0-9]+\) per prompt' "$PAGE" "prefill total per prompt"
expect_grep '<td>tool_version</td><td class="v">' "$PAGE" "provenance: tool version"
expect_grep 'host_settings' "$PAGE" "provenance: host settings"
expect_grep 'fp16 MAC [0-9]+ GFLOP/s' "$PAGE" "MAC ceiling drawn"
expect_grep 'DDR [0-9.]+ GB/s' "$PAGE" "DDR ceiling drawn"

expect_grep '<h1>rknn-bench report: run report, tuned JSON and tune cache<span class="badge modeled"' \
	"$PAGE" "the title names every kind of file shown, modeled as they all are"
expect_exit 0 "report on the tuned JSON and its cache" -- \
	$RKNN_BENCH report "$TMP/tuned.json" "$CACHE" -o "$TMP/tuned.html"
page_structure tuned "$TMP/tuned.html" "$TMP/tuned.json"

expect_exit 0 "-o - writes the page to stdout" -- $RKNN_BENCH report "$TMP/tuned.json" -o -
expect_grep '^<!DOCTYPE html>' "$TMP/out" "stdout holds the page"

# A tune with the default settings (cheap shapes): its page has every section too.
if [ "${CHECK_SCOPE:-}" != quick ]; then
	expect_exit 0 "tune with default settings" -- $RKNN_BENCH tune --shape 1x2048x2048 \
		--shape 64x512x1024 --device sim --quiet -o "$TMP/default.json"
	expect_exit 0 "report of the default tune" -- $RKNN_BENCH report "$TMP/default.json" \
		"$TMP/default.json.cache.jsonl" -o "$TMP/default.html"
	cells=$(expected_cells "$TMP/default.json.cache.jsonl")
	got=$(count '<rect class="cell' "$TMP/default.html")
	[ "$got" = "$cells" ] && ok "default tune: heatmap cells as in the cache ($got)" ||
		not_ok "default tune heatmap cells" "got $got, wanted $cells"
	page_structure "default tune" "$TMP/default.html" "$TMP/default.json"
fi

# --- compare --------------------------------------------------------------------------
expect_exit 0 "compare --format html" -- \
	$RKNN_BENCH compare "$TMP/run.json" "$TMP/run.json" --format html
expect_grep '^<!DOCTYPE html>' "$TMP/out" "compare writes the page"
got=$(count '<rect class="bar ' "$TMP/out")
[ "$got" = $((2 * results)) ] && ok "compare: base and new bar per result" ||
	not_ok "compare bars" "got $got, wanted $((2 * results))"
cp "$TMP/out" "$TMP/cmp-stdout.html"
$RKNN_BENCH compare "$TMP/run.json" "$TMP/run.json" >"$TMP/cmp.txt" 2>&1
summary=$(tail -n 1 "$TMP/cmp.txt" | sed 's/^geomean: //')
grep -q "^geomean: .*regressions\?, .*improvements\?\$" "$TMP/cmp.txt" &&
	[ "$(sed -e 's/<[^>]*>//g' "$TMP/cmp-stdout.html" | grep -c -F "geomean: $summary")" = 1 ] &&
	ok "compare page: the geomean and counts of the text output ($summary)" ||
	not_ok "compare page geomean" "text: $(tail -n 1 "$TMP/cmp.txt")"
expect_grep '<th>change and verdict</th>' "$TMP/cmp-stdout.html" "compare page: the verdicts' column"
[ "$(count '<span class="verdict same">' "$TMP/cmp-stdout.html")" -ge "$results" ] &&
	ok "compare page: each verdict in its colour (identical runs: grey)" ||
	not_ok "compare page: coloured verdicts"
expect_grep '<h1>rknn-bench compare: [^<]*: run reports<span class="badge modeled"' \
	"$TMP/cmp-stdout.html" "compare page: the title names the kind of file"
expect_exit 0 "compare -o x.html" -- \
	$RKNN_BENCH compare "$TMP/run.json" "$TMP/run.json" -o "$TMP/cmp.html"
expect_grep '^base: ' "$TMP/out" "the table still goes to stdout"
expect_grep '^<!DOCTYPE html>' "$TMP/cmp.html" "-o .html writes the page"
expect_exit 0 "compare -o x.json" -- \
	$RKNN_BENCH compare "$TMP/run.json" "$TMP/run.json" -o "$TMP/cmp.json"
[ "$(json "$TMP/cmp.json" schema)" = rknn-bench-compare/1 ] && ok "-o .json writes the JSON" ||
	not_ok "-o .json writes the JSON" "$(json "$TMP/cmp.json" schema)"

# --- bad input: the file named, exit 2, no output -------------------------------------
expect_exit 2 "no file" -- $RKNN_BENCH report -o "$TMP/none.html"
expect_exit 2 "a missing file" -- $RKNN_BENCH report "$TMP/missing.json" -o "$TMP/none.html"
expect_grep "missing.json" "$TMP/err" "the missing file is named"
echo '{"schema": "other/1"}' >"$TMP/other.json"
expect_exit 2 "another schema" -- $RKNN_BENCH report "$TMP/other.json" -o "$TMP/none.html"
expect_grep "other.json: schema is 'other/1': expected a run report" "$TMP/err" \
	"the schema is named"
head -c 300 "$TMP/tuned.json" >"$TMP/cut.json"
expect_exit 2 "a truncated tuned JSON" -- $RKNN_BENCH report "$TMP/cut.json" -o "$TMP/none.html"
expect_grep "cut.json: invalid JSON .*(truncated|end of the file)" "$TMP/err" \
	"truncation named with the file"
sed 's/"kind":[[:space:]]*"decode"/"kind": 7/' "$TMP/tuned.json" >"$TMP/badtotals.json"
expect_exit 2 "bad totals" -- $RKNN_BENCH report "$TMP/badtotals.json" -o "$TMP/none.html"
expect_grep "badtotals.json: totals.default\[0\] needs" "$TMP/err" \
	"the totals entry is named"
{ head -n 2 "$CACHE"; echo '{"kind": "model"}'; tail -n 1 "$CACHE"; } >"$TMP/bad.jsonl"
expect_exit 2 "a cache with a bad record" -- $RKNN_BENCH report "$TMP/bad.jsonl" -o "$TMP/none.html"
expect_grep "bad.jsonl' line 3 is not a tune record" "$TMP/err" "the cache line is named"
[ ! -e "$TMP/none.html" ] && ok "no output file after an error" ||
	not_ok "no output file after an error"
echo keep >"$TMP/kept.html"
expect_exit 2 "an error keeps an existing output" -- \
	$RKNN_BENCH report "$TMP/tuned.json" "$TMP/other.json" -o "$TMP/kept.html"
[ "$(cat "$TMP/kept.html")" = keep ] && ok "the existing output is untouched" ||
	not_ok "the existing output is untouched"

# --- a real browser -------------------------------------------------------------------
skip=$(chrome_skip)
if [ -n "$skip" ]; then
	ok "headless Chromium render # SKIP $skip"
else
	# The console check must be able to fail: a page with an error shows up in the log.
	echo '<html><body><script>console.error("boom")</script></body></html>' >"$TMP/bad.html"
	chrome "$TMP/bad.html" --dump-dom >/dev/null
	grep -q 'CONSOLE.*"boom"' "$TMP/chrome.log" && ok "chromium logs console errors" ||
		not_ok "chromium logs console errors" "$(tail -n 5 "$TMP/chrome.log")"

	chrome "$PAGE" --dump-dom >"$TMP/dom.html"
	grep -q '</h1>' "$TMP/dom.html" && ok "chromium loaded the page" ||
		not_ok "chromium loaded the page" "$(tail -n 5 "$TMP/chrome.log")"
	! grep -q 'CONSOLE' "$TMP/chrome.log" && ok "no console message" ||
		not_ok "no console message" "$(grep CONSOLE "$TMP/chrome.log" | head -n 5)"
	maps=$(count 'class="heatmap"' "$PAGE")
	totals=$(($(totals_entries "$TMP/tuned.json") + $(json "$TMP/run.json" totals.#)))
	for mark in "circle class=\"point:$points" "rect class=\"bar :$bars" \
		"rect class=\"cell:$(expected_cells "$CACHE")" "rect class=\"cell best:$maps" \
		"g class=\"legend\":$maps" "rect class=\"total :$totals"; do
		want=${mark##*:}
		got=$(count "<${mark%:*}" "$TMP/dom.html")
		[ "$got" = "$want" ] && ok "DOM has $want <${mark%:*}> marks" ||
			not_ok "DOM marks <${mark%:*}>" "got $got, wanted $want"
	done

	page_height_check "the page of a run, a tuned JSON and a cache" "$PAGE" 6000

	mkdir -p "$ARTIFACTS"
	rm -f "$ARTIFACTS/report.png"
	chrome "$PAGE" --screenshot="$ARTIFACTS/report.png" --window-size=1280,4000
	[ "$(head -c 4 "$ARTIFACTS/report.png" 2>/dev/null | tail -c 3)" = PNG ] &&
		ok "screenshot saved to $ARTIFACTS/report.png" ||
		not_ok "screenshot" "$(tail -n 5 "$TMP/chrome.log")"
	chrome "$TMP/cmp.html" --screenshot="$ARTIFACTS/compare.png" --window-size=1280,2000
	[ "$(head -c 4 "$ARTIFACTS/compare.png" 2>/dev/null | tail -c 3)" = PNG ] &&
		ok "compare page screenshot saved" || not_ok "compare page screenshot"
fi
