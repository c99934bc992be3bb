/* rknn-bench tune: search planner configs per shape, write the tuned kernel JSON. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "dev/info.h"
#include "tune/display.h"

/* Modeled times are deterministic and measured ones are medians: a few samples per
 * config are enough to rank them (run measures the winner at length). */
#define TUNE_DEFAULT_WARMUP 1
#define TUNE_DEFAULT_ITERS  5

struct tune_cmd {
	struct cli_bench b; /* the options tune shares with run */
	struct rb_tune_opts t;
	int format;      /* --format of the summary: an enum rb_table_style */
	long shard_plan; /* --shard-plan N (0: none) */
};

/* ---- --shard-plan ---- */

static void print_shard(const struct rb_tune_shard_plan *p, const struct rb_tune_opts *o,
			unsigned s, struct rb_tune_shard_work *work)
{
	char key[64];

	rb_tune_shard_split(p, &o->shapes, &(struct rb_tune_shard){s + 1, p->count}, work);
	printf("shard %u/%u: %.1f s modeled\n", s + 1, p->count, p->seconds[s]);
	for (size_t u = 0; u < p->n_units; u++) {
		const struct rb_tune_shard_unit *x = &p->units[u];

		if (!work[x->entry].mine)
			continue;
		rb_tune_shape_key(&o->shapes.entries[x->entry].shape, key, sizeof(key));
		printf("  %-22s %5zu configs %11.0f tasks %8.1f s whole", key, x->configs, x->tasks,
		       x->seconds);
		if (x->slices > 1)
			printf(", slice %u of %u", work[x->entry].slice + 1, x->slices);
		printf("\n");
	}
}

static int shard_plan(const struct rb_tune_opts *o, unsigned count)
{
	struct rb_tune_shard_plan p;
	struct rb_tune_shard_work *work = calloc(o->shapes.count + 1, sizeof(*work));
	double lo = INFINITY, hi = 0;
	int ret = work ? rb_tune_shard_plan_init(&p, &o->shapes, &o->space, count) : -ENOMEM;

	if (ret == 0 && p.n_units) {
		printf("%u shards of %zu unique shapes, by the modeled work of each shape's tune "
		       "(CPU s of the emulator)\n",
		       count, p.n_units);
		for (unsigned s = 0; s < count; s++) {
			print_shard(&p, o, s, work);
			lo = fmin(lo, p.seconds[s]);
			hi = fmax(hi, p.seconds[s]);
		}
		printf("longest / shortest shard: %.2f (modeled)\n", hi / lo);
	} else if (ret == 0) {
		ret = rb_error("--shard-plan: give the shapes to tune");
	}
	if (ret < -1)
		rb_error("%s", work ? rb_last_error() : "out of memory");
	if (work)
		rb_tune_shard_plan_release(&p);
	free(work);
	return ret < 0 ? RB_EXIT_USAGE : RB_EXIT_OK;
}

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

static int open_session(struct rb_tune_run *t)
{
	int ret = rb_tune_open(t);

	if (ret == -EINVAL)
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	if (ret < 0)
		return cli_fail(cli_exit_code(ret), "%s", rb_last_error());
	if (!cli_quiet)
		rb_tune_print_estimate(stderr, t);
	if (t->cache.resumed && !cli_quiet)
		fprintf(stderr, "rknn-bench: resuming from '%s': %zu results%s\n", t->o->cache_path,
			t->cache.resumed,
			t->cache.dropped_last_line ? " (a truncated last line was dropped)" : "");
	return 0;
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
	rb_tune_summary_print(to_stdout ? stderr : stdout, style, t, best);
	for (size_t i = 0; ret == 0 && i < o->shapes.count; i++)
		if (!best[i].found && !best[i].other_shard)
			ret = RB_EXIT_FAIL;
	/* A tune that failed a shape does not replace a tuned JSON that may be complete. */
	if (ret == RB_EXIT_FAIL && !to_stdout && access(o->out_path, F_OK) == 0) {
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
	struct rb_tune_display display;
	struct rb_tune_run *t = calloc(1, sizeof(*t));
	struct rb_tune_best *best = calloc(o->shapes.count, sizeof(*best));
	int ret = t && best ? 0 : RB_EXIT_USAGE;

	if (ret == 0) {
		t->o = o;
		t->t0_us = rb_now_us();
		t->stop = &cli_stop_signal;
		rb_tune_display_start(&display, t, best, stderr, cli_quiet);
		ret = open_session(t);
	}
	if (ret == 0) {
		cli_catch_stop(true);
		ret = rb_tune_all(t, best);
		cli_catch_stop(false);
		rb_tune_display_end(&display, ret);
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
	if (c->shard_plan)
		return shard_plan(&c->t, (unsigned)c->shard_plan);
	if (c->t.list_space)
		return rb_tune_space_print(stdout, &c->t) < 0
			   ? cli_fail(RB_EXIT_USAGE, "%s", rb_last_error())
			   : RB_EXIT_OK;
	settings = rb_host_settings_json();
	cli_warn_host_settings(settings, c->t.device->modeled);
	cJSON_Delete(settings);
	return tune_main(&c->t, (enum rb_table_style)c->format);
}

#define T(field) offsetof(struct tune_cmd, t.field)

/* --shard-plan N: like --list-space, no device and no output file */
static int set_shard_plan(const struct cli_opt *opt, void *group, const char *arg)
{
	struct tune_cmd *c = group;
	long n;

	c->t.list_space = true;
	if (cli_parse_int("--shard-plan", arg, 1, RB_TUNE_MAX_SHARDS, &n) < 0)
		return -1;
	c->shard_plan = n;
	(void)opt;
	return 0;
}

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
	     "device; exhaustive: every config on the device;\n"
	     "random: --max-evals configs drawn with --seed"},
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
    {"shard-plan", 0, CLI_CALL, "N", .set = set_shard_plan, .section = CLI_SEC_SEARCH,
     .help = "print which shapes each of N shards takes and the modeled\n"
	     "work of each (no device needed) and exit"},
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
