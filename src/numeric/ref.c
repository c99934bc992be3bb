/* CPU reference GEMM (see ref.h), driving the kernels of one ISA family
 * (ref_kernels.h: ref_generic.c, ref_x86.c, ref_neon.c).
 *
 * The blocked path follows the usual three-level scheme: a KC×NC panel of B and an
 * MC×KC block of A are packed (converted to fp32, for int8 too) into buffers laid
 * out in the order the MR×NR micro-kernel reads them, so the kernel
 * streams both with unit stride from L1/L2. The generic micro-kernels use GCC vector
 * extensions; on x86 an AVX2/FMA build of the same source, or AVX-512 kernels with their
 * own blocking (fp32 FMA for fp16, VNNI for int8, packed as bytes), are picked at run
 * time, so no -march flag is needed. Each thread owns a rectangle of C and its own
 * buffers: no locks, no barriers.
 *
 * M = 1 is a matrix-vector product limited by reading B once; it gets its own path
 * that converts B's rows on the fly and gives each thread a slice of N.
 *
 * int8: sums are accumulated in 32-bit unsigned arithmetic, i.e. modulo 2^32 like a
 * hardware int32 accumulator, and without C's signed-overflow undefined behaviour.
 * |a·b| <= 2^14, so the result is the exact sum for K <= 2^17 = 131072; beyond that
 * it wraps as int32 hardware does. (The generic blocked kernel computes KC-deep partial
 * sums in fp32, exactly: see kernel_i32_body; the VNNI one adds in int32 lanes modulo
 * 2^32: see kernel_i8_vnni.) */
#include "numeric/ref.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fp16.h"
#include "numeric/ref_kernels.h"

#define RB_REF_MAX_THREADS 256
/* Below this many multiply-adds per thread, starting a thread costs more than it saves. */
#define MIN_MACS_PER_THREAD (INT64_C(1) << 15)
/* Columns handled per pass of the M = 1 path. Each row of B is read as one run of
 * 2 * GEMV_CHUNK bytes (64 KiB for fp16): long enough for the hardware prefetcher to
 * stream it, while the chunk's fp32 sums (128 KiB) stay in L2. 2048 columns (sums in L1,
 * 4 KiB runs of B) was about half as fast on a Zen 4 VM (issue 15's measurement; bench/ref.c
 * times GEMV against memcpy). The chunk only
 * cuts columns: each sum still adds its K products in order, so results do not change. */
#define GEMV_CHUNK 32768
/* GEMV slices are multiples of this many columns, so threads never share a line of B. */
#define GEMV_ALIGN 64

/* Kernel families, best last. On aarch64 only IMPL_PORTABLE and IMPL_NEON apply. */
enum impl { IMPL_AUTO, IMPL_PORTABLE, IMPL_AVX2, IMPL_AVX512, IMPL_NEON };

static atomic_int forced_impl; /* IMPL_AUTO: the best this CPU has */

static enum impl best_impl(void)
{
#if defined(RB_REF_X86)
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
		return IMPL_AVX512;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return IMPL_AVX2;
	return IMPL_PORTABLE;
#elif defined(RB_REF_NEON)
	return IMPL_NEON;
#else
	return IMPL_PORTABLE;
#endif
}

static enum impl use_impl(void)
{
	int forced = atomic_load_explicit(&forced_impl, memory_order_relaxed);

	return forced != IMPL_AUTO ? (enum impl)forced : best_impl();
}

#if defined(RB_REF_X86)
/* The int8 AVX-512 kernel needs VNNI on top; without it int8 uses the AVX2 kernels. */
static bool use_vnni(void)
{
	return use_impl() == IMPL_AVX512 && __builtin_cpu_supports("avx512vnni");
}

static bool use_avx2(void)
{
	return use_impl() == IMPL_AVX2 || use_impl() == IMPL_AVX512;
}
#else
static bool use_vnni(void)
{
	return false;
}
#endif

static const char *const impl_names[] = {[IMPL_PORTABLE] = "portable",
					 [IMPL_AVX2] = "avx2+fma",
					 [IMPL_AVX512] = "avx512",
					 [IMPL_NEON] = "neon"};

const char *rb_ref_impl(void)
{
	if (use_vnni())
		return "avx512+vnni";
	return impl_names[use_impl()];
}

void rb_ref_force_portable(int on)
{
	atomic_store(&forced_impl, on ? IMPL_PORTABLE : IMPL_AUTO);
}

int rb_ref_force_impl(const char *name)
{
	if (!name) {
		atomic_store(&forced_impl, IMPL_AUTO);
		return 0;
	}
	for (int i = IMPL_PORTABLE; i <= IMPL_NEON; i++) {
		if (strcmp(name, impl_names[i]) != 0)
			continue;
		/* A family this CPU lacks, or one that is not built here. */
		if (i != IMPL_PORTABLE && i != (int)best_impl() &&
		    !(i == IMPL_AVX2 && best_impl() == IMPL_AVX512))
			return -ENOTSUP;
		atomic_store(&forced_impl, i);
		return 0;
	}
	return -EINVAL;
}

int rb_ref_threads(int threads)
{
	long n = threads;

	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	if (n > RB_REF_MAX_THREADS)
		n = RB_REF_MAX_THREADS;
	return (int)n;
}

/* ---- naive oracle and single elements ---------------------------------------- */

/* Every fp16 value as float, made once by the scalar conversion: the naive loop looks
 * its B elements up (one load instead of a branchy conversion per element; the same
 * values, so the same bits). */
static float naive_f16[1 << 16];
static pthread_once_t naive_f16_once = PTHREAD_ONCE_INIT;

static void naive_f16_init(void)
{
	for (uint32_t h = 0; h < 1u << 16; h++)
		naive_f16[h] = rb_fp16_to_f32((uint16_t)h);
}

void rb_ref_naive_f16(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t k,
		      int64_t n)
{
	pthread_once(&naive_f16_once, naive_f16_init);
	for (int64_t i = 0; i < m; i++) {
		float *ci = c + i * n;

		for (int64_t j = 0; j < n; j++)
			ci[j] = 0.0f;
		for (int64_t p = 0; p < k; p++) {
			float av = naive_f16[a[i * k + p]];
			const uint16_t *bp = b + p * n;

			for (int64_t j = 0; j < n; j++)
				ci[j] += av * naive_f16[bp[j]];
		}
	}
}

void rb_ref_naive_i8(const int8_t *a, const int8_t *b, int32_t *c, int64_t m, int64_t k, int64_t n)
{
	for (int64_t i = 0; i < m; i++) {
		int32_t *ci = c + i * n;

		for (int64_t j = 0; j < n; j++)
			ci[j] = 0;
		for (int64_t p = 0; p < k; p++) {
			uint32_t av = (uint32_t)a[i * k + p];
			const int8_t *bp = b + p * n;

			for (int64_t j = 0; j < n; j++)
				ci[j] = (int32_t)((uint32_t)ci[j] + av * (uint32_t)bp[j]);
		}
	}
}

/* Same operations in the same order as rb_ref_naive_f16, so the same bits. */
float rb_ref_dot_f16(const uint16_t *a, const uint16_t *b, int64_t k, int64_t n, int64_t i,
		     int64_t j)
{
	float acc = 0.0f;

	for (int64_t p = 0; p < k; p++)
		acc += rb_fp16_to_f32(a[i * k + p]) * rb_fp16_to_f32(b[p * n + j]);
	return acc;
}

int32_t rb_ref_dot_i8(const int8_t *a, const int8_t *b, int64_t k, int64_t n, int64_t i, int64_t j)
{
	uint32_t acc = 0;

	for (int64_t p = 0; p < k; p++)
		acc += (uint32_t)a[i * k + p] * (uint32_t)b[p * n + j];
	return (int32_t)acc;
}

/* ---- blocked driver ------------------------------------------------------------------ */

struct gemm_args {
	const struct gemm_ops *ops;
	const void *a, *b;
	void *c; /* 4-byte elements (float or int32) */
	int64_t m, k, n;
};

/* One thread's share: C[m0..m1) × [n0..n1), with its own buffers. */
struct gemm_task {
	const struct gemm_args *args;
	int64_t m0, m1, n0, n1;
	void *buf;
	void *pa, *pb;
	float *row;
	pthread_t tid;
	int started;
};

static const char *elem_at(const void *base, int64_t index, size_t size)
{
	return (const char *)base + (size_t)index * size;
}

static void macro_kernel(const struct gemm_args *g, const struct gemm_task *t, int64_t ic,
			 int64_t mc, int64_t pc, int64_t kc, int64_t jc, int64_t nc)
{
	const struct gemm_ops *o = g->ops;
	const char *pa = t->pa, *pb = t->pb;
	char *c = (char *)g->c + (size_t)(ic * g->n + jc) * 4;
	size_t sa = strip_a_bytes(o, kc), sb = strip_b_bytes(o, kc);

	if (o->a_in_l1) {
		for (int64_t ir = 0; ir < mc; ir += o->mr)
			for (int64_t jr = 0; jr < nc; jr += o->nr)
				o->kernel(kc, pa + (size_t)(ir / o->mr) * sa,
					  pb + (size_t)(jr / o->nr) * sb,
					  c + (size_t)(ir * g->n + jr) * 4, g->n,
					  (int)min64(o->mr, mc - ir), (int)min64(o->nr, nc - jr),
					  pc > 0);
		return;
	}
	for (int64_t jr = 0; jr < nc; jr += o->nr)
		for (int64_t ir = 0; ir < mc; ir += o->mr)
			o->kernel(kc, pa + (size_t)(ir / o->mr) * sa,
				  pb + (size_t)(jr / o->nr) * sb, c + (size_t)(ir * g->n + jr) * 4,
				  g->n, (int)min64(o->mr, mc - ir), (int)min64(o->nr, nc - jr),
				  pc > 0);
}

/* For kernels with A's strip in L1: A's block is packed once per KC step and every
 * panel of B swept past it, so with MC >= the task's rows each operand is packed once. */
static void run_blocked_a_outer(struct gemm_task *t)
{
	const struct gemm_args *g = t->args;
	const struct gemm_ops *o = g->ops;
	size_t es = o->in_size;

	for (int64_t pc = 0; pc < g->k; pc += o->kc) {
		int64_t kc = min64(o->kc, g->k - pc);

		for (int64_t ic = t->m0; ic < t->m1; ic += o->mc) {
			int64_t mc = min64(o->mc, t->m1 - ic);

			o->pack_a(o, t->pa, elem_at(g->a, ic * g->k + pc, es), g->k, mc, kc,
				  t->row);
			for (int64_t jc = t->n0; jc < t->n1; jc += o->nc) {
				int64_t nc = min64(o->nc, t->n1 - jc);

				o->pack_b(o, t->pb, elem_at(g->b, pc * g->n + jc, es), g->n, kc, nc,
					  t->row);
				macro_kernel(g, t, ic, mc, pc, kc, jc, nc);
			}
		}
	}
}

static void *run_blocked(void *arg)
{
	struct gemm_task *t = arg;
	const struct gemm_args *g = t->args;
	const struct gemm_ops *o = g->ops;
	size_t es = o->in_size;

	if (o->a_in_l1) {
		run_blocked_a_outer(t);
		return NULL;
	}
	for (int64_t jc = t->n0; jc < t->n1; jc += o->nc) {
		int64_t nc = min64(o->nc, t->n1 - jc);

		for (int64_t pc = 0; pc < g->k; pc += o->kc) {
			int64_t kc = min64(o->kc, g->k - pc);

			o->pack_b(o, t->pb, elem_at(g->b, pc * g->n + jc, es), g->n, kc, nc,
				  t->row);
			for (int64_t ic = t->m0; ic < t->m1; ic += o->mc) {
				int64_t mc = min64(o->mc, t->m1 - ic);

				o->pack_a(o, t->pa, elem_at(g->a, ic * g->k + pc, es), g->k, mc, kc,
					  t->row);
				macro_kernel(g, t, ic, mc, pc, kc, jc, nc);
			}
		}
	}
	return NULL;
}

static void *run_gemv(void *arg)
{
	struct gemm_task *t = arg;
	const struct gemm_args *g = t->args;
	size_t es = g->ops->in_size;

	for (int64_t j = t->n0; j < t->n1; j += GEMV_CHUNK) {
		int64_t w = min64(GEMV_CHUNK, t->n1 - j);
		char *c = (char *)g->c + (size_t)j * 4;

		g->ops->gemv(g->a, elem_at(g->b, j, es), g->n, g->k, w, c, t->row);
	}
	return NULL;
}

/* Runs tasks 1..count-1 on new threads and task 0 on this one. A thread that cannot be
 * created has its task run here instead: slower, same result. */
static void run_tasks(struct gemm_task *tasks, int count, void *(*fn)(void *))
{
	for (int i = 1; i < count; i++)
		tasks[i].started = pthread_create(&tasks[i].tid, NULL, fn, &tasks[i]) == 0;
	fn(&tasks[0]);
	for (int i = 1; i < count; i++) {
		if (tasks[i].started)
			pthread_join(tasks[i].tid, NULL);
		else
			fn(&tasks[i]);
	}
}

static void *alloc_aligned(size_t size)
{
	size = (size + 63) & ~(size_t)63;
	return aligned_alloc(64, size ? size : 64);
}

static int alloc_task(struct gemm_task *t, const struct gemm_ops *o, int64_t k, int gemv)
{
	int64_t rows = min64(o->mc, t->m1 - t->m0), cols = min64(o->nc, t->n1 - t->n0);
	int64_t kc = min64(o->kc, k);
	size_t pa = gemv ? 0 : (size_t)DIV_UP(rows, o->mr) * strip_a_bytes(o, kc);
	size_t pb = gemv ? 0 : (size_t)DIV_UP(cols, o->nr) * strip_b_bytes(o, kc);
	/* One converted row: of a GEMV chunk, of B's panel or of A's block. */
	int64_t row_len = gemv ? min64(GEMV_CHUNK, t->n1 - t->n0) : cols > kc ? cols : kc;
	size_t row = (size_t)row_len * 4;

	pa = (pa + 63) & ~(size_t)63;
	pb = (pb + 63) & ~(size_t)63;
	t->buf = alloc_aligned(pa + pb + row);
	if (!t->buf)
		return -ENOMEM;
	t->pa = t->buf;
	t->pb = (char *)t->buf + pa;
	t->row = (float *)(void *)((char *)t->buf + pa + pb);
	return 0;
}

static void free_tasks(struct gemm_task *tasks, int count)
{
	for (int i = 0; i < count; i++)
		free(tasks[i].buf);
	free(tasks);
}

/* Cost of one thread's rectangle in multiply-add equivalents: the tiles it computes
 * (padding included) plus what it packs; a packed element costs about as much as 16
 * multiply-adds. Redundant packing is what a bad split pays for. */
static double split_cost(const struct gemm_args *g, int tm, int tn)
{
	const struct gemm_ops *o = g->ops;
	double rows = (double)(DIV_UP(DIV_UP(g->m, o->mr), tm) * o->mr);
	double cols = (double)(DIV_UP(DIV_UP(g->n, o->nr), tn) * o->nr);
	double k = (double)g->k;
	double packed = o->a_in_l1 ? rows * k + cols * k * (double)DIV_UP((int64_t)rows, o->mc)
				   : rows * k * (double)DIV_UP((int64_t)cols, o->nc) + cols * k;

	return rows * cols * k + 16 * packed;
}

/* Picks a tm×tn grid of at most `threads` rectangles with the lowest per-thread cost. */
static void choose_grid(const struct gemm_args *g, int threads, int *tm, int *tn)
{
	double best = -1;

	for (int rm = 1; rm <= threads; rm++) {
		int cn = threads / rm;
		double cost;

		if (rm > DIV_UP(g->m, g->ops->mr) || cn > DIV_UP(g->n, g->ops->nr))
			continue;
		cost = split_cost(g, rm, cn);
		if (best < 0 || cost < best) {
			best = cost;
			*tm = rm;
			*tn = cn;
		}
	}
	if (best < 0) {
		*tm = 1;
		*tn = 1;
	}
}

/* Range g of `parts` equal shares of `units` units of `unit` elements, clipped to len. */
static void share(int64_t len, int64_t unit, int parts, int g, int64_t *lo, int64_t *hi)
{
	int64_t units = DIV_UP(len, unit);

	*lo = min64(len, units * g / parts * unit);
	*hi = min64(len, units * (g + 1) / parts * unit);
}

static int limit_threads(const struct gemm_args *g, int threads)
{
	double most = (double)g->m * (double)g->n * (double)g->k / MIN_MACS_PER_THREAD;

	if (most < 1)
		return 1;
	return most < threads ? (int)most : threads;
}

/* The tasks of a tm x tn grid, *count of them; NULL when out of memory. */
static struct gemm_task *plan_tasks(const struct gemm_args *g, int threads, int *count)
{
	int gemv = g->m == 1, tm = 1, tn = 1;
	struct gemm_task *tasks;

	if (gemv)
		tn = (int)min64(threads, DIV_UP(g->n, GEMV_ALIGN));
	else
		choose_grid(g, threads, &tm, &tn);
	tasks = calloc((size_t)(tm * tn), sizeof(*tasks));
	if (!tasks)
		return NULL;
	for (int i = 0; i < tm * tn; i++) {
		tasks[i].args = g;
		share(g->m, g->ops->mr, tm, i / tn, &tasks[i].m0, &tasks[i].m1);
		share(g->n, gemv ? GEMV_ALIGN : g->ops->nr, tn, i % tn, &tasks[i].n0, &tasks[i].n1);
		if (alloc_task(&tasks[i], g->ops, g->k, gemv)) {
			free_tasks(tasks, i + 1);
			return NULL;
		}
	}
	*count = tm * tn;
	return tasks;
}

static int check_dims(int64_t m, int64_t k, int64_t n)
{
	if (m < 1 || k < 1 || n < 1)
		return rb_set_error(-EINVAL,
				    "invalid gemm shape %lldx%lldx%lld: every dimension must be "
				    "at least 1",
				    (long long)m, (long long)k, (long long)n);
	return 0;
}

static int run_gemm(const struct gemm_args *g, int threads)
{
	struct gemm_task *tasks;
	int count = check_dims(g->m, g->k, g->n);

	if (count)
		return count;
	tasks = plan_tasks(g, limit_threads(g, rb_ref_threads(threads)), &count);
	if (!tasks)
		return rb_set_error(-ENOMEM, "out of memory for the reference gemm %lldx%lldx%lld",
				    (long long)g->m, (long long)g->k, (long long)g->n);
	run_tasks(tasks, count, g->m == 1 ? run_gemv : run_blocked);
	free_tasks(tasks, count);
	return 0;
}

/* Blocking and layout of the generic kernels (filled in per dtype). */

/* The generic kernels, then the best this CPU has (or the family forced). */
static void pick_f16_ops(struct gemm_ops *ops)
{
	rb_ref_generic_f16_ops(ops);
#if defined(RB_REF_X86)
	rb_ref_x86_f16_ops(ops, use_avx2(), use_impl() == IMPL_AVX512,
			   strcmp(rb_fp16_impl(), "f16c") == 0);
#elif defined(RB_REF_NEON)
	if (use_impl() == IMPL_NEON)
		rb_ref_neon_f16_ops(ops);
#endif
}

static void pick_i8_ops(struct gemm_ops *ops)
{
	rb_ref_generic_i8_ops(ops);
#if defined(RB_REF_X86)
	rb_ref_x86_i8_ops(ops, use_avx2(), use_vnni());
#elif defined(RB_REF_NEON)
	if (use_impl() == IMPL_NEON)
		rb_ref_neon_i8_ops(ops);
#endif
}

int rb_ref_gemm_f16(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t k, int64_t n,
		    int threads)
{
	struct gemm_ops ops;
	struct gemm_args g = {&ops, a, b, c, m, k, n};
	float *af = NULL;
	int err;

	pick_f16_ops(&ops);
	if (m == 1 && k > 0) {
		/* The GEMV kernels take A already in fp32: convert it once for all threads. */
		af = malloc((size_t)k * sizeof(*af));
		if (!af)
			return rb_set_error(-ENOMEM,
					    "out of memory for the reference gemm "
					    "%lldx%lldx%lld",
					    (long long)m, (long long)k, (long long)n);
		rb_fp16_to_f32_array(af, a, (size_t)k);
		g.a = af;
	}
	err = run_gemm(&g, threads);
	free(af);
	return err;
}

int rb_ref_gemm_i8(const int8_t *a, const int8_t *b, int32_t *c, int64_t m, int64_t k, int64_t n,
		   int threads)
{
	struct gemm_ops ops;
	struct gemm_args g = {&ops, a, b, c, m, k, n};

	pick_i8_ops(&ops);
	return run_gemm(&g, threads);
}

int rb_ref_gemm(const struct rb_shape *shape, const void *a, const void *b, void *c, int threads)
{
	switch (shape->dtype) {
	case RB_DTYPE_FP16:
		return rb_ref_gemm_f16(a, b, c, shape->m, shape->k, shape->n, threads);
	case RB_DTYPE_INT8:
		return rb_ref_gemm_i8(a, b, c, shape->m, shape->k, shape->n, threads);
	}
	return rb_set_error(-EINVAL, "unknown dtype %d for the reference gemm", (int)shape->dtype);
}
