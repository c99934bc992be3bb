#!/bin/sh
# Writes the man pages of rknn-bench from its own --help text: rknn-bench.1 and one
# rknn-bench-COMMAND.1 per command (not `help`), into OUTDIR.
#
# Usage: [RUNNER=...] sh scripts/help2man.sh BIN VERSION OUTDIR
#
# The help text has a fixed shape (src/cli/): a usage block, description paragraphs,
# option sections ("name:" lines, then "  --option ARG   description" lines with
# indented continuations), then closing paragraphs. Those become SYNOPSIS,
# DESCRIPTION, OPTIONS (one .SS per section, one .TP per option) and NOTES.
set -eu
RUNNER=${RUNNER:-}
. "$(dirname "$0")/cli-help.sh"

[ $# -eq 3 ] || { echo "usage: help2man.sh BIN VERSION OUTDIR" >&2; exit 2; }
bin=$1
version=$2
outdir=$3

# roff: help text (stdin) to the body of a page, after NAME.
to_roff() {
	awk '
	function esc(s) {
		gsub(/\\/, "\\e", s); gsub(/-/, "\\-", s)
		if (s ~ /^[.\047]/) s = "\\&" s
		return s
	}
	function section(name) { if (sec != name) { print ".SH " name; sec = name } }
	function end_nf() { if (nf) { print ".fi"; print ".RE"; nf = 0; blank = 1 } }
	NR == 1 || (synopsis && /^ /) {
		if (NR == 1) { section("SYNOPSIS"); print ".nf"; sub(/^usage: +/, "") }
		else sub(/^ +/, "")
		sub(/^usage: +/, ""); synopsis = 1; print esc($0); next
	}
	synopsis { print ".fi"; synopsis = 0 }
	/^$/ { end_nf(); blank = 1; next }
	# A section of options: "name:" at the margin (a sentence starts upper case).
	/^[a-z].*:$/ {
		end_nf(); section("OPTIONS"); s = $0; sub(/:$/, "", s)
		print ".SS \"" esc(s) "\""; blank = 0; next
	}
	# An option line: the options, then the description after two spaces or more, or
	# after one at the column of the others ("--out fp32|fp16|int32 output ...").
	/^ +-/ && sec != "NOTES" {
		end_nf(); section("OPTIONS"); s = $0; opt = $0; d = ""
		if (match(s, /[^ ]   */)) {
			col = RSTART + RLENGTH; opt = substr(s, 1, RSTART); d = substr(s, col)
		} else if (col && substr(s, col - 1, 1) == " ") {
			opt = substr(s, 1, col - 2); d = substr(s, col)
		} else if (col && substr(s, col, 1) == " ") {
			opt = substr(s, 1, col - 1); d = substr(s, col + 1)
		}
		sub(/^ +/, "", opt)
		print ".TP"; print "\\fB" esc(opt) "\\fR"; if (d != "") print esc(d)
		item = 1; blank = 0; next
	}
	# An indented line: an option description going on, or an example kept as is.
	/^ / && sec == "OPTIONS" && item && !blank { s = $0; sub(/^ +/, "", s); print esc(s); next }
	/^ / {
		if (!nf) { if (blank || sec != "DESCRIPTION") print ".PP"; print ".RS 4"; print ".nf"; nf = 1 }
		s = $0; sub(/^  /, "", s); print esc(s); blank = 0; next
	}
	{
		end_nf()
		if (sec == "SYNOPSIS") section("DESCRIPTION")
		else if (sec == "OPTIONS" && blank) section("NOTES")
		else if (blank) print ".PP"
		if (sec == "NOTES") item = 0
		print esc($0); blank = 0
	}
	END { end_nf(); if (synopsis) print ".fi" }
	' | sed 's/·/\\[md]/g; s/×/\\[mu]/g'
}

# header NAME SUMMARY: .TH and NAME.
header() {
	upper=$(echo "$1" | tr 'a-z' 'A-Z')
	printf '.TH "%s" 1 "" "rknn-bench %s" "rknn-bench manual"\n' "$upper" "$version"
	printf '.SH NAME\n%s \\- %s\n' "$(echo "$1" | sed 's/-/\\-/g')" "$(echo "$2" | sed 's/-/\\-/g')"
}

mkdir -p "$outdir"
commands=$(cli_commands "$bin" | grep -v '^help ')

# rknn-bench.1: the top-level help, without its command list, which becomes COMMANDS
# with a page to see for each.
{
	header rknn-bench "$(cli_help "$bin" | sed -n '3p' | sed 's/\.$//; s/^B/b/')"
	cli_help "$bin" | awk '/^commands:/ { skip = 1 } skip && /^$/ { skip = 0; next } !skip' |
		to_roff
	echo ".SH COMMANDS"
	echo "$commands" | while read -r name summary; do
		printf '.TP\n\\fB%s\\fR\n%s (\\fBrknn\\-bench\\-%s\\fR(1))\n' "$name" \
			"$(echo "$summary" | sed 's/-/\\-/g')" "$name"
	done
	cat <<'ROFF'
.SH FILES
.TP
\fIPREFIX\fB/share/rknn\-bench/\fR
The shipped shapes files (mat_kernel_size.json, regression.json, ...) and, under
\fBsoc/\fR, the hardware profiles of the emulator. A relative shapes file or
\fB\-\-soc\fR file not found in the current directory is looked up there (a leading
\fBconfigs/\fR is dropped), PREFIX being the parent of the directory the running binary
is in; a note on stderr names the file used.
ROFF
	printf '.SH SEE ALSO\n'
	echo "$commands" | awk '{ printf "%s\\fBrknn\\-bench\\-%s\\fR(1)", (NR > 1 ? ",\n" : ""), $1 } END { print "" }'
} >"$outdir/rknn-bench.1"

echo "$commands" | while read -r name summary; do
	{
		header "rknn-bench-$name" "$summary"
		cli_help "$bin" "$name" | to_roff
		printf '.SH SEE ALSO\n\\fBrknn\\-bench\\fR(1)\n'
	} >"$outdir/rknn-bench-$name.1"
done
