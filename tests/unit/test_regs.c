/* Tests of the register database (hw/regs.def) and of the word decoder: the table's
 * invariants, encode/decode round trips of every field, overflow refusals naming the
 * field, and the flagging of words the database does not explain. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "npu/regcmd.h"
#include "hw/regs.h"

static void test_blocks_distinct(void **state)
{
	(void)state;
	for (int i = 0; i < RB_BLOCK_COUNT; i++) {
		const struct rb_block_info *a = rb_block(i);

		assert_int_equal(a->base % RB_BLOCK_SPAN, 0);
		if (a->target)
			assert_int_equal(rb_block_by_target(a->target), i);
		assert_int_equal(rb_block_by_offset(a->base), i);
		assert_int_equal(rb_block_by_offset((uint16_t)(a->base + RB_BLOCK_SPAN - 1)), i);
		for (int j = 0; j < i; j++) {
			assert_int_not_equal(rb_block(j)->base, a->base);
			assert_true(a->target == 0 || rb_block(j)->target != a->target);
		}
	}
	assert_int_equal(rb_block_by_target(RB_TARGET_SYNC), -ENOENT);
	assert_int_equal(rb_block_by_target(RB_TARGET_OP_ENABLE), -ENOENT);
}

/* Sorted by offset (the lookup's binary search needs it), each inside its block. */
static void test_registers_sorted_and_unique(void **state)
{
	(void)state;
	for (int i = 0; i < RB_REG_COUNT; i++) {
		const struct rb_reg_info *r = rb_reg(i);

		assert_int_equal(rb_block_by_offset(r->offset), r->block);
		assert_int_equal(r->offset % 4, 0);
		if (i > 0)
			assert_true(rb_reg(i - 1)->offset < r->offset);
		for (int j = 0; j < i; j++)
			assert_false(rb_reg(j)->block == r->block &&
				     rb_reg(j)->offset == r->offset);
		assert_int_equal(rb_reg_by_offset(r->offset), i);
		assert_int_equal(rb_reg_find(r->block, r->offset), i);
	}
	assert_int_equal(rb_reg_by_offset(0x1234), -ENOENT);
	assert_int_equal(rb_reg_find(RB_BLOCK_DPU, 0x1070), -ENOENT);
}

/* Every register owns a contiguous run of fields, in bit order, none overlapping. */
static void test_fields_belong_and_do_not_overlap(void **state)
{
	unsigned total = 0;

	(void)state;
	for (int i = 0; i < RB_REG_COUNT; i++) {
		const struct rb_reg_info *r = rb_reg(i);
		uint32_t used = 0;
		int next_lsb = 0;

		assert_true(r->n_fields >= 1);
		assert_int_equal(r->first_field, total);
		for (unsigned j = 0; j < r->n_fields; j++) {
			enum rb_field_id id = (enum rb_field_id)(r->first_field + j);
			const struct rb_field_info *f = rb_field(id);

			assert_int_equal(f->reg, i);
			assert_true(f->width >= 1 && f->lsb + f->width <= 32);
			assert_true(f->lsb >= next_lsb);
			assert_int_equal(used & rb_field_mask(id), 0);
			used |= rb_field_mask(id);
			next_lsb = f->lsb + f->width;
		}
		assert_int_equal(rb_reg_unknown_bits(i, UINT32_MAX), ~used);
		total += r->n_fields;
	}
	assert_int_equal(total, RB_FIELD_COUNT);
}

/* A few values of each field, including both ends of its range. */
static size_t field_values(enum rb_field_id id, int64_t *v)
{
	const struct rb_field_info *f = rb_field(id);
	int64_t max = rb_field_max(id);

	if (f->fmt == RB_FMT_S) {
		int64_t lim = INT64_C(1) << (f->width - 1);

		v[0] = -lim, v[1] = -1, v[2] = 0, v[3] = 1, v[4] = lim - 1;
		return 5;
	}
	v[0] = 0, v[1] = 1, v[2] = max / 2, v[3] = max - 1 > 0 ? max - 1 : 0, v[4] = max;
	if (f->fmt == RB_FMT_A)
		for (int i = 0; i < 5; i++)
			v[i] <<= f->lsb;
	return 5;
}

static void expect_text(const struct rb_decoded *d, enum rb_field_id id, int64_t v)
{
	const struct rb_field_info *f = rb_field(id);
	char text[1024], want[128];

	if (f->fmt == RB_FMT_X || f->fmt == RB_FMT_A)
		snprintf(want, sizeof(want), " %s=0x%" PRIx64 "", f->name, (uint64_t)v);
	else
		snprintf(want, sizeof(want), " %s=%" PRId64 "", f->name, v);
	rb_decode_format(d, text, sizeof(text));
	if (!strstr(text, want))
		fail_msg("'%s' not in '%s'", want, text);
}

/* encode a value into a register, make the word, decode the word, read the value back:
 * on a register of zeros and on one with every other field at its maximum. */
static void round_trip(enum rb_field_id id, int64_t v, uint32_t background)
{
	const struct rb_field_info *f = rb_field(id);
	const struct rb_reg_info *r = rb_reg(f->reg);
	uint32_t value = background;
	struct rb_decoded d;

	assert_int_equal(rb_field_encode(id, v, &value), 0);
	if (rb_block(r->block)->target == 0) { /* GLOBAL: MMIO only, no regcmd word */
		assert_int_equal(rb_field_decode(id, value), v);
		return;
	}
	assert_int_equal(rb_decode_word(rb_word_reg(f->reg, value), &d), RB_DECODE_OK);
	assert_int_equal(d.kind, RB_WORD_REG);
	assert_int_equal(d.reg, f->reg);
	assert_int_equal(d.block, r->block);
	assert_true(rb_field_decode(id, d.value) == v);
	for (unsigned j = 0; j < r->n_fields; j++) {
		enum rb_field_id other = (enum rb_field_id)(r->first_field + j);

		if (other != id)
			assert_int_equal(rb_field_unpack(other, d.value),
					 rb_field_unpack(other, background));
	}
	expect_text(&d, id, v);
}

static void test_every_field_round_trips(void **state)
{
	int64_t v[5];

	(void)state;
	for (int id = 0; id < RB_FIELD_COUNT; id++) {
		uint32_t full = ~rb_reg_unknown_bits(rb_field(id)->reg, UINT32_MAX);
		size_t n = field_values(id, v);

		for (size_t i = 0; i < n; i++) {
			round_trip(id, v[i], 0);
			round_trip(id, v[i], full);
		}
	}
}

static void expect_refused(enum rb_field_id id, int64_t v, int err, const char *what)
{
	uint32_t value = 0x5a5a5a5a;
	char name[96];

	rb_field_fullname(id, name, sizeof(name));
	assert_int_equal(rb_field_encode(id, v, &value), err);
	assert_int_equal(value, 0x5a5a5a5a);
	if (strncmp(rb_last_error(), name, strlen(name)) != 0 || !strstr(rb_last_error(), what))
		fail_msg("field %s value %" PRId64 ": message '%s'", name, v, rb_last_error());
}

static void test_every_field_refuses_overflow(void **state)
{
	(void)state;
	for (int id = 0; id < RB_FIELD_COUNT; id++) {
		const struct rb_field_info *f = rb_field(id);
		int64_t max = (int64_t)rb_field_max(id);

		if (f->fmt == RB_FMT_S) {
			int64_t lim = INT64_C(1) << (f->width - 1);

			expect_refused(id, lim, -ERANGE, "does not fit");
			expect_refused(id, -lim - 1, -ERANGE, "does not fit");
		} else if (f->fmt == RB_FMT_A) {
			expect_refused(id, (max + 1) << f->lsb, -ERANGE, "does not fit");
			expect_refused(id, -(INT64_C(1) << f->lsb), -ERANGE, "does not fit");
			if (f->lsb)
				expect_refused(id, 1, -EINVAL, "is not a multiple of");
		} else {
			expect_refused(id, max + 1, -ERANGE, "does not fit");
			expect_refused(id, -1, -ERANGE, "does not fit");
		}
		assert_int_equal(rb_field_pack(id, (uint64_t)max + 1, &(uint32_t){0}), -ERANGE);
	}
}

static void test_overflow_message(void **state)
{
	uint32_t v = 0;

	(void)state;
	assert_int_equal(rb_field_encode(RB_FIELD_CNA_DATA_SIZE0_DATAIN_HEIGHT, 2048, &v), -ERANGE);
	assert_string_equal(rb_last_error(),
			    "CNA.DATA_SIZE0.DATAIN_HEIGHT: 2048 does not fit 11 bits");
	assert_int_equal(rb_field_encode(RB_FIELD_CNA_DATA_SIZE0_DATAIN_HEIGHT, 2047, &v), 0);
	assert_int_equal(v, 2047);
}

/* §a.1: target 63..48, value 47..16, offset 15..0; two known words of Appendix A. */
static void test_word_layout(void **state)
{
	(void)state;
	assert_true(rb_word(0x0201, 0x1070, 0xffff8000) == UINT64_C(0x0201ffff80001070));
	assert_true(rb_word_reg(RB_REG_DPU_S_POINTER, 0xe) == UINT64_C(0x10010000000e4004));
	assert_int_equal(rb_word_target(UINT64_C(0x00810000000d0008)), 0x0081);
	assert_int_equal(rb_word_value(UINT64_C(0x00810000000d0008)), 0xd);
	assert_int_equal(rb_word_offset(UINT64_C(0x00810000000d0008)), 0x0008);
}

static void expect_decode(uint64_t word, enum rb_decode_status status, const char *text)
{
	struct rb_decoded d;
	char buf[1024];

	assert_int_equal(rb_decode_word(word, &d), status);
	rb_decode_format(&d, buf, sizeof(buf));
	if (!strstr(buf, text))
		fail_msg("word %016" PRIx64 ": '%s' not in '%s'", word, text, buf);
}

static void test_decode_specials_and_unknowns(void **state)
{
	(void)state;
	expect_decode(0, RB_DECODE_OK, "end (0)");
	expect_decode(UINT64_C(0x0041000000000000), RB_DECODE_OK, "sync (0x0041)");
	expect_decode(UINT64_C(0x0041000000010000), RB_DECODE_BAD_SPECIAL, "sync (0x0041)  #");
	expect_decode(UINT64_C(0x00810000000d0008), RB_DECODE_OK, "op_enable CNA|CORE|DPU");
	expect_decode(UINT64_C(0x00810000001d0008), RB_DECODE_OK,
		      "op_enable CNA|CORE|DPU|DPU_RDMA");
	expect_decode(UINT64_C(0x0081000000020008), RB_DECODE_BAD_SPECIAL, "op_enable 0x2");
	expect_decode(UINT64_C(0x00810000000d0010), RB_DECODE_BAD_SPECIAL, "expected 0x0008");
	expect_decode(UINT64_C(0x0101ffff80000010), RB_DECODE_OK,
		      "PC.BASE_ADDRESS PC_SEL=0 PC_SOURCE_ADDR=0xffff8000");
	expect_decode(UINT64_C(0x0101000000350014), RB_DECODE_OK,
		      "PC.REGISTER_AMOUNTS PC_DATA_AMOUNT=53");
	expect_decode(UINT64_C(0x02010ffffffd1080), RB_DECODE_OK, "CNA.DMA_CON2 SURF_STRIDE=-3");
	expect_decode(UINT64_C(0x1234000000001000), RB_DECODE_UNKNOWN_TARGET,
		      "unknown target 0x1234");
	expect_decode(UINT64_C(0x0201000000001234), RB_DECODE_UNKNOWN_OFFSET,
		      "unknown CNA offset 0x1234");
	expect_decode(UINT64_C(0x0201000000014010), RB_DECODE_MISMATCH,
		      "DPU.DATA_FORMAT PROC_PRECISION=1");
	expect_decode(UINT64_C(0x0201000000014010), RB_DECODE_MISMATCH, "does not match");
	expect_decode(UINT64_C(0x02010000000040f0), RB_DECODE_MISMATCH,
		      "unknown DPU offset 0x40f0");
	/* RUS's fp16 K-accumulation value (§a.6): ERDMA_DATA_MODE 1, ERDMA_DATA_SIZE 2. */
	expect_decode(UINT64_C(0x2001400000085034), RB_DECODE_OK,
		      "DPU_RDMA.ERDMA_CFG ERDMA_DISABLE=0 OV4K_BYPASS=0 ERDMA_DATA_SIZE=2 "
		      "ERDMA_NONALIGN=0 ERDMA_SURF_MODE=0 ERDMA_DATA_MODE=1");
	expect_decode(UINT64_C(0x2001000000105034), RB_DECODE_UNKNOWN_BITS,
		      "bits 0x10 are in no known field");
}

/* ---- regs.def against tests/golden/regs-facts.tsv (the public register description) ---- */

#define FACTS_PATH "tests/golden/regs-facts.tsv"

static int block_by_name(const char *name)
{
	for (int i = 0; i < RB_BLOCK_COUNT; i++)
		if (strcmp(rb_block(i)->name, name) == 0)
			return i;
	return -ENOENT;
}

/* "31:4" or "13" into lsb and width; false if malformed. */
static bool parse_bits(const char *text, int *lsb, int *width)
{
	char *end;
	long msb = strtol(text, &end, 10), low = msb;

	if (end == text)
		return false;
	if (*end == ':') {
		const char *rest = end + 1;

		low = strtol(rest, &end, 10);
		if (end == rest)
			return false;
	}
	if (*end != '\0' || low < 0 || msb > 31 || low > msb)
		return false;
	*lsb = (int)low;
	*width = (int)(msb - low + 1);
	return true;
}

/* The field of regs.def that one fact row names, or a message saying why there is none. */
static int fact_field(char **col, char *why, size_t size)
{
	int block = block_by_name(col[0]), lsb, width;
	unsigned long offset = strtoul(col[1], NULL, 16);
	int reg = block < 0 ? -ENOENT : rb_reg_find(block, (uint16_t)offset);

	if (block < 0 || reg < 0 || strcmp(rb_reg(reg)->name, col[2]) != 0) {
		snprintf(why, size, "regs.def has no register %s.%s at %s", col[0], col[2], col[1]);
		return -1;
	}
	if (!parse_bits(col[4], &lsb, &width)) {
		snprintf(why, size, "bits '%s' is not msb:lsb", col[4]);
		return -1;
	}
	for (unsigned j = 0; j < rb_reg(reg)->n_fields; j++) {
		enum rb_field_id id = (enum rb_field_id)(rb_reg(reg)->first_field + j);
		const struct rb_field_info *f = rb_field(id);

		if (strcmp(f->name, col[3]) != 0)
			continue;
		if (f->lsb == lsb && f->width == width)
			return (int)id;
		snprintf(why, size, "%s.%s.%s is %d:%d in regs.def, %s in the facts", col[0],
			 col[2], col[3], f->lsb + f->width - 1, f->lsb, col[4]);
		return -1;
	}
	snprintf(why, size, "regs.def has no field %s.%s.%s", col[0], col[2], col[3]);
	return -1;
}

/* Splits a tab-separated line in place into at most n columns; returns the count. */
static int split_tabs(char *line, char **col, int n)
{
	int k = 0;

	line[strcspn(line, "\r\n")] = '\0';
	while (k < n) {
		col[k++] = line;
		line = strchr(line, '\t');
		if (!line)
			break;
		*line++ = '\0';
	}
	return k;
}

/* Every fact row is a field of regs.def with the same bits, and every field of regs.def
 * is a fact row: a width or position changed on one side only fails here. */
/* The lookup tables of regs.c against a plain scan, over every 16-bit offset and
 * target, and the known-bits mask against the fields one by one. */
static void test_lookups_match_a_scan(void **state)
{
	(void)state;
	for (unsigned v = 0; v <= UINT16_MAX; v++) {
		int want_block = -ENOENT, want_target = -ENOENT, want_reg = -ENOENT;

		for (int b = 0; b < RB_BLOCK_COUNT; b++) {
			const struct rb_block_info *bi = rb_block((enum rb_block_id)b);

			if (want_block < 0 && v >= bi->base && v - bi->base < RB_BLOCK_SPAN)
				want_block = b;
			if (want_target < 0 && bi->target != 0 && bi->target == v)
				want_target = b;
		}
		for (int r = 0; r < RB_REG_COUNT && want_reg < 0; r++)
			if (rb_reg((enum rb_reg_id)r)->offset == v)
				want_reg = r;
		assert_int_equal(rb_block_by_offset((uint16_t)v), want_block);
		assert_int_equal(rb_block_by_target((uint16_t)v), want_target);
		assert_int_equal(rb_reg_by_offset((uint16_t)v), want_reg);
	}
	for (int r = 0; r < RB_REG_COUNT; r++) {
		const struct rb_reg_info *ri = rb_reg((enum rb_reg_id)r);
		uint32_t unknown = UINT32_MAX;

		for (unsigned f = 0; f < ri->n_fields; f++)
			unknown &= ~rb_field_mask((enum rb_field_id)(ri->first_field + f));
		assert_int_equal(rb_reg_unknown_bits((enum rb_reg_id)r, UINT32_MAX), unknown);
	}
}

static void test_regs_match_public_facts(void **state)
{
	static bool seen[RB_FIELD_COUNT];
	FILE *f = fopen(FACTS_PATH, "r");
	char line[512], why[256];
	int lineno = 0, rows = 0, bad = 0;

	(void)state;
	if (!f)
		fail_msg("cannot open %s (run from the top of the tree)", FACTS_PATH);
	while (fgets(line, sizeof(line), f)) {
		char *col[7];
		int id;

		lineno++;
		if (line[0] == '#' || strncmp(line, "block\t", 6) == 0 || line[0] == '\n')
			continue;
		if (split_tabs(line, col, 7) < 6) {
			print_error("%s:%d: fewer than 6 columns\n", FACTS_PATH, lineno);
			bad++;
			continue;
		}
		rows++;
		id = fact_field(col, why, sizeof(why));
		if (id >= 0 && seen[id])
			snprintf(why, sizeof(why), "%s.%s.%s is listed twice", col[0], col[2],
				 col[3]);
		if (id < 0 || seen[id]) {
			print_error("%s:%d: %s\n", FACTS_PATH, lineno, why);
			bad++;
			continue;
		}
		seen[id] = true;
	}
	fclose(f);
	for (int i = 0; i < RB_FIELD_COUNT; i++) {
		char name[96];

		if (seen[i])
			continue;
		print_error("%s: no row for regs.def's %s\n", FACTS_PATH,
			    rb_field_fullname((enum rb_field_id)i, name, sizeof(name)));
		bad++;
	}
	assert_int_equal(bad, 0);
	assert_int_equal(rows, RB_FIELD_COUNT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blocks_distinct),
	    cmocka_unit_test(test_registers_sorted_and_unique),
	    cmocka_unit_test(test_fields_belong_and_do_not_overlap),
	    cmocka_unit_test(test_every_field_round_trips),
	    cmocka_unit_test(test_every_field_refuses_overflow),
	    cmocka_unit_test(test_overflow_message),
	    cmocka_unit_test(test_word_layout),
	    cmocka_unit_test(test_decode_specials_and_unknowns),
	    cmocka_unit_test(test_regs_match_public_facts),
	    cmocka_unit_test(test_lookups_match_a_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
