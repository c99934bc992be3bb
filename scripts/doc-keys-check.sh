#!/bin/sh
# One owner per document (docs/architecture.md, "The documents"): the keys of the run
# report, the tuned JSON and the tune cache are named in their modules only; every
# other file reads and writes them through the modules' typed structs. Fails (exit 1)
# naming file:line, the key and its document for every key of the three named
# elsewhere in ROOT/src.
#
# A key is what a module names as one: the key argument of cJSON's object calls and of
# the modules' helpers around them (KEYCALLS), the key of an opt_* reader, a
# FIELD("key", ...) of a field table, and the strings of a table whose name holds
# "keys". The keys come from the modules themselves, never from a list here. A key
# that another document also has (a tuned JSON's pairs are a shapes file's, a run
# report embeds a device's config) belongs to that document too, so only the keys the
# three alone have are checked; the modules of those other documents (OTHERS) may name
# their own keys.
#
#   scripts/doc-keys-check.sh [ROOT]    (default: the checkout this script is in)
set -eu
ROOT=${1:-$(dirname "$0")/..}
cd "$ROOT"

# The modules: a path under src/, or a file name found wherever it is under src/.
RUN_REPORT="results/report.c results/report_json.c results/compare.c results/totals.c"
TUNED_JSON="tune/tuned_read.c tune/tuned_write.c tune/tuned_shard.c"
TUNE_CACHE="tune/cache.c"
# Other documents' modules: shapes file, plan config, tune space, a device's config,
# compare's output, info and host settings, SoC profile, a calibrated profile, perf.
OTHERS="core/shape.c cli/cmd_shapes.c npu/plan_json.c tune/space.c run/engine.c
run/engine_cpu.c run/engine_npu.c results/compare_json.c dev/info_json.c cli/cmd_info.c
hw/soc.c tune/calibrate_profile.c perfctr.c"
KEYCALLS='cJSON_[A-Za-z]*Object[A-Za-z]*|add_num|item|get|num|str|member|copy_string|number_or_nan|string_is|whole_in|count_in_range|set_written|replace_num|number_at|string_at'

files() { # NAME...: the files of src/ they name
	for f in "$@"; do
		case $f in
		*/*) if [ -f "src/$f" ]; then echo "src/$f"; else find src -name "${f##*/}"; fi ;;
		*) find src -name "$f" ;;
		esac
	done | sort -u
}

# keys FILE...: "FILE:LINE:key" for every key a file names.
keys() {
	[ $# -gt 0 ] || return 0
	awk -v keycalls="$KEYCALLS" '
	function emit(t, re, skip,   s) {
		while (match(t, re)) {
			s = substr(t, RSTART, RLENGTH); sub(/"$/, "", s); sub(/.*"/, "", s)
			print FILENAME ":" FNR ":" s
			t = substr(t, RSTART + RLENGTH)
		}
	}
	/^[ \t]*(\/\*|\*)/ { next }
	{
		if (match($0, /[A-Za-z_]*keys[A-Za-z_]*\[[A-Z_0-9]*\][ \t]*=[ \t]*\{/)) intable = 1
		if (intable) {
			emit($0, "\"[a-z][a-z0-9_]*\"")
			if ($0 ~ /\};/) intable = 0
			next
		}
		emit($0, "(" keycalls ")\\([ \t]*[^,\"()]+(\\([^()]*\\))?[^,\"()]*,[ \t]*\"[a-z][a-z0-9_]*\"")
		emit($0, "opt_[a-z]+\\([^\"]*\"[^\"]*\",[ \t]*\"[a-z][a-z0-9_]*\"")
		emit($0, "FIELD\\([ \t]*\"[a-z][a-z0-9_]*\"")
	}' "$@"
}

TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT
# shellcheck disable=SC2086
{
	files $RUN_REPORT >"$TMPD/m-run-report"
	files $TUNED_JSON >"$TMPD/m-tuned-json"
	files $TUNE_CACHE >"$TMPD/m-tune-cache"
	files $OTHERS >"$TMPD/others"
}
cat "$TMPD"/m-* "$TMPD/others" | sort -u >"$TMPD/owners"
# shellcheck disable=SC2046
keys $(cat "$TMPD/others") | cut -d: -f3 | sort -u >"$TMPD/shared"
for doc in run-report tuned-json tune-cache; do
	# shellcheck disable=SC2046
	keys $(cat "$TMPD/m-$doc") | cut -d: -f3 | sort -u | comm -23 - "$TMPD/shared" |
		sed "s/\$/ $doc/" >>"$TMPD/own"
done
find src -name '*.[ch]' | sort | comm -23 - "$TMPD/owners" >"$TMPD/rest"
# shellcheck disable=SC2046
keys $(cat "$TMPD/rest") | awk -F: '
	BEGIN { name["run-report"] = "run report"; name["tuned-json"] = "tuned JSON"; name["tune-cache"] = "tune cache" }
	NR == FNR { split($0, kd, " "); doc[kd[1]] = doc[kd[1]] (doc[kd[1]] ? " and the " : "") name[kd[2]]; next }
	($3 in doc) {
		printf "doc-keys-check: %s:%s: names the key \"%s\" of the %s: read and write it through its module\n", $1, $2, $3, doc[$3]
		bad = 1
	}
	END { exit bad }' "$TMPD/own" - || exit 1
echo "doc-keys-check: the $(wc -l <"$TMPD/own") keys of the run report, the tuned JSON and the tune cache are named in their modules only"
