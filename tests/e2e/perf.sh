# End-to-end tests of run --perf, --phase, --no-verify, stop signals, scripts/perf-stat.sh.
. tests/e2e/lib.sh
SHAPE="--shape 64x256x128"
FAST="--iters 3 --warmup 0"

json() { "$JSONCHECK" "$TMP/report.json" "$1" 2>&1; }
check_field() { # path expected
	got=$(json "$1")
	[ "$got" = "$2" ] && ok "json $1 = $2" || not_ok "json $1 = $2" "got '$got'"
}
# counted PHASE EVENT: a number > 0, or null with a reason when this kernel has no such
# counter (qemu-user, make check-aarch64, has no perf events at all).
counted() {
	got=$(json "results.0.perf.phases.$1.$2")
	if why=$("$JSONCHECK" "$TMP/report.json" "results.0.perf.unavailable.$2" 2>&1); then
		[ "$got" = null ] && ok "$1.$2 unavailable: $why" ||
			not_ok "$1.$2 counted ($got) yet unavailable" "$why"
	else
		awk -v v="$got" 'BEGIN { exit !(v + 0 > 0) }' && ok "$1.$2 > 0 ($got)" ||
			not_ok "$1.$2 > 0" "got '$got'"
	fi
}
# The table's number for task-clock, or n/a when the block says it is unavailable.
TASK_CLOCK='[0-9.]+ µs'
perf_events() {
	grep -q '^perf: task-clock unavailable: ' "$TMP/out" && TASK_CLOCK='n/a' || TASK_CLOCK='[0-9.]+ µs'
}
# A hardware counter is a number in every phase, or null with a reason: never both.
hw_consistent() { # phase
	for ev in cycles instructions cache_misses; do
		v=$(json "results.0.perf.phases.$1.$ev")
		if why=$("$JSONCHECK" "$TMP/report.json" "results.0.perf.unavailable.$ev" 2>&1); then
			[ "$v" = null ] && ok "$1.$ev unavailable: $why" ||
				not_ok "$1.$ev counted ($v) yet unavailable" "$why"
		else
			[ "$v" != null ] && ok "$1.$ev counted: $v" ||
				not_ok "$1.$ev is null without a reason"
		fi
	done
}

expect_exit 0 "run --help" -- $RKNN_BENCH run --help
for opt in '--perf' '--phase PHASE' '--no-verify' '130/143'; do
	expect_grep "$opt" "$TMP/out" "run --help documents $opt"
done

# --perf on the emulator: NPU phases, measured host counters.
expect_exit 0 "run --perf on sim" -- $RKNN_BENCH run $SHAPE --device sim --perf $FAST
expect_grep "^perf: '64x256x128' on sim \(host, measured" "$TMP/out" "table has a perf block"
perf_events
for p in pack_b pack_a submit unpack verify; do
	expect_grep "^  $p +[0-9]+ +$TASK_CLOCK" "$TMP/out" "perf block has a $p line"
done
expect_exit 0 "run --perf on sim, json" -- $RKNN_BENCH run $SHAPE --device sim --perf $FAST --format json
cp "$TMP/out" "$TMP/report.json"
check_field results.0.perf.phases.pack_b.runs 1
check_field results.0.perf.phases.verify.runs 1
check_field results.0.perf.phases.pack_a.runs 3 # warm-up 0, 3 samples (modeled: no batching)
counted submit task_clock_ns
counted pack_b task_clock_ns
check_field results.0.modeled true
hw_consistent submit
expect_exit 1 "no compute phase on an NPU device" -- "$JSONCHECK" "$TMP/report.json" results.0.perf.phases.compute

# An unprivileged user: user mode only (perf_event_paranoid 2), or a reason (3 and up).
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1 && [ "$paranoid" != unknown ] &&
	[ "$paranoid" -ge 2 ] && nobody sh -c 'test -x "$0"' "$RKNN_BENCH" 2>/dev/null; then
	expect_exit 0 "run --perf as an unprivileged user" -- nobody $RKNN_BENCH run $SHAPE \
		--device sim --perf $FAST
	if [ "$paranoid" -eq 2 ]; then
		expect_grep '^perf: .*user mode only \(perf_event_paranoid\)' "$TMP/out" \
			"paranoid 2: counted in user mode only, and said so"
	else
		expect_grep "task-clock unavailable: not permitted: kernel.perf_event_paranoid is $paranoid" \
			"$TMP/out" "paranoid $paranoid: unavailable with the reason"
	fi
else
	ok "# SKIP unprivileged --perf: needs root, setpriv, a binary others can run and perf_event_paranoid >= 2 (is $paranoid)"
fi

# --perf on the CPU reference: compute and verify.
expect_exit 0 "run --perf on cpu, json" -- $RKNN_BENCH run $SHAPE --device cpu --threads 1 --perf $FAST --format json
cp "$TMP/out" "$TMP/report.json"
counted compute task_clock_ns
counted verify task_clock_ns
hw_consistent compute
expect_exit 1 "no pack_a phase on cpu" -- "$JSONCHECK" "$TMP/report.json" results.0.perf.phases.pack_a

# Without --perf there is no perf object.
expect_exit 0 "run without --perf" -- $RKNN_BENCH run $SHAPE --device sim $FAST --format json
cp "$TMP/out" "$TMP/report.json"
expect_exit 1 "no perf object without --perf" -- "$JSONCHECK" "$TMP/report.json" results.0.perf

# --phase pack: exactly --iters samples of pack A on the host clock, nothing verified.
expect_exit 0 "run --phase pack" -- $RKNN_BENCH run $SHAPE --device sim --phase pack --iters 7 --no-verify --perf --format json
cp "$TMP/out" "$TMP/report.json"
check_field results.0.phase pack_a
check_field results.0.modeled false
check_field results.0.stats.samples_us.# 7
check_field results.0.verify.status skipped
check_field results.0.gflops null
check_field results.0.perf.phases.pack_a.runs 7
json results.0.reproducer >"$TMP/repro"
expect_grep ' --verify none .* --phase pack --iters 7$' "$TMP/repro" "reproducer repeats --phase"
expect_exit 1 "--phase pack submits nothing while sampling" -- "$JSONCHECK" "$TMP/report.json" results.0.perf.phases.submit
expect_exit 1 "--no-verify: no verify phase" -- "$JSONCHECK" "$TMP/report.json" results.0.perf.phases.verify
expect_exit 0 "run --phase submit, table" -- $RKNN_BENCH run $SHAPE --device sim --phase submit --iters 4 --no-verify
expect_grep 'sim \(submit alone, host\)' "$TMP/out" "table labels the phase timed alone"
expect_exit 0 "run --phase all is a normal run" -- $RKNN_BENCH run $SHAPE --device sim --phase all $FAST
expect_grep 'sim \(modeled\)' "$TMP/out" "--phase all stays modeled"
expect_exit 2 "--phase submit on cpu" -- $RKNN_BENCH run $SHAPE --device cpu --phase submit
expect_grep "CPU reference has no such phase" "$TMP/err" "--phase on cpu says why"
expect_exit 2 "--phase bogus" -- $RKNN_BENCH run $SHAPE --device sim --phase bogus
expect_exit 0 "--no-verify" -- $RKNN_BENCH run $SHAPE --device cpu --no-verify $FAST
expect_grep 'skipped' "$TMP/out" "--no-verify reports skipped"

# SIGINT and SIGTERM: the run stops, exit 128 + signal, no -o file, a message. On the CPU,
# whose times are measured: a modeled time is computed once, over before the signal.
stop_test() { # signal code
	rm -f "$TMP/stopped.json"
	$RKNN_BENCH run $SHAPE --device cpu --min-time 30 --max-iters 100000000 \
		-o "$TMP/stopped.json" >"$TMP/out" 2>"$TMP/err" &
	pid=$!
	sleep 1 # past start-up (a background sh job ignores SIGINT until run catches it)
	kill -"$1" "$pid"
	wait "$pid"
	rc=$?
	[ "$rc" -eq "$2" ] && ok "SIG$1 exits $2" || not_ok "SIG$1 exits $2" "exit $rc" "$(cat "$TMP/err")"
	ls "$TMP"/stopped.json* >/dev/null 2>&1 && not_ok "SIG$1 leaves no output file" ||
		ok "SIG$1 leaves no output file"
	[ -s "$TMP/out" ] && not_ok "SIG$1 prints no report" "$(cat "$TMP/out")" || ok "SIG$1 prints no report"
	expect_grep "interrupted by SIG$1" "$TMP/err" "SIG$1 says it was interrupted"
}
stop_test INT 130
stop_test TERM 143

# scripts/perf-stat.sh: usage and a missing perf work everywhere; the rest needs perf.
expect_exit 0 "perf-stat.sh --help" -- sh scripts/perf-stat.sh --help
expect_grep '--phase PHASE' "$TMP/out" "perf-stat.sh --help documents --phase"
expect_exit 2 "perf-stat.sh without SHAPES" -- sh scripts/perf-stat.sh
expect_exit 2 "perf-stat.sh --phase bogus" -- sh scripts/perf-stat.sh --phase bogus 1x2x3
expect_exit 2 "perf-stat.sh --repeat 0" -- sh scripts/perf-stat.sh -r 0 1x2x3
expect_exit 3 "perf-stat.sh without perf" -- env PERF=/nonexistent/perf sh scripts/perf-stat.sh 64x256x128
expect_grep "not found: install perf" "$TMP/err" "perf-stat.sh says how to get perf"
if command -v perf >/dev/null 2>&1; then
	expect_exit 0 "perf-stat.sh --phase submit" -- env RKNN_BENCH="$RKNN_BENCH" \
		sh scripts/perf-stat.sh --phase submit -r 2 -i 10 64x256x128
	expect_grep "Performance counter stats for .*--phase submit' \(2 runs\)" "$TMP/err" \
		"perf stat ran the phase twice"
	expect_grep 'task-clock' "$TMP/err" "perf stat counted task-clock"
	expect_exit 0 "perf-stat.sh with perf args" -- env RKNN_BENCH="$RKNN_BENCH" \
		sh scripts/perf-stat.sh -p pack -r 1 -i 5 64x256x128 -e page-faults
	expect_grep 'page-faults' "$TMP/err" "perf args reach perf stat"
else
	ok "# SKIP perf-stat.sh runs: perf is not installed (Debian package linux-perf)"
fi
