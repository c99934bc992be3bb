#!/bin/sh
# Runs every test of `make check` and ends with the line "N passed, N failed".
#
# Usage: BUILD=build sh tests/run-tests.sh UNIT_TEST_BINARY...
# Unit tests are cmocka binaries run with TAP output; end-to-end tests are the
# tests/e2e/*.sh scripts, which also print TAP ("ok"/"not ok" lines). A binary or
# script that dies without reporting counts as one failure.
# RUNNER runs the built programs of another architecture, e.g. RUNNER="qemu-aarch64 -L /"
# (make check-aarch64): every program of $BUILD is then reached through a wrapper script,
# so the tests themselves stay unchanged.
BUILD=${BUILD:-build}
RUNNER=${RUNNER:-}
export BUILD RUNNER
log=$(mktemp)
wrappers=$(mktemp -d)
trap 'rm -rf "$log" "$wrappers"' EXIT
status=0

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

run_one() { # name, command...
	name=$1
	shift
	out=$(mktemp)
	"$@" >"$out" 2>&1
	rc=$?
	grep -E '^(not )?ok ' "$out" | sed "s|^|$name: |" >>"$log"
	grep -E '^not ok ' "$out" | sed "s|^|FAIL $name: |"
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$out"; then
		echo "not ok - $name exited with status $rc" | tee -a "$log"
		tail -n 20 "$out"
	elif ! grep -qE '^(not )?ok ' "$out"; then
		echo "not ok - $name reported no test" | tee -a "$log"
		tail -n 20 "$out"
	fi
	rm -f "$out"
}

for t in "$@"; do
	CMOCKA_MESSAGE_OUTPUT=TAP run_one "$(basename "$t")" "$(wrap "$t")"
done
for t in tests/e2e/*.sh; do
	[ -f "$t" ] && [ "$(basename "$t")" != lib.sh ] || continue
	run_one "$(basename "$t" .sh)" sh "$t"
done

passed=$(grep -c ': ok \|^ok ' "$log")
failed=$(grep -c 'not ok' "$log")
[ "$failed" -eq 0 ] || status=1
echo "$passed passed, $failed failed"
exit $status
