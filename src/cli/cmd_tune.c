/* rknn-bench tune: search planner configs per shape, write the tuned kernel JSON. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tune/search.h"
#include "core/error.h"
#include "dev/info.h"

#define TUNE_DEFAULT_TOP       8
#define TUNE_DEFAULT_MAX_EVALS 64
/* Modeled times are deterministic and measured ones are medians: a few samples per
 * config are enough to rank them (run measures the winner at length). */
#define TUNE_DEFAULT_WARMUP 1
#define TUNE_DEFAULT_ITERS  5

static void tune_usage(void)
{
	fputs("usage: rknn-bench tune [options] [SHAPES.json ...]\n"
	      "       rknn-bench tune --list-space [--space FILE] [SHAPES.json ...]\n"
	      "\n"
	      "Search NPU configs (core masks, thread splits, CBUF banks, K-slices, launch modes)\n"
	      "for every shape, verify and time the candidates on the device, and write the tuned\n"
	      "kernel JSON a backend reads: the shapes file plus a \"tuned\" and a \"measured\"\n"
	      "object per pair (docs/tuned-json.md).\n"
	      "\n",
	      stdout);
	cli_bench_usage(stdout, CLI_TUNE);
	fputs(
	    "\nCtrl-C (SIGINT) or SIGTERM stops after the config being measured: results stay in\n"
	    "the cache, no tuned JSON is written (exit 130, 143). Exit codes: 0 ok, 1 a shape\n"
	    "has no verified config, 2 usage or input error (or a cache from another setup),\n"
	    "3 device error.\n",
	    stdout);
}

/* What tune's command line sets beyond struct rb_tune_opts. */
struct tune_cli {
	struct rb_tune_opts *o;
	enum rb_table_style style; /* --format of the summary */
	long shard_plan;           /* --shard-plan N (0: none) */
};

static int parse_format(struct tune_cli *cli, const char *arg)
{
	enum rb_format format;

	if (rb_format_parse(arg, &format) < 0 ||
	    (format != RB_FORMAT_TABLE && format != RB_FORMAT_MD))
		return rb_error("--format '%s': tune prints its summary as table or md (the "
				"tuned JSON goes to -o)",
				arg);
	cli->style = format == RB_FORMAT_MD ? RB_TABLE_MARKDOWN : RB_TABLE_TEXT;
	return 0;
}

/* The options only tune has (the shared ones are cli_bench_option's). */
static int parse_option(struct tune_cli *cli, int c, const char *arg)
{
	struct rb_tune_opts *o = cli->o;

	switch (c) {
	case CLI_OPT_FORMAT:
		return parse_format(cli, arg);
	case CLI_OPT_STRATEGY:
		if (rb_tune_strategy_parse(arg, &o->strategy) < 0)
			return rb_error("--strategy '%s' must be model, exhaustive or random", arg);
		return 0;
	case CLI_OPT_TOP:
		return cli_parse_int("--top", arg, 1, 1000000, &o->top);
	case CLI_OPT_MAX_EVALS:
		return cli_parse_int("--max-evals", arg, 1, 100000000, &o->max_evals);
	case CLI_OPT_SPACE:
		o->space_path = arg;
		return 0;
	case CLI_OPT_TARGET:
		return rb_tune_target_parse(arg, &o->target) < 0 ? rb_error("%s", rb_last_error())
								 : 0;
	case CLI_OPT_SHARD:
		return rb_tune_shard_parse(arg, &o->shard) < 0 ? rb_error("%s", rb_last_error())
							       : 0;
	case CLI_OPT_LIST_SPACE:
		o->list_space = true;
		return 0;
	case CLI_OPT_SHARD_PLAN: /* like --list-space: no device, no output file */
		o->list_space = true;
		return cli_parse_int("--shard-plan", arg, 1, RB_TUNE_MAX_SHARDS, &cli->shard_plan);
	case CLI_OPT_WEIGHT_COPIES:
		o->weight_copies = true;
		return 0;
	case CLI_OPT_NO_WEIGHT_REUSE:
		o->no_weight_reuse = true;
		return 0;
	case CLI_OPT_CACHE:
		o->cache_path = arg;
		return 0;
	case CLI_OPT_VERBOSE:
		o->verbose = true;
		return 0;
	default:
		return rb_error("option code %d is not one of tune's", c);
	}
}

static void tune_opts_init(struct rb_tune_opts *o)
{
	memset(o, 0, sizeof(*o));
	rb_shape_list_init(&o->shapes);
	o->device_name = "auto";
	rb_engine_opts_init(&o->engine);
	rb_measure_opts_init(&o->measure);
	o->measure.warmup = TUNE_DEFAULT_WARMUP;
	o->measure.iters = TUNE_DEFAULT_ITERS;
	rb_verify_opts_init(&o->verify, RB_DTYPE_FP16);
	o->seed = 1;
	o->top = TUNE_DEFAULT_TOP;
	o->max_evals = TUNE_DEFAULT_MAX_EVALS;
	rb_tune_space_default(&o->space);
	o->out_path = "tuned.json";
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

/* -o and the cache before tuning starts: writable, none of the files tune reads, and
 * not each other. */
static int check_outputs(const struct rb_tune_opts *o, const char *soc_path)
{
	const char **inputs = calloc((size_t)o->n_files + 3, sizeof(*inputs));
	size_t n = (size_t)o->n_files;
	int ret;

	if (!inputs)
		return rb_error("out of memory");
	memcpy(inputs, o->files, n * sizeof(*inputs));
	inputs[n++] = soc_path;
	inputs[n++] = o->space_path;
	ret = strcmp(o->out_path, "-") == 0 ? 0 /* stdout */
					    : cli_check_output("-o", o->out_path, inputs, n);
	if (ret == 0 && strcmp(o->cache_path, o->out_path) == 0)
		ret = rb_error("--cache and -o are both '%s': give them two files", o->out_path);
	inputs[n++] = o->out_path;
	if (ret == 0)
		ret = cli_check_output("--cache", o->cache_path, inputs, n);
	free(inputs);
	return ret;
}

static int finish_args(struct rb_tune_opts *o, const struct cli_bench *b)
{
	int ret = set_space(o);

	if (ret == 0 && o->n_files &&
	    !(o->file_texts = calloc((size_t)o->n_files, sizeof(*o->file_texts))))
		ret = rb_error("out of memory");
	if (ret == 0)
		ret = cli_load_shapes_kept(&o->shapes, o->files, o->n_files, o->file_texts,
					   b->specs, b->n_specs, b->dtype, "tune", o->list_space);
	if (ret == 0 && (o->shapes.count || !o->list_space))
		ret = cli_filter_shapes(&o->shapes, b->filter);
	if (ret == 0 && !o->list_space)
		ret = find_device(o);
	if (ret == 0 && !o->cache_path) {
		if (strcmp(o->out_path, "-") == 0)
			return rb_error("-o - writes the tuned JSON to standard output: give "
					"--cache FILE for the results so far");
		if (!cli_is_regular_or_new(o->out_path))
			return rb_error("-o '%s' is not a regular file, so its cache would be "
					"'%s.cache.jsonl': give --cache FILE",
					o->out_path, o->out_path);
		snprintf(o->cache_buf, sizeof(o->cache_buf), "%s.cache.jsonl", o->out_path);
		o->cache_path = o->cache_buf;
	}
	if (ret == 0 && !o->list_space)
		ret = check_outputs(o, b->soc_path);
	return ret;
}

/* --help was printed: not an error, nothing more to do (no exit code is this big). */
#define HELP_SHOWN 1000

static int own_option(void *ctx, int code, const char *arg)
{
	return parse_option(ctx, code, arg);
}

/* Parses argv: 0, HELP_SHOWN, or an exit code. */
static int parse_args(struct tune_cli *cli, int argc, char **argv)
{
	struct rb_tune_opts *o = cli->o;
	const struct cli_bench_cmd own = {"tune", tune_usage, own_option, cli};
	struct cli_bench b = CLI_BENCH_OF(o);
	int ret = cli_bench_parse(&b, CLI_TUNE, argc, argv, &own);

	o->files = argv + optind;
	o->n_files = argc - optind;
	if (ret == 0)
		ret = finish_args(o, &b);
	free(b.specs);
	if (ret == -2)
		return HELP_SHOWN;
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

int cmd_tune(int argc, char **argv)
{
	struct rb_tune_opts *o = malloc(sizeof(*o));
	struct tune_cli cli = {o, RB_TABLE_TEXT, 0};
	int ret;

	if (!o)
		return cli_fail(RB_EXIT_USAGE, "out of memory");
	tune_opts_init(o);
	ret = parse_args(&cli, argc, argv);
	if (ret == 0 && !o->list_space) {
		cJSON *settings = rb_host_settings_json();

		cli_warn_host_settings(settings, o->device->modeled);
		cJSON_Delete(settings);
	}
	if (ret == 0)
		ret = cli.shard_plan  ? shard_plan(o, (unsigned)cli.shard_plan)
		      : o->list_space ? list_space(o)
				      : tune_main(o, cli.style);
	rb_shape_list_release(&o->shapes);
	for (int i = 0; o->file_texts && i < o->n_files; i++)
		free(o->file_texts[i].data);
	free(o->file_texts);
	free(o);
	return ret == HELP_SHOWN ? RB_EXIT_OK : ret;
}
