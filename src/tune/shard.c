/* tune --shard I/N: which unique shapes, and which slice of a shape's config space, one
 * shard of a tune takes (shard.h). The split depends on the shapes list and the space
 * alone, never on the machine or the time, so the same I/N of the same input is always
 * the same work. */
#include "tune/shard.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "tune/search.h"
#include "tune/tune.h"

int rb_tune_shard_parse(const char *text, struct rb_tune_shard *out)
{
	char *end = NULL;
	unsigned long i, n;

	errno = 0;
	i = strtoul(text, &end, 10);
	if (!isdigit((unsigned char)text[0]) || *end != '/' || !isdigit((unsigned char)end[1]))
		goto bad;
	n = strtoul(end + 1, &end, 10);
	if (*end || errno)
		goto bad;
	if (n < 1 || n > RB_TUNE_MAX_SHARDS || i < 1 || i > n)
		return rb_set_error(-EINVAL,
				    "--shard %lu/%lu: I must be 1..N and N 1..%u (shard 1/4 is the "
				    "first of four)",
				    i, n, RB_TUNE_MAX_SHARDS);
	out->index = (unsigned)i;
	out->count = (unsigned)n;
	return 0;
bad:
	return rb_set_error(-EINVAL, "--shard '%s': give I/N, e.g. 2/4 (the second of four)", text);
}

/* The modeled CPU seconds of a shape's tune on the emulator: a cost per config (its
 * program encoded and checked, a row of the ranking), per task of its program (the
 * timing model steps through every task of every config) and per multiply-add (the
 * verified runs of the best configs, the default config, the rknn_matmul_api pass and
 * the CPU reference each compute the whole product). Fitted by least squares on the
 * relative error to the CPU time of tuning each of the ten unique shapes of
 * configs/llama-3.2-1b-prefill.json alone, default settings, on a 2-core x86 VM
 * (2026-11-29): every shape within 17 %, the two largest within 10 %. Multiply-adds
 * alone, the measure before, put 134 of the file's 193 G in one shape that took 95 of
 * 183 CPU seconds, and gave 512x8192x2048 (37 s: K-slices add configs and tasks) the
 * weight of 512x2048x8192 (7 s). */
#define SECONDS_PER_CONFIG 1.5e-3
#define SECONDS_PER_TASK   2.3e-6
#define SECONDS_PER_MAC    0.34e-9

static double macs(const struct rb_shape *s)
{
	return (double)s->m * (double)s->k * (double)s->n;
}

/* One slice of `slices` of a shape: its configs and their tasks divide among the
 * slices, its multiply-adds do not (each slice runs its own best configs and the
 * baselines). */
static double slice_seconds(const struct rb_tune_shard_unit *u, const struct rb_shape *s,
			    unsigned slices)
{
	return u->tunes *
	       ((SECONDS_PER_CONFIG * (double)u->configs + SECONDS_PER_TASK * u->tasks) / slices +
		SECONDS_PER_MAC * macs(s));
}

/* One shape on several cores (the slices of --target ggml-rknn) is one unit: merge
 * joins the shards by shape, so one shard tunes it on every core. */
static bool same_shape(const struct rb_shape *a, const struct rb_shape *b)
{
	return a->m == b->m && a->k == b->k && a->n == b->n && a->dtype == b->dtype;
}

static struct rb_tune_shard_unit *unit_of(struct rb_tune_shard_plan *p,
					  const struct rb_shape_list *shapes, size_t entry)
{
	for (size_t u = 0; u < p->n_units; u++)
		if (same_shape(&shapes->entries[p->units[u].entry].shape,
			       &shapes->entries[entry].shape))
			return &p->units[u];
	return NULL;
}

static int weigh_unit(struct rb_tune_shard_unit *u, const struct rb_shape *s,
		      const struct rb_tune_space *space)
{
	struct rb_tune_points pts;
	char key[64];

	if (rb_tune_space_enumerate(space, s, &pts) < 0) {
		rb_tune_shape_key(s, key, sizeof(key));
		return rb_set_error(-EINVAL, "%s: %s", key, rb_last_error());
	}
	u->configs = pts.count;
	for (size_t i = 0; i < pts.count; i++)
		u->tasks += (double)pts.items[i].tasks;
	u->slices = 1;
	u->tunes = 1;
	u->seconds = slice_seconds(u, s, 1);
	rb_tune_points_release(&pts);
	return 0;
}

/* More shards than shapes: shard s (0-based) takes unique shape s mod U, as slice
 * s div U of however many shards share that shape. */
static void plan_slices(struct rb_tune_shard_plan *p, const struct rb_shape_list *shapes)
{
	for (size_t u = 0; u < p->n_units; u++) {
		p->units[u].shard = (unsigned)u;
		p->units[u].slices =
		    (unsigned)(p->count / p->n_units + (u < p->count % p->n_units));
	}
	for (unsigned s = 0; s < p->count; s++) {
		const struct rb_tune_shard_unit *u = &p->units[s % p->n_units];

		p->seconds[s] = slice_seconds(u, &shapes->entries[u->entry].shape, u->slices);
	}
}

static int by_work(const void *a, const void *b)
{
	const struct rb_tune_shard_unit *x = *(const struct rb_tune_shard_unit *const *)a;
	const struct rb_tune_shard_unit *y = *(const struct rb_tune_shard_unit *const *)b;

	if (x->seconds != y->seconds)
		return x->seconds > y->seconds ? -1 : 1;
	return x->entry < y->entry ? -1 : x->entry > y->entry;
}

/* At least as many shapes as shards: the longest-processing-time rule. Shapes in
 * decreasing work (ties in input order) go one by one to the shard with the least work
 * so far (ties to the lowest shard). */
static int plan_shapes(struct rb_tune_shard_plan *p)
{
	struct rb_tune_shard_unit **order = calloc(p->n_units, sizeof(*order));

	if (!order)
		return rb_set_error(-ENOMEM, "out of memory");
	for (size_t u = 0; u < p->n_units; u++)
		order[u] = &p->units[u];
	qsort(order, p->n_units, sizeof(*order), by_work);
	for (size_t u = 0; u < p->n_units; u++) {
		unsigned least = 0;

		for (unsigned s = 1; s < p->count; s++)
			if (p->seconds[s] < p->seconds[least])
				least = s;
		order[u]->shard = least;
		p->seconds[least] += order[u]->seconds;
	}
	free(order);
	return 0;
}

int rb_tune_shard_plan_init(struct rb_tune_shard_plan *plan, const struct rb_shape_list *shapes,
			    const struct rb_tune_space *space, unsigned count)
{
	int ret = 0;

	memset(plan, 0, sizeof(*plan));
	plan->count = count;
	plan->units = calloc(shapes->count ? shapes->count : 1, sizeof(*plan->units));
	plan->seconds = calloc(count ? count : 1, sizeof(*plan->seconds));
	if (!plan->units || !plan->seconds)
		return rb_set_error(-ENOMEM, "out of memory");
	for (size_t i = 0; ret == 0 && i < shapes->count; i++) {
		struct rb_tune_shard_unit *u = unit_of(plan, shapes, i);

		if (rb_tune_first_same(shapes, i) != i)
			continue;
		if (u) { /* the shape again, on another core */
			u->seconds *= (u->tunes + 1.0) / u->tunes;
			u->tunes++;
			continue;
		}
		plan->units[plan->n_units].entry = i;
		ret = weigh_unit(&plan->units[plan->n_units++], &shapes->entries[i].shape, space);
	}
	if (ret < 0 || !plan->n_units)
		return ret;
	if (count > plan->n_units) {
		plan_slices(plan, shapes);
		return 0;
	}
	return plan_shapes(plan);
}

void rb_tune_shard_plan_release(struct rb_tune_shard_plan *plan)
{
	free(plan->units);
	free(plan->seconds);
	memset(plan, 0, sizeof(*plan));
}

void rb_tune_shard_split(const struct rb_tune_shard_plan *plan, const struct rb_shape_list *shapes,
			 const struct rb_tune_shard *shard, struct rb_tune_shard_work *work)
{
	unsigned s = shard->index - 1;
	bool sliced = plan->count > plan->n_units;

	memset(work, 0, shapes->count * sizeof(*work));
	for (size_t u = 0; u < plan->n_units; u++) {
		const struct rb_tune_shard_unit *x = &plan->units[u];

		if (!(sliced ? s % plan->n_units == u : x->shard == s))
			continue;
		for (size_t i = x->entry; i < shapes->count; i++) /* the shape on each core */
			if (rb_tune_first_same(shapes, i) == i &&
			    same_shape(&shapes->entries[i].shape, &shapes->entries[x->entry].shape))
				work[i] = (struct rb_tune_shard_work){
				    true, sliced ? (unsigned)(s / plan->n_units) : 0, x->slices};
	}
}

bool rb_tune_shard_active(const struct rb_tune_shard *shard)
{
	return shard->count > 0;
}
