# tune --shard and merge: four shards of configs/regression.json run through GNU parallel
# (scripts/tune-parallel.sh) and merged give the same configs and modeled times as one
# unsharded tune; the merged file loads everywhere a tuned JSON is read; merging is
# idempotent and order-blind; a missing shard, a shard of another profile and a
# conflicting duplicate are refused; boards of one kind join at their median; a shape
# split into slices of its space merges to the unsharded result; the merged cache
# resumes a whole tune; the Slurm script runs its array and merge jobs (a stand-in
# sbatch). Every tune runs the best 2 of the model's ranking (--top 2: the same path as
# the default 8, a quarter of the emulator's work). Under CHECK_SCOPE=quick (qemu) and
# SANITIZE=1 four small shapes stand for the regression file (the same paths, a fraction
# of the emulator's work).
. tests/e2e/lib.sh
RUNOPTS="--device sim --iters 1 --warmup 0 --verify sample"
FAST="$RUNOPTS --top 2"
json() { "$JSONCHECK" "$1" "$2" 2>/dev/null; }

SHAPES=configs/regression.json
if [ "${CHECK_SCOPE:-}" = quick ] || [ "${SANITIZE:-}" = 1 ]; then
	SHAPES=$TMP/small.json
	cat >"$SHAPES" <<'EOF'
{"pairs": [
 {"src0": {"row": 1, "col": 512}, "src1": {"row": 512, "col": 1024}, "name": "up"},
 {"src0": {"row": 1, "col": 1024}, "src1": {"row": 1024, "col": 512}, "name": "down"},
 {"src0": {"row": 1, "col": 512}, "src1": {"row": 512, "col": 1024}, "name": "gate"},
 {"src0": {"row": 16, "col": 512}, "src1": {"row": 512, "col": 512}, "name": "q"},
 {"src0": {"row": 32, "col": 256}, "src1": {"row": 256, "col": 512}, "name": "k"}]}
EOF
fi

# same_tune A B LABEL [JQPATH...]: every key of both files (scripts/tune-diff.sh: all but
# when and where each was made), less the JQPATHs given.
same_tune() {
	a_=$1 b_=$2 label=$3
	shift 3
	if ! command -v jq >/dev/null 2>&1; then
		ok "$label: identical to the unsharded tune # SKIP jq is missing (apt-get install jq)"
		return
	fi
	ignore=
	for k in "$@"; do ignore="$ignore --ignore $k"; done
	# shellcheck disable=SC2086 # one word per --ignore and its path
	sh scripts/tune-diff.sh $ignore "$a_" "$b_" >"$TMP/same-diff" 2>&1
	rc=$?
	head -n 20 "$TMP/same-diff" | sed 's/^/# /'
	pairs=$(json "$a_" pairs.#)
	[ "$pairs" -gt 0 ] && [ "$rc" -eq 0 ] &&
		ok "$label: $pairs pairs, every key identical" ||
		not_ok "$label: identical to the unsharded tune" "$(wc -l <"$TMP/same-diff") differences"
}

expect_exit 0 "unsharded tune" -- $RKNN_BENCH --quiet tune "$SHAPES" $FAST -o "$TMP/whole.json"

# --- four shards through GNU parallel, merged ---
if command -v parallel >/dev/null 2>&1; then
	expect_exit 0 "tune-parallel.sh: 4 shards with GNU parallel, merged" -- \
		sh scripts/tune-parallel.sh -n 4 -j 2 --bin "$RKNN_BENCH" -o "$TMP/m.json" \
		"$SHAPES" -- $FAST
	grep -q "from 4 shards of 1 board" "$TMP/err" && ok "merge says what it joined" ||
		not_ok "merge says what it joined" "$(cat "$TMP/err")"
else
	ok "GNU parallel is missing: the shards run one by one # SKIP apt-get install parallel"
	mkdir -p "$TMP/m.json.shards"
	for i in 1 2 3 4; do
		$RKNN_BENCH --quiet tune "$SHAPES" $FAST --shard $i/4 \
			-o "$TMP/m.json.shards/shard-$i.json" >/dev/null 2>&1
	done
	$RKNN_BENCH merge --cache "$TMP/m.json.cache.jsonl" "$TMP/m.json" \
		"$TMP"/m.json.shards/shard-?.json 2>/dev/null
fi
same_tune "$TMP/whole.json" "$TMP/m.json" "4 shards merged"
S=$TMP/m.json.shards
[ "$(json "$S/shard-2.json" shard.index)/$(json "$S/shard-2.json" shard.count)" = 2/4 ] &&
	ok "a shard records which it is" || not_ok "a shard records which it is"
head -n 1 "$S/shard-3.json.cache.jsonl" | grep -q '"shard":"3/4"' &&
	ok "a shard's cache records the shard" || not_ok "a shard's cache records the shard"
# --shard-plan prints the split every shard made: shard I's shapes as its JSON lists them
expect_exit 0 "tune --shard-plan 4 prints the plan" -- $RKNN_BENCH tune --shard-plan 4 "$SHAPES"
awk '/^shard [0-9]+\/4:/ { split($2, f, "/"); i = f[1] } /^  / { print i, $1, $2 }' "$TMP/out" |
	sort >"$TMP/plan"
for i in 1 2 3 4; do
	k=0
	while [ "$k" -lt "$(json "$S/shard-$i.json" shard.work.#)" ]; do
		echo "$i $(json "$S/shard-$i.json" "shard.work.$k.shape")"
		k=$((k + 1))
	done
done | sort >"$TMP/ran"
[ -s "$TMP/plan" ] && cmp -s "$TMP/plan" "$TMP/ran" && ok "the plan names the shapes each shard tuned" ||
	not_ok "the plan names the shapes each shard tuned" "$(diff "$TMP/plan" "$TMP/ran")"
grep -q "^longest / shortest shard: [0-9.]* (modeled)$" "$TMP/out" &&
	ok "the plan gives the balance" || not_ok "the plan gives the balance" "$(cat "$TMP/out")"
for i in 1 2 3 4; do json "$S/shard-$i.json" shard.work.#; done >"$TMP/work"
awk '{s += $1; if ($1 < 1) e = 1} END {exit !(s >= 4 && !e)}' "$TMP/work" &&
	ok "every shard got work" || not_ok "every shard got work" "$(cat "$TMP/work")"

# One shard per board: more than one at a time per --sshlogin host is refused.
if command -v parallel >/dev/null 2>&1; then
	expect_exit 2 "tune-parallel.sh --sshlogin with -j 2 is refused" -- \
		sh scripts/tune-parallel.sh --sshlogin rock@b1,rock@b2 -j 2 -o "$TMP/j.json" "$SHAPES"
	expect_grep "one shard per board at a time" "$TMP/err" "the refusal says why"
fi

# --- the merged file where tuned JSONs are read ---
expect_exit 0 "the library finds every merged pair" -- "$CONSUMER" --every "$TMP/m.json"
expect_grep ' 0 missed$' "$TMP/out" "no merged pair missed"
"$CONSUMER" --seed-reader "$SHAPES" >"$TMP/seed-in" 2>&1
"$CONSUMER" --seed-reader "$TMP/m.json" >"$TMP/seed-out" 2>&1
cmp -s "$TMP/seed-in" "$TMP/seed-out" && ok "the seed backend's reader reads the merged file" ||
	not_ok "the seed backend's reader reads the merged file"
expect_exit 0 "the patched backend's reader finds the contexts" -- \
	"$CONSUMER" --patched-reader "$TMP/m.json"
expect_exit 0 "run --tuned replays the merged file" -- \
	$RKNN_BENCH --quiet run --tuned "$TMP/m.json" "$SHAPES" $RUNOPTS --format json
[ "$(json "$TMP/out" results.0.stats.median_us)" = "$(json "$TMP/m.json" pairs.0.measured.median_us)" ] &&
	ok "run --tuned reproduces the merged modeled time" ||
	not_ok "run --tuned reproduces the merged modeled time"
expect_exit 2 "a shard alone is refused by the reader, pointing at merge" -- \
	$RKNN_BENCH --quiet run --tuned "$S/shard-1.json" "$SHAPES" $RUNOPTS
expect_grep "one shard of a tune.*rknn-bench merge" "$TMP/err" "the message says to merge"

# --- idempotent, order-blind; repeats count once ---
expect_exit 0 "merge in another order with a repeated shard" -- $RKNN_BENCH merge \
	"$TMP/again.json" "$S/shard-4.json" "$S/shard-2.json" "$S/shard-1.json" "$S/shard-3.json" \
	"$S/shard-2.json"
cmp -s "$TMP/m.json" "$TMP/again.json" && ok "the same merged file, byte for byte" ||
	not_ok "the same merged file, byte for byte"
expect_grep "repeats .* counted once" "$TMP/err" "the repeat is noted"

# --- refused: a missing shard, another profile, a conflicting duplicate ---
expect_exit 2 "a missing shard" -- $RKNN_BENCH merge "$TMP/x.json" "$S/shard-1.json" \
	"$S/shard-3.json" "$S/shard-4.json"
expect_grep "shard 2 of 4 missing" "$TMP/err" "the missing shard is named"
[ ! -e "$TMP/x.json" ] && ok "nothing written on a refusal" || not_ok "nothing written"
cp configs/soc/rk3588.json "$TMP/other-board.json" # the profile is named after its file
small=$(for i in 1 2 3 4; do echo "$(json "$S/shard-$i.json" shard.work.#) $i"; done |
	sort -n | head -n 1 | cut -d' ' -f2)
expect_exit 0 "shard $small/4 on another SoC profile" -- $RKNN_BENCH --quiet tune "$SHAPES" \
	$FAST --soc "$TMP/other-board.json" --shard "$small/4" -o "$TMP/other.json"
expect_exit 2 "a shard of another profile is refused" -- $RKNN_BENCH merge "$TMP/x.json" \
	"$S/shard-1.json" "$S/shard-2.json" "$S/shard-3.json" "$S/shard-4.json" "$TMP/other.json"
expect_grep "'.*other.json' has soc .*: the shards of one tune share it" "$TMP/err" \
	"the message names the file and the key"
sed 's/"median_us":\([[:space:]]*\)\([0-9]\)/"median_us":\19\2/' "$S/shard-1.json" >"$TMP/dup.json"
expect_exit 2 "the same shard with other results is refused" -- $RKNN_BENCH merge \
	"$TMP/x.json" "$S/shard-1.json" "$TMP/dup.json" "$S/shard-2.json" "$S/shard-3.json" \
	"$S/shard-4.json"
expect_grep "both shard 1/4 of host .* with other results" "$TMP/err" "the conflict is named"

# --- two boards of one kind: majority config at the median, spread reported ---
mkdir -p "$TMP/b2"
for i in 1 2 3 4; do
	sed 's/"host":\([[:space:]]*\)"[^"]*"/"host":\1"board-two"/' "$S/shard-$i.json" \
		>"$TMP/b2/shard-$i.json"
done
expect_exit 0 "two boards merged" -- $RKNN_BENCH merge "$TMP/boards.json" "$S"/shard-?.json \
	"$TMP"/b2/shard-?.json
[ "$(json "$TMP/boards.json" merged.boards.#)" = 2 ] &&
	[ "$(json "$TMP/boards.json" pairs.0.measured.boards.#)" = 2 ] &&
	ok "both boards are kept per pair" || not_ok "both boards are kept per pair"
same_tune "$TMP/whole.json" "$TMP/boards.json" "two equal boards" \
	'.pairs[].measured.boards' '.pairs[].measured.board_spread_pct' \
	'.pairs[].rknn_matmul_api.boards' '.pairs[].rknn_matmul_api.board_spread_pct' 
# board two 50 % slower on every time of its shard 1: each of its pairs' median is the
# mean of the two boards' times
awk '/"median_us":/ {match($0, /[0-9.]+/); v = substr($0, RSTART, RLENGTH) * 1.5
	$0 = substr($0, 1, RSTART - 1) sprintf("%.3f", v) substr($0, RSTART + RLENGTH)} {print}' \
	"$TMP/b2/shard-1.json" >"$TMP/slow.json" && mv "$TMP/slow.json" "$TMP/b2/shard-1.json"
expect_exit 0 "two boards that disagree merged" -- $RKNN_BENCH merge "$TMP/boards.json" \
	"$S"/shard-?.json "$TMP"/b2/shard-?.json
expect_grep "boards disagree" "$TMP/err" "the disagreement is reported"
key=$(json "$S/shard-1.json" shard.work.0.shape)
p=0 np=$(json "$TMP/whole.json" pairs.#)
while [ "$p" -lt "$np" ] && [ "$(json "$TMP/whole.json" "pairs.$p.src0.row")x$(json "$TMP/whole.json" "pairs.$p.src0.col")x$(json "$TMP/whole.json" "pairs.$p.src1.col")" != "${key%% *}" ]; do
	p=$((p + 1))
done
us=$(json "$S/shard-1.json" "pairs.$p.measured.median_us")
got=$(json "$TMP/boards.json" "pairs.$p.measured.median_us")
spread=$(json "$TMP/boards.json" "pairs.$p.measured.board_spread_pct")
awk -v g="$got" -v u="$us" -v s="$spread" \
	'BEGIN {exit !(g > u * 1.2499 && g < u * 1.2501 && s > 39.9 && s < 40.1)}' &&
	ok "median of two boards ($us and 1.5x: $got us), spread $spread %" ||
	not_ok "the median of two boards" "got $got from $us and 1.5x, spread $spread"

# --- fewer shapes than shards: slices of one shape's space ---
ONE=$TMP/one-shape.json
echo '{"pairs": [{"src0": {"row": 1, "col": 512}, "src1": {"row": 512, "col": 1024}, "name": "up"}]}' >"$ONE"
expect_exit 0 "one shape unsharded" -- $RKNN_BENCH --quiet tune "$ONE" $FAST -o "$TMP/one.json"
for i in 1 2 3; do
	$RKNN_BENCH --quiet tune "$ONE" $FAST --shard $i/3 -o "$TMP/sl-$i.json" >/dev/null 2>&1
done
[ "$(json "$TMP/sl-2.json" shard.work.0.slice)/$(json "$TMP/sl-2.json" shard.work.0.slices)" = 1/3 ] &&
	ok "shard 2/3 of one shape is slice 1 of 3" || not_ok "shard 2/3 is slice 1 of 3"
expect_exit 0 "three slices merged" -- $RKNN_BENCH merge "$TMP/slices.json" "$TMP"/sl-?.json
# Each slice runs the best --top of its own configs: together they run more than one
# tune (checked below), so the counts of configs run and not run are left out. So is
# the count of configs modeled: a config is skipped unmodeled when its lower bound is
# above the best so far (tune/search.c), and each slice has a best of its own.
MODELED=".pairs[].measured.configs_modeled"
SLICE_COUNTS=".pairs[].measured.configs_run .pairs[].measured.configs_not_run $MODELED"
# shellcheck disable=SC2086
same_tune "$TMP/one.json" "$TMP/slices.json" "3 slices merged" $SLICE_COUNTS
a=$(json "$TMP/one.json" pairs.0.measured.configs_run)
b=$(json "$TMP/slices.json" pairs.0.measured.configs_run)
[ "$b" -ge "$a" ] && ok "the slices ran at least as many configs as the unsharded tune ($b >= $a)" ||
	not_ok "the slices ran at least the unsharded tune's configs" "$b < $a"
a=$(json "$TMP/one.json" pairs.0.measured.configs_in_space)
b=$(json "$TMP/slices.json" pairs.0.measured.configs_in_space)
[ "$a" = "$b" ] && ok "the slices cover the space ($a configs)" ||
	not_ok "the slices cover the space" "$a vs $b"
expect_exit 2 "a missing slice is refused" -- $RKNN_BENCH merge "$TMP/x.json" \
	"$TMP/sl-1.json" "$TMP/sl-3.json"

# --- --target ggml-rknn: one shape pinned to several cores goes to one shard ---
GG=$TMP/ggml.json
GOPTS="--device sim --iters 1 --warmup 0 --verify sample --top 1 --target ggml-rknn"
$RKNN_BENCH shapes --arch llama --embd 256 --ff 512 --layers 1 --heads 4 --heads-kv 2 \
	--vocab 512 --tokens 1 --for ggml-rknn -o "$GG" 2>/dev/null
expect_exit 0 "ggml-rknn slices unsharded" -- $RKNN_BENCH --quiet tune "$GG" $GOPTS \
	-o "$TMP/gg.json"
for i in 1 2; do
	$RKNN_BENCH --quiet tune "$GG" $GOPTS --shard $i/2 -o "$TMP/gg-$i.json" >/dev/null 2>&1
done
expect_exit 0 "ggml-rknn: 2 shards merged (a shape's cores in one shard)" -- \
	$RKNN_BENCH merge "$TMP/gg-m.json" "$TMP/gg-1.json" "$TMP/gg-2.json"
same_tune "$TMP/gg.json" "$TMP/gg-m.json" "ggml-rknn: 2 shards merged"

# --- the merged cache resumes a whole tune without measuring ---
expect_exit 0 "an unsharded tune on the merged cache" -- $RKNN_BENCH tune "$SHAPES" $FAST \
	--cache "$TMP/m.json.cache.jsonl" -o "$TMP/resumed.json"
expect_grep "resuming from" "$TMP/err" "it resumes"
# The resumed tune counts as modeled every config its cache holds a model record of,
# and the shards' records were pruned against other bests than one whole tune's.
same_tune "$TMP/whole.json" "$TMP/resumed.json" "resumed from the merged cache" "$MODELED"

# --- Slurm: the array and the merge job, through a stand-in sbatch ---
mkdir -p "$TMP/bin"
cat >"$TMP/bin/sbatch" <<'EOF'
#!/bin/sh
# A stand-in for Slurm's sbatch: runs an --array job's tasks one by one, or a --wrap
# command, at once (the dependency is met by running in order).
array= wrap=
while [ $# -gt 0 ]; do
	case $1 in
	--array=*) array=${1#--array=} ;;
	--wrap) wrap=$2; shift ;;
	--parsable | --job-name=* | --output=* | --export=* | --dependency=*) ;;
	*) break ;;
	esac
	shift
done
if [ -n "$wrap" ]; then sh -c "$wrap" >&2 || exit 1; echo 2; exit 0; fi
i=${array%-*}
while [ "$i" -le "${array#*-}" ]; do
	SLURM_ARRAY_TASK_ID=$i "$@" >&2 || exit 1
	i=$((i + 1))
done
echo 1
EOF
chmod +x "$TMP/bin/sbatch"
expect_exit 0 "tune-slurm.sh submits the array and the merge" -- env PATH="$TMP/bin:$PATH" \
	sh scripts/tune-slurm.sh -n 2 --bin "$RKNN_BENCH" -o "$TMP/slurm.json" "$ONE" -- $FAST
expect_grep "array job 1: 2 shards" "$TMP/out" "it prints the array job"
# shellcheck disable=SC2086
same_tune "$TMP/one.json" "$TMP/slurm.json" "Slurm's 2 shards merged" $SLICE_COUNTS
echo "1..$n"
