/* The baselines a tuned config is judged against (tune.h): the host work a config's
 * result needs, modeled for the board's CPU, and the seed backend's own split. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "model/ggml_rknn.h"
#include "npu/plan_rank.h"
#include "tune/tune.h"

/* The host part of a config is the planner's model of it (npu/plan_rank.c), in the
 * tune's own struct. */
void rb_tune_host_model(const struct rb_plan *p, struct rb_tune_host *h)
{
	struct rb_plan_host ph;

	rb_plan_host_model(p, &ph);
	*h = (struct rb_tune_host){ph.pack_a_us, ph.unpack_us, ph.kslice_us};
}

double rb_tune_host_us(const struct rb_plan *plan)
{
	return rb_plan_host_us(plan);
}

void rb_tune_point_host(struct rb_tune_point *p, const struct rb_shape *shape)
{
	struct rb_plan plan;

	p->host_us = NAN;
	if (rb_plan_init(&plan, shape, &p->plan) < 0)
		return;
	p->host_us = rb_tune_host_us(&plan);
	rb_plan_release(&plan);
}

/* ---- the backend's own split ---- */

#define BACKEND_CONTEXTS RB_GGML_RKNN_CORES
#define BACKEND_BLOCK    32 /* it computes whole 32-column blocks */

static unsigned gcd(unsigned a, unsigned b)
{
	while (b) {
		unsigned t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Whether the planner cuts the weighted split where the backend does. */
static bool cuts_like_backend(const struct rb_shape *shape, const struct rb_plan_config *cfg,
			      int64_t slice)
{
	struct rb_plan plan;
	bool same;

	if (rb_plan_init(&plan, shape, cfg) < 0)
		return false;
	same = plan.n_cores == BACKEND_CONTEXTS && plan.cores[0].begin == 0 &&
	       plan.cores[0].end == slice && plan.cores[1].end == 2 * slice &&
	       plan.cores[2].end >= shape->n;
	rb_plan_release(&plan);
	return same;
}

/* Weights (a, a, b) in the ratio slice : slice : the rest, in 16-column units reduced
 * by their common divisor; when they pass the planner's largest weight, the (a, b)
 * with a small enough whose cuts round to the same columns. */
static bool backend_weights(const struct rb_shape *shape, int64_t slice, struct rb_plan_config *cfg)
{
	int64_t rest = shape->n - 2 * slice;
	unsigned a = (unsigned)(slice / 16), b = (unsigned)((rest + 15) / 16), g = gcd(a, b);

	cfg->n_weights = BACKEND_CONTEXTS;
	if (a / g <= RB_PLAN_WEIGHT_MAX && b / g <= RB_PLAN_WEIGHT_MAX) {
		cfg->weights[0] = cfg->weights[1] = a / g;
		cfg->weights[2] = b / g;
		if (cuts_like_backend(shape, cfg, slice))
			return true;
	}
	for (unsigned x = RB_PLAN_WEIGHT_MAX; x >= 1; x--) {
		double y = round((double)x * (double)rest / (double)slice);

		if (y < 1 || y > RB_PLAN_WEIGHT_MAX)
			continue;
		cfg->weights[0] = cfg->weights[1] = x;
		cfg->weights[2] = (unsigned)y;
		if (cuts_like_backend(shape, cfg, slice))
			return true;
	}
	return false;
}

int rb_tune_backend_point(const struct rb_shape *shape, unsigned core_mask, struct rb_tune_point *p)
{
	int64_t slice = rb_ggml_rknn_init_share(shape->n);

	memset(p, 0, sizeof(*p));
	p->index = SIZE_MAX;
	p->launch = RB_LAUNCH_THREADS;
	rb_plan_config_init(&p->plan);
	if (core_mask) { /* one slice: its context as librknnrt runs it */
		p->plan.core_mask = core_mask;
		rb_plan_config_format(&p->plan, p->text, sizeof(p->text));
		rb_tune_point_host(p, shape);
		return isfinite(p->host_us) ? 0 : rb_set_error(-EINVAL, "%s", rb_last_error());
	}
	p->plan.core_mask = 0x7;
	p->plan.axis = RB_PLAN_AXIS_N;
	p->plan.align = BACKEND_BLOCK;
	if (slice == 0)
		return rb_set_error(-EINVAL,
				    "N = %lld: the backend's three-way split leaves a context no "
				    "column (N < 96), it cannot create this pair",
				    (long long)shape->n);
	if (!backend_weights(shape, slice, &p->plan))
		return rb_set_error(-EINVAL,
				    "N = %lld: no weighted split of the planner cuts at the "
				    "backend's columns %lld and %lld",
				    (long long)shape->n, (long long)slice, (long long)(2 * slice));
	rb_plan_config_format(&p->plan, p->text, sizeof(p->text));
	rb_tune_point_host(p, shape);
	return 0;
}
