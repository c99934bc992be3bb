#!/bin/sh
# End-to-end tests of `rknn-bench selftest` and `bugreport`: every rung passes on both
# emulated kernels and through the fake node on rknpu and rocket; each injected board
# failure (tests/fakenode: one per class) stops the ladder at its rung with a message
# naming the cause, and bugreport bundles the failing program, which dump decodes;
# calibrate fits a perturbed profile back from a selftest report. Short soaks (1-2 s).
. tests/e2e/lib.sh
BUILD=${BUILD:-build}
FAKE=$(pwd)/$BUILD/tests/libfakenode.so
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export RKNN_BENCH_DEVROOT="$TMP/nodev" # this machine's /dev never takes part
export RKNN_BENCH_STATE="$TMP/state"   # where the last selftest report is kept
json() { "$JSONCHECK" "$1" "$2" 2>&1; }
expect_json() { # FILE PATH WANTED DESCRIPTION
	got=$(json "$1" "$2")
	[ "$got" = "$3" ] && ok "$4" || not_ok "$4" "$2 is '$got', wanted '$3'"
}
fake() { # NODES -- COMMAND...
	nodes=$1
	shift 2
	(
		export RKNN_BENCH_FAKENODE="$nodes"
		preload "$FAKE" "$@"
	)
}

# ---- every rung passes: the emulator, both kernels ----
for dev in sim sim:rocket; do
	start=$(date +%s)
	expect_exit 0 "selftest --device $dev passes" -- "$RKNN_BENCH" selftest --device $dev --soak 2 \
		-o "$TMP/st.json"
	expect_grep "^selftest passed: 9 rungs on $dev" "$TMP/out" "$dev: says every rung passed"
	expect_json "$TMP/st.json" selftest.passed true "$dev: the report says passed"
	passed=$(grep -c '"status":[[:space:]]*"passed"' "$TMP/st.json")
	[ "$passed" -eq 9 ] && ok "$dev: 9 rungs passed in the report" ||
		not_ok "$dev: 9 rungs passed in the report" "$passed"
	expect_grep "rung 8 soak +passed" "$TMP/err" "$dev: the soak ran and passed"
	echo "# $dev: $(($(date +%s) - start)) s"
done
expect_json "$TMP/st.json" results.0.device sim:rocket "the report's results are a run report's"
[ -f "$TMP/state/selftest-last.json" ] && ok "the last report is kept for bugreport" ||
	not_ok "the last report is kept for bugreport"

# Rung 0 reads the settings info checks (a Rock 5B's sysfs with an unpinned DDR).
expect_exit 0 "selftest with unpinned clocks still passes" -- env \
	RKNN_BENCH_SYSFS=tests/fixtures/sysfs-rock5b "$RKNN_BENCH" selftest --device sim --soak 0 \
	-o "$TMP/unpinned.json"
expect_grep "setting: DDR governor is 'dmc_ondemand'" "$TMP/err" "rung 0 notes the DDR governor"
expect_grep "CPU: policy0 ondemand 1800000 kHz" "$TMP/err" "rung 0 shows the CPU governors"
expect_json "$TMP/unpinned.json" selftest.system.warnings.# 3 "the report keeps the 3 warnings"

# bugreport of the last report kept, uncompressed; without any report it says so.
expect_exit 0 "bugreport -o FILE.tar of the last report" -- "$RKNN_BENCH" bugreport -d sim \
	-o "$TMP/last.tar"
tar -tf "$TMP/last.tar" >"$TMP/list" 2>&1
expect_grep "^selftest.json$" "$TMP/list" "the .tar holds the last selftest report"
expect_exit 0 "bugreport without any selftest report" -- env RKNN_BENCH_STATE="$TMP/empty" \
	"$RKNN_BENCH" bugreport -d sim -o "$TMP/none.tar.gz"
expect_grep "no selftest report .*run 'rknn-bench selftest' first" "$TMP/err" \
	"bugreport says to run selftest first"
expect_exit 2 "bugreport without -o: exit 2" -- "$RKNN_BENCH" bugreport
printf '{"schema": "rknn-bench/1", "results": [' >"$TMP/cut.json"
expect_exit 2 "bugreport of a truncated report: exit 2" -- "$RKNN_BENCH" bugreport \
	--report "$TMP/cut.json" -d sim -o "$TMP/cut.tar.gz"
expect_grep "cut.json: invalid JSON" "$TMP/err" "names the truncated report"
[ -e "$TMP/cut.tar.gz" ] && not_ok "no archive after a refusal" || ok "no archive after a refusal"
expect_exit 2 "a bad --device: exit 2" -- "$RKNN_BENCH" selftest --device bogus

# ---- through the fake node: the host transport, libdrm, the real ioctls ----
expect_exit 0 "selftest on a fake rknpu node passes" -- fake /dev/dri/card1=rknpu -- \
	"$RKNN_BENCH" selftest --device rknpu:/dev/dri/card1 --soak 1
expect_exit 0 "selftest on a fake rocket node passes" -- fake /dev/accel/accel0=rocket -- \
	"$RKNN_BENCH" selftest --device rocket:/dev/accel/accel0 --soak 1

# ---- one injected board failure per class: the rung, the cause, the message ----
# injected OPTION RUNG CAUSE EXIT TEXT: a fake rknpu node with OPTION stops the ladder at
# RUNG with CAUSE, exit EXIT, and TEXT in the diagnosis; the report says so; bugreport
# bundles it and dump decodes every program in it.
injected() {
	opt=$1 rung=$2 cause=$3 code=$4 text=$5
	rm -f "$TMP/f.json"
	expect_exit "$code" "$opt: exit $code" -- fake "$NODE=rknpu${opt:+:$opt}" -- \
		"$RKNN_BENCH" selftest --device "rknpu:$NODE" --soak 1 -o "$TMP/f.json"
	expect_grep "^selftest FAILED at rung $rung \([a-z-]+\): $cause$" "$TMP/out" \
		"$opt: stops at rung $rung, cause $cause"
	expect_grep "^diagnosis: .*$text" "$TMP/out" "$opt: the diagnosis names it ($text)"
	expect_json "$TMP/f.json" selftest.failure.cause "$cause" "$opt: the report's failure"
	bundle "$opt" "$TMP/f.json"
}

# bundle NAME REPORT: bugreport of REPORT; its programs decode with dump.
bundle() {
	rm -rf "$TMP/b" "$TMP/b.tar.gz" && mkdir "$TMP/b"
	expect_exit 0 "$1: bugreport writes the bundle" -- "$RKNN_BENCH" bugreport --report "$2" \
		-d sim -o "$TMP/b.tar.gz"
	if ! tar -xzf "$TMP/b.tar.gz" -C "$TMP/b"; then
		not_ok "$1: the bundle is a tar.gz"
		return
	fi
	missing=""
	for f in README.txt info.json selftest.json kernel-log.txt versions.txt profile.json; do
		[ -f "$TMP/b/$f" ] || missing="$missing $f"
	done
	[ -z "$missing" ] && ok "$1: the bundle has README, info, report, log, versions, profile" ||
		not_ok "$1: the bundle has every file" "missing:$missing"
	if [ "$want_programs" = yes ]; then
		set -- "$TMP"/b/programs/core*.hex
		if [ -f "$1" ] && "$RKNN_BENCH" dump "$1" >"$TMP/dump" 2>"$TMP/err" &&
			grep -q "CNA.FEATURE_DATA_ADDR" "$TMP/dump"; then
			ok "$opt: the bundle's program $(basename "$1") decodes with dump"
		else
			not_ok "$opt: the bundle's failing program decodes with dump" "$(ls "$TMP/b")" \
				"$(head -c 300 "$TMP/err")"
		fi
	fi
	host=$(hostname)
	if [ ${#host} -ge 2 ] && grep -rqw -- "$host" "$TMP/b"; then
		not_ok "$opt: no host name in the bundle" "$(grep -rlw -- "$host" "$TMP/b")"
	elif ! grep -q '"host":[[:space:]]*"(host)"' "$TMP/b/selftest.json"; then
		not_ok "$opt: the report's host is replaced by (host)"
	else
		ok "$opt: no host name in the bundle, the report's host is (host)"
	fi
}

NODE=/dev/dri/card1
want_programs=no
injected eacces 0 permission 3 "permission denied"
injected version=0.1.0 0 driver-version 3 "unknown driver version: rknpu reports 0.1.0"
injected mem=8000000 1 dma-memory 3 "too little DMA memory"
want_programs=yes
injected iommu 2 iommu-fault 3 "IOMMU fault"
expect_grep "iommu fault: task 0: CNA.FEATURE_DATA_ADDR" "$TMP/b/kernel-log.txt" \
	"iommu: the bundle's kernel log names the register"
injected hang 2 hang 3 "the NPU hung: the job timed out and the core never wrote its output"
injected noirq 2 no-interrupt 3 "the interrupt never came: the NPU wrote the output"
injected badfield 4 wrong-result 1 "smallest failing alike after [0-9]+ runs: one task 1x1x16"
expect_grep "DPU.BS_OW_CFG" "$TMP/dump" "badfield: the decoded program shows DPU.BS_OW_CFG"

# Rocket signals a timed-out job like a finished one (§d.2): rung 2 finds the output
# unwritten, and tells a hang from an IOMMU fault by the kernel log.
NODE=/dev/accel/accel0
for case in "hang|hang|the NPU hung" "iommu|iommu-fault|IOMMU fault"; do
	opt=${case%%|*} rest=${case#*|}
	cause=${rest%%|*} text=${rest#*|}
	expect_exit 3 "rocket $opt: exit 3" -- fake "$NODE=rocket:$opt" -- \
		"$RKNN_BENCH" selftest --device "rocket:$NODE" --soak 1
	expect_grep "^selftest FAILED at rung 2 \(submit\): $cause$" "$TMP/out" \
		"rocket $opt: stops at rung 2, cause $cause"
	expect_grep "^diagnosis: $text.*never wrote its output" "$TMP/out" \
		"rocket $opt: the diagnosis says the job never wrote its output"
done

# Another process holding the NPU: a real holder of the node file, found through /proc.
mkdir -p "$TMP/dev" && : >"$TMP/dev/card1"
sleep 60 <"$TMP/dev/card1" &
holder=$!
NODE=$TMP/dev/card1
want_programs=no
injected "" 0 busy 3 "other processes hold the NPU node $NODE: $holder \(sleep\)"
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null

# ---- calibrate fits a profile from a selftest report ----
# The emulator on a profile whose eleven fitted numbers are each moved by x0.8 to x1.25
# (the factors of tests/e2e/calibrate.sh); the selftest's timing runs (rung 7) are the
# runs of docs/boards.md section 6, so calibrate fits them back within its round-trip
# accuracy, 2 % on every number.
FACTORS="gbps_per_stream=1.25 gbps_per_core=0.8 gbps_total=1.1 fp16_efficiency=0.9
int8_efficiency=0.8 fetch_ns=1.2 pipeline_ns=0.85 ioctl_ns=1.15 commit_ns=0.9 irq_ns=0.9 wake_ns=1.2"
PATHS="ddr.gbps_per_stream ddr.gbps_per_core ddr.gbps_total mac.fp16_efficiency
mac.int8_efficiency task.fetch_ns task.pipeline_ns submit.ioctl_ns submit.commit_ns
submit.irq_ns submit.wake_ns"
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
}' configs/soc/rk3588.json >"$TMP/true.json"
expect_exit 0 "selftest --device sim on the perturbed profile" -- "$RKNN_BENCH" selftest \
	--device sim --soc "$TMP/true.json" --soak 0 -o "$TMP/perturbed.json"
expect_exit 0 "calibrate the selftest report" -- "$RKNN_BENCH" calibrate "$TMP/perturbed.json" \
	-o "$TMP/fit.json"
expect_grep '^fit error over 15 results' "$TMP/out" "calibrate fits the 15 timing runs"
for p in $PATHS; do
	want=$(json "$TMP/true.json" "$p.value")
	got=$(json "$TMP/fit.json" "$p.value")
	if awk -v w="$want" -v g="$got" 'BEGIN { e = g / w - 1; exit !(e < 0.02 && e > -0.02) }'; then
		ok "$p fitted back within 2 % ($got, true $want)"
	else
		not_ok "$p fitted back within 2 %" "fitted $got, true $want"
	fi
done
