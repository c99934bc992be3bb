#!/bin/sh
# Runs every test of `make check` and ends with the line "N passed, N failed".
#
# Usage: BUILD=build sh tests/run-tests.sh UNIT_TEST_BINARY...
# Unit tests are cmocka binaries run with TAP output; end-to-end tests are the
# tests/e2e/*.sh scripts, which also print TAP ("ok"/"not ok" lines). A binary or
# script that dies without reporting counts as one failure.
# E2E: the end-to-end scripts to run, by name (e.g. E2E="run sim"); unset: all of them.
# JOBS tests run at once (default: the number of CPUs). Most tests use one core, and each
# works in its own temporary folder, so on two cores the suite takes about half the wall
# time; the report comes in a fixed order whatever finished first.
# TEST_TIMES=FILE: the wall time of every test, "MILLISECONDS NAME" per line, is written
# to FILE too (scripts/test-times.sh compares two commits with it). TEST_CPU_TIMES=FILE:
# the same with each test's CPU time (user + system of all its processes), which, unlike
# the wall time, does not grow when other work shares the machine.
# RUNNER runs the built programs of another architecture, e.g. RUNNER="qemu-aarch64 -L /"
# (make check-aarch64): every program of $BUILD is then reached through a wrapper script,
# so the tests themselves stay unchanged.
BUILD=${BUILD:-build}
RUNNER=${RUNNER:-}
JOBS=${JOBS:-$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)}
export BUILD RUNNER

# run_one RESULTS NAME COMMAND...: runs one test; its TAP lines, failures and wall time
# go to RESULTS/NAME.*.
# cmocka reports a skipped test as "not ok N # SKIP" (a kernel family this CPU lacks):
# counted apart, never as a failure.
SKIPPED='^not ok [0-9]* # SKIP'
if [ "${1:-}" = --one ]; then
	results=$2 name=$3
	shift 3
	out=$results/$name.out
	start=$(date +%s%N)
	"$@" >"$out" 2>&1
	rc=$?
	echo "$((($(date +%s%N) - start) / 1000000)) $name" >"$results/$name.time"
	# `times`' second line: the children's user and system time, as "0m1.230s 0m0.450s"
	# (run in this shell: in a pipeline it would report a subshell's children).
	times >"$results/$name.times"
	sed -n 2p "$results/$name.times" | tr 'ms' '  ' | awk -v name="$name" \
		'{ printf "%d %s\n", (($1 + $3) * 60 + $2 + $4) * 1000, name }' >"$results/$name.cpu"
	{
		grep -E '^not ok ' "$out" | grep -v "$SKIPPED" | sed "s|^|FAIL $name: |"
		if [ "$rc" -ne 0 ] && ! grep -E '^not ok ' "$out" | grep -qv "$SKIPPED"; then
			echo "not ok - $name exited with status $rc"
			tail -n 20 "$out"
		elif ! grep -qE '^(not )?ok ' "$out"; then
			echo "not ok - $name reported no test"
			tail -n 20 "$out"
		fi
	} >"$results/$name.report"
	grep -E '^(not )?ok ' "$out" | sed "s|^|$name: |" >"$results/$name.tap"
	grep -E '^not ok - ' "$results/$name.report" >>"$results/$name.tap"
	cat "$results/$name.report"
	exit 0
fi

results=$(mktemp -d)
wrappers=$(mktemp -d)
trap 'rm -rf "$results" "$wrappers"' EXIT
# A test stopped by Ctrl-C is not reported as a failure of the suite: the suite stops.
trap 'exit 130' INT TERM

# wrap PROGRAM: prints the path to run PROGRAM with (itself when there is no RUNNER).
# Under a RUNNER, a preload library reaches the program through lib.sh's `preload`.
wrap() {
	[ -n "$RUNNER" ] || { echo "$1"; return; }
	case $1 in /*) prog=$1 ;; *) prog=$PWD/$1 ;; esac
	w="$wrappers/$(echo "$1" | tr / _)"
	printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$RUNNER" "$prog" >"$w"
	chmod +x "$w"
	echo "$w"
}
RKNN_BENCH=$(wrap "$BUILD/rknn-bench")
JSONCHECK=$(wrap "$BUILD/tests/jsoncheck")
CONSUMER=$(wrap "$BUILD/tests/consumer")
export RKNN_BENCH JSONCHECK CONSUMER

# The queue: one line "NAME COMMAND..." per test. The end-to-end scripts come first:
# they are the long ones, and starting them early keeps both workers busy to the end.
queue=$results/queue
: >"$queue"
for t in tests/e2e/*.sh; do
	case $(basename "$t") in lib*.sh) continue ;; esac # sourced by the tests
	[ -f "$t" ] || continue
	if [ -n "${E2E+set}" ]; then
		case " $E2E " in *" $(basename "$t" .sh) "*) ;; *) continue ;; esac
	fi
	echo "$(basename "$t" .sh) sh $t" >>"$queue"
done
for t in "$@"; do
	echo "$(basename "$t") $(wrap "$t")" >>"$queue"
done

# The longest tests start first, so that no worker is left with one of them at the end
# (on 2 cores, make check's wall time is at least its longest test's): these took the
# most CPU time on 2026-11-28 (tuned_roundtrip 165 s, tuned_roundtrip_models 115 s,
# calibrate 20, shard 19, tune 17, sim 12). The report keeps the queue's order.
LONGEST="tuned_roundtrip tuned_roundtrip_models calibrate shard tune sim"
awk -v long="$LONGEST" 'BEGIN { n = split(long, l, " "); for (i = 1; i <= n; i++) rank[l[i]] = i }
	$1 in rank { first[rank[$1]] = $0; next }
	{ rest[++r] = $0 }
	END { for (i = 1; i <= n; i++) if (i in first) print first[i]
	      for (i = 1; i <= r; i++) print rest[i] }' "$queue" >"$results/order"
# Each line's words become the arguments of one `--one` run (no name or path has spaces).
CMOCKA_MESSAGE_OUTPUT=TAP xargs -P "$JOBS" -L 1 sh "$0" --one "$results" <"$results/order"

log=$results/all.tap
: >"$log"
while read -r name _; do
	cat "$results/$name.tap" >>"$log" 2>/dev/null ||
		echo "not ok - $name did not run" | tee -a "$log"
done <"$queue"

[ -z "${E2E+set}" ] || echo "end-to-end scripts: only E2E=\"$E2E\""
# The slowest tests, so a suite that grows past its time budget shows where.
echo "slowest (wall seconds, $JOBS at once; CPU seconds):"
cat "$results"/*.time | sort -k2 >"$results/wall.sorted"
cat "$results"/*.cpu | sort -k2 | join -1 2 -2 2 "$results/wall.sorted" - |
	sort -k2 -rn | head -n 8 | awk '{ printf "  %6.1f %6.1f %s\n", $2 / 1000, $3 / 1000, $1 }'
awk '{ s += $1 } END { printf "CPU time of all tests: %.0f s\n", s / 1000 }' "$results"/*.cpu
[ -z "${TEST_TIMES:-}" ] || cat "$results"/*.time >"$TEST_TIMES"
[ -z "${TEST_CPU_TIMES:-}" ] || cat "$results"/*.cpu >"$TEST_CPU_TIMES"
passed=$(grep -c ': ok ' "$log")
skipped=$(grep -c ': not ok [0-9]* # SKIP' "$log")
failed=$(($(grep -c 'not ok' "$log") - skipped))
[ "$skipped" -eq 0 ] || echo "$skipped skipped (not for this machine, e.g. a kernel family its CPU lacks)"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
