/* The regcmd decoder: 64-bit words back to "BLOCK.REGISTER field=value ..." text, with
 * every word the database does not explain flagged (npu-facts.md §a.1). */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "npu/regcmd.h"
#include "hw/regs.h"

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

/* ---- reading a program (rknn-bench dump's input) ---- */

struct words {
	uint64_t *v;
	size_t n, cap;
};

static int words_add(struct words *w, uint64_t word, const char *label)
{
	uint64_t *v;

	if (w->n == w->cap) {
		size_t cap = w->cap ? 2 * w->cap : 256;

		v = realloc(w->v, cap * sizeof(*v));
		if (!v)
			return rb_set_error(-ENOMEM, "out of memory for %zu words of '%s'", cap,
					    label);
		w->v = v;
		w->cap = cap;
	}
	w->v[w->n++] = word;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* One line of the hex format: blank, a comment, or "[0x]<16 hex digits> [# comment]".
 * Returns 1 with *word set, 0 for a line without a word, -1 if the line is invalid. */
static int parse_line(const char *line, size_t len, uint64_t *word)
{
	size_t i = 0, digits = 0;
	uint64_t v = 0;

	while (i < len && is_blank(line[i]))
		i++;
	if (i == len || line[i] == '#')
		return 0;
	if (len - i > 2 && line[i] == '0' && (line[i + 1] == 'x' || line[i + 1] == 'X'))
		i += 2;
	for (; i < len && isxdigit((unsigned char)line[i]); i++, digits++) {
		int c = tolower((unsigned char)line[i]);

		v = v << 4 | (uint64_t)(isdigit(c) ? c - '0' : c - 'a' + 10);
	}
	while (i < len && is_blank(line[i]))
		i++;
	if (digits != 16 || (i < len && line[i] != '#'))
		return -1;
	*word = v;
	return 1;
}

static int parse_hex(const char *data, size_t len, const char *label, struct words *w)
{
	size_t line_no = 0;

	for (const char *p = data, *end = data + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		uint64_t word;
		int ret = parse_line(p, n, &word);

		line_no++;
		if (ret < 0)
			return rb_set_error(-EINVAL,
					    "%s:%zu: '%.*s' is not a 64-bit word of 16 hex digits",
					    label, line_no, (int)(n > 40 ? 40 : n), p);
		if (ret > 0 && (ret = words_add(w, word, label)) < 0)
			return ret;
		p += n + 1;
	}
	return 0;
}

static int parse_binary(const unsigned char *data, size_t len, const char *label, struct words *w)
{
	int ret = 0;

	if (len % 8)
		return rb_set_error(-EINVAL, "%s: %zu bytes is not a whole number of 8-byte words",
				    label, len);
	for (size_t i = 0; ret == 0 && i < len; i += 8) {
		uint64_t v = 0;

		for (int b = 7; b >= 0; b--) /* little-endian (§a.1) */
			v = v << 8 | data[i + (size_t)b];
		ret = words_add(w, v, label);
	}
	return ret;
}

int rb_regcmd_parse(const char *data, size_t len, bool binary, const char *label, uint64_t **words,
		    size_t *n)
{
	struct words w = {0};
	int ret = binary ? parse_binary((const unsigned char *)data, len, label, &w)
			 : parse_hex(data, len, label, &w);

	if (ret == 0 && w.n == 0)
		ret = rb_set_error(-EINVAL, "'%s' holds no words", label);
	if (ret < 0) {
		free(w.v);
		return ret;
	}
	*words = w.v;
	*n = w.n;
	return 0;
}
