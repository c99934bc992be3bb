/* What an NPU engine carries from one prepare to the next (run/engine_npu.c, npu/job.c):
 * the timing model's job serves every launch mode of its config, and packed weights go
 * to the next job of the same inputs when its weight layout is the same. Both must give
 * what a fresh engine gives: the same modeled times, the same (exact) results. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "numeric/inputs.h"
#include "numeric/ref.h"
#include "npu/job.h"
#include "npu/plan.h"
#include "run/engine.h"

static const enum rb_npu_launch launches[] = {RB_LAUNCH_FENCES, RB_LAUNCH_THREADS,
					      RB_LAUNCH_MULTICORE};

static void parse(struct rb_plan_config *cfg, const char *text)
{
	rb_plan_config_init(cfg);
	assert_int_equal(rb_plan_config_parse(cfg, text), 0);
}

static void set_config(struct rb_engine *e, const char *text, enum rb_npu_launch launch)
{
	rb_plan_config_init(&e->opts.plan);
	assert_int_equal(rb_plan_config_parse(&e->opts.plan, text), 0);
	e->opts.launch = launch;
}

static double model_time(struct rb_engine *e, const struct rb_inputs *in)
{
	double us = 0;

	assert_int_equal(e->ops->prepare(e, in), 0);
	assert_int_equal(e->ops->run(e, NULL, &us), 0);
	assert_true(us > 0);
	return us;
}

static void open_model(struct rb_engine *e)
{
	struct rb_engine_opts opts;

	rb_engine_opts_init(&opts);
	opts.sim.model_only = true;
	assert_int_equal(rb_engine_open(e, &rb_engine_sim, &opts), 0);
}

/* One engine asked for config × launch in turn, as the tune's model phase asks, gives
 * the times of a fresh engine per question. */
static void test_model_job_serves_every_launch(void **state)
{
	const char *configs[] = {"mask=0x7 split=n", "mask=0x3 split=m", "mask=0x7 split=n"};
	const struct rb_inputs shape = {.shape = {128, 1024, 2048, RB_DTYPE_FP16}};
	struct rb_engine reused;

	(void)state;
	open_model(&reused);
	for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
		for (size_t l = 0; l < sizeof(launches) / sizeof(launches[0]); l++) {
			struct rb_engine fresh;
			double want, got;

			open_model(&fresh);
			set_config(&fresh, configs[c], launches[l]);
			want = model_time(&fresh, &shape);
			rb_engine_close(&fresh);
			set_config(&reused, configs[c], launches[l]);
			got = model_time(&reused, &shape);
			if (got != want)
				print_error("%s %s: %.3f, fresh %.3f\n", configs[c],
					    rb_npu_launch_name(launches[l]), got, want);
			assert_true(got == want); /* bit for bit */
		}
	}
	rb_engine_close(&reused);
}

static void run_exact(struct rb_engine *e, const struct rb_inputs *in, const float *want)
{
	size_t count = (size_t)(in->shape.m * in->shape.n);
	float *c = calloc(count, sizeof(float));
	double us;

	assert_non_null(c);
	assert_int_equal(e->ops->prepare(e, in), 0);
	assert_int_equal(e->ops->run(e, c, &us), 0);
	assert_memory_equal(c, want, count * sizeof(float)); /* exact data: exact sums */
	free(c);
}

/* Configs that share a weight layout and configs that do not, in turn, and then new
 * inputs of the same shape at work, on both emulated kernels (rocket's buffers live in
 * an address space per file): every result is the reference's. */
static void kept_weights_on(const struct rb_engine_ops *ops)
{
	const struct rb_shape s = {64, 512, 1024, RB_DTYPE_FP16};
	const char *configs[] = {"mask=0x1 split=n",          "mask=0x7 split=n",
				 "mask=0x3 split=m",          "mask=0x7 split=n kslice=256",
				 "mask=0x7 split=n align=64", "mask=0x1 split=n"};
	struct rb_inputs in[2];
	float *want[2];
	struct rb_engine_opts opts;
	struct rb_engine e;

	rb_engine_opts_init(&opts);
	assert_int_equal(rb_engine_open(&e, ops, &opts), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(rb_inputs_init(&in[i], &s, 11 + (uint64_t)i, RB_DATA_EXACT), 0);
		want[i] = calloc((size_t)(s.m * s.n), sizeof(float));
		assert_non_null(want[i]);
		assert_int_equal(rb_ref_gemm(&s, in[i].a, in[i].b, want[i], 1), 0);
	}
	assert_true(in[0].serial != 0 && in[0].serial != in[1].serial);
	for (int i = 0; i < 2; i++)
		for (size_t c = 0; c < sizeof(configs) / sizeof(configs[0]); c++) {
			set_config(&e, configs[c], RB_LAUNCH_FENCES);
			run_exact(&e, &in[i], want[i]);
		}
	rb_engine_close(&e);
	for (int i = 0; i < 2; i++) {
		rb_inputs_release(&in[i]);
		free(want[i]);
	}
}

static void test_kept_weights_give_exact_results(void **state)
{
	(void)state;
	kept_weights_on(&rb_engine_sim);
	kept_weights_on(&rb_engine_sim_rocket);
}

static void plan(struct rb_plan *p, const struct rb_shape *s, const char *text)
{
	struct rb_plan_config cfg;

	parse(&cfg, text);
	assert_int_equal(rb_plan_init(p, s, &cfg), 0);
}

/* The job level: the handover happens exactly when the layout and the inputs match. */
static void test_packed_b_handover(void **state)
{
	const struct rb_shape s = {16, 512, 1024, RB_DTYPE_FP16};
	struct rb_npu_packed_b keep = {0};
	struct rb_plan one, all, sliced;
	struct rb_inputs in, other;
	struct rb_npu_device dev;
	struct rb_npu_job *job;

	(void)state;
	assert_int_equal(rb_npu_device_open_sim(&dev, NULL), 0);
	assert_int_equal(rb_inputs_init(&in, &s, 3, RB_DATA_EXACT), 0);
	assert_int_equal(rb_inputs_init(&other, &s, 3, RB_DATA_EXACT), 0);
	plan(&one, &s, "mask=0x1 split=n");
	plan(&all, &s, "mask=0x7 split=n");
	plan(&sliced, &s, "mask=0x7 split=n kslice=256");

	assert_int_equal(rb_npu_job_new_keeping(&job, &dev, &one, &in, RB_LAUNCH_FENCES, &keep, 0),
			 0);
	rb_npu_job_keep_weights(job, &keep);
	rb_npu_job_free(job);
	assert_true(keep.source == in.serial);
	/* other inputs (same values, another serial) and another layout: not taken */
	assert_false(rb_npu_packed_b_fits(&keep, &dev, &all, &other));
	assert_false(rb_npu_packed_b_fits(&keep, &dev, &sliced, &in));
	assert_true(rb_npu_packed_b_fits(&keep, &dev, &all, &in));
	assert_int_equal(rb_npu_job_new_keeping(&job, &dev, &all, &in, RB_LAUNCH_FENCES, &keep, 0),
			 0);
	assert_true(keep.source == 0); /* taken */
	rb_npu_job_free(job);

	rb_plan_release(&one);
	rb_plan_release(&all);
	rb_plan_release(&sliced);
	rb_inputs_release(&in);
	rb_inputs_release(&other);
	rb_npu_device_close(&dev);
}

static void test_plan_config_equal(void **state)
{
	struct rb_plan_config a, b;

	(void)state;
	parse(&a, "mask=0x7 split=n:2,1,1 banks=2:10");
	parse(&b, "mask=0x7 split=n:2,1,1 banks=2:10");
	assert_true(rb_plan_config_equal(&a, &b));
	b.weights[0] = 1;
	assert_false(rb_plan_config_equal(&a, &b));
	parse(&b, "mask=0x7 split=n:2,1,1 banks=4:8");
	assert_false(rb_plan_config_equal(&a, &b));
	parse(&b, "mask=0x7 split=n:2,1,1 banks=2:10 wreuse=0");
	assert_false(rb_plan_config_equal(&a, &b));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model_job_serves_every_launch),
	    cmocka_unit_test(test_kept_weights_give_exact_results),
	    cmocka_unit_test(test_packed_b_handover),
	    cmocka_unit_test(test_plan_config_equal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
