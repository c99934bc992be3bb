/* A tune's estimate and progress lines (tune/display.h). */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/stats.h"
#include "dev/npu_device.h"
#include "tune/display.h"

void rb_tune_print_estimate(FILE *out, struct rb_tune_run *t)
{
	const struct rb_tune_opts *o = t->o;
	size_t shapes = 0, lo = SIZE_MAX, hi = 0, all = 0;

	for (size_t i = 0; i < o->shapes.count; i++) {
		const struct rb_tune_shard_work *w = t->work ? &t->work[i] : NULL;
		const struct rb_tune_points *pts;
		size_t n;

		if (rb_tune_first_same(&o->shapes, i) != i || (w && !w->mine) ||
		    !(pts = rb_tune_enumerate(t, &o->shapes.entries[i].shape)))
			continue;
		n = w ? (pts->count + w->slices - 1 - w->slice) / w->slices : pts->count;
		shapes++;
		all += n;
		lo = n < lo ? n : lo;
		hi = n > hi ? n : hi;
	}
	if (t->work)
		fprintf(out, "rknn-bench: shard %u/%u: ", o->shard.index, o->shard.count);
	if (!shapes) {
		if (t->work)
			fprintf(out, "no shape falls to this shard (more shards than work)\n");
		return;
	}
	fprintf(out, "%stuning %zu shapes, %zu to %zu configs each (%zu in all): ",
		t->work ? "" : "rknn-bench: ", shapes, lo, hi, all);
	if (o->strategy == RB_TUNE_STRATEGY_MODEL && o->device->modeled)
		fprintf(out,
			"all modeled, the best %ld of each in turn, until none can beat "
			"the best verified, run",
			o->top);
	else if (o->strategy == RB_TUNE_STRATEGY_MODEL)
		fprintf(out, "all modeled, the best %ld of each run", o->top);
	else if (o->strategy == RB_TUNE_STRATEGY_RANDOM)
		fprintf(out, "%ld of each run", o->max_evals);
	else
		fprintf(out, "every one run");
	fprintf(out, " on the device, with the default config, the backend's own split%s\n",
		o->target == RB_TUNE_TARGET_RKNN_BENCH ? " and the rknn_matmul_api space" : "");
}

/* ---- progress on stderr (core/progress.h): the whole tune is the list of unique
 * shapes, each weighted by 2·M·N·K; within a shape the search reports its phases (the
 * timing model ranking every config, then the device running the best), first for the
 * space, then for the rknn_matmul_api side pass. Each shape's result is a line of its
 * own; --verbose adds one line per config. ---- */

#define SHAPE_FIXED_WORK 1e7 /* planning and modeling the space, whatever the shape */
/* Of a pass: ranking by the model; the rest runs configs. Measured on the emulator
 * (prefill tune, quiet 2-core VM): the model phase took 80% of result_output
 * 512x2048x128256 (81 of 101 s) and of ffn_out 512x8192x2048; on a board it runs on the
 * host just the same while the runs get faster. With 0.1 the ETA said 6 min with under
 * a minute to go. */
#define MODEL_SHARE     0.8
#define MAIN_PASS_SHARE 0.8 /* of a shape with a side pass: the space's own pass */

static double shape_work(const struct rb_shape *s)
{
	return 2.0 * (double)s->m * (double)s->k * (double)s->n + SHAPE_FIXED_WORK;
}

/* The entry of the k-th unique shape. */
static size_t unique_entry(const struct rb_shape_list *l, size_t k)
{
	for (size_t i = 0; i < l->count; i++)
		if (rb_tune_first_same(l, i) == i && k-- == 0)
			return i;
	return l->count;
}

static void shape_done(struct rb_tune_display *d)
{
	size_t i = unique_entry(&d->o->shapes, d->shape);
	const struct rb_tune_best *b = i < d->o->shapes.count ? &d->best[i] : NULL;
	char text[320];

	if (!b)
		return;
	if (b->found)
		snprintf(text, sizeof(text), "%.1f µs%s, %.2fx the default (%.1f µs): %s %s",
			 b->median_us, d->modeled ? " (modeled)" : "", b->default_us / b->median_us,
			 b->default_us, rb_npu_launch_name(b->point.launch), b->point.text);
	else
		snprintf(text, sizeof(text), "no verified config (%zu failed)", b->n_failed);
	rb_progress_item_done(&d->progress, text, rb_now_us() / 1e6);
}

static void shape_start(struct rb_tune_display *d, const struct rb_tune_progress *p)
{
	size_t i = unique_entry(&d->o->shapes, p->shape_index);
	const struct rb_shape *s = i < d->o->shapes.count ? &d->o->shapes.entries[i].shape : NULL;
	char label[160];

	if (d->shape != SIZE_MAX)
		shape_done(d);
	d->shape = p->shape_index;
	d->seen_run = d->side_pass = false;
	snprintf(label, sizeof(label), "%s (%lldx%lldx%lld)", p->label, s ? (long long)s->m : 0,
		 s ? (long long)s->k : 0, s ? (long long)s->n : 0);
	rb_progress_item(&d->progress, label, s ? shape_work(s) : SHAPE_FIXED_WORK,
			 rb_now_us() / 1e6);
}

/* The part of the shape done: its passes and phases weighted by what they cost. */
static double shape_fraction(const struct rb_tune_display *d, const struct rb_tune_progress *p)
{
	double f = p->total ? (double)p->done / (double)p->total : 1;
	double pass =
	    strcmp(p->phase, "model") == 0 ? MODEL_SHARE * f : MODEL_SHARE + (1 - MODEL_SHARE) * f;
	double main_share = d->o->target == RB_TUNE_TARGET_RKNN_API ? 1 : MAIN_PASS_SHARE;

	return d->side_pass ? main_share + (1 - main_share) * pass : main_share * pass;
}

static void on_progress(void *ctx, const struct rb_tune_progress *p)
{
	struct rb_tune_display *d = ctx;
	char detail[160];
	int len;

	if (d->quiet)
		return;
	if (p->shape_index != d->shape)
		shape_start(d, p);
	if (strcmp(p->phase, "model") == 0 && d->seen_run)
		d->side_pass = true;
	d->seen_run |= strcmp(p->phase, "run") == 0;
	len = snprintf(detail, sizeof(detail), "%s%s %zu/%zu", d->side_pass ? "rknn-api " : "",
		       p->phase, p->done, p->total);
	if (isfinite(p->best_us))
		snprintf(detail + len, sizeof(detail) - (size_t)len, ", best %.1f µs", p->best_us);
	else if (isfinite(p->best_model_us))
		snprintf(detail + len, sizeof(detail) - (size_t)len, ", best modeled %.1f µs",
			 p->best_model_us);
	rb_progress_update(&d->progress, shape_fraction(d, p), detail, rb_now_us() / 1e6);
}

static void on_result(void *ctx, const char *key, const struct rb_tune_record *r, bool cached)
{
	struct rb_tune_display *d = ctx;
	char line[1024];

	if (!d->verbose)
		return;
	snprintf(line, sizeof(line), "%-5s %s  %-7s %12.1f us  %-8s %s%s",
		 rb_tune_kind_name(r->kind), key, r->launch, r->median_us,
		 r->ok ? r->verify : "FAILED", r->config, cached ? "  (cached)" : "");
	rb_progress_print(&d->progress, line);
	if (!r->ok) {
		snprintf(line, sizeof(line), "      reason: %s", r->reason);
		rb_progress_print(&d->progress, line);
	}
}

void rb_tune_display_start(struct rb_tune_display *d, struct rb_tune_run *t,
			   const struct rb_tune_best *best, FILE *out, bool quiet)
{
	const struct rb_tune_opts *o = t->o;
	size_t unique = 0;
	double work = 0;

	for (size_t i = 0; i < o->shapes.count; i++)
		if (rb_tune_first_same(&o->shapes, i) == i) {
			unique++;
			work += shape_work(&o->shapes.entries[i].shape);
		}
	*d = (struct rb_tune_display){.quiet = quiet,
				      .verbose = o->verbose,
				      .o = o,
				      .best = best,
				      .modeled = o->device->modeled,
				      .shape = SIZE_MAX};
	rb_progress_init(&d->progress, out, isatty(fileno(out)) != 0, unique, work,
			 rb_now_us() / 1e6);
	t->on_progress = on_progress;
	t->on_result = on_result;
	t->cb_ctx = d;
}

/* After the search: the last shape's result line, and the live line erased. */
void rb_tune_display_end(struct rb_tune_display *d, int ret)
{
	if (ret == 0 && !d->quiet && d->shape != SIZE_MAX)
		shape_done(d);
	rb_progress_end(&d->progress);
}

/* stdout: one row per unique shape, through the one table printer. */

int rb_tune_space_print(FILE *out, const struct rb_tune_opts *o)
{
	char desc[8192];

	rb_tune_space_describe(&o->space, desc, sizeof(desc));
	fprintf(out, "space %016llx: %s\n", (unsigned long long)rb_tune_space_hash(&o->space),
		desc);
	for (size_t i = 0; i < o->shapes.count; i++) {
		const struct rb_shape_entry *e = &o->shapes.entries[i];
		struct rb_tune_points pts;
		char key[64];

		rb_tune_shape_key(&e->shape, key, sizeof(key));
		int ret = rb_tune_space_enumerate(&o->space, &e->shape, &pts);

		if (ret < 0)
			return ret;
		fprintf(out,
			"\n%s (%s): %zu configs (%zu rejected by the planner, %zu duplicate "
			"programs)\n",
			e->names[0], key, pts.count, pts.rejected, pts.duplicates);
		for (size_t j = 0; j < pts.count; j++)
			fprintf(out, "  %-7s %s\n", rb_npu_launch_name(pts.items[j].launch),
				pts.items[j].text);
		rb_tune_points_release(&pts);
	}
	return 0;
}
