/* bench-summary: the one table of `make bench`: rknn-bench against a baseline on each
 * row, both measured in this run.
 *
 * Rows (M x K x N; --quick swaps in small shapes on the same code paths):
 *   GEMM fp16 512x2048x8192  rb_ref_gemm_f16 vs cblas_sgemm on fp32 copies of the same
 *                            inputs; ratio = speed ours / speed theirs, target >= 1.0
 *   GEMM int8 512x2048x8192  rb_ref_gemm_i8 vs cblas_sgemm (fp32), target >= 1.2
 *   GEMV fp16 1x2048x128256  rb_ref_gemm_f16 (M = 1) vs cblas_sgemv, target >= 1.5
 *   pack B fp16 KxN 2048x8192 and 2048x128256, pack A fp16 MxK 512x2048, unpack C fp32
 *                            MxN 512x8192 (src/numeric/layout.h) vs memcpy of the same bytes
 *                            between the same buffers, split over as many threads as the
 *                            layout code starts (one per 2 MiB, at most -t); ratio =
 *                            time ours / time memcpy, target <= 1.25. The buffers come
 *                            from rb_inputs_alloc, as the tool's matrices do (2 MiB
 *                            pages advised for 2 MiB or more; the emulator's buffer
 *                            objects ask the same); the driver's buffers on a board may
 *                            sit on 4 KiB pages
 *   emulator fp16 1x2048x8192, 128x2048x2048, 512x2048x8192: the engines of
 *                            `rknn-bench run --device sim` and `--device cpu`
 *                            (src/run/engine.h: the tool's default plan, A packed, the
 *                            program run, C unpacked on each run), host wall time; ratio
 *                            = sim speed / cpu speed, target >= 0.5
 * The OpenBLAS rows need the program built with RB_HAVE_OPENBLAS and OpenBLAS's cflags
 * and libs (the Makefile does so when `pkg-config --exists openblas`); without it they
 * say "skipped". OpenBLAS gets the same number of threads (openblas_set_num_threads) and
 * OPENBLAS_THREAD_TIMEOUT=4, and its best kernels for this CPU where it does not know
 * the model, unless the environment sets them (see set_blas_environment).
 *
 * Method: each row is verified before it is timed: ours against the naive loop on its
 * first rows (int8 exactly, fp16 within fp32 summation order), OpenBLAS against ours
 * (the same tolerance; the inputs are the tool's `exact` data, numeric/inputs.h, on which
 * fp32 sums of fp16 products do not round), a layout by its inverse (bit-exact), the
 * emulator against the reference. Then one warm-up run of each side, then pairs run
 * alternately (ours, baseline, ours, baseline, ...) until there are at least -r pairs
 * and -s seconds of them (at most 200). The ratio is taken per pair, so a change of load
 * on the machine touches both sides of it alike; the table shows its min and median
 * over the pairs and each side's median time. A target is judged on the median ratio.
 *
 * Output: a Markdown document to stdout (the machine, the table, the plans the emulator
 * rows ran, the targets missed); with -o also to FILE, through a temporary file renamed
 * over it. Progress goes to stderr.
 *
 * Usage: bench-summary [-t THREADS] [-r PAIRS] [-s SECONDS] [-o FILE] [--quick] [--strict]
 *   -t N      host threads for each side: the reference, the layouts, the emulator,
 *             OpenBLAS, memcpy (0, the default: every online CPU)
 *   -r N      at least N pairs per row (default 9)
 *   -s S      at least S seconds of pairs per row (default 1)
 *   -o FILE   also write the document to FILE (make bench: bench/results.md)
 *   --quick   small shapes, one pair, no warm-up: a smoke test of this program (make
 *             check runs it), not a measurement
 *   --strict  a missed target fails the run (exit 1)
 * Exit status: 0 the table was made (missed targets, if any, are listed under it);
 * 1 a result did not verify, or --strict and a target was missed; 2 a usage error or
 * FILE could not be written; 3 a row could not run (out of memory, engine error). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef RB_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include "bench.h"
#include "core/error.h"
#include "core/fileio.h"
#include "core/fp16.h"
#include "numeric/inputs.h"
#include "numeric/layout.h"
#include "numeric/ref.h"
#include "results/report.h"
#include "core/stats.h"
#include "run/engine.h"

#define MAX_PAIRS   200
#define MAX_THREADS 64
/* The layout code's rule (src/numeric/layout.c): a thread per 2 MiB, at most the asked. */
#define COPY_BYTES_PER_THREAD ((size_t)2 << 20)
/* The naive loop checks the first rows of M only, about this many multiply-adds. */
#define NAIVE_MACS (INT64_C(1) << 26)
#define SEED       42
#define NO_BLAS    "skipped: OpenBLAS not found (apt-get install libopenblas-dev)"

struct options {
	int threads; /* resolved: >= 1 */
	int pairs;
	double min_time_s;
	const char *out;
	bool quick, strict;
};

enum kind { GEMM, PACK_A, PACK_B, UNPACK_C, EMULATOR };

struct spec {
	enum kind kind;
	const char *name;
	enum rb_dtype dtype;
	int64_t dims[3], quick[3]; /* M, K, N; 0 where the row has no such dimension */
	double target;
};

static const struct spec specs[] = {
    {GEMM, "GEMM fp16", RB_DTYPE_FP16, {512, 2048, 8192}, {64, 256, 512}, 1.0},
    {GEMM, "GEMM int8", RB_DTYPE_INT8, {512, 2048, 8192}, {64, 256, 512}, 1.2},
    {GEMM, "GEMV fp16", RB_DTYPE_FP16, {1, 2048, 128256}, {1, 256, 4096}, 1.5},
    {PACK_B, "pack B fp16", RB_DTYPE_FP16, {0, 2048, 8192}, {0, 256, 1024}, 1.25},
    {PACK_B, "pack B fp16", RB_DTYPE_FP16, {0, 2048, 128256}, {0, 256, 4096}, 1.25},
    {PACK_A, "pack A fp16", RB_DTYPE_FP16, {512, 2048, 0}, {64, 256, 0}, 1.25},
    {UNPACK_C, "unpack C fp32", RB_DTYPE_FP16, {512, 0, 8192}, {64, 0, 512}, 1.25},
    {EMULATOR, "emulator fp16", RB_DTYPE_FP16, {1, 2048, 8192}, {1, 256, 512}, 0.5},
    {EMULATOR, "emulator fp16", RB_DTYPE_FP16, {128, 2048, 2048}, {32, 256, 256}, 0.5},
    {EMULATOR, "emulator fp16", RB_DTYPE_FP16, {512, 2048, 8192}, {64, 256, 512}, 0.5},
};
#define N_ROWS (sizeof(specs) / sizeof(specs[0]))

enum outcome { MEASURED, SKIPPED, BAD, ERROR };

struct row {
	const struct spec *spec;
	int64_t m, k, n;
	const char *ours, *theirs; /* what ran on each side */
	bool higher_better;        /* ratio is a speed ratio (else a time ratio) */
	enum outcome outcome;
	const char *why; /* SKIPPED, BAD, ERROR: the reason */
	double ours_us, theirs_us, ratio_min, ratio_med;
	int pairs;
	char plan[256]; /* emulator rows: the plan config the sim engine ran, or "" */
};

typedef int (*side_fn)(void *ctx);

/* --- statistics and timing -------------------------------------------------------- */

/* One warm-up run of each side, then pairs ours, theirs until o->pairs and o->min_time_s. */
static int time_pairs(const struct options *o, side_fn ours, side_fn theirs, void *ctx,
		      struct row *r)
{
	static double t_ours[MAX_PAIRS], t_theirs[MAX_PAIRS], ratio[MAX_PAIRS];
	double total = 0;
	int n = 0, err = o->quick ? 0 : ours(ctx);

	if (!err && !o->quick)
		err = theirs(ctx);
	while (!err && n < MAX_PAIRS && (n < o->pairs || total < o->min_time_s * 1e6)) {
		double t0 = rb_now_us(), t1, t2;

		err = ours(ctx);
		t1 = rb_now_us();
		if (!err)
			err = theirs(ctx);
		t2 = rb_now_us();
		t_ours[n] = t1 - t0;
		t_theirs[n] = t2 - t1;
		total += t2 - t0;
		n++;
	}
	if (err)
		return err;
	for (int i = 0; i < n; i++)
		ratio[i] = r->higher_better ? t_theirs[i] / t_ours[i] : t_ours[i] / t_theirs[i];
	r->pairs = n;
	r->ours_us = bench_median(t_ours, n);
	r->theirs_us = bench_median(t_theirs, n);
	r->ratio_med = bench_median(ratio, n);
	r->ratio_min = ratio[0]; /* sorted by bench_median() */
	r->outcome = MEASURED;
	return 0;
}

/* |got - want| <= k·1e-6 + 1e-5·|want|: what fp32 summation order can change (bench/ref.c). */
static bool near(float got, float want, int64_t k)
{
	return fabsf(got - want) <= 1e-6f * (float)k + 1e-5f * fabsf(want);
}

/* got (float) against want (float for fp16, int32 for int8). */
static bool all_near(const float *got, const void *want, enum rb_dtype dtype, size_t count,
		     int64_t k)
{
	for (size_t i = 0; i < count; i++) {
		float w = dtype == RB_DTYPE_INT8 ? (float)((const int32_t *)want)[i]
						 : ((const float *)want)[i];

		if (!near(got[i], w, k))
			return false;
	}
	return true;
}

/* --- memcpy on threads ------------------------------------------------------------ */

struct copy_part {
	char *dst;
	const char *src;
	size_t bytes;
	pthread_t tid;
	bool started;
};

static void *copy_main(void *arg)
{
	struct copy_part *p = arg;

	memcpy(p->dst, p->src, p->bytes);
	return NULL;
}

/* memcpy cut into contiguous parts, the first on the calling thread; a part whose
 * thread cannot start is copied here afterwards. */
static void copy_parallel(void *dst, const void *src, size_t bytes, int threads)
{
	struct copy_part part[MAX_THREADS] = {{0}};
	size_t n = bytes / COPY_BYTES_PER_THREAD;

	n = n < 1 ? 1 : n > (size_t)threads ? (size_t)threads : n;
	n = n > MAX_THREADS ? MAX_THREADS : n;
	for (size_t i = 0; i < n; i++) {
		size_t b = bytes * i / n / 64 * 64,
		       e = i + 1 == n ? bytes : bytes * (i + 1) / n / 64 * 64;

		part[i] = (struct copy_part){
		    .dst = (char *)dst + b, .src = (const char *)src + b, .bytes = e - b};
	}
	for (size_t i = 1; i < n; i++)
		part[i].started = pthread_create(&part[i].tid, NULL, copy_main, &part[i]) == 0;
	copy_main(&part[0]);
	for (size_t i = 1; i < n; i++) {
		if (part[i].started)
			pthread_join(part[i].tid, NULL);
		else
			copy_main(&part[i]);
	}
}

/* --- GEMM and GEMV against OpenBLAS ------------------------------------------------ */

static void gemm_names(struct row *r)
{
	r->higher_better = true;
	r->ours = r->spec->dtype == RB_DTYPE_INT8 ? "rb_ref_gemm_i8" : "rb_ref_gemm_f16";
	r->theirs = r->m == 1 ? "cblas_sgemv fp32" : "cblas_sgemm fp32";
}

#ifdef RB_HAVE_OPENBLAS
struct gemm {
	struct rb_inputs in;
	int threads;
	void *c;          /* ours: float (fp16) or int32 (int8), M×N */
	void *want;       /* the naive loop's first rows */
	float *a32, *b32; /* fp32 copies of A and B */
	float *c32;       /* OpenBLAS's C */
};

static int gemm_ours(void *ctx)
{
	struct gemm *g = ctx;

	return rb_ref_gemm(&g->in.shape, g->in.a, g->in.b, g->c, g->threads);
}

static int gemm_blas(void *ctx)
{
	struct gemm *g = ctx;
	const struct rb_shape *s = &g->in.shape;
	int m = (int)s->m, k = (int)s->k, n = (int)s->n;

	if (m == 1) /* c = Bᵀ·a, B being K rows of N */
		cblas_sgemv(CblasRowMajor, CblasTrans, k, n, 1.0f, g->b32, n, g->a32, 1, 0.0f,
			    g->c32, 1);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, g->a32, k,
			    g->b32, n, 0.0f, g->c32, n);
	return 0;
}

static void to_f32(float *dst, const void *src, enum rb_dtype dtype, size_t count)
{
	if (dtype == RB_DTYPE_FP16) {
		rb_fp16_to_f32_array(dst, src, count);
		return;
	}
	for (size_t i = 0; i < count; i++)
		dst[i] = (float)((const int8_t *)src)[i];
}

static void gemm_release(struct gemm *g)
{
	rb_inputs_release(&g->in);
	free(g->c);
	free(g->want);
	free(g->a32);
	free(g->b32);
	free(g->c32);
}

static int gemm_setup(struct gemm *g, const struct row *r, int threads)
{
	struct rb_shape s = {r->m, r->k, r->n, r->spec->dtype};
	size_t mk = (size_t)(r->m * r->k), kn = (size_t)(r->k * r->n), mn = (size_t)(r->m * r->n);
	int err = rb_inputs_init(&g->in, &s, SEED, RB_DATA_EXACT);

	g->threads = threads;
	if (err)
		return err;
	g->c = malloc(mn * 4);
	g->want = malloc(mn * 4);
	g->a32 = malloc(mk * sizeof(float));
	g->b32 = malloc(kn * sizeof(float));
	g->c32 = malloc(mn * sizeof(float));
	if (!g->c || !g->want || !g->a32 || !g->b32 || !g->c32)
		return -ENOMEM;
	to_f32(g->a32, g->in.a, s.dtype, mk);
	to_f32(g->b32, g->in.b, s.dtype, kn);
	return 0;
}

/* Ours against the naive loop on the first rows, then OpenBLAS against ours on all of C:
 * NULL, or what differs. */
static const char *gemm_verify(struct gemm *g)
{
	const struct rb_shape *s = &g->in.shape;
	int64_t rows = NAIVE_MACS / (s->k * s->n);
	size_t first;

	rows = rows < 1 ? 1 : rows > s->m ? s->m : rows;
	first = (size_t)(rows * s->n);
	if (s->dtype == RB_DTYPE_INT8) {
		rb_ref_naive_i8(g->in.a, g->in.b, g->want, rows, s->k, s->n);
		if (memcmp(g->c, g->want, first * 4) != 0)
			return "ours differs from the naive loop";
	} else {
		rb_ref_naive_f16(g->in.a, g->in.b, g->want, rows, s->k, s->n);
		if (!all_near(g->c, g->want, s->dtype, first, s->k))
			return "ours differs from the naive loop";
	}
	if (!all_near(g->c32, g->c, s->dtype, (size_t)(s->m * s->n), s->k))
		return "OpenBLAS differs from ours";
	return NULL;
}

static int run_gemm(const struct options *o, struct row *r)
{
	struct gemm g = {0};
	int err;

	gemm_names(r);
	err = gemm_setup(&g, r, o->threads);
	if (!err)
		err = gemm_ours(&g);
	if (!err)
		err = gemm_blas(&g);
	if (!err)
		r->why = gemm_verify(&g);
	if (!err && r->why) {
		r->outcome = BAD;
	} else if (!err) {
		err = time_pairs(o, gemm_ours, gemm_blas, &g, r);
	}
	gemm_release(&g);
	return err;
}
#else
static int run_gemm(const struct options *o, struct row *r)
{
	(void)o;
	gemm_names(r);
	r->outcome = SKIPPED;
	r->why = NO_BLAS;
	return 0;
}
#endif

/* --- layouts against memcpy ------------------------------------------------------- */

struct layout {
	enum kind kind;
	enum rb_dtype dtype;
	int64_t m, k, n;
	int threads;
	void *src, *dst, *back;
	size_t bytes;
};

static int layout_ours(void *ctx)
{
	struct layout *l = ctx;
	struct rb_layout_c_tile tile;

	switch (l->kind) {
	case PACK_A:
		return rb_layout_pack_a(l->dst, l->src, l->dtype, l->m, l->k, l->k, l->threads);
	case PACK_B:
		return rb_layout_pack_b(l->dst, l->src, l->dtype, l->k, l->n, l->k, l->n,
					l->threads);
	case UNPACK_C:
		rb_layout_c_tile_full(&tile, l->m, l->n);
		return rb_layout_unpack_c(l->dst, l->n, l->src, 4, &tile, l->threads);
	default:
		return -EINVAL;
	}
}

static int layout_memcpy(void *ctx)
{
	struct layout *l = ctx;

	copy_parallel(l->dst, l->src, l->bytes, l->threads);
	return 0;
}

/* The conversion undone by its inverse gives its input back, bit for bit (the shapes
 * need no padding). */
static bool layout_verify(struct layout *l)
{
	int err;

	if (layout_ours(l))
		return false;
	if (l->kind == PACK_A)
		err = rb_layout_unpack_a(l->back, l->dst, l->dtype, l->m, l->k, l->k, l->threads);
	else if (l->kind == PACK_B)
		err = rb_layout_unpack_b_sliced(l->back, l->dst, l->dtype, l->k, l->n, l->k, l->n,
						l->k, l->threads);
	else
		err = rb_layout_rknn_pack_c(l->back, l->dst, 4, l->m, l->n, l->threads);
	return !err && memcmp(l->back, l->src, l->bytes) == 0;
}

/* Bits that look random (xorshift64), 8 bytes at a time. */
static void fill_bytes(void *p, size_t bytes)
{
	uint64_t x = 0x2545f4914f6cdd1dull, v;

	for (size_t i = 0; i < bytes; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x;
		memcpy((char *)p + i, &v, bytes - i < 8 ? bytes - i : 8);
	}
}

static void layout_names(struct row *r)
{
	static const char *const ours[] = {[PACK_A] = "rb_layout_pack_a",
					   [PACK_B] = "rb_layout_pack_b",
					   [UNPACK_C] = "rb_layout_unpack_c"};

	r->higher_better = false;
	r->ours = ours[r->spec->kind];
	r->theirs = "memcpy";
}

static int run_layout(const struct options *o, struct row *r)
{
	struct layout l = {.kind = r->spec->kind,
			   .dtype = r->spec->dtype,
			   .m = r->m,
			   .k = r->k,
			   .n = r->n,
			   .threads = o->threads};
	int err = 0;

	layout_names(r);
	l.bytes = l.kind == PACK_A   ? (size_t)(l.m * l.k) * 2
		  : l.kind == PACK_B ? (size_t)(l.k * l.n) * 2
				     : (size_t)(l.m * l.n) * 4;
	/* 64-byte aligned: the B pack streams its stores to an aligned dst (layout.h). */
	l.src = rb_inputs_alloc(l.bytes);
	l.dst = rb_inputs_alloc(l.bytes);
	l.back = rb_inputs_alloc(l.bytes);
	if (!l.src || !l.dst || !l.back)
		err = -ENOMEM;
	if (!err) {
		fill_bytes(l.src, l.bytes);
		if (!layout_verify(&l)) {
			r->outcome = BAD;
			r->why = "the inverse does not give the input back";
		} else {
			err = time_pairs(o, layout_ours, layout_memcpy, &l, r);
		}
	}
	free(l.src);
	free(l.dst);
	free(l.back);
	return err;
}

/* --- the emulator against the reference ------------------------------------------- */

struct emulator {
	struct rb_inputs in;
	struct rb_engine sim, cpu; /* zeroed or opened: rb_engine_close is safe on both */
	void *c_sim, *c_cpu;
};

static int emu_side(struct rb_engine *e, void *c)
{
	double device_us;

	return e->ops->run(e, c, &device_us);
}

static int emu_sim(void *ctx)
{
	struct emulator *x = ctx;

	return emu_side(&x->sim, x->c_sim);
}

static int emu_cpu(void *ctx)
{
	struct emulator *x = ctx;

	return emu_side(&x->cpu, x->c_cpu);
}

/* An engine as `rknn-bench run --device NAME` opens it (default plan, --threads). */
static int emu_open(struct rb_engine *e, const char *name, const struct rb_inputs *in, int threads)
{
	struct rb_engine_opts opts;
	const struct rb_engine_ops *ops;
	int err;

	rb_engine_opts_init(&opts);
	opts.threads = threads;
	opts.sim.threads = threads;
	ops = rb_engine_find(name, &opts);
	if (!ops)
		return -EINVAL;
	err = rb_engine_open(e, ops, &opts);
	if (!err && e->ops->prepare)
		err = e->ops->prepare(e, in);
	return err;
}

static void emu_release(struct emulator *x)
{
	rb_engine_close(&x->sim);
	rb_engine_close(&x->cpu);
	rb_inputs_release(&x->in);
	free(x->c_sim);
	free(x->c_cpu);
}

static int emu_setup(struct emulator *x, const struct row *r, int threads)
{
	struct rb_shape s = {r->m, r->k, r->n, r->spec->dtype};
	int err = rb_inputs_init(&x->in, &s, SEED, RB_DATA_EXACT);

	if (err)
		return err;
	x->c_sim = rb_output_alloc(&s);
	x->c_cpu = rb_output_alloc(&s);
	if (!x->c_sim || !x->c_cpu)
		return -ENOMEM;
	err = emu_open(&x->sim, "sim", &x->in, threads);
	if (!err)
		err = emu_open(&x->cpu, "cpu", &x->in, threads);
	return err;
}

/* The plan the sim engine made, as `rknn-bench run --config` takes it. */
static void emu_plan(const struct rb_engine *e, char *buf, size_t size)
{
	cJSON *config = e->ops->config ? e->ops->config(e) : NULL;
	const cJSON *plan = cJSON_GetObjectItemCaseSensitive(config, "plan");

	snprintf(buf, size, "%s", cJSON_IsString(plan) ? plan->valuestring : "unknown");
	cJSON_Delete(config);
}

static int run_emulator(const struct options *o, struct row *r)
{
	struct emulator x = {0};
	int err = emu_setup(&x, r, o->threads);

	r->higher_better = true;
	r->ours = "device sim";
	r->theirs = "device cpu";
	if (!err)
		err = emu_sim(&x);
	if (!err)
		err = emu_cpu(&x);
	if (!err)
		emu_plan(&x.sim, r->plan, sizeof(r->plan));
	if (!err && !all_near(x.c_sim, x.c_cpu, r->spec->dtype, (size_t)(r->m * r->n), r->k)) {
		r->outcome = BAD;
		r->why = "the emulator's C differs from the reference's";
	} else if (!err) {
		err = time_pairs(o, emu_sim, emu_cpu, &x, r);
	}
	emu_release(&x);
	return err;
}

/* --- the document ----------------------------------------------------------------- */

struct doc {
	const struct options *o;
	const struct row *rows;
	struct rb_context ctx;
	char blas[512], load[128];
};

#if defined(__clang__)
#define COMPILER __VERSION__
#elif defined(__GNUC__)
#define COMPILER "gcc " __VERSION__
#else
#define COMPILER "unknown"
#endif

/* The first three fields of /proc/loadavg: the 1, 5 and 15 minute load averages. */
static void read_load(char *buf, size_t size)
{
	FILE *f = fopen("/proc/loadavg", "r");
	char line[96];
	char *end = NULL;

	if (f && fgets(line, sizeof(line), f)) {
		end = line;
		for (int field = 0; end && field < 3; field++)
			end = strchr(end + (field > 0), ' ');
	}
	if (end) {
		*end = '\0';
		snprintf(buf, size, "%s", line);
	} else {
		snprintf(buf, size, "unknown");
	}
	if (f)
		fclose(f);
}

static void blas_name(char *buf, size_t size)
{
#ifdef RB_HAVE_OPENBLAS
	const char *config = openblas_get_config();
	const char *timeout = getenv("OPENBLAS_THREAD_TIMEOUT");
	const char *core = getenv("OPENBLAS_CORETYPE"), *from = getenv("BENCH_CORETYPE_FROM");
	size_t len;

	while (config && *config == ' ')
		config++;

	snprintf(buf, size, "%s", config ? config : "OpenBLAS (no configuration string)");
	len = strlen(buf);
	while (len > 0 && buf[len - 1] == ' ')
		buf[--len] = '\0';
	len += (size_t)snprintf(buf + len, size - len, "; OPENBLAS_THREAD_TIMEOUT=%s",
				timeout ? timeout : "unset (its default)");
	if (core && len < size)
		snprintf(buf + len, size - len, "; OPENBLAS_CORETYPE=%s%s%s%s", core,
			 from ? " (set by this program: OpenBLAS took this CPU for " : "",
			 from ? from : "", from ? ", its generic x86-64 kernels)" : "");
#else
	snprintf(buf, size,
		 "not found when this program was built (pkg-config openblas): its "
		 "rows are skipped");
#endif
}

static void doc_header(FILE *f, const struct doc *d)
{
	const struct rb_context *c = &d->ctx;

	fprintf(f, "# `make bench`: rknn-bench against a baseline, measured in one run\n\n");
	fprintf(f,
		"Written by `build/bench-summary%s` (bench/summary.c, whose header says how "
		"each row is measured); not edited by hand.\n\n",
		d->o->quick ? " --quick" : "");
	if (d->o->quick)
		fprintf(f, "**--quick: small shapes and one pair, a smoke test; not "
			   "measurements.**\n\n");
	fprintf(f, "- CPU: %s, %d CPUs\n", c->cpu, c->cpu_count);
	fprintf(f, "- kernel: %s\n", c->kernel);
	fprintf(f, "- compiler: %s\n", COMPILER);
	fprintf(f, "- rknn-bench %s, commit %s\n", c->tool_version, c->tool_commit);
	fprintf(f, "- OpenBLAS: %s\n", d->blas);
	fprintf(f,
		"- threads: %d on each side (reference, layouts, emulator, OpenBLAS, memcpy); "
		"reference kernels %s, fp16 conversion %s\n",
		d->o->threads, rb_ref_impl(), rb_fp16_impl());
	fprintf(f, "- date: %s; load average at the start: %s\n", c->date, d->load);
	fprintf(f,
		"- pairs per row: at least %d and %.2f s of them, after one warm-up run of "
		"each side%s\n\n",
		d->o->pairs, d->o->min_time_s, d->o->quick ? " (none with --quick)" : "");
}

static void fmt_time(char *buf, size_t size, double us)
{
	if (us < 1e3)
		snprintf(buf, size, "%.1f us", us);
	else if (us < 1e5)
		snprintf(buf, size, "%.2f ms", us / 1e3);
	else
		snprintf(buf, size, "%.1f ms", us / 1e3);
}

static void fmt_shape(char *buf, size_t size, const struct row *r)
{
	switch (r->spec->kind) {
	case PACK_A:
		snprintf(buf, size, "%lldx%lld (MxK)", (long long)r->m, (long long)r->k);
		break;
	case PACK_B:
		snprintf(buf, size, "%lldx%lld (KxN)", (long long)r->k, (long long)r->n);
		break;
	case UNPACK_C:
		snprintf(buf, size, "%lldx%lld (MxN)", (long long)r->m, (long long)r->n);
		break;
	default:
		snprintf(buf, size, "%lldx%lldx%lld", (long long)r->m, (long long)r->k,
			 (long long)r->n);
	}
}

static bool met(const struct row *r)
{
	return r->higher_better ? r->ratio_med >= r->spec->target : r->ratio_med <= r->spec->target;
}

static void doc_row(FILE *f, const struct row *r)
{
	char shape[64], ours[32], theirs[32];
	const char *target_kind = r->higher_better ? "speed >=" : "time <=";

	fmt_shape(shape, sizeof(shape), r);
	fprintf(f, "| %s | %s | %s | ", r->spec->name, shape, r->ours);
	if (r->outcome != MEASURED) {
		fprintf(f, "%s%s | %s | - | - | - | - | %s %.2f | %s |\n",
			r->outcome == BAD ? "did not verify: " : "", r->why, r->theirs, target_kind,
			r->spec->target,
			r->outcome == SKIPPED ? "skipped"
			: r->outcome == BAD   ? "**FAIL**"
					      : "error");
		return;
	}
	fmt_time(ours, sizeof(ours), r->ours_us);
	fmt_time(theirs, sizeof(theirs), r->theirs_us);
	fprintf(f, "%s | %s | %s | %d | %.2f | %.2f | %s %.2f | %s |\n", ours, r->theirs, theirs,
		r->pairs, r->ratio_min, r->ratio_med, target_kind, r->spec->target,
		met(r) ? "met" : "**missed**");
}

static void doc_missed(FILE *f, const struct doc *d)
{
	int missed = 0, bad = 0;

	for (size_t i = 0; i < N_ROWS; i++) {
		const struct row *r = &d->rows[i];
		char shape[64];

		if (r->outcome != MEASURED || met(r))
			continue;
		fmt_shape(shape, sizeof(shape), r);
		fprintf(f, "%s %s %s: %.2f %s %.2f",
			missed++ ? "," : "Targets missed:", r->spec->name, shape, r->ratio_med,
			r->higher_better ? "<" : ">", r->spec->target);
	}
	fprintf(f, "%s\n", missed ? "." : "Every measured row met its target.");
	for (size_t i = 0; i < N_ROWS; i++) {
		const struct row *r = &d->rows[i];
		char shape[64];

		if (r->outcome != BAD && r->outcome != ERROR)
			continue;
		fmt_shape(shape, sizeof(shape), r);
		fprintf(f, "%s %s %s (%s)", bad++ ? "," : "\nRows that failed:", r->spec->name,
			shape, r->why);
	}
	if (bad)
		fprintf(f, ".\n");
}

static void doc_plans(FILE *f, const struct doc *d)
{
	fprintf(f, "The plans the emulator rows ran (the planner's default, as `rknn-bench run "
		   "--config` takes them):\n\n");
	for (size_t i = 0; i < N_ROWS; i++) {
		const struct row *r = &d->rows[i];
		char shape[64];

		if (!r->plan[0])
			continue;
		fmt_shape(shape, sizeof(shape), r);
		fprintf(f, "- %s: `%s`\n", shape, r->plan);
	}
	fprintf(f, "\n");
}

static int doc_write(FILE *f, void *ctx)
{
	const struct doc *d = ctx;

	doc_header(f, d);
	fprintf(f, "| row | shape | ours | ours, median | baseline | baseline, median | pairs "
		   "| ratio min | ratio median | target | |\n");
	fprintf(f, "|---|---|---|--:|---|--:|--:|--:|--:|---|---|\n");
	for (size_t i = 0; i < N_ROWS; i++)
		doc_row(f, &d->rows[i]);
	fprintf(f, "\nRatio, per pair of runs: speed ours / speed baseline (> 1: ours is "
		   "faster) on the GEMM, GEMV and emulator rows; time ours / time memcpy of the "
		   "same bytes (1: copy speed) on the layout rows. GEMM and GEMV speeds count "
		   "the same 2·M·N·K operations on both sides: ours on fp16 or int8, OpenBLAS on "
		   "fp32 copies of the same inputs. Emulator rows: host wall time of one run on "
		   "the tool's default plan (`rknn-bench run --device sim`, not its modeled "
		   "NPU time) against the CPU reference (`--device cpu`). Ratio min is the "
		   "smallest ratio of a pair: on the layout rows the pair best for ours, on "
		   "the others the worst. A target is judged on the median.\n\n");
	doc_plans(f, d);
	doc_missed(f, d);
	return ferror(f) ? -EIO : 0;
}

/* --- main ------------------------------------------------------------------------- */

static int run_row(const struct options *o, struct row *r)
{
	const struct spec *s = r->spec;
	const int64_t *dims = o->quick ? s->quick : s->dims;
	char shape[64];
	int err;

	r->m = dims[0];
	r->k = dims[1];
	r->n = dims[2];
	fmt_shape(shape, sizeof(shape), r);
	fprintf(stderr, "bench-summary: %s %s\n", s->name, shape);
	if (s->kind == GEMM)
		err = run_gemm(o, r);
	else if (s->kind == EMULATOR)
		err = run_emulator(o, r);
	else
		err = run_layout(o, r);
	if (err) {
		r->outcome = ERROR;
		r->why = strerror(-err);
		fprintf(stderr, "bench-summary: %s %s: %s (%s)\n", s->name, shape, strerror(-err),
			rb_last_error());
		return 3;
	}
	if (r->outcome == BAD)
		fprintf(stderr, "bench-summary: %s %s: %s\n", s->name, shape, r->why);
	return r->outcome == BAD ? 1 : 0;
}

static int parse_number(const char *arg, double lo, double hi, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	return errno || end == arg || *end || !(*v >= lo && *v <= hi) ? -1 : 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {{"quick", no_argument, NULL, 'q'},
					      {"strict", no_argument, NULL, 'S'},
					      {"help", no_argument, NULL, 'h'},
					      {NULL, 0, NULL, 0}};
	double v;
	int opt, threads = 0, pairs = -1;

	o->min_time_s = -1;
	while ((opt = getopt_long(argc, argv, "t:r:s:o:h", longs, NULL)) != -1) {
		if (opt == 't' && !parse_number(optarg, 0, 1024, &v) && v == (int)v)
			threads = (int)v;
		else if (opt == 'r' && !parse_number(optarg, 1, MAX_PAIRS, &v) && v == (int)v)
			pairs = (int)v;
		else if (opt == 's' && !parse_number(optarg, 0, 600, &v))
			o->min_time_s = v;
		else if (opt == 'o')
			o->out = optarg;
		else if (opt == 'q')
			o->quick = true;
		else if (opt == 'S')
			o->strict = true;
		else
			return -1;
	}
	o->threads = rb_ref_threads(threads);
	o->pairs = pairs > 0 ? pairs : o->quick ? 1 : 9;
	if (o->min_time_s < 0)
		o->min_time_s = o->quick ? 0 : 1.0;
	return optind == argc ? 0 : -1;
}

#ifdef RB_HAVE_OPENBLAS
/* OpenBLAS's idle workers spin for about 2^28 cycles (0.1 s) after each call before they
 * sleep, on the CPUs the next run of ours needs: measured here, that took the GEMV of
 * ours from 28 to 50 ms. OPENBLAS_THREAD_TIMEOUT=4 (its least, 2^4 cycles) makes them
 * sleep at once, unless the caller set it. Waking its workers costs OpenBLAS
 * microseconds per call, as starting ours costs us: run back to back on their own, its
 * calls took the same time either way (here sgemm 512x2048x8192 min 165-170 ms, sgemv
 * 1x2048x128256 83-104 ms, with and without). */
static bool set_blas_timeout(void)
{
	return !getenv("OPENBLAS_THREAD_TIMEOUT") && setenv("OPENBLAS_THREAD_TIMEOUT", "4", 1) == 0;
}

/* OpenBLAS built with DYNAMIC_ARCH picks its kernels by the CPU's family and model, and
 * a model newer than the library gets its generic x86-64 kernels, "Prescott": 0.3.21
 * took an Emerald Rapids Xeon (family 6, model 207) for one, and its sgemm 512x2048x8192
 * ran at 554 ms there against 91 ms with OPENBLAS_CORETYPE=SkylakeX. So slow a baseline
 * would flatter ours: unless the caller chose a core, the program asks for the best
 * kernels OpenBLAS has for the features this CPU reports. */
static const char *blas_better_core(void)
{
#if defined(__x86_64__)
	const char *core = openblas_get_corename();

	if (getenv("OPENBLAS_CORETYPE") || !core || strcmp(core, "Prescott") != 0)
		return NULL;
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
	    __builtin_cpu_supports("avx512cd"))
		return "SkylakeX";
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return "Haswell";
#endif
	return NULL;
}
#endif

/* Both variables are read when OpenBLAS is loaded, so the program runs itself again
 * with them set; BENCH_CORETYPE_FROM records for the header which core OpenBLAS had
 * chosen on its own. */
static void set_blas_environment(char **argv, int threads)
{
#ifdef RB_HAVE_OPENBLAS
	const char *core = blas_better_core();
	bool again = set_blas_timeout();

	if (core && setenv("OPENBLAS_CORETYPE", core, 1) == 0 &&
	    setenv("BENCH_CORETYPE_FROM", openblas_get_corename(), 1) == 0)
		again = true;
	if (again)
		execv("/proc/self/exe", argv);
	if (again || core)
		fprintf(stderr,
			"bench-summary: warning: cannot run again with OpenBLAS's settings "
			"(%s): its spinning workers may slow the runs of ours, or its kernels "
			"not be the best for this CPU\n",
			strerror(errno));
	openblas_set_num_threads(threads);
#else
	(void)argv;
	(void)threads;
#endif
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct row rows[N_ROWS] = {{0}};
	struct doc d = {.o = &o, .rows = rows};
	int status = 0;

	if (parse_options(argc, argv, &o)) {
		fprintf(stderr, "usage: bench-summary [-t THREADS] [-r PAIRS] [-s SECONDS] "
				"[-o FILE] [--quick] [--strict]\n");
		return 2;
	}
	set_blas_environment(argv, o.threads);
	rb_context_collect(&d.ctx);
	read_load(d.load, sizeof(d.load));
	blas_name(d.blas, sizeof(d.blas));
	for (size_t i = 0; i < N_ROWS; i++) {
		int ret;

		rows[i].spec = &specs[i];
		ret = run_row(&o, &rows[i]);
		status = ret > status ? ret : status;
		if (o.strict && ret == 0 && rows[i].outcome == MEASURED && !met(&rows[i]))
			status = status ? status : 1;
	}
	if (doc_write(stdout, &d) || fflush(stdout))
		return 2;
	if (o.out && rb_file_write_atomic(o.out, doc_write, &d)) {
		fprintf(stderr, "bench-summary: cannot write '%s': %s\n", o.out, rb_last_error());
		return 2;
	}
	return status;
}
