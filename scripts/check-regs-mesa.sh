#!/bin/sh
# Cross-checks the register facts table (tests/golden/regs-facts.tsv, which
# tests/unit/test_regs.c holds regs.def to) against a copy of Mesa's rocket register
# description, src/gallium/drivers/rocket/registers.xml (MIT), so that the transcription
# is compared with a source that could disagree with it. Not part of `make check`: it
# needs a Mesa checkout, which CI does not have.
#
#   scripts/check-regs-mesa.sh PATH/TO/registers.xml [FACTS.tsv]
#
# Every row whose source is "mesa" must name a register Mesa has at that offset, with
# that name, and a field of that name at those bits. Names as the table's header says:
# DPU_RDMA and PPU_RDMA registers drop Mesa's RDMA_ prefix, GLOBAL.OPERATION_ENABLE's bits drop _OP_EN.
# Rows of a block (domain) the copy lacks are counted apart, so a copy of part of the
# file checks that part. Prints each disagreement, then a summary line; exit 0 when
# there is none, 1 when there is one, 2 on bad usage.
#
# Last run (2026-11-29) on Mesa's registers.xml at bminor/mesa-mesa 5b829658f74f (60,076
# bytes, 711 fields): 406 rows checked, 0 disagree, 12 rows from other sources (vendor
# kernel, TRM) not checked. The first run found the PPU_RDMA rows dropping RDMA_ as the
# DPU_RDMA ones do, which the header did not say; names only, no offset or bit differed.
set -eu
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
	echo "usage: $0 PATH/TO/registers.xml [regs-facts.tsv]" >&2
	exit 2
fi
XML=$1
FACTS=${2:-$(dirname "$0")/../tests/golden/regs-facts.tsv}
for f in "$XML" "$FACTS"; do
	[ -r "$f" ] || { echo "$0: cannot read '$f'" >&2; exit 2; }
done
grep -q "<domain name=" "$XML" ||
	{ echo "$0: '$XML' has no <domain>: not Mesa's rocket registers.xml" >&2; exit 2; }

# Mesa's fields as "DOMAIN OFFSET REGISTER FIELD BITS".
mesa=$(mktemp)
trap 'rm -f "$mesa"' EXIT
# (POSIX awk: no strtonum; offsets are compared as upper-case hex of 4 digits or more.)
NORM='function norm(h) { h = toupper(substr(h, 3)); while (length(h) < 4) h = "0" h; return "0x" h }'
awk "$NORM"'
function attr(line, name,   m) {
	if (match(line, name "=\"[^\"]*\"")) {
		m = substr(line, RSTART + length(name) + 2, RLENGTH - length(name) - 3)
		return m
	}
	return ""
}
/<domain / { dom = attr($0, "name") }
/<reg32 / { off = norm(attr($0, "offset")); reg = attr($0, "name") }
/<bitfield / {
	name = attr($0, "name"); pos = attr($0, "pos")
	bits = pos != "" ? pos : (attr($0, "high") ":" attr($0, "low"))
	print dom, off, reg, name, bits
}' "$XML" >"$mesa"

awk -F'\t' -v mesa="$mesa" "$NORM"'
BEGIN {
	while ((getline line < mesa) > 0) {
		split(line, f, " ")
		domains[f[1]] = 1
		key = f[1] SUBSEP f[2]
		regname[key] = f[3]
		field[key, f[4]] = f[5]
		nm++
	}
}
/^#/ || $1 == "block" || NF < 6 { next }
$6 != "mesa" { other++; next }
!($1 in domains) { absent++; next }
{
	blk = $1; off = norm($2); reg = $3; fld = $4; bits = $5
	mreg = reg; mfld = fld
	if (blk == "DPU_RDMA" || blk == "PPU_RDMA") mreg = "RDMA_" reg
	if (blk == "GLOBAL" && reg == "OPERATION_ENABLE") mfld = fld "_OP_EN"
	key = blk SUBSEP off
	checked++
	if (!(key in regname)) {
		printf "%s %s %s: Mesa has no register at this offset in domain %s\n", blk, off, reg, blk
		bad++; next
	}
	if (regname[key] != mreg && regname[key] != reg) {
		printf "%s %s: named %s here, %s in Mesa\n", blk, off, reg, regname[key]
		bad++
	}
	if (!((key, mfld) in field) && !((key, fld) in field)) {
		printf "%s %s %s.%s: Mesa has no such field\n", blk, off, reg, fld
		bad++; next
	}
	mb = ((key, mfld) in field) ? field[key, mfld] : field[key, fld]
	if (mb != bits) {
		printf "%s %s %s.%s: bits %s here, %s in Mesa\n", blk, off, reg, fld, bits, mb
		bad++
	}
}
END {
	printf "check-regs-mesa: %d rows from Mesa checked against %d Mesa fields: %d disagree; %d rows from other sources not checked; %d rows of blocks this copy lacks\n", checked, nm, bad, other, absent
	exit bad ? 1 : 0
}' "$FACTS"
