/* One kicked task on CNA, CORE and DPU (npu-facts §b.2-§b.4, §c, §g.3): the 1×1
 * convolution the registers describe, read from each block's executing register group,
 * checked where the silicon would stop, with every DMA range resolved through the
 * IOMMU before anything is written. The arithmetic is in hw_gemm.c.
 *
 * What stops the core (RB_SIM_HANG) besides the PC's own reasons (hw_pc.c):
 *  - a kick without CNA, CORE and DPU, or with the PPU (not modeled);
 *  - DPU_RDMA enabled but MRDMA not disabled: the DPU waits for MRDMA data (§a.6);
 *  - under the mainline kernel (rdma_required, sim.h), DPU_RDMA not enabled (§a.6);
 *  - precision fields of CNA, CORE and DPU that disagree, or a pair not modeled;
 *  - an empty cube, or CORE/DPU sizes that disagree with the CNA's;
 *  - modes not modeled: non-direct convolution, GROUP_LINE_OFF, weights other than
 *    1×1, DPU stages not bypassed, output not to memory;
 *  - CBUF: DATA_BANK + WEIGHT_BANK > the profile's banks (12 on RK3588, soc.h), a
 *    feature tile bigger than its data banks, one kernel's weights bigger than the
 *    weight banks (whole weights bigger than the banks stream kernel by kernel, as
 *    MTX's 1×8192×8192 does: the §c conflict, resolved for MTX), DATA_REUSE /
 *    WEIGHT_REUSE with nothing of that shape reusable in the CBUF (a reuse of the
 *    same shape from another address computes from the stale CBUF, apply_reuse);
 *  - inconsistent weight sizes, addresses not 16-byte aligned (conservative: what the
 *    silicon does then is unknown, and silently computing garbage would hide the bug).
 * A DMA (feature, weights, output) outside every mapped buffer is RB_SIM_IOMMU_FAULT.
 * What each task asks of the hardware (bytes, MAC cycles) goes to the timing model
 * (timing.h) through rb_sim_exec.timing.
 * A SIZE_E that does not match the output precision is not an error: the DPU writes
 * only the sub-surfaces SIZE_E covers (§b.4), the rest of the output stays untouched.
 * The task's numbers, the bank sum and the DMA ranges come from hw/conv.h, which the
 * program validator (npu/validate.h) checks with before submit: one rule, one code. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "hw/conv.h"
#include "core/util.h"
#include "hw/task.h"
#include "sim/npu_internal.h"

#define ATOM    16u /* bytes of a cube atom (§b.1) */
#define K_BLOCK 32u /* channels of a weight block (§b.3) */

#define FLD(c, name) rb_sim_field(c, RB_FIELD_##name)

/* Field names for messages; a few may be in use at once. */
static const char *fname(enum rb_field_id id)
{
	static _Thread_local char buf[4][96];
	static _Thread_local unsigned next;
	char *b = buf[next++ % 4];

	return rb_sim_field_name(id, b, sizeof(buf[0]));
}

static const char *prec_name(int64_t p)
{
	static const char *const names[] = {"int8",  "int16", "fp16", "bf16",
					    "int32", "fp32",  "int4", "tf32"};

	return p >= 0 && p < 8 ? names[p] : "?";
}

/* §a.1, §a.6: what the kick runs (the rule is hw/conv.c's, shared with the validator). */
static int check_enable(const struct rb_sim_exec *x, struct rb_sim_fault *f)
{
	char why[256];

	if (rb_conv_check_enable(x->op_enable,
				 FLD(x->core, DPU_RDMA_FEATURE_MODE_CFG_MRDMA_DISABLE),
				 x->npu->rdma_required, why, sizeof(why)))
		return rb_sim_hang(f, "%s", why);
	return 0;
}

/* Output precision and the fp32 → fp16 converter must agree (§a.6). */
static int check_out_prec(const struct rb_sim_core *c, struct rb_conv *cv, struct rb_sim_fault *f)
{
	int64_t out = FLD(c, DPU_DATA_FORMAT_OUT_PRECISION);
	int64_t cvt = FLD(c, DPU_OUT_CVT_SCALE_FP32TOFP16_EN);
	bool ok = cv->int8 ? out == RB_PREC_INT32 && !cvt
			   : (out == RB_PREC_FP32 && !cvt) || (out == RB_PREC_FP16 && cvt);

	if (!ok)
		return rb_sim_hang(f, "%s is %s with %s %lld: %s input writes %s",
				   fname(RB_FIELD_DPU_DATA_FORMAT_OUT_PRECISION), prec_name(out),
				   fname(RB_FIELD_DPU_OUT_CVT_SCALE_FP32TOFP16_EN), (long long)cvt,
				   cv->int8 ? "int8" : "fp16",
				   cv->int8 ? "int32 (FP32TOFP16_EN 0)"
					    : "fp32 (FP32TOFP16_EN 0) or fp16 (FP32TOFP16_EN 1)");
	return 0;
}

/* §a.5, §a.6: one input/processing precision in CNA, CORE and DPU. */
static int check_prec(const struct rb_sim_core *c, struct rb_conv *cv, struct rb_sim_fault *f)
{
	static const enum rb_field_id same[] = {
	    RB_FIELD_CNA_CONV_CON1_PROC_PRECISION,
	    RB_FIELD_CORE_MISC_CFG_PROC_PRECISION,
	    RB_FIELD_DPU_DATA_FORMAT_IN_PRECISION,
	    RB_FIELD_DPU_DATA_FORMAT_PROC_PRECISION,
	};
	int64_t in = FLD(c, CNA_CONV_CON1_IN_PRECISION);

	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (rb_sim_field(c, same[i]) != in)
			return rb_sim_hang(f, "%s is %s but %s is %s: the precisions disagree",
					   fname(same[i]), prec_name(rb_sim_field(c, same[i])),
					   fname(RB_FIELD_CNA_CONV_CON1_IN_PRECISION),
					   prec_name(in));
	if (in != RB_PREC_FP16 && in != RB_PREC_INT8)
		return rb_sim_hang(f, "%s is %s: only fp16 and int8 inputs are modeled",
				   fname(RB_FIELD_CNA_CONV_CON1_IN_PRECISION), prec_name(in));
	return check_out_prec(c, cv, f);
}

/* A 1×1 convolution of stride 1: CORE and DPU see the CNA's cube (sizes minus 1). */
static int check_sizes(const struct rb_sim_core *c, struct rb_sim_fault *f)
{
	static const struct {
		enum rb_field_id size, ref;
	} same[] = {
	    {RB_FIELD_CORE_DATAOUT_SIZE_0_DATAOUT_WIDTH, RB_FIELD_CNA_DATA_SIZE0_DATAIN_WIDTH},
	    {RB_FIELD_CORE_DATAOUT_SIZE_0_DATAOUT_HEIGHT, RB_FIELD_CNA_DATA_SIZE0_DATAIN_HEIGHT},
	    {RB_FIELD_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL,
	     RB_FIELD_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS},
	    {RB_FIELD_DPU_DATA_CUBE_WIDTH_WIDTH, RB_FIELD_CNA_DATA_SIZE0_DATAIN_WIDTH},
	    {RB_FIELD_DPU_DATA_CUBE_HEIGHT_HEIGHT, RB_FIELD_CNA_DATA_SIZE0_DATAIN_HEIGHT},
	    {RB_FIELD_DPU_DATA_CUBE_CHANNEL_CHANNEL, RB_FIELD_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS},
	};
	static const enum rb_field_id nonzero[] = {
	    RB_FIELD_CNA_DATA_SIZE0_DATAIN_WIDTH,
	    RB_FIELD_CNA_DATA_SIZE0_DATAIN_HEIGHT,
	    RB_FIELD_CNA_DATA_SIZE1_DATAIN_CHANNEL,
	    RB_FIELD_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS,
	};

	for (size_t i = 0; i < sizeof(nonzero) / sizeof(nonzero[0]); i++)
		if (rb_sim_field(c, nonzero[i]) == 0)
			return rb_sim_hang(f, "%s is 0: the cube is empty", fname(nonzero[i]));
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		int64_t v = rb_sim_field(c, same[i].size) + 1, want = rb_sim_field(c, same[i].ref);

		if (v != want)
			return rb_sim_hang(f,
					   "%s + 1 is %lld but %s is %lld: the blocks disagree on "
					   "the cube and never finish",
					   fname(same[i].size), (long long)v, fname(same[i].ref),
					   (long long)want);
	}
	return 0;
}

/* Modes the emulator does not model stop the core with a reason saying so. */
static int check_modes(const struct rb_sim_core *c, struct rb_sim_fault *f)
{
	static const struct {
		enum rb_field_id id;
		int64_t want;
	} modes[] = {
	    {RB_FIELD_CNA_CONV_CON1_CONV_MODE, 0},
	    {RB_FIELD_CNA_CONV_CON1_GROUP_LINE_OFF, 0},
	    {RB_FIELD_CNA_CONV_CON1_DECONV, 0},
	    {RB_FIELD_CNA_WEIGHT_SIZE2_WEIGHT_WIDTH, 1},
	    {RB_FIELD_CNA_WEIGHT_SIZE2_WEIGHT_HEIGHT, 1},
	    {RB_FIELD_DPU_FEATURE_MODE_CFG_FLYING_MODE, 0},
	    {RB_FIELD_DPU_BS_CFG_BS_BYPASS, 1},
	    {RB_FIELD_DPU_BN_CFG_BN_BYPASS, 1},
	    {RB_FIELD_DPU_EW_CFG_EW_BYPASS, 1},
	};
	int64_t to_memory = 2; /* OUTPUT_MODE value bit 1: write to memory (§a.5 row 54) */

	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (rb_sim_field(c, modes[i].id) != modes[i].want)
			return rb_sim_hang(
			    f, "%s is %lld: only %lld is modeled", fname(modes[i].id),
			    (long long)rb_sim_field(c, modes[i].id), (long long)modes[i].want);
	if (!(FLD(c, DPU_FEATURE_MODE_CFG_OUTPUT_MODE) & to_memory))
		return rb_sim_hang(f, "%s does not write to memory: only that is modeled",
				   fname(RB_FIELD_DPU_FEATURE_MODE_CFG_OUTPUT_MODE));
	return 0;
}

/* §c: banks, and what must fit them; the CBUF is the hardware profile's. */
static int check_banks(const struct rb_sim_exec *x, struct rb_conv *cv, struct rb_sim_fault *f)
{
	const struct rb_soc_profile *soc = &x->npu->soc;
	uint64_t bank_bytes = (uint64_t)soc->cbuf_bank_bytes, feature, weights, wcap;
	char why[RB_SIM_REASON_MAX];

	if (rb_conv_check_banks(cv, (uint32_t)soc->cbuf_banks, why, sizeof(why)))
		return rb_sim_hang(f, "%s", why);
	feature = (uint64_t)cv->width * cv->height * DIV_UP(cv->channels, cv->c2_in) * ATOM;
	if (feature > cv->data_banks * bank_bytes)
		return rb_sim_hang(f,
				   "%s: the feature tile (%u×%u pixels × %u channels, %llu bytes) "
				   "does not fit %u banks",
				   fname(RB_FIELD_CNA_CBUF_CON0_DATA_BANK), cv->width, cv->height,
				   cv->channels, (unsigned long long)feature, cv->data_banks);
	wcap = cv->weight_banks * bank_bytes;
	weights = (uint64_t)cv->kernels * cv->kernel_bytes;
	cv->weights_fit = weights <= wcap;
	if (!cv->weights_fit && cv->kernel_bytes > wcap)
		return rb_sim_hang(f, "%s: one kernel's weights (%s %u bytes) do not fit %u banks",
				   fname(RB_FIELD_CNA_CBUF_CON0_WEIGHT_BANK),
				   fname(RB_FIELD_CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL),
				   cv->kernel_bytes, cv->weight_banks);
	return 0;
}

/* §b.3: the native weight layout, whole kernel groups of 32-channel blocks. */
static int check_weights(const struct rb_conv *cv, struct rb_sim_fault *f)
{
	uint64_t per_kernel = DIV_UP(cv->channels, K_BLOCK) * K_BLOCK * cv->bpe;
	uint64_t need;

	if (cv->kernel_bytes != per_kernel)
		return rb_sim_hang(f,
				   "%s is %u but %u channels of %u-byte weights in %u-channel "
				   "blocks take %llu",
				   fname(RB_FIELD_CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL),
				   cv->kernel_bytes, cv->channels, cv->bpe, K_BLOCK,
				   (unsigned long long)per_kernel);
	need = DIV_UP(cv->kernels, cv->kg) * cv->kg * per_kernel;
	if (cv->weight_bytes < need)
		return rb_sim_hang(f, "%s is %u but %u kernels in groups of %u take %llu bytes",
				   fname(RB_FIELD_CNA_WEIGHT_SIZE0_WEIGHT_BYTES), cv->weight_bytes,
				   cv->kernels, cv->kg, (unsigned long long)need);
	return 0;
}

/* §c: DATA_REUSE / WEIGHT_REUSE read what the previous task on the core left in the
 * CBUF, i.e. the data from where that task read it. The bit only tells the CNA to skip
 * the DMA; nothing compares addresses. So a task that claims reuse of weights of the
 * same shape and bank split but at another address computes from the stale CBUF, as
 * the silicon would: the output is wrong and verification says so. A claim the CBUF
 * cannot meet at all (nothing there since a reset, another bank split or shape,
 * weights that streamed through the banks) stops the core instead: what the silicon
 * computes then is unknown, and made-up numbers would hide the bug. */
static int apply_reuse(const struct rb_sim_core *c, struct rb_conv *cv, struct rb_sim_fault *f)
{
	const struct rb_sim_cbuf *p = &c->cbuf;
	bool same = p->valid && p->data_banks == cv->data_banks &&
		    p->weight_banks == cv->weight_banks &&
		    p->prec == (cv->int8 ? RB_PREC_INT8 : RB_PREC_FP16);

	if (cv->data_reuse) {
		if (!same || p->width != cv->width || p->height != cv->height ||
		    p->channels != cv->channels)
			return rb_sim_hang(f,
					   "%s: the CBUF holds no feature tile of this shape and "
					   "bank split (a reset empties it); the silicon "
					   "would compute with stale data",
					   fname(RB_FIELD_CNA_CBUF_CON0_DATA_REUSE));
		cv->feature_addr = p->feature_addr;
		cv->line_stride = p->line_stride;
		cv->surf_stride = p->surf_stride;
	}
	if (cv->weight_reuse) {
		if (!same || !p->weights_resident || p->kernels != cv->kernels ||
		    p->kernel_bytes != cv->kernel_bytes)
			return rb_sim_hang(f,
					   "%s: the CBUF holds no resident weights of this shape "
					   "and bank split; the silicon would compute with stale "
					   "data",
					   fname(RB_FIELD_CNA_CBUF_CON0_WEIGHT_REUSE));
		cv->weight_addr = p->weight_addr;
	}
	return 0;
}

static int check_aligned(uint32_t addr, enum rb_field_id id, struct rb_sim_fault *f)
{
	if (addr % ATOM)
		return rb_sim_hang(f, "%s: 0x%08x is not 16-byte aligned", fname(id), addr);
	return 0;
}

/* The addresses of the DMAs (TASK_DMA_BASE_ADDR added, §a.2) and the reused ones. */
static int check_addresses(const struct rb_sim_exec *x, struct rb_conv *cv, struct rb_sim_fault *f)
{
	const struct rb_sim_core *c = x->core;

	if (check_aligned(cv->feature_addr, RB_FIELD_CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR, f) ||
	    check_aligned(cv->weight_addr, RB_FIELD_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0, f) ||
	    check_aligned(cv->dst_addr, RB_FIELD_DPU_DST_BASE_ADDR_DST_BASE_ADDR, f))
		return -1;
	return apply_reuse(c, cv, f);
}

static uint32_t exec_reg(const void *core, enum rb_reg_id id)
{
	return rb_sim_reg(core, id);
}

static int decode_task(const struct rb_sim_exec *x, struct rb_conv *cv, struct rb_sim_fault *f)
{
	const struct rb_sim_core *c = x->core;

	rb_conv_read(cv, exec_reg, c, x->dma_base);
	if (check_enable(x, f) || check_sizes(c, f) || check_prec(c, cv, f) || check_modes(c, f) ||
	    check_weights(cv, f) || check_banks(x, cv, f))
		return -1;
	return check_addresses(x, cv, f);
}

/* Host memory of [addr, addr + len), or NULL: a range past 4 GiB is never mapped. */
static void *dma_map(const struct rb_sim_exec *x, uint32_t addr, uint64_t len)
{
	const struct rb_sim_iommu *mmu = &x->npu->iommu;

	if ((uint64_t)addr + len > UINT64_C(1) << 32)
		return NULL;
	return mmu->map(mmu->ctx, x->core->index, addr, len);
}

/* The feature per channel group (§b.2, hw/conv.h); surf NULL: only checked (a timing-
 * only run, which needs no pointers: K = 8192 has 1024 groups per task). */
static int map_feature(const struct rb_sim_exec *x, const struct rb_conv *cv, const uint8_t **surf,
		       struct rb_sim_fault *f)
{
	uint32_t groups = rb_conv_feature_groups(cv), pitch;
	struct rb_dma_range span;
	const uint8_t *base;

	/* Mapped as one range when one buffer holds every group (the same pointers the
	 * groups one by one give); else group by group, to name the one outside. */
	if (rb_conv_feature_span(cv, &span, &pitch) && (base = dma_map(x, span.addr, span.len))) {
		for (uint32_t g = 0; surf && g < groups; g++)
			surf[g] = base + (size_t)g * pitch;
		return 0;
	}
	for (uint32_t g = 0; g < groups; g++) {
		struct rb_dma_range r = rb_conv_feature_range(cv, g);
		const uint8_t *p = dma_map(x, r.addr, r.len);

		if (surf)
			surf[g] = p;
		if (!p)
			return rb_sim_iommu_fault(
			    f, false,
			    "CNA.FEATURE_DATA_ADDR: channel group %u of the "
			    "feature (0x%08x, %llu bytes) is outside every buffer",
			    g, r.addr, (unsigned long long)r.len);
	}
	return 0;
}

/* The output per sub-surface (§b.4, hw/conv.h); sub-surfaces past every SIZE_E are
 * never written, so never mapped. */
static int map_output(const struct rb_sim_exec *x, const struct rb_conv *cv, uint8_t **surf,
		      struct rb_sim_fault *f)
{
	uint32_t subs = rb_conv_output_subs(cv);
	struct rb_conv_out_walk walk;

	rb_conv_out_walk_init(&walk, cv);
	for (uint32_t s = 0; s < subs; s++) {
		struct rb_dma_range r;
		uint32_t c0 = s * cv->c2_out;

		surf[s] = NULL;
		if (!rb_conv_out_walk_next(&walk, &r))
			continue;
		surf[s] = dma_map(x, r.addr, r.len);
		if (!surf[s])
			return rb_sim_iommu_fault(
			    f, true,
			    "DPU.DST_BASE_ADDR: output channels %u-%u (0x%08x, "
			    "%llu bytes) are outside every buffer",
			    c0, c0 + cv->c2_out - 1, r.addr, (unsigned long long)r.len);
	}
	return 0;
}

static int map_weights(const struct rb_sim_exec *x, const struct rb_conv *cv, const uint8_t **w,
		       struct rb_sim_fault *f)
{
	struct rb_dma_range r = rb_conv_weight_range(cv);

	*w = dma_map(x, r.addr, r.len);
	if (!*w)
		return rb_sim_iommu_fault(f, false,
					  "CNA.DCOMP_ADDR0: the weights (0x%08x, %u bytes of "
					  "CNA.WEIGHT_SIZE0) are outside every buffer",
					  cv->weight_addr, cv->weight_bytes);
	return 0;
}

/* What the task asks of the hardware (timing.h): the bytes its DMAs really move — the
 * feature tile's cube unless DATA_REUSE keeps the previous one, WEIGHT_SIZE0 bytes of
 * weights unless WEIGHT_REUSE, every output sub-surface — and the MAC array's cycles.
 * A task overlaps the previous one only inside a job with ping-pong register groups
 * (PC TASK_PP_EN and the CNA's EXECUTER_PP_EN, §a.4). */
static void describe_timing(struct rb_sim_exec *x, const struct rb_conv *cv)
{
	struct rb_timing_task *t = &x->timing;
	uint64_t pixels = (uint64_t)cv->width * cv->height;
	bool pp = rb_field_unpack(RB_FIELD_CNA_S_POINTER_EXECUTER_PP_EN,
				  x->core->pp[RB_BLOCK_CNA].ctl) != 0;

	t->fetch_words = x->regcmd_bytes / 8;
	t->feature_bytes = cv->data_reuse ? 0 : DIV_UP(cv->channels, cv->c2_in) * pixels * ATOM;
	t->weight_bytes = cv->weight_reuse ? 0 : cv->weight_bytes;
	t->output_bytes = DIV_UP(cv->kernels, cv->c2_out) * pixels * ATOM;
	t->cycles = rb_timing_cycles(&x->npu->soc, cv->int8, pixels, cv->channels, cv->kernels);
	t->overlap = !x->first_in_job && x->pingpong && pp;
}

/* What the next task may reuse (§c). */
static void remember_cbuf(struct rb_sim_core *c, const struct rb_conv *cv)
{
	struct rb_sim_cbuf *p = &c->cbuf;

	p->valid = true;
	p->data_banks = cv->data_banks;
	p->weight_banks = cv->weight_banks;
	p->prec = cv->int8 ? RB_PREC_INT8 : RB_PREC_FP16;
	p->width = cv->width;
	p->height = cv->height;
	p->channels = cv->channels;
	p->feature_addr = cv->feature_addr;
	p->line_stride = cv->line_stride;
	p->surf_stride = cv->surf_stride;
	p->weights_resident = cv->weights_fit;
	p->kernels = cv->kernels;
	p->kernel_bytes = cv->kernel_bytes;
	p->weight_addr = cv->weight_addr;
}

static int compute(const struct rb_sim_exec *x, const struct rb_conv *cv, const uint8_t **a,
		   uint8_t **out, struct rb_sim_fault *f)
{
	struct rb_sim_gemm g = {
	    .int8 = cv->int8,
	    .out_prec = (int)cv->out_prec,
	    .width = cv->width,
	    .height = cv->height,
	    .channels = cv->channels,
	    .kernels = cv->kernels,
	    .a_surf = a,
	    .a_line = 4 * (int64_t)cv->line_stride,
	    .kernel_bytes = cv->kernel_bytes,
	    .c_surf = out,
	    .notch = cv->notch,
	    .kb = cv->kb,
	    .c2_out = cv->c2_out,
	    .size_e = {cv->size_e[0], cv->size_e[1], cv->size_e[2]},
	    .threads = x->core->threads,
	    .mem = &x->npu->gemm_mem[x->core->index],
	    .weight_reuse = cv->weight_reuse,
	    .weights_resident = cv->weights_fit,
	};
	int ret = map_feature(x, cv, a, f);

	if (ret == 0)
		ret = map_weights(x, cv, &g.b, f);
	if (ret == 0)
		ret = map_output(x, cv, out, f);
	/* Timing-only runs (the tuner's model ranking) stop after every check and every
	 * DMA range was validated: the model needs the task, not its numbers. */
	if (ret == 0 && !x->npu->model_only)
		ret = rb_sim_gemm_run(&g);
	else
		g.mem->valid = false; /* this task's weights are not in it */
	return ret;
}

int rb_sim_conv_run(struct rb_sim_exec *x, struct rb_sim_fault *f)
{
	struct rb_conv cv = {0};
	const uint8_t **a = NULL;
	uint8_t **out = NULL;
	int ret = decode_task(x, &cv, f);

	if (ret)
		return ret;
	if (!x->npu->model_only)
		a = calloc(DIV_UP(cv.channels, cv.c2_in), sizeof(*a));
	out = calloc(DIV_UP(cv.kernels, cv.c2_out), sizeof(*out));
	ret = (a || x->npu->model_only) && out ? compute(x, &cv, a, out, f) : -ENOMEM;
	free(a);
	free(out);
	if (ret)
		return ret;
	describe_timing(x, &cv);
	remember_cbuf(x->core, &cv);
	return 0;
}
