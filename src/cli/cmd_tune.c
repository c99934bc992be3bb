/* rknn-bench tune: search planner configs per shape, write the tuned kernel JSON. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "tune/search.h"
#include "core/error.h"

#define TUNE_DEFAULT_TOP       8
#define TUNE_DEFAULT_MAX_EVALS 64
/* Modeled times are deterministic and measured ones are medians: a few samples per
 * config are enough to rank them (run measures the winner at length). */
#define TUNE_DEFAULT_WARMUP 1
#define TUNE_DEFAULT_ITERS  5

static const char tune_usage[] =
    "usage: rknn-bench tune [options] [SHAPES.json ...]\n"
    "       rknn-bench tune --list-space [--space FILE] [SHAPES.json ...]\n"
    "\n"
    "Search NPU configs (core masks, thread splits, CBUF banks, K-slices, launch modes)\n"
    "for every shape, verify and time the candidates on the device, and write the tuned\n"
    "kernel JSON a backend reads: the shapes file plus a \"tuned\" and a \"measured\"\n"
    "object per pair (docs/tuned-json.md).\n"
    "\n"
    "shapes:\n"
    "  --shape MxKxN        a shape on the command line (repeatable)\n"
    "  --dtype fp16|int8    dtype of --shape shapes (default fp16)\n"
    "search:\n"
    "  --strategy S         model (default): rank every config by the emulator's timing\n"
    "                       model alone, then verify and time the best --top on the\n"
    "                       device; exhaustive: every config on the device; random:\n"
    "                       --max-evals configs drawn with --seed\n"
    "  --top K              configs the model strategy runs on the device (default 8)\n"
    "  --max-evals N        configs the random strategy runs (default 64)\n"
    "  --space FILE         knob lists to search, replacing or extending the default\n"
    "                       ({\"mode\": \"extend\", \"res\": [\"streamed\"]}, see the docs)\n"
    "  --list-space         print the space (per shape when shapes are given) and exit\n"
    "device and measuring:\n"
    "  --device NAME        auto (default), sim, sim:rocket, rknpu[:PATH] or\n"
    "                       rocket[:PATH]\n"
    "  --threads N          CPU threads of the reference (default: one per CPU)\n"
    "  --warmup N           runs before sampling each config (default 1)\n"
    "  --iters N            samples per config (default 5)\n"
    "  --verify MODE        auto (default), full, sample or none\n"
    "  --seed N             seed of the inputs and of random (default 1)\n"
    "  --data KIND          exact (default) or uniform\n"
    "  --unsafe-skip-validation  NPU: submit programs without checking them first\n"
    "                       (reverse-engineering only; loud, recorded in the output)\n"
    "output:\n"
    "  -o, --output FILE    the tuned JSON (default tuned.json), written atomically\n"
    "  --cache FILE         results so far, JSON Lines (default OUTPUT.cache.jsonl);\n"
    "                       rerunning the same command resumes from it\n"
    "  --quiet              no progress line\n"
    "  --verbose            one line per config evaluated (stderr)\n"
    "\n"
    "Ctrl-C (SIGINT) or SIGTERM stops after the config being measured: results stay in\n"
    "the cache, no tuned JSON is written (exit 130, 143). Exit codes: 0 ok, 1 a shape has no "
    "verified config,\n"
    "2 usage or input error (or a cache from another setup), 3 device error.\n";

enum {
	OPT_SHAPE = 256,
	OPT_DTYPE,
	OPT_DEVICE,
	OPT_THREADS,
	OPT_WARMUP,
	OPT_ITERS,
	OPT_VERIFY,
	OPT_SEED,
	OPT_DATA,
	OPT_STRATEGY,
	OPT_TOP,
	OPT_MAX_EVALS,
	OPT_SPACE,
	OPT_LIST_SPACE,
	OPT_CACHE,
	OPT_QUIET,
	OPT_VERBOSE,
};

static const struct option tune_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"shape", required_argument, NULL, OPT_SHAPE},
    {"dtype", required_argument, NULL, OPT_DTYPE},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"warmup", required_argument, NULL, OPT_WARMUP},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"verify", required_argument, NULL, OPT_VERIFY},
    {"seed", required_argument, NULL, OPT_SEED},
    {"data", required_argument, NULL, OPT_DATA},
    {"strategy", required_argument, NULL, OPT_STRATEGY},
    {"top", required_argument, NULL, OPT_TOP},
    {"max-evals", required_argument, NULL, OPT_MAX_EVALS},
    {"space", required_argument, NULL, OPT_SPACE},
    {"list-space", no_argument, NULL, OPT_LIST_SPACE},
    {"output", required_argument, NULL, 'o'},
    {"cache", required_argument, NULL, OPT_CACHE},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"verbose", no_argument, NULL, OPT_VERBOSE},
    {CLI_UNSAFE_OPT, no_argument, NULL, CLI_UNSAFE_OPT_VAL},
    {NULL, 0, NULL, 0},
};

static int parse_strategy(const char *arg, enum rb_tune_strategy *out)
{
	static const char *const names[] = {"model", "exhaustive", "random"};

	for (int i = 0; i < 3; i++) {
		if (strcmp(arg, names[i]) == 0) {
			*out = (enum rb_tune_strategy)i;
			return 0;
		}
	}
	return rb_error("--strategy '%s' must be model, exhaustive or random", arg);
}

static int parse_int_opt(const char *opt, const char *arg, long min, long max, int *out)
{
	long v;
	int ret = cli_parse_int(opt, arg, min, max, &v);

	*out = (int)v;
	return ret;
}

/* Options that take a count; kept apart so parse_option stays a flat switch. */
static int parse_count(struct rb_tune_opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_THREADS:
		return parse_int_opt("--threads", arg, 1, 1024, &o->engine.threads);
	case OPT_WARMUP:
		return parse_int_opt("--warmup", arg, 0, 1000000, &o->measure.warmup);
	case OPT_ITERS:
		return parse_int_opt("--iters", arg, 1, 1000000, &o->measure.iters);
	case OPT_TOP:
		return cli_parse_int("--top", arg, 1, 1000000, &o->top);
	default: /* OPT_MAX_EVALS */
		return cli_parse_int("--max-evals", arg, 1, 100000000, &o->max_evals);
	}
}

static int parse_named(const char *opt, const char *arg, int ret)
{
	return ret < 0 ? rb_error("%s '%s': %s", opt, arg, rb_last_error()) : 0;
}

static int parse_option(struct rb_tune_opts *o, int c, const char *arg, const char **specs,
			size_t *n_specs, enum rb_dtype *dtype)
{
	switch (c) {
	case OPT_SHAPE:
		specs[(*n_specs)++] = arg;
		return 0;
	case OPT_DTYPE:
		return parse_named("--dtype", arg, rb_dtype_parse(arg, dtype));
	case OPT_DEVICE:
		o->device_name = arg;
		return 0;
	case OPT_VERIFY:
		return parse_named("--verify", arg, rb_verify_mode_parse(arg, &o->verify.mode));
	case OPT_SEED:
		return cli_parse_u64("--seed", arg, &o->seed);
	case OPT_DATA:
		return parse_named("--data", arg, rb_data_kind_parse(arg, &o->data));
	case OPT_STRATEGY:
		return parse_strategy(arg, &o->strategy);
	case OPT_SPACE:
		return rb_tune_space_load_file(&o->space, arg) < 0 ? rb_error("%s", rb_last_error())
								   : 0;
	case OPT_LIST_SPACE:
		o->list_space = true;
		return 0;
	case 'o':
		o->out_path = arg;
		return 0;
	case OPT_CACHE:
		o->cache_path = arg;
		return 0;
	case OPT_QUIET:
		o->quiet = true;
		return 0;
	case OPT_VERBOSE:
		o->verbose = true;
		return 0;
	case CLI_UNSAFE_OPT_VAL:
		cli_unsafe_skip_validation(&o->engine);
		return 0;
	default:
		return parse_count(o, c, arg);
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

static int finish_args(struct rb_tune_opts *o, const char **specs, size_t n_specs,
		       enum rb_dtype dtype)
{
	int ret = cli_load_shapes(&o->shapes, o->files, o->n_files, specs, n_specs, dtype, "tune",
				  o->list_space);

	if (ret == 0 && !o->list_space)
		ret = find_device(o);
	if (ret == 0 && !o->cache_path) {
		snprintf(o->cache_buf, sizeof(o->cache_buf), "%s.cache.jsonl", o->out_path);
		o->cache_path = o->cache_buf;
	}
	return ret;
}

/* --help was printed: not an error, nothing more to do (no exit code is this big). */
#define HELP_SHOWN 1000

/* Parses argv: 0, HELP_SHOWN, or an exit code. */
static int parse_args(struct rb_tune_opts *o, int argc, char **argv)
{
	const char **specs = calloc((size_t)argc + 1, sizeof(*specs));
	enum rb_dtype dtype = RB_DTYPE_FP16;
	size_t n_specs = 0;
	int c, ret = specs ? 0 : -1;

	while (ret == 0 && (c = getopt_long(argc, argv, "ho:", tune_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(tune_usage, stdout);
			ret = -2;
		} else if (c == '?') {
			fputs("see 'rknn-bench tune --help'\n", stderr);
			ret = -1;
		} else {
			ret = parse_option(o, c, optarg, specs, &n_specs, &dtype);
		}
	}
	o->files = argv + optind;
	o->n_files = argc - optind;
	if (ret == 0)
		ret = finish_args(o, specs, n_specs, dtype);
	free(specs);
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

int cmd_tune(int argc, char **argv)
{
	struct rb_tune_opts *o = malloc(sizeof(*o));
	int ret;

	if (!o)
		return cli_fail(RB_EXIT_USAGE, "out of memory");
	tune_opts_init(o);
	ret = parse_args(o, argc, argv);
	if (ret == 0)
		ret = o->list_space ? list_space(o) : tune_main(o);
	rb_shape_list_release(&o->shapes);
	free(o);
	return ret == HELP_SHOWN ? RB_EXIT_OK : ret;
}
