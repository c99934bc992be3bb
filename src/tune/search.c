/* Tuning one shape: pick candidates (strategy), verify and time them on the device,
 * time the default config and the CPU reference, keep the fastest verified config.
 * Every result goes to the cache the moment it exists and is looked up there first,
 * so an interrupted tune resumes where it stopped. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/measure.h"
#include "run/plan_model.h"
#include "tune/search.h"
#include "core/debug.h"
#include "core/error.h"

/* What every pass over one shape's spaces uses: the same inputs (so the same reference
 * C, and the device keeps packed B from one pass to the next, rb_inputs.serial). */
struct shape_data {
	struct rb_inputs in; /* made on first use: a fully cached shape needs none */
	bool have_inputs;
	void *expected; /* the reference C of `in`, once a candidate was fully verified */
};

struct shape_ctx {
	struct rb_tune_run *t;
	bool baselines; /* time the default config and the CPU reference too */
	bool side_pass; /* the rknn_matmul_api pass of another target: model strategy, top 4 */
	bool api_space; /* the space is rknn_matmul_api's: the backend's split is measured too */
	unsigned pin;   /* the one core the shape runs on (0: none) */
	const struct rb_shape *shape;
	const char *label;
	char key[64];
	struct rb_tune_points points;
	struct shape_data *data;  /* shared by the shape's passes */
	struct rb_inputs no_data; /* the shape alone: what the timing model is given */
	struct rb_tune_best *best;
	const char *phase;
	size_t done, total;
	double phase_t0;
	double best_model_us; /* fastest modeled so far (NAN: none yet) */
};

/* ---- the caller's callbacks ---- */

static void progress(const struct shape_ctx *c)
{
	const struct rb_tune_run *t = c->t;
	struct rb_tune_progress p = {
	    .shape_index = t->shape_index,
	    .n_shapes = t->n_shapes,
	    .label = c->label,
	    .phase = c->phase,
	    .done = c->done,
	    .total = c->total,
	    .phase_elapsed_s = (rb_now_us() - c->phase_t0) / 1e6,
	    .best_us = c->best->found ? c->best->median_us : NAN,
	    .best_model_us = c->best_model_us,
	};

	if (t->on_progress)
		t->on_progress(t->cb_ctx, &p);
}

static void verbose(const struct shape_ctx *c, const struct rb_tune_record *r, bool cached)
{
	if (c->t->on_result)
		c->t->on_result(c->t->cb_ctx, c->key, r, cached);
}

static bool stopped(const struct shape_ctx *c)
{
	return c->t->stop && *c->t->stop;
}

/* ---- evaluations ---- */

static void record_init(struct rb_tune_record *r, const struct shape_ctx *c, enum rb_tune_kind kind,
			const char *config, const char *launch)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	snprintf(r->shape, sizeof(r->shape), "%s", c->key);
	snprintf(r->config, sizeof(r->config), "%s", config);
	snprintf(r->launch, sizeof(r->launch), "%s", launch);
	r->median_us = NAN;
}

/* Looks the result up in the cache; 1 when found (copied to *out). */
static int cached(struct shape_ctx *c, struct rb_tune_record *r)
{
	const struct rb_tune_record *hit =
	    rb_tune_cache_find(&c->t->cache, r->kind, r->shape, r->config, r->launch);

	if (!hit)
		return 0;
	*r = *hit;
	verbose(c, r, true);
	return 1;
}

static int keep(struct shape_ctx *c, const struct rb_tune_record *r)
{
	verbose(c, r, false);
	return rb_tune_cache_append(&c->t->cache, r);
}

/* A failure that may not happen again (the host short of memory, a device timeout,
 * which the run already met twice with a reset between) fails the config for this tune
 * only: it is not cached, so a resume tries it again. Wrong results, refused programs
 * and plans, faults are the config's own and are cached. */
static int keep_unless_transient(struct shape_ctx *c, struct rb_tune_record *r, int err)
{
	if (err != -ENOMEM && err != -ETIMEDOUT)
		return keep(c, r);
	snprintf(r->reason + strlen(r->reason), sizeof(r->reason) - strlen(r->reason), "%s",
		 err == -ENOMEM ? " (host memory: not cached, a resume tries again)"
				: " (a timeout: not cached, a resume tries again)");
	verbose(c, r, false);
	return 0;
}

/* The timing model alone: the emulator with model_only, no data. On a worker thread:
 * touches nothing of c but what it reads. */
static int model_eval(const struct shape_ctx *c, struct rb_engine *e, const struct rb_tune_point *p,
		      struct rb_tune_record *r)
{
	int ret;

	e->opts.plan = p->plan;
	e->opts.launch = p->launch;
	ret = e->ops->prepare(e, &c->no_data);
	if (ret == 0)
		ret = e->ops->run(e, NULL, &r->median_us);
	r->ok = ret == 0;
	if (!r->ok)
		snprintf(r->reason, sizeof(r->reason), "%s", rb_last_error());
	return ret;
}

/* A large B (RB_INPUTS_STREAM_MIN_B_BYTES) is streamed as `run` streams it: the device
 * packs it a block of columns at a time and B then exists once, packed, instead of
 * twice (the lm head of a model file: 525 MB less). The CPU reference, which reads B
 * itself, gets inputs of its own (cpu_eval). */
static bool streams_b(const struct rb_shape *s)
{
	double b_bytes = (double)s->k * (double)s->n * (double)rb_dtype_in_size(s->dtype);

	return b_bytes >= (double)RB_INPUTS_STREAM_MIN_B_BYTES;
}

static int ensure_inputs(struct shape_ctx *c)
{
	const struct rb_tune_opts *o = c->t->o;
	int ret;

	if (c->data->have_inputs)
		return 0;
	ret = streams_b(c->shape)
		  ? rb_inputs_init_streamed(&c->data->in, c->shape, o->seed, o->data)
		  : rb_inputs_init(&c->data->in, c->shape, o->seed, o->data);
	if (ret < 0) {
		char why[512];

		snprintf(why, sizeof(why), "%s", rb_last_error()); /* the buffer is reused */
		return rb_set_error(ret, "%s: %s", c->label, why);
	}
	c->data->have_inputs = true;
	return 0;
}

static void verify_reason(const struct rb_verify_result *v, char *buf, size_t size)
{
	snprintf(buf, size,
		 "verification failed: %lld of %lld checked elements differ (max abs "
		 "error %g)",
		 (long long)v->mismatches, (long long)v->checked, v->max_abs);
}

/* Whether a run's check compares every element (then one reference C serves all the
 * shape's configs); in sample mode none is kept, and a modeled device then keeps a
 * large C on the device (run/measure.c) instead of a host copy. */
static bool full_check(const struct shape_ctx *c, const struct rb_engine *e)
{
	struct rb_verify_opts vo = c->t->o->verify;

	if (!e->ops->is_reference)
		vo.full_limit = RB_VERIFY_FULL_LIMIT_FAST; /* as measure.c checks a device */
	return rb_verify_resolve_mode(&vo, c->shape) == RB_VERIFY_FULL;
}

/* Verify, then time, on an engine (the device or the CPU reference), on `in` (NULL: the
 * shape's inputs, made on first use). */
static int measure_on(struct shape_ctx *c, struct rb_engine *e, const struct rb_inputs *in,
		      struct rb_tune_record *r)
{
	const struct rb_tune_opts *o = c->t->o;
	struct rb_shape_measure m = {.measure = &o->measure,
				     .verify = &o->verify,
				     .ref_threads = o->engine.threads,
				     .expected = full_check(c, e) ? &c->data->expected : NULL};
	struct rb_result res = {0};
	int ret = 0;

	/* A config whose buffers would not fit fails before any input is allocated. */
	if (!in && !c->data->have_inputs && e->ops->check &&
	    (ret = e->ops->check(e, c->shape)) < 0) {
		r->ok = false;
		snprintf(r->reason, sizeof(r->reason), "%s", rb_last_error());
		return keep_unless_transient(c, r, ret);
	}
	ret = in ? 0 : ensure_inputs(c);
	if (ret)
		return ret;
	ret = rb_measure_shape(&m, e, in ? in : &c->data->in, &res);
	r->ok = ret == 0 && res.verify.status != RB_VERIFY_FAILED;
	if (ret == 0) {
		r->median_us = res.stats.median_us;
		snprintf(r->verify, sizeof(r->verify), "%s",
			 rb_verify_status_name(res.verify.status));
	}
	if (ret)
		snprintf(r->reason, sizeof(r->reason), "%s", m.reason);
	else if (!r->ok)
		verify_reason(&res.verify, r->reason, sizeof(r->reason));
	rb_result_release(&res);
	return keep_unless_transient(c, r, ret);
}

static int measure_eval(struct shape_ctx *c, struct rb_engine *e, struct rb_tune_record *r)
{
	return measure_on(c, e, NULL, r);
}

static int run_eval(struct shape_ctx *c, const struct rb_tune_point *p, struct rb_tune_record *r)
{
	struct rb_engine *e = &c->t->device;

	record_init(r, c, RB_TUNE_RUN, p->text, rb_npu_launch_name(p->launch));
	if (cached(c, r))
		return 0;
	e->opts.plan = p->plan;
	e->opts.launch = p->launch;
	return measure_eval(c, e, r);
}

/* The CPU reference reads B itself: a streamed shape's gets its B held for the while,
 * before the device holds its packed copy (tune_points times it first). */
static int cpu_eval_held(struct shape_ctx *c, struct rb_tune_record *r)
{
	const struct rb_tune_opts *o = c->t->o;
	struct rb_inputs held;
	int ret = rb_inputs_init(&held, c->shape, o->seed, o->data);

	if (ret < 0)
		return ret;
	ret = measure_on(c, &c->t->cpu, &held, r);
	rb_inputs_release(&held);
	return ret;
}

static int cpu_eval(struct shape_ctx *c)
{
	struct rb_tune_record r;
	int ret = 0;

	record_init(&r, c, RB_TUNE_CPU, "cpu", "-");
	if (cached(c, &r))
		ret = 0;
	else if (streams_b(c->shape))
		ret = cpu_eval_held(c, &r);
	else
		ret = measure_eval(c, &c->t->cpu, &r);
	c->best->cpu_us = r.ok ? r.median_us : NAN;
	return ret;
}

/* ---- strategies: which points run on the device ---- */

struct ranked {
	size_t index;
	double us;
};

static int by_time(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->us != y->us)
		return x->us < y->us ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

static void phase(struct shape_ctx *c, const char *name, size_t total)
{
	c->phase = name;
	c->done = 0;
	c->total = total;
	c->phase_t0 = rb_now_us();
}

/* The side pass runs the best few: its configs only say what librknnrt could reach. */
#define SIDE_PASS_TOP 4

static long top_of(const struct shape_ctx *c)
{
	long top = c->t->o->top;

	return c->side_pass && top > SIDE_PASS_TOP ? SIDE_PASS_TOP : top;
}

/* The model phase on c->t->n_model threads. Workers take the uncached points in turn;
 * the calling thread keeps every result in the points' order (cache, progress, the
 * callbacks), so the cache and the ranking are those of one thread. */
struct model_phase {
	struct shape_ctx *c;
	struct rb_tune_record *rec;
	int *err;
	bool *ready; /* under lock */
	size_t next; /* under lock: the next point a worker takes */
	bool quit;   /* under lock: the keeping thread failed */
	pthread_mutex_t lock;
	pthread_cond_t done;
};

/* A worker: the phase it helps and its own timing-model engine. */
struct model_worker_arg {
	struct model_phase *m;
	struct rb_engine *e;
	pthread_t tid;
};

/* Under the lock: the end of the run of uncached points from i that share i's plan.
 * One worker models them all: the launch modes of a config follow each other in the
 * enumeration, and its engine then plans, encodes and validates the programs once
 * (reuse_model_job in run/engine_npu.c) instead of once per worker that meets them. */
static size_t same_plan_end(const struct model_phase *m, size_t i)
{
	const struct rb_tune_points *pts = &m->c->points;
	size_t end = i;

	while (end < pts->count && !m->ready[end] &&
	       rb_plan_config_equal(&pts->items[end].plan, &pts->items[i].plan))
		end++;
	return end;
}

static void model_one(struct model_phase *m, struct rb_engine *e, size_t i)
{
	int err = model_eval(m->c, e, &m->c->points.items[i], &m->rec[i]);

	pthread_mutex_lock(&m->lock);
	m->err[i] = err;
	m->ready[i] = true;
	pthread_cond_broadcast(&m->done);
	pthread_mutex_unlock(&m->lock);
}

static void *model_worker(void *arg)
{
	struct model_phase *m = ((struct model_worker_arg *)arg)->m;
	struct rb_engine *e = ((struct model_worker_arg *)arg)->e;
	const struct shape_ctx *c = m->c;

	for (;;) {
		size_t i, end;
		bool quit;

		pthread_mutex_lock(&m->lock);
		while (m->next < c->points.count && m->ready[m->next])
			m->next++; /* found in the cache */
		i = m->next;
		end = same_plan_end(m, i);
		m->next = end > i ? end : i + 1;
		quit = m->quit;
		pthread_mutex_unlock(&m->lock);
		if (i >= c->points.count || quit || stopped(c))
			break;
		for (; i < end && !stopped(c); i++)
			model_one(m, e, i);
	}
	pthread_mutex_lock(&m->lock);
	pthread_cond_broadcast(&m->done); /* a keeper waiting for a point no one takes */
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* Waits for point i; false when it will never come (stopped). Every point a worker
 * takes becomes ready, and a worker that stops taking points says so (broadcast). */
static bool wait_point(struct model_phase *m, size_t i)
{
	bool ok;

	pthread_mutex_lock(&m->lock);
	while (!m->ready[i] && !stopped(m->c))
		pthread_cond_wait(&m->done, &m->lock);
	ok = m->ready[i];
	pthread_mutex_unlock(&m->lock);
	return ok;
}

/* Keeps the results in order; the cached ones were marked ready up front. */
static int keep_models(struct model_phase *m, struct ranked *rank, size_t *kept)
{
	struct shape_ctx *c = m->c;
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < c->points.count; i++, c->done++) {
		struct rb_tune_record *r = &m->rec[i];
		double us;

		if (!wait_point(m, i))
			break;
		if (m->err[i] != INT_MIN)
			ret = keep_unless_transient(c, r, m->err[i]);
		us = r->ok ? r->median_us + c->points.items[i].host_us : NAN; /* the rank */
		if (ret == 0 && isfinite(us))
			rank[(*kept)++] = (struct ranked){i, us};
		if (isfinite(us) && !(us >= c->best_model_us)) /* NAN best: the first wins */
			c->best_model_us = us;
		progress(c);
	}
	pthread_mutex_lock(&m->lock);
	m->quit = true;
	pthread_mutex_unlock(&m->lock);
	return ret;
}

/* Looks every point up in the cache first: those are ready (err INT_MIN: not kept again). */
static void model_lookup(struct model_phase *m)
{
	struct shape_ctx *c = m->c;

	for (size_t i = 0; i < c->points.count; i++) {
		const struct rb_tune_point *p = &c->points.items[i];

		record_init(&m->rec[i], c, RB_TUNE_MODEL, p->text, rb_npu_launch_name(p->launch));
		m->ready[i] = cached(c, &m->rec[i]);
		m->err[i] = m->ready[i] ? INT_MIN : 0;
	}
}

/* How far the plan model's device time (rb_tune_point.estimate_us) may lie from the
 * emulator's modeled time, as a share of the latter: over by at most ESTIMATE_OVER,
 * under by at most ESTIMATE_UNDER. tests/unit/test_tune.c holds the model to these on
 * configs of every shape class; on the three model files' 8410 modeled configs it was
 * within +7.3 % and -3.8 %. */
#define ESTIMATE_OVER  0.10
#define ESTIMATE_UNDER 0.05

static double bound_below(const struct rb_tune_point *p)
{
	return p->estimate_us / (1 + ESTIMATE_OVER) + p->host_us;
}

static double bound_above(const struct rb_tune_point *p)
{
	return p->estimate_us / (1 - ESTIMATE_UNDER) + p->host_us;
}

/* Marks the points that cannot win as skipped (ready, not kept, not ranked): a point
 * whose least possible time exceeds the most another point can take. The bounds come
 * from the estimates alone, so the points skipped do not depend on the order the
 * workers finish in. Returns how many. */
static size_t prune(struct model_phase *m)
{
	struct shape_ctx *c = m->c;
	double limit = INFINITY;
	size_t pruned = 0;

	for (size_t i = 0; i < c->points.count; i++)
		if (isfinite(bound_above(&c->points.items[i])) &&
		    bound_above(&c->points.items[i]) < limit)
			limit = bound_above(&c->points.items[i]);
	for (size_t i = 0; i < c->points.count; i++) {
		if (m->ready[i] || !(bound_below(&c->points.items[i]) > limit))
			continue;
		m->ready[i] = true;
		m->err[i] = INT_MIN; /* not a result: nothing to keep */
		m->rec[i].ok = false;
		pruned++;
	}
	return pruned;
}

static int model_all(struct shape_ctx *c, struct ranked *rank, size_t *kept)
{
	struct model_phase m = {.c = c};
	unsigned n = c->t->n_model, started = 0;
	struct model_worker_arg workers[RB_TUNE_MODEL_THREADS];
	size_t count = c->points.count ? c->points.count : 1;
	int ret;

	m.rec = calloc(count, sizeof(*m.rec));
	m.err = calloc(count, sizeof(*m.err));
	m.ready = calloc(count, sizeof(*m.ready));
	if (!m.rec || !m.err || !m.ready) {
		free(m.rec);
		free(m.err);
		free(m.ready);
		return rb_set_error(-ENOMEM, "out of memory");
	}
	pthread_mutex_init(&m.lock, NULL);
	pthread_cond_init(&m.done, NULL);
	model_lookup(&m);
	/* RKNN_BENCH_DEBUG=no_prune models every point (the tests of a long model phase) */
	c->best->n_pruned = rb_debug("no_prune") ? 0 : prune(&m);
	for (unsigned w = 0; w < n; w++) {
		workers[w] = (struct model_worker_arg){&m, &c->t->model[w], 0};
		if (pthread_create(&workers[w].tid, NULL, model_worker, &workers[w]) != 0)
			break;
		started++;
	}
	ret = started ? keep_models(&m, rank, kept)
		      : rb_set_error(-EAGAIN, "cannot start a thread for the timing model");
	for (unsigned w = 0; w < started; w++)
		pthread_join(workers[w].tid, NULL);
	pthread_cond_destroy(&m.done);
	pthread_mutex_destroy(&m.lock);
	free(m.rec);
	free(m.err);
	free(m.ready);
	return ret;
}

/* Models every point; the best `top` (that the model could run) go to the device, in
 * modeled order, each with its modeled time. */
static int pick_model(struct shape_ctx *c, struct ranked *order, size_t *n)
{
	size_t count = c->points.count, kept = 0;
	struct ranked *rank = calloc(count ? count : 1, sizeof(*rank));
	int ret;

	if (!rank) /* not qsort(NULL, ...) below */
		return rb_set_error(-ENOMEM, "out of memory");
	phase(c, "model", count);
	ret = model_all(c, rank, &kept);
	if (ret == 0 && stopped(c))
		ret = -EINTR;
	qsort(rank, kept, sizeof(*rank), by_time);
	*n = kept < (size_t)top_of(c) ? kept : (size_t)top_of(c);
	memcpy(order, rank, *n * sizeof(*order));
	c->best->n_model = count - c->best->n_pruned;
	free(rank);
	return ret;
}

/* The points to run, in order; a modeled time only from the model strategy (else NAN). */
static int pick(struct shape_ctx *c, struct ranked *order, size_t *n)
{
	const struct rb_tune_opts *o = c->t->o;
	size_t count = c->points.count;
	size_t *shuffled;

	if (o->strategy == RB_TUNE_STRATEGY_MODEL || c->side_pass)
		return pick_model(c, order, n);
	if (o->strategy == RB_TUNE_STRATEGY_EXHAUSTIVE) {
		for (size_t i = 0; i < count; i++)
			order[i] = (struct ranked){i, NAN};
		*n = count;
		return 0;
	}
	shuffled = rb_tune_shuffle(count, o->seed);
	if (!shuffled)
		return rb_set_error(-ENOMEM, "out of memory");
	*n = count < (size_t)o->max_evals ? count : (size_t)o->max_evals;
	for (size_t i = 0; i < *n; i++)
		order[i] = (struct ranked){shuffled[i], NAN};
	free(shuffled);
	return 0;
}

/* ---- the device phase ---- */

/* Ranked by what the consumer pays: the device time and the host work around it. */
static void consider(struct shape_ctx *c, const struct rb_tune_point *p,
		     const struct rb_tune_record *r)
{
	struct rb_tune_best *b = c->best;

	b->n_run++;
	if (!r->ok) {
		b->n_failed++;
		return;
	}
	if (b->found && r->median_us + p->host_us >= rb_tune_best_total_us(b))
		return;
	b->found = true;
	b->point = *p;
	b->median_us = r->median_us;
	b->host_us = p->host_us;
	snprintf(b->verify, sizeof(b->verify), "%s", r->verify);
}

/* Rocket runs only the mainline program variant (the engine forces it): the configs
 * tuned for it say so. */
static void device_variant(const struct shape_ctx *c, struct rb_tune_point *p)
{
	if (!strstr(c->t->o->device->name, "rocket"))
		return;
	p->plan.mainline = true;
	rb_plan_config_format(&p->plan, p->text, sizeof(p->text));
	rb_tune_point_host(p, c->shape); /* the variant pads M < 4 */
}

/* What `run` does without flags: the model-guided default (run/plan_model.h) over all
 * auto. When a point of the space plans to the same program, that point is the default
 * (measured once); else *index = SIZE_MAX. */
static void default_point(const struct shape_ctx *c, struct rb_tune_point *p, size_t *index)
{
	struct rb_plan_config base;
	struct rb_plan plan;
	uint64_t sig = 0;

	memset(p, 0, sizeof(*p));
	p->index = SIZE_MAX;
	rb_plan_config_init(&base);
	base.core_mask = c->pin ? c->pin : base.core_mask; /* a slice: its core */
	base.mainline = strstr(c->t->o->device->name, "rocket") != NULL;
	p->plan = base;
	p->launch = RB_LAUNCH_FENCES;
	if (rb_plan_model_default(c->shape, &base, c->t->o->space.native_b_only,
				  rb_plan_model_launches_of(c->t->o->device->name),
				  c->t->o->engine.sim.soc, &p->plan, &p->launch, NULL) < 0)
		p->plan = base;
	rb_plan_config_format(&p->plan, p->text, sizeof(p->text));
	device_variant(c, p);
	*index = SIZE_MAX;
	if (rb_plan_init(&plan, c->shape, &p->plan) < 0)
		return;
	sig = rb_tune_plan_signature(&plan, p->launch);
	p->host_us = rb_tune_host_us(&plan);
	rb_plan_release(&plan);
	for (size_t i = 0; i < c->points.count && *index == SIZE_MAX; i++) {
		if (rb_plan_init(&plan, c->shape, &c->points.items[i].plan) < 0)
			continue;
		if (rb_tune_plan_signature(&plan, c->points.items[i].launch) == sig) {
			*index = i;
			*p = c->points.items[i];
		}
		rb_plan_release(&plan);
	}
}

/* On a modeled device a run's time is the timing model's (the device is the model,
 * with data): candidates come in modeled order, so once the best verified time is no
 * more than the next candidate's modeled time, no later candidate can win (ties go to
 * the earlier) and running them would only verify configs that are not chosen. This
 * holds only while every candidate run so far timed exactly as modeled; the first that
 * does not makes the rest run as on a real device. */
static bool settled(const struct shape_ctx *c, const struct ranked *next, bool as_modeled)
{
	return c->t->device.ops->modeled && as_modeled && c->best->found &&
	       rb_tune_best_total_us(c->best) <= next->us;
}

/* The backend's own split (the baseline of the rknn_matmul_api section), timed like
 * every config and a candidate of the API space: it is one of the configs librknnrt
 * runs, though its weights may lie outside the space's lists. */
static int backend_eval(struct shape_ctx *c)
{
	struct rb_tune_best *b = c->best;
	struct rb_tune_record r;
	int ret;

	b->backend.tried = true;
	if (rb_tune_backend_point(c->shape, c->pin, &b->backend.point) < 0) {
		snprintf(b->backend.reason, sizeof(b->backend.reason), "%s", rb_last_error());
		return 0;
	}
	if (c->t->o->no_weight_reuse) { /* what the user allows every config */
		b->backend.point.plan.weight_reuse = false;
		rb_plan_config_format(&b->backend.point.plan, b->backend.point.text,
				      sizeof(b->backend.point.text));
	}
	device_variant(c, &b->backend.point);
	ret = run_eval(c, &b->backend.point, &r);
	if (ret < 0)
		return ret;
	b->backend.found = r.ok;
	b->backend.median_us = r.ok ? r.median_us : NAN;
	if (!r.ok)
		snprintf(b->backend.reason, sizeof(b->backend.reason), "%s", r.reason);
	consider(c, &b->backend.point, &r);
	return 0;
}

/* The default config first: always timed (the baseline of speedup_vs_default), and a
 * candidate that wins ties when the space holds it; then the candidates. */
static int run_candidates(struct shape_ctx *c, const struct ranked *order, size_t n)
{
	struct rb_tune_point def;
	struct rb_tune_record r;
	size_t def_index;
	bool as_modeled = true;
	int ret;

	default_point(c, &def, &def_index);
	phase(c, "run", n + 1);
	ret = 0;
	if (c->baselines || def_index != SIZE_MAX) {
		ret = run_eval(c, &def, &r);
		c->best->default_us = r.ok ? r.median_us : NAN;
	}
	if (ret == 0 && def_index != SIZE_MAX) /* a candidate only when it is in the space */
		consider(c, &def, &r);
	c->best->default_host_us = def.host_us;
	c->best->default_point = def;
	if (ret == 0 && c->api_space)
		ret = backend_eval(c);
	for (size_t i = 0; ret == 0 && i < n && !stopped(c); i++) {
		const struct rb_tune_point *p = &c->points.items[order[i].index];

		if (settled(c, &order[i], as_modeled)) {
			c->best->n_settled = n - i;
			break;
		}
		c->done++;
		progress(c);
		if (order[i].index == def_index)
			continue;
		ret = run_eval(c, p, &r);
		if (ret == 0)
			consider(c, p, &r);
		if (ret == 0 && r.ok && r.median_us + p->host_us != order[i].us)
			as_modeled = false;
	}
	c->best->default_won = c->best->found && def_index != SIZE_MAX &&
			       c->best->point.index == c->points.items[def_index].index;
	c->done = c->total;
	progress(c);
	return ret == 0 && stopped(c) ? -EINTR : ret;
}

static int tune_points(struct shape_ctx *c)
{
	struct ranked *order = calloc(c->points.count + 1, sizeof(*order));
	size_t n = 0;
	int ret;

	if (!order)
		return rb_set_error(-ENOMEM, "out of memory");
	/* the CPU reference first: its inputs and C are gone before the device's job exists */
	ret = c->baselines ? cpu_eval(c) : 0;
	if (ret == 0 && !stopped(c))
		ret = pick(c, order, &n);
	if (ret == 0)
		ret = run_candidates(c, order, n);
	free(order);
	return ret == 0 && stopped(c) ? -EINTR : ret;
}

/* The winner's config text with the planner's choices made explicit (banks, K-slice,
 * output type: no "auto" left), so the summary, the tuned JSON and the reproducer all
 * name the same config. */
static void explicit_config(struct rb_tune_best *b)
{
	struct rb_plan plan;

	if (rb_plan_init(&plan, &b->shape, &b->point.plan) < 0)
		return;
	rb_plan_config_format(&plan.config, b->point.text, sizeof(b->point.text));
	rb_plan_release(&plan);
}

static struct rb_tune_enumerated *enumerated_of(struct rb_tune_run *t, const struct rb_shape *shape)
{
	for (size_t i = 0; i < t->n_enumerated; i++)
		if (rb_shape_equal(&t->enumerated[i].shape, shape))
			return &t->enumerated[i];
	return NULL;
}

const struct rb_tune_points *rb_tune_enumerate(struct rb_tune_run *t, const struct rb_shape *shape)
{
	struct rb_tune_enumerated *e = enumerated_of(t, shape), *v;

	if (e)
		return &e->points;
	v = realloc(t->enumerated, (t->n_enumerated + 1) * sizeof(*v));
	if (!v) {
		rb_set_error(-ENOMEM, "out of memory for the configs of a shape");
		return NULL;
	}
	t->enumerated = v;
	e = &v[t->n_enumerated];
	e->shape = *shape;
	if (rb_tune_space_enumerate_on(&t->o->space, shape, t->o->engine.sim.soc, &e->points) < 0)
		return NULL;
	t->n_enumerated++;
	return &e->points;
}

/* The points of space for shape: rb_tune_enumerate's, taken (space is the tune's own),
 * or enumerated now. */
static int take_points(struct rb_tune_run *t, const struct rb_tune_space *space,
		       const struct rb_shape *shape, struct rb_tune_points *points)
{
	struct rb_tune_enumerated *e = space == &t->o->space ? enumerated_of(t, shape) : NULL;

	if (e && e->points.items) {
		*points = e->points;
		memset(&e->points, 0, sizeof(e->points));
		return 0;
	}
	return rb_tune_space_enumerate_on(space, shape, t->o->engine.sim.soc, points);
}

void rb_tune_enumerated_release(struct rb_tune_run *t)
{
	for (size_t i = 0; i < t->n_enumerated; i++)
		rb_tune_points_release(&t->enumerated[i].points);
	free(t->enumerated);
	t->enumerated = NULL;
	t->n_enumerated = 0;
}

/* --shard: the slice's points only, in enumeration order (index mod slices). */
static void keep_slice(struct rb_tune_points *points, unsigned slice, unsigned slices)
{
	size_t kept = 0;

	for (size_t i = slice; i < points->count; i += slices)
		points->items[kept++] = points->items[i];
	points->count = kept;
}

/* The fastest config of one space (of its slice of `work`; NULL: all of it) for the
 * shape; baselines: the default config and the CPU reference are timed too. */
static int search(struct rb_tune_run *t, const struct rb_shape *shape, unsigned pin,
		  const char *label, const struct rb_tune_space *space,
		  const struct rb_tune_shard_work *work, bool baselines, struct shape_data *data,
		  struct rb_tune_best *best)
{
	struct shape_ctx c = {.t = t,
			      .baselines = baselines,
			      .side_pass = !baselines,
			      .api_space = !baselines || t->o->target != RB_TUNE_TARGET_RKNN_BENCH,
			      .pin = pin,
			      .shape = shape,
			      .label = label,
			      .data = data,
			      .best = best,
			      .no_data = {.shape = *shape},
			      .best_model_us = NAN};
	int ret;

	memset(best, 0, sizeof(*best));
	best->shape = *shape;
	best->core_mask = pin;
	best->default_us = best->cpu_us = NAN;
	best->slice = work ? work->slice : 0;
	best->slices = work ? work->slices : 1;
	c.api_space &= best->slice == 0; /* one slice measures the backend's split */
	rb_tune_shape_key(shape, c.key, sizeof(c.key));
	if (take_points(t, space, shape, &c.points) < 0)
		return rb_set_error(-EINVAL, "%s: %s", label, rb_last_error());
	keep_slice(&c.points, best->slice, best->slices);
	best->n_space = c.points.count;
	for (size_t i = 0; i < c.points.count; i++)
		device_variant(&c, &c.points.items[i]);
	ret = tune_points(&c);
	if (ret == 0 && best->found)
		explicit_config(best);
	rb_tune_points_release(&c.points);
	return ret;
}

static void set_api(struct rb_tune_best *best, const struct rb_tune_best *from)
{
	best->api.found = from->found;
	best->api.point = from->point;
	best->api.median_us = from->found ? from->median_us : NAN;
	best->backend = from->backend;
}

/* The API's best is one of ours too: when it (the backend's split, whose weights the
 * main space may not list, or a point the main ranking ran no more) beats the main
 * space's best, it is the best overall. */
static void adopt_api(struct rb_tune_best *best, const struct rb_tune_best *api)
{
	if (!best->api.found ||
	    (best->found && rb_tune_best_total_us(best) <= rb_tune_api_total_us(best)))
		return;
	best->found = true;
	best->point = best->api.point;
	best->median_us = best->api.median_us;
	best->host_us = best->api.point.host_us;
	best->default_won = false;
	snprintf(best->verify, sizeof(best->verify), "%s", api->verify);
}

/* ggml-rknn: what librknnrt does with a slice is its one context, the backend point. */
static void set_api_backend(struct rb_tune_best *best)
{
	best->api.found = best->backend.found;
	best->api.point = best->backend.point;
	best->api.median_us = best->backend.median_us;
}

/* The space (of the pinned core alone for a pinned shape, and for every shape of target
 * ggml-rknn: a slice without a core runs where librknnrt puts it, one core, core 0
 * here), then (unless it is that space already, or a ggml-rknn slice, whose API section
 * is its one context) the rknn_matmul_api space: a side pass that times no baselines
 * again and, whatever the strategy, runs the best SIDE_PASS_TOP of the timing model's
 * ranking on the device. Of a sliced shape, slice 0 alone makes the side pass, over the
 * whole API space. */

int rb_tune_shape(struct rb_tune_run *t, const struct rb_shape *shape, unsigned core_mask,
		  const char *label, const struct rb_tune_shard_work *work,
		  struct rb_tune_best *best)
{
	struct rb_tune_space api_space, pinned = t->o->space;
	struct rb_tune_best api;
	struct shape_data data = {0};
	bool ggml = t->o->target == RB_TUNE_TARGET_GGML_RKNN;
	unsigned pin = ggml && !core_mask ? 0x1 : core_mask; /* librknnrt's pick: one core */
	int ret;

	if (pin)
		rb_tune_space_pin(&pinned, pin);
	ret = search(t, shape, pin, label, pin ? &pinned : &t->o->space, work, true, &data, best);
	if (ggml)
		set_api_backend(best);
	else if (ret < 0 || t->o->target == RB_TUNE_TARGET_RKNN_API)
		set_api(best, best);
	else if (!work || work->slice == 0) { /* else api.found stays false: another slice has it */
		rb_tune_space_rknn_api(&api_space);
		if (pin)
			rb_tune_space_pin(&api_space, pin);
		if (t->o->no_weight_reuse)
			rb_tune_space_no_weight_reuse(&api_space);
		ret = search(t, shape, pin, label, &api_space, NULL, false, &data, &api);
		set_api(best, &api);
		if (ret == 0 && !t->o->space_path) /* a --space of the user's bounds the best */
			adopt_api(best, &api);
	}
	if (data.have_inputs)
		rb_inputs_release(&data.in);
	free(data.expected);
	return ret;
}

/* The entry tuned for an identical shape earlier in the list, or i itself. */
size_t rb_tune_first_same(const struct rb_shape_list *l, size_t i)
{
	const struct rb_shape *s = &l->entries[i].shape;

	for (size_t j = 0; j < i; j++) {
		const struct rb_shape *p = &l->entries[j].shape;

		if (p->m == s->m && p->k == s->k && p->n == s->n && p->dtype == s->dtype &&
		    l->entries[j].core_mask == l->entries[i].core_mask)
			return j;
	}
	return i;
}

int rb_tune_all(struct rb_tune_run *t, struct rb_tune_best *best)
{
	const struct rb_shape_list *l = &t->o->shapes;
	int ret = 0;

	for (size_t i = 0; i < l->count; i++)
		t->n_shapes += rb_tune_first_same(l, i) == i && (!t->work || t->work[i].mine);
	for (size_t i = 0; ret == 0 && i < l->count; i++) {
		size_t j = rb_tune_first_same(l, i);

		if (j != i) {
			best[i] = best[j];
			continue;
		}
		if (t->work && !t->work[i].mine) {
			best[i] = (struct rb_tune_best){.shape = l->entries[i].shape,
							.other_shard = true,
							.default_us = NAN,
							.cpu_us = NAN};
			continue;
		}
		ret = rb_tune_shape(t, &l->entries[i].shape, l->entries[i].core_mask,
				    l->entries[i].names[0], t->work ? &t->work[i] : NULL, &best[i]);
		t->shape_index++;
	}
	return ret;
}
