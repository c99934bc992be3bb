# Checks of the report page shared by report.sh and the prefill tune of
# tuned_roundtrip_models.sh (which tunes configs/llama-3.2-1b-prefill.json anyway): the
# page's structure counted against its tuned JSON with jsoncheck and grep (apart from
# the C code), and headless Chromium: the DOM and the rendered height. Sourced after
# tests/e2e/lib.sh.
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)

count() { grep -o -- "$1" "$2" | wc -l | tr -d ' '; }

# chrome_skip: why the browser checks cannot run here ("" when they can).
chrome_skip() {
	if [ -n "${RUNNER:-}" ]; then
		echo "under RUNNER (emulated target; the HTML is checked apart)"
	elif [ -z "$CHROMIUM" ]; then
		echo "chromium missing"
	fi
}

# chrome FILE ARGS...: one headless run on FILE, its log in $TMP/chrome.log.
chrome() {
	f=$1
	shift
	timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/profile" --enable-logging=stderr --v=0 "$@" \
		"file://$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" 2>"$TMP/chrome.log"
}

# page_height FILE: the height Chromium lays the page out at, 1280 px wide, in px. The
# page has no script: a copy gets one that writes the height into the DOM it dumps.
page_height() {
	sed 's|</body>|<script>document.body.setAttribute("data-height", document.documentElement.scrollHeight)</script></body>|' \
		"$1" >"$TMP/height.html"
	chrome "$TMP/height.html" --window-size=1280,800 --dump-dom |
		sed -n 's/.*data-height="\([0-9][0-9]*\)".*/\1/p' | head -n 1
}

# unique_shapes TUNED: the distinct M x K x N of its pairs (one dtype per file).
unique_shapes() {
	n=$("$JSONCHECK" "$1" pairs.#)
	i=0 paths=
	while [ "$i" -lt "$n" ]; do
		paths="$paths pairs.$i.src0.row pairs.$i.src0.col pairs.$i.src1.col"
		i=$((i + 1))
	done
	"$JSONCHECK" "$1" $paths | paste - - - | sort -u | wc -l | tr -d ' '
}

# totals_entries TUNED: the entries of every totals array the file holds.
totals_entries() {
	t=0
	for of in default tuned rknn_matmul_api backend best_overall; do
		k=$("$JSONCHECK" "$1" "totals.$of.#" 2>/dev/null)
		t=$((t + ${k:-0}))
	done
	echo "$t"
}

# page_structure LABEL PAGE TUNED: one row per unique shape whose pair counts add up to
# the file's pairs; a colour legend and one best cell per heatmap; one totals bar per
# totals entry; a title naming the kinds of file.
page_structure() {
	label=$1 page=$2 tuned=$3
	shapes=$(unique_shapes "$tuned")
	pairs=$("$JSONCHECK" "$tuned" pairs.#)
	rows=$(count '<tr class="group">' "$page")
	[ "$rows" = "$shapes" ] && ok "$label: one row per unique shape ($rows for $pairs pairs)" ||
		not_ok "$label: one row per unique shape" "got $rows rows, $shapes unique shapes"
	grouped=$(grep -o '<b>[0-9]* pairs</b>' "$page" | tr -dc '0-9\n' | awk '{ s += $1 } END { print s + 0 }')
	many=$(count '<b>[0-9]* pairs</b>' "$page")
	[ $((grouped + rows - many)) = "$pairs" ] &&
		ok "$label: the rows' pair counts add up to the file's $pairs pairs" ||
		not_ok "$label: pair counts" "$grouped in $many groups + $((rows - many)) single rows, $pairs pairs"
	maps=$(count 'class="heatmap"' "$page")
	[ "$maps" -gt 0 ] && [ "$(count '<g class="legend">' "$page")" = "$maps" ] &&
		[ "$(count '<rect class="cell best"' "$page")" = "$maps" ] &&
		ok "$label: a colour legend and one best cell per heatmap ($maps)" ||
		not_ok "$label: heatmap legends and best cells" \
			"$maps heatmaps, $(count '<g class="legend">' "$page") legends," \
			"$(count '<rect class="cell best"' "$page") best cells"
	want=$(totals_entries "$tuned")
	got=$(count '<rect class="total ' "$page")
	[ "$want" -gt 0 ] && [ "$got" = "$want" ] &&
		ok "$label: the totals chart has a bar per totals entry ($got)" ||
		not_ok "$label: totals chart" "got $got bars, the file has $want entries"
	expect_grep 'tokens/s \([0-9.]+ µs per (token|prompt)\)' "$page" "$label: totals in tokens/s and µs"
	expect_grep '<h1>[^<]*: tuned JSON and tune cache<span class="badge modeled"' "$page" \
		"$label: the title names both kinds of file, modeled"
}

# page_height_check LABEL PAGE MAX: Chromium lays the page out under MAX px.
page_height_check() {
	skip=$(chrome_skip)
	if [ -n "$skip" ]; then
		ok "$1: rendered height # SKIP $skip"
		return
	fi
	h=$(page_height "$2")
	[ -n "$h" ] && [ "$h" -lt "$3" ] && ok "$1: Chromium renders it ${h} px tall (under $3)" ||
		not_ok "$1: rendered height under $3 px" "got '${h}'" "$(tail -n 3 "$TMP/chrome.log")"
}

# report_prefill_check TUNED: the page of a prefill tune (its cache beside it) has
# the structure above and renders under 6,000 px (a row per pair made ~34,000).
report_prefill_check() {
	page=$TMP/prefill-report.html
	expect_exit 0 "prefill: report on the tune and its cache" -- \
		$RKNN_BENCH report "$1" "$1.cache.jsonl" -o "$page"
	page_structure prefill "$page" "$1"
	page_height_check prefill "$page" 6000
}
