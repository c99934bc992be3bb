# End-to-end test of build/bench-summary, the table of `make bench` (bench/summary.c),
# with --quick (small shapes, one pair): every row verifies and is measured, or says it
# was skipped (no OpenBLAS in the build); -o writes what stdout shows; bad usage exits 2.
. tests/e2e/lib.sh
SUMMARY=${BUILD:-build}/bench-summary

expect_exit 0 "--quick -o: exit 0" -- built "$SUMMARY" --quick -t 2 -o "$TMP/results.md"
cp "$TMP/out" "$TMP/stdout"
expect_grep '^\| row \| shape \| ours \| ours, median \| baseline \|' "$TMP/stdout" "the table's header"
rows=$(grep -cE '^\| (GEMM|GEMV|pack|unpack|emulator) ' "$TMP/stdout")
[ "$rows" -eq 10 ] && ok "10 rows" || not_ok "10 rows" "$rows"
bad=$(grep -E '^\| (GEMM|GEMV|pack|unpack|emulator) ' "$TMP/stdout" | grep -vE '\| (met|\*\*missed\*\*|skipped) \|$')
[ -z "$bad" ] && ok "every row met, missed or skipped its target" ||
	not_ok "every row met, missed or skipped its target" "$bad"
if grep -q '^- OpenBLAS: not found' "$TMP/stdout"; then
	[ "$(grep -c 'skipped: OpenBLAS not found (apt-get install libopenblas-dev)' "$TMP/stdout")" -eq 3 ] &&
		ok "without OpenBLAS its 3 rows say how to get it" ||
		not_ok "without OpenBLAS its 3 rows say how to get it"
else
	[ "$(grep -cE '^\| (GEMM|GEMV) .*\| cblas_sgem[mv] fp32 \| [0-9.]+ (us|ms) \|' "$TMP/stdout")" -eq 3 ] &&
		ok "with OpenBLAS its 3 rows are measured" || not_ok "with OpenBLAS its 3 rows are measured"
	# Where OpenBLAS falls back to its generic kernels (OPENBLAS_VERBOSE=2 prints its own
	# choice first) on a CPU with AVX2 and FMA, the program chooses a core and says
	# which, and the configuration OpenBLAS reports names that core.
	expect_exit 0 "OPENBLAS_VERBOSE=2: exit 0" -- \
		env OPENBLAS_VERBOSE=2 $RUNNER "$SUMMARY" --quick -t 1
	own_core=$(sed -n 's/^Core: //p' "$TMP/err" | head -n 1)
	if [ "$own_core" = Prescott ] && grep -q '^flags.* avx2 .*' /proc/cpuinfo &&
		grep -q '^flags.* fma ' /proc/cpuinfo; then
		set_core=$(sed -n 's/^- OpenBLAS: .*; OPENBLAS_CORETYPE=\([A-Za-z0-9]*\) (set by this program: OpenBLAS took this CPU for Prescott.*/\1/p' "$TMP/out")
		[ -n "$set_core" ] && ok "OpenBLAS's generic fallback is replaced ($set_core)" ||
			not_ok "OpenBLAS's generic fallback is replaced" "$(grep '^- OpenBLAS' "$TMP/out")"
		expect_grep "^- OpenBLAS: OpenBLAS .* $set_core .*OPENBLAS_CORETYPE=$set_core " \
			"$TMP/out" "OpenBLAS runs the core the program set"
	fi
	# A core the caller chose is kept, and not reported as the program's choice.
	expect_exit 0 "OPENBLAS_CORETYPE=Prescott: exit 0" -- \
		env OPENBLAS_CORETYPE=Prescott $RUNNER "$SUMMARY" --quick -t 1
	expect_grep '^- OpenBLAS: OpenBLAS .* Prescott .*; OPENBLAS_CORETYPE=Prescott$' "$TMP/out" \
		"a core the caller set is kept and shown as theirs"
fi
expect_grep '^- CPU: .+, [0-9]+ CPUs$' "$TMP/stdout" "names the CPU and its count"
expect_grep '^- rknn-bench [0-9.]+, commit ' "$TMP/stdout" "names the commit"
expect_grep '^\*\*--quick: ' "$TMP/stdout" "says --quick numbers are no measurements"
cmp -s "$TMP/stdout" "$TMP/results.md" && ok "-o writes what stdout shows" ||
	not_ok "-o writes what stdout shows"
[ -z "$(find "$TMP" -name 'results.md?*')" ] && ok "no temporary file left" ||
	not_ok "no temporary file left" "$(ls "$TMP")"

expect_exit 2 "a bad option: exit 2" -- built "$SUMMARY" --bogus
expect_grep '^usage: bench-summary' "$TMP/err" "prints the usage"
expect_exit 2 "-r 0: exit 2" -- built "$SUMMARY" --quick -r 0
expect_exit 2 "an unwritable -o: exit 2" -- built "$SUMMARY" --quick -o "$TMP/no/such/dir/r.md"
expect_grep "cannot write '$TMP/no/such/dir/r.md'" "$TMP/err" "names the file it cannot write"
# --quick misses targets (its shapes are too small to reach them): --strict fails then.
if grep -q '\*\*missed\*\*' "$TMP/stdout"; then
	expect_exit 1 "--strict with a missed target: exit 1" -- built "$SUMMARY" --quick --strict
fi

# build/bench-host (the host rows of `make bench`, bench/host.c): host time per call of the
# executor next to the modeled NPU time, labelled x86; a decode call's host share stays
# under 10 % of its modeled NPU time (0.8 % on the 2-core x86 VM).
HOST=${BUILD:-build}/bench-host
expect_exit 0 "bench-host --quick -o: exit 0" -- built "$HOST" --quick -o "$TMP/host.md"
expect_grep '^Host: .*\(x86, not the board.s Cortex-A76\)' "$TMP/out" "the host is labelled"
expect_grep '^\| 1x2048x8192 decode ffn_up \| [0-9.]+ \| ' "$TMP/out" "a decode row"
expect_grep '^\| 128x2048x2048 prefill 128 Qcur \| [0-9.]+ \| ' "$TMP/out" "a prefill row"
cmp -s "$TMP/out" "$TMP/host.md" && ok "bench-host -o writes what stdout shows" ||
	not_ok "bench-host -o writes what stdout shows"
share=$(sed -n 's/^| 1x2048x8192 decode ffn_up |.*| \([0-9.]*\) % |.*/\1/p' "$TMP/out")
awk -v s="$share" 'BEGIN { exit !(s != "" && s < 10) }' &&
	ok "a decode call's host share under 10 % ($share %)" ||
	not_ok "a decode call's host share under 10 %" "'$share'"
expect_exit 2 "bench-host: bad usage exits 2" -- built "$HOST" --nonsense
