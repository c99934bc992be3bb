/* The model-guided default (npu/plan_rank.c on run/plan_model.c): the plan model agrees
 * with the emulator's modeled time within the bounds tune's pruning relies on, on every
 * shape class and launch mode; the ranking keeps what the caller fixed, lists its
 * candidates and picks the least device + host time; the executor plans the default. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "npu/plan_rank.h"
#include "run/engine.h"
#include "run/plan_model.h"

/* tune's bounds (src/tune/search.c ESTIMATE_OVER, ESTIMATE_UNDER) */
#define OVER  0.10
#define UNDER 0.05

/* The emulator's modeled time of cfg under launch: what tune's model phase measures. */
static double emulated_us(const struct rb_shape *s, const struct rb_plan_config *cfg,
			  enum rb_npu_launch launch)
{
	struct rb_engine e;
	struct rb_engine_opts o;
	struct rb_inputs in = {.shape = *s};
	double us = NAN;

	rb_engine_opts_init(&o);
	o.sim.model_only = true;
	o.sim.threads = 1;
	o.plan = *cfg;
	o.launch = launch;
	assert_int_equal(rb_engine_open(&e, &rb_engine_sim, &o), 0);
	assert_int_equal(e.ops->prepare(&e, &in), 0);
	assert_int_equal(e.ops->run(&e, NULL, &us), 0);
	rb_engine_close(&e);
	return us;
}

static void check_one(const struct rb_shape *s, const char *config)
{
	struct rb_plan_config cfg;
	struct rb_plan plan;
	double est[RB_PLAN_RANK_LAUNCHES];

	rb_plan_config_init(&cfg);
	assert_int_equal(rb_plan_config_parse(&cfg, config), 0);
	assert_int_equal(rb_plan_init(&plan, s, &cfg), 0);
	assert_int_equal(rb_plan_model_launches(NULL, &plan, 7, est), 0);
	for (int l = 0; l < RB_PLAN_RANK_LAUNCHES; l++) {
		double real = emulated_us(s, &cfg, (enum rb_npu_launch)l);
		double ratio = est[l] / real;

		if (ratio > 1 + OVER || ratio < 1 - UNDER)
			fail_msg("%lldx%lldx%lld '%s' %s: plan model %.1f us, emulator %.1f us",
				 (long long)s->m, (long long)s->k, (long long)s->n, config,
				 rb_npu_launch_name((enum rb_npu_launch)l), est[l], real);
	}
	rb_plan_release(&plan);
}

/* Decode (weight-bound, K-slices), prefill (both axes, bank splits), a weighted split
 * whose busiest core runs alone at the end, int8, many submits per core, a single
 * core: the plan model within tune's bounds of the emulator for every launch mode. */
static void test_model_bounds(void **state)
{
	const struct rb_shape decode = {1, 2048, 2048, RB_DTYPE_FP16};
	const struct rb_shape prefill = {128, 1024, 1024, RB_DTYPE_FP16};
	const struct rb_shape wide = {64, 512, 20000, RB_DTYPE_FP16};
	const struct rb_shape int8 = {96, 1024, 768, RB_DTYPE_INT8};

	(void)state;
	check_one(&decode, "mask=0x7 split=n");
	check_one(&decode, "mask=0x7 split=n kslice=1024 banks=1:11");
	check_one(&decode, "mask=0x3 split=n:2,1");
	check_one(&prefill, "mask=0x7 split=n banks=2:10");
	check_one(&prefill, "mask=0x7 split=m banks=4:8");
	check_one(&prefill, "mask=0x7 split=n:2,1,1 align=64");
	check_one(&prefill, "mask=0x1 split=n");
	check_one(&wide, "mask=0x7 split=n:1,1,2 banks=1:11");
	check_one(&int8, "mask=0x7 split=m");
}

/* The ranking keeps what the caller fixed: a given axis and K-slice stay, every
 * candidate has them; the planner's own config comes first; the chosen one is the
 * least device + host time of those modeled. */
static void test_rank_keeps_fixed(void **state)
{
	const struct rb_shape s = {128, 2048, 2048, RB_DTYPE_FP16};
	struct rb_plan_config base, cfg;
	struct rb_plan_ranking r;
	enum rb_npu_launch launch;

	(void)state;
	rb_plan_config_init(&base);
	base.axis = RB_PLAN_AXIS_M;
	base.k_slice = 1024;
	assert_int_equal(rb_plan_model_default(&s, &base, false, RB_PLAN_RANK_ALL_LAUNCHES, NULL,
					       &cfg, &launch, &r),
			 0);
	assert_true(r.count >= 2);
	for (size_t i = 0; i < r.count; i++) {
		assert_int_equal(r.items[i].config.axis, RB_PLAN_AXIS_M);
		assert_int_equal(r.items[i].config.k_slice, 1024);
		assert_true(r.items[i].modeled);
		assert_true(r.items[r.best].device_us + r.items[r.best].host_us <=
			    r.items[i].device_us + r.items[i].host_us);
	}
	assert_true(rb_plan_config_equal(&r.items[0].config, &base));
	assert_true(rb_plan_config_equal(&cfg, &r.items[r.best].config));
	assert_int_equal(launch, r.items[r.best].launch);
}

/* Prefill: the default beats the planner's own auto config by the margin the tuned
 * files showed (ffn_out 128x8192x2048 was 2.6x slower by default), in the emulator. */
static void test_default_beats_auto(void **state)
{
	const struct rb_shape s = {128, 8192, 2048, RB_DTYPE_FP16};
	struct rb_plan_config base, cfg;
	enum rb_npu_launch launch;
	double auto_us, chosen_us;

	(void)state;
	rb_plan_config_init(&base);
	assert_int_equal(rb_plan_model_default(&s, &base, false, RB_PLAN_RANK_ALL_LAUNCHES, NULL,
					       &cfg, &launch, NULL),
			 0);
	auto_us = emulated_us(&s, &base, RB_LAUNCH_FENCES);
	chosen_us = emulated_us(&s, &cfg, launch);
	assert_true(chosen_us * 2 < auto_us);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model_bounds),
	    cmocka_unit_test(test_rank_keeps_fixed),
	    cmocka_unit_test(test_default_beats_auto),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
