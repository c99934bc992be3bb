#!/bin/sh
# rknn-bench info: the emulated driver, device errors, host warnings from a sysfs fixture.
. tests/e2e/lib.sh
FIXTURE=tests/fixtures/sysfs-rock5b
export RKNN_BENCH_SYSFS="$FIXTURE"

expect_exit 0 "info --device sim runs" -- "$RKNN_BENCH" info --device sim
expect_grep '^  drm driver +rknpu 0\.9\.8 ' "$TMP/out" "sim: DRM driver rknpu 0.9.8"
expect_grep '^  driver version +0\.9\.8$' "$TMP/out" "sim: driver version from GET_DRV_VERSION"
expect_grep '^  frequency +1000000000 Hz$' "$TMP/out" "sim: frequency 1 GHz"
expect_grep '^  cores +3$' "$TMP/out" "sim: 3 cores"
expect_grep 'emulated rknpu 0\.9\.8 kernel' "$TMP/out" "sim: says it is the emulator"
expect_grep "DDR governor is 'dmc_ondemand'" "$TMP/err" "fixture: DDR governor warning on stderr"
expect_grep 'DDR runs at 528000000 Hz, below its max 2112000000 Hz' "$TMP/err" \
	"fixture: DDR frequency warning"
expect_grep "CPU policy0 governor is 'ondemand'" "$TMP/err" "fixture: CPU governor warning"
if grep -q 'policy4 governor' "$TMP/err"; then
	not_ok "no warning for a 'performance' policy" "$(cat "$TMP/err")"
else ok "no warning for a 'performance' policy"; fi

expect_exit 0 "info --device sim --format json runs" -- \
	"$RKNN_BENCH" info --device sim --format json
if "$JSONCHECK" "$TMP/out" >/dev/null; then ok "json parses"; else not_ok "json parses"; fi
check_json() { # PATH WANTED
	got=$("$JSONCHECK" "$TMP/out" "$1")
	if [ "$got" = "$2" ]; then ok "json $1 = $2"; else not_ok "json $1 = $2" "got '$got'"; fi
}
check_json npu.driver rknpu
check_json npu.version 0.9.8
check_json npu.freq_hz 1000000000
check_json npu.cores 3
check_json npu.emulated true
check_json host.ddr.governor dmc_ondemand
check_json host.ddr.max_hz 2112000000
check_json host.cpufreq.# 3
check_json host.cpufreq.0.governor ondemand
check_json warnings.# 3

expect_exit 3 "info --device rknpu:/nonexistent exits 3" -- \
	"$RKNN_BENCH" info --device rknpu:/nonexistent
expect_grep 'is the rknpu kernel module loaded' "$TMP/err" "missing node: the hint"
expect_exit 3 "info on a node that is not rknpu exits 3" -- \
	"$RKNN_BENCH" info --device rknpu:/dev/null

RKNN_BENCH_SYSFS="$TMP/nothing" expect_exit 0 "unreadable sysfs is not an error" -- \
	"$RKNN_BENCH" info --device cpu --format json
check_json npu null
check_json host.ddr.governor unknown
check_json warnings.# 0

expect_exit 2 "bad --format is a usage error" -- "$RKNN_BENCH" info --format csv
expect_exit 2 "bad --device is a usage error" -- "$RKNN_BENCH" info --device gpu
expect_exit 2 "extra argument is a usage error" -- "$RKNN_BENCH" info sim

# Every JSON report carries the host settings its numbers were taken under.
expect_exit 0 "run report with host settings" -- env RKNN_BENCH_SYSFS=tests/fixtures/sysfs-rock5b \
	"$RKNN_BENCH" run --device sim --shape 4x64x16 --iters 1 --warmup 0 --format json
cp "$TMP/out" "$TMP/report.json"
got=$("$JSONCHECK" "$TMP/report.json" context.host_settings.ddr.governor 2>&1)
[ "$got" = dmc_ondemand ] && ok "report context has the DDR governor" ||
	not_ok "report context has the DDR governor" "got '$got'"
got=$("$JSONCHECK" "$TMP/report.json" context.host_settings.warnings.# 2>&1)
[ "${got:-0}" -ge 1 ] 2>/dev/null && ok "report context carries the warnings" ||
	not_ok "report context carries the warnings" "got '$got'"
echo "1..$n"
