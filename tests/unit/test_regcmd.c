/* Tests of the regcmd encoder: the golden programs of docs/npu-facts.md Appendix A/B (from
 * tests/golden/), the fp16-out and mainline variants (§a.6), the surface stride for any
 * cube height (§b.2), chains and their tails (§a.1, §a.3), and refusals naming the
 * field or constraint. Run from the top of the tree (make check does). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "npu/plan.h"
#include "npu/regcmd.h"
#include "hw/regs.h"

#define A_ADDR 0xffff8000u
#define B_ADDR 0xffff9000u
#define C_ADDR 0xffffa000u

/* A one-task plan as `rknn-bench regcmd` makes it. */
static struct rb_npu_task task(enum rb_dtype dtype, uint32_t m, uint32_t k, uint32_t n)
{
	uint32_t bpe = dtype == RB_DTYPE_FP16 ? 2 : 1;
	uint32_t banks = (m * k * bpe + RB_NPU_CBUF_BANK_BYTES - 1) / RB_NPU_CBUF_BANK_BYTES;

	return (struct rb_npu_task){
	    .dtype = dtype,
	    .out = dtype == RB_DTYPE_FP16 ? RB_PREC_FP32 : RB_PREC_INT32,
	    .m = m,
	    .k = k,
	    .n = n,
	    .a_height = m,
	    .c_height = m,
	    .data_banks = banks,
	    .weight_banks = RB_NPU_CBUF_BANKS - banks,
	    .a_addr = A_ADDR,
	    .b_addr = B_ADDR,
	    .c_addr = C_ADDR,
	};
}

static size_t load_golden(const char *path, uint64_t *words, size_t max)
{
	FILE *f = fopen(path, "r");
	char line[64];
	size_t n = 0;

	if (!f)
		fail_msg("cannot open %s (run from the top of the tree)", path);
	while (fgets(line, sizeof(line), f) && n < max)
		words[n++] = strtoull(line, NULL, 16);
	fclose(f);
	return n;
}

static void expect_golden(const struct rb_npu_task *t, const char *path)
{
	uint64_t golden[200];
	size_t n = load_golden(path, golden, 200);
	struct rb_regcmd rc;

	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_emit_task(&rc, t), 0);
	assert_int_equal(n, 108);
	assert_int_equal(rc.count, n);
	for (size_t i = 0; i < n; i++)
		if (rc.words[i] != golden[i])
			fail_msg("%s word %zu: %016" PRIx64 ", golden %016" PRIx64, path, i,
				 rc.words[i], golden[i]);
	rb_regcmd_release(&rc);
}

static void test_golden_fp16(void **state)
{
	struct rb_npu_task t = task(RB_DTYPE_FP16, 4, 64, 16);

	(void)state;
	expect_golden(&t, "tests/golden/fp16_4x64x16.hex");
}

static void test_golden_int8(void **state)
{
	struct rb_npu_task t = task(RB_DTYPE_INT8, 1, 32, 32);

	(void)state;
	expect_golden(&t, "tests/golden/int8_1x32x32.hex");
}

/* The value written to a register (it must be written exactly once). */
static uint32_t reg_value(const struct rb_regcmd *rc, enum rb_reg_id id)
{
	uint64_t mask = UINT64_C(0xffff00000000ffff);
	uint64_t want = rb_word_reg(id, 0) & mask;
	int found = 0;
	uint32_t v = 0;

	for (size_t i = 0; i < rc->count; i++)
		if ((rc->words[i] & mask) == want) {
			v = rb_word_value(rc->words[i]);
			found++;
		}
	if (found != 1)
		fail_msg("register %s written %d times", rb_reg(id)->name, found);
	return v;
}

static void emit(struct rb_regcmd *rc, const struct rb_npu_task *t)
{
	rb_regcmd_init(rc);
	if (rb_regcmd_emit_task(rc, t) != 0)
		fail_msg("emit failed: %s", rb_last_error());
}

/* §a.6: fp16 in, fp16 out. */
static void test_fp16_out(void **state)
{
	struct rb_npu_task t = task(RB_DTYPE_FP16, 4, 64, 16);
	struct rb_regcmd rc;

	(void)state;
	t.out = RB_PREC_FP16;
	emit(&rc, &t);
	assert_int_equal(rc.count, 108);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_DATA_FORMAT), 0x48000002);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_OUT_CVT_SCALE), 0x00010001);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_BS_OW_CFG), 0x126);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_SURFACE_ADD), (2 * 4) << 4);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_DST_SURF_STRIDE), 4 << 4);
	rb_regcmd_release(&rc);
}

/* SURFACE_ADD and DST_SURF_STRIDE follow C's cube height, not the task's rows. */
static void test_output_strides_use_c_height(void **state)
{
	struct rb_npu_task t = task(RB_DTYPE_INT8, 8, 64, 32);
	struct rb_regcmd rc;

	(void)state;
	t.c_height = 100;
	emit(&rc, &t);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_DST_SURF_STRIDE), 100 << 4);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_SURFACE_ADD), (8 * 100) << 4);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_DATA_CUBE_HEIGHT), 7);
	rb_regcmd_release(&rc);
}

/* §a.6: DPU_RDMA programmed, op-enable 0x1D, 126 words. */
static void test_mainline_variant(void **state)
{
	struct rb_npu_task t = task(RB_DTYPE_FP16, 4, 64, 16);
	struct rb_regcmd rc;

	(void)state;
	t.mainline = true;
	emit(&rc, &t);
	assert_int_equal(rc.count, 126);
	assert_true(rc.words[1] == UINT64_C(0x20010000000e5004)); /* right after DPU S_POINTER */
	assert_true(rc.words[125] == UINT64_C(0x00810000001d0008));
	assert_int_equal(reg_value(&rc, RB_REG_DPU_RDMA_FEATURE_MODE_CFG), (15 << 11) | (1 << 4));
	assert_int_equal(reg_value(&rc, RB_REG_DPU_RDMA_ERDMA_CFG), 1);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_RDMA_WEIGHT), 0x01010101);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_RDMA_DATA_CUBE_HEIGHT), 3);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_RDMA_DATA_CUBE_CHANNEL), 15);
	rb_regcmd_release(&rc);
	t.out = RB_PREC_FP16;
	emit(&rc, &t);
	assert_int_equal(reg_value(&rc, RB_REG_DPU_RDMA_FEATURE_MODE_CFG),
			 (15 << 11) | (1 << 4) | (1 << 3));
	rb_regcmd_release(&rc);
}

/* §b.2: SURF_STRIDE = W·(H − 4) in 28-bit two's complement, for any height. */
static void test_surface_stride_any_height(void **state)
{
	static const int heights[] = {1, 2, 3, 4, 5, 6, 7, 9, 12};
	struct rb_regcmd rc;

	(void)state;
	for (size_t i = 0; i < sizeof(heights) / sizeof(heights[0]); i++) {
		struct rb_npu_task t = task(RB_DTYPE_FP16, 1, 32, 16);
		int h = heights[i];

		t.a_height = (uint32_t)h;
		emit(&rc, &t);
		assert_int_equal(reg_value(&rc, RB_REG_CNA_DMA_CON2),
				 (uint32_t)(h - 4) & 0x0fffffff);
		if (h == 1)
			assert_int_equal(reg_value(&rc, RB_REG_CNA_DMA_CON2), 0x0ffffffd);
		if (h % 4 == 0)
			assert_int_equal(reg_value(&rc, RB_REG_CNA_DMA_CON2), 4 * (h / 4 - 1));
		rb_regcmd_release(&rc);
	}
}

static void test_reuse_bits_and_banks_from_task(void **state)
{
	struct rb_npu_task t = task(RB_DTYPE_FP16, 4, 64, 16);
	struct rb_regcmd rc;
	uint32_t v;

	(void)state;
	t.data_banks = 5;
	t.weight_banks = 3;
	t.data_reuse = true;
	t.weight_reuse = true;
	emit(&rc, &t);
	v = reg_value(&rc, RB_REG_CNA_CBUF_CON0);
	assert_int_equal(rb_field_unpack(RB_FIELD_CNA_CBUF_CON0_DATA_BANK, v), 5);
	assert_int_equal(rb_field_unpack(RB_FIELD_CNA_CBUF_CON0_WEIGHT_BANK, v), 3);
	assert_int_equal(v, (1 << 13) | (1 << 12) | (3 << 4) | 5);
	rb_regcmd_release(&rc);
}

/* M = 1: the vendor variant keeps MTX's dense 1-row cube and SURF_STRIDE -3; the
 * mainline variant pads to 4 rows and writes 0, as rocket-userspace does (§b.2). The
 * one-task plan of `regcmd` and the planner agree. */
static void test_m1_surf_stride(void **state)
{
	struct rb_shape s = {.m = 1, .k = 2048, .n = 8192, .dtype = RB_DTYPE_FP16};
	const uint32_t addr[3] = {0x1000, 0x10000, 0x4000000};
	struct rb_plan_config cfg;
	struct rb_npu_task t;
	struct rb_regcmd rc;
	struct rb_plan p;

	(void)state;
	for (int mainline = 0; mainline <= 1; mainline++) {
		uint32_t want = mainline ? 0 : 0x0ffffffd, rows = mainline ? 4 : 1;

		assert_int_equal(rb_regcmd_one_task(&s, NULL, addr, mainline, &t), 0);
		assert_int_equal(t.m, rows);
		emit(&rc, &t);
		assert_int_equal(reg_value(&rc, RB_REG_CNA_DMA_CON2), want);
		assert_int_equal(rb_field_unpack(RB_FIELD_CNA_DATA_SIZE0_DATAIN_HEIGHT,
						 reg_value(&rc, RB_REG_CNA_DATA_SIZE0)),
				 rows);
		rb_regcmd_release(&rc);
		rb_plan_config_init(&cfg);
		cfg.mainline = mainline;
		assert_int_equal(rb_plan_init(&p, &s, &cfg), 0);
		assert_int_equal(p.m, rows);
		assert_int_equal(p.cores[0].tasks[0].npu.a_height, rows);
		emit(&rc, &p.cores[0].tasks[0].npu);
		assert_int_equal(reg_value(&rc, RB_REG_CNA_DMA_CON2), want);
		rb_regcmd_release(&rc);
		rb_plan_release(&p);
	}
}

/* A prefill plan's chained tasks carry WEIGHT_REUSE into their program, the first task
 * of a submit does not, and the decoder names the bit. */
static void test_plan_weight_reuse_encoded(void **state)
{
	struct rb_shape s = {.m = 512, .k = 2048, .n = 8192, .dtype = RB_DTYPE_FP16};
	struct rb_plan_config cfg;
	struct rb_regcmd rc;
	struct rb_plan p;
	char line[512];

	(void)state;
	rb_plan_config_init(&cfg);
	assert_int_equal(rb_plan_init(&p, &s, &cfg), 0);
	for (size_t i = 0; i < 2; i++) {
		struct rb_decoded d = {0};
		uint32_t v;

		emit(&rc, &p.cores[0].tasks[i].npu);
		v = reg_value(&rc, RB_REG_CNA_CBUF_CON0);
		assert_int_equal(rb_field_unpack(RB_FIELD_CNA_CBUF_CON0_WEIGHT_REUSE, v), i);
		for (size_t w = 0; w < rc.count; w++)
			if (rb_decode_word(rc.words[w], &d) == RB_DECODE_OK &&
			    d.reg == RB_REG_CNA_CBUF_CON0)
				break;
		assert_int_equal(d.reg, RB_REG_CNA_CBUF_CON0);
		rb_decode_format(&d, line, sizeof(line));
		assert_non_null(strstr(line, i ? "WEIGHT_REUSE=1" : "WEIGHT_REUSE=0"));
		rb_regcmd_release(&rc);
	}
	rb_plan_release(&p);
}

/* Every word the encoder writes is explained by the database. */
static void test_programs_decode_cleanly(void **state)
{
	struct rb_npu_task ts[] = {task(RB_DTYPE_FP16, 4, 64, 16), task(RB_DTYPE_INT8, 3, 96, 64),
				   task(RB_DTYPE_FP16, 1, 32, 16)};
	struct rb_decoded d;
	struct rb_regcmd rc;

	(void)state;
	ts[1].mainline = true;
	ts[2].out = RB_PREC_FP16;
	ts[2].mainline = true;
	for (size_t i = 0; i < 3; i++) {
		emit(&rc, &ts[i]);
		for (size_t w = 0; w < rc.count; w++)
			assert_int_equal(rb_decode_word(rc.words[w], &d), RB_DECODE_OK);
		rb_regcmd_release(&rc);
	}
}

static void test_pc_amount(void **state)
{
	(void)state;
	assert_int_equal(rb_regcmd_pc_amount(108), 55);
	assert_int_equal(rb_regcmd_pc_amount(126), 64);
	assert_int_equal(rb_regcmd_pc_amount(104), 53); /* MTX: regcfg_amount 104 → 53 */
	assert_int_equal(rb_regcmd_pc_amount(13), 8);   /* RKNN capture: 13 → 8 (§a.3) */
	assert_int_equal(rb_regcmd_pc_amount(12), 7);
}

static void expect_tail(const struct rb_regcmd *rc, size_t at, uint32_t next_addr,
			uint32_t next_amount, uint32_t op_enable)
{
	uint64_t first = next_addr ? rb_word(0x0101, 0x0010, next_addr) : 0;

	assert_true(rc->words[at] == first);
	assert_true(rc->words[at + 1] == rb_word(0x0101, 0x0014, next_amount));
	assert_true(rc->words[at + 2] == UINT64_C(0x0041000000000000));
	assert_true(rc->words[at + 3] == rb_word(0x0081, 0x0008, op_enable));
}

/* Three tasks back to back: vendor, mainline, vendor. */
static void test_chain_layout_and_tails(void **state)
{
	struct rb_npu_task ts[3] = {task(RB_DTYPE_FP16, 4, 64, 16), task(RB_DTYPE_FP16, 4, 64, 16),
				    task(RB_DTYPE_INT8, 1, 32, 32)};
	struct rb_regcmd_layout lay[3];
	struct rb_regcmd rc;
	const uint32_t base = 0x10000;

	(void)state;
	ts[1].mainline = true;
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, ts, 3, base, lay), 0);
	assert_int_equal(rc.count, 108 + 126 + 108);
	assert_int_equal(lay[0].offset, 0);
	assert_int_equal(lay[1].offset, 108);
	assert_int_equal(lay[2].offset, 234);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(lay[i].addr, base + 8 * lay[i].offset);
		assert_int_equal(lay[i].addr % 16, 0);
		assert_int_equal(lay[i].words, lay[i].regcfg_amount + RB_REGCMD_TAIL_WORDS);
	}
	assert_int_equal(lay[0].regcfg_amount, 104);
	assert_int_equal(lay[1].regcfg_amount, 122);
	assert_int_equal(lay[2].regcfg_amount, 104);
	expect_tail(&rc, 104, base + 108 * 8, rb_regcmd_pc_amount(122), 0x0d);
	expect_tail(&rc, 108 + 122, base + 234 * 8, rb_regcmd_pc_amount(104), 0x1d);
	expect_tail(&rc, 234 + 104, 0, 0, 0x0d);
	/* the bodies are the single-task programs' bodies */
	assert_true(rc.words[0] == UINT64_C(0x10010000000e4004));
	assert_true(rc.words[109] == UINT64_C(0x20010000000e5004));
	rb_regcmd_release(&rc);
}

static void test_chain_of_one_is_the_task(void **state)
{
	struct rb_npu_task t = task(RB_DTYPE_FP16, 4, 64, 16);
	struct rb_regcmd chain, one;

	(void)state;
	rb_regcmd_init(&chain);
	assert_int_equal(rb_regcmd_build_chain(&chain, &t, 1, 0x1000, NULL), 0);
	emit(&one, &t);
	assert_int_equal(chain.count, one.count);
	assert_memory_equal(chain.words, one.words, one.count * sizeof(uint64_t));
	rb_regcmd_release(&chain);
	rb_regcmd_release(&one);
}

static void test_chain_refusals(void **state)
{
	struct rb_npu_task ts[2] = {task(RB_DTYPE_FP16, 4, 64, 16), task(RB_DTYPE_FP16, 4, 64, 16)};
	struct rb_regcmd rc;

	(void)state;
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, ts, 0, 0x1000, NULL), -EINVAL);
	assert_int_equal(rb_regcmd_build_chain(&rc, ts, 2, 0x1008, NULL), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "16-byte aligned"));
	assert_int_equal(rb_regcmd_build_chain(&rc, ts, 2, 0xfffffc00, NULL), -ERANGE);
	assert_int_equal(rc.count, 0);
	ts[1].m = 2048;
	ts[1].a_height = ts[1].c_height = 2048;
	assert_int_equal(rb_regcmd_build_chain(&rc, ts, 2, 0x1000, NULL), -ERANGE);
	assert_non_null(strstr(rb_last_error(), "task 2 of 2: "));
	assert_int_equal(rc.count, 0);
	rb_regcmd_release(&rc);
}

/* M = 2048 rows overflows DATAIN_HEIGHT (11 bits); the message names every field that
 * does not fit, and the buffer is left as it was. */
static void test_field_overflow_names_field(void **state)
{
	struct rb_npu_task ok = task(RB_DTYPE_FP16, 4, 64, 16);
	struct rb_npu_task t = task(RB_DTYPE_FP16, 2048, 64, 16);
	struct rb_regcmd rc;

	(void)state;
	emit(&rc, &ok);
	assert_int_equal(rb_regcmd_emit_task(&rc, &t), -ERANGE);
	assert_int_equal(rc.count, 108);
	assert_non_null(
	    strstr(rb_last_error(), "CNA.DATA_SIZE0.DATAIN_HEIGHT: 2048 does not fit 11 bits"));
	assert_non_null(strstr(rb_last_error(), "CNA.CONV_CON2.FEATURE_GRAINS: 2049"));
	t = task(RB_DTYPE_FP16, 4, 64, 16384);
	assert_int_equal(rb_regcmd_emit_task(&rc, &t), -ERANGE);
	assert_non_null(strstr(rb_last_error(), "CNA.WEIGHT_SIZE2.WEIGHT_KERNELS: 16384"));
	rb_regcmd_release(&rc);
}

static void expect_invalid(struct rb_npu_task t, const char *what)
{
	struct rb_regcmd rc;

	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_emit_task(&rc, &t), -EINVAL);
	assert_int_equal(rc.count, 0);
	if (!strstr(rb_last_error(), what))
		fail_msg("'%s' not in '%s'", what, rb_last_error());
	rb_regcmd_release(&rc);
}

static void test_task_refusals(void **state)
{
	struct rb_npu_task t = task(RB_DTYPE_FP16, 4, 64, 16);

	(void)state;
	t.k = 40;
	expect_invalid(t, "k = 40 is not a multiple of 32");
	t = task(RB_DTYPE_INT8, 4, 64, 16);
	expect_invalid(t, "n = 16 is not a multiple of 32");
	t = task(RB_DTYPE_FP16, 4, 64, 16);
	t.m = 0;
	expect_invalid(t, "at least 1");
	t = task(RB_DTYPE_FP16, 4, 64, 16);
	t.a_height = 3;
	expect_invalid(t, "cube must hold");
	t = task(RB_DTYPE_FP16, 4, 64, 16);
	t.data_banks = 6;
	t.weight_banks = 7;
	expect_invalid(t, "CBUF banks");
	t = task(RB_DTYPE_FP16, 4, 64, 16);
	t.c_addr += 8;
	expect_invalid(t, "not 16-byte aligned");
	t = task(RB_DTYPE_INT8, 4, 64, 32);
	t.out = RB_PREC_FP16;
	expect_invalid(t, "int8 in, fp16 out is not supported");
}

/* dump's reader: hex lines with comments and 0x, raw little-endian words, refusals. */
static void test_parse_program(void **state)
{
	static const char hex[] = "# a comment\n\n0x0201000000501010  # note\n"
				  "  0000000000000000\n00810000001D0008";
	static const unsigned char bin[] = {0x10, 0x10, 0x50, 0, 0, 0, 0x01, 0x02};
	uint64_t *w = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(rb_regcmd_parse(hex, sizeof(hex) - 1, false, "p.hex", &w, &n), 0);
	assert_int_equal(n, 3);
	assert_true(w[0] == UINT64_C(0x0201000000501010) && w[1] == 0 &&
		    w[2] == UINT64_C(0x00810000001d0008));
	free(w);
	assert_int_equal(rb_regcmd_parse((const char *)bin, 8, true, "p.bin", &w, &n), 0);
	assert_true(n == 1 && w[0] == UINT64_C(0x0201000000501010));
	free(w);
	assert_int_equal(rb_regcmd_parse((const char *)bin, 7, true, "p.bin", &w, &n), -EINVAL);
	assert_string_equal(rb_last_error(),
			    "p.bin: 7 bytes is not a whole number of 8-byte words");
	assert_int_equal(rb_regcmd_parse("12345\n", 6, false, "p.hex", &w, &n), -EINVAL);
	assert_string_equal(rb_last_error(),
			    "p.hex:1: '12345' is not a 64-bit word of 16 hex digits");
	assert_int_equal(rb_regcmd_parse("# only\n", 7, false, "p.hex", &w, &n), -EINVAL);
	assert_string_equal(rb_last_error(), "'p.hex' holds no words");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden_fp16),
	    cmocka_unit_test(test_golden_int8),
	    cmocka_unit_test(test_fp16_out),
	    cmocka_unit_test(test_output_strides_use_c_height),
	    cmocka_unit_test(test_mainline_variant),
	    cmocka_unit_test(test_surface_stride_any_height),
	    cmocka_unit_test(test_reuse_bits_and_banks_from_task),
	    cmocka_unit_test(test_programs_decode_cleanly),
	    cmocka_unit_test(test_pc_amount),
	    cmocka_unit_test(test_chain_layout_and_tails),
	    cmocka_unit_test(test_chain_of_one_is_the_task),
	    cmocka_unit_test(test_chain_refusals),
	    cmocka_unit_test(test_field_overflow_names_field),
	    cmocka_unit_test(test_task_refusals),
	    cmocka_unit_test(test_parse_program),
	    cmocka_unit_test(test_m1_surf_stride),
	    cmocka_unit_test(test_plan_weight_reuse_encoded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
