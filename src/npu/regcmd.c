/* The regcmd encoder: the register program of a matmul task (npu-facts.md §a.5, §a.6)
 * and chains of tasks (§a.1, §a.3). Every offset and bit position comes from regs.def;
 * every value is set through a named field, so an overflow names the field. */
#include "numeric/layout.h"
#include "npu/regcmd.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hw/regs.h"

/* An encoding in progress: the first error code, and the messages of every failure so
 * that one refusal names all the fields that do not fit. */
struct enc {
	struct rb_regcmd *rc;
	int err;
	char msg[1024];
};

struct fv {
	enum rb_field_id field;
	int64_t value;
};

/* clang-format off */
#define F(name, v) {RB_FIELD_##name, (int64_t)(v)}
/* clang-format on */
#define N_OF(type, ...) (sizeof((const type[]){__VA_ARGS__}) / sizeof(type))
/* EMIT(e, CNA_DATA_SIZE0, F(...), ...): one register write from its fields. */
#define EMIT(e, reg, ...)                                                                          \
	emit(e, RB_REG_##reg, (const struct fv[]){__VA_ARGS__}, N_OF(struct fv, __VA_ARGS__))
/* ZEROS(e, RB_REG_..., ...): registers written as 0, in this order. */
#define ZEROS(e, ...)                                                                              \
	emit_zeros(e, (const enum rb_reg_id[]){__VA_ARGS__}, N_OF(enum rb_reg_id, __VA_ARGS__))

static void fail(struct enc *e, int err)
{
	size_t len = strlen(e->msg);

	if (!e->err)
		e->err = err;
	snprintf(e->msg + len, sizeof(e->msg) - len, "%s%s", len ? "; " : "", rb_last_error());
}

static void put_word(struct enc *e, uint64_t word)
{
	struct rb_regcmd *rc = e->rc;
	uint64_t *w;
	size_t cap;

	if (rc->count == rc->capacity) {
		cap = rc->capacity ? 2 * rc->capacity : 256;
		w = realloc(rc->words, cap * sizeof(*w));
		if (!w) {
			rb_set_error(-ENOMEM, "out of memory for a regcmd of %zu words", cap);
			fail(e, -ENOMEM);
			return;
		}
		rc->words = w;
		rc->capacity = cap;
	}
	rc->words[rc->count++] = word;
}

static void emit(struct enc *e, enum rb_reg_id reg, const struct fv *fv, size_t n)
{
	uint32_t value = 0;
	int ret;

	for (size_t i = 0; i < n; i++) {
		assert(rb_field(fv[i].field)->reg == reg);
		ret = rb_field_encode(fv[i].field, fv[i].value, &value);
		if (ret < 0)
			fail(e, ret);
	}
	put_word(e, rb_word_reg(reg, value));
}

static void emit_zeros(struct enc *e, const enum rb_reg_id *regs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_word(e, rb_word_reg(regs[i], 0));
}

/* Registers that form an array in the database (DCOMP_AMOUNT0..15, EW_OP_VALUE_0..7,
 * the LUT registers): consecutive ids, consecutive offsets. */
static void emit_zero_array(struct enc *e, enum rb_reg_id first, enum rb_reg_id last)
{
	for (unsigned id = first; id <= last; id++) {
		assert(rb_reg(id)->offset == rb_reg(first)->offset + 4 * (id - first));
		put_word(e, rb_word_reg(id, 0));
	}
}

void rb_regcmd_init(struct rb_regcmd *rc)
{
	memset(rc, 0, sizeof(*rc));
}

void rb_regcmd_release(struct rb_regcmd *rc)
{
	free(rc->words);
	rb_regcmd_init(rc);
}

uint32_t rb_regcmd_pc_amount(uint32_t body_words)
{
	return (body_words + RB_REGCMD_TAIL_WORDS + 1) / 2 - 1;
}

/* A matmul is a 1×1 convolution over a feature map of width 1 (npu-facts.md notation). */
#define FM_WIDTH 1
/* NC1HWC2 atoms are 16 bytes (§b.1); CBUF_CON1 counts 64-byte entries (§c). */
#define ATOM_BYTES       16
#define CBUF_ENTRY_BYTES 64
/* Burst length code 15 = bursts of 16 (§a.5 DMA_CON0, DPU FEATURE_MODE_CFG). */
#define BURST_16 15
/* DPU output modes: bit 1 = write to memory (§a.5 row 54). */
#define DPU_OUTPUT_TO_MEMORY 2

/* What the dtypes make of the program. */
struct task_fmt {
	enum rb_npu_prec in; /* CNA/CORE/DPU input and processing precision */
	unsigned bpe;        /* bytes per input element */
	unsigned groups;     /* output sub-surfaces per channel group: KB / C2_out (§b.4) */
	bool fp16_out;
};

static const char *prec_name(enum rb_npu_prec p)
{
	static const char *const names[] = {"int8", "int16", "fp16", "bf16", "int32", "fp32"};

	return (unsigned)p < sizeof(names) / sizeof(names[0]) ? names[p] : "unknown";
}

static int task_format(const struct rb_npu_task *t, struct task_fmt *f)
{
	unsigned kb, out_bytes;

	f->fp16_out = t->out == RB_PREC_FP16;
	if (t->dtype == RB_DTYPE_FP16 && (t->out == RB_PREC_FP32 || f->fp16_out)) {
		f->in = RB_PREC_FP16;
		f->bpe = 2;
		kb = 16; /* the DPU emits fp16 results in groups of 16 channels */
		out_bytes = f->fp16_out ? 2 : 4;
	} else if (t->dtype == RB_DTYPE_INT8 && t->out == RB_PREC_INT32) {
		f->in = RB_PREC_INT8;
		f->bpe = 1;
		kb = 32; /* int8: groups of 32 */
		out_bytes = 4;
	} else {
		return rb_set_error(-EINVAL,
				    "a task of %s in, %s out is not supported: use "
				    "fp16 → fp32, fp16 → fp16 or int8 → int32",
				    t->dtype == RB_DTYPE_INT8 ? "int8" : "fp16", prec_name(t->out));
	}
	f->groups = kb / (ATOM_BYTES / out_bytes);
	return 0;
}

static int check_dims(const struct rb_npu_task *t)
{
	unsigned n_align = (unsigned)rb_layout_kernel_group(t->dtype);

	if (t->m == 0 || t->k == 0 || t->n == 0)
		return rb_set_error(-EINVAL, "task of %ux%ux%u: every dimension must be at least 1",
				    t->m, t->k, t->n);
	if (t->k % 32)
		return rb_set_error(-EINVAL,
				    "task k = %u is not a multiple of 32: pad K with "
				    "zeros",
				    t->k);
	if (t->n % n_align)
		return rb_set_error(-EINVAL,
				    "task n = %u is not a multiple of %u: pad N with "
				    "zeros",
				    t->n, n_align);
	if (t->a_height < t->m || t->c_height < t->m)
		return rb_set_error(-EINVAL,
				    "task of %u rows lies in cubes of %u (A) and %u (C) "
				    "rows: a cube must hold the task's rows",
				    t->m, t->a_height, t->c_height);
	return 0;
}

/* §c: the data and weight banks share the 12 banks of the CBUF. */
static int check_task(const struct rb_npu_task *t)
{
	int ret = check_dims(t);

	if (ret < 0)
		return ret;
	if (t->data_banks == 0 || t->weight_banks == 0 ||
	    t->data_banks + t->weight_banks > RB_NPU_CBUF_BANKS)
		return rb_set_error(-EINVAL,
				    "task uses %u data + %u weight CBUF banks: each "
				    "needs at least 1 and the CBUF has %u",
				    t->data_banks, t->weight_banks, RB_NPU_CBUF_BANKS);
	if (t->c_addr % ATOM_BYTES) /* TRM: DST_BASE_ADDR is 16-byte aligned (§a.5 row 57) */
		return rb_set_error(-EINVAL, "task C address 0x%x is not 16-byte aligned",
				    t->c_addr);
	return 0;
}

/* §a.4: both register groups in use, the pointer toggled by the pointer (0xE). The
 * mainline variant also sets up DPU_RDMA's (§a.6). */
static void emit_s_pointers(struct enc *e, bool mainline)
{
	EMIT(e, DPU_S_POINTER, F(DPU_S_POINTER_POINTER_PP_EN, 1),
	     F(DPU_S_POINTER_EXECUTER_PP_EN, 1), F(DPU_S_POINTER_POINTER_PP_MODE, 1));
	if (mainline)
		EMIT(e, DPU_RDMA_S_POINTER, F(DPU_RDMA_S_POINTER_POINTER_PP_EN, 1),
		     F(DPU_RDMA_S_POINTER_EXECUTER_PP_EN, 1),
		     F(DPU_RDMA_S_POINTER_POINTER_PP_MODE, 1));
}

/* §a.5 rows 1–12: the convolution and the CBUF split. */
static void emit_cna_conv(struct enc *e, const struct rb_npu_task *t, const struct task_fmt *f)
{
	uint64_t k = t->k, n = t->n;

	EMIT(e, CNA_CONV_CON1, F(CNA_CONV_CON1_IN_PRECISION, f->in),
	     F(CNA_CONV_CON1_PROC_PRECISION, f->in));
	/* FEATURE_GRAINS = rows + 1 as MTX; only performance depends on it (§a.6). */
	EMIT(e, CNA_CONV_CON2, F(CNA_CONV_CON2_FEATURE_GRAINS, t->m + UINT64_C(1)));
	EMIT(e, CNA_CONV_CON3, F(CNA_CONV_CON3_CONV_X_STRIDE, 1),
	     F(CNA_CONV_CON3_CONV_Y_STRIDE, 1));
	EMIT(e, CNA_DATA_SIZE0, F(CNA_DATA_SIZE0_DATAIN_HEIGHT, t->m),
	     F(CNA_DATA_SIZE0_DATAIN_WIDTH, FM_WIDTH));
	EMIT(e, CNA_DATA_SIZE1, F(CNA_DATA_SIZE1_DATAIN_CHANNEL, k),
	     F(CNA_DATA_SIZE1_DATAIN_CHANNEL_REAL, k - 1));
	EMIT(e, CNA_DATA_SIZE2, F(CNA_DATA_SIZE2_DATAOUT_WIDTH, FM_WIDTH));
	EMIT(e, CNA_DATA_SIZE3, F(CNA_DATA_SIZE3_DATAOUT_ATOMICS, (uint64_t)FM_WIDTH * t->m));
	EMIT(e, CNA_WEIGHT_SIZE0, F(CNA_WEIGHT_SIZE0_WEIGHT_BYTES, k * n * f->bpe));
	EMIT(e, CNA_WEIGHT_SIZE1, F(CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL, k * f->bpe));
	EMIT(e, CNA_WEIGHT_SIZE2, F(CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, n),
	     F(CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, 1), F(CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, 1));
	EMIT(e, CNA_CBUF_CON0, F(CNA_CBUF_CON0_DATA_BANK, t->data_banks),
	     F(CNA_CBUF_CON0_WEIGHT_BANK, t->weight_banks),
	     F(CNA_CBUF_CON0_DATA_REUSE, t->data_reuse),
	     F(CNA_CBUF_CON0_WEIGHT_REUSE, t->weight_reuse));
	EMIT(e, CNA_CBUF_CON1,
	     F(CNA_CBUF_CON1_DATA_ENTRIES,
	       (FM_WIDTH * k * f->bpe + CBUF_ENTRY_BYTES - 1) / CBUF_ENTRY_BYTES));
}

/* §a.5 rows 13–20: input conversion bypassed (scale 1, offset 0), no FC skipping or
 * padding. */
static void emit_cna_cvt(struct enc *e)
{
	EMIT(e, CNA_CVT_CON0, F(CNA_CVT_CON0_CVT_BYPASS, 1), F(CNA_CVT_CON0_CVT_TYPE, 1),
	     F(CNA_CVT_CON0_DATA_SIGN, 1));
	EMIT(e, CNA_CVT_CON1, F(CNA_CVT_CON1_CVT_SCALE0, 1));
	EMIT(e, CNA_CVT_CON2, F(CNA_CVT_CON2_CVT_SCALE1, 1));
	EMIT(e, CNA_CVT_CON3, F(CNA_CVT_CON3_CVT_SCALE2, 1));
	EMIT(e, CNA_CVT_CON4, F(CNA_CVT_CON4_CVT_SCALE3, 1));
	ZEROS(e, RB_REG_CNA_FC_CON0, RB_REG_CNA_FC_CON1, RB_REG_CNA_PAD_CON0);
}

/* §a.5 rows 21–48 and §b.2: the feature cube's address and strides, the weights. A row
 * group of 4 rows is LINE_STRIDE = 4·W atoms; SURF_STRIDE = W·(H − 4) is the extra jump
 * to the next channel group, negative for cubes of fewer than 4 rows (MTX's −3 for
 * H = 1, 4·(H/4 − 1) for H % 4 == 0). Mainline-variant cubes have at least 4 rows
 * (hw/task.h), so theirs is never negative. */
static void emit_cna_dma(struct enc *e, const struct rb_npu_task *t)
{
	EMIT(e, CNA_FEATURE_DATA_ADDR, F(CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR, t->a_addr));
	ZEROS(e, RB_REG_CNA_FC_CON2);
	EMIT(e, CNA_DMA_CON0, F(CNA_DMA_CON0_DATA_BURST_LEN, BURST_16),
	     F(CNA_DMA_CON0_WEIGHT_BURST_LEN, BURST_16));
	EMIT(e, CNA_DMA_CON1, F(CNA_DMA_CON1_LINE_STRIDE, 4 * FM_WIDTH));
	EMIT(e, CNA_DMA_CON2,
	     F(CNA_DMA_CON2_SURF_STRIDE, (int64_t)FM_WIDTH * ((int64_t)t->a_height - 4)));
	EMIT(e, CNA_FC_DATA_SIZE0, F(CNA_FC_DATA_SIZE0_DMA_HEIGHT, t->m),
	     F(CNA_FC_DATA_SIZE0_DMA_WIDTH, FM_WIDTH));
	EMIT(e, CNA_FC_DATA_SIZE1, F(CNA_FC_DATA_SIZE1_DMA_CHANNEL, t->k));
	ZEROS(e, RB_REG_CNA_DCOMP_CTRL, RB_REG_CNA_DCOMP_REGNUM);
	EMIT(e, CNA_DCOMP_ADDR0, F(CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0, t->b_addr));
	emit_zero_array(e, RB_REG_CNA_DCOMP_AMOUNT0, RB_REG_CNA_DCOMP_AMOUNT15);
	ZEROS(e, RB_REG_CNA_CVT_CON5, RB_REG_CNA_PAD_CON1);
}

/* §a.5 rows 49–53 (int8: MISC_CFG = 0, §a.6). */
static void emit_core(struct enc *e, const struct rb_npu_task *t, const struct task_fmt *f)
{
	EMIT(e, CORE_MISC_CFG, F(CORE_MISC_CFG_QD_EN, f->in == RB_PREC_FP16),
	     F(CORE_MISC_CFG_PROC_PRECISION, f->in));
	EMIT(e, CORE_DATAOUT_SIZE_0, F(CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, FM_WIDTH - 1),
	     F(CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, t->m - UINT64_C(1)));
	EMIT(e, CORE_DATAOUT_SIZE_1, F(CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL, t->n - UINT64_C(1)));
	ZEROS(e, RB_REG_CORE_CLIP_TRUNCATE, RB_REG_CORE_UNDOC_3030);
}

/* §a.5 rows 54–62, §b.4: the output cube, written to memory. */
static void emit_dpu_out(struct enc *e, const struct rb_npu_task *t, const struct task_fmt *f)
{
	/* One output surface (C2_out channels of every row) in bytes, in C's cube. */
	uint64_t surface = (uint64_t)ATOM_BYTES * FM_WIDTH * t->c_height;

	EMIT(e, DPU_FEATURE_MODE_CFG, F(DPU_FEATURE_MODE_CFG_OUTPUT_MODE, DPU_OUTPUT_TO_MEMORY),
	     F(DPU_FEATURE_MODE_CFG_BURST_LEN, BURST_16));
	EMIT(e, DPU_DATA_FORMAT, F(DPU_DATA_FORMAT_PROC_PRECISION, f->in),
	     F(DPU_DATA_FORMAT_IN_PRECISION, f->in), F(DPU_DATA_FORMAT_OUT_PRECISION, t->out));
	ZEROS(e, RB_REG_DPU_OFFSET_PEND);
	EMIT(e, DPU_DST_BASE_ADDR, F(DPU_DST_BASE_ADDR_DST_BASE_ADDR, t->c_addr));
	EMIT(e, DPU_DST_SURF_STRIDE, F(DPU_DST_SURF_STRIDE_DST_SURF_STRIDE, surface));
	EMIT(e, DPU_DATA_CUBE_WIDTH, F(DPU_DATA_CUBE_WIDTH_WIDTH, FM_WIDTH - 1));
	EMIT(e, DPU_DATA_CUBE_HEIGHT, F(DPU_DATA_CUBE_HEIGHT_HEIGHT, t->m - UINT64_C(1)));
	ZEROS(e, RB_REG_DPU_DATA_CUBE_NOTCH_ADDR);
	EMIT(e, DPU_DATA_CUBE_CHANNEL, F(DPU_DATA_CUBE_CHANNEL_CHANNEL, t->n - UINT64_C(1)),
	     F(DPU_DATA_CUBE_CHANNEL_ORIG_CHANNEL, t->n - UINT64_C(1)));
}

/* §a.5 rows 63–74: batch-norm and bias stages bypassed; the write DMA's channel groups
 * are split in `groups` sub-surfaces of C2_out channels (SIZE_E, §b.4). */
static void emit_dpu_bs_bn(struct enc *e, const struct rb_npu_task *t, const struct task_fmt *f)
{
	EMIT(e, DPU_BS_CFG, F(DPU_BS_CFG_BS_BYPASS, 1), F(DPU_BS_CFG_BS_ALU_BYPASS, 1),
	     F(DPU_BS_CFG_BS_MUL_BYPASS, 1), F(DPU_BS_CFG_BS_RELU_BYPASS, 1));
	ZEROS(e, RB_REG_DPU_BS_ALU_CFG, RB_REG_DPU_BS_MUL_CFG, RB_REG_DPU_BS_RELUX_CMP_VALUE);
	EMIT(e, DPU_BS_OW_CFG, F(DPU_BS_OW_CFG_OD_BYPASS, 1),
	     F(DPU_BS_OW_CFG_SIZE_E_0, f->groups - 1), F(DPU_BS_OW_CFG_SIZE_E_1, f->groups - 1),
	     F(DPU_BS_OW_CFG_SIZE_E_2, f->groups - 1));
	ZEROS(e, RB_REG_DPU_BS_OW_OP);
	EMIT(e, DPU_WDMA_SIZE_0, F(DPU_WDMA_SIZE_0_CHANNEL_WDMA, t->n - UINT64_C(1)));
	EMIT(e, DPU_WDMA_SIZE_1, F(DPU_WDMA_SIZE_1_WIDTH_WDMA, FM_WIDTH - 1),
	     F(DPU_WDMA_SIZE_1_HEIGHT_WDMA, t->m - UINT64_C(1)));
	EMIT(e, DPU_BN_CFG, F(DPU_BN_CFG_BN_BYPASS, 1), F(DPU_BN_CFG_BN_ALU_BYPASS, 1),
	     F(DPU_BN_CFG_BN_MUL_BYPASS, 1), F(DPU_BN_CFG_BN_RELU_BYPASS, 1));
	ZEROS(e, RB_REG_DPU_BN_ALU_CFG, RB_REG_DPU_BN_MUL_CFG, RB_REG_DPU_BN_RELUX_CMP_VALUE);
}

/* §a.5 rows 75–103 (§a.6 for fp16 out): element-wise stage and LUT bypassed, output
 * conversion scale 1; SURFACE_ADD is the distance between channel groups. */
static void emit_dpu_ew(struct enc *e, const struct rb_npu_task *t, const struct task_fmt *f)
{
	uint64_t surface = (uint64_t)ATOM_BYTES * FM_WIDTH * t->c_height;

	EMIT(e, DPU_EW_CFG, F(DPU_EW_CFG_EW_BYPASS, 1), F(DPU_EW_CFG_EW_OP_BYPASS, 1),
	     F(DPU_EW_CFG_EW_LUT_BYPASS, 1), F(DPU_EW_CFG_EW_OP_CVT_BYPASS, 1),
	     F(DPU_EW_CFG_EW_RELU_BYPASS, 1));
	ZEROS(e, RB_REG_DPU_EW_CVT_OFFSET_VALUE);
	EMIT(e, DPU_EW_CVT_SCALE_VALUE, F(DPU_EW_CVT_SCALE_VALUE_EW_OP_CVT_SCALE, 1));
	ZEROS(e, RB_REG_DPU_EW_RELUX_CMP_VALUE, RB_REG_DPU_OUT_CVT_OFFSET);
	EMIT(e, DPU_OUT_CVT_SCALE, F(DPU_OUT_CVT_SCALE_OUT_CVT_SCALE, 1),
	     F(DPU_OUT_CVT_SCALE_FP32TOFP16_EN, f->fp16_out));
	ZEROS(e, RB_REG_DPU_OUT_CVT_SHIFT);
	emit_zero_array(e, RB_REG_DPU_EW_OP_VALUE_0, RB_REG_DPU_EW_OP_VALUE_7);
	EMIT(e, DPU_SURFACE_ADD, F(DPU_SURFACE_ADD_SURF_ADD, f->groups * surface));
	ZEROS(e, RB_REG_DPU_UNDOC_40C4);
	emit_zero_array(e, RB_REG_DPU_LUT_ACCESS_CFG, RB_REG_DPU_LUT_LO_SLOPE_SHIFT);
}

/* §a.6 mainline variant: DPU_RDMA programmed with every read disabled, or the DPU waits
 * for MRDMA data on mainline rocket. */
static void emit_dpu_rdma(struct enc *e, const struct rb_npu_task *t, const struct task_fmt *f)
{
	EMIT(e, DPU_RDMA_DATA_CUBE_WIDTH, F(DPU_RDMA_DATA_CUBE_WIDTH_WIDTH, FM_WIDTH - 1));
	EMIT(e, DPU_RDMA_DATA_CUBE_HEIGHT, F(DPU_RDMA_DATA_CUBE_HEIGHT_HEIGHT, t->m - UINT64_C(1)));
	EMIT(e, DPU_RDMA_DATA_CUBE_CHANNEL,
	     F(DPU_RDMA_DATA_CUBE_CHANNEL_CHANNEL, t->n - UINT64_C(1)));
	ZEROS(e, RB_REG_DPU_RDMA_SRC_BASE_ADDR, RB_REG_DPU_RDMA_BRDMA_CFG,
	      RB_REG_DPU_RDMA_BS_BASE_ADDR, RB_REG_DPU_RDMA_NRDMA_CFG,
	      RB_REG_DPU_RDMA_BN_BASE_ADDR);
	EMIT(e, DPU_RDMA_ERDMA_CFG, F(DPU_RDMA_ERDMA_CFG_ERDMA_DISABLE, 1));
	ZEROS(e, RB_REG_DPU_RDMA_EW_BASE_ADDR, RB_REG_DPU_RDMA_EW_SURF_STRIDE);
	EMIT(e, DPU_RDMA_FEATURE_MODE_CFG, F(DPU_RDMA_FEATURE_MODE_CFG_BURST_LEN, BURST_16),
	     F(DPU_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE, 1),
	     F(DPU_RDMA_FEATURE_MODE_CFG_MRDMA_FP16TOFP32_EN, f->fp16_out));
	ZEROS(e, RB_REG_DPU_RDMA_SRC_DMA_CFG, RB_REG_DPU_RDMA_SURF_NOTCH, RB_REG_DPU_RDMA_PAD_CFG);
	/* 0x01010101, the value RUS's working program writes: weight 1 per read stream. */
	EMIT(e, DPU_RDMA_WEIGHT, F(DPU_RDMA_WEIGHT_M_WEIGHT, 1), F(DPU_RDMA_WEIGHT_B_WEIGHT, 1),
	     F(DPU_RDMA_WEIGHT_N_WEIGHT, 1), F(DPU_RDMA_WEIGHT_E_WEIGHT, 1));
	ZEROS(e, RB_REG_DPU_RDMA_EW_SURF_NOTCH);
}

/* The body of one task: everything before the tail. */
static void emit_body(struct enc *e, const struct rb_npu_task *t, const struct task_fmt *f)
{
	size_t start = e->rc->count;

	emit_s_pointers(e, t->mainline);
	emit_cna_conv(e, t, f);
	emit_cna_cvt(e);
	emit_cna_dma(e, t);
	emit_core(e, t, f);
	emit_dpu_out(e, t, f);
	emit_dpu_bs_bn(e, t, f);
	emit_dpu_ew(e, t, f);
	if (t->mainline)
		emit_dpu_rdma(e, t, f);
	/* The next body must start 16-byte aligned (PC_SOURCE_ADDR holds bits 31:4) and the
	 * PC fetches whole pairs of words, so body + tail must be even. A filler word (§a.1)
	 * before the tail keeps op-enable last. The bodies of §a.5 (104 words) and §a.6 (122)
	 * are even: this never fires today, but keeps chains correct if a body changes. */
	if ((e->rc->count - start) % 2)
		put_word(e, 0);
}

/* Validates and appends the body of one task. */
static int encode_body(struct rb_regcmd *rc, const struct rb_npu_task *t)
{
	struct enc e = {.rc = rc};
	struct task_fmt f = {0};
	size_t start = rc->count;
	int ret = task_format(t, &f);

	if (ret == 0)
		ret = check_task(t);
	if (ret < 0)
		return ret;
	emit_body(&e, t, &f);
	if (e.err) {
		rc->count = start;
		return rb_set_error(e.err, "%s", e.msg);
	}
	return 0;
}

/* §a.1 op-enable bitmap: the blocks the task runs (0x0D; 0x1D with DPU_RDMA). */
uint32_t rb_regcmd_op_enable(const struct rb_npu_task *t)
{
	uint32_t v = 0;

	rb_field_pack(RB_FIELD_GLOBAL_OPERATION_ENABLE_CNA, 1, &v);
	rb_field_pack(RB_FIELD_GLOBAL_OPERATION_ENABLE_CORE, 1, &v);
	rb_field_pack(RB_FIELD_GLOBAL_OPERATION_ENABLE_DPU, 1, &v);
	if (t->mainline)
		rb_field_pack(RB_FIELD_GLOBAL_OPERATION_ENABLE_DPU_RDMA, 1, &v);
	return v;
}

/* The 4-word tail of task t (§a.1, §a.3): chained to `next`, or the end of the program
 * when next is NULL (a literal 0 word, amount 0). */
static int make_tail(const struct rb_npu_task *t, const struct rb_regcmd_layout *next,
		     uint64_t tail[RB_REGCMD_TAIL_WORDS])
{
	uint32_t addr = 0, amount = 0;
	int ret = 0;

	if (next) {
		ret = rb_field_encode(RB_FIELD_PC_BASE_ADDRESS_PC_SOURCE_ADDR, next->addr, &addr);
		if (ret == 0)
			ret = rb_field_encode(RB_FIELD_PC_REGISTER_AMOUNTS_PC_DATA_AMOUNT,
					      rb_regcmd_pc_amount(next->regcfg_amount), &amount);
	}
	tail[0] = next ? rb_word_reg(RB_REG_PC_BASE_ADDRESS, addr) : 0;
	tail[1] = rb_word_reg(RB_REG_PC_REGISTER_AMOUNTS, amount);
	tail[2] = rb_word(RB_TARGET_SYNC, 0, 0);
	tail[3] = rb_word(RB_TARGET_OP_ENABLE, rb_reg(RB_REG_PC_OPERATION_ENABLE)->offset,
			  rb_regcmd_op_enable(t));
	return ret;
}

static int append(struct rb_regcmd *rc, const uint64_t *words, size_t n)
{
	struct enc e = {.rc = rc};
	size_t start = rc->count;

	for (size_t i = 0; i < n && !e.err; i++)
		put_word(&e, words[i]);
	if (e.err)
		rc->count = start;
	return e.err;
}

int rb_regcmd_emit_task(struct rb_regcmd *rc, const struct rb_npu_task *task)
{
	uint64_t tail[RB_REGCMD_TAIL_WORDS];
	size_t start = rc->count;
	int ret = encode_body(rc, task);

	if (ret == 0)
		ret = make_tail(task, NULL, tail);
	if (ret == 0)
		ret = append(rc, tail, RB_REGCMD_TAIL_WORDS);
	if (ret < 0)
		rc->count = start;
	return ret;
}

/* Prefixes the recorded message with the task it is about (copied first: the message
 * buffer cannot be both source and destination). */
static int task_error(int err, size_t i, size_t n)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s", rb_last_error());
	return rb_set_error(err, "task %zu of %zu: %s", i + 1, n, msg);
}

/* Pass 1 of a chain: the bodies back to back, each followed by room for its tail. */
static int lay_out_bodies(struct rb_regcmd *rc, const struct rb_npu_task *tasks, size_t n,
			  uint32_t base_addr, struct rb_regcmd_layout *lay)
{
	static const uint64_t room[RB_REGCMD_TAIL_WORDS];
	int ret;

	for (size_t i = 0; i < n; i++) {
		lay[i].offset = rc->count;
		lay[i].addr = base_addr + 8 * (uint32_t)rc->count;
		ret = encode_body(rc, &tasks[i]);
		if (ret == 0)
			ret = append(rc, room, RB_REGCMD_TAIL_WORDS);
		if (ret < 0)
			return task_error(ret, i, n);
		lay[i].regcfg_amount = (uint32_t)(rc->count - lay[i].offset - RB_REGCMD_TAIL_WORDS);
		lay[i].words = (uint32_t)(rc->count - lay[i].offset);
		if ((uint64_t)base_addr + 8 * (uint64_t)rc->count > UINT64_C(1) << 32)
			return rb_set_error(-ERANGE,
					    "a chain of %zu tasks at 0x%x passes the 4 GiB "
					    "end of the NPU address space",
					    n, base_addr);
	}
	return 0;
}

/* Pass 2: each tail points at the next task; the last one ends the program. */
static int fill_tails(struct rb_regcmd *rc, const struct rb_npu_task *tasks, size_t n,
		      const struct rb_regcmd_layout *lay)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t *tail = rc->words + lay[i].offset + lay[i].regcfg_amount;
		int ret = make_tail(&tasks[i], i + 1 < n ? &lay[i + 1] : NULL, tail);

		if (ret < 0)
			return task_error(ret, i, n);
	}
	return 0;
}

int rb_regcmd_build_chain(struct rb_regcmd *rc, const struct rb_npu_task *tasks, size_t n,
			  uint32_t base_addr, struct rb_regcmd_layout *layout)
{
	struct rb_regcmd_layout *lay = layout;
	int ret;

	rc->count = 0;
	if (n == 0)
		return rb_set_error(-EINVAL, "a chain needs at least one task");
	if (base_addr % ATOM_BYTES) /* PC_SOURCE_ADDR holds bits 31:4 (§a.2) */
		return rb_set_error(-EINVAL, "chain address 0x%x is not 16-byte aligned",
				    base_addr);
	if (!lay)
		lay = calloc(n, sizeof(*lay));
	if (!lay)
		return rb_set_error(-ENOMEM, "out of memory for the layout of %zu tasks", n);
	ret = lay_out_bodies(rc, tasks, n, base_addr, lay);
	if (ret == 0)
		ret = fill_tails(rc, tasks, n, lay);
	if (ret < 0)
		rc->count = 0;
	if (lay != layout)
		free(lay);
	return ret;
}

/* A matmul task ends with the DPU interrupt of either register group (§a.3: int_mask
 * 0x300 in every known submit). */
uint32_t rb_regcmd_int_mask(void)
{
	uint32_t v = 0;

	rb_field_pack(RB_FIELD_PC_INTERRUPT_MASK_DPU_0, 1, &v);
	rb_field_pack(RB_FIELD_PC_INTERRUPT_MASK_DPU_1, 1, &v);
	return v;
}

/* ---- a matmul as one task (rknn-bench regcmd) ---- */

static int parse_out(const char *name, enum rb_dtype dtype, enum rb_npu_prec *out)
{
	if (!name)
		*out = dtype == RB_DTYPE_INT8 ? RB_PREC_INT32 : RB_PREC_FP32;
	else if (dtype == RB_DTYPE_FP16 && strcmp(name, "fp32") == 0)
		*out = RB_PREC_FP32;
	else if (dtype == RB_DTYPE_FP16 && strcmp(name, "fp16") == 0)
		*out = RB_PREC_FP16;
	else if (dtype == RB_DTYPE_INT8 && strcmp(name, "int32") == 0)
		*out = RB_PREC_INT32;
	else
		return rb_set_error(
		    -EINVAL,
		    "--out '%s' does not go with --dtype %s: fp16 gives fp32 or fp16, "
		    "int8 gives int32",
		    name, rb_dtype_name(dtype));
	return 0;
}

static uint64_t round_up(uint64_t v, uint64_t to)
{
	return (v + to - 1) / to * to;
}

/* The one-task plan of a matmul (npu-facts.md §b.5 padding, §c bank split); the
 * mainline variant pads M < 4 to 4 rows, as the planner does (hw/task.h). */
int rb_regcmd_one_task(const struct rb_shape *s, const char *out, const uint32_t addr[3],
		       bool mainline, struct rb_npu_task *t)
{
	uint64_t bpe = rb_dtype_in_size(s->dtype);
	uint64_t k = round_up((uint64_t)s->k, 32);
	uint64_t n = round_up((uint64_t)s->n, (uint64_t)rb_layout_kernel_group(s->dtype));
	int64_t m = mainline && s->m < RB_NPU_MAINLINE_MIN_ROWS ? RB_NPU_MAINLINE_MIN_ROWS : s->m;
	uint64_t feature = (uint64_t)m * k * bpe;
	uint64_t banks = (feature + RB_NPU_CBUF_BANK_BYTES - 1) / RB_NPU_CBUF_BANK_BYTES;

	if (banks > RB_NPU_CBUF_BANKS - 1)
		return rb_set_error(
		    -EINVAL,
		    "%" PRId64 "x%" PRIu64 " %s feature data (%" PRIu64 " bytes) "
		    "needs %" PRIu64 " CBUF data banks; one task has at most %d: use "
		    "a smaller M or K",
		    s->m, k, rb_dtype_name(s->dtype), feature, banks, RB_NPU_CBUF_BANKS - 1);
	if (k > UINT32_MAX || n > UINT32_MAX)
		return rb_set_error(-EINVAL,
				    "%" PRId64 "x%" PRId64 "x%" PRId64 " is too large for one task",
				    s->m, s->k, s->n);
	*t = (struct rb_npu_task){
	    .dtype = s->dtype,
	    .m = (uint32_t)m,
	    .k = (uint32_t)k,
	    .n = (uint32_t)n,
	    .a_height = (uint32_t)m,
	    .c_height = (uint32_t)m,
	    .data_banks = (uint32_t)banks,
	    .weight_banks = RB_NPU_CBUF_BANKS - (uint32_t)banks,
	    .a_addr = addr[0],
	    .b_addr = addr[1],
	    .c_addr = addr[2],
	    .mainline = mainline,
	};
	return parse_out(out, s->dtype, &t->out);
}
