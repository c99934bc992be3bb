/* Tests of the program validator (npu/validate.h): a chain the encoder builds passes;
 * each corruption — a field's bits, the bank sum, a DMA outside the buffers, SIZE_E,
 * the tail's address and amount, the last task's tail, the fetch — is refused with a
 * message naming the task, the core and the register. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "core/error.h"
#include "npu/regcmd.h"
#include "hw/regs.h"
#include "hw/conv.h"
#include "npu/validate.h"

/* Three buffers and the regcmd buffer, as the emulated kernel might hand them out. */
#define A_ADDR  0x00100000u
#define B_ADDR  0x00200000u
#define C_ADDR  0x00300000u
#define RC_ADDR 0x00400000u
#define BUF     0x10000u
#define N_TASKS 3

struct fixture {
	struct rb_regcmd rc;
	struct rb_regcmd_layout lay[N_TASKS];
	struct rb_validate_task tasks[N_TASKS];
	struct rb_validate_chain chain;
	struct rb_validate_buf bufs[3];
	struct rb_validate_job job;
};

static struct rb_npu_task task(uint32_t row)
{
	return (struct rb_npu_task){
	    .dtype = RB_DTYPE_FP16,
	    .out = RB_PREC_FP32,
	    .m = 4,
	    .k = 64,
	    .n = 16,
	    .a_height = 4 * N_TASKS,
	    .c_height = 4 * N_TASKS,
	    .data_banks = 1,
	    .weight_banks = 11,
	    .a_addr = A_ADDR + row * 16,
	    .b_addr = B_ADDR,
	    .c_addr = C_ADDR + row * 16,
	};
}

static int setup(void **state)
{
	static struct fixture f;
	struct rb_npu_task t[N_TASKS];

	memset(&f, 0, sizeof(f));
	for (uint32_t i = 0; i < N_TASKS; i++)
		t[i] = task(4 * i);
	assert_int_equal(rb_regcmd_build_chain(&f.rc, t, N_TASKS, RC_ADDR, f.lay), 0);
	for (int i = 0; i < N_TASKS; i++)
		f.tasks[i] = (struct rb_validate_task){f.lay[i].addr, f.lay[i].regcfg_amount};
	f.chain = (struct rb_validate_chain){1, 0, N_TASKS};
	f.bufs[0] = (struct rb_validate_buf){"A", A_ADDR, BUF};
	f.bufs[1] = (struct rb_validate_buf){"B", B_ADDR, BUF};
	f.bufs[2] = (struct rb_validate_buf){"C", C_ADDR, BUF};
	f.job =
	    (struct rb_validate_job){f.rc.words, RC_ADDR, f.rc.count * 8,    f.tasks, &f.chain, 1,
				     f.bufs,     3,       RB_NPU_CBUF_BANKS, false};
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	rb_regcmd_release(&f->rc);
	return 0;
}

/* The word of task `t` writing register `id`. */
static uint64_t *reg_word(struct fixture *f, int t, enum rb_reg_id id)
{
	uint64_t *w = f->rc.words + f->lay[t].offset;

	for (uint32_t i = 0; i < f->lay[t].words; i++)
		if (rb_word_offset(w[i]) == rb_reg(id)->offset && rb_word_target(w[i]) != 0)
			return &w[i];
	fail_msg("task %d writes no %s", t, rb_reg(id)->name);
	return NULL;
}

static void set_reg(struct fixture *f, int t, enum rb_reg_id id, uint32_t value)
{
	*reg_word(f, t, id) = rb_word_reg(id, value);
}

static void set_field(struct fixture *f, int t, enum rb_field_id id, uint32_t raw)
{
	uint64_t *w = reg_word(f, t, rb_field(id)->reg);
	uint32_t v = rb_word_value(*w);

	assert_int_equal(rb_field_pack(id, raw, &v), 0);
	*w = rb_word_reg(rb_field(id)->reg, v);
}

static void expect_refusal(struct fixture *f, const char *want)
{
	assert_int_equal(rb_validate_job(&f->job), -ENOEXEC);
	if (!strstr(rb_last_error(), want))
		fail_msg("message '%s' lacks '%s'", rb_last_error(), want);
}

static void test_encoded_chain_passes(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(rb_validate_job(&f->job), 0);
}

static void test_unknown_bits(void **state)
{
	struct fixture *f = *state;
	uint64_t *w = reg_word(f, 1, RB_REG_CNA_CBUF_CON0);

	/* a value wider than the register's fields */
	*w |= (uint64_t)0x80000000u << 16;
	expect_refusal(f, "task 1 (core 1): word ");
	expect_refusal(f, "is not a valid register write: CNA.CBUF_CON0");
}

static void test_banks(void **state)
{
	struct fixture *f = *state;

	set_field(f, 2, RB_FIELD_CNA_CBUF_CON0_DATA_BANK, 6);
	set_field(f, 2, RB_FIELD_CNA_CBUF_CON0_WEIGHT_BANK, 7);
	expect_refusal(f, "task 2 (core 1): CNA.CBUF_CON0: DATA_BANK 6 + WEIGHT_BANK 7 = 13 banks, "
			  "the CBUF has 12");
}

static void test_feature_outside(void **state)
{
	struct fixture *f = *state;

	set_reg(f, 1, RB_REG_CNA_FEATURE_DATA_ADDR, A_ADDR + BUF - 16);
	expect_refusal(f, "task 1 (core 1): CNA.FEATURE_DATA_ADDR: channel group 0 at 0x0010fff0");
}

static void test_weights_outside(void **state)
{
	struct fixture *f = *state;

	set_reg(f, 0, RB_REG_CNA_DCOMP_ADDR0, B_ADDR + BUF);
	expect_refusal(f,
		       "task 0 (core 1): CNA.DCOMP_ADDR0: the weights at 0x00210000 + 2048 bytes");
}

static void test_output_outside(void **state)
{
	struct fixture *f = *state;

	set_reg(f, 2, RB_REG_DPU_DST_BASE_ADDR, 0x00500000u);
	expect_refusal(f, "task 2 (core 1): DPU.DST_BASE_ADDR: output sub-surface 0 at 0x00500000");
}

static void test_size_e(void **state)
{
	struct fixture *f = *state;

	set_field(f, 0, RB_FIELD_DPU_BS_OW_CFG_SIZE_E_0, 1);
	set_field(f, 0, RB_FIELD_DPU_BS_OW_CFG_SIZE_E_1, 1);
	set_field(f, 0, RB_FIELD_DPU_BS_OW_CFG_SIZE_E_2, 1);
	expect_refusal(f,
		       "task 0 (core 1): DPU.BS_OW_CFG: SIZE_E 1/1/1 leaves output sub-surface 2");
}

static void test_tail_address(void **state)
{
	struct fixture *f = *state;

	set_reg(f, 0, RB_REG_PC_BASE_ADDRESS, f->lay[2].addr);
	expect_refusal(f, "task 0 (core 1): PC.BASE_ADDRESS in the tail is");
}

static void test_tail_amount(void **state)
{
	struct fixture *f = *state;
	uint32_t amount = rb_regcmd_pc_amount(f->lay[2].regcfg_amount);

	set_reg(f, 1, RB_REG_PC_REGISTER_AMOUNTS, amount + 1);
	expect_refusal(f, "task 1 (core 1): PC.REGISTER_AMOUNTS in the tail is");
	expect_refusal(f, "take ceil((");
}

static void test_last_task_chains_on(void **state)
{
	struct fixture *f = *state;

	f->chain.n_tasks = 2; /* task 1 is now the last one but its tail points at task 2 */
	expect_refusal(f, "task 1 (core 1): the last task of the submit chains on");
}

static void test_fetch_outside(void **state)
{
	struct fixture *f = *state;

	f->tasks[0].regcmd_addr = RC_ADDR + (uint32_t)f->job.regcmd_bytes;
	expect_refusal(f, "task 0 (core 1): PC.BASE_ADDRESS 0x");
	expect_refusal(f, "is outside the regcmd buffer");
}

static void test_op_enable_not_last(void **state)
{
	struct fixture *f = *state;

	f->tasks[0].regcfg_amount += 2; /* the PC fetches past task 0's op-enable word */
	expect_refusal(f, "task 0 (core 1): word ");
	expect_refusal(f, "op-enable is not the last word fetched");
}

/* Mainline rocket (§a.6): the vendor variant, which leaves DPU_RDMA off, never finishes
 * there; the mainline variant passes. */
static void test_rocket_needs_dpu_rdma(void **state)
{
	struct fixture *f = *state;
	struct rb_npu_task t[N_TASKS];

	f->job.rdma_required = true;
	expect_refusal(f, "task 0 (core 1): op-enable 0xd does not run DPU_RDMA");
	rb_regcmd_release(&f->rc);
	for (uint32_t i = 0; i < N_TASKS; i++) {
		t[i] = task(4 * i);
		t[i].mainline = true;
	}
	assert_int_equal(rb_regcmd_build_chain(&f->rc, t, N_TASKS, RC_ADDR, f->lay), 0);
	for (int i = 0; i < N_TASKS; i++)
		f->tasks[i] = (struct rb_validate_task){f->lay[i].addr, f->lay[i].regcfg_amount};
	f->job.regcmd = f->rc.words;
	f->job.regcmd_bytes = f->rc.count * 8;
	assert_int_equal(rb_validate_job(&f->job), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

/* The span of the channel groups stands for every group exactly when no group address
 * wraps around 32 bits; each group lies inside it at first + g·pitch. */
static void test_feature_span(void **state)
{
	struct rb_conv cv = {.c2_in = 8,
			     .channels = 2048,
			     .width = 1,
			     .height = 1,
			     .feature_addr = 0x10000000u,
			     .line_stride = 4,
			     .surf_stride = 0};
	struct rb_dma_range span;
	uint32_t pitch, groups = rb_conv_feature_groups(&cv);

	(void)state;
	assert_true(rb_conv_feature_span(&cv, &span, &pitch));
	assert_int_equal(span.addr, cv.feature_addr);
	for (uint32_t g = 0; g < groups; g++) {
		struct rb_dma_range r = rb_conv_feature_range(&cv, g);

		assert_int_equal(r.addr, span.addr + g * pitch);
		assert_true(r.addr + r.len <= span.addr + span.len);
	}
	assert_int_equal(span.addr + span.len, rb_conv_feature_range(&cv, groups - 1).addr +
						   rb_conv_feature_range(&cv, groups - 1).len);
	cv.feature_addr = 0xffffff00u; /* the later groups wrap to address 0 */
	assert_false(rb_conv_feature_span(&cv, &span, &pitch));
	cv.feature_addr = 0xfffffff0u; /* one group, ending exactly at 4 GiB */
	cv.channels = 8;
	assert_true(rb_conv_feature_span(&cv, &span, &pitch));
	assert_int_equal(span.len, 16);
}

/* The walk gives rb_conv_output_range of every sub-surface, in order: KB holding whole
 * C2_out atoms (counted) or not (each by the function), SIZE_E leaving some unwritten,
 * addresses wrapping around 32 bits. */
static void test_output_walk(void **state)
{
	static const struct {
		uint32_t kb, c2_out, kernels, size_e;
	} cases[] = {{16, 4, 200, 3}, {16, 8, 64, 1}, {16, 4, 36, 1}, {12, 8, 40, 1},
		     {4, 8, 40, 0},   {32, 4, 4, 7},  {8, 8, 24, 0}};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rb_conv cv = {.kb = cases[i].kb,
				     .c2_out = cases[i].c2_out,
				     .kernels = cases[i].kernels,
				     .width = 1,
				     .height = 5,
				     .notch = 1,
				     .dst_addr = i % 2 ? 0xfffff000u : 0x20000000u,
				     .surface_add = 0x400,
				     .dst_surf_stride = 0x60,
				     .size_e = {cases[i].size_e, cases[i].size_e, 1}};
		struct rb_conv_out_walk walk;

		rb_conv_out_walk_init(&walk, &cv);
		for (uint32_t s = 0; s < rb_conv_output_subs(&cv); s++) {
			struct rb_dma_range want, got;
			bool valid = rb_conv_output_range(&cv, s, &want);

			assert_int_equal(rb_conv_out_walk_next(&walk, &got), valid);
			assert_int_equal(got.addr, want.addr);
			assert_int_equal(got.len, want.len);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_feature_span),
	    cmocka_unit_test(test_output_walk),
	    T(test_encoded_chain_passes),
	    T(test_unknown_bits),
	    T(test_banks),
	    T(test_feature_outside),
	    T(test_weights_outside),
	    T(test_output_outside),
	    T(test_size_e),
	    T(test_tail_address),
	    T(test_tail_amount),
	    T(test_last_task_chains_on),
	    T(test_fetch_outside),
	    T(test_op_enable_not_last),
	    T(test_rocket_needs_dpu_rdma),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
