/* The regcmd decoder: 64-bit words back to "BLOCK.REGISTER field=value ..." text, with
 * every word the database does not explain flagged (npu-facts.md §a.1). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "npu/regcmd.h"
#include "npu/regs.h"

/* snprintf-style appending: len counts what would have been written. */
struct sbuf {
	char *buf;
	size_t size;
	size_t len;
};

static void out(struct sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void out(struct sbuf *s, const char *fmt, ...)
{
	va_list ap;
	size_t room = s->len < s->size ? s->size - s->len : 0;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? s->buf + s->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		s->len += (size_t)n;
}

/* The op-enable word's value is laid out like GLOBAL.OPERATION_ENABLE (§a.1). */
static uint32_t op_enable_known_bits(void)
{
	return ~rb_reg_unknown_bits(RB_REG_GLOBAL_OPERATION_ENABLE, UINT32_MAX);
}

static enum rb_decode_status special_status(const struct rb_decoded *d)
{
	if (d->kind == RB_WORD_SYNC)
		return d->offset == 0 && d->value == 0 ? RB_DECODE_OK : RB_DECODE_BAD_SPECIAL;
	if (d->offset != rb_reg(RB_REG_PC_OPERATION_ENABLE)->offset ||
	    (d->value & ~op_enable_known_bits()))
		return RB_DECODE_BAD_SPECIAL;
	return RB_DECODE_OK;
}

static enum rb_decode_status reg_status(struct rb_decoded *d)
{
	int where = rb_block_by_offset(d->offset);

	d->reg = rb_reg_by_offset(d->offset);
	if (where >= 0 && where != d->block)
		return RB_DECODE_MISMATCH;
	if (d->reg < 0)
		return RB_DECODE_UNKNOWN_OFFSET;
	if (rb_reg_unknown_bits(d->reg, d->value))
		return RB_DECODE_UNKNOWN_BITS;
	return RB_DECODE_OK;
}

enum rb_decode_status rb_decode_word(uint64_t word, struct rb_decoded *d)
{
	memset(d, 0, sizeof(*d));
	d->word = word;
	d->target = rb_word_target(word);
	d->offset = rb_word_offset(word);
	d->value = rb_word_value(word);
	d->block = -1;
	d->reg = -1;
	if (word == 0) {
		d->kind = RB_WORD_END;
	} else if (d->target == RB_TARGET_SYNC || d->target == RB_TARGET_OP_ENABLE) {
		d->kind = d->target == RB_TARGET_SYNC ? RB_WORD_SYNC : RB_WORD_OP_ENABLE;
		d->status = special_status(d);
	} else if ((d->block = rb_block_by_target(d->target)) < 0) {
		d->kind = RB_WORD_UNKNOWN;
		d->status = RB_DECODE_UNKNOWN_TARGET;
	} else {
		d->kind = RB_WORD_REG;
		d->status = reg_status(d);
	}
	return d->status;
}

static void format_field(struct sbuf *s, enum rb_field_id id, uint32_t value)
{
	const struct rb_field_info *f = rb_field(id);
	int64_t v = rb_field_decode(id, value);

	if (f->fmt == RB_FMT_X || f->fmt == RB_FMT_A)
		out(s, " %s=0x%" PRIx64, f->name, (uint64_t)v);
	else
		out(s, " %s=%" PRId64, f->name, v);
}

static void format_reg(struct sbuf *s, const struct rb_decoded *d)
{
	const struct rb_reg_info *r = rb_reg(d->reg);
	uint32_t unknown = rb_reg_unknown_bits(d->reg, d->value);

	out(s, "%s.%s", rb_block(r->block)->name, r->name);
	for (unsigned i = 0; i < r->n_fields; i++)
		format_field(s, (enum rb_field_id)(r->first_field + i), d->value);
	if (unknown)
		out(s, "  # value bits 0x%" PRIx32 " are in no known field", unknown);
}

static void format_op_enable(struct sbuf *s, const struct rb_decoded *d)
{
	const struct rb_reg_info *r = rb_reg(RB_REG_GLOBAL_OPERATION_ENABLE);
	uint32_t unknown = d->value & ~op_enable_known_bits();
	const char *sep = " ";

	out(s, "op_enable");
	for (unsigned i = 0; i < r->n_fields; i++) {
		enum rb_field_id id = (enum rb_field_id)(r->first_field + i);

		if (rb_field_unpack(id, d->value)) {
			out(s, "%s%s", sep, rb_field(id)->name);
			sep = "|";
		}
	}
	if (unknown)
		out(s, "%s0x%" PRIx32, sep, unknown);
	else if (d->value == 0)
		out(s, " (none)");
	if (unknown)
		out(s, "  # bits 0x%" PRIx32 " name no block", unknown);
	if (d->offset != rb_reg(RB_REG_PC_OPERATION_ENABLE)->offset)
		out(s, "  # offset 0x%04x, expected 0x%04x", d->offset,
		    rb_reg(RB_REG_PC_OPERATION_ENABLE)->offset);
}

/* A register word whose offset is not where its target says. */
static void format_mismatch(struct sbuf *s, const struct rb_decoded *d)
{
	int where = rb_block_by_offset(d->offset);

	if (d->reg >= 0)
		format_reg(s, d);
	else
		out(s, "unknown %s offset 0x%04x value 0x%" PRIx32, rb_block(where)->name,
		    d->offset, d->value);
	out(s, "  # target 0x%04x (%s) does not match a %s offset", d->target,
	    rb_block(d->block)->name, rb_block(where)->name);
}

static void format_unknown_offset(struct sbuf *s, const struct rb_decoded *d)
{
	out(s, "unknown %s offset 0x%04x value 0x%" PRIx32, rb_block(d->block)->name, d->offset,
	    d->value);
	if (rb_block_by_offset(d->offset) < 0)
		out(s, "  # the offset lies in no block");
}

int rb_decode_format(const struct rb_decoded *d, char *buf, size_t size)
{
	struct sbuf s = {buf, size, 0};

	if (size)
		buf[0] = '\0';
	if (d->kind == RB_WORD_END)
		out(&s, "end (0)");
	else if (d->kind == RB_WORD_SYNC)
		out(&s, "sync (0x%04x)", d->target);
	else if (d->kind == RB_WORD_OP_ENABLE)
		format_op_enable(&s, d);
	else if (d->kind == RB_WORD_UNKNOWN)
		out(&s, "unknown target 0x%04x offset 0x%04x value 0x%" PRIx32, d->target,
		    d->offset, d->value);
	else if (d->status == RB_DECODE_MISMATCH)
		format_mismatch(&s, d);
	else if (d->status == RB_DECODE_UNKNOWN_OFFSET)
		format_unknown_offset(&s, d);
	else
		format_reg(&s, d);
	if (d->kind == RB_WORD_SYNC && d->status != RB_DECODE_OK)
		out(&s, "  # offset 0x%04x value 0x%" PRIx32 ", expected 0 and 0", d->offset,
		    d->value);
	return s.len > INT32_MAX ? INT32_MAX : (int)s.len;
}

size_t rb_decode_print(FILE *f, const uint64_t *words, size_t n)
{
	struct rb_decoded d;
	char text[1024];
	size_t flagged = 0;

	for (size_t i = 0; i < n; i++) {
		if (rb_decode_word(words[i], &d) != RB_DECODE_OK)
			flagged++;
		rb_decode_format(&d, text, sizeof(text));
		fprintf(f, "%3zu %016" PRIx64 " %s\n", i, words[i], text);
	}
	return flagged;
}
