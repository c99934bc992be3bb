#!/bin/sh
# Tune a shapes file in N shards with GNU parallel, on this machine or over ssh on a
# farm of boards, then join the shards with `rknn-bench merge` (docs/scale-out.md).
#
# usage: scripts/tune-parallel.sh [options] SHAPES.json [-- TUNE OPTIONS...]
#   -n N            shards (default: the jobs, or the number of --sshlogin entries)
#   -j J            shards running at once on this machine (default: its cores); with
#                   --sshlogin always one per board (see below)
#   -o OUT.json     the merged tuned JSON (default tuned.json); its cache is
#                   OUT.json.cache.jsonl, the shards' files are in OUT.json.shards/
#   --sshlogin L    run the shards on these hosts (GNU parallel's --sshlogin: a
#                   comma-separated list, e.g. rock@board1,rock@board2, one entry per
#                   board), each with rknn-bench installed; the shapes file is sent, the
#                   results fetched. One shard per board at a time: two tunes on one
#                   NPU kill each other's jobs (the vendor driver's cleanup)
#   --bin PATH      the rknn-bench to run (default: build/rknn-bench beside this
#                   script if built, else rknn-bench on PATH; on boards: on their PATH)
# Whatever follows -- goes to every `rknn-bench tune` (e.g. --device sim --top 4).
# Exit: 0 merged, 1 a shard or the merge failed (the joblog and logs say which), 2 usage.
set -eu

usage() { sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; }
die() { echo "tune-parallel: $*" >&2; exit 2; }

n= jobs= out=tuned.json logins= bin= shapes=
while [ $# -gt 0 ]; do
	case $1 in
	-n) n=${2:?}; shift 2 ;;
	-j) jobs=${2:?}; shift 2 ;;
	-o) out=${2:?}; shift 2 ;;
	--sshlogin) logins=${2:?}; shift 2 ;;
	--bin) bin=${2:?}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; break ;;
	-*) die "unknown option '$1' (see --help)" ;;
	*) [ -z "$shapes" ] || die "one shapes file, not '$shapes' and '$1'"; shapes=$1; shift ;;
	esac
done
[ -n "$shapes" ] || die "give a shapes file (see --help)"
[ -r "$shapes" ] || die "cannot read '$shapes'"
command -v parallel >/dev/null 2>&1 ||
	die "GNU parallel is not installed (Debian: apt-get install parallel)"

if [ -z "$bin" ]; then
	here=$(dirname "$0")/..
	if [ -z "$logins" ] && [ -x "$here/build/rknn-bench" ]; then bin=$here/build/rknn-bench
	else bin=rknn-bench; fi
fi
if [ -n "$logins" ]; then
	# One tune per board at a time. On each non-blocking submit the vendor driver drops
	# every job on the core older than its timeout, the timeout's milliseconds counted as
	# microseconds (6000 ms: 6 ms): a second tune on the NPU kills the first one's jobs
	# and the NPU is reset under both (docs/scale-out.md).
	# GNU parallel's --jobs counts per host; "1/host" also tells it the host takes one.
	[ "${jobs:-1}" = 1 ] ||
		die "-j $jobs with --sshlogin: one shard per board at a time (docs/scale-out.md)"
	jobs=1
	logins=$(echo "$logins" | tr ',' '\n' | sed '/^$/d; s#^[0-9]*/##; s#^#1/#' | paste -sd, -)
	boards=$(echo "$logins" | tr ',' '\n' | grep -c .)
	n=${n:-$boards}
else
	jobs=${jobs:-$(nproc 2>/dev/null || echo 2)}
	n=${n:-$jobs}
fi
case $n in '' | *[!0-9]* | 0) die "-n '$n' must be a positive number" ;; esac

dir=$out.shards
mkdir -p "$dir"
rm -f "$dir"/shard-*.json "$dir"/shard-*.json.cache.jsonl

# Each shard writes shard-I.json and its cache beside it; merge finds the cache there.
if [ -n "$logins" ]; then
	# On the boards: a temporary work directory per job, the shapes file sent into it,
	# the two result files brought back (into $dir, as their relative names say).
	cp "$shapes" "$dir/shapes.json"
	(cd "$dir" && parallel --jobs "$jobs" --sshlogin "$logins" --workdir ... \
		--transferfile shapes.json --return shard-{}.json \
		--return shard-{}.json.cache.jsonl --cleanup --joblog joblog --halt never -q \
		"$bin" --quiet tune shapes.json --shard {}/"$n" -o shard-{}.json "$@" \
		::: $(seq 1 "$n")) || failed=$?
else
	parallel --jobs "$jobs" --joblog "$dir/joblog" --halt never -q \
		sh -c 'exec "$@" >"$0" 2>&1' "$dir/shard-{}.log" \
		"$bin" --quiet tune "$shapes" --shard {}/"$n" -o "$dir/shard-{}.json" "$@" \
		::: $(seq 1 "$n") || failed=$?
fi
if [ "${failed:-0}" -ne 0 ]; then
	echo "tune-parallel: $failed of $n shards failed: see $dir/joblog and $dir/shard-*.log" >&2
	exit 1
fi
set -- # the tune options are spent: the shards' files now
i=1
while [ "$i" -le "$n" ]; do
	set -- "$@" "$dir/shard-$i.json"
	i=$((i + 1))
done
"$bin" merge --cache "$out.cache.jsonl" "$out" "$@" || exit 1
