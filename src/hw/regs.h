/* The NPU register database (regs.def) as enums, tables and field packing.
 *
 * Ids: RB_BLOCK_<BLOCK>, RB_REG_<BLOCK>_<REG>, RB_FIELD_<BLOCK>_<REG>_<FIELD>, e.g.
 * RB_FIELD_CNA_DATA_SIZE0_DATAIN_HEIGHT; the special target codes are RB_TARGET_SYNC
 * and RB_TARGET_OP_ENABLE. The tables are static and read-only; nothing here allocates.
 * Functions that can fail return 0 or a negative errno and record a message naming
 * BLOCK.REGISTER.FIELD with rb_set_error(). */
#ifndef RB_HW_REGS_H
#define RB_HW_REGS_H

#include <stddef.h>
#include <stdint.h>
#include <errno.h>

enum rb_block_id {
#define RB_BLOCK(name, base, target) RB_BLOCK_##name,
#include "hw/regs.def"
	RB_BLOCK_COUNT
};

enum rb_target_code {
#define RB_TARGET(name, code) RB_TARGET_##name = code,
#include "hw/regs.def"
};

/* The parts of a 64-bit regcmd word (§a.1): RB_WORD_<PART>_LSB and _WIDTH. */
enum {
#define RB_WORD_PART(name, lsb, width) RB_WORD_##name##_LSB = lsb, RB_WORD_##name##_WIDTH = width,
#include "hw/regs.def"
};

enum rb_reg_id {
#define RB_REG(block, offset, name) RB_REG_##block##_##name,
#include "hw/regs.def"
	RB_REG_COUNT
};

enum rb_field_id {
#define RB_FIELD(block, reg, name, lsb, width, fmt) RB_FIELD_##block##_##reg##_##name,
#include "hw/regs.def"
	RB_FIELD_COUNT
};

/* What a field's value is (regs.def's FMT column). */
enum rb_field_fmt {
	RB_FMT_U, /* unsigned count or code, printed in decimal */
	RB_FMT_S, /* signed, two's complement in the field's width, decimal */
	RB_FMT_X, /* address, bitmap or unknown meaning, hex */
	RB_FMT_A, /* byte quantity whose bits lsb and up are stored, hex */
};

struct rb_block_info {
	const char *name;
	uint16_t base;   /* first offset of the block within a core */
	uint16_t target; /* regcmd target code; 0 = not written by regcmd */
};

struct rb_reg_info {
	const char *name;
	enum rb_block_id block;
	uint16_t offset;
	enum rb_field_id first_field; /* its fields are first_field .. first_field+n_fields-1 */
	unsigned n_fields;
};

struct rb_field_info {
	const char *name;
	enum rb_reg_id reg;
	uint8_t lsb;
	uint8_t width;
	enum rb_field_fmt fmt;
};

/* The size of every block's offset window (§1: blocks 0x1000 apart). */
#define RB_BLOCK_SPAN 0x1000u

/* The tables and lookups behind the accessors below (regs.c). The accessors are inline:
 * the encoder, the validator and the emulator call them for every regcmd word. */
extern const struct rb_block_info rb_regs_blocks[RB_BLOCK_COUNT];
extern const struct rb_reg_info rb_regs_regs[RB_REG_COUNT];
extern const struct rb_field_info rb_regs_fields[RB_FIELD_COUNT];
struct rb_regs_lookup {
	uint8_t block_of_target[1u << 16];                 /* block + 1; 0: none */
	uint8_t block_of_page[(1u << 16) / RB_BLOCK_SPAN]; /* 0: none or shared: search */
	uint16_t reg_of_word[(1u << 16) / 4];              /* reg + 1; 0: none */
	uint32_t known_bits[RB_REG_COUNT];
};
extern struct rb_regs_lookup rb_regs_lookup; /* built before main (regs.c) */

static inline const struct rb_block_info *rb_block(enum rb_block_id id)
{
	return &rb_regs_blocks[id];
}

static inline const struct rb_reg_info *rb_reg(enum rb_reg_id id)
{
	return &rb_regs_regs[id];
}

static inline const struct rb_field_info *rb_field(enum rb_field_id id)
{
	return &rb_regs_fields[id];
}

/* Lookups; each returns an id (>= 0) or -ENOENT. */
int rb_regs_block_by_offset_slow(uint16_t offset);
int rb_regs_reg_by_offset_slow(uint16_t offset);

static inline int rb_block_by_target(uint16_t target)
{
	uint8_t b = rb_regs_lookup.block_of_target[target];

	return b ? b - 1 : -ENOENT;
}

static inline int rb_block_by_offset(uint16_t offset)
{
	uint8_t b = rb_regs_lookup.block_of_page[offset / RB_BLOCK_SPAN];

	return b ? b - 1 : rb_regs_block_by_offset_slow(offset);
}

static inline int rb_reg_by_offset(uint16_t offset)
{
	uint16_t r = rb_regs_lookup.reg_of_word[offset / 4];

	if (offset % 4)
		return rb_regs_reg_by_offset_slow(offset);
	return r ? r - 1 : -ENOENT;
}

static inline int rb_reg_find(enum rb_block_id block, uint16_t offset)
{
	int id = rb_reg_by_offset(offset);

	return id >= 0 && rb_regs_regs[id].block == block ? id : -ENOENT;
}

/* "CNA.DATA_SIZE0.DATAIN_HEIGHT" into buf; returns buf. */
const char *rb_field_fullname(enum rb_field_id id, char *buf, size_t size);

/* The largest raw value of a field: 2^width - 1. */
static inline uint32_t rb_field_max(enum rb_field_id id)
{
	return (uint32_t)((UINT64_C(1) << rb_regs_fields[id].width) - 1);
}

/* The bits of a register value the field occupies. */
static inline uint32_t rb_field_mask(enum rb_field_id id)
{
	return rb_field_max(id) << rb_regs_fields[id].lsb;
}

/* The bits of a register value that no field of the register covers. */
static inline uint32_t rb_reg_unknown_bits(enum rb_reg_id id, uint32_t value)
{
	return value & ~rb_regs_lookup.known_bits[id];
}

/* Raw bits: pack replaces the field's bits in *reg with raw (-ERANGE if raw does not
 * fit the width); unpack returns them. */
int rb_regs_pack_overflow(enum rb_field_id id, uint64_t raw);

static inline int rb_field_pack(enum rb_field_id id, uint64_t raw, uint32_t *reg)
{
	if (raw > rb_field_max(id))
		return rb_regs_pack_overflow(id, raw);
	*reg = (*reg & ~rb_field_mask(id)) | ((uint32_t)raw << rb_regs_fields[id].lsb);
	return 0;
}

static inline uint32_t rb_field_unpack(enum rb_field_id id, uint32_t reg)
{
	return (reg >> rb_regs_fields[id].lsb) & rb_field_max(id);
}

/* Values as the FMT column defines them (U/X: unsigned; S: signed; A: a byte quantity
 * that must be a multiple of 1 << lsb). encode replaces the field's bits in *reg;
 * -ERANGE if the value does not fit, -EINVAL if an A value is misaligned. decode is its
 * inverse: decode(encode(v)) == v for every value encode accepts. */
int rb_field_encode(enum rb_field_id id, int64_t value, uint32_t *reg);

static inline int64_t rb_field_decode(enum rb_field_id id, uint32_t reg)
{
	const struct rb_field_info *f = &rb_regs_fields[id];
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

/* One 64-bit regcmd word and its parts (§a.1). */
#define RB_WORD_MASK(part) ((UINT64_C(1) << RB_WORD_##part##_WIDTH) - 1)

static inline uint64_t rb_word(uint16_t target, uint16_t offset, uint32_t value)
{
	return ((uint64_t)target & RB_WORD_MASK(TARGET)) << RB_WORD_TARGET_LSB |
	       ((uint64_t)value & RB_WORD_MASK(VALUE)) << RB_WORD_VALUE_LSB |
	       ((uint64_t)offset & RB_WORD_MASK(OFFSET)) << RB_WORD_OFFSET_LSB;
}

static inline uint16_t rb_word_target(uint64_t word)
{
	return (uint16_t)(word >> RB_WORD_TARGET_LSB & RB_WORD_MASK(TARGET));
}

static inline uint16_t rb_word_offset(uint64_t word)
{
	return (uint16_t)(word >> RB_WORD_OFFSET_LSB & RB_WORD_MASK(OFFSET));
}

static inline uint32_t rb_word_value(uint64_t word)
{
	return (uint32_t)(word >> RB_WORD_VALUE_LSB & RB_WORD_MASK(VALUE));
}

/* The word writing `value` to a register through its block's target code. */
static inline uint64_t rb_word_reg(enum rb_reg_id id, uint32_t value)
{
	const struct rb_reg_info *r = &rb_regs_regs[id];

	return rb_word(rb_regs_blocks[r->block].target, r->offset, value);
}

#endif
