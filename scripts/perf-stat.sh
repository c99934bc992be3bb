#!/bin/sh
# perf stat around rknn-bench: `perf stat -r N` of a run that repeats only one timed
# section, so that the counters describe that phase (plus the process's fixed setup:
# inputs, engine open, pack B, one full run; see what a --iters 1 run costs to subtract).
#
#   sh scripts/perf-stat.sh [options] SHAPES [PERF_STAT_ARGS...]
set -eu

usage() {
	cat <<EOF
usage: scripts/perf-stat.sh [options] SHAPES [PERF_STAT_ARGS...]

Runs 'perf stat -r N PERF_STAT_ARGS -- rknn-bench run SHAPES --iters I --no-verify
--phase PHASE'. SHAPES is a shapes JSON file or one shape MxKxN (fp16).
perf stat's counters go to stderr; rknn-bench's report is discarded (run it alone,
or with --perf, to see it).

options:
  -p, --phase PHASE   pack (pack A), submit (submit + wait) or all (whole runs,
                      the default); pack and submit need an NPU device
  -i, --iters N       repetitions of the phase per process (default 100)
  -r, --repeat N      perf stat -r: processes measured (default \$PERF_REPEAT or 5)
  -d, --device NAME   rknn-bench --device (default sim)
  -h, --help          this text

environment: RKNN_BENCH (the binary, default build/rknn-bench, else rknn-bench on PATH),
PERF (default perf).
Exit codes: 0 ok, 2 usage error, 3 perf is missing, else perf stat's or rknn-bench's.
example: scripts/perf-stat.sh --phase submit 1x2048x8192 -e task-clock,page-faults
EOF
}

die() {
	echo "perf-stat.sh: $1" >&2
	exit "${2:-2}"
}

count() { # option value
	case $2 in
	'' | *[!0-9]*) die "$1 '$2' is not a positive integer; see --help" ;;
	esac
	[ "$2" -ge 1 ] || die "$1 '$2' is not a positive integer; see --help"
}

# The checkout's build, else (installed under PREFIX/share/rknn-bench/scripts) the
# rknn-bench on PATH.
if [ -n "${RKNN_BENCH:-}" ]; then BIN=$RKNN_BENCH
elif [ -x build/rknn-bench ]; then BIN=build/rknn-bench
else BIN=$(command -v rknn-bench || echo build/rknn-bench); fi
PERF=${PERF:-perf}
phase=all
iters=100
repeat=${PERF_REPEAT:-5}
device=sim
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	-p | --phase) [ $# -ge 2 ] || die "$1 needs a value"; phase=$2; shift 2 ;;
	-i | --iters) [ $# -ge 2 ] || die "$1 needs a value"; iters=$2; shift 2 ;;
	-r | --repeat) [ $# -ge 2 ] || die "$1 needs a value"; repeat=$2; shift 2 ;;
	-d | --device) [ $# -ge 2 ] || die "$1 needs a value"; device=$2; shift 2 ;;
	--) shift; break ;;
	-*) die "unknown option '$1'; see --help" ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || die "no SHAPES given; see --help"
shapes=$1
shift
case $phase in pack | submit | all) ;; *) die "--phase '$phase' is not pack, submit or all" ;; esac
count --iters "$iters"
count --repeat "$repeat"
command -v "$PERF" >/dev/null 2>&1 ||
	die "'$PERF' not found: install perf (Debian: linux-perf, Ubuntu: linux-tools-\$(uname -r))" 3
[ -x "$BIN" ] || die "rknn-bench not found at '$BIN': build it (make) or set RKNN_BENCH"
if "$PERF" stat -e instructions true 2>&1 | grep -q 'not supported'; then
	echo "perf-stat.sh: note: no hardware counters here (cycles, instructions: <not supported>;" \
		"a VM without a virtual PMU?): only software events count" >&2
fi

# A shape on the command line becomes --shape; a file is a shapes file.
if [ -f "$shapes" ]; then
	set -- "$@" -- "$BIN" run "$shapes"
else
	case $shapes in
	*[!0-9x]* | x* | *x | *xx*) die "SHAPES '$shapes' is neither a file nor MxKxN" ;;
	esac
	set -- "$@" -- "$BIN" run --shape "$shapes"
fi
exec "$PERF" stat -r "$repeat" "$@" --device "$device" --iters "$iters" --no-verify \
	--phase "$phase" >/dev/null
