# End-to-end tests of `rknn-bench plan`: plans print, JSON parses and adds up, bad
# configs exit 2 naming the constraint.
. tests/e2e/lib.sh

# Text plans of decode and prefill shapes with the default config: the model-guided
# default, which lists the candidates it ranked and marks the one it chose.
expect_exit 0 "plan 1x2048x8192" -- $RKNN_BENCH plan --shape 1x2048x8192
expect_grep '^  config  mask=0x7 split=n:1,1,1 align=16 banks=[0-9]+:[0-9]+ kslice=[0-9]+ res=resident chain=1 out=fp32 mainline=0 wreuse=1$' \
	"$TMP/out" "text shows the planned config"
expect_grep '^  ranked  [0-9]+ candidates by the timing model \(modeled;' "$TMP/out" "the ranked candidates are listed"
expect_grep '^    split=auto banks=0:0 kslice=auto launch=[a-z]+: [0-9.]+ \+ [0-9.]+ host us' "$TMP/out" \
	"the planner's own auto config is the first candidate"
chosen=$(grep -c ' (chosen)$' "$TMP/out")
[ "$chosen" -eq 1 ] && ok "one candidate is chosen" || not_ok "one candidate is chosen" "found $chosen"
ranked_cfg=$(sed -n 's/^    split=\([a-z]*\) banks=\([0-9]*\):\([0-9]*\) kslice=\([a-z0-9]*\) .*(chosen)$/\1 \2 \3 \4/p' "$TMP/out")
set -- $ranked_cfg
[ "$4" = auto ] && ks=0 || ks=$4
expect_exit 0 "plan the chosen candidate by flags" -- $RKNN_BENCH plan --shape 1x2048x8192 \
	--split "$1" --data-banks "$2" --weight-banks "$3" --k-slice "$ks"
grep -q '^  ranked' "$TMP/out" && not_ok "config flags plan without ranking" "a ranking was listed" ||
	ok "config flags plan without ranking"
cp "$TMP/out" "$TMP/flags.txt"
expect_exit 0 "plan 1x2048x8192 again" -- $RKNN_BENCH plan --shape 1x2048x8192
grep -v '^  ranked\|^    split=' "$TMP/out" | diff - "$TMP/flags.txt" >/dev/null &&
	ok "the default is the chosen candidate's plan" ||
	not_ok "the default is the chosen candidate's plan" "plans differ"
expect_grep '^  core 2  n \[[0-9]+,8192\): ' "$TMP/out" "core 2 ends at N"
expect_grep '^  total   [0-9]+ tasks, 3 submits' "$TMP/out" "totals with one submit per core"
expect_exit 0 "plan 512x2048x8192" -- $RKNN_BENCH plan --shape 512x2048x8192 --tasks 0
expect_grep '^    [0-9]+ +\[[0-9]+,512\) ' "$TMP/out" "--tasks 0 lists the last M tile"
expect_exit 0 "plan the seed shapes file" -- $RKNN_BENCH plan configs/mat_kernel_size.json
plans=$(grep -c '^plan ' "$TMP/out")
[ "$plans" -eq 3 ] && ok "one plan per unique seed shape" || not_ok "one plan per unique seed shape" "found $plans"
expect_exit 0 "plan int8 on cores 0 and 2, split M 2:1" -- \
	$RKNN_BENCH plan --shape 3000x100x70 --dtype int8 --core-mask 0x5 --split m --split-weights 2,1 --align 64
expect_grep '^  core 0  m \[0,1984\)' "$TMP/out" "weighted M cut on a 64-row multiple"
expect_grep '^  core 2  m \[1984,3000\)' "$TMP/out" "core 2 takes the rest"
expect_grep 'out=int32' "$TMP/out" "int8 gives int32"

# Streamed weights are planned but marked unproven.
expect_exit 0 "streamed plan" -- $RKNN_BENCH plan --shape 1x8192x8192 --core-mask 1 --residency streamed
expect_grep 'unproven on silicon' "$TMP/out" "streamed plan marked unproven"
expect_grep '^  total   1 task, 1 submit;' "$TMP/out" "MTX's single task"

# JSON: parses, carries the documented fields, bytes add up.
# --k-slice 0 (auto) is a config flag: the planner's own choice, not the model's.
expect_exit 0 "plan --format json" -- $RKNN_BENCH plan --shape 512x2048x8192 --shape 1x20000x100 --format json --k-slice 0
cp "$TMP/out" "$TMP/plan.json"
expect_exit 0 "json output parses" -- "$JSONCHECK" "$TMP/plan.json"
check_field() { # path expected
	got=$("$JSONCHECK" "$TMP/plan.json" "$1" 2>&1)
	[ "$got" = "$2" ] && ok "json $1 = $2" || not_ok "json $1 = $2" "got '$got'"
}
check_field schema rknn-bench/1
check_field results.# 2
check_field results.0.shape.m 512
check_field results.0.settings.core_mask 7
check_field results.0.settings.axis n
check_field results.0.cores.# 3
check_field results.0.cores.2.end 8192
check_field results.0.buffers.a_bytes 2097152
check_field results.0.unproven_on_silicon true
check_field results.1.padded.k 20000
check_field results.1.k_slices 3
check_field results.1.cores.0.tasks.0.k 6688
tasks=$("$JSONCHECK" "$TMP/plan.json" results.0.totals.tasks)
sum=0
for c in 0 1 2; do
	sum=$((sum + $("$JSONCHECK" "$TMP/plan.json" results.0.cores.$c.task_count)))
done
[ "$sum" -eq "$tasks" ] && ok "core task counts add up to the total" ||
	not_ok "core task counts add up to the total" "$sum != $tasks"
listed=$("$JSONCHECK" "$TMP/plan.json" results.0.cores.1.tasks.#)
count=$("$JSONCHECK" "$TMP/plan.json" results.0.cores.1.task_count)
[ "$listed" = "$count" ] && ok "json lists every task" || not_ok "json lists every task" "$listed != $count"

# The compact config string is accepted back and gives the same plan.
cfg=$("$JSONCHECK" "$TMP/plan.json" results.0.config)
expect_exit 0 "--config with the planned config" -- $RKNN_BENCH plan --shape 512x2048x8192 --format json --config "$cfg"
got=$("$JSONCHECK" "$TMP/out" results.0.config 2>&1)
[ "$got" = "$cfg" ] && ok "replayed config plans the same" || not_ok "replayed config plans the same" "'$got' != '$cfg'"

# Bad configs: exit 2, the constraint named.
bad() { # description pattern args...
	desc=$1
	pat=$2
	shift 2
	expect_exit 2 "$desc" -- $RKNN_BENCH plan --shape 1x2048x8192 "$@"
	expect_grep "$pat" "$TMP/err" "$desc: message names it"
}
bad "banks over 12" "data banks 6 \+ weight banks 8 = 14 exceed the 12 CBUF banks" --data-banks 6 --weight-banks 8
bad "core mask 0" "core mask '0' must be 0x1 to 0x7" --core-mask 0
bad "core mask 0x8" "core mask '0x8' must be 0x1 to 0x7" --core-mask 0x8
bad "too few weights" "split weights: 2 given for 3 cores" --split-weights 2,1
bad "int8 align 16" "alignment 16 is not a multiple of the int8 kernel group" --dtype int8 --align 16
bad "align 48" "alignment '48' must be 16, 32, 64" --align 48
bad "k-slice not a multiple of 32" "k-slice '100' must be 0 \(auto\) or a multiple of 32" --k-slice 100
bad "k-slice over the field" "k-slice 20000 exceeds 16384 channels" --k-slice 20000
bad "weight banks too few" "weight banks 1 cannot hold one kernel group of 16 kernels x 2048 fp16 channels" \
	--k-slice 2048 --weight-banks 1
bad "int32 from fp16" "output int32 needs int8 input" --out int32
bad "residency" "residency 'sometimes' must be resident or streamed" --residency sometimes
bad "config string key" "config key 'bogus' is unknown" --config "mask=0x7 bogus=1"
bad "format" "--format 'xml' must be text or json" --format xml
expect_exit 2 "4 GiB" -- $RKNN_BENCH plan --shape 4096x65536x65536
expect_grep "more than the 4 GiB \(4294967296 bytes\) NPU address space" "$TMP/err" "4 GiB limit named"
expect_exit 2 "no shape" -- $RKNN_BENCH plan
expect_exit 2 "bad shape" -- $RKNN_BENCH plan --shape 1x2
expect_exit 0 "plan --help" -- $RKNN_BENCH plan --help
expect_grep '--split-weights' "$TMP/out" "help documents the config flags"
