/* Tests of the CPU reference GEMM: the blocked, threaded path against the naive
 * triple loop on many odd shapes, with every kernel family this machine has (each test
 * runs once per family, forced with rb_ref_force_impl, and is skipped where the CPU
 * lacks it). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/fp16.h"
#include "numeric/ref.h"

struct dims {
	int64_t m, k, n;
};

/* Edges of every block size (generic kernels: MR 6, NR 16, KC 256, MC 96, NC 2048;
 * AVX-512 fp32: MR 14, NR 32, KC 512, MC 896, NC 256; VNNI: MR 12, NR 32, K in groups of
 * 4, KC 512, MC 1020, NC 1024), GEMV shapes (one wider than two GEMV chunks of 32768 columns, with
 * a tail), and shapes bigger than a block in every dimension. */
static const struct dims shapes[] = {
    {1, 1, 1},     {1, 7, 3},       {3, 17, 33},   {17, 65, 129},  {2, 3, 5},      {7, 1, 19},
    {6, 256, 16},  {5, 257, 17},    {13, 31, 1},   {1, 2048, 200}, {1, 33, 4099},  {1, 5, 70},
    {1, 300, 129}, {97, 260, 2065}, {200, 40, 48}, {1, 9, 70001},  {14, 384, 32},  {15, 385, 33},
    {29, 2, 545},  {12, 513, 31},   {25, 6, 64},   {43, 770, 97},  {300, 35, 513}, {13, 1027, 47},
    {1023, 6, 35}, {899, 5, 1030},
};

#define N_SHAPES   (sizeof(shapes) / sizeof(shapes[0]))
#define GUARD      32
#define GUARD_BYTE 0xa5

static uint64_t rng_state = 12345;

static uint32_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return (uint32_t)((z ^ (z >> 31)) >> 32);
}

/* Small integers are exact in fp16, and so are their products and sums here. */
static void fill_f16_ints(uint16_t *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = rb_fp16_from_f32((float)((int)(rnd() % 17) - 8));
}

static void fill_f16_real(uint16_t *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = rb_fp16_from_f32((float)rnd() / 4294967296.0f * 2.0f - 1.0f);
}

static void fill_i8(int8_t *x, size_t n)
{
	for (size_t i = 0; i < n; i++)
		x[i] = (int8_t)(rnd() & 0xff);
}

/* C with guard bytes after it: a write past the end shows up. */
static void *alloc_c(size_t bytes)
{
	unsigned char *c = malloc(bytes + GUARD);

	assert_non_null(c);
	memset(c, 0x5a, bytes);
	memset(c + bytes, GUARD_BYTE, GUARD);
	return c;
}

static void check_guard(const void *c, size_t bytes)
{
	const unsigned char *g = (const unsigned char *)c + bytes;

	for (size_t i = 0; i < GUARD; i++)
		assert_int_equal(g[i], GUARD_BYTE);
}

static const int thread_counts[] = {1, 2, 3, 0};
#define N_THREADS (sizeof(thread_counts) / sizeof(thread_counts[0]))

/* exact: bitwise equality; otherwise |got - want| <= tol·K + tol·|want|. */
static void compare_f32(const float *got, const float *want, size_t n, int64_t k, int exact,
			const struct dims *d, int threads)
{
	const float tol = 2e-6f;

	for (size_t i = 0; i < n; i++) {
		float err = fabsf(got[i] - want[i]);

		if (exact ? got[i] == want[i] : err <= tol * (float)k + tol * fabsf(want[i]))
			continue;
		fail_msg("%lldx%lldx%lld threads %d: C[%zu] = %.9g, want %.9g", (long long)d->m,
			 (long long)d->k, (long long)d->n, threads, i, got[i], want[i]);
	}
}

static void run_f16_shape(const struct dims *d, int exact)
{
	size_t na = (size_t)(d->m * d->k), nb = (size_t)(d->k * d->n), nc = (size_t)(d->m * d->n);
	uint16_t *a = malloc(na * sizeof(*a)), *b = malloc(nb * sizeof(*b));
	float *want = malloc(nc * sizeof(*want));
	float *got = alloc_c(nc * sizeof(*got));

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(want);
	(exact ? fill_f16_ints : fill_f16_real)(a, na);
	(exact ? fill_f16_ints : fill_f16_real)(b, nb);
	rb_ref_naive_f16(a, b, want, d->m, d->k, d->n);
	for (size_t t = 0; t < N_THREADS; t++) {
		memset(got, 0x5a, nc * sizeof(*got));
		assert_int_equal(rb_ref_gemm_f16(a, b, got, d->m, d->k, d->n, thread_counts[t]), 0);
		compare_f32(got, want, nc, d->k, exact, d, thread_counts[t]);
		check_guard(got, nc * sizeof(*got));
	}
	free(a);
	free(b);
	free(want);
	free(got);
}

static void run_i8_shape(const struct dims *d)
{
	size_t na = (size_t)(d->m * d->k), nb = (size_t)(d->k * d->n), nc = (size_t)(d->m * d->n);
	int8_t *a = malloc(na), *b = malloc(nb);
	int32_t *want = malloc(nc * sizeof(*want));
	int32_t *got = alloc_c(nc * sizeof(*got));

	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(want);
	fill_i8(a, na);
	fill_i8(b, nb);
	rb_ref_naive_i8(a, b, want, d->m, d->k, d->n);
	for (size_t t = 0; t < N_THREADS; t++) {
		memset(got, 0x5a, nc * sizeof(*got));
		assert_int_equal(rb_ref_gemm_i8(a, b, got, d->m, d->k, d->n, thread_counts[t]), 0);
		assert_memory_equal(got, want, nc * sizeof(*got));
		check_guard(got, nc * sizeof(*got));
	}
	free(a);
	free(b);
	free(want);
	free(got);
}

/* Nonzero while the family a test was set up for is missing here: the test skips. */
static int family_missing;

#define SKIP_IF_MISSING()                                                                          \
	do {                                                                                       \
		if (family_missing)                                                                \
			skip();                                                                    \
	} while (0)

static int setup_portable(void **state)
{
	(void)state;
	rb_ref_force_portable(1);
	return 0;
}

static int setup_avx2(void **state)
{
	(void)state;
	family_missing = rb_ref_force_impl("avx2+fma") != 0;
	return 0;
}

static int setup_avx512(void **state)
{
	(void)state;
	family_missing = rb_ref_force_impl("avx512") != 0;
	return 0;
}

static int teardown_auto(void **state)
{
	(void)state;
	family_missing = 0;
	return rb_ref_force_impl(NULL);
}

static void test_f16_exact_ints(void **state)
{
	(void)state;
	SKIP_IF_MISSING();
	for (size_t i = 0; i < N_SHAPES; i++)
		run_f16_shape(&shapes[i], 1);
}

static void test_f16_real(void **state)
{
	(void)state;
	SKIP_IF_MISSING();
	for (size_t i = 0; i < N_SHAPES; i++)
		run_f16_shape(&shapes[i], 0);
}

static void test_i8_exact(void **state)
{
	(void)state;
	SKIP_IF_MISSING();
	for (size_t i = 0; i < N_SHAPES; i++)
		run_i8_shape(&shapes[i]);
}

/* The extreme int8 values: K·(-128)·(-128) goes past INT32_MAX once K > 131072, and
 * then every path must wrap the same way, modulo 2^32. */
static void test_i8_extremes_and_wrap(void **state)
{
	static const struct dims d[] = {{1, 131073, 3}, {7, 131073, 2}, {9, 4096, 20}};

	(void)state;
	SKIP_IF_MISSING();
	for (size_t s = 0; s < sizeof(d) / sizeof(d[0]); s++) {
		size_t na = (size_t)(d[s].m * d[s].k), nb = (size_t)(d[s].k * d[s].n);
		size_t nc = (size_t)(d[s].m * d[s].n);
		int8_t *a = malloc(na), *b = malloc(nb);
		int32_t *want = malloc(nc * sizeof(*want)), *got = malloc(nc * sizeof(*got));

		assert_true(a && b && want && got);
		memset(a, 0x80, na);
		memset(b, 0x80, nb);
		rb_ref_naive_i8(a, b, want, d[s].m, d[s].k, d[s].n);
		assert_int_equal(rb_ref_gemm_i8(a, b, got, d[s].m, d[s].k, d[s].n, 2), 0);
		assert_memory_equal(got, want, nc * sizeof(*got));
		assert_int_equal(got[0], (int32_t)(uint32_t)((uint64_t)d[s].k * 16384u));
		assert_int_equal(rb_ref_dot_i8(a, b, d[s].k, d[s].n, 0, 0), want[0]);
		free(a);
		free(b);
		free(want);
		free(got);
	}
}

static void test_dot_matches_naive(void **state)
{
	const struct dims d = {19, 77, 45};
	size_t na = (size_t)(d.m * d.k), nb = (size_t)(d.k * d.n), nc = (size_t)(d.m * d.n);
	uint16_t *ah = malloc(na * 2), *bh = malloc(nb * 2);
	int8_t *ai = malloc(na), *bi = malloc(nb);
	float *cf = malloc(nc * sizeof(*cf));
	int32_t *ci = malloc(nc * sizeof(*ci));

	(void)state;
	assert_true(ah && bh && ai && bi && cf && ci);
	fill_f16_real(ah, na);
	fill_f16_real(bh, nb);
	fill_i8(ai, na);
	fill_i8(bi, nb);
	rb_ref_naive_f16(ah, bh, cf, d.m, d.k, d.n);
	rb_ref_naive_i8(ai, bi, ci, d.m, d.k, d.n);
	for (int64_t i = 0; i < d.m; i++) {
		for (int64_t j = 0; j < d.n; j++) {
			float df = rb_ref_dot_f16(ah, bh, d.k, d.n, i, j);

			assert_memory_equal(&df, &cf[i * d.n + j], sizeof(df));
			assert_int_equal(rb_ref_dot_i8(ai, bi, d.k, d.n, i, j), ci[i * d.n + j]);
		}
	}
	free(ah);
	free(bh);
	free(ai);
	free(bi);
	free(cf);
	free(ci);
}

static void test_dispatch_by_dtype(void **state)
{
	struct rb_shape s16 = {.m = 4, .k = 9, .n = 21, .dtype = RB_DTYPE_FP16};
	struct rb_shape s8 = {.m = 4, .k = 9, .n = 21, .dtype = RB_DTYPE_INT8};
	uint16_t ah[36], bh[189];
	int8_t ai[36], bi[189];
	float cf[84], wf[84];
	int32_t ci[84], wi[84];

	(void)state;
	fill_f16_ints(ah, 36);
	fill_f16_ints(bh, 189);
	fill_i8(ai, 36);
	fill_i8(bi, 189);
	rb_ref_naive_f16(ah, bh, wf, 4, 9, 21);
	rb_ref_naive_i8(ai, bi, wi, 4, 9, 21);
	assert_int_equal(rb_ref_gemm(&s16, ah, bh, cf, 1), 0);
	assert_int_equal(rb_ref_gemm(&s8, ai, bi, ci, 1), 0);
	assert_memory_equal(cf, wf, sizeof(cf));
	assert_memory_equal(ci, wi, sizeof(ci));
}

static void test_bad_dims(void **state)
{
	uint16_t h = 0;
	int8_t q = 0;
	float f = 0;
	int32_t i = 0;

	(void)state;
	assert_int_equal(rb_ref_gemm_f16(&h, &h, &f, 0, 1, 1, 1), -EINVAL);
	assert_int_equal(rb_ref_gemm_i8(&q, &q, &i, 1, -1, 1, 1), -EINVAL);
	assert_int_equal(rb_ref_gemm_i8(&q, &q, &i, 1, 1, 0, 1), -EINVAL);
}

static void test_threads(void **state)
{
	(void)state;
	assert_true(rb_ref_threads(0) >= 1);
	assert_true(rb_ref_threads(-5) >= 1);
	assert_int_equal(rb_ref_threads(3), 3);
	assert_true(strlen(rb_ref_impl()) > 0);
}

/* The AVX-512 and AVX2 GEMV paths add every column's products in the same order with
 * fused multiply-adds: same bits on real-valued data too (K = 303 takes the 8-row, 4-row
 * and 1-row steps, N = 4099 the column tails). */
static void test_gemv_families_agree(void **state)
{
	const int64_t k = 303, n = 4099;
	uint16_t *a = malloc((size_t)k * 2), *b = malloc((size_t)(k * n) * 2);
	float *c512 = malloc((size_t)n * 4), *c2 = malloc((size_t)n * 4);

	(void)state;
	assert_true(a && b && c512 && c2);
	fill_f16_real(a, (size_t)k);
	fill_f16_real(b, (size_t)(k * n));
	if (rb_ref_force_impl("avx512") == 0 && rb_ref_force_impl("avx2+fma") == 0) {
		assert_int_equal(rb_ref_gemm_f16(a, b, c2, 1, k, n, 2), 0);
		assert_int_equal(rb_ref_force_impl("avx512"), 0);
		assert_int_equal(rb_ref_gemm_f16(a, b, c512, 1, k, n, 2), 0);
		assert_memory_equal(c512, c2, (size_t)n * 4);
	}
	assert_int_equal(rb_ref_force_impl(NULL), 0);
	free(a);
	free(b);
	free(c512);
	free(c2);
}

/* Forcing names the family in use, refuses unknown names, and NULL restores the best. */
static void test_force_impl(void **state)
{
	char best[32];

	(void)state;
	snprintf(best, sizeof(best), "%s", rb_ref_impl());
	assert_int_equal(rb_ref_force_impl("portable"), 0);
	assert_string_equal(rb_ref_impl(), "portable");
	assert_int_equal(rb_ref_force_impl("no-such-kernels"), -EINVAL);
	assert_string_equal(rb_ref_impl(), "portable");
#if defined(__x86_64__) || defined(__i386__)
	assert_int_equal(rb_ref_force_impl("neon"), -ENOTSUP);
	if (rb_ref_force_impl("avx2+fma") == 0)
		assert_string_equal(rb_ref_impl(), "avx2+fma");
	if (rb_ref_force_impl("avx512") == 0)
		assert_non_null(strstr(rb_ref_impl(), "avx512"));
#else
	assert_int_equal(rb_ref_force_impl("avx2+fma"), -ENOTSUP);
#endif
	assert_int_equal(rb_ref_force_impl(NULL), 0);
	assert_string_equal(rb_ref_impl(), best);
	rb_ref_force_portable(1);
	assert_string_equal(rb_ref_impl(), "portable");
	rb_ref_force_portable(0);
	assert_string_equal(rb_ref_impl(), best);
}

#define EVERY_FAMILY(fn)                                                                           \
	cmocka_unit_test(fn), {#fn "_portable", fn, setup_portable, teardown_auto, NULL},          \
	    {#fn "_avx2", fn, setup_avx2, teardown_auto, NULL},                                    \
	{                                                                                          \
#fn "_avx512", fn, setup_avx512, teardown_auto, NULL                               \
	}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    EVERY_FAMILY(test_f16_exact_ints),
	    EVERY_FAMILY(test_f16_real),
	    EVERY_FAMILY(test_i8_exact),
	    EVERY_FAMILY(test_i8_extremes_and_wrap),
	    cmocka_unit_test(test_dot_matches_naive),
	    cmocka_unit_test(test_dispatch_by_dtype),
	    cmocka_unit_test(test_bad_dims),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_force_impl),
	    cmocka_unit_test(test_gemv_families_agree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
