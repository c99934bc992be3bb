# scripts/doc-keys-check.sh: the real tree names the keys of its three documents in
# their modules only; on synthetic trees a key planted in another file fails, named
# with file, line, key and document, whether through cJSON or a module's helper; a
# key another document also has, and a key in its own module, pass.
. tests/e2e/lib.sh
CHECK=scripts/doc-keys-check.sh

expect_exit 0 "the tree names each document's keys in its module only" -- sh $CHECK .
expect_grep "the [0-9]+ keys of the run report, the tuned JSON and the tune cache" "$TMP/out" \
	"says how many keys it checked"

# tree DIR: the three modules, a shapes file module with a shared key, and a page.
tree() {
	mkdir -p "$1/src/results" "$1/src/tune" "$1/src/core" "$1/src/page"
	printf 'x = cJSON_GetObjectItemCaseSensitive(o, "median_us");\n' >"$1/src/results/compare.c"
	printf 'add_num(m, "speedup_vs_cpu", v);\nv = cJSON_GetObjectItemCaseSensitive(p, "name");\n' \
		>"$1/src/tune/tuned_write.c"
	printf 'static const char *const pair_keys[] = {"name", "tuned",\n\t"measured"};\n' \
		>"$1/src/tune/tuned_read.c"
	printf 'ok = copy_string(o, "reason", r->reason, sizeof(r->reason));\n' >"$1/src/tune/cache.c"
	printf 'v = cJSON_GetObjectItemCaseSensitive(pair, "name");\n' >"$1/src/core/shape.c"
	printf 'int page(void) { return 0; }\n' >"$1/src/page/page.c"
}

tree "$TMP/good"
printf 'v = cJSON_GetObjectItemCaseSensitive(pair, "name");\n' >>"$TMP/good/src/page/page.c"
expect_exit 0 "keys in their modules and a shared key elsewhere pass" -- sh $CHECK "$TMP/good"
expect_grep "the 5 keys of" "$TMP/out" "the shared key is not the documents' own"

tree "$TMP/cjson"
printf '/* x */\nv = cJSON_GetObjectItemCaseSensitive(pair, "measured");\n' >>"$TMP/cjson/src/page/page.c"
expect_exit 1 "a key read through cJSON outside its module fails" -- sh $CHECK "$TMP/cjson"
expect_grep 'src/page/page.c:3: names the key "measured" of the tuned JSON' "$TMP/out" \
	"names the file, the line, the key and the document"

tree "$TMP/helper"
printf 'double t = num(meas, "median_us");\n' >"$TMP/helper/src/tune/merge.c"
expect_exit 1 "a key read through a helper fails" -- sh $CHECK "$TMP/helper"
expect_grep 'src/tune/merge.c:1: names the key "median_us" of the run report' "$TMP/out" \
	"names a helper's key"

tree "$TMP/table"
printf 'static const char *const count_keys[] = {"reason"};\n' >"$TMP/table/src/page/heatmap.c"
expect_exit 1 "a key in a table of keys fails" -- sh $CHECK "$TMP/table"
expect_grep 'src/page/heatmap.c:1: names the key "reason" of the tune cache' "$TMP/out" \
	"names a table's key"
echo "1..$n"
