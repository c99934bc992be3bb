# merge's documents: two shards of a small tune merged write exactly the keys of the
# unsharded tune (issue 36: no "speedup_vs_cpu": null on a modeled device), and a shard
# whose cache is another shard's is refused (docs/reliability.md). Small shapes, the
# model's best 2 run: a few CPU seconds.
. tests/e2e/lib.sh
FAST="--device sim --iters 1 --warmup 0 --verify sample --top 2"
cat >"$TMP/shapes.json" <<'JSON'
{"pairs": [
 {"src0": {"row": 1, "col": 256}, "src1": {"row": 256, "col": 512}, "name": "up"},
 {"src0": {"row": 16, "col": 512}, "src1": {"row": 512, "col": 256}, "name": "down"}]}
JSON
expect_exit 0 "unsharded tune" -- $RKNN_BENCH --quiet tune "$TMP/shapes.json" $FAST -o "$TMP/whole.json"
for i in 1 2; do
	expect_exit 0 "shard $i/2" -- $RKNN_BENCH --quiet tune "$TMP/shapes.json" $FAST --shard $i/2 \
		-o "$TMP/s$i.json"
done
expect_exit 0 "merge the two shards" -- $RKNN_BENCH merge --cache "$TMP/m.cache.jsonl" \
	"$TMP/m.json" "$TMP/s1.json" "$TMP/s2.json"

# The keys of every pair and of the totals, whatever their values; the top level of a
# merged file adds its provenance ("merged") by design (docs/scale-out.md).
"$JSONCHECK" "$TMP/whole.json" --keys | grep -v '^merged' | sort >"$TMP/keys-whole"
"$JSONCHECK" "$TMP/m.json" --keys | grep -v '^merged' | sort >"$TMP/keys-merged"
if cmp -s "$TMP/keys-whole" "$TMP/keys-merged"; then
	ok "the merged file has exactly the keys of the unsharded tune ($(wc -l <"$TMP/keys-whole") paths)"
else
	not_ok "the merged file has exactly the keys of the unsharded tune" \
		"$(diff "$TMP/keys-whole" "$TMP/keys-merged" | head -n 10)"
fi
grep -q 'speedup_vs_cpu' "$TMP/keys-merged" &&
	not_ok "no measured.speedup_vs_cpu on a modeled device" ||
	ok "no measured.speedup_vs_cpu on a modeled device"
# The CPU reference is timed on the host (its time differs from tune to tune): its
# speedup is that time over the merged median, as tune computes it.
for p in 0 1; do
	"$JSONCHECK" "$TMP/m.json" pairs.$p.measured.cpu_reference.cpu_us \
		pairs.$p.measured.median_us pairs.$p.measured.cpu_reference.speedup
done | paste - - - | awk '{ e = $1 / $2 / $3 - 1; if (e > 1e-9 || e < -1e-9) bad = 1 }
	END { exit bad }' && ok "cpu_reference.speedup is cpu_us over the merged median" ||
	not_ok "cpu_reference.speedup is cpu_us over the merged median"

# A shard that points at another shard's cache: refused, nothing written.
cp "$TMP/s1.json.cache.jsonl" "$TMP/s2.json.cache.jsonl"
expect_exit 2 "a shard with another shard's cache: exit 2" -- $RKNN_BENCH merge \
	--cache "$TMP/bad.cache.jsonl" "$TMP/bad.json" "$TMP/s1.json" "$TMP/s2.json"
expect_grep "s2.json' is shard 2/2 but its cache '.*s2.json.cache.jsonl' was written by shard 1/2" \
	"$TMP/err" "names the shard, its cache and the cache's shard"
[ ! -e "$TMP/bad.json" ] && [ ! -e "$TMP/bad.cache.jsonl" ] && ok "no output after the refusal" ||
	not_ok "no output after the refusal"
echo "1..$n"
