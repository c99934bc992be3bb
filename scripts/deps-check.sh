#!/bin/sh
# The floors of src/ (docs/architecture.md): a folder may include its own headers and
# those of folders on lower floors, never a higher one, so no two folders can include
# each other. Reads the `#include "folder/..."` lines of ROOT/src/*/*.[ch] and fails
# (exit 1) naming file:line and both folders for every include that goes up, and
# every cycle between folders. A folder missing from FLOORS is an error too: a new
# folder must be given its floor.
#
#   scripts/deps-check.sh [ROOT]    (default: the checkout this script is in)
set -eu
ROOT=${1:-$(dirname "$0")/..}
# Lowest first.
FLOORS="core host numeric results hw model sim dev npu run tune selftest page shim cli"

cd "$ROOT/src"
find . -name '*.[ch]' | sed 's#^\./##' | sort | xargs grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[a-z_]*/' /dev/null |
	awk -v floors="$FLOORS" '
	BEGIN {
		n = split(floors, f, " ")
		for (i = 1; i <= n; i++) rank[f[i]] = i
		bad = 0
	}
	{
		# file:line:#include "folder/header.h"
		split($0, p, ":")
		file = p[1]; line = p[2]
		from = file; sub(/\/.*/, "", from)
		to = $0; sub(/^[^"]*"/, "", to); sub(/\/.*/, "", to)
		if (!(from in rank)) { unknown[from] = file; next }
		if (!(to in rank)) next        # not a folder of src/ (e.g. "rknn_bench/", "uapi/")
		if (from == to) next
		edge[from, to] = file ":" line
		if (rank[to] > rank[from]) {
			printf "deps-check: src/%s:%s: %s (floor %d) includes %s (floor %d), a higher floor\n",
				file, line, from, rank[from], to, rank[to]
			bad = 1
		}
	}
	END {
		for (u in unknown) {
			printf "deps-check: src/%s: folder %s has no floor (add it to FLOORS in scripts/deps-check.sh and docs/architecture.md)\n", unknown[u], u
			bad = 1
		}
		# Cycles between two or more folders: depth-first search over the folder graph.
		for (i = 1; i <= n; i++) color[f[i]] = 0
		for (i = 1; i <= n; i++) if (color[f[i]] == 0) dfs(f[i], f[i])
		exit bad
	}
	function dfs(v, path,   i, w) {
		color[v] = 1
		for (i = 1; i <= n; i++) {
			w = f[i]
			if (!((v, w) in edge)) continue
			if (color[w] == 1) {
				printf "deps-check: folder cycle: %s -> %s (src/%s)\n", path, w, edge[v, w]
				bad = 1
			} else if (color[w] == 0) {
				dfs(w, path " -> " w)
			}
		}
		color[v] = 2
	}'
echo "deps-check: no include goes up a floor, no folder cycle ($FLOORS)"
