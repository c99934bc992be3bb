#!/bin/sh
# Compares two tuned JSONs key by key, e.g. a merged tune with the unsharded tune of the
# same shapes and settings (docs/scale-out.md). Every key path of either file is read:
# a key that one file has and the other lacks differs, and so does any other value.
# Left out, because they say when, where or how the file was made, not what was tuned:
#   generated, context.date         when the file was written
#   shard, merged                   which shard a file is, which shards a merge joined
#   context.host,                   the host a tune (a merge: its first shard) ran on
#   context.host_settings.host,
#   pairs[].measured.cpu_reference.host
#   pairs[].measured.cpu_reference  cpu_us and speedup: the CPU reference timed by a
#     .cpu_us, .speedup              clock on the machine that ran the shape, which two
#                                    runs of one tune never repeat exactly
# Numbers equal to 1 part in 1e12 count as equal (a ratio computed in another order
# differs in its last bit). Needs jq.
#
# usage: scripts/tune-diff.sh [--ignore JQPATH]... A.json B.json
#   --ignore JQPATH  leave out more keys, as jq paths (e.g. '.pairs[].measured.boards')
# Prints one line per difference: the key path, A's value, B's value (absent: "-").
# Exit: 0 the same, 1 they differ, 2 usage or an unreadable file.
set -eu

ignore=
while [ $# -gt 0 ]; do
	case $1 in
	--ignore) ignore="$ignore, ${2:?}"; shift 2 ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || { echo "usage: $0 [--ignore JQPATH]... A.json B.json" >&2; exit 2; }
command -v jq >/dev/null 2>&1 ||
	{ echo "tune-diff: jq is not installed (Debian: apt-get install jq)" >&2; exit 2; }

# Every leaf (scalars, null, empty arrays and objects) as "path<TAB>value", sorted.
leaves() {
	jq -r 'del(.generated, .shard, .merged, .context.date, .context.host,
		   .context.host_settings.host, .pairs[]?.measured.cpu_reference.host,
		   .pairs[]?.measured.cpu_reference.cpu_us,
		   .pairs[]?.measured.cpu_reference.speedup'"$ignore"')
	       | tostream | select(length == 2)
	       | "\(.[0] | map(tostring) | join("."))\t\(.[1] | tojson)"' "$1" | LC_ALL=C sort
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
leaves "$1" >"$tmp/a" || { echo "tune-diff: cannot read '$1' as JSON" >&2; exit 2; }
leaves "$2" >"$tmp/b" || { echo "tune-diff: cannot read '$2' as JSON" >&2; exit 2; }
LC_ALL=C join -t "$(printf '\t')" -a 1 -a 2 -e - -o 0,1.2,2.2 "$tmp/a" "$tmp/b" |
	awk -F '\t' '
	function numeric(v) { return v ~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/ }
	function abs(v) { return v < 0 ? -v : v }
	$2 == $3 { next }
	numeric($2) && numeric($3) && abs($2 - $3) <= 1e-12 * (abs($2) > abs($3) ? abs($2) : abs($3)) { next }
	{ print; n++ }
	END { exit n > 0 }'
