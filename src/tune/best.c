/* What a tune found (search.h): the totals of a shape's configs, the names of targets
 * and strategies, what two configs do differently, and the per-model sums. Pure
 * functions of the results; the search itself is search.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tune/search.h"

double rb_tune_best_total_us(const struct rb_tune_best *b)
{
	return b->found ? b->median_us + b->host_us : NAN;
}

double rb_tune_api_total_us(const struct rb_tune_best *b)
{
	return b->api.found ? b->api.median_us + b->api.point.host_us : NAN;
}

double rb_tune_backend_total_us(const struct rb_tune_best *b)
{
	return b->backend.found ? b->backend.median_us + b->backend.point.host_us : NAN;
}

double rb_tune_default_total_us(const struct rb_tune_best *b)
{
	return b->default_us + b->default_host_us;
}

static const char *const target_names[] = {"rknn-bench", "rknn-api", "ggml-rknn"};

const char *rb_tune_target_name(enum rb_tune_target t)
{
	return (unsigned)t < 3 ? target_names[t] : "unknown";
}

int rb_tune_target_parse(const char *text, enum rb_tune_target *out)
{
	for (unsigned i = 0; i < 3; i++)
		if (strcmp(text, target_names[i]) == 0) {
			*out = (enum rb_tune_target)i;
			return 0;
		}
	return rb_set_error(-EINVAL, "--target '%s': use rknn-bench, rknn-api or ggml-rknn", text);
}

static const char *const strategy_names[] = {"model", "exhaustive", "random"};

const char *rb_tune_strategy_name(enum rb_tune_strategy s)
{
	return (unsigned)s < 3 ? strategy_names[s] : "unknown";
}

int rb_tune_strategy_parse(const char *text, enum rb_tune_strategy *out)
{
	for (int i = 0; i < 3; i++)
		if (strcmp(text, strategy_names[i]) == 0) {
			*out = (enum rb_tune_strategy)i;
			return 0;
		}
	return -EINVAL;
}

/* What the consumer pays per run: device + modeled host. */
double rb_tune_which_us(const struct rb_tune_best *b, enum rb_tune_which which)
{
	if (which == RB_TUNE_TUNED)
		return rb_tune_best_total_us(b);
	if (which == RB_TUNE_API)
		return rb_tune_api_total_us(b);
	if (which == RB_TUNE_BACKEND)
		return rb_tune_backend_total_us(b);
	if (which == RB_TUNE_OVERALL) {
		double us = NAN;

		rb_tune_overall_point(b, &us);
		return us;
	}
	return rb_tune_default_total_us(b);
}

const struct rb_tune_point *rb_tune_overall_point(const struct rb_tune_best *b, double *total_us)
{
	double tuned = rb_tune_best_total_us(b), def = rb_tune_default_total_us(b);

	if (isfinite(def) && !(tuned <= def)) {
		*total_us = def;
		return &b->default_point;
	}
	*total_us = tuned;
	return b->found ? &b->point : NULL;
}

static bool same_cuts(const struct rb_plan *x, const struct rb_plan *y)
{
	if (x->n_cores != y->n_cores || x->config.axis != y->config.axis)
		return false;
	for (unsigned i = 0; i < x->n_cores; i++)
		if (x->cores[i].begin != y->cores[i].begin || x->cores[i].end != y->cores[i].end)
			return false;
	return true;
}

unsigned rb_tune_point_diff(const struct rb_shape *shape, const struct rb_tune_point *a,
			    const struct rb_tune_point *b)
{
	struct rb_plan x, y;
	unsigned d = a->launch != b->launch ? RB_TUNE_DIFF_LAUNCH : 0;

	if (rb_plan_init(&x, shape, &a->plan) < 0)
		return d;
	if (rb_plan_init(&y, shape, &b->plan) < 0) {
		rb_plan_release(&x);
		return d;
	}
	d |= x.config.core_mask != y.config.core_mask ? RB_TUNE_DIFF_CORES : 0;
	d |=
	    x.config.core_mask == y.config.core_mask && !same_cuts(&x, &y) ? RB_TUNE_DIFF_SPLIT : 0;
	d |= x.config.data_banks != y.config.data_banks ||
		     x.config.weight_banks != y.config.weight_banks
		 ? RB_TUNE_DIFF_BANKS
		 : 0;
	d |= x.k_slice != y.k_slice ? RB_TUNE_DIFF_KSLICE : 0;
	d |= x.config.chain != y.config.chain ? RB_TUNE_DIFF_CHAIN : 0;
	d |= x.weight_reuse != y.weight_reuse ? RB_TUNE_DIFF_WREUSE : 0;
	rb_plan_release(&x);
	rb_plan_release(&y);
	return d;
}

const char *rb_tune_diff_name(unsigned bit_index)
{
	static const char *const names[RB_TUNE_DIFF_COUNT] = {
	    "launch", "cores", "split", "CBUF banks", "K-slice", "chaining", "weight reuse"};

	return bit_index < RB_TUNE_DIFF_COUNT ? names[bit_index] : "?";
}

size_t rb_tune_totals(const struct rb_tune_opts *o, const struct rb_tune_best *best,
		      enum rb_tune_which which, struct rb_total *out)
{
	const struct rb_shape_list *l = &o->shapes;
	size_t n = 0, groups = 0;
	struct rb_total_pair *pairs;

	for (size_t i = 0; i < l->count; i++)
		n += l->entries[i].n_names;
	pairs = calloc(n ? n : 1, sizeof(*pairs));
	n = 0;
	for (size_t i = 0; pairs && i < l->count; i++)
		for (size_t j = 0; j < l->entries[i].n_names; j++)
			pairs[n++] = (struct rb_total_pair){l->entries[i].names[j], best[i].shape.m,
							    rb_tune_which_us(&best[i], which)};
	if (pairs)
		groups = rb_totals_sum_pairs(pairs, n, out, RB_TOTALS_MAX);
	free(pairs);
	return groups;
}
