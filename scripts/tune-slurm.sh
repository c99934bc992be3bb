#!/bin/sh
# Tune a shapes file in N shards as a Slurm job array, then join them with a merge job
# that waits for the array (docs/scale-out.md).
#
# usage: scripts/tune-slurm.sh [-n N] [-o OUT.json] [--bin PATH] [--sbatch "ARGS"]
#                              SHAPES.json [-- TUNE OPTIONS...]
#   -n N           shards, one array task each (default 4)
#   -o OUT.json    the merged tuned JSON (default tuned.json); shards in OUT.json.shards/
#   --bin PATH     rknn-bench as the compute nodes see it (default: rknn-bench on PATH)
#   --sbatch ARGS  more sbatch options for both jobs (partition, time, account...)
# Run it on the login node: it submits the array (this script again, as each task) and
# the merge job (--dependency=afterok on the array), and prints both job ids. Paths must
# be on a file system the nodes share. Each task runs
#   rknn-bench --quiet tune SHAPES --shard $SLURM_ARRAY_TASK_ID/N -o OUT.json.shards/shard-I.json
# Exit: 0 submitted, 1 sbatch failed, 2 usage.
set -eu

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "tune-slurm: $*" >&2; exit 2; }

# An array task: the environment says which shard (set by the submission below).
if [ -n "${SLURM_ARRAY_TASK_ID:-}" ] && [ -n "${RB_SLURM_SHAPES:-}" ]; then
	exec "$RB_SLURM_BIN" --quiet tune "$RB_SLURM_SHAPES" \
		--shard "$SLURM_ARRAY_TASK_ID/$RB_SLURM_SHARDS" \
		-o "$RB_SLURM_DIR/shard-$SLURM_ARRAY_TASK_ID.json" "$@"
fi

n=4 out=tuned.json bin=rknn-bench extra= shapes=
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=${2:?}; shift 2 ;;
	-o) out=${2:?}; shift 2 ;;
	--bin) bin=${2:?}; shift 2 ;;
	--sbatch) extra=${2?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) [ -z "$shapes" ] || die "one shapes file, not '$shapes' and '$1'"; shapes=$1; shift ;;
	esac
done
[ -n "$shapes" ] || die "give a shapes file (see --help)"
[ -r "$shapes" ] || die "cannot read '$shapes'"
case $n in '' | *[!0-9]* | 0) die "-n '$n' must be a positive number" ;; esac
command -v sbatch >/dev/null 2>&1 || die "sbatch not found: run this on a Slurm login node"

dir=$out.shards
mkdir -p "$dir"
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
RB_SLURM_SHAPES=$(abs "$shapes") RB_SLURM_DIR=$(abs "$dir") RB_SLURM_SHARDS=$n RB_SLURM_BIN=$bin
export RB_SLURM_SHAPES RB_SLURM_DIR RB_SLURM_SHARDS RB_SLURM_BIN

# shellcheck disable=SC2086 # $extra holds several sbatch options
array=$(sbatch --parsable $extra --job-name=rknn-bench-tune --array="1-$n" \
	--output="$dir/shard-%a.log" --export=ALL "$0" "$@") || exit 1
array=${array%%;*}
set --
i=1
while [ "$i" -le "$n" ]; do
	set -- "$@" "$RB_SLURM_DIR/shard-$i.json"
	i=$((i + 1))
done
out_abs=$(abs "$out")
merge_cmd="\"$bin\" merge --cache \"$out_abs.cache.jsonl\" \"$out_abs\""
for f in "$@"; do merge_cmd="$merge_cmd \"$f\""; done
# shellcheck disable=SC2086
merge=$(sbatch --parsable $extra --job-name=rknn-bench-merge --dependency="afterok:$array" \
	--output="$dir/merge.log" --wrap "$merge_cmd") || exit 1
echo "array job $array: $n shards -> $dir/shard-*.json"
echo "merge job ${merge%%;*} (after the array) -> $out"
