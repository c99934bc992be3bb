/* Unit tests of numeric/verify: tolerance rules, injected errors found at the right
 * (i, j) with the right counts, sample mode and its corners, mode resolution. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fp16.h"
#include "numeric/verify.h"

/* A small matmul with inputs, the expected C (computed here, independently of
 * numeric/ref) and a device C that starts as a copy of it. */
struct case_data {
	struct rb_shape shape;
	uint16_t *a16, *b16;
	int8_t *a8, *b8;
	float *exp_f, *c_f;
	int32_t *exp_i, *c_i;
	struct rb_matmul_io io;
};

/* Small integers so fp32 sums are exact in any order. */
static void make_case(struct case_data *t, int64_t m, int64_t k, int64_t n, enum rb_dtype dt)
{
	int64_t i, j, p;

	memset(t, 0, sizeof(*t));
	t->shape = (struct rb_shape){m, k, n, dt};
	t->a16 = calloc((size_t)(m * k), 2);
	t->b16 = calloc((size_t)(k * n), 2);
	t->a8 = calloc((size_t)(m * k), 1);
	t->b8 = calloc((size_t)(k * n), 1);
	t->exp_f = calloc((size_t)(m * n), 4);
	t->c_f = calloc((size_t)(m * n), 4);
	t->exp_i = calloc((size_t)(m * n), 4);
	t->c_i = calloc((size_t)(m * n), 4);
	for (p = 0; p < m * k; p++) {
		t->a8[p] = (int8_t)((p * 7) % 11 - 5);
		t->a16[p] = rb_fp16_from_f32((float)t->a8[p]);
	}
	for (p = 0; p < k * n; p++) {
		t->b8[p] = (int8_t)((p * 5) % 13 - 6);
		t->b16[p] = rb_fp16_from_f32((float)t->b8[p] / 4);
	}
	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++)
			for (p = 0; p < k; p++) {
				t->exp_i[i * n + j] += t->a8[i * k + p] * t->b8[p * n + j];
				t->exp_f[i * n + j] +=
				    (float)t->a8[i * k + p] * ((float)t->b8[p * n + j] / 4);
			}
	memcpy(t->c_f, t->exp_f, (size_t)(m * n) * 4);
	memcpy(t->c_i, t->exp_i, (size_t)(m * n) * 4);
	t->io.shape = t->shape;
	t->io.a = dt == RB_DTYPE_FP16 ? (const void *)t->a16 : (const void *)t->a8;
	t->io.b = dt == RB_DTYPE_FP16 ? (const void *)t->b16 : (const void *)t->b8;
	t->io.c = dt == RB_DTYPE_FP16 ? (const void *)t->c_f : (const void *)t->c_i;
}

static void free_case(struct case_data *t)
{
	free(t->a16);
	free(t->b16);
	free(t->a8);
	free(t->b8);
	free(t->exp_f);
	free(t->c_f);
	free(t->exp_i);
	free(t->c_i);
}

/* The case of a test: made before it (setup, from the shape in its row of main's
 * table) and freed after it (teardown), with the options of a dtype and a result. */
struct case_shape {
	int64_t m, k, n;
	enum rb_dtype dtype, opts; /* of the inputs; of the options */
};

struct fixture {
	struct case_data t;
	struct rb_verify_opts o;
	struct rb_verify_result r;
};

static int setup(void **state)
{
	const struct case_shape *s = *state;
	struct fixture *f = malloc(sizeof(*f));

	if (!f)
		return -1;
	make_case(&f->t, s->m, s->k, s->n, s->dtype);
	rb_verify_opts_init(&f->o, s->opts);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	free_case(&f->t);
	free(f);
	return 0;
}

/* A test run on a case of m×k×n inputs of `dtype`, options of `opts`. */
#define CASE_TEST(fn, m, k, n, dtype, opts)                                                        \
	cmocka_unit_test_prestate_setup_teardown(fn, setup, teardown,                              \
						 (&(struct case_shape){m, k, n, dtype, opts}))

static void test_opts_defaults(void **state)
{
	struct rb_verify_opts o;

	(void)state;
	rb_verify_opts_init(&o, RB_DTYPE_FP16);
	assert_int_equal(o.mode, RB_VERIFY_AUTO);
	assert_true(o.atol == RB_VERIFY_FP16_ATOL && o.rtol == RB_VERIFY_FP16_RTOL);
	assert_int_equal(o.samples, RB_VERIFY_DEFAULT_SAMPLES);
	assert_true(o.full_limit == RB_VERIFY_FULL_LIMIT);
	rb_verify_opts_init(&o, RB_DTYPE_INT8);
	assert_true(o.atol == 0 && o.rtol == 0);
}

static void test_resolve_mode(void **state)
{
	struct rb_verify_opts o;
	struct rb_shape s = {1024, 1024, 1024, RB_DTYPE_FP16}; /* exactly 2^30 */
	const int64_t big = INT64_C(1) << 31;

	(void)state;
	rb_verify_opts_init(&o, RB_DTYPE_FP16);
	assert_int_equal(rb_verify_resolve_mode(&o, &s), RB_VERIFY_FULL);
	s.n = 1025;
	assert_int_equal(rb_verify_resolve_mode(&o, &s), RB_VERIFY_SAMPLE);
	/* M·N·K = 2^93 must not overflow into a small number. */
	s = (struct rb_shape){big, big, big, RB_DTYPE_INT8};
	assert_int_equal(rb_verify_resolve_mode(&o, &s), RB_VERIFY_SAMPLE);
	o.full_limit = 100;
	s = (struct rb_shape){4, 5, 5, RB_DTYPE_INT8};
	assert_int_equal(rb_verify_resolve_mode(&o, &s), RB_VERIFY_FULL);
	s.k = 6;
	assert_int_equal(rb_verify_resolve_mode(&o, &s), RB_VERIFY_SAMPLE);
	/* Explicit modes are kept. */
	o.mode = RB_VERIFY_NONE;
	assert_int_equal(rb_verify_resolve_mode(&o, &s), RB_VERIFY_NONE);
	o.mode = RB_VERIFY_FULL;
	assert_int_equal(rb_verify_resolve_mode(&o, &s), RB_VERIFY_FULL);
}

static void test_names(void **state)
{
	enum rb_verify_mode m;
	const char *names[] = {"auto", "full", "sample", "none"};
	int i;

	(void)state;
	for (i = 0; i < 4; i++) {
		assert_int_equal(rb_verify_mode_parse(names[i], &m), 0);
		assert_int_equal(m, i);
		assert_string_equal(rb_verify_mode_name(m), names[i]);
	}
	assert_int_equal(rb_verify_mode_parse("ful", &m), -EINVAL);
	assert_int_equal(rb_verify_mode_parse("", &m), -EINVAL);
	assert_string_equal(rb_verify_status_name(RB_VERIFY_VERIFIED), "verified");
	assert_string_equal(rb_verify_status_name(RB_VERIFY_FAILED), "failed");
	assert_string_equal(rb_verify_status_name(RB_VERIFY_SKIPPED), "skipped");
}

static void test_full_pass(void **state)
{
	struct fixture *f = *state;

	rb_verify_full(&f->t.io, f->t.exp_f, &f->o, &f->r);
	assert_int_equal(f->r.status, RB_VERIFY_VERIFIED);
	assert_int_equal(f->r.mode, RB_VERIFY_FULL);
	assert_int_equal(f->r.checked, 30);
	assert_int_equal(f->r.mismatches, 0);
	assert_int_equal(f->r.n_reported, 0);
	assert_true(f->r.max_abs == 0 && f->r.max_rel == 0);
}

/* Two wrong elements, planted out of row-major order: found at the right (i, j), in
 * row-major order, with the right values and error. */
static void test_full_injected(void **state)
{
	struct fixture *f = *state;

	f->t.c_f[3 * 6 + 0] += 0.5f;
	f->t.c_f[1 * 6 + 2] -= 2.0f;
	rb_verify_full(&f->t.io, f->t.exp_f, &f->o, &f->r);
	assert_int_equal(f->r.status, RB_VERIFY_FAILED);
	assert_int_equal(f->r.checked, 30);
	assert_int_equal(f->r.mismatches, 2);
	assert_int_equal(f->r.n_reported, 2);
	assert_int_equal(f->r.first[0].i, 1);
	assert_int_equal(f->r.first[0].j, 2);
	assert_true(f->r.first[0].expected == f->t.exp_f[8]);
	assert_true(f->r.first[0].got == f->t.exp_f[8] - 2.0f);
	assert_int_equal(f->r.first[1].i, 3);
	assert_int_equal(f->r.first[1].j, 0);
	assert_true(f->r.max_abs == 2.0);
}

/* |got - exp| <= atol + rtol·|exp|: at exp = 10 the tolerance is 0.011. */
static void test_tolerance(void **state)
{
	struct fixture *f = *state;

	f->t.exp_f[0] = 10;
	f->t.c_f[0] = 10.01f;
	f->t.exp_f[1] = 0;
	f->t.c_f[1] = 0.0009f; /* within atol; exp 0 stays out of max_rel */
	rb_verify_full(&f->t.io, f->t.exp_f, &f->o, &f->r);
	assert_int_equal(f->r.status, RB_VERIFY_VERIFIED);
	assert_true(fabs(f->r.max_rel - 0.001) < 1e-6);
	assert_true(fabs(f->r.max_abs - 0.01) < 1e-6);
	f->t.c_f[0] = 10.02f;
	f->t.c_f[1] = 0.0011f;
	rb_verify_full(&f->t.io, f->t.exp_f, &f->o, &f->r);
	assert_int_equal(f->r.mismatches, 2);
}

static void test_nonfinite(void **state)
{
	struct fixture *f = *state;

	f->o.atol = 1e30; /* would accept any finite value */
	f->t.c_f[1] = NAN;
	f->t.c_f[2] = INFINITY;
	rb_verify_full(&f->t.io, f->t.exp_f, &f->o, &f->r);
	assert_int_equal(f->r.mismatches, 2);
	assert_int_equal(f->r.first[0].j, 1);
	assert_true(isnan(f->r.first[0].got));
	assert_int_equal(f->r.first[1].i, 1);
	assert_true(isinf(f->r.max_abs));
	/* A non-finite expected value matches only itself. */
	f->t.c_f[1] = f->t.exp_f[1] = NAN;
	f->t.c_f[2] = f->t.exp_f[2] = INFINITY;
	rb_verify_full(&f->t.io, f->t.exp_f, &f->o, &f->r);
	assert_int_equal(f->r.status, RB_VERIFY_VERIFIED);
	f->t.c_f[2] = -INFINITY;
	rb_verify_full(&f->t.io, f->t.exp_f, &f->o, &f->r);
	assert_int_equal(f->r.mismatches, 1);
}

/* Every element wrong: all counted, the first ten reported in row-major order. */
static void test_report_cap(void **state)
{
	struct fixture *f = *state;
	int64_t p;
	int q;

	for (p = 0; p < 20; p++)
		f->t.c_f[p] += 1;
	rb_verify_full(&f->t.io, f->t.exp_f, &f->o, &f->r);
	assert_int_equal(f->r.mismatches, 20);
	assert_int_equal(f->r.n_reported, RB_VERIFY_MAX_REPORTED);
	for (q = 0; q < RB_VERIFY_MAX_REPORTED; q++) {
		assert_int_equal(f->r.first[q].i, q / 5);
		assert_int_equal(f->r.first[q].j, q % 5);
	}
}

/* int8 is exact even when the options carry fp16 tolerances (a CLI shares one set). */
static void test_int8_exact(void **state)
{
	struct fixture *f = *state;

	f->o.atol = 10;
	rb_verify_full(&f->t.io, f->t.exp_i, &f->o, &f->r);
	assert_int_equal(f->r.status, RB_VERIFY_VERIFIED);
	f->t.c_i[2 * 4 + 3] += 1;
	rb_verify_full(&f->t.io, f->t.exp_i, &f->o, &f->r);
	assert_int_equal(f->r.status, RB_VERIFY_FAILED);
	assert_int_equal(f->r.mismatches, 1);
	assert_int_equal(f->r.first[0].i, 2);
	assert_int_equal(f->r.first[0].j, 3);
	assert_true(f->r.first[0].got == f->r.first[0].expected + 1);
	assert_true(f->r.max_abs == 1);
}

static void test_sample_pass(void **state)
{
	struct fixture *f = *state;

	f->o.samples = 50;
	rb_verify_sample(&f->t.io, &f->o, &f->r);
	assert_int_equal(f->r.status, RB_VERIFY_VERIFIED);
	assert_int_equal(f->r.mode, RB_VERIFY_SAMPLE);
	/* 46 drawn positions plus 4 corners, one fewer per draw that hits a corner. */
	assert_in_range(f->r.checked, 46, 50);
}

/* One wrong corner at a time is always caught, with its own (i, j). */
static void test_sample_corners(void **state)
{
	const int64_t m = 37, n = 29;
	const int64_t corner[4][2] = {{0, 0}, {0, n - 1}, {m - 1, 0}, {m - 1, n - 1}};
	struct case_data t;
	struct rb_verify_opts o;
	struct rb_verify_result r;
	int c;

	(void)state;
	for (c = 0; c < 4; c++) {
		make_case(&t, m, 16, n, c % 2 ? RB_DTYPE_INT8 : RB_DTYPE_FP16);
		rb_verify_opts_init(&o, t.shape.dtype);
		o.samples = 8;
		o.seed = (uint64_t)c;
		if (t.shape.dtype == RB_DTYPE_FP16)
			t.c_f[corner[c][0] * n + corner[c][1]] += 1;
		else
			t.c_i[corner[c][0] * n + corner[c][1]] -= 3;
		rb_verify_sample(&t.io, &o, &r);
		assert_int_equal(r.status, RB_VERIFY_FAILED);
		assert_int_equal(r.mismatches, 1);
		assert_int_equal(r.first[0].i, corner[c][0]);
		assert_int_equal(r.first[0].j, corner[c][1]);
		free_case(&t);
	}
}

static int64_t linear(const struct rb_mismatch *mm, int64_t n)
{
	return mm->i * n + mm->j;
}

/* With every element wrong, the checked positions are the mismatches: distinct, in
 * row-major order, spread over the matrix, and fixed by the seed. */
static void test_sample_positions(void **state)
{
	struct fixture *f = *state;
	struct rb_verify_result again, other;
	int64_t p;
	int q;

	for (p = 0; p < 2000; p++)
		f->t.c_f[p] = -1000;
	f->o.samples = 12;
	f->o.seed = 5;
	rb_verify_sample(&f->t.io, &f->o, &f->r);
	assert_int_equal(f->r.mismatches, f->r.checked);
	assert_in_range(f->r.checked, 8, 12);
	assert_int_equal(linear(&f->r.first[0], 50), 0);
	for (q = 1; q < f->r.n_reported; q++)
		assert_true(linear(&f->r.first[q], 50) > linear(&f->r.first[q - 1], 50));
	/* Eight strata of 250 elements: the drawn positions (not corners 0, 49, 1950,
	 * 1999) fall one in each. */
	assert_true(linear(&f->r.first[2], 50) < 250 + 250);
	rb_verify_sample(&f->t.io, &f->o, &again);
	assert_memory_equal(&f->r, &again, sizeof(f->r));
	f->o.seed = 6;
	rb_verify_sample(&f->t.io, &f->o, &other);
	assert_memory_not_equal(f->r.first, other.first, sizeof(f->r.first));
}

/* samples >= M·N checks every element, so an error anywhere is found. */
static void test_sample_all(void **state)
{
	struct fixture *f = *state;

	f->o.samples = 42;
	f->t.c_i[3 * 7 + 4] = 12345;
	rb_verify_sample(&f->t.io, &f->o, &f->r);
	assert_int_equal(f->r.checked, 42);
	assert_int_equal(f->r.mismatches, 1);
	assert_int_equal(f->r.first[0].i, 3);
	assert_int_equal(f->r.first[0].j, 4);
	assert_true(f->r.first[0].expected == f->t.exp_i[3 * 7 + 4]);
}

/* Degenerate shapes: the corners coincide. */
static void test_sample_vector(void **state)
{
	struct case_data t;
	struct rb_verify_opts o;
	struct rb_verify_result r;

	(void)state;
	make_case(&t, 1, 64, 300, RB_DTYPE_FP16);
	rb_verify_opts_init(&o, RB_DTYPE_FP16);
	o.samples = 2; /* just the two distinct corners */
	t.c_f[299] = 0.25f + t.exp_f[299];
	rb_verify_sample(&t.io, &o, &r);
	assert_int_equal(r.checked, 2);
	assert_int_equal(r.mismatches, 1);
	assert_int_equal(r.first[0].j, 299);
	free_case(&t);
	make_case(&t, 1, 3, 1, RB_DTYPE_FP16);
	o.samples = 0;
	rb_verify_sample(&t.io, &o, &r);
	assert_int_equal(r.checked, 1);
	assert_int_equal(r.status, RB_VERIFY_VERIFIED);
	free_case(&t);
}

static void test_skipped(void **state)
{
	struct rb_verify_result r;

	(void)state;
	memset(&r, 0xab, sizeof(r));
	rb_verify_skipped(&r);
	assert_int_equal(r.status, RB_VERIFY_SKIPPED);
	assert_int_equal(r.mode, RB_VERIFY_NONE);
	assert_int_equal(r.checked, 0);
	assert_int_equal(r.mismatches, 0);
	assert_int_equal(r.n_reported, 0);
	assert_true(isnan(r.max_abs) && isnan(r.max_rel));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_opts_defaults),
	    cmocka_unit_test(test_resolve_mode),
	    cmocka_unit_test(test_names),
	    CASE_TEST(test_full_pass, 5, 7, 6, RB_DTYPE_FP16, RB_DTYPE_FP16),
	    CASE_TEST(test_full_injected, 5, 7, 6, RB_DTYPE_FP16, RB_DTYPE_FP16),
	    CASE_TEST(test_tolerance, 1, 1, 2, RB_DTYPE_FP16, RB_DTYPE_FP16),
	    CASE_TEST(test_nonfinite, 2, 3, 2, RB_DTYPE_FP16, RB_DTYPE_FP16),
	    CASE_TEST(test_report_cap, 4, 3, 5, RB_DTYPE_FP16, RB_DTYPE_FP16),
	    CASE_TEST(test_int8_exact, 3, 9, 4, RB_DTYPE_INT8, RB_DTYPE_FP16),
	    CASE_TEST(test_sample_pass, 37, 16, 29, RB_DTYPE_FP16, RB_DTYPE_FP16),
	    cmocka_unit_test(test_sample_corners),
	    CASE_TEST(test_sample_positions, 40, 4, 50, RB_DTYPE_FP16, RB_DTYPE_FP16),
	    CASE_TEST(test_sample_all, 6, 5, 7, RB_DTYPE_INT8, RB_DTYPE_INT8),
	    cmocka_unit_test(test_sample_vector),
	    cmocka_unit_test(test_skipped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
