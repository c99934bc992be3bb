/* rknn-bench tune: search planner configs per shape, write the tuned kernel JSON. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/progress.h"
#include "core/ref.h"
#include "dev/info.h"
#include "hw/soc.h"
#include "tune/search.h"

/* Modeled times are deterministic and measured ones are medians: a few samples per
 * config are enough to rank them (run measures the winner at length). */
#define TUNE_DEFAULT_WARMUP 1
#define TUNE_DEFAULT_ITERS  5

struct tune_cmd {
	struct cli_bench b; /* the options tune shares with run */
	struct rb_tune_opts t;
	int format; /* --format of the summary: an enum rb_table_style */
};

static void tune_init(void *o)
{
	struct tune_cmd *c = o;

	cli_bench_init(&c->b);
	c->b.measure.warmup = TUNE_DEFAULT_WARMUP;
	c->b.measure.iters = TUNE_DEFAULT_ITERS;
	c->b.out_path = "tuned.json";
	rb_shape_list_init(&c->t.shapes);
	c->t.top = 8;
	c->t.max_evals = 64;
	rb_tune_space_default(&c->t.space);
}

static void tune_release(void *o)
{
	struct tune_cmd *c = o;

	rb_shape_list_release(&c->t.shapes);
	for (int i = 0; c->t.file_texts && i < c->t.n_files; i++)
		free(c->t.file_texts[i].data);
	free(c->t.file_texts);
	free(c->b.specs.items);
}

/* The device: an NPU (tuning the CPU reference means nothing). */
static int find_device(struct rb_tune_opts *o)
{
	o->device = cli_find_device(o->device_name, &o->engine);
	if (!o->device)
		return -1;
	if (o->device->is_reference)
		return rb_error("--device %s: tune needs an NPU device (sim or rknpu)",
				o->device_name);
	return 0;
}

/* The target's space; --space edits the default one only; --no-weight-reuse either. */
static int set_space(struct rb_tune_opts *o)
{
	if (o->target == RB_TUNE_TARGET_RKNN_API) {
		if (o->space_path)
			return rb_error("--space and --target rknn-api both choose the space: "
					"give one of them");
		rb_tune_space_rknn_api(&o->space);
	} else if (o->space_path && rb_tune_space_load_file(&o->space, o->space_path) < 0) {
		return rb_error("%s", rb_last_error());
	}
	if (o->target == RB_TUNE_TARGET_GGML_RKNN) /* each slice: one core, the backend's */
		rb_tune_space_single_core(&o->space);
	if (o->weight_copies && o->target != RB_TUNE_TARGET_GGML_RKNN)
		return rb_error("--weight-copies is for --target ggml-rknn (the shim's one copy "
				"of B); other targets tune every layout");
	if (o->target == RB_TUNE_TARGET_GGML_RKNN && !o->weight_copies)
		rb_tune_space_native_b(&o->space); /* the shim reads B in place */
	if (o->no_weight_reuse)
		rb_tune_space_no_weight_reuse(&o->space);
	if (rb_tune_space_combinations(&o->space) > RB_TUNE_MAX_COMBINATIONS)
		return rb_error("%s: %llu combinations of knob values per shape, more than %u: "
				"give fewer values",
				o->space_path,
				(unsigned long long)rb_tune_space_combinations(&o->space),
				RB_TUNE_MAX_COMBINATIONS);
	return 0;
}

/* The cache beside the tuned JSON unless --cache names one. */
static int default_cache(struct rb_tune_opts *o)
{
	if (o->cache_path || o->list_space)
		return 0;
	if (strcmp(o->out_path, "-") == 0)
		return rb_error("-o - writes the tuned JSON to standard output: give --cache FILE "
				"for the results so far");
	if (!cli_is_regular_or_new(o->out_path))
		return rb_error("-o '%s' is not a regular file, so its cache would be "
				"'%s.cache.jsonl': give --cache FILE",
				o->out_path, o->out_path);
	snprintf(o->cache_buf, sizeof(o->cache_buf), "%s.cache.jsonl", o->out_path);
	o->cache_path = o->cache_buf;
	return 0;
}

/* The shared options into the tuner's, then the space, the shapes and the device. */
static int tune_prepare(void *opts, const struct cli_args *a, struct cli_paths *p)
{
	struct tune_cmd *c = opts;
	struct rb_tune_opts *o = &c->t;
	int ret = cli_bench_finish(&c->b);

	(void)p;
	o->device_name = c->b.device_name;
	o->engine = c->b.engine;
	o->measure = c->b.measure;
	o->verify = c->b.verify;
	o->seed = c->b.seed;
	o->data = c->b.data;
	o->out_path = c->b.out_path;
	if (o->list_space)
		c->b.out_path = NULL; /* nothing is written */
	o->files = a->v;
	o->n_files = a->n;
	if (ret == 0)
		ret = set_space(o);
	if (ret == 0 && o->n_files &&
	    !(o->file_texts = calloc((size_t)o->n_files, sizeof(*o->file_texts))))
		ret = rb_error("out of memory");
	if (ret == 0)
		ret = cli_load_shapes(&o->shapes, o->files, o->n_files, o->file_texts, &c->b.specs,
				      c->b.dtype, "tune", o->list_space);
	if (ret == 0 && (o->shapes.count || !o->list_space))
		ret = cli_filter_shapes(&o->shapes, c->b.filter);
	if (ret == 0 && !o->list_space)
		ret = find_device(o);
	if (ret == 0)
		ret = default_cache(o);
	return ret < 0 ? RB_EXIT_USAGE : 0;
}

/* ---- --list-space ---- */

static int list_space(const struct rb_tune_opts *o)
{
	char desc[8192];

	rb_tune_space_describe(&o->space, desc, sizeof(desc));
	printf("space %016llx: %s\n", (unsigned long long)rb_tune_space_hash(&o->space), desc);
	for (size_t i = 0; i < o->shapes.count; i++) {
		const struct rb_shape_entry *e = &o->shapes.entries[i];
		struct rb_tune_points pts;
		char key[64];

		rb_tune_shape_key(&e->shape, key, sizeof(key));
		if (rb_tune_space_enumerate(&o->space, &e->shape, &pts) < 0)
			return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
		printf("\n%s (%s): %zu configs (%zu rejected by the planner, %zu duplicate "
		       "programs)\n",
		       e->names[0], key, pts.count, pts.rejected, pts.duplicates);
		for (size_t j = 0; j < pts.count; j++)
			printf("  %-7s %s\n", rb_npu_launch_name(pts.items[j].launch),
			       pts.items[j].text);
		rb_tune_points_release(&pts);
	}
	return RB_EXIT_OK;
}

/* What the search will do, before it starts: configs per shape and what runs where. */
static void print_estimate(struct rb_tune_run *t)
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
		fprintf(stderr, "rknn-bench: shard %u/%u: ", o->shard.index, o->shard.count);
	if (!shapes) {
		if (t->work)
			fprintf(stderr, "no shape falls to this shard (more shards than work)\n");
		return;
	}
	fprintf(stderr, "%stuning %zu shapes, %zu to %zu configs each (%zu in all): ",
		t->work ? "" : "rknn-bench: ", shapes, lo, hi, all);
	if (o->strategy == RB_TUNE_STRATEGY_MODEL && o->device->modeled)
		fprintf(stderr,
			"all modeled, the best %ld of each in turn, until none can beat "
			"the best verified, run",
			o->top);
	else if (o->strategy == RB_TUNE_STRATEGY_MODEL)
		fprintf(stderr, "all modeled, the best %ld of each run", o->top);
	else if (o->strategy == RB_TUNE_STRATEGY_RANDOM)
		fprintf(stderr, "%ld of each run", o->max_evals);
	else
		fprintf(stderr, "every one run");
	fprintf(stderr, " on the device, with the default config, the backend's own split%s\n",
		o->target == RB_TUNE_TARGET_RKNN_BENCH ? " and the rknn_matmul_api space" : "");
}

static int open_session(struct rb_tune_run *t)
{
	int ret = rb_tune_open(t);

	if (ret == -EINVAL)
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	if (ret < 0)
		return cli_fail(cli_exit_code(ret), "%s", rb_last_error());
	if (!cli_quiet)
		print_estimate(t);
	if (t->cache.resumed && !cli_quiet)
		fprintf(stderr, "rknn-bench: resuming from '%s': %zu results%s\n", t->o->cache_path,
			t->cache.resumed,
			t->cache.dropped_last_line ? " (a truncated last line was dropped)" : "");
	return 0;
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

struct tune_display {
	bool quiet, verbose;
	struct rb_progress progress;
	const struct rb_tune_opts *o;
	const struct rb_tune_best *best; /* filled shape by shape */
	bool modeled;
	size_t shape;   /* the unique shape under way (SIZE_MAX: none yet) */
	bool seen_run;  /* its device phase has started */
	bool side_pass; /* its rknn_matmul_api pass */
};

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

static void shape_done(struct tune_display *d)
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

static void shape_start(struct tune_display *d, const struct rb_tune_progress *p)
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
static double shape_fraction(const struct tune_display *d, const struct rb_tune_progress *p)
{
	double f = p->total ? (double)p->done / (double)p->total : 1;
	double pass =
	    strcmp(p->phase, "model") == 0 ? MODEL_SHARE * f : MODEL_SHARE + (1 - MODEL_SHARE) * f;
	double main_share = d->o->target == RB_TUNE_TARGET_RKNN_API ? 1 : MAIN_PASS_SHARE;

	return d->side_pass ? main_share + (1 - main_share) * pass : main_share * pass;
}

static void on_progress(void *ctx, const struct rb_tune_progress *p)
{
	struct tune_display *d = ctx;
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
	struct tune_display *d = ctx;
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

static void show_progress(struct rb_tune_run *t, struct tune_display *d,
			  const struct rb_tune_best *best)
{
	const struct rb_tune_opts *o = t->o;
	size_t unique = 0;
	double work = 0;

	for (size_t i = 0; i < o->shapes.count; i++)
		if (rb_tune_first_same(&o->shapes, i) == i) {
			unique++;
			work += shape_work(&o->shapes.entries[i].shape);
		}
	*d = (struct tune_display){.quiet = cli_quiet,
				   .verbose = o->verbose,
				   .o = o,
				   .best = best,
				   .modeled = o->device->modeled,
				   .shape = SIZE_MAX};
	rb_progress_init(&d->progress, stderr, isatty(STDERR_FILENO) != 0, unique, work,
			 rb_now_us() / 1e6);
	t->on_progress = on_progress;
	t->on_result = on_result;
	t->cb_ctx = d;
}

/* After the search: the last shape's result line, and the live line erased. */
static void end_progress(struct tune_display *d, int ret)
{
	if (ret == 0 && !d->quiet && d->shape != SIZE_MAX)
		shape_done(d);
	rb_progress_end(&d->progress);
}

/* stdout: one row per unique shape, through the one table printer. */
enum {
	T_NAME,
	T_SHAPE,
	T_LAUNCH,
	T_TUNED,
	T_HOST,
	T_DEFAULT,
	T_SPEEDUP,
	T_API,
	T_BACKEND,
	T_CONFIG,
	T_COLS
};
#define T_CELL 160

static void summary_row(char (*cells)[T_CELL], const char *name, const struct rb_tune_best *b)
{
	snprintf(cells[T_NAME], T_CELL, "%s", name);
	snprintf(cells[T_SHAPE], T_CELL, "%lldx%lldx%lld", (long long)b->shape.m,
		 (long long)b->shape.k, (long long)b->shape.n);
	if (!b->found) {
		snprintf(cells[T_LAUNCH], T_CELL, "no verified config (%zu failed)", b->n_failed);
		return;
	}
	snprintf(cells[T_LAUNCH], T_CELL, "%s", rb_npu_launch_name(b->point.launch));
	snprintf(cells[T_TUNED], T_CELL, "%.1f", b->median_us);
	snprintf(cells[T_HOST], T_CELL, "%.1f", b->host_us);
	snprintf(cells[T_DEFAULT], T_CELL, "%.1f", rb_tune_default_total_us(b));
	snprintf(cells[T_SPEEDUP], T_CELL, "%.2fx",
		 rb_tune_default_total_us(b) / rb_tune_best_total_us(b));
	if (b->api.found)
		snprintf(cells[T_API], T_CELL, "%.1f", rb_tune_api_total_us(b));
	if (b->backend.found)
		snprintf(cells[T_BACKEND], T_CELL, "%.1f", rb_tune_backend_total_us(b));
	snprintf(cells[T_CONFIG], T_CELL, "%s", b->point.text);
}

/* The knobs in which the configs behind two totals of one M differ, shape by shape:
 * "launch, split" ("" when none). */
static void why_text(const struct rb_tune_run *t, const struct rb_tune_best *best, int64_t m,
		     enum rb_tune_which slow, char *buf, size_t size)
{
	unsigned diff = 0;
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->o->shapes.count; i++) {
		const struct rb_tune_best *b = &best[i];
		const struct rb_tune_point *fast, *from;
		double us;

		if (b->shape.m != m || !(fast = rb_tune_overall_point(b, &us)))
			continue;
		from = slow == RB_TUNE_BACKEND ? &b->backend.point : &b->api.point;
		if (slow == RB_TUNE_BACKEND && b->api.found)
			fast = &b->api.point; /* backend against rknn-api */
		if ((slow == RB_TUNE_BACKEND && b->backend.found) ||
		    (slow == RB_TUNE_API && b->api.found))
			diff |= rb_tune_point_diff(&b->shape, from, fast);
	}
	for (unsigned k = 0; k < RB_TUNE_DIFF_COUNT; k++)
		if (diff & 1u << k && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
						rb_tune_diff_name(k));
}

/* One line saying why a total is worse than the next one's (the lines go from what the
 * backend does to what rknn-bench does). */
static void print_why(FILE *out, const struct rb_tune_run *t, const struct rb_tune_best *best,
		      const struct rb_total *slow, const struct rb_total *fast,
		      enum rb_tune_which which)
{
	char knobs[160];

	if (!slow->complete || !fast->complete || !(slow->total_us > fast->total_us))
		return;
	why_text(t, best, slow->m, which, knobs, sizeof(knobs));
	if (which == RB_TUNE_BACKEND)
		fprintf(
		    out,
		    "    why: the backend's own split (3 cores, N/32/3*32 columns each) is %.1f µs "
		    "slower than the best rknn_matmul_api config, which differs in %s\n",
		    slow->total_us - fast->total_us, knobs[0] ? knobs : "nothing but noise");
	else
		fprintf(
		    out,
		    "    why: rknn_matmul_api is %.1f µs slower: rknn-bench's configs differ in "
		    "%s, "
		    "which librknnrt cannot express (it runs one blocking thread per single-core "
		    "context on 32-column cuts)%s\n",
		    slow->total_us - fast->total_us, knobs[0] ? knobs : "nothing but noise",
		    t->o->target == RB_TUNE_TARGET_RKNN_API
			? "; with --target rknn-api rknn-bench's best is its default config, "
			  "not searched"
			: "");
}

/* The three totals, from what the backend does to what rknn-bench does. */
static const enum rb_tune_which three[] = {RB_TUNE_BACKEND, RB_TUNE_API, RB_TUNE_OVERALL};
static const char *const three_labels[] = {"backend   ", "rknn-api  ", "rknn-bench"};

static void print_three(FILE *out, struct rb_total sums[3][RB_TOTALS_MAX], size_t i)
{
	char line[160];

	for (int w = 0; w < 3; w++) {
		rb_total_text(&sums[w][i], line, sizeof(line));
		fprintf(out, "  %s %s\n", three_labels[w], line);
	}
}

/* Slices of `shapes --for ggml-rknn`: the same three per graph pair, each pair its
 * slowest slice (the backend runs a pair's slices at once, one per core). */
static void print_slice_totals(FILE *out, const struct rb_tune_run *t,
			       const struct rb_tune_best *best)
{
	struct rb_total sums[3][RB_TOTALS_MAX];
	size_t n[3];

	for (int w = 0; w < 3; w++)
		n[w] = rb_tune_slice_totals(t, best, three[w], sums[w]);
	if (!n[0])
		return;
	fprintf(out, "\nper graph pair, its slowest slice (the slices run at once, one per "
		     "core):\n");
	for (size_t i = 0; i < n[0] && i < n[1] && i < n[2]; i++)
		print_three(out, sums, i);
}

/* Per model, from what the backend does to what rknn-bench does: the backend as it is
 * (its own split), the best rknn_matmul_api can express, our best overall; each a sum of
 * device + host time per pair; a line says why when one is worse than the next. */
static void print_totals(FILE *out, const struct rb_tune_run *t, const struct rb_tune_best *best)
{
	struct rb_total sums[3][RB_TOTALS_MAX];
	size_t n[3];

	for (int w = 0; w < 3; w++)
		n[w] = rb_tune_totals(t->o, best, three[w], sums[w]);
	fprintf(
	    out,
	    "\nper model, the sum over every pair of device%s + host time (host: %s, modeled):\n",
	    t->device.ops->modeled ? " (modeled)" : "", RB_TUNE_HOST_MODEL);
	for (size_t i = 0; i < n[0] && i < n[1] && i < n[2]; i++) {
		print_three(out, sums, i);
		print_why(out, t, best, &sums[0][i], &sums[1][i], RB_TUNE_BACKEND);
		print_why(out, t, best, &sums[1][i], &sums[2][i], RB_TUNE_API);
		if (sums[2][i].complete && sums[1][i].complete &&
		    sums[2][i].total_us > sums[1][i].total_us)
			fprintf(
			    out,
			    "    why: rknn-bench's best is %.1f µs slower than rknn_matmul_api's: "
			    "the space searched (--space) leaves the API's configs out\n",
			    sums[2][i].total_us - sums[1][i].total_us);
	}
	fprintf(out,
		"  (backend: ggml-rknn as it is, its own split; rknn-api: the best librknnrt can "
		"express; rknn-bench: our best overall)\n");
	if (t->o->target == RB_TUNE_TARGET_GGML_RKNN)
		fprintf(out, "  (ggml-rknn slices: each slice's time on its core, summed; the "
			     "backend runs a pair's slices at once on three cores, so a pair takes "
			     "about its slowest slice)\n");
	print_slice_totals(out, t, best);
}

/* The summary: the row of a shape prints the config the tuned JSON holds for it
 * (tuned.config, the planner's choices made explicit), as the tests check. */
static void print_summary(FILE *out, enum rb_table_style style, const struct rb_tune_run *t,
			  const struct rb_tune_best *best)
{
	const struct rb_shape_list *l = &t->o->shapes;
	bool modeled = t->device.ops->modeled;
	const struct rb_table_column cols[T_COLS] = {
	    {"name", false},
	    {"shape", false},
	    {"launch", false},
	    {modeled ? "device µs (modeled)" : "device µs", true},
	    {"host µs (A76 model)", true},
	    {"default µs", true},
	    {"speedup", true},
	    {"rknn-api µs", true},
	    {"backend µs", true},
	    {"config", false},
	};
	char(*rows)[T_COLS][T_CELL] = calloc(l->count ? l->count : 1, sizeof(*rows));
	const struct rb_soc_profile *soc = t->o->engine.sim.soc;
	size_t n = 0;

	if (soc)
		fprintf(out, "hardware profile: %s, chosen by %s\n\n", soc->label, soc->chosen_by);
	for (size_t i = 0; rows && i < l->count; i++)
		if (rb_tune_first_same(l, i) == i && !best[i].other_shard)
			summary_row(rows[n++], l->entries[i].names[0], &best[i]);
	if (rows)
		rb_table_print_cells_style(out, style, cols, T_COLS, (const char *)rows, T_CELL, n);
	if (t->work) /* the totals need every shape: `rknn-bench merge` sums them */
		fprintf(out,
			"\nshard %u/%u: %zu of the shapes; `rknn-bench merge` joins the shards\n",
			t->o->shard.index, t->o->shard.count, n);
	else
		print_totals(out, t, best);
	fprintf(
	    out,
	    "\ndefault, rknn-api and backend µs and the speedup are device + host; the host part "
	    "is modeled for the board's Cortex-A76 (docs/tuned-json.md)\n");
	if (modeled)
		fprintf(out, "modeled: times come from the emulator's timing model, not a clock\n");
	free(rows);
}

static int finish(struct rb_tune_run *t, struct rb_tune_best *best, int ret,
		  enum rb_table_style style)
{
	const struct rb_tune_opts *o = t->o;
	bool to_stdout = strcmp(o->out_path, "-") == 0; /* the tuned JSON takes stdout */

	if (ret == -EINTR) {
		rb_error("interrupted: %zu results are kept in '%s'; run the same command again to "
			 "resume; '%s' was not written",
			 t->cache.count, o->cache_path, o->out_path);
		return 128 + cli_stop_signal; /* 130 for SIGINT, 143 for SIGTERM */
	}
	if (ret)
		return cli_fail(cli_exit_code(ret), "%s", rb_last_error());
	print_summary(to_stdout ? stderr : stdout, style, t, best);
	for (size_t i = 0; ret == 0 && i < o->shapes.count; i++)
		if (!best[i].found && !best[i].other_shard)
			ret = RB_EXIT_FAIL;
	/* A tune that failed a shape does not replace a tuned JSON that may be complete. */
	if (ret == RB_EXIT_FAIL && !to_stdout && !cli_is_new(o->out_path)) {
		rb_error("a shape has no verified config: '%s' (from an earlier tune) is kept; "
			 "this run's results are in '%s'",
			 o->out_path, o->cache_path);
		return ret;
	}
	if (rb_tuned_write(t, best) < 0)
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	return ret;
}

static int tune_main(const struct rb_tune_opts *o, enum rb_table_style style)
{
	struct tune_display display;
	struct rb_tune_run *t = calloc(1, sizeof(*t));
	struct rb_tune_best *best = calloc(o->shapes.count, sizeof(*best));
	int ret = t && best ? 0 : RB_EXIT_USAGE;

	if (ret == 0) {
		t->o = o;
		t->t0_us = rb_now_us();
		t->stop = &cli_stop_signal;
		show_progress(t, &display, best);
		ret = open_session(t);
	}
	if (ret == 0) {
		cli_catch_stop(true);
		ret = rb_tune_all(t, best);
		cli_catch_stop(false);
		end_progress(&display, ret);
		ret = finish(t, best, ret, style);
	}
	if (t)
		rb_tune_close(t);
	free(best);
	free(t);
	return ret;
}

static int tune_run(void *opts, const struct cli_args *a)
{
	struct tune_cmd *c = opts;
	cJSON *settings;

	(void)a;
	if (c->t.list_space)
		return list_space(&c->t);
	settings = rb_host_settings_json();
	cli_warn_host_settings(settings, c->t.device->modeled);
	cJSON_Delete(settings);
	return tune_main(&c->t, (enum rb_table_style)c->format);
}

#define T(field) offsetof(struct tune_cmd, t.field)

static int set_shard(const struct cli_opt *opt, void *group, const char *arg)
{
	(void)opt;
	return rb_tune_shard_parse(arg, &((struct tune_cmd *)group)->t.shard) < 0
		   ? rb_error("%s", rb_last_error())
		   : 0;
}

static const struct cli_opt tune_opts[] = {
    {"strategy", 0, CLI_ENUM, "S", "model|exhaustive|random", T(strategy),
     .section = CLI_SEC_SEARCH,
     .help = "model (default): rank every config by the emulator's timing\n"
	     "model alone, then verify and time the best --top on the\n"
	     "device; exhaustive: every config on the device; random:\n"
	     "--max-evals configs drawn with --seed"},
    {"top", 0, CLI_LONG, "K", .offset = T(top), .min = 1, .max = 1000000, .section = CLI_SEC_SEARCH,
     .help = "configs the model strategy runs on the device (default 8);\n"
	     "on sim only until none left can beat the best verified"},
    {"max-evals", 0, CLI_LONG, "N", .offset = T(max_evals), .min = 1, .max = 100000000,
     .section = CLI_SEC_SEARCH, .help = "configs the random strategy runs (default 64)"},
    {"space", 0, CLI_STR, "FILE", .offset = T(space_path), .path = CLI_IN,
     .section = CLI_SEC_SEARCH,
     .help = "knob lists to search, replacing or extending the default\n"
	     "({\"mode\": \"extend\", \"res\": [\"streamed\"]}, see the docs)"},
    {"target", 0, CLI_ENUM, "T", "rknn-bench|rknn-api|ggml-rknn", T(target),
     .section = CLI_SEC_SEARCH,
     .help = "rknn-bench (default: the space above), rknn-api: only\n"
	     "what rknn_matmul_api expresses (single-core contexts, N\n"
	     "cut at multiples of 32, blocking threads), or ggml-rknn:\n"
	     "the slices of `shapes --for ggml-rknn`, each on its core\n"
	     "with the knobs the shim applies; each pair also gets the\n"
	     "best rknn-api config and the backend's own split\n"
	     "(docs/backend.md)"},
    {"shard", 0, CLI_CALL, "I/N", .set = set_shard, .section = CLI_SEC_SEARCH,
     .help = "tune shard I of N: a deterministic part of the shapes\n"
	     "(or, with fewer shapes than shards, of a shape's space);\n"
	     "join the shards with `rknn-bench merge` (docs/scale-out.md)"},
    {"list-space", 0, CLI_BOOL, .offset = T(list_space), .section = CLI_SEC_SEARCH,
     .help = "print the space (per shape when shapes are given) and exit"},
    {"weight-copies", 0, CLI_BOOL, .offset = T(weight_copies), .section = CLI_SEC_SEARCH,
     .help = "with --target ggml-rknn: also configs whose B is not\n"
	     "librknnrt's native layout (K-slices); the shim then keeps a\n"
	     "packed copy of B next to the backend's memory (default: only\n"
	     "configs that read B in place, one copy)"},
    {"no-weight-reuse", 0, CLI_BOOL, .offset = T(no_weight_reuse), .section = CLI_SEC_SEARCH,
     .help = "plan no WEIGHT_REUSE (the space's wreuse knob: 0); run and\n"
	     "plan take the flag too"},
    {"format", 0, CLI_ENUM, "FMT", "table|md", offsetof(struct tune_cmd, format),
     .section = CLI_SEC_OUTPUT, .help = "the summary: table (default) or md"},
    {"cache", 0, CLI_STR, "FILE", .offset = T(cache_path), .path = CLI_OUT,
     .section = CLI_SEC_OUTPUT,
     .help = "results so far, JSON Lines (default OUTPUT.cache.jsonl);\n"
	     "rerunning the same command resumes from it"},
    {"verbose", 0, CLI_BOOL, .offset = T(verbose), .section = CLI_SEC_OUTPUT,
     .help = "one line per config evaluated (stderr)"},
    {NULL},
};

const struct cli_command cli_cmd_tune = {
    .name = "tune",
    .summary = "search NPU configs per shape, write the tuned kernel JSON",
    .synopsis = "[options] [SHAPES.json ...]\n"
		"       rknn-bench tune --list-space [--space FILE] [SHAPES.json ...]",
    .about = "Search NPU configs (core masks, thread splits, CBUF banks, K-slices, launch modes)\n"
	     "for every shape, verify and time the candidates on the device, and write the tuned\n"
	     "kernel JSON a backend reads: the shapes file plus a \"tuned\" and a \"measured\"\n"
	     "object per pair (docs/tuned-json.md).\n",
    .notes = "Ctrl-C (SIGINT) or SIGTERM stops after the config being measured: results stay in\n"
	     "the cache, no tuned JSON is written (exit 130, 143). Exit codes: 0 ok, 1 a shape\n"
	     "has no verified config, 2 usage or input error (or a cache from another setup, or\n"
	     "an output that cannot be written), 3 device error.\n",
    .groups = {CLI_BENCH_GROUP(struct tune_cmd, b), CLI_GROUP(tune_opts, 0)},
    .pos = {{"SHAPES.json", CLI_IN, 0, -1}},
    .size = sizeof(struct tune_cmd),
    .init = tune_init,
    .prepare = tune_prepare,
    .run = tune_run,
    .release = tune_release,
};
