/* The model-guided default and the host part of a plan (plan_rank.h). */
#include "npu/plan_rank.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "npu/plan_internal.h"

/* ---- the host part ---- */

/* Bytes over the modeled bandwidth (1 GB/s is 1000 bytes per µs), in whole ns as the
 * emulator's clock counts: sums of these round as sums of device times do, so a merged
 * tune adds up to the same totals as a whole one. */
static double host_bytes_us(double bytes)
{
	return round(bytes / RB_PLAN_HOST_GBPS) / 1e3;
}

void rb_plan_host_model(const struct rb_plan *p, struct rb_plan_host *h)
{
	const struct rb_shape *s = &p->shape;
	double c_bytes = (double)s->m * (double)s->n * (double)rb_dtype_out_size(s->dtype);
	double a_bytes = (double)s->m * (double)s->k * p->bpe;
	/* fp16 partials go through a float buffer first (npu/job.c unpack_block) */
	double per_slice =
	    (double)p->c_cube_bytes + 2 * c_bytes + (p->out == RB_PREC_FP16 ? 2 * c_bytes : 0);

	h->pack_a_us = host_bytes_us(a_bytes + (double)p->a_bytes);
	h->unpack_us = host_bytes_us((double)p->c_cube_bytes + c_bytes);
	h->kslice_us = host_bytes_us(per_slice * (p->n_kslices > 1 ? p->n_kslices - 1 : 0));
}

double rb_plan_host_us(const struct rb_plan *plan)
{
	struct rb_plan_host h;

	rb_plan_host_model(plan, &h);
	return h.pack_a_us + h.unpack_us + h.kslice_us;
}

/* ---- the candidates ---- */

/* The bank splits tried besides the planner's own (0:0): more weight banks won every
 * prefill shape of configs/llama-3.2-1b-prefill.json when tuned (2:10 most often). */
static const uint32_t bank_choices[][2] = {{0, 0}, {2, 10}, {1, 11}, {3, 9}, {4, 8}};
/* K-slices besides auto: 2048 won the K = 8192 prefill shapes when tuned. */
static const uint32_t kslice_choices[] = {0, 2048, 4096, 1024};

#define N_BANKS   (sizeof(bank_choices) / sizeof(bank_choices[0]))
#define N_KSLICES (sizeof(kslice_choices) / sizeof(kslice_choices[0]))

struct ranker {
	const struct rb_shape *shape;
	bool native_b;
	unsigned launches;
	rb_plan_model_fn model;
	void *ctx;
	struct rb_plan_ranking *out;
	struct rb_plan_config planned[RB_PLAN_RANK_MAX]; /* what each item planned to */
};

/* Two plans with the same resolved knobs are the same program (same cut, tiles, banks,
 * K-slices): modeling both would waste the time. */
static bool same_program(const struct rb_plan_config *a, const struct rb_plan_config *b)
{
	return rb_plan_config_equal(a, b);
}

static bool seen_before(const struct ranker *r, const struct rb_plan_config *planned)
{
	for (size_t i = 0; i < r->out->count; i++)
		if (same_program(&r->planned[i], planned))
			return true;
	return false;
}

/* The fastest launch mode the model gives, ties to the earlier (fences first). */
static int best_launch(const double us[RB_PLAN_RANK_LAUNCHES], double *best)
{
	int launch = -1;

	for (int l = 0; l < RB_PLAN_RANK_LAUNCHES; l++)
		if (isfinite(us[l]) && (launch < 0 || us[l] < *best)) {
			launch = l;
			*best = us[l];
		}
	return launch;
}

static int model_candidate(struct ranker *r, const struct rb_plan *plan, unsigned launches,
			   struct rb_plan_candidate *c)
{
	double us[RB_PLAN_RANK_LAUNCHES], best = NAN;
	int ret, launch;

	for (int l = 0; l < RB_PLAN_RANK_LAUNCHES; l++)
		us[l] = NAN;
	ret = r->model(r->ctx, plan, launches, us);
	if (ret < 0)
		return ret;
	launch = best_launch(us, &best);
	if (launch < 0)
		return 0; /* no launch runs it: stays unmodeled */
	c->launch = (enum rb_npu_launch)launch;
	c->device_us = best;
	c->modeled = true;
	return 0;
}

static double total_us(const struct rb_plan_candidate *c)
{
	return c->device_us + c->host_us;
}

/* Plans one candidate and models it when it is new; `first`: the planner's own config,
 * which must plan. */
static int try_candidate(struct ranker *r, const struct rb_plan_config *cfg, bool first)
{
	struct rb_plan_ranking *out = r->out;
	struct rb_plan_candidate *c = &out->items[out->count];
	struct rb_plan plan;
	int ret;

	if (out->count == RB_PLAN_RANK_MAX)
		return 0;
	if (rb_plan_init_head(&plan, r->shape, cfg, RB_PLAN_RANK_HEAD) < 0) {
		out->rejected++;
		return first ? -EINVAL : 0;
	}
	if (!first && r->native_b && !rb_plan_native_b(&plan)) {
		out->rejected++;
		rb_plan_release(&plan);
		return 0;
	}
	if (seen_before(r, &plan.config)) {
		out->duplicates++;
		rb_plan_release(&plan);
		return 0;
	}
	memset(c, 0, sizeof(*c));
	c->config = *cfg;
	c->device_us = NAN;
	c->host_us = rb_plan_host_us(&plan);
	c->tasks = plan.n_tasks;
	r->planned[out->count] = plan.config;
	out->tasks += plan.n_tasks;
	ret = model_candidate(r, &plan, 1u << RB_LAUNCH_FENCES, c);
	rb_plan_release(&plan);
	if (ret < 0)
		return ret;
	out->count++;
	return 0;
}

/* Whether a is ranked before b: modeled, less time, ties to the earlier. */
static bool before(const struct rb_plan_ranking *out, size_t a, size_t b)
{
	const struct rb_plan_candidate *x = &out->items[a], *y = &out->items[b];

	if (x->modeled != y->modeled)
		return x->modeled;
	return total_us(x) < total_us(y) || (total_us(x) == total_us(y) && a < b);
}

/* The index of the best candidate not in `done` (bit i: candidate i). */
static size_t best_of(const struct rb_plan_ranking *out, uint64_t done)
{
	size_t best = SIZE_MAX;

	for (size_t i = 0; i < out->count; i++)
		if (!(done >> i & 1) && (best == SIZE_MAX || before(out, i, best)))
			best = i;
	return best;
}

/* The best few under every launch mode (their plans made again: only heads). */
static int every_launch(struct ranker *r)
{
	struct rb_plan_ranking *out = r->out;
	uint64_t done = 0;

	for (int k = 0; k < RB_PLAN_RANK_LAUNCH_TOP; k++) {
		size_t i = best_of(out, done);
		struct rb_plan plan;
		int ret;

		if (i == SIZE_MAX || !out->items[i].modeled)
			break;
		done |= UINT64_C(1) << i;
		ret = rb_plan_init_head(&plan, r->shape, &out->items[i].config, RB_PLAN_RANK_HEAD);
		if (ret < 0)
			return ret;
		ret =
		    model_candidate(r, &plan, r->launches | 1u << RB_LAUNCH_FENCES, &out->items[i]);
		rb_plan_release(&plan);
		if (ret < 0)
			return ret;
	}
	out->best = best_of(out, 0);
	return 0;
}

/* The values of a knob the caller left auto: every choice; else the caller's alone. */
static size_t axis_values(const struct rb_plan_config *base, const struct rb_shape *s,
			  enum rb_plan_axis *v)
{
	enum rb_plan_axis first = base->axis ? base->axis : rb_plan_auto_axis(s);

	v[0] = first;
	if (base->axis)
		return 1;
	v[1] = first == RB_PLAN_AXIS_N ? RB_PLAN_AXIS_M : RB_PLAN_AXIS_N;
	return 2;
}

int rb_plan_rank(const struct rb_shape *shape, const struct rb_plan_config *base, bool native_b,
		 unsigned launches, rb_plan_model_fn model, void *ctx, struct rb_plan_ranking *out)
{
	struct ranker r = {.shape = shape,
			   .native_b = native_b,
			   .launches = launches,
			   .model = model,
			   .ctx = ctx,
			   .out = out};
	bool auto_banks = !base->data_banks && !base->weight_banks, auto_ks = !base->k_slice;
	uint64_t k_pad = round_up((uint64_t)shape->k, K_ALIGN);
	enum rb_plan_axis axes[2];
	size_t n_axes = axis_values(base, shape, axes);
	int ret = 0;

	memset(out, 0, sizeof(*out));
	ret = try_candidate(&r, base, true); /* the planner's own choice, as before */
	for (size_t a = 0; ret == 0 && a < n_axes; a++)
		for (size_t k = 0; ret == 0 && k < (auto_ks ? N_KSLICES : 1); k++)
			for (size_t b = 0; ret == 0 && b < (auto_banks ? N_BANKS : 1); b++) {
				struct rb_plan_config cfg = *base;

				cfg.axis = axes[a];
				if (auto_ks && kslice_choices[k] >= k_pad)
					continue; /* the same as auto */
				if (auto_ks)
					cfg.k_slice = kslice_choices[k];
				if (auto_banks) {
					cfg.data_banks = bank_choices[b][0];
					cfg.weight_banks = bank_choices[b][1];
				}
				ret = try_candidate(&r, &cfg, false);
			}
	return ret < 0 ? ret : every_launch(&r);
}

int rb_plan_candidate_format(const struct rb_plan_ranking *r, size_t i, char *buf, size_t size)
{
	const struct rb_plan_candidate *c = &r->items[i];
	char ks[16];

	if (c->config.k_slice)
		snprintf(ks, sizeof(ks), "%u", c->config.k_slice);
	else
		snprintf(ks, sizeof(ks), "auto");
	if (!c->modeled)
		return snprintf(buf, size, "split=%s banks=%u:%u kslice=%s: no launch mode runs it",
				rb_plan_axis_name(c->config.axis), c->config.data_banks,
				c->config.weight_banks, ks);
	return snprintf(buf, size,
			"split=%s banks=%u:%u kslice=%s launch=%s: %.1f + %.1f host us%s",
			rb_plan_axis_name(c->config.axis), c->config.data_banks,
			c->config.weight_banks, ks, rb_npu_launch_name(c->launch), c->device_us,
			c->host_us, i == r->best ? " (chosen)" : "");
}
