#!/bin/sh
# Which tests of `make check` got slower: runs the suite at BASE (a commit) and on this
# checkout, one after the other on this machine, and prints every test both have with its
# wall time in each and the ratio, slowest first. A test is flagged when it takes more
# than LIMIT (default 1.10) times its old time and at least MIN_S seconds (default 1:
# below that, scheduling noise is larger than the test). Exit 1 when one is flagged.
#
# Usage: sh scripts/test-times.sh BASE
# Both suites run with this checkout's tests/run-tests.sh (TEST_TIMES), JOBS as make
# check runs them (default: one per CPU). BASE is built in a temporary worktree, removed
# at the end. Keep the machine otherwise idle: the times are wall times.
set -eu
base=${1:?usage: sh scripts/test-times.sh BASE}
limit=${LIMIT:-1.10}
min_s=${MIN_S:-1}
here=$(pwd)
tmp=$(mktemp -d)
trap 'git -C "$here" worktree remove --force "$tmp/base" >/dev/null 2>&1; rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

git worktree add --detach "$tmp/base" "$base" >/dev/null
cp tests/run-tests.sh "$tmp/base/tests/run-tests.sh" # the one that writes the times
echo "test-times: make check at $base ..." >&2
(cd "$tmp/base" && TEST_TIMES=$tmp/base.times make -j"${JOBS:-2}" check >"$tmp/base.log" 2>&1) ||
	echo "test-times: make check at $base failed (times are still compared)" >&2
echo "test-times: make check here ..." >&2
TEST_TIMES=$tmp/new.times make -j"${JOBS:-2}" check >"$tmp/new.log" 2>&1 ||
	echo "test-times: make check here failed (times are still compared)" >&2
tail -n 1 "$tmp/base.log" | sed "s/^/  $base: /" >&2
tail -n 1 "$tmp/new.log" | sed 's/^/  here: /' >&2

# "ms name" files joined by name: the tests both suites ran.
sort -k2 "$tmp/base.times" >"$tmp/b"
sort -k2 "$tmp/new.times" >"$tmp/n"
join -1 2 -2 2 "$tmp/b" "$tmp/n" | awk -v limit="$limit" -v min_s="$min_s" '
	{ b = $2 / 1000; n = $3 / 1000; r = (b > 0 ? n / b : 0)
	  flag = (r > limit && n >= min_s) ? "SLOWER" : ""
	  if (flag != "") slower++
	  tb += b; tn += n
	  printf "%-32s %9.2f %9.2f %6.2f %s\n", $1, b, n, r, flag }
	END { printf "%-32s %9.2f %9.2f %6.2f\n", "(sum of the common tests)", tb, tn, (tb > 0 ? tn / tb : 0)
	      exit slower > 0 }' >"$tmp/table" && rc=0 || rc=$?
printf '%-32s %9s %9s %6s\n' test "base s" "new s" ratio
sort -k3 -rn "$tmp/table" | grep -v '^(sum' || true
grep '^(sum' "$tmp/table"
exit "$rc"
