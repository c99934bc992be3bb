/* Unit tests of core/rng: the splitmix64 stream, ranges and unit doubles. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "core/rng.h"

/* Reference splitmix64 outputs (Vigna's splitmix64.c) for seed 0 and seed 12345. */
static void test_known_stream(void **state)
{
	static const uint64_t seed0[] = {
	    UINT64_C(0xe220a8397b1dcdaf),
	    UINT64_C(0x6e789e6aa1b965f4),
	    UINT64_C(0x06c45d188009454f),
	};
	struct rb_rng rng;
	size_t i;

	(void)state;
	rb_rng_init(&rng, 0);
	for (i = 0; i < 3; i++)
		assert_true(rb_rng_next(&rng) == seed0[i]);
	rb_rng_init(&rng, 12345);
	assert_true(rb_rng_next(&rng) == UINT64_C(0x22118258a9d111a0));
	assert_true(rb_rng_next(&rng) == UINT64_C(0x346edce5f713f8ed));
}

/* rb_rng_mix with an explicit state walk is the same stream (inputs.c relies on it). */
static void test_mix_matches_next(void **state)
{
	struct rb_rng rng;
	uint64_t s = 99;
	int i;

	(void)state;
	rb_rng_init(&rng, 99);
	for (i = 0; i < 100; i++) {
		s += RB_RNG_GAMMA;
		assert_true(rb_rng_mix(s) == rb_rng_next(&rng));
	}
}

static void test_range_bounds_and_coverage(void **state)
{
	struct rb_rng rng;
	int seen[9] = {0};
	int64_t v;
	int i;

	(void)state;
	rb_rng_init(&rng, 7);
	for (i = 0; i < 10000; i++) {
		v = rb_rng_range(&rng, -4, 4);
		assert_in_range(v + 4, 0, 8);
		seen[v + 4]++;
	}
	/* 10000 draws over 9 values: each near 1111; 900 is > 6 sigma below. */
	for (i = 0; i < 9; i++)
		assert_true(seen[i] > 900);
	assert_int_equal(rb_rng_range(&rng, 5, 5), 5);
}

static void test_range_extremes(void **state)
{
	struct rb_rng a, b;
	int64_t v;
	int i;

	(void)state;
	/* The full 64-bit range is the raw stream. */
	rb_rng_init(&a, 3);
	rb_rng_init(&b, 3);
	assert_true(rb_rng_range(&a, INT64_MIN, INT64_MAX) == (int64_t)rb_rng_next(&b));
	/* A span wider than INT64_MAX must not overflow. */
	for (i = 0; i < 1000; i++) {
		v = rb_rng_range(&a, -2, INT64_MAX);
		assert_true(v >= -2);
	}
}

static void test_unit(void **state)
{
	struct rb_rng rng;
	double u, sum = 0;
	int i;

	(void)state;
	rb_rng_init(&rng, 42);
	for (i = 0; i < 100000; i++) {
		u = rb_rng_unit(&rng);
		assert_true(u >= 0 && u < 1);
		sum += u;
	}
	/* Mean of 1e5 uniforms: 0.5 ± 0.0009 (1 sigma); allow 5 sigma. */
	assert_true(sum / 100000 > 0.4955 && sum / 100000 < 0.5045);
}

static void test_same_seed_same_stream(void **state)
{
	struct rb_rng a, b;
	int i, differ = 0;

	(void)state;
	rb_rng_init(&a, 1);
	rb_rng_init(&b, 1);
	for (i = 0; i < 50; i++)
		assert_true(rb_rng_next(&a) == rb_rng_next(&b));
	rb_rng_init(&b, 2);
	for (i = 0; i < 50; i++)
		differ += rb_rng_next(&a) != rb_rng_next(&b);
	assert_int_equal(differ, 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_stream),
	    cmocka_unit_test(test_mix_matches_next),
	    cmocka_unit_test(test_range_bounds_and_coverage),
	    cmocka_unit_test(test_range_extremes),
	    cmocka_unit_test(test_unit),
	    cmocka_unit_test(test_same_seed_same_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
