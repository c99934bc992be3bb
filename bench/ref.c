/* bench-ref: speed of the CPU reference GEMM (src/numeric/ref.c).
 *
 * For each shape and dtype: the blocked GEMM's median time and GFLOP/s, the naive
 * triple loop's GFLOP/s in the same run and their ratio; for M = 1 also the GB/s over
 * B against memcpy over a buffer of B's size. The result is checked against the naive
 * loop before anything is timed.
 *
 * Usage: bench-ref [-t THREADS]   (default: one thread per online CPU)
 * Exit status: 0, or 1 when a result does not verify. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "core/fp16.h"
#include "numeric/ref.h"
#include "core/stats.h"

struct bench_shape {
	int64_t m, k, n;
};

static const struct bench_shape shapes[] = {
    {1, 2048, 8192},
    {128, 2048, 2048},
    {512, 2048, 8192},
};

/* Samples of the blocked GEMM: at least MIN_SAMPLES and MIN_TIME_US of them. */
#define MIN_SAMPLES 5
#define MAX_SAMPLES 50
#define MIN_TIME_US 300000.0
/* The naive loop runs on the first rows of M only, about this many multiply-adds. */
#define NAIVE_MACS     (INT64_C(1) << 26)
#define NAIVE_SAMPLES  3
#define TARGET_SPEEDUP 20.0
#define TARGET_GEMV    0.60

struct operands {
	enum rb_dtype dtype;
	struct bench_shape s;
	void *a, *b, *c, *want;
};

struct result {
	double blocked_us, naive_us;
	int64_t naive_rows;
	double gemv_gbs, memcpy_gbs;
	int verified;
};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static volatile char sink;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 32);
}

static void fill_operands(struct operands *op)
{
	size_t na = (size_t)(op->s.m * op->s.k), nb = (size_t)(op->s.k * op->s.n);

	if (op->dtype == RB_DTYPE_INT8) {
		for (size_t i = 0; i < na; i++)
			((int8_t *)op->a)[i] = (int8_t)next_rand();
		for (size_t i = 0; i < nb; i++)
			((int8_t *)op->b)[i] = (int8_t)next_rand();
		return;
	}
	for (size_t i = 0; i < na; i++)
		((uint16_t *)op->a)[i] =
		    rb_fp16_from_f32((float)next_rand() / 4294967296.0f - 0.5f);
	for (size_t i = 0; i < nb; i++)
		((uint16_t *)op->b)[i] =
		    rb_fp16_from_f32((float)next_rand() / 4294967296.0f - 0.5f);
}

static int alloc_operands(struct operands *op)
{
	size_t in = op->dtype == RB_DTYPE_INT8 ? 1 : 2;

	op->a = malloc((size_t)(op->s.m * op->s.k) * in);
	op->b = malloc((size_t)(op->s.k * op->s.n) * in);
	op->c = malloc((size_t)(op->s.m * op->s.n) * 4);
	op->want = malloc((size_t)(op->s.m * op->s.n) * 4);
	if (!op->a || !op->b || !op->c || !op->want)
		return -ENOMEM;
	fill_operands(op);
	return 0;
}

static void free_operands(struct operands *op)
{
	free(op->a);
	free(op->b);
	free(op->c);
	free(op->want);
}

static int run_blocked(const struct operands *op, int threads)
{
	struct rb_shape shape = {op->s.m, op->s.k, op->s.n, op->dtype};

	return rb_ref_gemm(&shape, op->a, op->b, op->c, threads);
}

static void run_naive(const struct operands *op, int64_t rows)
{
	if (op->dtype == RB_DTYPE_INT8)
		rb_ref_naive_i8(op->a, op->b, op->want, rows, op->s.k, op->s.n);
	else
		rb_ref_naive_f16(op->a, op->b, op->want, rows, op->s.k, op->s.n);
}

/* The first `rows` rows of C against the naive loop: int8 exactly, fp16 within the
 * difference fp32 summation order can make. */
static int verify(const struct operands *op, int64_t rows)
{
	size_t n = (size_t)(rows * op->s.n);

	if (op->dtype == RB_DTYPE_INT8)
		return memcmp(op->c, op->want, n * 4) == 0;
	for (size_t i = 0; i < n; i++) {
		float got = ((float *)op->c)[i], want = ((float *)op->want)[i];

		if (!(fabsf(got - want) <= 1e-6f * (float)op->s.k + 1e-5f * fabsf(want)))
			return 0;
	}
	return 1;
}

static int time_blocked(const struct operands *op, int threads, double *median_us)
{
	double samples[MAX_SAMPLES], total = 0;
	int n = 0, err = run_blocked(op, threads); /* warm-up: page faults, caches */

	while (!err && n < MAX_SAMPLES && (n < MIN_SAMPLES || total < MIN_TIME_US)) {
		double t0 = rb_now_us();

		err = run_blocked(op, threads);
		samples[n] = rb_now_us() - t0;
		total += samples[n++];
	}
	if (!err)
		*median_us = bench_median(samples, n);
	return err;
}

static double time_naive(const struct operands *op, int64_t rows)
{
	double samples[NAIVE_SAMPLES];

	for (int i = 0; i < NAIVE_SAMPLES; i++) {
		double t0 = rb_now_us();

		run_naive(op, rows);
		samples[i] = rb_now_us() - t0;
	}
	return bench_median(samples, NAIVE_SAMPLES);
}

/* memcpy of `bytes` from one buffer to another, in GB/s of bytes copied. */
static double memcpy_gbs(size_t bytes)
{
	char *src = malloc(bytes), *dst = malloc(bytes);
	double samples[15];

	if (!src || !dst) {
		free(src);
		free(dst);
		return NAN;
	}
	memset(src, 1, bytes);
	memset(dst, 2, bytes);
	for (int i = 0; i < 15; i++) {
		double t0 = rb_now_us();

		memcpy(dst, src, bytes);
		samples[i] = rb_now_us() - t0;
		sink = dst[(size_t)i * 4099 % bytes]; /* the copy is used: it cannot be dropped */
	}
	free(src);
	free(dst);
	return (double)bytes / bench_median(samples, 15) / 1e3;
}

static int64_t naive_rows(const struct bench_shape *s)
{
	int64_t rows = NAIVE_MACS / (s->k * s->n);

	if (rows < 1)
		rows = 1;
	return rows < s->m ? rows : s->m;
}

static int bench_one(struct operands *op, int threads, struct result *r)
{
	size_t b_bytes = (size_t)(op->s.k * op->s.n) * (op->dtype == RB_DTYPE_INT8 ? 1 : 2);
	int err;

	memset(r, 0, sizeof(*r));
	r->naive_rows = naive_rows(&op->s);
	err = run_blocked(op, threads);
	if (err)
		return err;
	run_naive(op, r->naive_rows);
	r->verified = verify(op, r->naive_rows);
	err = time_blocked(op, threads, &r->blocked_us);
	if (err)
		return err;
	r->naive_us = time_naive(op, r->naive_rows);
	if (op->s.m == 1) {
		r->gemv_gbs = (double)b_bytes / r->blocked_us / 1e3;
		r->memcpy_gbs = memcpy_gbs(b_bytes);
	}
	return 0;
}

static double gflops(int64_t m, int64_t k, int64_t n, double us)
{
	return 2.0 * (double)m * (double)k * (double)n / us / 1e3;
}

static void print_row(const struct operands *op, const struct result *r)
{
	const struct bench_shape *s = &op->s;
	double fast = gflops(s->m, s->k, s->n, r->blocked_us);
	double slow = gflops(r->naive_rows, s->k, s->n, r->naive_us);
	char name[64];

	snprintf(name, sizeof(name), "%lldx%lldx%lld", (long long)s->m, (long long)s->k,
		 (long long)s->n);
	printf("%-16s %-5s %11.3f %9.2f %9.3f %5lld/%-5lld %8.1fx  %s\n", name,
	       rb_dtype_name(op->dtype), r->blocked_us / 1e3, fast, slow, (long long)r->naive_rows,
	       (long long)s->m, fast / slow, r->verified ? "ok" : "FAIL");
}

static void print_gemv(const struct operands *op, const struct result *r)
{
	double ratio = r->gemv_gbs / r->memcpy_gbs;
	double mib = (double)(op->s.k * op->s.n) * (op->dtype == RB_DTYPE_INT8 ? 1 : 2) / 1048576;

	printf("  GEMV %lldx%lldx%lld %s: %.2f GB/s over B (%.1f MiB); memcpy of %.1f MiB "
	       "(1 thread): %.2f GB/s; ratio %.0f%% (target >= %.0f%%: %s)\n",
	       (long long)op->s.m, (long long)op->s.k, (long long)op->s.n, rb_dtype_name(op->dtype),
	       r->gemv_gbs, mib, mib, r->memcpy_gbs, 100 * ratio, 100 * TARGET_GEMV,
	       ratio >= TARGET_GEMV ? "met" : "MISSED");
}

static void print_header(int threads)
{
	printf("bench-ref: CPU reference GEMM, %d thread(s), kernels %s, fp16 conversion %s\n",
	       threads, rb_ref_impl(), rb_fp16_impl());
	printf("blocked: median of >= %d runs after a warm-up; naive: i-k-j loop, 1 thread, "
	       "median of %d runs timed on the first rows of M only (column 'rows')\n",
	       MIN_SAMPLES, NAIVE_SAMPLES);
	printf("%-16s %-5s %11s %9s %9s %11s %9s  %s\n", "shape MxKxN", "dtype", "blocked ms",
	       "GFLOP/s", "naive", "rows", "speedup", "verify");
}

static void print_targets(double speedup_f16)
{
	printf("target: blocked fp16 (fp32 compute) >= %.0fx naive at 512x2048x8192: %.1fx, "
	       "%s\n",
	       TARGET_SPEEDUP, speedup_f16, speedup_f16 >= TARGET_SPEEDUP ? "met" : "MISSED");
	printf("target: GEMV (M = 1) >= %.0f%% of memcpy bandwidth over B: see GEMV lines\n",
	       100 * TARGET_GEMV);
}

static int bench_shape(const struct bench_shape *s, enum rb_dtype dtype, int threads,
		       double *speedup)
{
	struct operands op = {.dtype = dtype, .s = *s};
	struct result r;
	int err = alloc_operands(&op);

	if (!err)
		err = bench_one(&op, threads, &r);
	if (err) {
		fprintf(stderr, "bench-ref: %s: %s\n", rb_dtype_name(dtype), strerror(-err));
		free_operands(&op);
		return -1;
	}
	print_row(&op, &r);
	if (s->m == 1)
		print_gemv(&op, &r);
	*speedup =
	    gflops(s->m, s->k, s->n, r.blocked_us) / gflops(r.naive_rows, s->k, s->n, r.naive_us);
	fflush(stdout);
	free_operands(&op);
	return r.verified ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const enum rb_dtype dtypes[] = {RB_DTYPE_FP16, RB_DTYPE_INT8};
	double speedup = 0, big_f16 = 0;
	int threads, status = 0;

	if (bench_parse_threads(argc, argv, &threads)) {
		fprintf(stderr, "usage: bench-ref [-t THREADS]\n");
		return 2;
	}
	threads = rb_ref_threads(threads);
	print_header(threads);
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		for (size_t d = 0; d < 2; d++) {
			int ret = bench_shape(&shapes[i], dtypes[d], threads, &speedup);

			if (ret < 0)
				return 1;
			status |= ret;
			if (shapes[i].m == 512 && dtypes[d] == RB_DTYPE_FP16)
				big_f16 = speedup;
		}
	}
	print_targets(big_f16);
	return status;
}
