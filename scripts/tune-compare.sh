#!/bin/sh
# Compares `tune --strategy model` (--top 8) with `--strategy exhaustive` on shapes
# files: one line per unique shape with both tuned times and their ratio, then the
# worst ratio. Slow (exhaustive verifies and times every config of the default space);
# both runs keep their caches in OUTDIR, so an interrupted comparison resumes.
#
#   sh scripts/tune-compare.sh [-d DEVICE] OUTDIR SHAPES.json...
set -eu
BIN=${RKNN_BENCH:-build/rknn-bench}
JSONCHECK=${JSONCHECK:-build/tests/jsoncheck}
device=sim
if [ "${1:-}" = -d ]; then device=$2; shift 2; fi
[ $# -ge 2 ] || { echo "usage: $0 [-d DEVICE] OUTDIR SHAPES.json..." >&2; exit 2; }
out=$1
shift
mkdir -p "$out"
for f in "$@"; do
	b=$out/$(basename "$f" .json)
	for s in model exhaustive; do
		t0=$(date +%s)
		"$BIN" tune "$f" --device "$device" --strategy $s --quiet -o "$b.$s.json" >/dev/null
		echo "# $f: $s took $(($(date +%s) - t0)) s"
	done
done
printf '%-28s %-16s %12s %12s %8s\n' file shape model_us exhaustive_us ratio
for f in "$@"; do
	b=$out/$(basename "$f" .json)
	n=$("$JSONCHECK" "$b.model.json" pairs.#)
	i=0
	while [ "$i" -lt "$n" ]; do
		shape=$("$JSONCHECK" "$b.model.json" pairs.$i.src0.row)x$("$JSONCHECK" "$b.model.json" pairs.$i.src0.col)x$("$JSONCHECK" "$b.model.json" pairs.$i.src1.col)
		m=$("$JSONCHECK" "$b.model.json" pairs.$i.measured.median_us)
		e=$("$JSONCHECK" "$b.exhaustive.json" pairs.$i.measured.median_us)
		echo "$(basename "$f") $shape $m $e"
		i=$((i + 1))
	done
done | sort -u -k1,2 | awk '{ r = $3 / $4; if (r > worst) worst = r
	printf "%-28s %-16s %12.1f %12.1f %8.4f\n", $1, $2, $3, $4, r }
	END { printf "worst model/exhaustive: %.4f (%s)\n", worst, worst <= 1.03 ? "within 3 %" : "MORE than 3 %" }'
