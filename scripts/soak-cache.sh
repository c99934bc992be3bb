#!/bin/sh
# Concurrency soak of the tune cache: four `tune` processes on one cache, killed (SIGKILL)
# and restarted at random for DURATION seconds, then one more run to the end; the tuned
# JSON must equal that of an undisturbed tune (configs and modeled times, pair for pair).
#
#   scripts/soak-cache.sh [DURATION_S] [WORKDIR]      (default 600 s, build/soak)
#
# The cache is locked while a tune holds it, so the others are refused at once (exit 2)
# and restarted; every kill leaves at most a cut-off last line, which the next run drops.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/rknn-bench
JSONCHECK=$ROOT/build/tests/jsoncheck
DURATION=${1:-600}
WORK=${2:-$ROOT/build/soak}
SHAPES=$ROOT/configs/regression.json
ARGS="--device sim --iters 3 --warmup 0 --verify sample --quiet"
rm -rf "$WORK"
mkdir -p "$WORK"
"$BIN" tune "$SHAPES" $ARGS -o "$WORK/ref.json" >/dev/null 2>&1 || { echo "reference tune failed"; exit 1; }

started=0 killed=0 refused=0 finished=0
pids=""
start=$(date +%s)
rnd() { od -An -N2 -tu2 /dev/urandom | tr -d ' '; }
while [ $(($(date +%s) - start)) -lt "$DURATION" ]; do
	alive=""
	for p in $pids; do
		if kill -0 "$p" 2>/dev/null; then alive="$alive $p"; else
			wait "$p"
			case $? in 0) finished=$((finished + 1)) ;; 2) refused=$((refused + 1)) ;; esac
		fi
	done
	pids=$alive
	while [ "$(echo $pids | wc -w)" -lt 4 ]; do
		"$BIN" tune "$SHAPES" $ARGS -o "$WORK/soak.json" >/dev/null 2>&1 &
		pids="$pids $!"
		started=$((started + 1))
	done
	sleep "0.$(($(rnd) % 9 + 1))"
	victim=$(echo $pids | tr ' ' '\n' | sed -n "$(($(rnd) % 4 + 1))p")
	kill -KILL "$victim" 2>/dev/null && killed=$((killed + 1))
	# a finished tune leaves a complete file: start over so that kills keep landing mid-run
	[ -e "$WORK/soak.json" ] && rm -f "$WORK/soak.json"
done
for p in $pids; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
"$BIN" tune "$SHAPES" $ARGS -o "$WORK/soak.json" >/dev/null 2>"$WORK/final.err" ||
	{ echo "the final run failed:"; cat "$WORK/final.err"; exit 1; }
n=$("$JSONCHECK" "$WORK/ref.json" pairs.#) same=0 i=0
while [ "$i" -lt "$n" ]; do
	for f in tuned.config tuned.launch measured.median_us; do
		[ "$("$JSONCHECK" "$WORK/ref.json" pairs.$i.$f)" = "$("$JSONCHECK" "$WORK/soak.json" pairs.$i.$f)" ] ||
			{ echo "pair $i: $f differs"; continue 2; }
	done
	same=$((same + 1))
	i=$((i + 1))
done
echo "soak: $DURATION s, $started tunes started, $killed killed, $refused refused (cache in use)," \
	"$finished finished; cache $(wc -l <"$WORK/soak.json.cache.jsonl") lines;" \
	"$same of $n pairs identical to the undisturbed tune"
[ "$same" -eq "$n" ]
