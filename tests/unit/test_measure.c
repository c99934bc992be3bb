/* The measuring loop's claim about modeled devices (run/measure.c): a modeled time is a
 * function of the program, so the first (checked) run's time is the one sample. This
 * test runs the same job again and again on both emulated kernels, in every launch mode
 * and with reused weights, and fails if any run's time differs from the first; then it
 * checks that rb_measure_shape takes one sample on the emulator and --iters on the CPU,
 * and that a tune's kept reference C is the one results are compared with. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "numeric/inputs.h"
#include "results/report.h"
#include "run/engine.h"
#include "run/measure.h"

#define REPEATS 8

struct job_case {
	const struct rb_engine_ops *ops;
	enum rb_npu_launch launch;
	struct rb_shape shape;
};

static void open_prepared(struct rb_engine *e, const struct job_case *jc, struct rb_inputs *in)
{
	struct rb_engine_opts opts;

	rb_engine_opts_init(&opts);
	opts.launch = jc->launch;
	opts.threads = 1;
	assert_int_equal(rb_engine_open(e, jc->ops, &opts), 0);
	assert_int_equal(rb_inputs_init(in, &jc->shape, 7, RB_DATA_EXACT), 0);
	assert_int_equal(e->ops->prepare(e, in), 0);
}

static void test_modeled_runs_repeat_exactly(void **state)
{
	/* 256x1024x1024 splits into several M tiles with the same weights (WEIGHT_REUSE on
	 * the chained tasks); 1x2048x2048 is the decode path. */
	const struct rb_shape prefill = {256, 1024, 1024, RB_DTYPE_FP16};
	const struct rb_shape decode = {1, 2048, 2048, RB_DTYPE_FP16};
	const struct rb_shape int8 = {64, 512, 1024, RB_DTYPE_INT8};
	const struct job_case cases[] = {
	    {&rb_engine_sim, RB_LAUNCH_FENCES, prefill},
	    {&rb_engine_sim, RB_LAUNCH_THREADS, prefill},
	    {&rb_engine_sim, RB_LAUNCH_MULTICORE, prefill},
	    {&rb_engine_sim, RB_LAUNCH_THREADS, decode},
	    {&rb_engine_sim, RB_LAUNCH_FENCES, int8},
	    {&rb_engine_sim_rocket, RB_LAUNCH_FENCES, prefill},
	    {&rb_engine_sim_rocket, RB_LAUNCH_THREADS, decode},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rb_engine e;
		struct rb_inputs in;
		double first = 0, us = 0;
		void *c = calloc((size_t)(cases[i].shape.m * cases[i].shape.n), sizeof(float));

		assert_non_null(c);
		open_prepared(&e, &cases[i], &in);
		assert_true(e.ops->modeled);
		assert_int_equal(e.ops->run(&e, c, &first), 0);
		assert_true(first > 0);
		for (int r = 1; r < REPEATS; r++) {
			assert_int_equal(e.ops->run(&e, c, &us), 0);
			if (us != first)
				print_error("case %zu run %d: %.3f, first %.3f\n", i, r, us, first);
			assert_true(us == first); /* bit for bit, not within a tolerance */
		}
		rb_engine_close(&e);
		rb_inputs_release(&in);
		free(c);
	}
}

static void measure(const struct rb_engine_ops *ops, int iters, struct rb_result *r)
{
	const struct job_case jc = {ops, RB_LAUNCH_FENCES, {32, 256, 512, RB_DTYPE_FP16}};
	struct rb_measure_opts mo;
	struct rb_verify_opts vo;
	struct rb_shape_measure m = {.measure = &mo, .verify = &vo, .ref_threads = 1};
	struct rb_engine e;
	struct rb_inputs in;
	struct rb_engine_opts opts;

	rb_measure_opts_init(&mo);
	mo.warmup = 1;
	mo.iters = iters;
	rb_verify_opts_init(&vo, jc.shape.dtype);
	rb_engine_opts_init(&opts);
	opts.threads = 1;
	assert_int_equal(rb_engine_open(&e, ops, &opts), 0);
	assert_int_equal(rb_inputs_init(&in, &jc.shape, 7, RB_DATA_EXACT), 0);
	assert_int_equal(rb_measure_shape(&m, &e, &in, r), 0);
	rb_engine_close(&e);
	rb_inputs_release(&in);
}

static void test_modeled_time_computed_once(void **state)
{
	struct rb_result sim = {0}, cpu = {0};

	(void)state;
	measure(&rb_engine_sim, 5, &sim);
	assert_int_equal(sim.stats.n, 1);
	assert_true(sim.stats.median_us > 0 && isfinite(sim.stats.median_us));
	assert_int_equal(sim.verify.status, RB_VERIFY_VERIFIED);
	measure(&rb_engine_cpu, 5, &cpu);
	assert_int_equal(cpu.stats.n, 5);
	rb_result_release(&sim);
	rb_result_release(&cpu);
}

/* A tune verifies every candidate of a shape against one reference C (measure.h
 * `expected`): the first full verification keeps it, the next ones compare with it, so
 * a kept reference that is wrong must make a correct result fail. */
static void test_reference_kept_per_shape(void **state)
{
	const struct rb_shape shape = {32, 256, 512, RB_DTYPE_FP16};
	struct rb_measure_opts mo;
	struct rb_verify_opts vo;
	void *kept = NULL;
	struct rb_shape_measure m = {
	    .measure = &mo, .verify = &vo, .ref_threads = 1, .expected = &kept};
	struct rb_result r = {0};
	struct rb_engine e;
	struct rb_inputs in;
	struct rb_engine_opts opts;

	(void)state;
	rb_measure_opts_init(&mo);
	rb_verify_opts_init(&vo, shape.dtype);
	vo.mode = RB_VERIFY_FULL;
	rb_engine_opts_init(&opts);
	opts.threads = 1;
	assert_int_equal(rb_engine_open(&e, &rb_engine_sim, &opts), 0);
	assert_int_equal(rb_inputs_init(&in, &shape, 7, RB_DATA_EXACT), 0);
	assert_int_equal(rb_measure_shape(&m, &e, &in, &r), 0);
	assert_int_equal(r.verify.status, RB_VERIFY_VERIFIED);
	assert_non_null(kept);
	rb_result_release(&r);
	((float *)kept)[5] += 1.0f;
	memset(&r, 0, sizeof(r));
	assert_int_equal(rb_measure_shape(&m, &e, &in, &r), 0);
	assert_int_equal(r.verify.status, RB_VERIFY_FAILED);
	assert_int_equal(r.verify.mismatches, 1);
	rb_result_release(&r);
	free(kept);
	rb_engine_close(&e);
	rb_inputs_release(&in);
}

/* The emulated cores run at once on host threads, each core's arithmetic on its share
 * of them (sim/npu.c): on 1, 2 and 3 host threads, and on both kernels, C is the same to
 * the bit (uniform data, where summation order shows) and so is the modeled time. */
static void test_host_threads_change_nothing(void **state)
{
	const struct rb_shape s = {96, 512, 1536, RB_DTYPE_FP16};
	const struct rb_engine_ops *kernels[] = {&rb_engine_sim, &rb_engine_sim_rocket};
	size_t bytes = (size_t)(s.m * s.n) * sizeof(float);
	struct rb_inputs in;

	(void)state;
	assert_int_equal(rb_inputs_init(&in, &s, 9, RB_DATA_UNIFORM), 0);
	for (size_t k = 0; k < 2; k++) {
		float *first = calloc(1, bytes), *c = calloc(1, bytes);
		double first_us = 0;

		assert_non_null(first);
		assert_non_null(c);
		for (int threads = 1; threads <= 3; threads++) {
			struct rb_engine_opts opts;
			struct rb_engine e;
			double us = 0;

			rb_engine_opts_init(&opts);
			opts.sim.threads = threads;
			assert_int_equal(rb_engine_open(&e, kernels[k], &opts), 0);
			assert_int_equal(e.ops->prepare(&e, &in), 0);
			assert_int_equal(e.ops->run(&e, threads == 1 ? first : c, &us), 0);
			if (threads == 1)
				first_us = us;
			else
				assert_memory_equal(c, first, bytes);
			assert_true(us == first_us);
			rb_engine_close(&e);
		}
		free(first);
		free(c);
	}
	rb_inputs_release(&in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_modeled_runs_repeat_exactly),
	    cmocka_unit_test(test_modeled_time_computed_once),
	    cmocka_unit_test(test_reference_kept_per_shape),
	    cmocka_unit_test(test_host_threads_change_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
