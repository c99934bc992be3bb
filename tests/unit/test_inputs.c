/* Unit tests of numeric/inputs: value sets of exact and uniform data, determinism, the
 * order-independence that exact data promises, alignment and size checks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fp16.h"
#include "numeric/inputs.h"
#include "thp.h"

static void test_exact_fp16_values(void **state)
{
	struct rb_shape s = {64, 100, 48, RB_DTYPE_FP16};
	struct rb_inputs in;
	int seen_a[9] = {0}, seen_b[17] = {0}, i;
	const uint16_t *a, *b;
	float v;

	(void)state;
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_EXACT), 0);
	assert_memory_equal(&in.shape, &s, sizeof(s));
	a = in.a;
	b = in.b;
	for (i = 0; i < 64 * 100; i++) {
		v = rb_fp16_to_f32(a[i]);
		assert_true(v == truncf(v) && v >= -4 && v <= 4);
		seen_a[(int)v + 4]++;
	}
	for (i = 0; i < 100 * 48; i++) {
		v = rb_fp16_to_f32(b[i]) * 8;
		assert_true(v == truncf(v) && v >= -8 && v <= 8);
		seen_b[(int)v + 8]++;
	}
	/* Every value is used, roughly equally (6400/9 = 711, 4800/17 = 282). */
	for (i = 0; i < 9; i++)
		assert_in_range(seen_a[i], 550, 880);
	for (i = 0; i < 17; i++)
		assert_in_range(seen_b[i], 190, 380);
	rb_inputs_release(&in);
	assert_null(in.a);
}

/* The promise of exact data: a long dot product is the same in any order. */
static void test_exact_is_order_independent(void **state)
{
	const int64_t k = 1 << 16;
	struct rb_shape s = {1, k, 1, RB_DTYPE_FP16};
	struct rb_inputs in;
	const uint16_t *a, *b;
	float fwd = 0, rev = 0, pairs = 0, x[2];
	double dbl = 0;
	int64_t p;

	(void)state;
	assert_int_equal(rb_inputs_init(&in, &s, 77, RB_DATA_EXACT), 0);
	a = in.a;
	b = in.b;
	for (p = 0; p < k; p++) {
		fwd += rb_fp16_to_f32(a[p]) * rb_fp16_to_f32(b[p]);
		rev += rb_fp16_to_f32(a[k - 1 - p]) * rb_fp16_to_f32(b[k - 1 - p]);
		dbl += (double)rb_fp16_to_f32(a[p]) * rb_fp16_to_f32(b[p]);
	}
	for (p = 0; p < k; p += 2) {
		x[0] = rb_fp16_to_f32(a[p]) * rb_fp16_to_f32(b[p]);
		x[1] = rb_fp16_to_f32(a[p + 1]) * rb_fp16_to_f32(b[p + 1]);
		pairs += x[0] + x[1];
	}
	assert_true(fwd == rev);
	assert_true(fwd == pairs);
	assert_true((double)fwd == dbl);
	rb_inputs_release(&in);
}

static void test_deterministic(void **state)
{
	struct rb_shape s = {8, 32, 16, RB_DTYPE_FP16}, s2 = {3, 32, 16, RB_DTYPE_FP16};
	struct rb_inputs x, y, z;

	(void)state;
	assert_int_equal(rb_inputs_init(&x, &s, 9, RB_DATA_EXACT), 0);
	assert_int_equal(rb_inputs_init(&y, &s, 9, RB_DATA_EXACT), 0);
	assert_int_equal(rb_inputs_init(&z, &s2, 9, RB_DATA_EXACT), 0);
	assert_memory_equal(x.a, y.a, 8 * 32 * 2);
	assert_memory_equal(x.b, y.b, 32 * 16 * 2);
	/* B does not depend on M; A's rows do not depend on M either. */
	assert_memory_equal(x.b, z.b, 32 * 16 * 2);
	assert_memory_equal(x.a, z.a, 3 * 32 * 2);
	rb_inputs_release(&y);
	assert_int_equal(rb_inputs_init(&y, &s, 10, RB_DATA_EXACT), 0);
	assert_memory_not_equal(x.a, y.a, 8 * 32 * 2);
	assert_memory_not_equal(x.b, y.b, 32 * 16 * 2);
	rb_inputs_release(&x);
	rb_inputs_release(&y);
	rb_inputs_release(&z);
}

static void test_uniform_fp16(void **state)
{
	const int count = 40000 * 2; /* more than one conversion batch */
	struct rb_shape s = {200, 200, 200, RB_DTYPE_FP16};
	struct rb_inputs in;
	const uint16_t *a;
	double sum = 0;
	int i, fine = 0;
	float v;

	(void)state;
	assert_int_equal(rb_inputs_init(&in, &s, 3, RB_DATA_UNIFORM), 0);
	a = in.a;
	for (i = 0; i < count / 2; i++) {
		v = rb_fp16_to_f32(a[i]);
		assert_true(v >= -1 && v <= 1);
		fine += v * 8 != truncf(v * 8);
		sum += v;
	}
	/* Mean of 40000 uniforms in [-1, 1]: 0 ± 0.0029 (1 sigma). */
	assert_true(fabs(sum / (count / 2.0)) < 0.015);
	assert_true(fine > count / 4);
	/* The last batch is filled too (a zero fp16 is rare in uniform data). */
	assert_true(rb_fp16_to_f32(a[39999]) != 0 || rb_fp16_to_f32(a[39998]) != 0);
	rb_inputs_release(&in);
}

static void test_int8(void **state)
{
	struct rb_shape s = {100, 100, 100, RB_DTYPE_INT8};
	enum rb_data_kind kinds[] = {RB_DATA_EXACT, RB_DATA_UNIFORM};
	struct rb_inputs in;
	const int8_t *b;
	int seen_lo, seen_hi, i, kind;
	double sum;

	(void)state;
	for (kind = 0; kind < 2; kind++) {
		assert_int_equal(rb_inputs_init(&in, &s, 11, kinds[kind]), 0);
		b = in.b;
		seen_lo = seen_hi = 0;
		sum = 0;
		for (i = 0; i < 10000; i++) {
			seen_lo += b[i] == -128;
			seen_hi += b[i] == 127;
			sum += b[i];
		}
		/* 10000 draws: each of 256 values about 39 times; mean -0.5 ± 0.74. */
		assert_true(seen_lo > 10 && seen_hi > 10);
		assert_true(fabs(sum / 10000 + 0.5) < 4);
		rb_inputs_release(&in);
	}
}

static void test_alignment_and_output(void **state)
{
	struct rb_shape s = {3, 5, 7, RB_DTYPE_INT8};
	struct rb_inputs in;
	unsigned char *c;
	int i;

	(void)state;
	assert_int_equal(rb_inputs_init(&in, &s, 0, RB_DATA_EXACT), 0);
	assert_int_equal((uintptr_t)in.a % 64, 0);
	assert_int_equal((uintptr_t)in.b % 64, 0);
	rb_inputs_release(&in);
	c = rb_output_alloc(&s);
	assert_non_null(c);
	assert_int_equal((uintptr_t)c % 64, 0);
	for (i = 0; i < 3 * 7 * 4; i++)
		assert_int_equal(c[i], RB_OUTPUT_POISON);
	assert_int_equal(((int32_t *)c)[20], 2139062143);
	free(c);
	s.dtype = RB_DTYPE_FP16;
	c = rb_output_alloc(&s);
	assert_non_null(c);
	assert_true(((float *)c)[0] > 3e38f);
	free(c);
}

/* A buffer of 2 MiB or more is 2 MiB-aligned and asks for huge pages (packing B reads
 * 32 rows at once, in 32 pages); a small one is only RB_INPUTS_ALIGN-aligned. The
 * matrices of a big shape come through it. */
static void test_big_buffers_ask_for_huge_pages(void **state)
{
	struct rb_shape s = {1, 2048, 2048, RB_DTYPE_FP16};
	struct rb_inputs in;
	char flags[512];
	void *big = rb_inputs_alloc((size_t)4 << 20), *small = rb_inputs_alloc(1000);

	(void)state;
	assert_non_null(big);
	assert_non_null(small);
	assert_int_equal((uintptr_t)big % ((uintptr_t)2 << 20), 0);
	assert_int_equal((uintptr_t)small % RB_INPUTS_ALIGN, 0);
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_UNIFORM), 0);
	assert_int_equal((uintptr_t)in.b % ((uintptr_t)2 << 20), 0); /* 8 MiB */
	if (thp_available()) {
		thp_vm_flags_of(big, flags, sizeof(flags));
		assert_non_null(strstr(flags, " hg"));
		thp_vm_flags_of(in.b, flags, sizeof(flags));
		assert_non_null(strstr(flags, " hg"));
	} else {
		print_message("# no transparent huge pages here: flags not checked\n");
	}
	rb_inputs_release(&in);
	free(big);
	free(small);
}

static void test_bad_shapes(void **state)
{
	const int64_t big = INT64_C(1) << 31;
	struct rb_shape s = {0, 5, 7, RB_DTYPE_FP16};
	struct rb_inputs in;

	(void)state;
	assert_int_equal(rb_inputs_init(&in, &s, 0, RB_DATA_EXACT), -EINVAL);
	assert_null(in.a);
	assert_null(in.b);
	s = (struct rb_shape){2, big + 1, 2, RB_DTYPE_FP16};
	assert_int_equal(rb_inputs_init(&in, &s, 0, RB_DATA_EXACT), -EINVAL);
	s = (struct rb_shape){2, 2, 2, (enum rb_dtype)7};
	assert_int_equal(rb_inputs_init(&in, &s, 0, RB_DATA_EXACT), -EINVAL);
	errno = 0;
	assert_null(rb_output_alloc(&s));
	assert_int_equal(errno, EINVAL);
	/* 2^62 int32 outputs are 2^64 bytes: more than any size_t. Inputs refuse such a
	 * shape before allocating A and B (2 GiB each here). */
	s = (struct rb_shape){big, 1, big, RB_DTYPE_INT8};
	errno = 0;
	assert_null(rb_output_alloc(&s));
	assert_int_equal(errno, EOVERFLOW);
	assert_int_equal(rb_inputs_init(&in, &s, 0, RB_DATA_EXACT), -EOVERFLOW);
	assert_non_null(strstr(rb_last_error(), "matrix C (2147483648x2147483648"));
	assert_null(in.a);
}

static void test_kind_names(void **state)
{
	enum rb_data_kind k;

	(void)state;
	assert_int_equal(rb_data_kind_parse("exact", &k), 0);
	assert_int_equal(k, RB_DATA_EXACT);
	assert_int_equal(rb_data_kind_parse("uniform", &k), 0);
	assert_int_equal(k, RB_DATA_UNIFORM);
	assert_int_equal(rb_data_kind_parse("random", &k), -EINVAL);
	assert_string_equal(rb_data_kind_name(RB_DATA_EXACT), "exact");
	assert_string_equal(rb_data_kind_name(RB_DATA_UNIFORM), "uniform");
}

/* B is one stream whatever its shape, and large matrices are filled in parts on every
 * CPU: B of 8 M elements (parts of 4 M on two CPUs), of 6 M (parts of 3 M) and of 64 K
 * (one thread) must agree on the elements they share, for every kind of data. */
static void test_parallel_fill_is_one_stream(void **state)
{
	const struct rb_shape shapes[] = {{1, 4096, 2048, RB_DTYPE_FP16},
					  {1, 3072, 2048, RB_DTYPE_FP16},
					  {1, 64, 1024, RB_DTYPE_FP16}};
	const enum rb_dtype dtypes[] = {RB_DTYPE_FP16, RB_DTYPE_FP16, RB_DTYPE_INT8};
	const enum rb_data_kind kinds[] = {RB_DATA_EXACT, RB_DATA_UNIFORM, RB_DATA_EXACT};

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		struct rb_inputs in[3];

		for (size_t i = 0; i < 3; i++) {
			struct rb_shape sh = shapes[i];

			sh.dtype = dtypes[k];
			assert_int_equal(rb_inputs_init(&in[i], &sh, 5, kinds[k]), 0);
		}
		for (size_t i = 1; i < 3; i++) {
			size_t shared = (size_t)(shapes[i].k * shapes[i].n) *
					(dtypes[k] == RB_DTYPE_INT8 ? 1 : 2);

			assert_memory_equal(in[0].b, in[i].b, shared);
		}
		for (size_t i = 0; i < 3; i++)
			rb_inputs_release(&in[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_exact_fp16_values),
	    cmocka_unit_test(test_exact_is_order_independent),
	    cmocka_unit_test(test_deterministic),
	    cmocka_unit_test(test_uniform_fp16),
	    cmocka_unit_test(test_int8),
	    cmocka_unit_test(test_alignment_and_output),
	    cmocka_unit_test(test_big_buffers_ask_for_huge_pages),
	    cmocka_unit_test(test_bad_shapes),
	    cmocka_unit_test(test_kind_names),
	    cmocka_unit_test(test_parallel_fill_is_one_stream),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
