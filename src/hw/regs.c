/* The register database tables (built from regs.def) and field packing. */
#include "hw/regs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/error.h"

const struct rb_block_info rb_regs_blocks[RB_BLOCK_COUNT] = {
#define RB_BLOCK(name, base, target) [RB_BLOCK_##name] = {#name, base, target},
#include "hw/regs.def"
};

/* Where each register's fields are: regs.def lists every register's fields right after
 * it. FIRST_x counts the fields listed before register x (FIRSTX_x steps back so that
 * the next field enumerator takes the same value). NFIELDS_x counts x's own fields: each
 * RB_REG row closes the previous enum and opens one that adds 1 per field row. */
enum {
#define RB_REG(block, offset, name)                                                                \
	FIRST_##block##_##name, FIRSTX_##block##_##name = FIRST_##block##_##name - 1,
#define RB_FIELD(block, reg, name, lsb, width, fmt) POS_##block##_##reg##_##name,
#include "hw/regs.def"
};

/* clang-format off */
enum { NFIELDS_NONE = 0
#define RB_REG(block, offset, name) }; enum { NFIELDS_##block##_##name = 0
#define RB_FIELD(block, reg, name, lsb, width, fmt) +1
#include "hw/regs.def"
};
/* clang-format on */

const struct rb_reg_info rb_regs_regs[RB_REG_COUNT] = {
#define RB_REG(block, offset, name)                                                                \
	[RB_REG_##block##_##name] = {#name, RB_BLOCK_##block, offset,                              \
				     (enum rb_field_id)FIRST_##block##_##name,                     \
				     NFIELDS_##block##_##name},
#include "hw/regs.def"
};

/* clang-format off */
const struct rb_field_info rb_regs_fields[RB_FIELD_COUNT] = {
#define RB_FIELD(block, reg, name, lsb, width, fmt)                                                \
	[RB_FIELD_##block##_##reg##_##name] = {#name, RB_REG_##block##_##reg, lsb, width,          \
					       RB_FMT_##fmt},
#include "hw/regs.def"
};
/* clang-format on */

/* Every field fits a 32-bit register. */
#define RB_FIELD(block, reg, name, lsb, width, fmt)                                                \
	_Static_assert((lsb) + (width) <= 32 && (width) >= 1,                                      \
		       #block "." #reg "." #name " does not fit a 32-bit register");
#include "hw/regs.def"

/* Lookup tables over the 16-bit offset and target spaces, built once: the validator,
 * the encoder and the emulator ask for every word of every program. Entries hold the
 * id + 1 (0: none). Registers sit at multiples of 4 (checked by test_regs); an offset
 * that is not gets the search. */
struct rb_regs_lookup rb_regs_lookup;

int rb_regs_block_by_offset_slow(uint16_t offset)
{
	for (int i = 0; i < RB_BLOCK_COUNT; i++)
		if (offset >= rb_regs_blocks[i].base &&
		    (unsigned)(offset - rb_regs_blocks[i].base) < RB_BLOCK_SPAN)
			return i;
	return -ENOENT;
}

/* regs.def lists registers in increasing offset order (checked by test_regs). */
int rb_regs_reg_by_offset_slow(uint16_t offset)
{
	int lo = 0, hi = RB_REG_COUNT - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (rb_regs_regs[mid].offset == offset)
			return mid;
		if (rb_regs_regs[mid].offset < offset)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -ENOENT;
}

/* Built when the program loads, so a lookup costs no check of whether it was. */
__attribute__((constructor)) static void build_lookup(void)
{
	_Static_assert(RB_BLOCK_COUNT < 255 && RB_REG_COUNT < 65535, "ids fit the tables");
	for (int i = RB_BLOCK_COUNT - 1; i >= 0; i--) /* the first block of a target wins */
		if (rb_regs_blocks[i].target != 0)
			rb_regs_lookup.block_of_target[rb_regs_blocks[i].target] = (uint8_t)(i + 1);
	for (unsigned page = 0; page < sizeof(rb_regs_lookup.block_of_page); page++) {
		int b = rb_regs_block_by_offset_slow((uint16_t)(page * RB_BLOCK_SPAN));

		/* a page the blocks share or only part of: the search decides (0) */
		if (b >= 0 &&
		    rb_regs_block_by_offset_slow(
			(uint16_t)(page * RB_BLOCK_SPAN + RB_BLOCK_SPAN - 1)) == b &&
		    rb_regs_blocks[b].base % RB_BLOCK_SPAN == 0)
			rb_regs_lookup.block_of_page[page] = (uint8_t)(b + 1);
	}
	for (int id = 0; id < RB_REG_COUNT; id++) {
		const struct rb_reg_info *r = &rb_regs_regs[id];

		if (r->offset % 4 == 0 && rb_regs_reg_by_offset_slow(r->offset) == id)
			rb_regs_lookup.reg_of_word[r->offset / 4] = (uint16_t)(id + 1);
		for (unsigned i = 0; i < r->n_fields; i++)
			rb_regs_lookup.known_bits[id] |=
			    rb_field_mask((enum rb_field_id)(r->first_field + i));
	}
}

const char *rb_field_fullname(enum rb_field_id id, char *buf, size_t size)
{
	const struct rb_field_info *f = &rb_regs_fields[id];
	const struct rb_reg_info *r = &rb_regs_regs[f->reg];

	snprintf(buf, size, "%s.%s.%s", rb_regs_blocks[r->block].name, r->name, f->name);
	return buf;
}

static int overflow(enum rb_field_id id, int64_t value, unsigned bits, const char *what)
{
	char name[96];
	bool hex = rb_regs_fields[id].fmt == RB_FMT_X || rb_regs_fields[id].fmt == RB_FMT_A;

	rb_field_fullname(id, name, sizeof(name));
	if (hex && value >= 0)
		return rb_set_error(-ERANGE, "%s: 0x%" PRIx64 " does not fit %u bits%s", name,
				    (uint64_t)value, bits, what);
	return rb_set_error(-ERANGE, "%s: %" PRId64 " does not fit %u bits%s", name, value, bits,
			    what);
}

int rb_regs_pack_overflow(enum rb_field_id id, uint64_t raw)
{
	if (raw > INT64_MAX)
		raw = INT64_MAX; /* only to print something meaningful */
	return overflow(id, (int64_t)raw, rb_regs_fields[id].width, "");
}

static int encode_signed(enum rb_field_id id, int64_t value, uint32_t *reg)
{
	int64_t lim = INT64_C(1) << (rb_regs_fields[id].width - 1);

	if (value < -lim || value >= lim)
		return overflow(id, value, rb_regs_fields[id].width, " (two's complement)");
	return rb_field_pack(id, (uint64_t)value & rb_field_max(id), reg);
}

static int encode_bytes(enum rb_field_id id, int64_t value, uint32_t *reg)
{
	const struct rb_field_info *f = &rb_regs_fields[id];
	char name[96];

	if (value < 0 || (uint64_t)value >> f->lsb > rb_field_max(id))
		return overflow(id, value, f->lsb + f->width, "");
	if ((uint64_t)value & ((UINT64_C(1) << f->lsb) - 1))
		return rb_set_error(-EINVAL, "%s: 0x%" PRIx64 " is not a multiple of %u",
				    rb_field_fullname(id, name, sizeof(name)), (uint64_t)value,
				    1u << f->lsb);
	return rb_field_pack(id, (uint64_t)value >> f->lsb, reg);
}

int rb_field_encode(enum rb_field_id id, int64_t value, uint32_t *reg)
{
	switch (rb_regs_fields[id].fmt) {
	case RB_FMT_S:
		return encode_signed(id, value, reg);
	case RB_FMT_A:
		return encode_bytes(id, value, reg);
	default:
		if (value < 0)
			return overflow(id, value, rb_regs_fields[id].width, "");
		return rb_field_pack(id, (uint64_t)value, reg);
	}
}
