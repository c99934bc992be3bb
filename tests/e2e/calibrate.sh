# End-to-end tests of `rknn-bench calibrate`: the round trip (reports made on the
# emulator from a profile with perturbed numbers are fitted back to that profile within
# 2 % on every parameter), the fitted profile as `run --soc` input, and bad input.
. tests/e2e/lib.sh
SOC=configs/soc/rk3588.json

# The perturbed profile: each fitted number times a factor in 0.8..1.25. commit_ns and
# irq_ns move together: every kick of a core pays both, so run times only tell their sum
# and calibrate keeps the base's split of it.
FACTORS="gbps_per_stream=1.25 gbps_per_core=0.8 gbps_total=1.1 fp16_efficiency=0.9
int8_efficiency=0.8 fetch_ns=1.2 pipeline_ns=0.85 ioctl_ns=1.15 commit_ns=0.9 irq_ns=0.9 wake_ns=1.2"
PATHS="ddr.gbps_per_stream ddr.gbps_per_core ddr.gbps_total mac.fp16_efficiency
mac.int8_efficiency task.fetch_ns
task.pipeline_ns submit.ioctl_ns submit.commit_ns submit.irq_ns submit.wake_ns"

# perturb FILE: the profile with `"KEY": {"value": N` multiplied by KEY's factor.
perturb() {
	awk -v factors="$FACTORS" '
	BEGIN { n = split(factors, f, /[ \n]+/); for (i = 1; i <= n; i++) { split(f[i], kv, "="); mul[kv[1]] = kv[2] } }
	{
		for (k in mul) {
			pat = "\"" k "\": *\\{\"value\": *[0-9.eE+-]+"
			if (match($0, pat)) {
				head = substr($0, RSTART, RLENGTH); sub(/[0-9.eE+-]+$/, "", head)
				num = substr($0, RSTART + length(head), RLENGTH - length(head))
				$0 = substr($0, 1, RSTART - 1) head sprintf("%.10g", num * mul[k]) substr($0, RSTART + RLENGTH)
			}
		}
		print
	}' "$1"
}

value() { # FILE PATH: the number at PATH.value
	"$JSONCHECK" "$1" "$2.value"
}

perturb "$SOC" >"$TMP/true.json"
changed=0
for p in $PATHS; do
	[ "$(value "$SOC" "$p")" != "$(value "$TMP/true.json" "$p")" ] && changed=$((changed + 1))
done
[ "$changed" -eq 11 ] && ok "the perturbed profile changes all 11 numbers" ||
	not_ok "the perturbed profile changes all 11 numbers" "$changed changed"

# The calibration runs (docs/boards.md section 6 lists the same for boards), each for a
# part of the model that only it exposes, so every parameter is identifiable:
#   1x64x64 on one core          the per-call floor: one task, one submit
#   1x64x192 on three cores      three submits: submit.ioctl_ns three times, the rest once
#   1x1024x4096 on one core      one weight stream: ddr.gbps_per_stream
#   1x1024x4096 on three cores   three streams at once: ddr.gbps_total
#   64x512x4096, 256x1024x1024 int8 on one core
#                                feature and weight streams together: ddr.gbps_per_core
#   256x512x1024 on one core     MAC-bound: mac.fp16_efficiency
#   512x512x1024 int8, one core  MAC-bound: mac.int8_efficiency
#   1x64x8192, one weight bank   32 chained tiny tasks: task.pipeline_ns per task
#   the same, --no-chain         one submit per task: the host's ioctl chain
#   1x1024x4096 --no-chain       one kick per task on the NPU: commit + irq per task
#                                against wake_ns once
#   512x1024x16, 512x64x16, one data bank
#                                chained tasks bound by fetch + feature load: task.fetch_ns
#   --launch multicore, threads  one submit for three cores; blocking submits
RUN="$RKNN_BENCH run --device sim --iters 1 --warmup 0 --no-verify --soc $TMP/true.json"
i=0
while read -r args; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	$RUN $args -o "$TMP/r$i.json" >"$TMP/out" 2>"$TMP/err" ||
		not_ok "run $args" "$(head -c 600 "$TMP/err")"
done <<'RUNS'
--core-mask 0x1 --shape 1x64x64 --shape 1x1024x4096 --shape 256x512x1024 --shape 64x512x4096
--core-mask 0x1 --dtype int8 --shape 256x1024x1024 --shape 512x512x1024
--core-mask 0x7 --shape 1x64x192 --shape 1x1024x4096
--core-mask 0x1 --weight-banks 1 --shape 1x64x8192
--core-mask 0x1 --weight-banks 1 --no-chain --shape 1x64x8192
--core-mask 0x1 --no-chain --shape 1x1024x4096
--core-mask 0x1 --data-banks 1 --shape 512x1024x16 --shape 512x64x16
--core-mask 0x7 --weight-banks 1 --launch multicore --shape 1x64x8192
--core-mask 0x7 --launch threads --shape 1x1024x4096
RUNS
REPORTS=$(i=1; while [ -f "$TMP/r$i.json" ]; do echo "$TMP/r$i.json"; i=$((i + 1)); done)
[ "$(echo "$REPORTS" | wc -l)" -eq 9 ] && ok "9 calibration reports" || not_ok "9 calibration reports"

# shellcheck disable=SC2086
expect_exit 0 "calibrate the reports" -- $RKNN_BENCH calibrate $REPORTS -o "$TMP/fit.json"
cp "$TMP/out" "$TMP/table"
expect_grep '^1x64x64 +1x64x64 +fp16 +0x1/fences +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ %$' "$TMP/table" \
	"a row per result: shape, measured, fitted, error"
expect_grep '^fit error over 15 results: rms [0-9.]+ %' "$TMP/table" "the fit error over all rows"
expect_grep '^modeled: the reports are the emulator' "$TMP/table" "says the reports are modeled"
expect_exit 0 "the profile is JSON" -- "$JSONCHECK" "$TMP/fit.json" status
expect_grep '^fitted to modeled reports \(emulator\), not a board$' "$TMP/out" \
	"its status says it was fitted to modeled reports"
for p in $PATHS; do
	want=$(value "$TMP/true.json" "$p")
	got=$(value "$TMP/fit.json" "$p")
	if awk -v w="$want" -v g="$got" 'BEGIN { e = g / w - 1; exit !(e < 0.02 && e > -0.02) }'; then
		ok "$p fitted back within 2 % ($got, true $want)"
	else
		not_ok "$p fitted back within 2 %" "fitted $got, true $want"
	fi
done
expect_exit 0 "calibration.held" -- "$JSONCHECK" "$TMP/fit.json" "calibration.held.#"
[ "$(cat "$TMP/out")" = 0 ] && ok "no parameter held" || not_ok "no parameter held" "$(cat "$TMP/out")"

# The spread (how far a parameter moves if the times are off by 1 %) is printed for
# each; on these runs none but task.fetch_ns may be loose (its cost per task always comes
# with a kick's commit and irq but for the fetch-bound chained runs).
expect_grep '^task\.fetch_ns +[0-9.]+ +[0-9.]+ +[-+][0-9.]+ % +[0-9.]+ %' "$TMP/table" \
	"the spread of each parameter is printed"
[ "$(grep 'loose' "$TMP/table" | grep -vc '^task\.fetch_ns ')" -eq 0 ] &&
	ok "no parameter but task.fetch_ns is loose" ||
	not_ok "no parameter but task.fetch_ns is loose" "$(grep loose "$TMP/table")"

# The fitted profile drives the emulator: a row run on it takes its fitted time.
expect_exit 0 "run --soc the fitted profile" -- $RKNN_BENCH run --device sim --iters 1 --warmup 0 \
	--no-verify --soc "$TMP/fit.json" --core-mask 0x7 --shape 1x1024x4096 --format csv
expect_grep "rk3588.json v1|1x1024x4096,1,1024,4096,fp16,sim,true" "$TMP/out" "the row runs on it"

# A report taken with clocks that were not pinned: a warning, the fit goes on.
sed 's/"warnings":[[:space:]]*\[\]/"warnings": ["cpufreq policy0: governor schedutil"]/' "$TMP/r1.json" \
	>"$TMP/unpinned.json"
# shellcheck disable=SC2086
expect_exit 0 "calibrate with an unpinned report" -- $RKNN_BENCH calibrate "$TMP/unpinned.json" \
	$(echo "$REPORTS" | tail -n +2) -o "$TMP/fit2.json"
expect_grep "unpinned.json: taken with host settings that were not pinned: cpufreq policy0" \
	"$TMP/err" "warns about the unpinned report"

# Rocket: the same runs without the two --launch modes rocket does not have, and
# without int8, whose efficiency calibrate then holds at the base and says so; the
# three-core run (one fd per core, the cores in parallel) constrains the total bandwidth.
if [ "${CHECK_SCOPE:-full}" != quick ]; then
	i=0
	cat <<'RUNS' >"$TMP/rocket-runs"
--core-mask 0x1 --shape 1x64x64 --shape 1x1024x4096 --shape 256x512x1024 --shape 64x512x4096
--core-mask 0x7 --shape 1x64x192 --shape 1x1024x4096
--core-mask 0x1 --weight-banks 1 --shape 1x64x8192
--core-mask 0x1 --weight-banks 1 --no-chain --shape 1x64x8192
--core-mask 0x1 --no-chain --shape 1x1024x4096
--core-mask 0x1 --data-banks 1 --shape 512x1024x16 --shape 512x64x16
RUNS
	while read -r args; do
		i=$((i + 1))
		# shellcheck disable=SC2086
		$RKNN_BENCH run --device sim:rocket --iters 1 --warmup 0 --no-verify --soc "$TMP/true.json" \
			$args -o "$TMP/rocket$i.json" >/dev/null 2>"$TMP/err" ||
			not_ok "sim:rocket run $args" "$(head -c 600 "$TMP/err")"
	done <"$TMP/rocket-runs"
	# shellcheck disable=SC2086
	expect_exit 0 "calibrate sim:rocket reports" -- $RKNN_BENCH calibrate "$TMP"/rocket*.json \
		-o "$TMP/fit-rocket.json"
	cp "$TMP/out" "$TMP/rocket-table"
	expect_grep '^mac\.int8_efficiency .*held: no result constrains it' "$TMP/rocket-table" \
		"rocket: int8_efficiency held"
	grep '^ddr\.gbps_total ' "$TMP/rocket-table" | grep -qv 'held' &&
		ok "rocket: three cores constrain gbps_total" ||
		not_ok "rocket: three cores constrain gbps_total" "$(grep '^ddr' "$TMP/rocket-table")"
	expect_exit 0 "rocket: calibration.held" -- "$JSONCHECK" "$TMP/fit-rocket.json" calibration.held.0
	expect_grep '^mac\.int8_efficiency$' "$TMP/out" "rocket: the profile lists what it held"
fi

# ---- bad input: exit 2, a message naming the file and field, no profile written ----
first=$(echo "$REPORTS" | head -n 1)
expect_exit 2 "no report: exit 2" -- $RKNN_BENCH calibrate -o "$TMP/x.json"
expect_grep "calibrate needs at least one report" "$TMP/err" "says a report is needed"
expect_exit 2 "no -o: exit 2" -- $RKNN_BENCH calibrate "$first"
expect_grep "needs -o PROFILE.json" "$TMP/err" "says -o is needed"
expect_exit 2 "one report of 4 results: too few: exit 2" -- \
	$RKNN_BENCH calibrate "$first" -o "$TMP/x.json"
expect_grep "4 results cannot fit [0-9]+ parameters: make the calibration runs of docs/boards.md" \
	"$TMP/err" "says which runs to make"
printf '{"schema": "rknn-bench/1", "results": [' >"$TMP/cut.json"
expect_exit 2 "a truncated report: exit 2" -- $RKNN_BENCH calibrate "$TMP/cut.json" -o "$TMP/x.json"
expect_grep "cut.json: invalid JSON" "$TMP/err" "names the truncated file"
expect_exit 0 "a cpu report" -- $RKNN_BENCH run --device cpu --shape 1x64x64 --iters 1 -o "$TMP/cpu.json"
expect_exit 2 "a cpu report: exit 2" -- $RKNN_BENCH calibrate "$TMP/cpu.json" -o "$TMP/x.json"
expect_grep "cpu.json: results\[0\] ran on 'cpu'" "$TMP/err" "names the file, result and device"
sed 's/"modeled":[[:space:]]*true/"modeled": false/; s/"device":[[:space:]]*"sim"/"device": "rknpu"/' \
	"$first" >"$TMP/measured.json"
expect_exit 2 "modeled and measured reports: exit 2" -- \
	$RKNN_BENCH calibrate "$first" "$TMP/measured.json" -o "$TMP/x.json"
expect_grep "measured.json: results\[0\] is measured where the reports before are modeled" \
	"$TMP/err" "refuses to mix modeled and measured times"
expect_exit 0 "a sim:rocket report" -- $RKNN_BENCH run --device sim:rocket --shape 1x64x64 \
	--iters 1 --warmup 0 --no-verify -o "$TMP/rocket.json"
expect_exit 2 "rknpu and rocket reports: exit 2" -- \
	$RKNN_BENCH calibrate "$first" "$TMP/rocket.json" -o "$TMP/x.json"
expect_grep "rocket.json: results\[0\] has driver 'rocket' where the reports before have 'rknpu'" \
	"$TMP/err" "refuses to mix kernel drivers"
# The same evidence twice (docs/reliability.md): a report given again, or a copy of it.
cp "$first" "$TMP/copy.json"
# shellcheck disable=SC2086
expect_exit 2 "a report given twice: exit 2" -- $RKNN_BENCH calibrate $REPORTS "$first" -o "$TMP/x.json"
expect_grep "r1.json: the same results and provenance as '.*r1.json': the same evidence given twice" \
	"$TMP/err" "names the report given twice"
# shellcheck disable=SC2086
expect_exit 2 "a copy of a report: exit 2" -- $RKNN_BENCH calibrate $REPORTS "$TMP/copy.json" -o "$TMP/x.json"
expect_grep "copy.json: the same results and provenance as '.*r1.json'" "$TMP/err" \
	"names the copy and the report it copies"
# A fit the model cannot make close: every time scaled by an unrelated factor (1 to 343).
for r in $REPORTS; do
	awk '{
		if (match($0, /"median_us":[ \t]*[0-9.eE+-]+/)) {
			v = substr($0, RSTART, RLENGTH); sub(/.*[ \t:]/, "", v)
			f = (NR % 7 + 1) ^ 3
			$0 = substr($0, 1, RSTART - 1) "\"median_us\": " v * f substr($0, RSTART + RLENGTH)
		}
		print
	}' "$r" >"$TMP/scrambled-$(basename "$r")"
done
expect_exit 2 "a fit above the error limit: exit 2" -- $RKNN_BENCH calibrate "$TMP"/scrambled-r*.json \
	-o "$TMP/x.json"
expect_grep "the fit's rms error is [0-9.]+ % \(.* µs measured, .* µs fitted\), above the 50 % a profile may have" \
	"$TMP/err" "names the fit error, the worst row and the limit"
[ -e "$TMP/x.json" ] && not_ok "no profile after a refusal" || ok "no profile after a refusal"
expect_exit 2 "-o onto a report: exit 2" -- $RKNN_BENCH calibrate $REPORTS -o "$first"
expect_exit 2 "a bad --soc: exit 2" -- $RKNN_BENCH calibrate $REPORTS --soc "$TMP/cut.json" \
	-o "$TMP/x.json"
expect_grep "^rknn-bench: --soc: " "$TMP/err" "names --soc"
expect_exit 0 "--help" -- $RKNN_BENCH calibrate --help
expect_grep "^usage: rknn-bench calibrate" "$TMP/out" "--help prints the usage"
