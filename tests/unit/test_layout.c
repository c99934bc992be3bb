/* Tests of src/numeric/layout.c.
 *
 * Every layout is checked element by element against the formulas of npu-facts.md §b
 * and perf-anchors.md §1.4, written out once here (ref_*) rather than taken from the
 * code under test. Packed buffers are pre-filled with a marker byte and followed by
 * guard bytes, so padding that is not written as zero and writes past the end show. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fp16.h"
#include "numeric/layout.h"

#define MARK         0xa5
#define GUARD        64
#define SENTINEL_F32 -12345.0f

struct mkn {
	int64_t m, k, n;
};

/* The shapes of the brief: odd sizes around every block edge. */
static const struct mkn shapes[] = {
    {1, 1, 1}, {1, 33, 17}, {3, 31, 15}, {5, 100, 47}, {17, 64, 130}, {4, 64, 16}, {1, 32, 32},
};
#define N_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

static const enum rb_dtype dtypes[] = {RB_DTYPE_FP16, RB_DTYPE_INT8};

/* --- reference formulas ------------------------------------------------------------ */

/* §b.2 / §b.4: element (h, c) of a W = 1 NC1HWC2 cube of H rows, C2 per atom. */
static size_t ref_cube(int64_t h, int64_t c, int64_t H, int64_t c2)
{
	return (size_t)((c / c2) * (H * c2) + h * c2 + c % c2);
}

/* §b.3, fp16: blocks of 16 kernels × 32 channels. */
static size_t ref_b_f16(int64_t n, int64_t k, int64_t kp)
{
	return (size_t)((n / 16) * (16 * kp) + (k / 32) * (16 * 32) + (n % 16) * 32 + k % 32);
}

/* §b.3, int8: blocks of 32 kernels × 32 channels. */
static size_t ref_b_i8(int64_t n, int64_t k, int64_t kp)
{
	return (size_t)((n / 32) * (32 * kp) + (k / 32) * 1024 + (n % 32) * 32 + k % 32);
}

static size_t ref_b(enum rb_dtype dtype, int64_t n, int64_t k, int64_t kp)
{
	return dtype == RB_DTYPE_FP16 ? ref_b_f16(n, k, kp) : ref_b_i8(n, k, kp);
}

/* Element index of (n, k) in B packed in K slices of ks channels (layout.h). */
static size_t ref_b_sliced(enum rb_dtype dtype, int64_t n, int64_t k, int64_t kp, int64_t np,
			   int64_t ks)
{
	int64_t s = k / ks, k0 = s * ks;
	int64_t len = kp - k0 < ks ? kp - k0 : ks;

	return (size_t)(k0 * np) + ref_b(dtype, n, k - k0, len);
}

/* --- helpers ---------------------------------------------------------------------------- */

static uint64_t rng_state = 0x1234567887654321u;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 16);
}

static size_t esz(enum rb_dtype dtype)
{
	return dtype == RB_DTYPE_FP16 ? 2 : 1;
}

static int64_t kgroup(enum rb_dtype dtype)
{
	return dtype == RB_DTYPE_FP16 ? 16 : 32;
}

static int64_t up(int64_t x, int64_t a)
{
	return (x + a - 1) / a * a;
}

/* Random elements, never zero, so zero padding is told apart from data. */
static void *random_elems(size_t count, size_t es)
{
	uint8_t *p = malloc(count * es + 1);

	assert_non_null(p);
	for (size_t i = 0; i < count * es; i++)
		p[i] = (uint8_t)(rnd() | 1);
	return p;
}

static uint8_t *marked(size_t bytes)
{
	uint8_t *p = malloc(bytes + GUARD);

	assert_non_null(p);
	memset(p, MARK, bytes + GUARD);
	return p;
}

static void check_guard(const uint8_t *p, size_t bytes)
{
	for (size_t i = 0; i < GUARD; i++)
		assert_int_equal(p[bytes + i], MARK);
}

static uint32_t get(const void *buf, size_t i, size_t es)
{
	const uint8_t *p = buf;

	if (es == 1)
		return p[i];
	if (es == 2)
		return (uint32_t)p[2 * i] | (uint32_t)p[2 * i + 1] << 8;
	return (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
	       (uint32_t)p[4 * i + 3] << 24;
}

/* The bit pattern of f: the unpacks copy floats, so results must match bit for bit. */
static uint32_t bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

/* Counts mismatches, printing the first few with their context. */
static int mismatches;

static void expect(uint32_t got, uint32_t want, const char *what, int64_t i, int64_t j)
{
	if (got == want)
		return;
	if (mismatches++ < 5)
		print_error("%s (%lld, %lld): got 0x%x, want 0x%x\n", what, (long long)i,
			    (long long)j, (unsigned)got, (unsigned)want);
}

static void expect_done(void)
{
	int n = mismatches;

	mismatches = 0;
	assert_int_equal(n, 0);
}

/* --- A ------------------------------------------------------------------------------- */

static void check_a(enum rb_dtype dtype, int64_t m, int64_t k, int64_t kp, int threads)
{
	size_t es = esz(dtype), bytes = (size_t)(kp * m) * es;
	void *a = random_elems((size_t)(m * k), es), *back = calloc((size_t)(m * k), es);
	uint8_t *cube = marked(bytes);
	int64_t c2 = 16 / (int64_t)es;

	assert_int_equal(rb_layout_a_bytes(dtype, m, kp), bytes);
	assert_int_equal(rb_layout_pack_a(cube, a, dtype, m, k, kp, threads), 0);
	for (int64_t mm = 0; mm < m; mm++)
		for (int64_t kk = 0; kk < kp; kk++)
			expect(get(cube, ref_cube(mm, kk, m, c2), es),
			       kk < k ? get(a, (size_t)(mm * k + kk), es) : 0, "A", mm, kk);
	expect_done();
	check_guard(cube, bytes);
	assert_int_equal(rb_layout_unpack_a(back, cube, dtype, m, k, kp, threads), 0);
	assert_memory_equal(back, a, (size_t)(m * k) * es);
	free(a);
	free(back);
	free(cube);
}

static void test_pack_a(void **state)
{
	(void)state;
	for (size_t s = 0; s < N_SHAPES; s++) {
		for (size_t d = 0; d < 2; d++) {
			int64_t kp = up(shapes[s].k, 32);

			check_a(dtypes[d], shapes[s].m, shapes[s].k, kp, 1);
			check_a(dtypes[d], shapes[s].m, shapes[s].k, kp + 32, 2);
		}
	}
}

/* --- B ------------------------------------------------------------------------------- */

static void check_b(enum rb_dtype dtype, int64_t k, int64_t n, int64_t kp, int64_t np, int64_t ks,
		    int threads)
{
	size_t es = esz(dtype), bytes = (size_t)(kp * np) * es;
	void *b = random_elems((size_t)(k * n), es), *back = calloc((size_t)(k * n), es);
	uint8_t *w = marked(bytes);

	assert_int_equal(rb_layout_b_bytes(dtype, kp, np), bytes);
	assert_int_equal(rb_layout_pack_b_sliced(w, b, dtype, k, n, kp, np, ks, threads), 0);
	for (int64_t nn = 0; nn < np; nn++)
		for (int64_t kk = 0; kk < kp; kk++)
			expect(get(w, ref_b_sliced(dtype, nn, kk, kp, np, ks), es),
			       kk < k && nn < n ? get(b, (size_t)(kk * n + nn), es) : 0, "B", nn,
			       kk);
	expect_done();
	check_guard(w, bytes);
	assert_int_equal(rb_layout_unpack_b_sliced(back, w, dtype, k, n, kp, np, ks, threads), 0);
	assert_memory_equal(back, b, (size_t)(k * n) * es);
	free(b);
	free(back);
	free(w);
}

static void test_pack_b(void **state)
{
	(void)state;
	for (size_t s = 0; s < N_SHAPES; s++) {
		for (size_t d = 0; d < 2; d++) {
			int64_t kp = up(shapes[s].k, 32), kg = kgroup(dtypes[d]);
			int64_t np = up(shapes[s].n, kg);

			check_b(dtypes[d], shapes[s].k, shapes[s].n, kp, np, kp, 1);
			check_b(dtypes[d], shapes[s].k, shapes[s].n, kp + 32, np + kg, kp + 32, 2);
		}
	}
}

/* Unsliced pack: rb_layout_pack_b with the formula of §b.3 and k_pad as K. */
static void test_pack_b_unsliced(void **state)
{
	size_t bytes = 96 * 48 * 2;
	uint16_t *b = random_elems(70 * 40, 2);
	uint8_t *w = marked(bytes);

	(void)state;
	assert_int_equal(rb_layout_pack_b(w, b, RB_DTYPE_FP16, 70, 40, 96, 48, 1), 0);
	for (int64_t n = 0; n < 48; n++)
		for (int64_t k = 0; k < 96; k++)
			expect(get(w, ref_b_f16(n, k, 96), 2), k < 70 && n < 40 ? b[k * 40 + n] : 0,
			       "B", n, k);
	expect_done();
	check_guard(w, bytes);
	free(b);
	free(w);
}

static void test_pack_b_sliced(void **state)
{
	static const int64_t slices[] = {32, 64, 96, 160};

	(void)state;
	for (size_t s = 0; s < N_SHAPES; s++) {
		for (size_t d = 0; d < 2; d++) {
			int64_t kp = up(shapes[s].k, 32) + 128, kg = kgroup(dtypes[d]);
			int64_t np = up(shapes[s].n, kg);

			for (size_t i = 0; i < sizeof(slices) / sizeof(slices[0]); i++)
				check_b(dtypes[d], shapes[s].k, shapes[s].n, kp, np, slices[i],
					(int)i);
		}
	}
}

/* Slices of 64 channels of k_pad 224: 64, 64, 64, 32. */
static void test_b_locate(void **state)
{
	size_t off = 0;
	int64_t ks = 0;

	(void)state;
	assert_int_equal(rb_layout_b_locate(RB_DTYPE_FP16, 224, 48, 64, 1, 32, &off, &ks), 0);
	assert_int_equal(off, (1 * 48 * 64 + 32 * 64) * 2);
	assert_int_equal(ks, 64);
	assert_int_equal(rb_layout_b_locate(RB_DTYPE_FP16, 224, 48, 64, 3, 16, &off, &ks), 0);
	assert_int_equal(off, (3 * 48 * 64 + 16 * 32) * 2);
	assert_int_equal(ks, 32);
	assert_int_equal(rb_layout_b_locate(RB_DTYPE_INT8, 224, 64, 1024, 0, 32, &off, &ks), 0);
	assert_int_equal(off, 32 * 224);
	assert_int_equal(ks, 224);
	assert_int_equal(rb_layout_b_locate(RB_DTYPE_FP16, 224, 48, 64, 4, 0, &off, &ks), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "slice"));
	assert_int_equal(rb_layout_b_locate(RB_DTYPE_FP16, 224, 48, 64, 0, 8, &off, &ks), -EINVAL);
	assert_int_equal(rb_layout_b_locate(RB_DTYPE_FP16, 224, 48, 64, 0, 48, NULL, NULL),
			 -EINVAL);
}

/* A task reading its slice at the located offset sees the plain layout of its own
 * K range: (n, k') at n0-relative index ref_b(n - n0, k', ks). */
static void test_b_locate_matches_pack(void **state)
{
	int64_t k = 200, n = 64, kp = 224, ks_full = 96;
	uint16_t *b = random_elems((size_t)(k * n), 2);
	uint16_t *w = calloc((size_t)(kp * n), 2);

	(void)state;
	assert_int_equal(rb_layout_pack_b_sliced(w, b, RB_DTYPE_FP16, k, n, kp, n, ks_full, 0), 0);
	for (int64_t s = 0; s < 3; s++) {
		size_t off;
		int64_t ks, n0 = 16 * s;

		assert_int_equal(
		    rb_layout_b_locate(RB_DTYPE_FP16, kp, n, ks_full, s, n0, &off, &ks), 0);
		for (int64_t nn = n0; nn < n; nn++)
			for (int64_t kk = 0; kk < ks; kk++) {
				int64_t kg = s * ks_full + kk;

				expect(w[off / 2 + ref_b_f16(nn - n0, kk, ks)],
				       kg < k ? b[kg * n + nn] : 0, "slice", nn, kg);
			}
	}
	expect_done();
	free(b);
	free(w);
}

/* --- C ------------------------------------------------------------------------------- */

static void fill_sentinel(float *c, size_t count)
{
	for (size_t i = 0; i < count; i++)
		c[i] = SENTINEL_F32;
}

static void test_unpack_c_full(void **state)
{
	(void)state;
	for (size_t s = 0; s < N_SHAPES; s++) {
		int64_t m = shapes[s].m, n = shapes[s].n;
		float *cube = random_elems(rb_layout_c_bytes(4, m, n) / 4, 4);
		float *c = malloc((size_t)(m * n) * 4 + 4);
		struct rb_layout_c_tile t;

		assert_int_equal(rb_layout_c_bytes(4, m, n), (size_t)(up(n, 4) * m * 4));
		rb_layout_c_tile_full(&t, m, n);
		assert_int_equal(rb_layout_unpack_c(c, n, cube, 4, &t, 1), 0);
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				expect(get(c, (size_t)(i * n + j), 4),
				       get(cube, ref_cube(i, j, m, 4), 4), "C", i, j);
		expect_done();
		free(cube);
		free(c);
	}
}

static void test_unpack_c_fp16(void **state)
{
	(void)state;
	for (size_t s = 0; s < N_SHAPES; s++) {
		int64_t m = shapes[s].m, n = shapes[s].n;
		uint16_t *cube = random_elems(rb_layout_c_bytes(2, m, n) / 2, 2);
		uint16_t *c16 = malloc((size_t)(m * n) * 2 + 2);
		float *c = malloc((size_t)(m * n) * 4 + 4);
		struct rb_layout_c_tile t;

		assert_int_equal(rb_layout_c_bytes(2, m, n), (size_t)(up(n, 8) * m * 2));
		rb_layout_c_tile_full(&t, m, n);
		assert_int_equal(rb_layout_unpack_c(c16, n, cube, 2, &t, 1), 0);
		assert_int_equal(rb_layout_unpack_c_f16_f32(c, n, cube, &t, 1), 0);
		for (int64_t i = 0; i < m; i++) {
			for (int64_t j = 0; j < n; j++) {
				uint16_t h = cube[ref_cube(i, j, m, 8)];
				float f = rb_fp16_to_f32(h);

				expect(c16[i * n + j], h, "C16", i, j);
				expect(bits(c[i * n + j]), bits(f), "C16->f32", i, j);
			}
		}
		expect_done();
		free(cube);
		free(c16);
		free(c);
	}
}

/* The C rows [m0, m1) and columns [n0, n1) of an M×N C from a cube of `cube_rows`
 * rows starting at C row cube_m0; everything else must keep the sentinel. */
static void check_tile(int64_t M, int64_t N, const struct rb_layout_c_tile *t, int threads)
{
	size_t cube_elems = rb_layout_c_bytes(4, t->cube_rows, t->n1 - t->n0) / 4;
	float *cube = random_elems(cube_elems + 1, 4);
	uint16_t *cube16 = random_elems(cube_elems * 2 + 1, 2);
	float *c = malloc((size_t)(M * N) * 4), *cf = malloc((size_t)(M * N) * 4);

	fill_sentinel(c, (size_t)(M * N));
	fill_sentinel(cf, (size_t)(M * N));
	assert_int_equal(rb_layout_unpack_c(c, N, cube, 4, t, threads), 0);
	assert_int_equal(rb_layout_unpack_c_f16_f32(cf, N, cube16, t, threads), 0);
	for (int64_t i = 0; i < M; i++) {
		for (int64_t j = 0; j < N; j++) {
			bool in = i >= t->m0 && i < t->m1 && j >= t->n0 && j < t->n1;
			size_t q = in ? ref_cube(i - t->cube_m0, j - t->n0, t->cube_rows, 4) : 0;
			size_t h = in ? ref_cube(i - t->cube_m0, j - t->n0, t->cube_rows, 8) : 0;
			float want = in ? cube[q] : SENTINEL_F32;
			float want_f = in ? rb_fp16_to_f32(cube16[h]) : SENTINEL_F32;

			expect(bits(c[i * N + j]), bits(want), "tile", i, j);
			expect(bits(cf[i * N + j]), bits(want_f), "tile f16", i, j);
		}
	}
	expect_done();
	free(cube);
	free(cube16);
	free(c);
	free(cf);
}

static void test_unpack_c_subrange(void **state)
{
	static const struct rb_layout_c_tile tiles[] = {
	    /* m0, m1, n0, n1, cube_m0, cube_rows */
	    {0, 17, 20, 67, 0, 17},    /* N sub-range, the tile's own cube */
	    {5, 12, 0, 130, 0, 17},    /* M sub-range of a full-height cube */
	    {3, 12, 33, 100, 3, 9},    /* both, own cube */
	    {3, 12, 33, 100, 2, 14},   /* both, taller cube */
	    {16, 17, 129, 130, 16, 1}, /* one element */
	    {4, 4, 0, 130, 0, 17},     /* empty */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(tiles) / sizeof(tiles[0]); i++) {
		check_tile(17, 130, &tiles[i], 1);
		check_tile(17, 130, &tiles[i], 4);
	}
}

/* A core's tile [n0, n1) taken out of one big cube by offsetting its base. */
static void test_unpack_c_from_big_cube(void **state)
{
	int64_t M = 7, N = 100, n0 = 64, n1 = 100;
	float *cube = random_elems(rb_layout_c_bytes(4, M, N) / 4, 4);
	float *c = malloc((size_t)(M * N) * 4);
	struct rb_layout_c_tile t = {0, M, n0, n1, 0, M};

	(void)state;
	fill_sentinel(c, (size_t)(M * N));
	assert_int_equal(rb_layout_unpack_c(c, N, cube + (n0 / 4) * M * 4, 4, &t, 1), 0);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			float want = j >= n0 ? cube[ref_cube(i, j, M, 4)] : SENTINEL_F32;

			expect(bits(c[i * N + j]), bits(want), "big", i, j);
		}
	expect_done();
	free(cube);
	free(c);
}

static void test_accumulate_f32(void **state)
{
	int64_t M = 9, N = 70;
	struct rb_layout_c_tile t = {2, 8, 5, 61, 1, 8};
	size_t cube_elems = rb_layout_c_bytes(4, t.cube_rows, t.n1 - t.n0) / 4;
	float *c = malloc((size_t)(M * N) * 4), *init = malloc((size_t)(M * N) * 4);
	float *c1 = malloc(cube_elems * 4), *c2 = malloc(cube_elems * 4);

	(void)state;
	for (int64_t i = 0; i < M * N; i++)
		init[i] = c[i] = (float)(i % 97) - 40.0f;
	for (size_t i = 0; i < cube_elems; i++) {
		c1[i] = (float)(rnd() % 1000) / 8.0f;
		c2[i] = (float)(rnd() % 1000) / 4.0f;
	}
	assert_int_equal(rb_layout_accumulate_c_f32(c, N, c1, &t, 1), 0);
	assert_int_equal(rb_layout_accumulate_c_f32(c, N, c2, &t, 3), 0);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			bool in = i >= t.m0 && i < t.m1 && j >= t.n0 && j < t.n1;
			size_t q = in ? ref_cube(i - t.cube_m0, j - t.n0, t.cube_rows, 4) : 0;
			/* exact: small multiples of 1/8 */
			float want = in ? init[i * N + j] + c1[q] + c2[q] : init[i * N + j];

			expect(bits(c[i * N + j]), bits(want), "acc", i, j);
		}
	expect_done();
	free(c);
	free(init);
	free(c1);
	free(c2);
}

static void test_accumulate_i32(void **state)
{
	int64_t M = 6, N = 21;
	struct rb_layout_c_tile t = {1, 6, 3, 21, 0, 6};
	size_t cube_elems = rb_layout_c_bytes(4, t.cube_rows, t.n1 - t.n0) / 4;
	int32_t *c = malloc((size_t)(M * N) * 4), *cube = malloc(cube_elems * 4);

	(void)state;
	for (int64_t i = 0; i < M * N; i++)
		c[i] = (int32_t)(i * 1000 - 50000);
	for (size_t i = 0; i < cube_elems; i++)
		cube[i] = (int32_t)(rnd() % 20001) - 10000;
	c[1 * N + 3] = INT32_MAX; /* wraps rather than overflowing */
	cube[ref_cube(1, 0, 6, 4)] = 1;
	assert_int_equal(rb_layout_accumulate_c_i32(c, N, cube, &t, 1), 0);
	for (int64_t i = 0; i < M; i++)
		for (int64_t j = 0; j < N; j++) {
			int64_t init =
			    i == 1 && j == 3 ? INT32_MAX : i * N * 1000 + j * 1000 - 50000;
			bool in = i >= t.m0 && j >= t.n0;
			int64_t want = in ? init + cube[ref_cube(i, j - 3, 6, 4)] : init;

			if (want > INT32_MAX)
				want -= INT64_C(1) << 32;
			expect((uint32_t)c[i * N + j], (uint32_t)want, "acc i32", i, j);
		}
	expect_done();
	free(c);
	free(cube);
}

/* Buffers that are not 16-byte aligned take the ordinary-store path of the B pack. */
static void test_unaligned(void **state)
{
	int64_t k = 100, n = 70, kp = 128, np = 96;
	size_t bytes = (size_t)(kp * np) * 2;
	uint8_t *b = random_elems((size_t)(k * n) + 8, 2);
	uint8_t *w = malloc(bytes), *wu = malloc(bytes + 8);

	(void)state;
	memmove(b + 6, b, (size_t)(k * n) * 2);
	assert_int_equal(rb_layout_pack_b(w, b + 6, RB_DTYPE_FP16, k, n, kp, np, 1), 0);
	assert_int_equal(rb_layout_pack_b(wu + 8, b + 6, RB_DTYPE_FP16, k, n, kp, np, 1), 0);
	assert_memory_equal(w, wu + 8, bytes);
	for (int64_t nn = 0; nn < np; nn++)
		for (int64_t kk = 0; kk < kp; kk++)
			expect(get(w, ref_b_f16(nn, kk, kp), 2),
			       kk < k && nn < n ? get(b + 6, (size_t)(kk * n + nn), 2) : 0, "B", nn,
			       kk);
	expect_done();
	free(b);
	free(w);
	free(wu);
}

/* --- threads ------------------------------------------------------------------------- */

static void same_b(enum rb_dtype dtype, int64_t k, int64_t n, int64_t ks)
{
	int64_t kp = up(k, 32), np = up(n, kgroup(dtype));
	size_t bytes = (size_t)(kp * np) * esz(dtype);
	void *b = random_elems((size_t)(k * n), esz(dtype));
	uint8_t *w1 = malloc(bytes), *w4 = malloc(bytes), *w0 = malloc(bytes);

	assert_int_equal(rb_layout_pack_b_sliced(w1, b, dtype, k, n, kp, np, ks, 1), 0);
	assert_int_equal(rb_layout_pack_b_sliced(w4, b, dtype, k, n, kp, np, ks, 4), 0);
	assert_int_equal(rb_layout_pack_b_sliced(w0, b, dtype, k, n, kp, np, ks, 0), 0);
	assert_memory_equal(w1, w4, bytes);
	assert_memory_equal(w1, w0, bytes);
	for (int64_t nn = 0; nn < np; nn += 7)
		for (int64_t kk = 0; kk < kp; kk++)
			expect(get(w4, ref_b_sliced(dtype, nn, kk, kp, np, ks), esz(dtype)),
			       kk < k && nn < n ? get(b, (size_t)(kk * n + nn), esz(dtype)) : 0,
			       "B threads", nn, kk);
	expect_done();
	free(b);
	free(w1);
	free(w4);
	free(w0);
}

static void same_a(enum rb_dtype dtype, int64_t m, int64_t k)
{
	int64_t kp = up(k, 32);
	size_t bytes = rb_layout_a_bytes(dtype, m, kp);
	void *a = random_elems((size_t)(m * k), esz(dtype));
	uint8_t *x1 = malloc(bytes), *x4 = malloc(bytes);

	assert_int_equal(rb_layout_pack_a(x1, a, dtype, m, k, kp, 1), 0);
	assert_int_equal(rb_layout_pack_a(x4, a, dtype, m, k, kp, 4), 0);
	assert_memory_equal(x1, x4, bytes);
	free(a);
	free(x1);
	free(x4);
}

static void same_c(int64_t m, int64_t n)
{
	size_t bytes = rb_layout_c_bytes(4, m, n);
	float *cube = random_elems(bytes / 4, 4);
	float *c1 = malloc((size_t)(m * n) * 4), *c4 = malloc((size_t)(m * n) * 4);
	struct rb_layout_c_tile t;

	rb_layout_c_tile_full(&t, m, n);
	assert_int_equal(rb_layout_unpack_c(c1, n, cube, 4, &t, 1), 0);
	assert_int_equal(rb_layout_unpack_c(c4, n, cube, 4, &t, 4), 0);
	assert_memory_equal(c1, c4, (size_t)(m * n) * 4);
	assert_int_equal(rb_layout_unpack_c_f16_f32(c1, n, (const uint16_t *)cube, &t, 1), 0);
	assert_int_equal(rb_layout_unpack_c_f16_f32(c4, n, (const uint16_t *)cube, &t, 3), 0);
	assert_memory_equal(c1, c4, (size_t)(m * n) * 4);
	free(cube);
	free(c1);
	free(c4);
}

static void test_threads(void **state)
{
	(void)state;
	same_b(RB_DTYPE_FP16, 2000, 3000, 2048);
	same_b(RB_DTYPE_FP16, 2000, 3001, 320);
	same_b(RB_DTYPE_INT8, 3000, 3000, 3008);
	same_a(RB_DTYPE_FP16, 2000, 1500);
	same_a(RB_DTYPE_INT8, 3, 3000000);
	same_c(1500, 1001);
	same_c(1, 3000001);
	same_c(3, 1000003);
}

/* Sub-ranges big enough to be split across threads, by rows and by channel groups. */
static void test_threads_subrange(void **state)
{
	static const struct rb_layout_c_tile tiles[] = {
	    {37, 990, 13, 2999, 0, 1000},
	    {37, 990, 13, 2999, 37, 953},
	    {1, 3, 5, 2000000, 1, 2},
	    {2, 3, 7, 1999999, 0, 3},
	};

	(void)state;
	check_tile(1000, 3000, &tiles[0], 4);
	check_tile(1000, 3000, &tiles[1], 0);
	check_tile(3, 2000000, &tiles[2], 4);
	check_tile(3, 2000000, &tiles[3], 2);
}

/* --- rknn matmul API (perf-anchors §1.4) ---------------------------------------------- */

/* A native: fp16 (K/8, M, 8), int8 (K/16, M, 16). */
static size_t ref_rknn_a(enum rb_dtype dtype, int64_t m, int64_t k, int64_t M)
{
	if (dtype == RB_DTYPE_FP16)
		return (size_t)((k / 8) * M * 8 + m * 8 + k % 8);
	return (size_t)((k / 16) * M * 16 + m * 16 + k % 16);
}

/* B native: fp16 (N/16, K/32, 16, 32), int8 (N/32, K/32, 32, 32), in segments of
 * 8192 channels when K > 8192 (RK3588). */
static size_t ref_rknn_b(enum rb_dtype dtype, int64_t n, int64_t k, int64_t K, int64_t N)
{
	int64_t s = k / 8192, ks = K - s * 8192 < 8192 ? K - s * 8192 : 8192, kk = k % 8192;
	size_t base = (size_t)(s * 8192 * N);

	if (dtype == RB_DTYPE_FP16)
		return base +
		       (size_t)((((n / 16) * (ks / 32) + kk / 32) * 16 + n % 16) * 32 + kk % 32);
	return base + (size_t)((((n / 32) * (ks / 32) + kk / 32) * 32 + n % 32) * 32 + kk % 32);
}

static void check_rknn_a(enum rb_dtype dtype, int64_t m, int64_t k)
{
	size_t es = esz(dtype), bytes = (size_t)(m * k) * es;
	void *a = random_elems((size_t)(m * k), es), *back = malloc(bytes);
	uint8_t *x = marked(bytes);

	assert_int_equal(rb_layout_rknn_pack_a(x, a, dtype, m, k, 1), 0);
	check_guard(x, bytes);
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < k; j++)
			expect(get(x, ref_rknn_a(dtype, i, j, m), es),
			       get(a, (size_t)(i * k + j), es), "rknn A", i, j);
	expect_done();
	assert_int_equal(rb_layout_rknn_unpack_a(back, x, dtype, m, k, 2), 0);
	assert_memory_equal(back, a, bytes);
	free(a);
	free(back);
	free(x);
}

static void check_rknn_b(enum rb_dtype dtype, int64_t k, int64_t n)
{
	size_t es = esz(dtype), bytes = (size_t)(k * n) * es;
	void *b = random_elems((size_t)(k * n), es), *back = malloc(bytes);
	uint8_t *w = marked(bytes);

	assert_int_equal(rb_layout_rknn_pack_b(w, b, dtype, k, n, 0), 0);
	check_guard(w, bytes);
	for (int64_t i = 0; i < n; i++)
		for (int64_t j = 0; j < k; j++)
			expect(get(w, ref_rknn_b(dtype, i, j, k, n), es),
			       get(b, (size_t)(j * n + i), es), "rknn B", i, j);
	expect_done();
	assert_int_equal(rb_layout_rknn_unpack_b(back, w, dtype, k, n, 0), 0);
	assert_memory_equal(back, b, bytes);
	free(b);
	free(back);
	free(w);
}

/* C native: fp32/int32 (N/4, M, 4), fp16 (N/8, M, 8). */
static void check_rknn_c(size_t es, int64_t m, int64_t n)
{
	size_t bytes = (size_t)(m * n) * es;
	int64_t c2 = es == 4 ? 4 : 8;
	void *c = random_elems((size_t)(m * n), es), *back = malloc(bytes);
	uint8_t *x = marked(bytes);

	assert_int_equal(rb_layout_rknn_pack_c(x, c, es, m, n, 1), 0);
	check_guard(x, bytes);
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++)
			expect(get(x, (size_t)((j / c2) * m * c2 + i * c2 + j % c2), es),
			       get(c, (size_t)(i * n + j), es), "rknn C", i, j);
	expect_done();
	assert_int_equal(rb_layout_rknn_unpack_c(back, x, es, m, n, 1), 0);
	assert_memory_equal(back, c, bytes);
	free(c);
	free(back);
	free(x);
}

static void test_rknn(void **state)
{
	(void)state;
	check_rknn_a(RB_DTYPE_FP16, 5, 64);
	check_rknn_a(RB_DTYPE_INT8, 5, 64);
	check_rknn_a(RB_DTYPE_FP16, 1, 32);
	check_rknn_b(RB_DTYPE_FP16, 64, 48);
	check_rknn_b(RB_DTYPE_INT8, 96, 64);
	check_rknn_b(RB_DTYPE_FP16, 20480, 32); /* 8192 + 8192 + 4096 */
	check_rknn_b(RB_DTYPE_INT8, 8224, 32);  /* 8192 + 32 */
	check_rknn_c(4, 5, 48);
	check_rknn_c(2, 3, 48);
	check_rknn_c(4, 1, 16);
}

static void test_rknn_invalid(void **state)
{
	uint16_t buf[64 * 64] = {0};

	(void)state;
	assert_int_equal(rb_layout_rknn_pack_a(buf, buf, RB_DTYPE_FP16, 2, 48, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "multiple of 32"));
	assert_int_equal(rb_layout_rknn_pack_b(buf, buf, RB_DTYPE_FP16, 32, 24, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "multiple of 16"));
	assert_int_equal(rb_layout_rknn_pack_b(buf, buf, RB_DTYPE_INT8, 32, 48, 1), -EINVAL);
	assert_int_equal(rb_layout_rknn_unpack_c(buf, buf, 4, 2, 6, 1), -EINVAL);
	assert_int_equal(rb_layout_rknn_unpack_c(buf, buf, 8, 2, 8, 1), -EINVAL);
}

/* --- errors and sizes ---------------------------------------------------------------- */

static void test_invalid(void **state)
{
	uint8_t dst[4096], src[4096] = {0};
	struct rb_layout_c_tile t = {0, 2, 0, 8, 0, 2};

	(void)state;
	memset(dst, MARK, sizeof(dst));
	assert_int_equal(rb_layout_pack_a(dst, src, RB_DTYPE_FP16, 2, 33, 40, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "k_pad 40"));
	assert_int_equal(rb_layout_pack_a(dst, src, RB_DTYPE_FP16, 2, 33, 32, 1), -EINVAL);
	assert_int_equal(rb_layout_pack_a(dst, src, (enum rb_dtype)7, 2, 32, 32, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "dtype"));
	assert_int_equal(rb_layout_pack_a(NULL, src, RB_DTYPE_FP16, 2, 32, 32, 1), -EINVAL);
	assert_int_equal(rb_layout_pack_a(dst, src, RB_DTYPE_FP16, 0, 32, 32, 1), -EINVAL);
	assert_int_equal(rb_layout_pack_b(dst, src, RB_DTYPE_INT8, 32, 20, 32, 48, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "n_pad 48"));
	assert_int_equal(rb_layout_pack_b_sliced(dst, src, RB_DTYPE_FP16, 32, 16, 64, 16, 48, 1),
			 -EINVAL);
	assert_non_null(strstr(rb_last_error(), "k_slice"));
	for (size_t i = 0; i < sizeof(dst); i++)
		assert_int_equal(dst[i], MARK);

	assert_int_equal(rb_layout_unpack_c(dst, 7, src, 4, &t, 1), -EINVAL); /* n1 > ldc */
	t.n1 = 4;
	t.m1 = 3; /* past the cube */
	assert_int_equal(rb_layout_unpack_c(dst, 8, src, 4, &t, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "cube"));
	t.m1 = 2;
	assert_int_equal(rb_layout_unpack_c(dst, 8, src, 3, &t, 1), -EINVAL);
	assert_int_equal(rb_layout_unpack_c(dst, 8, src, 4, NULL, 1), -EINVAL);
	for (size_t i = 0; i < sizeof(dst); i++)
		assert_int_equal(dst[i], MARK);
}

static void test_sizes(void **state)
{
	(void)state;
	assert_int_equal(rb_layout_c2(1), 16);
	assert_int_equal(rb_layout_c2(2), 8);
	assert_int_equal(rb_layout_c2(4), 4);
	assert_int_equal(rb_layout_c2(3), 0);
	assert_int_equal(rb_layout_kernel_group(RB_DTYPE_FP16), 16);
	assert_int_equal(rb_layout_kernel_group(RB_DTYPE_INT8), 32);
	assert_int_equal(rb_layout_round_up(33, 32), 64);
	/* §b.2: ceil(K/C2)·M·16 bytes */
	assert_int_equal(rb_layout_a_bytes(RB_DTYPE_FP16, 5, 64), 64 / 8 * 5 * 16);
	assert_int_equal(rb_layout_a_bytes(RB_DTYPE_INT8, 5, 64), 64 / 16 * 5 * 16);
	assert_int_equal(rb_layout_b_bytes(RB_DTYPE_FP16, 2048, 8192), 2048 * 8192 * 2);
	/* §b.4: ceil(N/C2)·M·16 bytes */
	assert_int_equal(rb_layout_c_bytes(4, 3, 5), 2 * 3 * 16);
	assert_int_equal(rb_layout_c_bytes(2, 3, 5), 1 * 3 * 16);
	/* 2^31 × 2^31 × 2 bytes does not fit in an int64 */
	assert_int_equal(rb_layout_b_bytes(RB_DTYPE_FP16, INT64_C(1) << 31, INT64_C(1) << 31), 0);
	assert_int_equal(rb_layout_b_bytes((enum rb_dtype)9, 32, 32), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sizes),
	    cmocka_unit_test(test_pack_a),
	    cmocka_unit_test(test_pack_b),
	    cmocka_unit_test(test_pack_b_unsliced),
	    cmocka_unit_test(test_unaligned),
	    cmocka_unit_test(test_pack_b_sliced),
	    cmocka_unit_test(test_b_locate),
	    cmocka_unit_test(test_b_locate_matches_pack),
	    cmocka_unit_test(test_unpack_c_full),
	    cmocka_unit_test(test_unpack_c_fp16),
	    cmocka_unit_test(test_unpack_c_subrange),
	    cmocka_unit_test(test_unpack_c_from_big_cube),
	    cmocka_unit_test(test_accumulate_f32),
	    cmocka_unit_test(test_accumulate_i32),
	    cmocka_unit_test(test_threads),
	    cmocka_unit_test(test_threads_subrange),
	    cmocka_unit_test(test_rknn),
	    cmocka_unit_test(test_rknn_invalid),
	    cmocka_unit_test(test_invalid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
