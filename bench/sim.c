/* bench-sim: host speed of the emulated NPU's execution (src/sim/hw_gemm.c) against the
 * CPU reference GEMM (src/numeric/ref.c) on the same shapes, in the same run.
 *
 * For each shape: A and B are packed into the NPU layouts (src/numeric/layout.h); the
 * matmul is planned as M tiles that fit the CBUF's data banks (N whole; weights that
 * do not fit the weight banks stream, npu-facts §c) and encoded as one chained
 * program (rb_regcmd_build_chain); the program runs on an rb_sim_npu over a bench-local
 * IOMMU of malloc'd buffers, started by the vendor kernel's MMIO writes (§a.3). The
 * output is unpacked and checked against the reference before anything is timed.
 * Reported: median host time (samples alternate between the two) and GFLOP/s of the emulator and of
 * the reference, their ratio, and the emulator's modeled time (the timing model of
 * src/sim/timing.c on the built-in hardware profile, not a measurement).
 *
 * Usage: bench-sim [-t THREADS]   (default: one thread per online CPU)
 * Exit status: 0, or 1 when a result does not verify or the NPU does not complete. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "core/fp16.h"
#include "numeric/layout.h"
#include "numeric/ref.h"
#include "core/stats.h"
#include "npu/regcmd.h"
#include "hw/regs.h"
#include "hw/task.h"
#include "sim/sim.h"

struct bench_shape {
	int64_t m, k, n;
};

static const struct bench_shape shapes[] = {
    {1, 2048, 8192},
    {128, 2048, 2048},
    {512, 2048, 8192},
};

#define MIN_SAMPLES 5
#define MAX_SAMPLES 30
#define MIN_TIME_US 300000.0
#define TARGET      0.50 /* emulator >= 50 % of the reference GEMM */
#define MAX_TASKS   64
/* The data banks a task may use: one of the 12 is left for (streamed) weights. */
#define MAX_DATA_BANKS (RB_NPU_CBUF_BANKS - 1)

/* NPU addresses of the buffers (all below 4 GiB, §b.5). */
#define RC_IOVA 0x00100000u
#define A_IOVA  0x10000000u
#define B_IOVA  0x20000000u
#define C_IOVA  0x40000000u

struct buf {
	uint32_t iova;
	size_t size;
	void *host;
};

/* The bench-local IOMMU: four buffers, one address space for every core. */
struct mmu {
	struct buf b[4];
};

static void *mmu_map(void *ctx, int core, uint32_t iova, uint64_t len)
{
	struct mmu *m = ctx;

	(void)core;

	for (int i = 0; i < 4; i++) {
		struct buf *b = &m->b[i];

		if (b->host && iova >= b->iova && iova - b->iova <= b->size &&
		    len <= b->size - (iova - b->iova))
			return (char *)b->host + (iova - b->iova);
	}
	return NULL;
}

struct bench {
	struct bench_shape s;
	enum rb_dtype dtype;
	int threads;
	void *a, *b, *ref, *got; /* row-major; ref/got: float or int32 */
	struct mmu mmu;          /* regcmd, A cube, B blocks, C cube */
	struct rb_sim_npu *npu;
	uint32_t body_words, tasks;
	uint64_t modeled_ns;
	double sim_us, ref_us;
	int verified;
};

static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

static size_t bpe(const struct bench *b)
{
	return b->dtype == RB_DTYPE_INT8 ? 1 : 2;
}

static void fill(struct bench *b)
{
	size_t na = (size_t)(b->s.m * b->s.k), nb = (size_t)(b->s.k * b->s.n);

	for (size_t i = 0; i < na + nb; i++) {
		uint32_t r = next_rand();
		void *dst = i < na ? b->a : b->b;
		size_t j = i < na ? i : i - na;

		if (b->dtype == RB_DTYPE_INT8)
			((int8_t *)dst)[j] = (int8_t)r;
		else
			((uint16_t *)dst)[j] = rb_fp16_from_f32((float)r / 4294967296.0f - 0.5f);
	}
}

static int alloc_host(struct bench *b)
{
	size_t mk = (size_t)(b->s.m * b->s.k), kn = (size_t)(b->s.k * b->s.n);
	size_t mn = (size_t)(b->s.m * b->s.n);
	size_t c_cube = rb_layout_c_bytes(4, b->s.m, b->s.n);

	b->a = malloc(mk * bpe(b));
	b->b = malloc(kn * bpe(b));
	b->ref = malloc(mn * 4);
	b->got = malloc(mn * 4);
	b->mmu.b[1] = (struct buf){A_IOVA, rb_layout_a_bytes(b->dtype, b->s.m, b->s.k), NULL};
	b->mmu.b[2] = (struct buf){B_IOVA, rb_layout_b_bytes(b->dtype, b->s.k, b->s.n), NULL};
	b->mmu.b[3] = (struct buf){C_IOVA, c_cube, NULL};
	for (int i = 1; i < 4; i++)
		b->mmu.b[i].host = aligned_alloc(4096, (b->mmu.b[i].size + 4095) & ~(size_t)4095);
	if (!b->a || !b->b || !b->ref || !b->got || !b->mmu.b[1].host || !b->mmu.b[2].host ||
	    !b->mmu.b[3].host)
		return -ENOMEM;
	fill(b);
	return 0;
}

static void free_all(struct bench *b)
{
	free(b->a);
	free(b->b);
	free(b->ref);
	free(b->got);
	for (int i = 0; i < 4; i++)
		free(b->mmu.b[i].host);
	rb_sim_npu_free(b->npu);
}

/* M tiles whose feature cube fits MAX_DATA_BANKS (§c); rows a multiple of 4. */
static int64_t tile_rows(const struct bench *b)
{
	int64_t rows =
	    MAX_DATA_BANKS * (int64_t)RB_NPU_CBUF_BANK_BYTES / (b->s.k * (int64_t)bpe(b));

	rows = rows >= 4 ? rows / 4 * 4 : rows;
	return rows < b->s.m ? rows : b->s.m;
}

static int plan(const struct bench *b, struct rb_npu_task *tasks, uint32_t *count)
{
	int64_t rows = tile_rows(b);
	uint32_t n = 0;

	for (int64_t m0 = 0; m0 < b->s.m; m0 += rows, n++) {
		int64_t mt = b->s.m - m0 < rows ? b->s.m - m0 : rows;
		uint32_t banks =
		    (uint32_t)((mt * b->s.k * (int64_t)bpe(b) + RB_NPU_CBUF_BANK_BYTES - 1) /
			       RB_NPU_CBUF_BANK_BYTES);

		if (n == MAX_TASKS || rows < 1)
			return -EINVAL;
		tasks[n] = (struct rb_npu_task){
		    .dtype = b->dtype,
		    .out = b->dtype == RB_DTYPE_INT8 ? RB_PREC_INT32 : RB_PREC_FP32,
		    .m = (uint32_t)mt,
		    .k = (uint32_t)b->s.k,
		    .n = (uint32_t)b->s.n,
		    .a_height = (uint32_t)b->s.m,
		    .c_height = (uint32_t)b->s.m,
		    .data_banks = banks,
		    .weight_banks = RB_NPU_CBUF_BANKS - banks,
		    .a_addr = A_IOVA + (uint32_t)(m0 * 16),
		    .b_addr = B_IOVA,
		    .c_addr = C_IOVA + (uint32_t)(m0 * 16),
		};
	}
	*count = n;
	return 0;
}

static int encode(struct bench *b)
{
	struct rb_npu_task tasks[MAX_TASKS];
	struct rb_regcmd_layout lay[MAX_TASKS];
	struct rb_regcmd rc;
	int err = plan(b, tasks, &b->tasks);

	if (err)
		return err;
	rb_regcmd_init(&rc);
	err = rb_regcmd_build_chain(&rc, tasks, b->tasks, RC_IOVA, lay);
	if (!err) {
		b->mmu.b[0] = (struct buf){RC_IOVA, rc.count * 8, malloc(rc.count * 8)};
		if (b->mmu.b[0].host)
			memcpy(b->mmu.b[0].host, rc.words, rc.count * 8);
		else
			err = -ENOMEM;
		b->body_words = lay[0].regcfg_amount;
	}
	rb_regcmd_release(&rc);
	return err;
}

static int pack(struct bench *b)
{
	int err =
	    rb_layout_pack_a(b->mmu.b[1].host, b->a, b->dtype, b->s.m, b->s.k, b->s.k, b->threads);

	if (!err)
		err = rb_layout_pack_b(b->mmu.b[2].host, b->b, b->dtype, b->s.k, b->s.n, b->s.k,
				       b->s.n, b->threads);
	return err;
}

static void mmio(struct bench *b, enum rb_reg_id id, uint32_t value)
{
	rb_sim_npu_mmio_write(b->npu, 0, rb_reg(id)->offset, value);
}

static uint32_t field(enum rb_field_id id, uint32_t raw, uint32_t v)
{
	rb_field_pack(id, raw, &v);
	return v;
}

/* The vendor kernel's commit on core 0 (§a.3): S_POINTER 0xE (both groups in use),
 * amount, IRQ mask DPU_0|DPU_1, TASK_CON (0x6|1) << 12 | tasks, start. */
static int run_npu(struct bench *b)
{
	struct rb_sim_core_result res[RB_SIM_MAX_CORES];
	uint32_t irq = rb_field_mask(RB_FIELD_PC_INTERRUPT_MASK_DPU_0) |
		       rb_field_mask(RB_FIELD_PC_INTERRUPT_MASK_DPU_1);
	uint32_t sp = rb_field_mask(RB_FIELD_CNA_S_POINTER_POINTER_PP_EN) |
		      rb_field_mask(RB_FIELD_CNA_S_POINTER_EXECUTER_PP_EN) |
		      rb_field_mask(RB_FIELD_CNA_S_POINTER_POINTER_PP_MODE);
	uint32_t con = rb_field_mask(RB_FIELD_PC_TASK_CON_RESERVED_14) |
		       rb_field_mask(RB_FIELD_PC_TASK_CON_TASK_COUNT_CLEAR) |
		       rb_field_mask(RB_FIELD_PC_TASK_CON_TASK_PP_EN);
	int err;

	mmio(b, RB_REG_PC_BASE_ADDRESS, 1);
	mmio(b, RB_REG_CNA_S_POINTER, sp);
	mmio(b, RB_REG_CORE_S_POINTER, sp);
	mmio(b, RB_REG_PC_BASE_ADDRESS, RC_IOVA);
	mmio(b, RB_REG_PC_REGISTER_AMOUNTS, rb_regcmd_pc_amount(b->body_words));
	mmio(b, RB_REG_PC_INTERRUPT_MASK, irq);
	mmio(b, RB_REG_PC_INTERRUPT_CLEAR, irq);
	mmio(b, RB_REG_PC_TASK_CON, field(RB_FIELD_PC_TASK_CON_TASK_NUMBER, b->tasks, con));
	mmio(b, RB_REG_PC_TASK_DMA_BASE_ADDR, 0);
	mmio(b, RB_REG_PC_OPERATION_ENABLE, 1);
	mmio(b, RB_REG_PC_OPERATION_ENABLE, 0);
	err = rb_sim_npu_run(b->npu, 1, res);
	if (err)
		return err;
	if (res[0].status != RB_SIM_DONE) {
		fprintf(stderr, "bench-sim: the NPU stopped: %s\n", res[0].reason);
		return -EIO;
	}
	b->modeled_ns = res[0].elapsed_ns;
	return 0;
}

static int run_ref(struct bench *b)
{
	if (b->dtype == RB_DTYPE_INT8)
		return rb_ref_gemm_i8(b->a, b->b, b->ref, b->s.m, b->s.k, b->s.n, b->threads);
	return rb_ref_gemm_f16(b->a, b->b, b->ref, b->s.m, b->s.k, b->s.n, b->threads);
}

/* int8 exactly; fp16 within what the fp32 summation order can change. */
static int verify(struct bench *b)
{
	struct rb_layout_c_tile tile;
	size_t n = (size_t)(b->s.m * b->s.n);

	rb_layout_c_tile_full(&tile, b->s.m, b->s.n);
	if (rb_layout_unpack_c(b->got, b->s.n, b->mmu.b[3].host, 4, &tile, b->threads))
		return 0;
	if (b->dtype == RB_DTYPE_INT8)
		return memcmp(b->got, b->ref, n * 4) == 0;
	for (size_t i = 0; i < n; i++) {
		float got = ((float *)b->got)[i], want = ((float *)b->ref)[i];

		if (!(fabsf(got - want) <= 1e-6f * (float)b->s.k + 1e-5f * fabsf(want)))
			return 0;
	}
	return 1;
}

/* Samples alternate between the emulator and the reference, so a change of load on the
 * machine touches both alike. */
static int time_both(struct bench *b)
{
	double sim[MAX_SAMPLES], ref[MAX_SAMPLES], total = 0;
	int n = 0, err = 0;

	while (!err && n < MAX_SAMPLES && (n < MIN_SAMPLES || total < MIN_TIME_US)) {
		double t0 = rb_now_us(), t1;

		err = run_npu(b);
		t1 = rb_now_us();
		if (!err)
			err = run_ref(b);
		sim[n] = t1 - t0;
		ref[n] = rb_now_us() - t1;
		total += sim[n] + ref[n];
		n++;
	}
	if (!err) {
		b->sim_us = bench_median(sim, n);
		b->ref_us = bench_median(ref, n);
	}
	return err;
}

static int setup(struct bench *b)
{
	struct rb_sim_config cfg;
	struct rb_sim_iommu iommu = {mmu_map, &b->mmu};
	int err = alloc_host(b);

	if (!err)
		err = pack(b);
	if (!err)
		err = encode(b);
	if (err)
		return err;
	rb_sim_config_init(&cfg);
	cfg.cores = 1;
	cfg.threads = b->threads;
	b->npu = rb_sim_npu_new(&cfg, &iommu);
	return b->npu ? 0 : -errno;
}

static int bench_one(struct bench *b)
{
	int err = setup(b);

	if (!err)
		err = run_npu(b);
	if (!err)
		err = run_ref(b);
	if (err)
		return err;
	b->verified = verify(b);
	return time_both(b);
}

static double gflops(const struct bench_shape *s, double us)
{
	return 2.0 * (double)s->m * (double)s->k * (double)s->n / us / 1e3;
}

static void print_row(const struct bench *b)
{
	double sim = gflops(&b->s, b->sim_us), ref = gflops(&b->s, b->ref_us);
	char name[64];

	snprintf(name, sizeof(name), "%lldx%lldx%lld", (long long)b->s.m, (long long)b->s.k,
		 (long long)b->s.n);
	printf("%-16s %-5s %5u %10.3f %9.2f %10.3f %9.2f %6.0f%%  %-6s %12.3f\n", name,
	       rb_dtype_name(b->dtype), b->tasks, b->sim_us / 1e3, sim, b->ref_us / 1e3, ref,
	       100 * sim / ref, b->verified ? "ok" : "FAIL", (double)b->modeled_ns / 1e6);
}

/* Returns the emulator/reference ratio (< 0 on failure). */
static double bench_shape(const struct bench_shape *s, enum rb_dtype dtype, int threads,
			  int *failed)
{
	struct bench b = {.s = *s, .dtype = dtype, .threads = threads};
	double ratio = -1;
	int err = bench_one(&b);

	if (err) {
		fprintf(stderr, "bench-sim: %lldx%lldx%lld %s: %s\n", (long long)s->m,
			(long long)s->k, (long long)s->n, rb_dtype_name(dtype), strerror(-err));
		*failed = 1;
	} else {
		print_row(&b);
		ratio = gflops(s, b.sim_us) / gflops(s, b.ref_us);
		*failed |= !b.verified;
	}
	fflush(stdout);
	free_all(&b);
	return ratio;
}

int main(int argc, char **argv)
{
	int threads, failed = 0;
	double worst = INFINITY;

	if (bench_parse_threads(argc, argv, &threads)) {
		fprintf(stderr, "usage: bench-sim [-t THREADS]\n");
		return 2;
	}
	printf("bench-sim: emulated NPU vs CPU reference GEMM, %d thread(s), reference kernels "
	       "%s, fp16 conversion %s\n",
	       rb_ref_threads(threads), rb_ref_impl(), rb_fp16_impl());
	printf("host time: median of >= %d runs after a warm-up, both in this run; 'modeled' "
	       "is the emulator's timing model (configs/soc/rk3588.json), not a measurement\n",
	       MIN_SAMPLES);
	printf("%-16s %-5s %5s %10s %9s %10s %9s %7s  %-6s %12s\n", "shape MxKxN", "dtype", "tasks",
	       "sim ms", "GFLOP/s", "ref ms", "GFLOP/s", "ratio", "verify", "modeled ms");
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		for (int d = 0; d < 2; d++) {
			double r = bench_shape(&shapes[i], d ? RB_DTYPE_INT8 : RB_DTYPE_FP16,
					       threads, &failed);

			if (!d && r >= 0 && r < worst)
				worst = r;
		}
	}
	printf("target: emulator fp16 >= %.0f%% of the reference GEMM on every shape: worst "
	       "%.0f%%, %s\n",
	       100 * TARGET, 100 * worst, worst >= TARGET ? "met" : "MISSED");
	return failed;
}
