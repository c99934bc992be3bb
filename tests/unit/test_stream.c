/* Streamed B (numeric/inputs.h rb_inputs_init_streamed, run/measure.c): B made a block at a
 * time from its stream must be the B rb_inputs_init holds, so that a run on streamed
 * inputs gives the same C, the same reference C and the same verdicts. Checked here
 * with uniform data, where any change of value or summation order shows in the bits,
 * on shapes whose K and N need padding, with K-sliced weights and with a kept packed
 * B; and a failing verdict is the same failure. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/error.h"
#include "numeric/inputs.h"
#include "numeric/ref.h"
#include "numeric/verify.h"
#include "run/engine.h"
#include "run/measure.h"

static size_t in_size(const struct rb_shape *s)
{
	return rb_dtype_in_size(s->dtype);
}

/* rb_inputs_b_block of streamed inputs is the same block of the held B, for blocks of
 * every form: single elements, single columns, single rows, a block large enough to be
 * made on several threads, and the whole of B. */
static void test_blocks_are_the_held_b(void **state)
{
	const struct rb_shape shapes[] = {{3, 1000, 2100, RB_DTYPE_FP16},
					  {2, 2100, 1000, RB_DTYPE_INT8}};
	const enum rb_data_kind kinds[] = {RB_DATA_EXACT, RB_DATA_UNIFORM};
	/* {k0, rows, n0, cols, threads} */
	const int64_t blocks[][5] = {
	    {0, 1, 0, 1, 1},      {999, 1, 999, 1, 1},   {0, 1000, 17, 1, 1}, {5, 1, 0, 1000, 3},
	    {7, 993, 33, 967, 3}, {0, 1000, 0, 1000, 2}, {1, 998, 1, 998, 0}};

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		for (size_t k = 0; k < 2; k++) {
			const struct rb_shape *s = &shapes[i];
			struct rb_inputs held, streamed;
			size_t es = in_size(s);
			char *want = malloc((size_t)(s->k * s->n) * es);
			char *got = malloc((size_t)(s->k * s->n) * es);

			assert_non_null(want);
			assert_non_null(got);
			assert_int_equal(rb_inputs_init(&held, s, 5, kinds[k]), 0);
			assert_int_equal(rb_inputs_init_streamed(&streamed, s, 5, kinds[k]), 0);
			assert_null(streamed.b);
			assert_true(rb_inputs_has_b(&streamed) && rb_inputs_has_b(&held));
			assert_memory_equal(held.a, streamed.a, (size_t)(s->m * s->k) * es);
			rb_inputs_b_block(&streamed, 0, s->k, 0, s->n, got, 0);
			assert_memory_equal(held.b, got, (size_t)(s->k * s->n) * es);
			for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
				const int64_t *x = blocks[b];
				size_t bytes = (size_t)(x[1] * x[3]) * es;

				rb_inputs_b_block(&held, x[0], x[1], x[2], x[3], want, 1);
				rb_inputs_b_block(&streamed, x[0], x[1], x[2], x[3], got,
						  (int)x[4]);
				assert_memory_equal(want, got, bytes);
			}
			rb_inputs_release(&held);
			rb_inputs_release(&streamed);
			free(want);
			free(got);
		}
	}
}

/* rb_inputs_b_columns: every column once, in blocks that are B's, on 1 and 3 threads;
 * the first error stops the walk and comes back with its message. */
struct walk {
	const struct rb_inputs *held;
	unsigned char *seen; /* per column */
	int64_t fail_at;     /* n0 of the block that fails; -1: none */
};

static int visit(void *ctx, const void *block, int64_t n0, int64_t cols)
{
	struct walk *w = ctx;
	const struct rb_shape *s = &w->held->shape;
	const uint16_t *b = w->held->b;
	const uint16_t *got = block;

	if (n0 == w->fail_at)
		return rb_set_error(-EIO, "block %lld refused", (long long)n0);
	for (int64_t k = 0; k < s->k; k++)
		for (int64_t j = 0; j < cols; j++)
			if (got[k * cols + j] != b[k * s->n + n0 + j])
				return rb_set_error(-EINVAL, "wrong element");
	for (int64_t j = 0; j < cols; j++)
		__atomic_fetch_add(&w->seen[n0 + j], 1, __ATOMIC_RELAXED);
	return 0;
}

static void test_columns_walk(void **state)
{
	const struct rb_shape s = {1, 64, 1000, RB_DTYPE_FP16};
	struct rb_inputs held, streamed;
	unsigned char seen[1000];
	struct walk w = {&held, seen, -1};

	(void)state;
	assert_int_equal(rb_inputs_init(&held, &s, 3, RB_DATA_UNIFORM), 0);
	assert_int_equal(rb_inputs_init_streamed(&streamed, &s, 3, RB_DATA_UNIFORM), 0);
	for (int threads = 1; threads <= 3; threads += 2) {
		memset(seen, 0, sizeof(seen));
		assert_int_equal(rb_inputs_b_columns(&streamed, 96, threads, visit, &w), 0);
		for (int j = 0; j < 1000; j++)
			assert_int_equal(seen[j], 1);
	}
	w.fail_at = 480;
	assert_int_equal(rb_inputs_b_columns(&streamed, 96, 3, visit, &w), -EIO);
	assert_string_equal(rb_last_error(), "block 480 refused");
	rb_inputs_release(&held);
	rb_inputs_release(&streamed);
}

/* One case of a device run: a shape, a plan config, the emulated kernel. */
struct run_case {
	struct rb_shape shape;
	unsigned k_slice; /* 0: the planner's choice */
	const struct rb_engine_ops *ops;
};

/* C of one run of the case's engine on `in`, prepared twice when `again` (the second
 * prepare takes the packed B the first one kept). */
static void *device_c(const struct run_case *rc, const struct rb_inputs *in, bool again)
{
	size_t bytes = (size_t)(rc->shape.m * rc->shape.n) * rb_dtype_out_size(rc->shape.dtype);
	void *c = malloc(bytes);
	struct rb_engine_opts opts;
	struct rb_engine e;
	double us = 0;

	assert_non_null(c);
	rb_engine_opts_init(&opts);
	opts.plan.k_slice = rc->k_slice;
	assert_int_equal(rb_engine_open(&e, rc->ops, &opts), 0);
	assert_int_equal(e.ops->prepare(&e, in), 0);
	if (again) {
		assert_int_equal(e.ops->run(&e, c, &us), 0);
		e.opts.launch = RB_LAUNCH_THREADS; /* a new job, the same packed B */
		assert_int_equal(e.ops->prepare(&e, in), 0);
	}
	memset(c, 0x5a, bytes);
	assert_int_equal(e.ops->run(&e, c, &us), 0);
	rb_engine_close(&e);
	return c;
}

/* The device packs a streamed B a block of columns at a time (npu/job.c): the same C as
 * from the whole B, to the bit, with padding in K and N, K slices and a kept packed B. */
static void test_device_results_the_same(void **state)
{
	const struct run_case cases[] = {
	    {{1, 1000, 2100, RB_DTYPE_FP16}, 0, &rb_engine_sim},
	    {{7, 300, 1234, RB_DTYPE_FP16}, 0, &rb_engine_sim_rocket},
	    {{4, 1100, 700, RB_DTYPE_FP16}, 256, &rb_engine_sim},
	    {{5, 700, 1500, RB_DTYPE_INT8}, 0, &rb_engine_sim},
	    {{3, 900, 600, RB_DTYPE_INT8}, 256, &rb_engine_sim},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct rb_shape *s = &cases[i].shape;
		size_t bytes = (size_t)(s->m * s->n) * rb_dtype_out_size(s->dtype);
		struct rb_inputs held, streamed;
		void *want, *got, *kept;

		assert_int_equal(rb_inputs_init(&held, s, 11, RB_DATA_UNIFORM), 0);
		assert_int_equal(rb_inputs_init_streamed(&streamed, s, 11, RB_DATA_UNIFORM), 0);
		want = device_c(&cases[i], &held, false);
		got = device_c(&cases[i], &streamed, false);
		kept = device_c(&cases[i], &streamed, true);
		if (memcmp(want, got, bytes) != 0 || memcmp(want, kept, bytes) != 0)
			print_error("case %zu: streamed C differs\n", i);
		assert_memory_equal(want, got, bytes);
		assert_memory_equal(want, kept, bytes);
		free(want);
		free(got);
		free(kept);
		rb_inputs_release(&held);
		rb_inputs_release(&streamed);
	}
}

/* One rb_measure_entry on the emulator: the result, and the reference C it kept. */
static void measure(const struct rb_shape *s, enum rb_verify_mode mode, int64_t stream_b_min,
		    struct rb_result *r, void **expected)
{
	static char name[] = "case";
	char *names[] = {name};
	const struct rb_shape_entry entry = {.shape = *s, .names = names, .n_names = 1};
	struct rb_measure_opts mo;
	struct rb_verify_opts vo;
	struct rb_shape_measure m = {.measure = &mo,
				     .verify = &vo,
				     .ref_threads = 2,
				     .expected = expected,
				     .stream_b_min = stream_b_min};
	struct rb_engine_opts opts;
	struct rb_engine e;

	rb_measure_opts_init(&mo);
	rb_verify_opts_init(&vo, s->dtype);
	vo.mode = mode;
	rb_engine_opts_init(&opts);
	assert_int_equal(rb_engine_open(&e, &rb_engine_sim, &opts), 0);
	memset(r, 0, sizeof(*r));
	assert_int_equal(rb_measure_entry(&m, &e, &entry, 21, RB_DATA_UNIFORM, r), 0);
	rb_engine_close(&e);
}

static void assert_same_verdict(const struct rb_verify_result *a, const struct rb_verify_result *b)
{
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->checked, b->checked);
	assert_int_equal(a->mismatches, b->mismatches);
	assert_true(a->max_abs == b->max_abs && a->max_rel == b->max_rel);
}

/* run's path (rb_measure_entry) with the threshold forced low (streamed) and off: the
 * same reference C to the bit (M = 1 is the reference's GEMV, M > 1 its blocked GEMM;
 * N is not a multiple of any block), the same verdict in full and sample mode and the
 * same modeled time; with every reference kernel family this CPU has (CI machines may
 * lack AVX-512: the portable kernels must block by columns as exactly). */
static void test_measure_the_same(void **state)
{
	const struct rb_shape shapes[] = {{1, 2048, 3000, RB_DTYPE_FP16},
					  {9, 700, 2500, RB_DTYPE_FP16},
					  {6, 800, 1700, RB_DTYPE_INT8}};
	const enum rb_verify_mode modes[] = {RB_VERIFY_FULL, RB_VERIFY_SAMPLE};
	const char *const impls[] = {NULL, "portable", "avx2+fma", "avx512", "neon"};

	(void)state;
	for (size_t f = 0; f < sizeof(impls) / sizeof(impls[0]); f++) {
		if (rb_ref_force_impl(impls[f]) == -ENOTSUP)
			continue;
		for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
			/* sample mode's dot products are plain C: once is enough */
			for (size_t k = 0; k < (f == 0 ? 2u : 1u); k++) {
				const struct rb_shape *s = &shapes[i];
				size_t bytes = (size_t)(s->m * s->n) * rb_dtype_out_size(s->dtype);
				struct rb_result held, streamed;
				void *want = NULL, *got = NULL;

				measure(s, modes[k], -1, &held, &want);
				measure(s, modes[k], 1, &streamed, &got);
				assert_int_equal(held.verify.status, RB_VERIFY_VERIFIED);
				assert_same_verdict(&held.verify, &streamed.verify);
				assert_true(held.stats.median_us == streamed.stats.median_us);
				assert_true((want == NULL) == (modes[k] == RB_VERIFY_SAMPLE));
				if (want)
					assert_memory_equal(want, got, bytes);
				free(want);
				free(got);
				rb_result_release(&held);
				rb_result_release(&streamed);
			}
		}
	}
	rb_ref_force_impl(NULL);
}

/* A wrong C fails sampled verification the same way whether B's columns are read from
 * the held B or made from the stream. */
static void test_sample_failure_the_same(void **state)
{
	const struct rb_shape s = {4, 500, 900, RB_DTYPE_FP16};
	struct rb_inputs held, streamed;
	struct rb_verify_opts vo;
	struct rb_verify_result a, b;
	float *c = malloc((size_t)(s.m * s.n) * sizeof(float));

	(void)state;
	assert_non_null(c);
	assert_int_equal(rb_inputs_init(&held, &s, 2, RB_DATA_UNIFORM), 0);
	assert_int_equal(rb_inputs_init_streamed(&streamed, &s, 2, RB_DATA_UNIFORM), 0);
	rb_verify_opts_init(&vo, s.dtype);
	vo.samples = 64;
	for (int64_t i = 0; i < s.m; i++)
		for (int64_t j = 0; j < s.n; j++)
			c[i * s.n + j] = rb_ref_dot_f16(held.a, held.b, s.k, s.n, i, j);
	c[0] += 1.0f;      /* a corner: always sampled */
	c[s.n - 1] = 0.5f; /* another corner */
	assert_int_equal(
	    rb_verify_sample(&(struct rb_matmul_io){.shape = s, .a = held.a, .b = held.b, .c = c},
			     &vo, &a),
	    0);
	assert_int_equal(
	    rb_verify_sample(
		&(struct rb_matmul_io){.shape = s, .a = streamed.a, .c = c, .b_stream = &streamed},
		&vo, &b),
	    0);
	assert_int_equal(a.status, RB_VERIFY_FAILED);
	assert_same_verdict(&a, &b);
	assert_int_equal(a.n_reported, b.n_reported);
	assert_memory_equal(a.first, b.first, sizeof(a.first[0]) * (size_t)a.n_reported);
	rb_inputs_release(&held);
	rb_inputs_release(&streamed);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blocks_are_the_held_b),   cmocka_unit_test(test_columns_walk),
	    cmocka_unit_test(test_device_results_the_same), cmocka_unit_test(test_measure_the_same),
	    cmocka_unit_test(test_sample_failure_the_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
