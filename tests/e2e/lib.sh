# Helpers for end-to-end tests of the rknn-bench binary; each check prints one TAP line.
# Sourced by tests/e2e/*.sh, which run from the top of the tree with $RKNN_BENCH set.
# The programs of $BUILD come as variables (tests/run-tests.sh points them at wrappers
# under a RUNNER); any other one runs through `built`.
RKNN_BENCH=${RKNN_BENCH:-build/rknn-bench}
JSONCHECK=${JSONCHECK:-${BUILD:-build}/tests/jsoncheck}
CONSUMER=${CONSUMER:-${BUILD:-build}/tests/consumer}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# The hardware profile follows the board the device tree names (hw/board.h): on a board,
# the emulator's modeled times would follow it too, so the tests read no device tree
# unless they set one (soc_profiles.sh).
RKNN_BENCH_DTROOT=${RKNN_BENCH_DTROOT:-$TMP/no-device-tree}
export RKNN_BENCH_DTROOT
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $1"; shift; for l in "$@"; do echo "#   $l"; done; }

# expect_exit CODE DESCRIPTION -- COMMAND...: runs COMMAND, output in $TMP/out, $TMP/err
expect_exit() {
	code=$1
	desc=$2
	shift 3
	"$@" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq "$code" ]; then ok "$desc"; else
		not_ok "$desc" "exit $rc, wanted $code" "$(head -c 600 "$TMP/err")"
	fi
}

# expect_grep PATTERN FILE DESCRIPTION
expect_grep() {
	if grep -qE -- "$1" "$2"; then ok "$3"; else
		not_ok "$3" "no line matches '$1' in $2:" "$(head -c 600 "$2")"
	fi
}

# built PROGRAM ARGS...: runs a program of $BUILD, through $RUNNER when there is one
# (make check-aarch64).
built() {
	$RUNNER "$@"
}

# preload LIBRARY COMMAND...: runs COMMAND with LIBRARY preloaded into the program under
# test; under a RUNNER (make check-aarch64) qemu hands it to the emulated program only.
preload() {
	lib=$1
	shift
	if [ -n "${RUNNER:-}" ]; then
		QEMU_SET_ENV="LD_PRELOAD=$lib" "$@"
	else
		LD_PRELOAD="$lib" "$@"
	fi
}
