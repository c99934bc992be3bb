/* Tests of the emulated NPU (src/sim/npu.c, hw_*.c), driven like the kernel drives it:
 * MMIO writes in the vendor commit order (npu-facts §a.3) on programs from the regcmd
 * encoder or from tests/golden/, over a test IOMMU of malloc'd buffers. Operands are
 * packed here from the §b formulas (an oracle independent of src/numeric/layout.c), and
 * results are checked against a naive matmul and against the documented accumulation
 * order of hw_gemm.c, bit for bit. Run from the top of the tree (make check does). */
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
#include "core/fp16.h"
#include "npu/regcmd.h"
#include "hw/regs.h"
#include "hw/task.h"
#include "sim/npu_internal.h"
#include "sim/sim.h"

/* ---- a test IOMMU: buffers at fixed NPU addresses ---- */

#define MAX_BUFS 16
#define SENTINEL 0xA5
#define RC_ADDR  0x00100000u

struct buf {
	uint32_t iova;
	uint64_t size;
	uint8_t *host;
};

struct rig {
	struct buf bufs[MAX_BUFS];
	int n;
	struct rb_sim_npu *npu;
};

static void *rig_map(void *ctx, int core, uint32_t iova, uint64_t len)
{
	struct rig *r = ctx;

	(void)core; /* one address space for every core */
	for (int i = 0; i < r->n; i++) {
		struct buf *b = &r->bufs[i];

		if (iova >= b->iova && iova - b->iova <= b->size &&
		    len <= b->size - (iova - b->iova))
			return b->host + (iova - b->iova);
	}
	return NULL;
}

static struct rig *rig_new_cfg(int threads, int cores)
{
	struct rig *r = calloc(1, sizeof(*r));
	struct rb_sim_config cfg;
	struct rb_sim_iommu mmu = {rig_map, NULL};

	assert_non_null(r);
	rb_sim_config_init(&cfg);
	cfg.threads = threads;
	cfg.cores = cores;
	mmu.ctx = r;
	r->npu = rb_sim_npu_new(&cfg, &mmu);
	assert_non_null(r->npu);
	return r;
}

static struct rig *rig_new(void)
{
	return rig_new_cfg(2, 1);
}

/* A buffer filled with the sentinel, so untouched output shows. */
static uint8_t *rig_alloc(struct rig *r, uint32_t iova, uint64_t size)
{
	struct buf *b = &r->bufs[r->n++];

	assert_true(r->n <= MAX_BUFS);
	b->iova = iova;
	b->size = size;
	b->host = aligned_alloc(64, (size + 63) & ~(uint64_t)63);
	assert_non_null(b->host);
	memset(b->host, SENTINEL, size);
	return b->host;
}

static void rig_free(struct rig *r)
{
	for (int i = 0; i < r->n; i++)
		free(r->bufs[i].host);
	rb_sim_npu_free(r->npu);
	free(r);
}

static void mmio(struct rig *r, int core, enum rb_reg_id id, uint32_t value)
{
	rb_sim_npu_mmio_write(r->npu, core, rb_reg(id)->offset, value);
}

static uint32_t mmio_read(struct rig *r, int core, enum rb_reg_id id)
{
	return rb_sim_npu_mmio_read(r->npu, core, rb_reg(id)->offset);
}

static uint32_t pack(enum rb_field_id id, uint32_t raw, uint32_t v)
{
	assert_int_equal(rb_field_pack(id, raw, &v), 0);
	return v;
}

#define DPU_IRQS                                                                                   \
	(rb_field_mask(RB_FIELD_PC_INTERRUPT_MASK_DPU_0) |                                         \
	 rb_field_mask(RB_FIELD_PC_INTERRUPT_MASK_DPU_1))

/* The vendor kernel's commit (§a.3), for a program whose first body has body_words. */
static void commit_base(struct rig *r, int core, uint32_t addr, uint32_t body_words, uint32_t tasks,
			uint32_t dma_base)
{
	uint32_t sp = 0, con = 0;

	sp = pack(RB_FIELD_CNA_S_POINTER_POINTER_PP_EN, 1, sp);
	sp = pack(RB_FIELD_CNA_S_POINTER_EXECUTER_PP_EN, 1, sp);
	sp = pack(RB_FIELD_CNA_S_POINTER_POINTER_PP_MODE, 1, sp);
	sp = pack(RB_FIELD_CNA_S_POINTER_RESERVED_28, (uint32_t)core, sp);
	con = pack(RB_FIELD_PC_TASK_CON_TASK_NUMBER, tasks, con);
	con = pack(RB_FIELD_PC_TASK_CON_TASK_PP_EN, 1, con);
	con = pack(RB_FIELD_PC_TASK_CON_TASK_COUNT_CLEAR, 1, con);
	con = pack(RB_FIELD_PC_TASK_CON_RESERVED_14, 1, con);
	assert_int_equal(sp, 0xE + ((uint32_t)core << 28));
	assert_int_equal(con, ((0x6u | 1) << 12) | tasks);
	mmio(r, core, RB_REG_PC_BASE_ADDRESS, 1);
	mmio(r, core, RB_REG_CNA_S_POINTER, sp);
	mmio(r, core, RB_REG_CORE_S_POINTER, sp);
	mmio(r, core, RB_REG_PC_BASE_ADDRESS, addr);
	mmio(r, core, RB_REG_PC_REGISTER_AMOUNTS, rb_regcmd_pc_amount(body_words));
	mmio(r, core, RB_REG_PC_INTERRUPT_MASK, DPU_IRQS);
	mmio(r, core, RB_REG_PC_INTERRUPT_CLEAR, DPU_IRQS);
	mmio(r, core, RB_REG_PC_TASK_CON, con);
	mmio(r, core, RB_REG_PC_TASK_DMA_BASE_ADDR, dma_base);
	mmio(r, core, RB_REG_PC_OPERATION_ENABLE, 1);
	mmio(r, core, RB_REG_PC_OPERATION_ENABLE, 0);
}

static void commit(struct rig *r, int core, uint32_t addr, uint32_t body_words, uint32_t tasks)
{
	commit_base(r, core, addr, body_words, tasks, 0);
}

static struct rb_sim_core_result run(struct rig *r, int core)
{
	struct rb_sim_core_result res[RB_SIM_MAX_CORES];

	assert_int_equal(rb_sim_npu_run(r->npu, 1u << core, res), 0);
	return res[core];
}

static void expect_done(const struct rb_sim_core_result *res, uint32_t tasks)
{
	if (res->status != RB_SIM_DONE)
		fail_msg("status %d, reason '%s'", res->status, res->reason);
	assert_int_equal(res->tasks_done, tasks);
	assert_string_equal(res->reason, "");
}

static void expect_stop(const struct rb_sim_core_result *res, enum rb_sim_status status,
			const char *what)
{
	if (res->status != status || !strstr(res->reason, what))
		fail_msg("status %d (want %d), reason '%s' (want '%s')", res->status, status,
			 res->reason, what);
}

/* ---- operands ---- */

static uint64_t rng_state = 0x243f6a8885a308d3u;

static uint32_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* A row-major matmul and where its packed operands live. */
struct mm {
	enum rb_dtype dtype;
	enum rb_npu_prec out;
	uint32_t m, k, n;
	void *a, *b; /* row-major: uint16_t (fp16 bits) or int8_t */
	uint32_t a_addr, b_addr, c_addr;
	uint8_t *ha, *hb, *hc; /* packed, in the rig */
};

/* exact: small multiples of 1/4, so every sum is exact in fp32 in any order. */
static void mm_fill(struct mm *mm, bool exact)
{
	size_t na = (size_t)mm->m * mm->k, nb = (size_t)mm->k * mm->n;
	uint16_t *a16 = mm->a, *b16 = mm->b;
	int8_t *a8 = mm->a, *b8 = mm->b;

	for (size_t i = 0; i < na + nb; i++) {
		float v = exact ? (float)((int)(rnd() % 17) - 8) / 4
				: (float)rnd() / 4294967296.0f * 2 - 1;

		if (mm->dtype == RB_DTYPE_INT8)
			*(i < na ? &a8[i] : &b8[i - na]) = (int8_t)rnd();
		else
			*(i < na ? &a16[i] : &b16[i - na]) = rb_fp16_from_f32(v);
	}
}

static void mm_init(struct mm *mm, enum rb_dtype dtype, uint32_t m, uint32_t k, uint32_t n,
		    bool exact)
{
	size_t bpe = dtype == RB_DTYPE_INT8 ? 1 : 2;

	memset(mm, 0, sizeof(*mm));
	mm->dtype = dtype;
	mm->out = dtype == RB_DTYPE_INT8 ? RB_PREC_INT32 : RB_PREC_FP32;
	mm->m = m;
	mm->k = k;
	mm->n = n;
	mm->a = malloc((size_t)m * k * bpe);
	mm->b = malloc((size_t)k * n * bpe);
	assert_non_null(mm->a);
	assert_non_null(mm->b);
	mm_fill(mm, exact);
}

static void mm_release(struct mm *mm)
{
	free(mm->a);
	free(mm->b);
}

static size_t mm_bpe(const struct mm *mm)
{
	return mm->dtype == RB_DTYPE_INT8 ? 1 : 2;
}

static size_t out_esize(enum rb_npu_prec out)
{
	return out == RB_PREC_FP16 ? 2 : 4;
}

static uint64_t a_bytes(const struct mm *mm)
{
	return (uint64_t)mm->k * mm->m * mm_bpe(mm); /* k % 32 == 0 */
}

static uint64_t b_bytes(const struct mm *mm)
{
	return (uint64_t)mm->k * mm->n * mm_bpe(mm);
}

static uint64_t c_bytes(const struct mm *mm)
{
	uint64_t c2 = 16 / out_esize(mm->out);

	return (mm->n + c2 - 1) / c2 * mm->m * 16;
}

/* §b.2: A as a cube of m rows, C2 = 16 / bpe. */
static void pack_a(const struct mm *mm, uint8_t *dst)
{
	size_t bpe = mm_bpe(mm), c2 = 16 / bpe;

	for (uint32_t m = 0; m < mm->m; m++)
		for (uint32_t k = 0; k < mm->k; k++)
			memcpy(dst + ((k / c2) * mm->m * c2 + m * c2 + k % c2) * bpe,
			       (const uint8_t *)mm->a + ((size_t)m * mm->k + k) * bpe, bpe);
}

/* §b.3: blocks of KG kernels × 32 channels. */
static void pack_b(const struct mm *mm, uint8_t *dst)
{
	size_t bpe = mm_bpe(mm), kg = mm->dtype == RB_DTYPE_INT8 ? 32 : 16;

	for (uint32_t k = 0; k < mm->k; k++)
		for (uint32_t n = 0; n < mm->n; n++)
			memcpy(dst + ((n / kg) * kg * mm->k + (k / 32) * kg * 32 + (n % kg) * 32 +
				      k % 32) *
					 bpe,
			       (const uint8_t *)mm->b + ((size_t)k * mm->n + n) * bpe, bpe);
}

/* §b.4: the output cube element of (m, n), as raw bits. */
static uint32_t c_at(const struct mm *mm, const uint8_t *c, uint32_t m, uint32_t n)
{
	size_t es = out_esize(mm->out), c2 = 16 / es;
	uint32_t v = 0;

	memcpy(&v, c + ((n / c2) * mm->m * c2 + m * c2 + n % c2) * es, es);
	return v;
}

/* The order hw_gemm.c documents: lane k % 8 sums in increasing k, then a fixed tree;
 * over the first `channels` channels. */
static float ordered_dot_k(const struct mm *mm, uint32_t m, uint32_t n, uint32_t channels)
{
	const uint16_t *a = mm->a, *b = mm->b;
	float l[8] = {0};

	for (uint32_t k = 0; k < channels; k++)
		l[k % 8] += rb_fp16_to_f32(a[(size_t)m * mm->k + k]) *
			    rb_fp16_to_f32(b[(size_t)k * mm->n + n]);
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

static float ordered_dot(const struct mm *mm, uint32_t m, uint32_t n)
{
	return ordered_dot_k(mm, m, n, mm->k);
}

static int32_t int_dot(const struct mm *mm, uint32_t m, uint32_t n)
{
	const int8_t *a = mm->a, *b = mm->b;
	int32_t s = 0;

	for (uint32_t k = 0; k < mm->k; k++)
		s += a[(size_t)m * mm->k + k] * b[(size_t)k * mm->n + n];
	return s;
}

/* The bits the NPU must write for (m, n). */
static uint32_t want_bits(const struct mm *mm, uint32_t m, uint32_t n)
{
	float f;
	uint32_t u;
	int32_t i;

	if (mm->dtype == RB_DTYPE_INT8) {
		i = int_dot(mm, m, n);
		memcpy(&u, &i, 4);
		return u;
	}
	f = ordered_dot(mm, m, n);
	if (mm->out == RB_PREC_FP16)
		return rb_fp16_from_f32(f);
	memcpy(&u, &f, 4);
	return u;
}

static void expect_c(const struct mm *mm, const uint8_t *c)
{
	for (uint32_t m = 0; m < mm->m; m++)
		for (uint32_t n = 0; n < mm->n; n++)
			if (c_at(mm, c, m, n) != want_bits(mm, m, n))
				fail_msg("%ux%ux%u: C[%u][%u] = 0x%x, want 0x%x", mm->m, mm->k,
					 mm->n, m, n, c_at(mm, c, m, n), want_bits(mm, m, n));
}

/* fp16 with exact inputs: also equal to the plain sum, whatever the order. */
static void expect_c_naive(const struct mm *mm, const uint8_t *c)
{
	const uint16_t *a = mm->a, *b = mm->b;

	for (uint32_t m = 0; m < mm->m; m++)
		for (uint32_t n = 0; n < mm->n; n++) {
			float s = 0, got;
			uint32_t bits = c_at(mm, c, m, n);

			for (uint32_t k = 0; k < mm->k; k++)
				s += rb_fp16_to_f32(a[m * mm->k + k]) *
				     rb_fp16_to_f32(b[k * mm->n + n]);
			memcpy(&got, &bits, 4);
			if (got != s)
				fail_msg("C[%u][%u] = %g, naive %g", m, n, got, s);
		}
}

/* Buffers at fixed addresses; A, B packed; C full of sentinels. */
static void mm_place(struct rig *r, struct mm *mm, uint32_t a, uint32_t b, uint32_t c)
{
	mm->a_addr = a;
	mm->b_addr = b;
	mm->c_addr = c;
	mm->ha = rig_alloc(r, a, a_bytes(mm));
	mm->hb = rig_alloc(r, b, b_bytes(mm));
	mm->hc = rig_alloc(r, c, c_bytes(mm));
	pack_a(mm, mm->ha);
	pack_b(mm, mm->hb);
}

/* The task of a whole matmul, with the fewest data banks (as `rknn-bench regcmd`). */
static struct rb_npu_task mm_task(const struct mm *mm)
{
	uint32_t banks =
	    (uint32_t)((a_bytes(mm) + RB_NPU_CBUF_BANK_BYTES - 1) / RB_NPU_CBUF_BANK_BYTES);

	return (struct rb_npu_task){
	    .dtype = mm->dtype,
	    .out = mm->out,
	    .m = mm->m,
	    .k = mm->k,
	    .n = mm->n,
	    .a_height = mm->m,
	    .c_height = mm->m,
	    .data_banks = banks,
	    .weight_banks = RB_NPU_CBUF_BANKS - banks,
	    .a_addr = mm->a_addr,
	    .b_addr = mm->b_addr,
	    .c_addr = mm->c_addr,
	};
}

/* A program in the rig at RC_ADDR (plus room for `extra` words). */
static uint64_t *place_words(struct rig *r, const uint64_t *w, size_t n, size_t extra)
{
	uint64_t *dst = (uint64_t *)(void *)rig_alloc(r, RC_ADDR, (n + extra) * 8);

	memset(dst, 0, (n + extra) * 8);
	memcpy(dst, w, n * 8);
	return dst;
}

static struct rb_regcmd emit(const struct rb_npu_task *t)
{
	struct rb_regcmd rc;

	rb_regcmd_init(&rc);
	if (rb_regcmd_emit_task(&rc, t))
		fail_msg("encoder: %s", rb_last_error());
	return rc;
}

/* Rewrites field `id` in every word of words[from, to) that writes its register. */
static void patch(uint64_t *w, size_t from, size_t to, enum rb_field_id id, uint32_t raw)
{
	enum rb_reg_id reg = rb_field(id)->reg;
	uint16_t target = rb_block(rb_reg(reg)->block)->target, off = rb_reg(reg)->offset;
	int hits = 0;

	for (size_t i = from; i < to; i++) {
		if (rb_word_target(w[i]) != target || rb_word_offset(w[i]) != off)
			continue;
		w[i] = rb_word(target, off, pack(id, raw, rb_word_value(w[i])));
		hits++;
	}
	assert_true(hits > 0);
}

/* One task of mm on core 0: encode, (patch), commit, run. */
struct one {
	struct rig *r;
	struct mm mm;
	uint64_t *words;
	size_t count;
};

static void one_setup(struct one *o, enum rb_dtype dtype, uint32_t m, uint32_t k, uint32_t n,
		      bool exact)
{
	struct rb_regcmd rc;
	struct rb_npu_task t;

	o->r = rig_new();
	mm_init(&o->mm, dtype, m, k, n, exact);
	mm_place(o->r, &o->mm, 0x01000000, 0x02000000, 0x03000000);
	t = mm_task(&o->mm);
	rc = emit(&t);
	o->words = place_words(o->r, rc.words, rc.count, 8);
	o->count = rc.count;
	rb_regcmd_release(&rc);
}

static struct rb_sim_core_result one_run(struct one *o)
{
	commit(o->r, 0, RC_ADDR, (uint32_t)o->count - RB_REGCMD_TAIL_WORDS, 1);
	return run(o->r, 0);
}

static void one_release(struct one *o)
{
	mm_release(&o->mm);
	rig_free(o->r);
}

/* ---- golden programs (Appendix A, B) ---- */

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

static void run_golden(const char *path, enum rb_dtype dtype, uint32_t m, uint32_t k, uint32_t n)
{
	struct rig *r = rig_new();
	uint64_t words[128];
	size_t count = load_golden(path, words, 128);
	struct rb_sim_core_result res;
	struct mm mm;

	assert_int_equal(count, 108);
	assert_int_equal(rb_regcmd_pc_amount(104), 53);
	mm_init(&mm, dtype, m, k, n, true);
	mm_place(r, &mm, 0xffff8000u, 0xffff9000u, 0xffffa000u);
	place_words(r, words, count, 0);
	commit(r, 0, RC_ADDR, 104, 1);
	res = run(r, 0);
	expect_done(&res, 1);
	expect_c(&mm, mm.hc);
	if (dtype == RB_DTYPE_FP16)
		expect_c_naive(&mm, mm.hc);
	/* task 0 ran in register group 0: DPU_0, unmasked by 0x300 */
	assert_int_equal(mmio_read(r, 0, RB_REG_PC_INTERRUPT_RAW_STATUS),
			 rb_field_mask(RB_FIELD_PC_INTERRUPT_RAW_STATUS_DPU_0));
	assert_int_equal(mmio_read(r, 0, RB_REG_PC_INTERRUPT_STATUS),
			 rb_field_mask(RB_FIELD_PC_INTERRUPT_STATUS_DPU_0));
	assert_int_equal(rb_field_unpack(RB_FIELD_PC_TASK_STATUS_TASK_COUNTER,
					 mmio_read(r, 0, RB_REG_PC_TASK_STATUS)),
			 1);
	mm_release(&mm);
	rig_free(r);
}

static void test_golden_fp16(void **state)
{
	(void)state;
	run_golden("tests/golden/fp16_4x64x16.hex", RB_DTYPE_FP16, 4, 64, 16);
}

static void test_golden_int8(void **state)
{
	(void)state;
	run_golden("tests/golden/int8_1x32x32.hex", RB_DTYPE_INT8, 1, 32, 32);
}

/* The time of Appendix A's task is the timing model's (timing.h) for what the task
 * asks: 108 regcmd words, A 512, B 2048, C 256 bytes, and 2 channel atoms × 1 kernel
 * group × 16 cycles (4 rows < 16: loading the weights binds, not the MACs). */
static void test_timing_of_task(void **state)
{
	const struct rb_soc_profile *soc = rb_soc_default();
	struct rb_timing_task t = {108, 512, 2048, 256, 32, false};
	struct rb_timing_core tc = {.tasks = &t, .n_tasks = 1};
	struct rb_sim_core_result res;
	struct one o;

	(void)state;
	assert_non_null(soc);
	assert_int_equal(rb_timing_cycles(soc, false, 4, 64, 16), 32);
	rb_timing_run(soc, &tc, 1);
	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	res = one_run(&o);
	expect_done(&res, 1);
	assert_true(tc.elapsed_ns > 0);
	assert_int_equal(res.elapsed_ns, tc.elapsed_ns);
	one_release(&o);
}

/* ---- shapes and precisions ---- */

static void run_shape(enum rb_dtype dtype, enum rb_npu_prec out, uint32_t m, uint32_t k, uint32_t n)
{
	struct one o;
	struct rb_regcmd rc;
	struct rb_npu_task t;
	struct rb_sim_core_result res;

	o.r = rig_new();
	mm_init(&o.mm, dtype, m, k, n, false);
	o.mm.out = out;
	mm_place(o.r, &o.mm, 0x01000000, 0x02000000, 0x03000000);
	t = mm_task(&o.mm);
	rc = emit(&t);
	o.words = place_words(o.r, rc.words, rc.count, 0);
	o.count = rc.count;
	rb_regcmd_release(&rc);
	res = one_run(&o);
	expect_done(&res, 1);
	expect_c(&o.mm, o.mm.hc);
	one_release(&o);
}

/* SURF_STRIDE = W·(H − 4) for any H, negative below 4 (§b.2). */
static void test_odd_m(void **state)
{
	static const uint32_t ms[] = {1, 2, 3, 5, 6, 7, 9};

	(void)state;
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		run_shape(RB_DTYPE_FP16, RB_PREC_FP32, ms[i], 64, 32);
		run_shape(RB_DTYPE_INT8, RB_PREC_INT32, ms[i], 64, 32);
	}
}

static void test_fp16_out(void **state)
{
	(void)state;
	run_shape(RB_DTYPE_FP16, RB_PREC_FP16, 8, 96, 48);
	run_shape(RB_DTYPE_FP16, RB_PREC_FP16, 3, 32, 16);
}

/* Several channel passes, partial row and kernel blocks. */
static void test_bigger_shapes(void **state)
{
	(void)state;
	run_shape(RB_DTYPE_FP16, RB_PREC_FP32, 53, 544, 80);
	run_shape(RB_DTYPE_INT8, RB_PREC_INT32, 50, 288, 96);
	run_shape(RB_DTYPE_FP16, RB_PREC_FP32, 1, 2048, 80);
}

/* ---- chains ---- */

/* Runs `tasks` as one chained job; returns the result. */
static struct rb_sim_core_result run_chain(struct rig *r, const struct rb_npu_task *tasks, size_t n)
{
	struct rb_regcmd rc;
	struct rb_regcmd_layout lay[8];

	rb_regcmd_init(&rc);
	assert_true(n <= 8);
	if (rb_regcmd_build_chain(&rc, tasks, n, RC_ADDR, lay))
		fail_msg("encoder: %s", rb_last_error());
	place_words(r, rc.words, rc.count, 0);
	rb_regcmd_release(&rc);
	commit(r, 0, RC_ADDR, lay[0].regcfg_amount, (uint32_t)n);
	return run(r, 0);
}

/* M split in 3 tasks of 8 rows of one cube (strides from the full height, §b.2), and N
 * split in 3 tasks of 32 kernels (§c "How to split"): the same bits as one task. */
static void test_chain_splits(void **state)
{
	struct rig *r = rig_new();
	struct rb_npu_task tasks[3], whole;
	struct rb_sim_core_result res;
	struct mm mm;

	(void)state;
	mm_init(&mm, RB_DTYPE_FP16, 24, 128, 96, false);
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	whole = mm_task(&mm);
	for (uint32_t i = 0; i < 3; i++) {
		tasks[i] = whole;
		tasks[i].m = 8;
		tasks[i].a_addr = mm.a_addr + i * 8 * 16;
		tasks[i].c_addr = mm.c_addr + i * 8 * 16;
	}
	res = run_chain(r, tasks, 3);
	expect_done(&res, 3);
	expect_c(&mm, mm.hc);
	/* the two register groups alternated: DPU_0 and DPU_1 */
	assert_int_equal(mmio_read(r, 0, RB_REG_PC_INTERRUPT_RAW_STATUS), DPU_IRQS);
	r->n = 3; /* same operands, new program: drop the regcmd buffer */
	free(r->bufs[3].host);
	memset(mm.hc, SENTINEL, c_bytes(&mm));
	for (uint32_t i = 0; i < 3; i++) {
		tasks[i] = whole;
		tasks[i].n = 32;
		tasks[i].b_addr = mm.b_addr + i * 32 * 128 * 2;
		tasks[i].c_addr = mm.c_addr + i * 32 / 4 * 24 * 16;
	}
	res = run_chain(r, tasks, 3);
	expect_done(&res, 3);
	expect_c(&mm, mm.hc);
	mm_release(&mm);
	rig_free(r);
}

/* A body that rewrites only the three addresses (ABR's sparse programming, §a.6), and
 * the last-task tail. */
static size_t sparse_task(uint64_t *w, const struct mm *mm)
{
	size_t n = 0;

	w[n++] = rb_word_reg(RB_REG_CNA_FEATURE_DATA_ADDR, mm->a_addr);
	w[n++] = rb_word_reg(RB_REG_CNA_DCOMP_ADDR0, mm->b_addr);
	w[n++] = rb_word_reg(RB_REG_DPU_DST_BASE_ADDR, mm->c_addr);
	w[n++] = 0; /* filler: body + tail stays even */
	w[n++] = 0; /* tail: last task */
	w[n++] = rb_word_reg(RB_REG_PC_REGISTER_AMOUNTS, 0);
	w[n++] = rb_word(RB_TARGET_SYNC, 0, 0);
	w[n++] = rb_word(RB_TARGET_OP_ENABLE, rb_reg(RB_REG_PC_OPERATION_ENABLE)->offset, 0x0D);
	return n;
}

/* Drops the last buffer of the rig (the program), to place another. */
static void drop_program(struct rig *r)
{
	r->n--;
	free(r->bufs[r->n].host);
}

/* A job of the first `words` words of a chain (whole tasks, the last one's tail
 * pointing on) and then a sparse task for `mm`; committed, not run. body0: the first
 * task's body words (4 if the sparse task is the first). */
static void commit_with_sparse(struct rig *r, const struct rb_regcmd *rc, size_t words,
			       uint32_t body0, uint32_t tasks, const struct mm *mm)
{
	uint64_t w[400];
	size_t n = words;

	memcpy(w, rc->words, n * 8);
	if (n) {
		w[n - 4] = rb_word_reg(RB_REG_PC_BASE_ADDRESS, RC_ADDR + (uint32_t)n * 8);
		w[n - 3] = rb_word_reg(RB_REG_PC_REGISTER_AMOUNTS, rb_regcmd_pc_amount(4));
	}
	n += sparse_task(w + n, mm);
	place_words(r, w, n, 0);
	commit(r, 0, RC_ADDR, body0, tasks);
}

/* Register state persists (§a.4, §a.6): tasks 0 and 1 are complete programs, task 2
 * writes only addresses and lands in group 0 again, where task 0's state still is. The
 * next job's sparse task lands in group 1 (task 1's state); after a reset it finds an
 * empty cube. A sparse task right after one full task lands in the empty group 1. */
static void test_register_persistence(void **state)
{
	struct rig *r = rig_new();
	struct mm mm[4];
	struct rb_npu_task t[2];
	struct rb_regcmd rc;
	struct rb_regcmd_layout lay[2];
	struct rb_sim_core_result res;

	(void)state;
	for (uint32_t i = 0; i < 4; i++) {
		mm_init(&mm[i], RB_DTYPE_FP16, 8, 64, 32, false);
		mm_place(r, &mm[i], 0x01000000 + i * 0x100000, 0x02000000 + i * 0x100000,
			 0x03000000 + i * 0x100000);
	}
	t[0] = mm_task(&mm[0]);
	t[1] = mm_task(&mm[1]);
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, t, 2, RC_ADDR, lay), 0);
	commit_with_sparse(r, &rc, rc.count, lay[0].regcfg_amount, 3, &mm[2]);
	res = run(r, 0);
	expect_done(&res, 3);
	for (int i = 0; i < 3; i++)
		expect_c(&mm[i], mm[i].hc);

	drop_program(r); /* the next job: one sparse task, register group 1 */
	commit_with_sparse(r, &rc, 0, 4, 1, &mm[3]);
	res = run(r, 0);
	expect_done(&res, 1);
	expect_c(&mm[3], mm[3].hc);

	rb_sim_npu_reset(r->npu, 0); /* after a reset nothing is left */
	commit(r, 0, RC_ADDR, 4, 1);
	res = run(r, 0);
	expect_stop(&res, RB_SIM_HANG, "task 0: CNA.DATA_SIZE0.DATAIN_WIDTH is 0");

	rb_sim_npu_reset(r->npu, 0);
	drop_program(r);
	commit_with_sparse(r, &rc, lay[1].offset, lay[0].regcfg_amount, 2, &mm[2]);
	res = run(r, 0);
	expect_stop(&res, RB_SIM_HANG, "task 1: CNA.DATA_SIZE0.DATAIN_WIDTH is 0");
	assert_int_equal(res.tasks_done, 1);
	rb_regcmd_release(&rc);
	for (int i = 0; i < 4; i++)
		mm_release(&mm[i]);
	rig_free(r);
}

/* ---- determinism ---- */

static void run_threads(int threads, bool portable, uint8_t *out, size_t size)
{
	struct rig *r = rig_new_cfg(threads, 1);
	struct rb_npu_task t;
	struct rb_regcmd rc;
	struct rb_sim_core_result res;
	struct mm mm;

	rng_state = 77;
	mm_init(&mm, RB_DTYPE_FP16, 61, 288, 80, false);
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	t = mm_task(&mm);
	rc = emit(&t);
	place_words(r, rc.words, rc.count, 0);
	commit(r, 0, RC_ADDR, (uint32_t)rc.count - RB_REGCMD_TAIL_WORDS, 1);
	assert_int_equal(rb_sim_gemm_force_impl(portable ? "portable" : NULL), 0);
	res = run(r, 0);
	assert_int_equal(rb_sim_gemm_force_impl(NULL), 0);
	expect_done(&res, 1);
	expect_c(&mm, mm.hc);
	assert_int_equal(c_bytes(&mm), size);
	memcpy(out, mm.hc, size);
	rb_regcmd_release(&rc);
	mm_release(&mm);
	rig_free(r);
}

static void test_threads_bit_exact(void **state)
{
	size_t size = 80 / 4 * 61 * 16;
	uint8_t *one = malloc(size), *many = malloc(size), *port = malloc(size);

	(void)state;
	run_threads(1, false, one, size);
	run_threads(5, false, many, size);
	run_threads(3, true, port, size);
	assert_memory_equal(one, many, size);
	assert_memory_equal(one, port, size);
	free(one);
	free(many);
	free(port);
}

/* ---- faults ---- */

static void expect_untouched(const struct mm *mm)
{
	for (uint64_t i = 0; i < c_bytes(mm); i++)
		if (mm->hc[i] != SENTINEL)
			fail_msg("output byte %llu written", (unsigned long long)i);
}

static void test_fault_banks(void **state)
{
	struct one o;
	struct rb_sim_core_result res;

	(void)state;
	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	patch(o.words, 0, o.count, RB_FIELD_CNA_CBUF_CON0_DATA_BANK, 8);
	patch(o.words, 0, o.count, RB_FIELD_CNA_CBUF_CON0_WEIGHT_BANK, 6);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG, "task 0: CNA.CBUF_CON0: DATA_BANK 8 + WEIGHT_BANK 6");
	assert_int_equal(res.tasks_done, 0);
	assert_int_equal(mmio_read(o.r, 0, RB_REG_PC_INTERRUPT_RAW_STATUS), 0);
	expect_untouched(&o.mm);
	/* the core stays stopped until reset */
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG, "reset it");
	rb_sim_npu_reset(o.r->npu, 0);
	patch(o.words, 0, o.count, RB_FIELD_CNA_CBUF_CON0_DATA_BANK, 1);
	patch(o.words, 0, o.count, RB_FIELD_CNA_CBUF_CON0_WEIGHT_BANK, 11);
	res = one_run(&o);
	expect_done(&res, 1);
	one_release(&o);
}

/* 64 rows × 1024 fp16 channels = 128 KiB = 4 banks (§c). */
static void test_fault_feature_too_big(void **state)
{
	struct one o;
	struct rb_sim_core_result res;

	(void)state;
	one_setup(&o, RB_DTYPE_FP16, 64, 1024, 16, true);
	patch(o.words, 0, o.count, RB_FIELD_CNA_CBUF_CON0_DATA_BANK, 3);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG, "task 0: CNA.CBUF_CON0.DATA_BANK: the feature tile");
	expect_untouched(&o.mm);
	one_release(&o);
}

/* Weights bigger than the banks stream if one kernel fits (MTX, §c); else the core
 * stops. */
static void test_weights_streaming(void **state)
{
	struct one o;
	struct rb_sim_core_result res;

	(void)state;
	one_setup(&o, RB_DTYPE_FP16, 4, 1024, 256, false); /* 512 KiB of weights, 11 banks */
	res = one_run(&o);
	expect_done(&res, 1);
	expect_c(&o.mm, o.mm.hc);
	one_release(&o);

	one_setup(&o, RB_DTYPE_FP16, 1, 16384, 16, true); /* 32 KiB per kernel */
	patch(o.words, 0, o.count, RB_FIELD_CNA_CBUF_CON0_WEIGHT_BANK, 0);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG, "task 0: CNA.CBUF_CON0.WEIGHT_BANK: one kernel's weights");
	expect_untouched(&o.mm);
	one_release(&o);
}

/* Each DMA outside a buffer: IOMMU fault with the DMA error interrupt. */
static void iommu_case(enum rb_field_id id, uint32_t value, const char *what, bool write)
{
	struct one o;
	struct rb_sim_core_result res;

	one_setup(&o, RB_DTYPE_FP16, 8, 64, 32, true);
	if (id == RB_FIELD_PC_BASE_ADDRESS_PC_SOURCE_ADDR) {
		commit(o.r, 0, value, (uint32_t)o.count - RB_REGCMD_TAIL_WORDS, 1);
		res = run(o.r, 0);
	} else {
		patch(o.words, 0, o.count, id, value);
		res = one_run(&o);
	}
	expect_stop(&res, RB_SIM_IOMMU_FAULT, what);
	assert_int_equal(mmio_read(o.r, 0, RB_REG_PC_INTERRUPT_RAW_STATUS),
			 rb_field_mask(write ? RB_FIELD_PC_INTERRUPT_RAW_STATUS_DMA_WRITE_ERROR
					     : RB_FIELD_PC_INTERRUPT_RAW_STATUS_DMA_READ_ERROR));
	expect_untouched(&o.mm);
	one_release(&o);
}

static void test_fault_iommu(void **state)
{
	(void)state;
	/* the output's last sub-surface runs past its buffer */
	iommu_case(RB_FIELD_DPU_DST_BASE_ADDR_DST_BASE_ADDR, 0x03000010,
		   "task 0: DPU.DST_BASE_ADDR: output channels 28-31", true);
	iommu_case(RB_FIELD_CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR, 0x00ff0000,
		   "task 0: CNA.FEATURE_DATA_ADDR: channel group 0", false);
	iommu_case(RB_FIELD_CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0, 0x02000100,
		   "task 0: CNA.DCOMP_ADDR0: the weights", false);
	iommu_case(RB_FIELD_PC_BASE_ADDRESS_PC_SOURCE_ADDR, 0x00200000,
		   "task 0: PC.BASE_ADDRESS: the regcmd fetch of 108 words", false);
}

static void test_fault_chain(void **state)
{
	struct rig *r = rig_new();
	struct rb_npu_task t[2];
	struct rb_regcmd rc;
	struct rb_regcmd_layout lay[2];
	struct rb_sim_core_result res;
	uint64_t *w;
	struct mm mm;

	(void)state;
	mm_init(&mm, RB_DTYPE_FP16, 8, 64, 32, true);
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	t[0] = t[1] = mm_task(&mm);
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, t, 2, RC_ADDR, lay), 0);
	w = place_words(r, rc.words, rc.count, 0);
	/* more tasks than the chain has */
	commit(r, 0, RC_ADDR, lay[0].regcfg_amount, 3);
	res = run(r, 0);
	expect_stop(&res, RB_SIM_HANG, "task 1: the chain ends after 2 of 3 tasks");
	assert_int_equal(res.tasks_done, 2);
	assert_int_equal(rb_field_unpack(RB_FIELD_PC_TASK_STATUS_TASK_COUNTER,
					 mmio_read(r, 0, RB_REG_PC_TASK_STATUS)),
			 2);
	/* task 0's tail with an amount but its address word replaced by filler (RUS) */
	rb_sim_npu_reset(r->npu, 0);
	w[lay[0].offset + lay[0].regcfg_amount] = 0;
	commit(r, 0, RC_ADDR, lay[0].regcfg_amount, 2);
	res = run(r, 0);
	expect_stop(&res, RB_SIM_HANG, "task 0: chain has an amount but no address");
	assert_int_equal(res.tasks_done, 1);
	rb_regcmd_release(&rc);
	mm_release(&mm);
	rig_free(r);
}

/* §a.6: DPU_RDMA enabled needs MRDMA disabled; the mainline variant does that. */
static void test_fault_dpu_rdma(void **state)
{
	struct one o;
	struct rb_sim_core_result res;
	uint32_t op = 0;

	(void)state;
	one_setup(&o, RB_DTYPE_FP16, 8, 64, 32, true);
	op = pack(RB_FIELD_GLOBAL_OPERATION_ENABLE_CNA, 1, op);
	op = pack(RB_FIELD_GLOBAL_OPERATION_ENABLE_CORE, 1, op);
	op = pack(RB_FIELD_GLOBAL_OPERATION_ENABLE_DPU, 1, op);
	op = pack(RB_FIELD_GLOBAL_OPERATION_ENABLE_DPU_RDMA, 1, op);
	o.words[o.count - 1] =
	    rb_word(RB_TARGET_OP_ENABLE, rb_reg(RB_REG_PC_OPERATION_ENABLE)->offset, op);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG, "DPU_RDMA.FEATURE_MODE_CFG.MRDMA_DISABLE is 0");
	expect_untouched(&o.mm);
	one_release(&o);
}

static void test_mainline_variant(void **state)
{
	struct rig *r = rig_new();
	struct rb_npu_task t;
	struct rb_regcmd rc;
	struct rb_sim_core_result res;
	struct mm mm;

	(void)state;
	mm_init(&mm, RB_DTYPE_FP16, 8, 64, 32, false);
	mm.out = RB_PREC_FP16;
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	t = mm_task(&mm);
	t.mainline = true;
	rc = emit(&t);
	place_words(r, rc.words, rc.count, 0);
	commit(r, 0, RC_ADDR, (uint32_t)rc.count - RB_REGCMD_TAIL_WORDS, 1);
	res = run(r, 0);
	expect_done(&res, 1);
	expect_c(&mm, mm.hc);
	rb_regcmd_release(&rc);
	mm_release(&mm);
	rig_free(r);
}

/* §b.4: SIZE_E + 1 sub-surfaces of each KB group are written, the rest stays as it was
 * (RUS's int32 failure mode with SIZE_E 3). */
static void size_e_case(enum rb_dtype dtype, unsigned size_e, unsigned kb, unsigned c2)
{
	struct one o;
	struct rb_sim_core_result res;

	one_setup(&o, dtype, 4, 64, 64, true);
	patch(o.words, 0, o.count, RB_FIELD_DPU_BS_OW_CFG_SIZE_E_0, size_e);
	patch(o.words, 0, o.count, RB_FIELD_DPU_BS_OW_CFG_SIZE_E_1, size_e);
	patch(o.words, 0, o.count, RB_FIELD_DPU_BS_OW_CFG_SIZE_E_2, size_e);
	res = one_run(&o);
	expect_done(&res, 1);
	for (uint32_t m = 0; m < 4; m++)
		for (uint32_t n = 0; n < 64; n++) {
			bool written = n % kb / c2 <= size_e;
			uint32_t got = c_at(&o.mm, o.mm.hc, m, n);

			if (written && got != want_bits(&o.mm, m, n))
				fail_msg("C[%u][%u] = 0x%x, want 0x%x", m, n, got,
					 want_bits(&o.mm, m, n));
			if (!written && got != 0xA5A5A5A5u)
				fail_msg("C[%u][%u] = 0x%x written past SIZE_E %u", m, n, got,
					 size_e);
		}
	one_release(&o);
}

static void test_wrong_size_e(void **state)
{
	(void)state;
	size_e_case(RB_DTYPE_FP16, 1, 16, 4);
	size_e_case(RB_DTYPE_INT8, 3, 32, 4);
}

static void test_fault_decode(void **state)
{
	struct one o;
	struct rb_sim_core_result res;

	(void)state;
	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	o.words[3] = rb_word(0x0301, rb_word_offset(o.words[3]), rb_word_value(o.words[3]));
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG, "task 0: word 3: unknown target 0x0301");
	expect_untouched(&o.mm);
	one_release(&o);

	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	o.words[3] =
	    rb_word(rb_block(RB_BLOCK_CNA)->target, rb_reg(RB_REG_CORE_MISC_CFG)->offset, 0);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG,
		    "task 0: word 3: target 0x0201 writes offset 0x3010, "
		    "outside the CNA block");
	one_release(&o);

	/* the fetch amount covers two words more: op-enable is not last */
	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	commit(o.r, 0, RC_ADDR, (uint32_t)o.count - RB_REGCMD_TAIL_WORDS + 2, 1);
	res = run(o.r, 0);
	expect_stop(&res, RB_SIM_HANG, "task 0: word 107 of 110: op-enable 0xd is not the last");
	one_release(&o);
}

static void test_fault_cube(void **state)
{
	struct one o;
	struct rb_sim_core_result res;

	(void)state;
	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	patch(o.words, 0, o.count, RB_FIELD_CNA_DATA_SIZE0_DATAIN_HEIGHT, 0);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG, "task 0: CNA.DATA_SIZE0.DATAIN_HEIGHT is 0");
	one_release(&o);

	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	patch(o.words, 0, o.count, RB_FIELD_CORE_MISC_CFG_PROC_PRECISION, RB_PREC_INT8);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG,
		    "CORE.MISC_CFG.PROC_PRECISION is int8 but "
		    "CNA.CONV_CON1.IN_PRECISION is fp16");
	one_release(&o);

	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	patch(o.words, 0, o.count, RB_FIELD_DPU_OUT_CVT_SCALE_FP32TOFP16_EN, 1);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG,
		    "DPU.DATA_FORMAT.OUT_PRECISION is fp32 with "
		    "DPU.OUT_CVT_SCALE.FP32TOFP16_EN 1");
	one_release(&o);

	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	patch(o.words, 0, o.count, RB_FIELD_DPU_DATA_CUBE_HEIGHT_HEIGHT, 2);
	res = one_run(&o);
	expect_stop(&res, RB_SIM_HANG,
		    "DPU.DATA_CUBE_HEIGHT.HEIGHT + 1 is 3 but "
		    "CNA.DATA_SIZE0.DATAIN_HEIGHT is 4");
	one_release(&o);
}

/* §c: DATA_REUSE keeps the previous task's features within a job. */
static void test_data_reuse(void **state)
{
	struct rig *r = rig_new();
	struct rb_npu_task t[2];
	struct rb_sim_core_result res;
	struct mm mm;

	(void)state;
	mm_init(&mm, RB_DTYPE_FP16, 8, 64, 64, false);
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	t[0] = t[1] = mm_task(&mm);
	t[0].n = t[1].n = 32;
	t[1].b_addr += 32 * 64 * 2;
	t[1].c_addr += 32 / 4 * 8 * 16;
	t[1].a_addr = 0x7000000; /* not mapped: the features come from the CBUF */
	t[1].data_reuse = true;
	res = run_chain(r, t, 2);
	expect_done(&res, 2);
	expect_c(&mm, mm.hc);
	/* the first task of a job finds nothing to reuse */
	rb_sim_npu_reset(r->npu, 0);
	r->n--;
	free(r->bufs[r->n].host);
	t[0].data_reuse = true;
	res = run_chain(r, t, 2);
	expect_stop(&res, RB_SIM_HANG, "task 0: CNA.CBUF_CON0.DATA_REUSE");
	mm_release(&mm);
	rig_free(r);
}

/* 8 rows in two tasks of 4 rows (one cube, §b.2) with the same 32 kernels. */
static void two_row_tasks(const struct mm *mm, struct rb_npu_task t[2])
{
	t[0] = t[1] = mm_task(mm);
	t[0].m = t[1].m = 4;
	t[1].a_addr += 4 * 16;
	t[1].c_addr += 4 * 16;
}

/* §c WEIGHT_REUSE: the second task takes the weights the first left in the CBUF, so
 * its weight address is never read, and the timing model counts no weight bytes. */
static void test_weight_reuse(void **state)
{
	struct rig *r = rig_new();
	struct rb_npu_task t[2];
	struct rb_sim_core_result res;
	uint64_t plain_ns;
	struct mm mm;

	(void)state;
	mm_init(&mm, RB_DTYPE_FP16, 8, 2048, 32, false);
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	two_row_tasks(&mm, t);
	res = run_chain(r, t, 2);
	expect_done(&res, 2);
	expect_c(&mm, mm.hc);
	plain_ns = res.elapsed_ns;
	drop_program(r);
	memset(mm.hc, SENTINEL, c_bytes(&mm));
	t[1].b_addr = 0x7000000; /* not mapped: the weights come from the CBUF */
	t[1].weight_reuse = true;
	res = run_chain(r, t, 2);
	expect_done(&res, 2);
	expect_c(&mm, mm.hc);
	if (res.elapsed_ns >= plain_ns)
		fail_msg("reuse %llu ns, not less than %llu ns without",
			 (unsigned long long)res.elapsed_ns, (unsigned long long)plain_ns);
	mm_release(&mm);
	rig_free(r);
}

/* A task that claims WEIGHT_REUSE while its own weights differ computes from the stale
 * CBUF, as the silicon would (the bit skips the DMA, nothing compares addresses): here
 * its weight address holds zeros, yet its rows come out with the first task's weights.
 * A claim of another shape stops the core: what the silicon computes then is unknown. */
static void test_weight_reuse_stale(void **state)
{
	struct rig *r = rig_new();
	struct rb_npu_task t[2];
	struct rb_sim_core_result res;
	uint8_t *zeros;
	struct mm mm;

	(void)state;
	mm_init(&mm, RB_DTYPE_FP16, 8, 64, 32, true);
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	zeros = rig_alloc(r, 0x04000000, b_bytes(&mm));
	memset(zeros, 0, b_bytes(&mm));
	two_row_tasks(&mm, t);
	t[1].b_addr = 0x04000000;
	t[1].weight_reuse = true;
	res = run_chain(r, t, 2);
	expect_done(&res, 2);
	expect_c(&mm, mm.hc); /* rows 4..7 too: the stale weights, not the zeros */
	drop_program(r);
	/* without the bit the zeros are read: the address matters */
	t[1].weight_reuse = false;
	res = run_chain(r, t, 2);
	expect_done(&res, 2);
	assert_int_equal(c_at(&mm, mm.hc, 4, 0), 0);
	drop_program(r);
	/* another shape (16 kernels) cannot come from the CBUF */
	t[1].weight_reuse = true;
	t[1].n = 16;
	res = run_chain(r, t, 2);
	expect_stop(&res, RB_SIM_HANG, "task 1: CNA.CBUF_CON0.WEIGHT_REUSE");
	mm_release(&mm);
	rig_free(r);
}

/* The CBUF is SRAM: a kick does not empty it (the mainline kernel kicks each task of a
 * job on its own, and Mesa and rocket-userspace reuse weights across those kicks, §c);
 * a core reset does. */
static void test_weight_reuse_across_kicks(void **state)
{
	struct rig *r = rig_new();
	struct rb_npu_task t[2];
	struct rb_sim_core_result res;
	struct mm mm;

	(void)state;
	mm_init(&mm, RB_DTYPE_INT8, 8, 64, 32, false);
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	two_row_tasks(&mm, t);
	t[1].b_addr = 0x7000000;
	t[1].weight_reuse = true;
	res = run_chain(r, &t[0], 1);
	expect_done(&res, 1);
	drop_program(r);
	res = run_chain(r, &t[1], 1);
	expect_done(&res, 1);
	expect_c(&mm, mm.hc);
	drop_program(r);
	rb_sim_npu_reset(r->npu, 0);
	res = run_chain(r, &t[1], 1);
	expect_stop(&res, RB_SIM_HANG, "task 0: CNA.CBUF_CON0.WEIGHT_REUSE");
	mm_release(&mm);
	rig_free(r);
}

/* TASK_DMA_BASE_ADDR is added to every data address, not to the regcmd's (§a.2). */
/* The weights hw_gemm.c keeps converted for WEIGHT_REUSE: a task without the bit
 * reads the weights again, even at the same address of the same shape; a reuse under
 * another kernel family (another tile layout) converts them again. */
static void test_weight_cache(void **state)
{
	static const char *const fam[] = {"portable", "avx2", "avx512"};
	struct rig *r = rig_new();
	struct rb_npu_task t[2];
	struct rb_sim_core_result res;
	struct mm mm;

	(void)state;
	mm_init(&mm, RB_DTYPE_FP16, 16, 288, 48, false);
	mm_place(r, &mm, 0x01000000, 0x02000000, 0x03000000);
	two_row_tasks(&mm, t);
	t[0].m = t[1].m = 8; /* more rows than the direct kernels take */
	t[1].a_addr = t[0].a_addr + 8 * 16;
	t[1].c_addr = t[0].c_addr + 8 * 16;
	t[1].weight_reuse = true;
	for (int round = 0; round < 2; round++) {
		if (round) { /* new numbers in the same buffers */
			mm_fill(&mm, false);
			pack_a(&mm, mm.ha);
			pack_b(&mm, mm.hb);
		}
		memset(mm.hc, SENTINEL, c_bytes(&mm));
		res = run_chain(r, t, 2);
		expect_done(&res, 2);
		expect_c(&mm, mm.hc);
		drop_program(r);
	}
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 3; j++) {
			if (rb_sim_gemm_force_impl(fam[i]) || rb_sim_gemm_force_impl(fam[j]))
				continue; /* a family this CPU lacks */
			memset(mm.hc, SENTINEL, c_bytes(&mm));
			assert_int_equal(rb_sim_gemm_force_impl(fam[i]), 0);
			res = run_chain(r, &t[0], 1);
			expect_done(&res, 1);
			drop_program(r);
			assert_int_equal(rb_sim_gemm_force_impl(fam[j]), 0);
			res = run_chain(r, &t[1], 1);
			expect_done(&res, 1);
			drop_program(r);
			expect_c(&mm, mm.hc);
		}
	assert_int_equal(rb_sim_gemm_force_impl(NULL), 0);
	mm_release(&mm);
	rig_free(r);
}

static void test_dma_base(void **state)
{
	struct rig *r = rig_new();
	struct rb_npu_task t;
	struct rb_regcmd rc;
	struct rb_sim_core_result res;
	struct mm mm;
	uint32_t base = 0x04000000;

	(void)state;
	mm_init(&mm, RB_DTYPE_INT8, 5, 64, 32, false);
	mm_place(r, &mm, base + 0x1000, base + 0x10000, base + 0x20000);
	t = mm_task(&mm);
	t.a_addr -= base;
	t.b_addr -= base;
	t.c_addr -= base;
	rc = emit(&t);
	place_words(r, rc.words, rc.count, 0);
	commit_base(r, 0, RC_ADDR, (uint32_t)rc.count - RB_REGCMD_TAIL_WORDS, 1, base);
	res = run(r, 0);
	expect_done(&res, 1);
	expect_c(&mm, mm.hc);
	rb_regcmd_release(&rc);
	mm_release(&mm);
	rig_free(r);
}

/* DATAIN_CHANNEL `used` below K = 64: the channels past it take no part, even when the
 * padding holds NaN (rows 1 and 8: with and without a single panel of rows). 60 is not
 * a multiple of 8 (the tile kernels); 56 is, but ends inside a 32-channel block (the
 * direct kernels' last, partial block). */
static void channels_case(uint32_t m, uint32_t used)
{
	struct one o;
	struct rb_sim_core_result res;
	uint16_t nan = 0x7e00;

	one_setup(&o, RB_DTYPE_FP16, m, 64, 32, false);
	for (uint32_t k = used; k < 64; k++) {
		for (uint32_t row = 0; row < m; row++)
			memcpy(o.mm.ha + ((k / 8) * m * 8 + row * 8 + k % 8) * 2, &nan, 2);
		for (uint32_t n = 0; n < 32; n++)
			memcpy(o.mm.hb +
				   ((n / 16) * 16 * 64 + (k / 32) * 512 + (n % 16) * 32 + k % 32) *
				       2,
			       &nan, 2);
	}
	patch(o.words, 0, o.count, RB_FIELD_CNA_DATA_SIZE1_DATAIN_CHANNEL, used);
	res = one_run(&o);
	expect_done(&res, 1);
	for (uint32_t row = 0; row < m; row++)
		for (uint32_t n = 0; n < 32; n++) {
			float want = ordered_dot_k(&o.mm, row, n, used);
			uint32_t bits = c_at(&o.mm, o.mm.hc, row, n), wbits;

			memcpy(&wbits, &want, 4);
			if (bits != wbits)
				fail_msg("C[%u][%u] = 0x%x, want 0x%x", row, n, bits, wbits);
		}
	one_release(&o);
}

static void test_partial_channels(void **state)
{
	(void)state;
	channels_case(1, 60);
	channels_case(8, 60);
	channels_case(1, 56);
	channels_case(3, 56);
}

/* ---- kernel families: every one hw_gemm.c has, the same bits ---- */

/* Kernels 0..kernels-1 of an N = 32 matmul (WEIGHT_KERNELS and the cube patched): an
 * odd count leaves the AVX-512 kernel's last pair half used. */
static void kernels_case(enum rb_dtype dtype, uint32_t m, uint32_t kernels)
{
	struct one o;
	struct rb_sim_core_result res;

	one_setup(&o, dtype, m, 96, 32, false);
	patch(o.words, 0, o.count, RB_FIELD_CNA_WEIGHT_SIZE2_WEIGHT_KERNELS, kernels);
	patch(o.words, 0, o.count, RB_FIELD_CORE_DATAOUT_SIZE_1_DATAOUT_CHANNEL, kernels - 1);
	patch(o.words, 0, o.count, RB_FIELD_DPU_DATA_CUBE_CHANNEL_CHANNEL, kernels - 1);
	res = one_run(&o);
	expect_done(&res, 1);
	for (uint32_t row = 0; row < m; row++)
		for (uint32_t n = 0; n < kernels; n++)
			if (c_at(&o.mm, o.mm.hc, row, n) != want_bits(&o.mm, row, n))
				fail_msg("%u kernels: C[%u][%u] = 0x%x, want 0x%x", kernels, row, n,
					 c_at(&o.mm, o.mm.hc, row, n), want_bits(&o.mm, row, n));
	one_release(&o);
}

/* The shapes that reach each tail: rows of a tile (M = 1..3 take the direct kernels,
 * whose strips are 4 kernels on AVX2 and 16 on AVX-512, half of an int8 group),
 * of an item (96 rows), kernels of a tile and of an item (64), channels of a pass
 * (256) and of a plane (DATAIN_CHANNEL 60), an odd kernel count; fp16 in with fp32 and
 * fp16 out, int8 in with int32 out. Each against the documented order, bit for bit. */
static void family_case(const char *name)
{
	static const uint32_t f16[][3] = {{1, 64, 32},  {2, 96, 48},  {3, 544, 80}, {4, 64, 16},
					  {7, 288, 48}, {13, 96, 32}, {97, 320, 80}};
	static const uint32_t i8[][3] = {
	    {1, 64, 32}, {2, 96, 96}, {3, 544, 64}, {7, 96, 32}, {97, 320, 96}};
	int err = rb_sim_gemm_force_impl(name);

	if (err == -ENOTSUP) {
		print_message("# %s kernels: not on this CPU or build\n", name);
		skip();
	}
	assert_int_equal(err, 0);
	assert_string_equal(rb_sim_gemm_impl(), name);
	for (size_t i = 0; i < sizeof(f16) / sizeof(f16[0]); i++)
		run_shape(RB_DTYPE_FP16, RB_PREC_FP32, f16[i][0], f16[i][1], f16[i][2]);
	for (size_t i = 0; i < sizeof(i8) / sizeof(i8[0]); i++)
		run_shape(RB_DTYPE_INT8, RB_PREC_INT32, i8[i][0], i8[i][1], i8[i][2]);
	run_shape(RB_DTYPE_FP16, RB_PREC_FP16, 5, 96, 48);
	run_shape(RB_DTYPE_FP16, RB_PREC_FP16, 1, 64, 16);
	channels_case(1, 60);
	channels_case(8, 60);
	channels_case(1, 56);
	channels_case(3, 56);
	kernels_case(RB_DTYPE_FP16, 1, 29);
	kernels_case(RB_DTYPE_FP16, 3, 29);
	kernels_case(RB_DTYPE_FP16, 7, 29);
	kernels_case(RB_DTYPE_INT8, 2, 31);
	kernels_case(RB_DTYPE_INT8, 7, 31);
	assert_int_equal(rb_sim_gemm_force_impl(NULL), 0);
}

static void test_family_portable(void **state)
{
	(void)state;
	family_case("portable");
}

static void test_family_avx2(void **state)
{
	(void)state;
	family_case("avx2");
}

static void test_family_avx512(void **state)
{
	(void)state;
	family_case("avx512");
}

static void test_family_names(void **state)
{
	(void)state;
	assert_int_equal(rb_sim_gemm_force_impl("no-such-kernels"), -EINVAL);
	assert_int_equal(rb_sim_gemm_force_impl("portable"), 0);
	assert_string_equal(rb_sim_gemm_impl(), "portable");
	assert_int_equal(rb_sim_gemm_force_impl(NULL), 0);
#if defined(__x86_64__)
	/* the CPUs this runs on have AVX2 at least: the automatic choice is not portable */
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		assert_string_not_equal(rb_sim_gemm_impl(), "portable");
	if (__builtin_cpu_supports("avx512f"))
		assert_string_equal(rb_sim_gemm_impl(), "avx512");
#endif
}

/* ---- MMIO ---- */

static void test_mmio(void **state)
{
	struct one o;
	struct rb_sim_core_result res;
	uint32_t sp;

	(void)state;
	one_setup(&o, RB_DTYPE_FP16, 4, 64, 16, true);
	assert_int_equal(mmio_read(o.r, 0, RB_REG_PC_INTERRUPT_MASK), 0x1ffff);
	assert_int_equal(mmio_read(o.r, 0, RB_REG_PC_VERSION) +
			     (mmio_read(o.r, 0, RB_REG_PC_VERSION_NUM) & 0xffff),
			 0x46495245);
	res = one_run(&o);
	expect_done(&res, 1);
	/* after one task the CNA's pointer and executer moved to group 1 */
	sp = mmio_read(o.r, 0, RB_REG_CNA_S_POINTER);
	assert_int_equal(rb_field_unpack(RB_FIELD_CNA_S_POINTER_POINTER, sp), 1);
	assert_int_equal(rb_field_unpack(RB_FIELD_CNA_S_POINTER_EXECUTER, sp), 1);
	assert_int_equal(sp & 0xE, 0xE);
	/* a masked interrupt stays in RAW_STATUS only; INT_CLEAR clears it */
	mmio(o.r, 0, RB_REG_PC_INTERRUPT_MASK, rb_field_mask(RB_FIELD_PC_INTERRUPT_MASK_DPU_1));
	assert_int_equal(mmio_read(o.r, 0, RB_REG_PC_INTERRUPT_STATUS), 0);
	mmio(o.r, 0, RB_REG_PC_INTERRUPT_CLEAR, 0x1ffff);
	assert_int_equal(mmio_read(o.r, 0, RB_REG_PC_INTERRUPT_RAW_STATUS), 0);
	/* registers read back from the pointer's group: group 1 is still empty */
	assert_int_equal(mmio_read(o.r, 0, RB_REG_CNA_DATA_SIZE0), 0);
	mmio(o.r, 0, RB_REG_CNA_S_POINTER, rb_field_mask(RB_FIELD_CNA_S_POINTER_POINTER_PP_CLEAR));
	assert_int_equal(mmio_read(o.r, 0, RB_REG_CNA_DATA_SIZE0), (1u << 16) | 4);
	rb_sim_npu_reset(o.r->npu, 0);
	assert_int_equal(mmio_read(o.r, 0, RB_REG_CNA_DATA_SIZE0), 0);
	/* slave mode (PC_SEL = 1) starts nothing */
	mmio(o.r, 0, RB_REG_PC_BASE_ADDRESS, 1);
	mmio(o.r, 0, RB_REG_PC_OPERATION_ENABLE, 1);
	res = run(o.r, 0);
	assert_int_equal(res.status, RB_SIM_IDLE);
	one_release(&o);
}

/* Two cores, two jobs, one run. */
static void test_two_cores(void **state)
{
	struct rig *r = rig_new_cfg(2, 3);
	struct rb_npu_task t0, t1;
	struct rb_regcmd rc0, rc1;
	struct rb_sim_core_result res[RB_SIM_MAX_CORES];
	struct mm a, b;
	uint64_t *w;

	(void)state;
	mm_init(&a, RB_DTYPE_FP16, 8, 64, 32, false);
	mm_init(&b, RB_DTYPE_INT8, 5, 96, 64, false);
	mm_place(r, &a, 0x01000000, 0x02000000, 0x03000000);
	mm_place(r, &b, 0x04000000, 0x05000000, 0x06000000);
	t0 = mm_task(&a);
	t1 = mm_task(&b);
	rc0 = emit(&t0);
	rc1 = emit(&t1);
	w = (uint64_t *)(void *)rig_alloc(r, 0x08000000, 4096);
	memcpy(w, rc0.words, rc0.count * 8);
	memcpy(w + 256, rc1.words, rc1.count * 8);
	commit(r, 0, 0x08000000, (uint32_t)rc0.count - 4, 1);
	commit(r, 2, 0x08000000 + 256 * 8, (uint32_t)rc1.count - 4, 1);
	assert_int_equal(rb_sim_npu_run(r->npu, 0x7, res), 0);
	expect_done(&res[0], 1);
	assert_int_equal(res[1].status, RB_SIM_IDLE);
	expect_done(&res[2], 1);
	expect_c(&a, a.hc);
	expect_c(&b, b.hc);
	assert_int_equal(rb_sim_npu_run(r->npu, 0x8, res), -22);
	rb_regcmd_release(&rc0);
	rb_regcmd_release(&rc1);
	mm_release(&a);
	mm_release(&b);
	rig_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_golden_fp16),
	    cmocka_unit_test(test_golden_int8),
	    cmocka_unit_test(test_timing_of_task),
	    cmocka_unit_test(test_odd_m),
	    cmocka_unit_test(test_fp16_out),
	    cmocka_unit_test(test_bigger_shapes),
	    cmocka_unit_test(test_chain_splits),
	    cmocka_unit_test(test_register_persistence),
	    cmocka_unit_test(test_threads_bit_exact),
	    cmocka_unit_test(test_family_portable),
	    cmocka_unit_test(test_family_avx2),
	    cmocka_unit_test(test_family_avx512),
	    cmocka_unit_test(test_family_names),
	    cmocka_unit_test(test_fault_banks),
	    cmocka_unit_test(test_fault_feature_too_big),
	    cmocka_unit_test(test_weights_streaming),
	    cmocka_unit_test(test_fault_iommu),
	    cmocka_unit_test(test_fault_chain),
	    cmocka_unit_test(test_fault_dpu_rdma),
	    cmocka_unit_test(test_mainline_variant),
	    cmocka_unit_test(test_wrong_size_e),
	    cmocka_unit_test(test_fault_decode),
	    cmocka_unit_test(test_fault_cube),
	    cmocka_unit_test(test_data_reuse),
	    cmocka_unit_test(test_weight_reuse),
	    cmocka_unit_test(test_weight_reuse_stale),
	    cmocka_unit_test(test_weight_reuse_across_kicks),
	    cmocka_unit_test(test_weight_cache),
	    cmocka_unit_test(test_dma_base),
	    cmocka_unit_test(test_partial_channels),
	    cmocka_unit_test(test_mmio),
	    cmocka_unit_test(test_two_cores),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
