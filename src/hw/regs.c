/* The register database tables (built from regs.def) and field packing. */
#include "hw/regs.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/error.h"

static const struct rb_block_info blocks[RB_BLOCK_COUNT] = {
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

static const struct rb_reg_info regs[RB_REG_COUNT] = {
#define RB_REG(block, offset, name)                                                                \
	[RB_REG_##block##_##name] = {#name, RB_BLOCK_##block, offset,                              \
				     (enum rb_field_id)FIRST_##block##_##name,                     \
				     NFIELDS_##block##_##name},
#include "hw/regs.def"
};

/* clang-format off */
static const struct rb_field_info fields[RB_FIELD_COUNT] = {
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

const struct rb_block_info *rb_block(enum rb_block_id id)
{
	return &blocks[id];
}

const struct rb_reg_info *rb_reg(enum rb_reg_id id)
{
	return &regs[id];
}

const struct rb_field_info *rb_field(enum rb_field_id id)
{
	return &fields[id];
}

/* Lookup tables over the 16-bit offset and target spaces, built once: the validator,
 * the encoder and the emulator ask for every word of every program. Entries hold the
 * id + 1 (0: none). Registers sit at multiples of 4 (checked by test_regs); an offset
 * that is not gets the search. */
static struct {
	uint8_t block_of_target[1u << 16];
	uint8_t block_of_page[(1u << 16) / RB_BLOCK_SPAN];
	uint16_t reg_of_word[(1u << 16) / 4];
	uint32_t known_bits[RB_REG_COUNT];
} lookup;

static int block_by_offset_slow(uint16_t offset)
{
	for (int i = 0; i < RB_BLOCK_COUNT; i++)
		if (offset >= blocks[i].base && (unsigned)(offset - blocks[i].base) < RB_BLOCK_SPAN)
			return i;
	return -ENOENT;
}

/* regs.def lists registers in increasing offset order (checked by test_regs). */
static int reg_by_offset_slow(uint16_t offset)
{
	int lo = 0, hi = RB_REG_COUNT - 1;

	while (lo <= hi) {
		int mid = lo + (hi - lo) / 2;

		if (regs[mid].offset == offset)
			return mid;
		if (regs[mid].offset < offset)
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
		if (blocks[i].target != 0)
			lookup.block_of_target[blocks[i].target] = (uint8_t)(i + 1);
	for (unsigned page = 0; page < sizeof(lookup.block_of_page); page++) {
		int b = block_by_offset_slow((uint16_t)(page * RB_BLOCK_SPAN));

		/* a page the blocks share or only part of: the search decides (0) */
		if (b >= 0 &&
		    block_by_offset_slow((uint16_t)(page * RB_BLOCK_SPAN + RB_BLOCK_SPAN - 1)) ==
			b &&
		    blocks[b].base % RB_BLOCK_SPAN == 0)
			lookup.block_of_page[page] = (uint8_t)(b + 1);
	}
	for (int id = 0; id < RB_REG_COUNT; id++) {
		const struct rb_reg_info *r = &regs[id];

		if (r->offset % 4 == 0 && reg_by_offset_slow(r->offset) == id)
			lookup.reg_of_word[r->offset / 4] = (uint16_t)(id + 1);
		for (unsigned i = 0; i < r->n_fields; i++)
			lookup.known_bits[id] |=
			    rb_field_mask((enum rb_field_id)(r->first_field + i));
	}
}

int rb_block_by_target(uint16_t target)
{
	return lookup.block_of_target[target] ? lookup.block_of_target[target] - 1 : -ENOENT;
}

int rb_block_by_offset(uint16_t offset)
{
	unsigned page = offset / RB_BLOCK_SPAN;

	return lookup.block_of_page[page] ? lookup.block_of_page[page] - 1
					  : block_by_offset_slow(offset);
}

int rb_reg_by_offset(uint16_t offset)
{
	if (offset % 4)
		return reg_by_offset_slow(offset);
	return lookup.reg_of_word[offset / 4] ? lookup.reg_of_word[offset / 4] - 1 : -ENOENT;
}

int rb_reg_find(enum rb_block_id block, uint16_t offset)
{
	int id = rb_reg_by_offset(offset);

	return id >= 0 && regs[id].block == block ? id : -ENOENT;
}

const char *rb_field_fullname(enum rb_field_id id, char *buf, size_t size)
{
	const struct rb_field_info *f = &fields[id];
	const struct rb_reg_info *r = &regs[f->reg];

	snprintf(buf, size, "%s.%s.%s", blocks[r->block].name, r->name, f->name);
	return buf;
}

uint32_t rb_field_max(enum rb_field_id id)
{
	return (uint32_t)((UINT64_C(1) << fields[id].width) - 1);
}

uint32_t rb_field_mask(enum rb_field_id id)
{
	return rb_field_max(id) << fields[id].lsb;
}

uint32_t rb_reg_unknown_bits(enum rb_reg_id id, uint32_t value)
{
	return value & ~lookup.known_bits[id];
}

static int overflow(enum rb_field_id id, int64_t value, unsigned bits, const char *what)
{
	char name[96];
	bool hex = fields[id].fmt == RB_FMT_X || fields[id].fmt == RB_FMT_A;

	rb_field_fullname(id, name, sizeof(name));
	if (hex && value >= 0)
		return rb_set_error(-ERANGE, "%s: 0x%" PRIx64 " does not fit %u bits%s", name,
				    (uint64_t)value, bits, what);
	return rb_set_error(-ERANGE, "%s: %" PRId64 " does not fit %u bits%s", name, value, bits,
			    what);
}

int rb_field_pack(enum rb_field_id id, uint64_t raw, uint32_t *reg)
{
	const struct rb_field_info *f = &fields[id];

	if (raw > rb_field_max(id)) {
		if (raw > INT64_MAX)
			raw = INT64_MAX; /* only to print something meaningful */
		return overflow(id, (int64_t)raw, f->width, "");
	}
	*reg = (*reg & ~rb_field_mask(id)) | ((uint32_t)raw << f->lsb);
	return 0;
}

uint32_t rb_field_unpack(enum rb_field_id id, uint32_t reg)
{
	return (reg >> fields[id].lsb) & rb_field_max(id);
}

static int encode_signed(enum rb_field_id id, int64_t value, uint32_t *reg)
{
	int64_t lim = INT64_C(1) << (fields[id].width - 1);

	if (value < -lim || value >= lim)
		return overflow(id, value, fields[id].width, " (two's complement)");
	return rb_field_pack(id, (uint64_t)value & rb_field_max(id), reg);
}

static int encode_bytes(enum rb_field_id id, int64_t value, uint32_t *reg)
{
	const struct rb_field_info *f = &fields[id];
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
	switch (fields[id].fmt) {
	case RB_FMT_S:
		return encode_signed(id, value, reg);
	case RB_FMT_A:
		return encode_bytes(id, value, reg);
	default:
		if (value < 0)
			return overflow(id, value, fields[id].width, "");
		return rb_field_pack(id, (uint64_t)value, reg);
	}
}

int64_t rb_field_decode(enum rb_field_id id, uint32_t reg)
{
	const struct rb_field_info *f = &fields[id];
	uint32_t raw = rb_field_unpack(id, reg);

	switch (f->fmt) {
	case RB_FMT_S:
		if (raw >> (f->width - 1))
			return (int64_t)raw - (INT64_C(1) << f->width);
		return raw;
	case RB_FMT_A:
		return (int64_t)raw << f->lsb;
	default:
		return raw;
	}
}

#define WORD_MASK(part) ((UINT64_C(1) << RB_WORD_##part##_WIDTH) - 1)

uint64_t rb_word(uint16_t target, uint16_t offset, uint32_t value)
{
	return ((uint64_t)target & WORD_MASK(TARGET)) << RB_WORD_TARGET_LSB |
	       ((uint64_t)value & WORD_MASK(VALUE)) << RB_WORD_VALUE_LSB |
	       ((uint64_t)offset & WORD_MASK(OFFSET)) << RB_WORD_OFFSET_LSB;
}

uint16_t rb_word_target(uint64_t word)
{
	return (uint16_t)(word >> RB_WORD_TARGET_LSB & WORD_MASK(TARGET));
}

uint16_t rb_word_offset(uint64_t word)
{
	return (uint16_t)(word >> RB_WORD_OFFSET_LSB & WORD_MASK(OFFSET));
}

uint32_t rb_word_value(uint64_t word)
{
	return (uint32_t)(word >> RB_WORD_VALUE_LSB & WORD_MASK(VALUE));
}

uint64_t rb_word_reg(enum rb_reg_id id, uint32_t value)
{
	const struct rb_reg_info *r = &regs[id];

	return rb_word(blocks[r->block].target, r->offset, value);
}
