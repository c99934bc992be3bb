#!/bin/sh
# Hardware profiles per memory type (configs/soc/rk3588-lpddr4x.json, rk3588-lpddr5.json):
# chosen from a fake device tree (RKNN_BENCH_DTROOT), named with how they were chosen in
# the table header, the run JSON and the tuned JSON, overridden by --soc, embedded (the
# binary runs from another directory), and what they change in modeled times.
. tests/e2e/lib.sh

SHAPE=1x2048x8192
[ "${CHECK_SCOPE:-}" = quick ] && SHAPE=1x1024x2048
BIN=$(cd "$(dirname "$RKNN_BENCH")" && pwd)/$(basename "$RKNN_BENCH")
RUN="run --device sim --shape $SHAPE --iters 1 --warmup 0 --verify none"

# dt NAME MODEL [COMPATIBLE]: a fake device tree in $TMP/NAME (strings NUL-terminated)
dt() {
	mkdir -p "$TMP/$1"
	[ -n "$2" ] && printf '%s\000' "$2" >"$TMP/$1/model"
	[ -n "${3:-}" ] && printf '%s\000rockchip,rk3588\000' "$3" >"$TMP/$1/compatible"
	echo "$TMP/$1"
}

json() { # FILE PATH: the value at PATH
	"$JSONCHECK" "$1" "$2" 2>&1
}

expect_value() { # FILE PATH EXPECTED DESCRIPTION
	got=$(json "$1" "$2")
	[ "$got" = "$3" ] && ok "$4" || not_ok "$4" "$2 is '$got', wanted '$3'"
}

# run_dt DIR NAME ARGS...: run with the device tree DIR, JSON to $TMP/NAME.json
run_dt() {
	d=$1
	name=$2
	shift 2
	RKNN_BENCH_DTROOT=$d $RKNN_BENCH $RUN --format json "$@" >"$TMP/$name.json" 2>"$TMP/$name.err"
}

# No device tree (a PC, CI): the default profile, as before.
run_dt "$TMP/none" none
expect_value "$TMP/none.json" context.hw_profile.label \
	"rk3588.json v1 (calibrated, see bench/calibration.md)" "no device tree: the default profile"
expect_value "$TMP/none.json" context.hw_profile.chosen_by \
	"built-in default: no board in the device tree" "no device tree: says why"

# An LPDDR4x board by its model (the vendor kernel's spelling and mainline's).
run_dt "$(dt opi5 'Xunlong Orange Pi 5')" opi5
expect_value "$TMP/opi5.json" context.hw_profile.label \
	"rk3588-lpddr4x.json v1 (extrapolated from LPDDR5, unconfirmed)" "Orange Pi 5: the LPDDR4x profile"
expect_value "$TMP/opi5.json" context.hw_profile.chosen_by \
	"board 'Xunlong Orange Pi 5' (LPDDR4x, by its model)" "Orange Pi 5: named with its memory"
expect_value "$TMP/opi5.json" results.0.config.hw_profile.label \
	"rk3588-lpddr4x.json v1 (extrapolated from LPDDR5, unconfirmed)" "each row's config names the profile"
expect_value "$TMP/opi5.json" results.0.config.ddr_gbps 23 "the roofline uses the LPDDR4x shared bandwidth"
run_dt "$(dt rock5b 'Radxa ROCK 5B')" rock5b
expect_value "$TMP/rock5b.json" context.hw_profile.label \
	"rk3588-lpddr4x.json v1 (extrapolated from LPDDR5, unconfirmed)" "ROCK 5B: the LPDDR4x profile"

# LPDDR5 boards: by compatible alone, and ROCK 5B+ (not a ROCK 5B).
run_dt "$(dt opi5u '' xunlong,orangepi-5-ultra)" opi5u
expect_value "$TMP/opi5u.json" context.hw_profile.chosen_by \
	"board 'xunlong,orangepi-5-ultra' (LPDDR5, by its compatible)" "Orange Pi 5 Ultra by compatible: LPDDR5"
run_dt "$(dt rock5bp 'Radxa ROCK 5B+')" rock5bp
expect_value "$TMP/rock5bp.json" context.hw_profile.label \
	"rk3588-lpddr5.json v1 (calibrated on an LPDDR5 board)" "ROCK 5B+: the LPDDR5 profile"

# An unknown board: the default, and the message names the board.
run_dt "$(dt other 'Pine64 QuartzPro64')" other
expect_value "$TMP/other.json" context.hw_profile.chosen_by \
	"built-in default: board 'Pine64 QuartzPro64' is not one whose memory is known" \
	"an unknown board: the default, named"

# --soc wins over the board.
run_dt "$TMP/opi5" soc --soc configs/soc/rk3588-lpddr5.json
expect_value "$TMP/soc.json" context.hw_profile.chosen_by "--soc configs/soc/rk3588-lpddr5.json" \
	"--soc overrides the board's profile"

# The table header names it too; the CPU uses none.
RKNN_BENCH_DTROOT=$TMP/opi5 $RKNN_BENCH $RUN >"$TMP/table" 2>/dev/null
expect_grep "^hardware profile: rk3588-lpddr4x.json v1 .*, chosen by board 'Xunlong Orange Pi 5'" \
	"$TMP/table" "the table header names the profile and why"
RKNN_BENCH_DTROOT=$TMP/opi5 $RKNN_BENCH run --device cpu --shape 1x64x64 --iters 1 --warmup 0 \
	--format json >"$TMP/cpu.json" 2>/dev/null
expect_value "$TMP/cpu.json" context.hw_profile null "the CPU device reports no hardware profile"

# Modeled times: LPDDR5 = the default (the same fitted numbers); LPDDR4x slower (its
# extrapolated 23 GB/s shared cap binds three cores streaming weights).
t_def=$(json "$TMP/none.json" results.0.stats.median_us)
t_l5=$(json "$TMP/rock5bp.json" results.0.stats.median_us)
t_l4=$(json "$TMP/opi5.json" results.0.stats.median_us)
[ "$t_def" = "$t_l5" ] && ok "LPDDR5 models the default's time ($t_def us)" ||
	not_ok "LPDDR5 models the default's time" "default $t_def us, LPDDR5 $t_l5 us"
awk -v a="$t_l4" -v b="$t_def" 'BEGIN { exit !(a > 1.1 * b) }' &&
	ok "LPDDR4x models $SHAPE slower ($t_l4 us vs $t_def us)" ||
	not_ok "LPDDR4x models $SHAPE slower" "LPDDR4x $t_l4 us, default $t_def us"

# Embedded: the installed binary needs no configs/ (run from elsewhere; under a RUNNER,
# $RKNN_BENCH is already the wrapper that runs the binary through it).
(cd "$TMP" && RKNN_BENCH_DTROOT=$TMP/opi5u "$BIN" $RUN --format json >"$TMP/away.json" 2>/dev/null)
expect_value "$TMP/away.json" context.hw_profile.label \
	"rk3588-lpddr5.json v1 (calibrated on an LPDDR5 board)" "the profiles are embedded in the binary"

# tune names it in its table and in the tuned JSON.
RKNN_BENCH_DTROOT=$TMP/opi5 $RKNN_BENCH tune --device sim --shape 1x64x64 --strategy model --top 1 \
	-o "$TMP/tuned.json" >"$TMP/tune.out" 2>/dev/null
expect_value "$TMP/tuned.json" hw_profile.chosen_by "board 'Xunlong Orange Pi 5' (LPDDR4x, by its model)" \
	"the tuned JSON names the profile and why"
expect_grep "^hardware profile: rk3588-lpddr4x.json" "$TMP/tune.out" "tune's table names the profile"


# info shows the board, its memory with the source, and the profile run would use.
RKNN_BENCH_DTROOT=$TMP/opi5 $RKNN_BENCH info --device sim >"$TMP/info" 2>/dev/null
expect_grep '^  memory +LPDDR4x \(http://www.orangepi.org/.*Orange-Pi-5.html' "$TMP/info" \
	"info: the board's memory and its source"
expect_grep "^  hardware profile +rk3588-lpddr4x.json v1 .*chosen by board 'Xunlong Orange Pi 5'" "$TMP/info" \
	"info: the profile run and tune use"
RKNN_BENCH_DTROOT=$TMP/opi5u $RKNN_BENCH info --device sim --format json >"$TMP/info.json" 2>/dev/null
expect_value "$TMP/info.json" board.memory lpddr5 "info --format json: board.memory"

# Profiles are checked against an RK3588's physical ranges (docs/reliability.md) when
# loaded, so a bad number is an input error (exit 2) naming the key, not a crash of the
# timing model (a tiny clock: SIGFPE, exit 136), a wrong time (a tiny efficiency
# overflowed into times faster than efficiency 1) or a device error later (one core: 3).
for bad in "clock_mhz 1e-9" "mac.fp16_efficiency 1e-300" "cores 1" "ddr.gbps_total 1e-12"; do
	key=${bad% *}
	sed "s/\(\"${key##*.}\": {\"value\": \)[^,]*/\1${bad#* }/" configs/soc/rk3588.json >"$TMP/bad-soc.json"
	expect_exit 2 "--soc with $bad: exit 2" -- $RKNN_BENCH run --device sim --shape 1x64x64 \
		--iters 1 --warmup 0 --soc "$TMP/bad-soc.json"
	expect_grep "bad-soc.json: $key is .*: must be" "$TMP/err" "--soc with $bad: the key and its range named"
done
