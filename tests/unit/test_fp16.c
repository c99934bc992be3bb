/* Tests of the binary16 <-> binary32 conversions: every half value, the rounding
 * edges, and the fast array paths against the portable ones bit for bit. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fp16.h"

static uint32_t bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

static int half_is_nan(uint16_t h)
{
	return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0;
}

/* The value of a half computed independently, in double. */
static double half_value(uint16_t h)
{
	int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	double v = exp ? ldexp(1024 + mant, exp - 25) : ldexp(mant, -24);

	return (h & 0x8000) ? -v : v;
}

static void test_all_halves_round_trip(void **state)
{
	(void)state;
	for (uint32_t h = 0; h <= 0xffff; h++) {
		float f = rb_fp16_to_f32((uint16_t)h);
		uint16_t back = rb_fp16_from_f32(f);

		if (half_is_nan((uint16_t)h)) {
			assert_true(isnan(f));
			/* quiet bit set, sign and payload kept */
			assert_int_equal(back, h | 0x200);
			assert_int_equal(bits(f),
					 ((h & 0x8000u) << 16) | 0x7fc00000u | (h & 0x3ffu) << 13);
			continue;
		}
		assert_int_equal(back, h);
		if ((h & 0x7c00) == 0x7c00)
			assert_true(isinf(f));
		else
			assert_true((double)f == half_value((uint16_t)h));
		assert_int_equal(signbit(f) != 0, (h & 0x8000) != 0);
	}
}

struct f2h_case {
	uint32_t f;
	uint16_t h;
	const char *what;
};

static const struct f2h_case f2h_cases[] = {
    {0x477fe000, 0x7bff, "65504, the largest half"},
    {0x477fefff, 0x7bff, "just below 65520 rounds down to 65504"},
    {0x477ff000, 0x7c00, "65520 is a tie that rounds to even: inf"},
    {0x47800000, 0x7c00, "65536 overflows"},
    {0x501502f9, 0x7c00, "1e10 overflows"},
    {0xc77ff000, 0xfc00, "-65520 -> -inf"},
    {0x33800000, 0x0001, "2^-24, the smallest subnormal"},
    {0x33000000, 0x0000, "2^-25: tie between 0 and 2^-24 goes to 0"},
    {0x33000001, 0x0001, "just above 2^-25 rounds up"},
    {0xb3000000, 0x8000, "-2^-25 -> -0"},
    {0x32ffffff, 0x0000, "just below 2^-25 rounds to 0"},
    {0x33c00000, 0x0002, "1.5 ulps of 2^-24: tie between 1 and 2 goes to 2"},
    {0x34200000, 0x0002, "2.5 ulps: tie between 2 and 3 goes to 2"},
    {0x34400000, 0x0003, "3 ulps, exact"},
    {0x387fc000, 0x03ff, "largest subnormal"},
    {0x387fe000, 0x0400, "tie between largest subnormal and 2^-14 goes to even"},
    {0x38800000, 0x0400, "2^-14, the smallest normal"},
    {0x3f801000, 0x3c00, "1 + 2^-11: tie goes down to even 1.0"},
    {0x3f803000, 0x3c02, "1 + 3*2^-11: tie goes up to even"},
    {0x3f801001, 0x3c01, "just above the tie rounds up"},
    {0x00000001, 0x0000, "smallest float subnormal -> 0"},
    {0x80000000, 0x8000, "-0"},
    {0x7f800000, 0x7c00, "inf"},
    {0xff800000, 0xfc00, "-inf"},
    {0x7fc00000, 0x7e00, "default quiet NaN"},
    {0x7f800001, 0x7e00, "signalling NaN with low payload stays NaN, quieted"},
    {0xff800001, 0xfe00, "negative signalling NaN keeps its sign"},
    {0x7f802000, 0x7e01, "payload truncated to its top bits"},
    {0x7fbfffff, 0x7fff, "largest signalling payload"},
    {0xffffffff, 0xffff, "all ones"},
};

static void test_float_to_half_edges(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(f2h_cases) / sizeof(f2h_cases[0]); i++) {
		uint16_t h = rb_fp16_from_f32(from_bits(f2h_cases[i].f));

		if (h != f2h_cases[i].h)
			fail_msg("%08x (%s): got %04x, want %04x", f2h_cases[i].f,
				 f2h_cases[i].what, h, f2h_cases[i].h);
	}
}

static void test_half_to_float_edges(void **state)
{
	(void)state;
	assert_true(rb_fp16_to_f32(0x0001) == ldexpf(1.0f, -24));
	assert_true(rb_fp16_to_f32(0x03ff) == ldexpf(1023.0f, -24));
	assert_true(rb_fp16_to_f32(0x7bff) == 65504.0f);
	assert_int_equal(bits(rb_fp16_to_f32(0x8000)), 0x80000000u);
	assert_int_equal(bits(rb_fp16_to_f32(0x7c00)), 0x7f800000u);
	assert_int_equal(bits(rb_fp16_to_f32(0xfc00)), 0xff800000u);
	assert_int_equal(bits(rb_fp16_to_f32(0x7c01)), 0x7fc02000u);
	assert_int_equal(bits(rb_fp16_to_f32(0xfc01)), 0xffc02000u);
	assert_int_equal(bits(rb_fp16_to_f32(0x7dff)), 0x7fffe000u);
}

/* A float NaN becomes a half NaN whatever its payload: never inf. */
static void test_nan_never_inf(void **state)
{
	(void)state;
	for (uint32_t payload = 1; payload < 0x800000u; payload += 0x1ff) {
		uint16_t pos = rb_fp16_from_f32(from_bits(0x7f800000u | payload));
		uint16_t neg = rb_fp16_from_f32(from_bits(0xff800000u | payload));

		assert_true(half_is_nan(pos) && !(pos & 0x8000));
		assert_true(half_is_nan(neg) && (neg & 0x8000));
	}
}

static void assert_same_bits(const void *x, const void *y, size_t n, size_t size)
{
	const unsigned char *a = x, *b = y;

	for (size_t i = 0; i < n; i++) {
		if (memcmp(a + i * size, b + i * size, size) != 0)
			fail_msg("element %zu differs between the fast and portable paths", i);
	}
}

static void test_array_to_f32_matches_portable(void **state)
{
	uint16_t *h = malloc(65536 * sizeof(*h));
	float *fast = malloc(65536 * sizeof(*fast));
	float *port = malloc(65536 * sizeof(*port));

	(void)state;
	assert_non_null(h);
	assert_non_null(fast);
	assert_non_null(port);
	for (uint32_t i = 0; i < 65536; i++)
		h[i] = (uint16_t)i;
	rb_fp16_to_f32_array(fast, h, 65536);
	rb_fp16_to_f32_array_portable(port, h, 65536);
	assert_same_bits(fast, port, 65536, sizeof(float));
	/* Every length up to two vectors, at an odd offset, exercises the tails. */
	for (size_t n = 0; n <= 17; n++) {
		rb_fp16_to_f32_array(fast, h + 0x7bf7, n);
		rb_fp16_to_f32_array_portable(port, h + 0x7bf7, n);
		assert_same_bits(fast, port, n, sizeof(float));
	}
	free(h);
	free(fast);
	free(port);
}

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

/* Float bit patterns: random ones, and every top-19-bit prefix with the low 13 bits
 * (the ones rounding drops) set to the interesting values around a tie. */
static size_t fill_float_patterns(float *f, size_t cap)
{
	static const uint32_t low[] = {0x0000, 0x0001, 0x0fff, 0x1000, 0x1001, 0x1fff};
	uint64_t seed = 42;
	size_t n = 0;

	for (uint32_t top = 0; top < (1u << 19); top++)
		for (size_t i = 0; i < sizeof(low) / sizeof(low[0]) && n < cap; i++)
			f[n++] = from_bits(top << 13 | low[i]);
	while (n < cap)
		f[n++] = from_bits((uint32_t)splitmix(&seed));
	return n;
}

static void test_array_from_f32_matches_portable(void **state)
{
	size_t cap = (size_t)6 << 19 | (size_t)1 << 21;
	float *f = malloc(cap * sizeof(*f));
	uint16_t *fast = malloc(cap * sizeof(*fast));
	uint16_t *port = malloc(cap * sizeof(*port));
	size_t n;

	(void)state;
	assert_non_null(f);
	assert_non_null(fast);
	assert_non_null(port);
	n = fill_float_patterns(f, cap);
	rb_fp16_from_f32_array(fast, f, n);
	rb_fp16_from_f32_array_portable(port, f, n);
	assert_same_bits(fast, port, n, sizeof(uint16_t));
	for (size_t len = 0; len <= 17; len++) {
		rb_fp16_from_f32_array(fast, f + 1000003, len);
		rb_fp16_from_f32_array_portable(port, f + 1000003, len);
		assert_same_bits(fast, port, len, sizeof(uint16_t));
	}
	free(f);
	free(fast);
	free(port);
}

/* An independent check of the rounding: the chosen half is at least as close to the
 * float as its neighbours, and even on a tie. */
static void check_nearest(float f)
{
	uint16_t h = rb_fp16_from_f32(f);
	uint16_t mag = h & 0x7fff;
	double x = fabs((double)f), d = fabs(x - half_value(mag));

	if (x >= 65520.0) {
		assert_int_equal(mag, 0x7c00);
		return;
	}
	assert_true(mag < 0x7c00);
	assert_int_equal((h & 0x8000) != 0, signbit(f) != 0);
	if (mag < 0x7bff) {
		double up = fabs(x - half_value(mag + 1));

		assert_true(d < up || (d == up && !(mag & 1)));
	}
	if (mag > 0) {
		double down = fabs(x - half_value(mag - 1));

		assert_true(d < down || (d == down && !(mag & 1)));
	}
}

static void test_from_f32_is_nearest(void **state)
{
	size_t cap = (size_t)6 << 19 | (size_t)1 << 20;
	float *f = malloc(cap * sizeof(*f));
	size_t n;

	(void)state;
	assert_non_null(f);
	n = fill_float_patterns(f, cap);
	for (size_t i = 0; i < n; i++) {
		if (!isnan(f[i]))
			check_nearest(f[i]);
	}
	free(f);
}

/* The scalar conversion gives what the (fast) array conversion gives. */
static void test_scalar_matches_array(void **state)
{
	float f[64];
	uint16_t h[64];
	uint64_t seed = 7;

	(void)state;
	for (int round = 0; round < 1000; round++) {
		for (int i = 0; i < 64; i++)
			f[i] = from_bits((uint32_t)splitmix(&seed));
		rb_fp16_from_f32_array(h, f, 64);
		for (int i = 0; i < 64; i++)
			assert_int_equal(h[i], rb_fp16_from_f32(f[i]));
	}
}

static void test_impl_name(void **state)
{
	const char *impl = rb_fp16_impl();

	(void)state;
	assert_true(strcmp(impl, "f16c") == 0 || strcmp(impl, "neon") == 0 ||
		    strcmp(impl, "portable") == 0);
#if defined(__aarch64__)
	assert_string_equal(impl, "neon");
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_halves_round_trip),
	    cmocka_unit_test(test_float_to_half_edges),
	    cmocka_unit_test(test_half_to_float_edges),
	    cmocka_unit_test(test_nan_never_inf),
	    cmocka_unit_test(test_array_to_f32_matches_portable),
	    cmocka_unit_test(test_array_from_f32_matches_portable),
	    cmocka_unit_test(test_from_f32_is_nearest),
	    cmocka_unit_test(test_scalar_matches_array),
	    cmocka_unit_test(test_impl_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
