/* Tests of the fast paths of src/numeric/layout.c on shapes big enough to take them
 * (streaming unpack of C; strips, prefetches and chunked threads of the B pack).
 *
 * The unit tests of test_layout.c use small shapes, which the streaming unpack of C
 * (x86, >= 8 MiB of C, rows a whole number of 64-byte lines) never sees. Here every
 * result is compared element by element with a plain loop over the layout formulas
 * of layout.h (the oracle), on odd shapes: tiles starting inside a 64-byte line, a
 * partial last channel group, thread splits by rows and by channel groups.
 *
 * The pack of B runs once with the AVX-512 kernels (skipped on CPUs without them) and
 * once with the base ones forced (rb_layout_force_impl), so that a machine with AVX-512
 * still tests what machines without it run. So does the pack of A (and of the rknn C),
 * whole 64-byte lines down columns of 8 and 4 groups, tested on rows and channels
 * around those 8s and 4s, padding, alignments and thread splits. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "numeric/layout.h"

#define SENTINEL 0xdeadbeefu

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

static uint32_t *random_words(size_t count)
{
	uint32_t *p = malloc(count * 4 + 4);

	assert_non_null(p);
	for (size_t i = 0; i < count; i++)
		p[i] = rnd();
	return p;
}

/* The oracle: C[i][j] for the tile, from the cube formula of layout.h (C2 = 4). */
static uint32_t oracle_c(const uint32_t *cube, const struct rb_layout_c_tile *t, int64_t i,
			 int64_t j)
{
	int64_t h = i - t->cube_m0, c = j - t->n0;

	return cube[(c / 4) * (t->cube_rows * 4) + h * 4 + c % 4];
}

static int count_bad(const uint32_t *c, const uint32_t *cube, int64_t M, int64_t N,
		     const struct rb_layout_c_tile *t)
{
	int bad = 0;

	for (int64_t i = 0; i < M; i++) {
		for (int64_t j = 0; j < N; j++) {
			bool in = i >= t->m0 && i < t->m1 && j >= t->n0 && j < t->n1;
			uint32_t want = in ? oracle_c(cube, t, i, j) : SENTINEL;

			if (c[i * N + j] != want && bad++ < 5)
				print_error("C (%lld, %lld): got 0x%x, want 0x%x\n", (long long)i,
					    (long long)j, c[i * N + j], want);
		}
	}
	return bad;
}

/* Unpacks the tile into a 64-byte aligned M×N C pre-filled with SENTINEL, then with
 * C shifted by `shift` elements (a start off the 16-byte grid takes the staged path). */
static void check_c(int64_t M, int64_t N, const struct rb_layout_c_tile *t, int threads)
{
	size_t cube_words = rb_layout_c_bytes(4, t->cube_rows, t->n1 - t->n0) / 4;
	uint32_t *cube = random_words(cube_words);
	size_t bytes = (size_t)(M * N + 16) * 4;
	uint32_t *buf = aligned_alloc(64, bytes);

	assert_non_null(buf);
	for (int shift = 0; shift <= 1; shift++) {
		uint32_t *c = buf + shift;

		for (size_t i = 0; i < (size_t)(M * N); i++)
			c[i] = SENTINEL;
		assert_int_equal(rb_layout_unpack_c(c, N, cube, 4, t, threads), 0);
		assert_int_equal(count_bad(c, cube, M, N, t), 0);
	}
	free(cube);
	free(buf);
}

/* Aligned C is unpacked by lines: from 8 MiB on with streaming stores, below with
 * ordinary ones. */
static void test_unpack_c_lines(void **state)
{
	static const struct {
		int64_t M, N;
		struct rb_layout_c_tile t;
		int threads;
	} cases[] = {
	    /* streamed. Whole C, rows of 2048 floats: every line whole */
	    {1100, 2048, {0, 1100, 0, 2048, 0, 1100}, 1},
	    {1100, 2048, {0, 1100, 0, 2048, 0, 1100}, 2},
	    /* starts 1, 2 and 3 atoms into a line, partial last group */
	    {1100, 2048, {1, 1099, 4, 2046, 0, 1100}, 2},
	    {1100, 2048, {3, 1097, 8, 2047, 3, 1094}, 1},
	    {1100, 2048, {0, 1100, 12, 2045, 0, 1100}, 3},
	    /* few rows: threads split the channel groups */
	    {20, 112000, {0, 20, 4, 111997, 0, 20}, 2},
	    {18, 128016, {1, 18, 36, 128011, 1, 17}, 0},
	    /* ordinary stores. The same kinds of tiles, taller cubes */
	    {37, 256, {0, 37, 0, 256, 0, 37}, 1},
	    {128, 2048, {0, 128, 0, 2048, 0, 128}, 2},
	    {37, 256, {1, 36, 4, 250, 0, 37}, 2},
	    {37, 256, {3, 30, 8, 255, 3, 30}, 1},
	    {37, 256, {2, 37, 12, 253, 1, 36}, 3},
	    {5, 4096, {0, 5, 20, 4093, 0, 5}, 2},
	    {1, 4096, {0, 1, 0, 4096, 0, 1}, 2},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_c(cases[i].M, cases[i].N, &cases[i].t, cases[i].threads);
}

/* CHECK_SCOPE=quick (sanitizers, qemu): the largest cases are left out. */
static bool quick(void)
{
	const char *scope = getenv("CHECK_SCOPE");

	return scope && strcmp(scope, "quick") == 0;
}

/* The oracle for B: element (n, k) of B packed in K slices of ks channels (layout.h),
 * kg kernels per block. */
static size_t oracle_b(int64_t n, int64_t k, int64_t kp, int64_t np, int64_t ks, int64_t kg)
{
	int64_t k0 = k / ks * ks, len = kp - k0 < ks ? kp - k0 : ks, kk = k - k0;

	return (size_t)(k0 * np + (n / kg) * (kg * len) + (kk / 32) * (kg * 32) + (n % kg) * 32 +
			kk % 32);
}

/* Packs into a buffer `shift` bytes past a 64-byte boundary: 0 streams whole lines
 * (AVX-512) or blocks (SSE2), 16 streams 16-byte vectors, 8 streams nothing. The bytes
 * before and after the weights must be left alone. */
static void check_b_at(enum rb_dtype dtype, int64_t k, int64_t n, int64_t kp, int64_t np,
		       int64_t ks, int threads, size_t shift)
{
	size_t es = dtype == RB_DTYPE_FP16 ? 2 : 1, bytes = (size_t)(kp * np) * es;
	int64_t kg = rb_layout_kernel_group(dtype);
	uint8_t *b = (uint8_t *)random_words((size_t)(k * n) * es / 4 + 1);
	uint8_t *buf = aligned_alloc(64, (bytes + shift + 64 + 63) / 64 * 64), *w = buf + shift;
	int bad = 0;

	assert_non_null(buf);
	memset(buf, 0xa5, bytes + shift + 64);
	assert_int_equal(rb_layout_pack_b_sliced(w, b, dtype, k, n, kp, np, ks, threads), 0);
	for (int64_t nn = 0; nn < np; nn++) {
		for (int64_t kk = 0; kk < kp; kk++) {
			const uint8_t *got = w + oracle_b(nn, kk, kp, np, ks, kg) * es;
			uint8_t want[2] = {0, 0};

			if (kk < k && nn < n)
				memcpy(want, b + (size_t)(kk * n + nn) * es, es);
			if (memcmp(got, want, es) != 0 && bad++ < 5)
				print_error("B (n %lld, k %lld) differs\n", (long long)nn,
					    (long long)kk);
		}
	}
	for (size_t i = 0; i < shift; i++)
		bad += buf[i] != 0xa5;
	for (size_t i = 0; i < 64; i++)
		bad += w[bytes + i] != 0xa5;
	assert_int_equal(bad, 0);
	free(b);
	free(buf);
}

static void check_b(enum rb_dtype dtype, int64_t k, int64_t n, int64_t kp, int64_t np, int64_t ks,
		    int threads)
{
	check_b_at(dtype, k, n, kp, np, ks, threads, 0);
}

/* Strips (up to 16 KiB of columns, a thread's share of a row if less) with a partial
 * last one, N not a multiple of the kernel group, K not a multiple of 32, padding past
 * both, slices of 640 channels. */
static void pack_b_odd(void)
{
	/* one thread: 16 KiB strips, 512 groups each, then 226 (fp16 and int8) */
	check_b(RB_DTYPE_FP16, 40, 20000, 64, 20000, 64, 1);
	check_b(RB_DTYPE_INT8, 40, 40000, 64, 40000, 64, 1);
	check_b(RB_DTYPE_FP16, 1000, 5007, 1024, 5024, 1024, 1);
	check_b(RB_DTYPE_FP16, 1000, 5007, 1056, 5040, 640, 2);
	check_b(RB_DTYPE_FP16, 61, 9000, 64, 9008, 64, 0);
	/* an even number of whole kernel groups (every block in pairs), several strips */
	check_b(RB_DTYPE_FP16, 256, 8192, 256, 8192, 256, 2);
	/* one whole group left over in each strip's last pair, and in the last strip */
	if (!quick())
		check_b(RB_DTYPE_FP16, 512, 4112, 512, 4112, 512, 0);
	/* weights off the 64-byte grid: 16-byte streams, then no streams at all */
	check_b_at(RB_DTYPE_FP16, 256, 4128, 256, 4128, 256, 2, 16);
	check_b_at(RB_DTYPE_FP16, 100, 4100, 128, 4112, 64, 1, 8);
	check_b_at(RB_DTYPE_INT8, 100, 4100, 128, 4128, 64, 2, 8);
	check_b(RB_DTYPE_INT8, 999, 9001, 1024, 9024, 640, 2);
	check_b(RB_DTYPE_INT8, 1000, 8193, 1000 / 32 * 32 + 32, 8224, 4096, 1);
}

/* The oracle for A: element (m, k) of the feature cube (layout.h), c2 per atom. */
static size_t oracle_a(int64_t m, int64_t k, int64_t rows, int64_t c2)
{
	return (size_t)((k / c2) * (rows * c2) + m * c2 + k % c2);
}

/* Packs an m×k matrix of es-byte elements into a cube of k_pad channels at `shift` bytes
 * past a 64-byte boundary, through rb_layout_pack_a (es 1, 2) or rb_layout_rknn_pack_c
 * (es 4, k_pad = k), and compares every element with the oracle, padding with zeros.
 * The bytes before and after the cube must be left alone. */
static void check_a(size_t es, int64_t m, int64_t k, int64_t k_pad, size_t shift, int threads)
{
	int64_t c2 = 16 / (int64_t)es;
	size_t bytes = (size_t)(m * k_pad) * es;
	uint8_t *a = (uint8_t *)random_words((size_t)(m * k) * es / 4 + 1);
	uint8_t *buf = aligned_alloc(64, (bytes + shift + 64 + 63) / 64 * 64), *cube = buf + shift;
	int bad = 0, err;

	assert_non_null(buf);
	memset(buf, 0xa5, bytes + shift + 64);
	if (es == 4)
		err = rb_layout_rknn_pack_c(cube, a, 4, m, k, threads);
	else
		err = rb_layout_pack_a(cube, a, es == 2 ? RB_DTYPE_FP16 : RB_DTYPE_INT8, m, k,
				       k_pad, threads);
	assert_int_equal(err, 0);
	for (int64_t mm = 0; mm < m; mm++) {
		for (int64_t kk = 0; kk < k_pad; kk++) {
			const uint8_t *got = cube + oracle_a(mm, kk, m, c2) * es;
			uint8_t want[4] = {0, 0, 0, 0};

			if (kk < k)
				memcpy(want, a + (size_t)(mm * k + kk) * es, es);
			if (memcmp(got, want, es) != 0 && bad++ < 5)
				print_error("A (m %lld, k %lld) differs\n", (long long)mm,
					    (long long)kk);
		}
	}
	for (size_t i = 0; i < shift; i++)
		bad += buf[i] != 0xa5;
	for (size_t i = 0; i < 64; i++)
		bad += cube[bytes + i] != 0xa5;
	assert_int_equal(bad, 0);
	free(a);
	free(buf);
}

/* Rows not a multiple of 4, groups left over past the last whole 4 and channels past
 * the last whole group, padding groups, a cube off the 64-byte grid; threads split
 * rows (many rows) or channel groups (few rows), with 1, 2 and all threads. */
static void pack_a_odd(void)
{
	check_a(2, 1030, 2050, 2080, 0, 2);
	check_a(2, 5, 450001, 450016, 0, 2);
	if (!quick()) {
		check_a(2, 1030, 2050, 2080, 16, 1);
		check_a(2, 1024, 2048, 2048, 0, 0);
		check_a(1, 1029, 4100, 4128, 0, 2);
	}
	check_a(2, 7, 100, 128, 48, 1);
	check_a(2, 13, 107, 128, 0, 1);
	check_a(1, 6, 96, 96, 32, 1);
	check_a(1, 9, 200, 224, 16, 1);
	check_a(4, 1027, 1100, 1100, 0, 2);
	check_a(4, 9, 36, 36, 16, 1);
}

/* --- kernel families: each test runs on the base family (SSE2, NEON or scalar: what
 * machines without AVX-512 run) and on AVX-512, skipped where the CPU lacks it. */

static const char *const base_families[] = {"sse2", "neon", "scalar"};

/* Forces the base family of this build, whose name is one of base_families. */
static int setup_base(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(base_families) / sizeof(base_families[0]); i++)
		if (rb_layout_force_impl(base_families[i]) == 0)
			return 0;
	return -1;
}

static bool avx512_missing;

static int setup_avx512(void **state)
{
	int err = rb_layout_force_impl("avx512");

	(void)state;
	avx512_missing = err == -ENOTSUP;
	return err == 0 || avx512_missing ? 0 : -1;
}

static int teardown_auto(void **state)
{
	(void)state;
	return rb_layout_force_impl(NULL);
}

/* The family the test's setup forced is the one that runs. */
static void expect_family(bool avx512)
{
	if (avx512 && avx512_missing)
		skip();
	assert_int_equal(strcmp(rb_layout_impl(), "avx512") == 0, avx512);
}

static void test_pack_b_base(void **state)
{
	(void)state;
	expect_family(false);
	pack_b_odd();
}

static void test_pack_b_avx512(void **state)
{
	(void)state;
	expect_family(true);
	pack_b_odd();
}

static void test_pack_a_base(void **state)
{
	(void)state;
	expect_family(false);
	pack_a_odd();
}

static void test_pack_a_avx512(void **state)
{
	(void)state;
	expect_family(true);
	pack_a_odd();
}

/* Unknown names are refused, the base family can always be forced, NULL goes back to
 * the automatic choice, and "avx512" is available exactly when the automatic choice
 * takes it. */
static void test_force_impl(void **state)
{
	bool has_avx512;

	(void)state;
	assert_int_equal(rb_layout_force_impl(NULL), 0);
	has_avx512 = strcmp(rb_layout_impl(), "avx512") == 0;
	assert_int_equal(rb_layout_force_impl("avx2"), -EINVAL);
	assert_int_equal(rb_layout_force_impl(""), -EINVAL);
	assert_int_equal(setup_base(NULL), 0);
	assert_string_not_equal(rb_layout_impl(), "avx512");
	assert_int_equal(rb_layout_force_impl("avx512"), has_avx512 ? 0 : -ENOTSUP);
	assert_int_equal(rb_layout_force_impl(NULL), 0);
	assert_int_equal(strcmp(rb_layout_impl(), "avx512") == 0, has_avx512);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_unpack_c_lines),
	    cmocka_unit_test(test_force_impl),
	    cmocka_unit_test_setup_teardown(test_pack_b_base, setup_base, teardown_auto),
	    cmocka_unit_test_setup_teardown(test_pack_b_avx512, setup_avx512, teardown_auto),
	    cmocka_unit_test_setup_teardown(test_pack_a_base, setup_base, teardown_auto),
	    cmocka_unit_test_setup_teardown(test_pack_a_avx512, setup_avx512, teardown_auto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
