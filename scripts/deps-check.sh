#!/bin/sh
# The floors of src/ (docs/architecture.md, "The floors"): a folder may include and call
# its own code and that of the folders its row's "may include" column names, all on
# lower floors, so no two folders depend on each other. The table of that page is the
# only list of floors: this script reads it, so the page and the check cannot disagree.
#
# Include level: every `#include` of ROOT/src, with `"../x/y.h"` resolved against the
# including file's folder and `<x/y.h>` read as `"x/y.h"` when x is a folder of src/.
# Fails (exit 1), naming file:line and both folders, on an include of a higher floor,
# of a folder the may-include column does not name (or names for other files only:
# "sim (only `dev/transport_sim.c`)"), on a folder cycle, and on a folder of src/
# without a row.
#
# Link level (with OBJDIR, the build's obj directory holding OBJDIR/src/FOLDER/*.o):
# the symbol graph of the objects (nm: which object defines a symbol, which uses it).
# Fails on a call to a higher floor, also through a public header of include/rknn_bench/
# (each public function is mapped to the folder whose object defines it), and on a call
# into a folder the caller may not include, unless the caller may include
# `include/rknn_bench/` and the function is declared there (the shim).
#
#   scripts/deps-check.sh [ROOT [OBJDIR]]   (ROOT: default the checkout this script is in)
set -eu
ROOT=${1:-$(dirname "$0")/..}
OBJDIR=${2:-}
DOC="$ROOT/docs/architecture.md"
TMPD=$(mktemp -d)
trap 'rm -rf "$TMPD"' EXIT

[ -f "$DOC" ] || {
	echo "deps-check: $DOC: missing (the floors table lives there)" >&2
	exit 1
}

# The table: one line "folder floor may-include" per numbered row, e.g.
#   | 6 | `src/dev/` | ... | core, hw, sim (only `dev/transport_sim.c`), libdrm |
# -> dev 6 core,hw,sim:dev/transport_sim.c,libdrm   ("everything below" -> "*").
awk '
	/^## The floors/ { on = 1; next }
	/^## / { on = 0 }
	on && /^\| *[0-9]+ *\|/ {
		n = split($0, c, "|")
		floor = c[2]; gsub(/[ `]/, "", floor)
		folder = c[3]; gsub(/[ `]/, "", folder); sub(/^src\//, "", folder); sub(/\/$/, "", folder)
		may = c[n - 1]
		out = ""
		while (length(may) > 0) {
			# one item up to the next comma outside parentheses
			depth = 0; item = ""
			for (i = 1; i <= length(may); i++) {
				ch = substr(may, i, 1)
				if (ch == "(") depth++
				if (ch == ")") depth--
				if (ch == "," && depth == 0) break
				item = item ch
			}
			may = substr(may, i + 1)
			gsub(/^ +| +$/, "", item)
			if (item ~ /^everything below/) { out = out ",*"; continue }
			name = item; sub(/[ (].*/, "", name); gsub(/`/, "", name)
			only = ""
			if (item ~ /\(only /) {
				rest = item
				while (match(rest, /`[a-z_]+\/[a-z_0-9.]+`/)) {
					only = only ":" substr(rest, RSTART + 1, RLENGTH - 2)
					rest = substr(rest, RSTART + RLENGTH)
				}
			}
			out = out "," name only
		}
		print folder, floor, substr(out, 2)
	}' "$DOC" >"$TMPD/floors"

[ -s "$TMPD/floors" ] || {
	echo "deps-check: $DOC: no floors table (## The floors, rows | N | \`src/x/\` | ... |)" >&2
	exit 1
}

# Every include of src/: file line target, the target as written ("x/y.h" or <x/y.h>).
(cd "$ROOT/src" && find . -name '*.[ch]' | sed 's#^\./##' | sort |
	xargs grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*["<]' /dev/null || true) |
	sed -E 's/^([^:]*):([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*(["<][^">]*[">]).*/\1 \2 \3/' \
		>"$TMPD/includes"

# The symbol graph: "def FOLDER/FILE SYMBOL" and "use FOLDER/FILE SYMBOL" per object.
: >"$TMPD/symbols"
if [ -n "$OBJDIR" ]; then
	[ -d "$OBJDIR/src" ] || {
		echo "deps-check: $OBJDIR/src: no objects to check at link level (build first)" >&2
		exit 1
	}
	# One nm for all objects whose source still exists (a moved file leaves its old
	# object behind): "DIR/src/run/x.o: SYMBOL TYPE ..." (-P: portable format).
	(cd "$OBJDIR/src" && find . -name '*.o' | sed 's#^\./##' | sort) | while read -r o; do
		[ -f "$ROOT/src/${o%.o}.c" ] && echo "$o"
	done >"$TMPD/objects"
	(cd "$OBJDIR/src" && xargs nm -A -P <"$TMPD/objects") |
		awk '{
			src = $1; sub(/:$/, "", src); sub(/\.o$/, ".c", src)
			if ($3 == "U") print "use", src, $2
			else if ($3 ~ /^[TDBRVWGS]$/) print "def", src, $2
		}' >"$TMPD/symbols"
	# The functions the public headers declare: "pub HEADER SYMBOL".
	for h in "$ROOT"/include/rknn_bench/*.h; do
		[ -f "$h" ] || continue
		grep -oE '\b(rb|rknn)_[a-z0-9_]+[[:space:]]*\(' "$h" | sed -E 's/[[:space:]]*\($//' |
			sort -u | sed "s#^#pub rknn_bench/${h##*/} #"
	done >>"$TMPD/symbols"
fi

rc=0
awk -v floors_file="$TMPD/floors" -v includes_file="$TMPD/includes" '
	BEGIN {
		bad = 0
		while ((getline l < floors_file) > 0) {
			split(l, w, " ")
			rank[w[1]] = w[2] + 0; mayraw[w[1]] = w[3]; order[++n] = w[1]
		}
		for (i = 1; i <= n; i++) parse_may(order[i])
	}
	# may[from, to] = 1 when allowed; only[from, to] = " file file " when restricted.
	function parse_may(f,   items, k, m, parts, j, t) {
		m = split(mayraw[f], items, ",")
		for (k = 1; k <= m; k++) {
			if (items[k] == "*") { below[f] = 1; continue }
			split(items[k], parts, ":")
			t = parts[1]
			may[f, t] = 1
			for (j = 2; j in parts; j++) only[f, t] = only[f, t] " " parts[j]
			delete parts
		}
	}
	function allowed(from, to, file) {
		if (below[from]) return rank[to] < rank[from]
		if (!((from, to) in may)) return 0
		if ((from, to) in only) return index(only[from, to] " ", " " file " ") > 0
		return 1
	}
	function why(from, to, file) {
		if ((from, to) in only)
			return sprintf("only%s may include %s (docs/architecture.md)", only[from, to], to)
		return sprintf("%s may not include %s (may include: %s; docs/architecture.md)",
			from, to, mayraw[from] == "" ? "nothing of src/" : mayraw[from])
	}
	function folder_of(path) { sub(/\/.*/, "", path); return path }
	# "../tune/tune.h" from run/x.c -> tune/tune.h; "x.h" -> run/x.h; <tune/tune.h> -> tune/tune.h
	function resolve(file, target,   quoted, dir, p, parts, k, m, out) {
		quoted = substr(target, 1, 1) == "\""
		target = substr(target, 2, length(target) - 2)
		if (!quoted) return (folder_of(target) in rank) && target ~ /\// ? target : ""
		if (target !~ /^\.\.?\//) return target ~ /\// ? target : folder_of(file) "/" target
		dir = file; sub(/\/[^\/]*$/, "", dir)
		m = split(dir "/" target, parts, "/")
		out = ""
		for (k = 1; k <= m; k++) {
			if (parts[k] == "." || parts[k] == "") continue
			if (parts[k] == "..") { sub(/\/?[^\/]*$/, "", out); continue }
			out = out (out == "" ? "" : "/") parts[k]
		}
		return out
	}
	END {
		while ((getline l < includes_file) > 0) check_include(l)
		link_check()
		for (u in unknown) {
			printf "deps-check: src/%s: folder %s has no floor (add its row to the floors table of docs/architecture.md)\n", unknown[u], u
			bad = 1
		}
		for (i = 1; i <= n; i++) color[order[i]] = 0
		for (i = 1; i <= n; i++) if (color[order[i]] == 0) dfs(order[i], order[i])
		exit bad
	}
	function check_include(l,   w, file, from, to, path) {
		split(l, w, " ")
		file = w[1]
		from = folder_of(file)
		if (!(from in rank)) { unknown[from] = file; return }
		path = resolve(file, w[3])
		to = folder_of(path)
		if (!(to in rank) || from == to) return   # "rknn_bench/", "uapi/", <stdio.h>
		edge[from, to] = file ":" w[2]
		if (rank[to] > rank[from]) {
			printf "deps-check: src/%s:%s: %s (floor %d) includes %s (floor %d), a higher floor\n",
				file, w[2], from, rank[from], to, rank[to]
			bad = 1
		} else if (!allowed(from, to, file)) {
			printf "deps-check: src/%s:%s: includes %s: %s\n", file, w[2], path, why(from, to, file)
			bad = 1
		}
	}
	function link_check(   f, s, from, to, file, k, pubnote) {
		for (k in uses) {
			split(k, f, SUBSEP)
			file = f[1]; s = f[2]
			if (!(s in def)) continue          # libc, cJSON, libdrm, generated data
			from = folder_of(file); to = folder_of(def[s])
			if (!(from in rank)) { unknown[from] = file; continue }
			if (from == to || !(to in rank)) continue
			pubnote = (s in pub) ? sprintf(" (declared in include/%s)", pub[s]) : ""
			if (rank[to] > rank[from]) {
				printf "deps-check: src/%s calls %s%s, defined in src/%s: %s (floor %d) calls %s (floor %d), a higher floor\n",
					file, s, pubnote, def[s], from, rank[from], to, rank[to]
				bad = 1
			} else if (!allowed(from, to, file) && !(pubnote != "" && may[from, "include/rknn_bench/"])) {
				printf "deps-check: src/%s calls %s, defined in src/%s: %s\n", file, s, def[s], why(from, to, file)
				bad = 1
			}
		}
	}
	$1 == "def" { def[$3] = $2; next }
	$1 == "use" { uses[$2, $3] = 1; next }
	$1 == "pub" { pub[$3] = $2; next }
	function dfs(v, path,   i, w) {
		color[v] = 1
		for (i = 1; i <= n; i++) {
			w = order[i]
			if (!((v, w) in edge)) continue
			if (color[w] == 1) {
				printf "deps-check: folder cycle: %s -> %s (src/%s)\n", path, w, edge[v, w]
				bad = 1
			} else if (color[w] == 0) {
				dfs(w, path " -> " w)
			}
		}
		color[v] = 2
	}' "$TMPD/symbols" >"$TMPD/out" || rc=$?
sort "$TMPD/out"
[ "$rc" -eq 0 ] || exit "$rc"

floors=$(awk '{ printf "%s%s", sep, $1; sep = " " }' "$TMPD/floors")
if [ -n "$OBJDIR" ]; then
	echo "deps-check: no include and no call goes up a floor or outside its may-include column, no folder cycle ($floors)"
else
	echo "deps-check: no include goes up a floor or outside its may-include column, no folder cycle ($floors)"
fi
