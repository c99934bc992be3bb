/* The options of run and tune (cli.h): one table, one parser, one set of limits, and
 * the usage text of both commands generated from the table, so the two cannot drift
 * apart. Options only one command has are in the table too (its `cmds`), parsed by
 * that command from the code the table gives them. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/stats.h"
#include "dev/npu_device.h"
#include "numeric/verify.h"
#include "hw/board.h"
#include "hw/soc.h"
#include "run/engine.h"

#define BOTH (CLI_RUN | CLI_TUNE)

static const struct cli_bench_option {
	const char *name;
	int has_arg;
	int code;
	unsigned cmds;
	const char *section;
	const char *usage; /* "--shape MxKxN"; NULL: "--name" */
	const char *help;  /* lines after the first are indented under it */
} options[] = {
    {"shape", required_argument, CLI_OPT_SHAPE, BOTH, "shapes", "--shape MxKxN",
     "a shape on the command line, e.g. 1x2048x8192 (repeatable)"},
    {"dtype", required_argument, CLI_OPT_DTYPE, BOTH, "shapes", "--dtype fp16|int8",
     "dtype of --shape shapes (default fp16)"},
    {"strategy", required_argument, CLI_OPT_STRATEGY, CLI_TUNE, "search", "--strategy S",
     "model (default): rank every config by the emulator's timing\n"
     "model alone, then verify and time the best --top on the\n"
     "device; exhaustive: every config on the device; random:\n"
     "--max-evals configs drawn with --seed"},
    {"top", required_argument, CLI_OPT_TOP, CLI_TUNE, "search", "--top K",
     "configs the model strategy runs on the device (default 8);\n"
     "on sim only until none left can beat the best verified"},
    {"max-evals", required_argument, CLI_OPT_MAX_EVALS, CLI_TUNE, "search", "--max-evals N",
     "configs the random strategy runs (default 64)"},
    {"space", required_argument, CLI_OPT_SPACE, CLI_TUNE, "search", "--space FILE",
     "knob lists to search, replacing or extending the default\n"
     "({\"mode\": \"extend\", \"res\": [\"streamed\"]}, see the docs)"},
    {"target", required_argument, CLI_OPT_TARGET, CLI_TUNE, "search", "--target T",
     "rknn-bench (default: the space above), rknn-api: only\n"
     "what rknn_matmul_api expresses (single-core contexts, N\n"
     "cut at multiples of 32, blocking threads), or ggml-rknn:\n"
     "the slices of `shapes --for ggml-rknn`, each on its core\n"
     "with the knobs the shim applies; each pair also gets the\n"
     "best rknn-api config and the backend's own split\n"
     "(docs/backend.md)"},
    {"shard", required_argument, CLI_OPT_SHARD, CLI_TUNE, "search", "--shard I/N",
     "tune shard I of N: a deterministic part of the shapes\n"
     "(or, with fewer shapes than shards, of a shape's space);\n"
     "join the shards with `rknn-bench merge` (docs/scale-out.md)"},
    {"shard-plan", required_argument, CLI_OPT_SHARD_PLAN, CLI_TUNE, "search", "--shard-plan N",
     "print which shapes each of N shards takes and the modeled\n"
     "work of each (no device needed) and exit"},
    {"list-space", no_argument, CLI_OPT_LIST_SPACE, CLI_TUNE, "search", NULL,
     "print the space (per shape when shapes are given) and exit"},
    {"weight-copies", no_argument, CLI_OPT_WEIGHT_COPIES, CLI_TUNE, "search", NULL,
     "with --target ggml-rknn: also configs whose B is not\n"
     "librknnrt's native layout (K-slices); the shim then keeps a\n"
     "packed copy of B next to the backend's memory (default: only\n"
     "configs that read B in place, one copy)"},
    {"no-weight-reuse", no_argument, CLI_OPT_NO_WEIGHT_REUSE, CLI_TUNE, "search", NULL,
     "plan no WEIGHT_REUSE (the space's wreuse knob: 0); run and\n"
     "plan take the flag too"},
    {"device", required_argument, CLI_OPT_DEVICE, BOTH, "device", "--device NAME",
     "auto (default: the first NPU node found, rknpu or rocket,\n"
     "else sim), sim (the emulated NPU and kernel driver; times\n"
     "are modeled; also sim:rknpu), sim:rocket (the same behind\n"
     "the emulated mainline rocket kernel), rknpu[:PATH] (e.g.\n"
     "rknpu:/dev/dri/card1), rocket[:PATH] (e.g.\n"
     "rocket:/dev/accel/accel0), cpu (run only: the CPU reference)"},
    {"soc", required_argument, CLI_OPT_SOC, BOTH, "device", "--soc FILE",
     "the hardware profile: sim's timing model and the roofline\n"
     "(default: the built-in profile of the board's memory,\n"
     "configs/soc/rk3588-lpddr4x.json or rk3588-lpddr5.json, for\n"
     "a board the device tree names; else configs/soc/rk3588.json)"},
    {"wait-device", no_argument, CLI_OPT_WAIT_DEVICE, BOTH, "device", "--wait-device",
     "NPU: wait while another rknn-bench process holds the device\n"
     "(default: fail, exit 3; $RKNN_BENCH_SIM_NODE: a sim's node)"},
    {"threads", required_argument, CLI_OPT_THREADS, BOTH, "device", "--threads N",
     "CPU threads for the reference, and for tune's timing model\n"
     "(one engine per thread, at most 16; default: one per CPU)"},
    {"launch", required_argument, CLI_OPT_LAUNCH, CLI_RUN, "device", "--launch MODE",
     "NPU: fences (default: non-blocking submits, one per core),\n"
     "threads (one blocking submit per core per thread) or\n"
     "multicore (one submit for all cores); on rocket: fences = one\n"
     "SUBMIT with a job per core, threads = a SUBMIT per core per\n"
     "thread (no multicore)"},
    {"tuned", required_argument, CLI_OPT_TUNED, CLI_RUN, "device", "--tuned FILE",
     "NPU: each shape with its config from a tuned JSON\n"
     "(rknn-bench tune); overrides --launch and the plan flags"},
    {CLI_UNSAFE_OPT, no_argument, CLI_UNSAFE_OPT_VAL, BOTH, "device", NULL,
     "NPU: submit programs without checking them first\n"
     "(reverse-engineering only; loud, recorded in the output)"},
    {"warmup", required_argument, CLI_OPT_WARMUP, BOTH, "measuring", "--warmup N",
     "runs before sampling (default: run 2, tune 1 per config)"},
    {"iters", required_argument, CLI_OPT_ITERS, BOTH, "measuring", "--iters N",
     "minimum samples (default: run 10, tune 5 per config)"},
    {"min-time", required_argument, CLI_OPT_MIN_TIME, CLI_RUN, "measuring", "--min-time S",
     "minimum seconds of samples per shape (default 0)"},
    {"max-iters", required_argument, CLI_OPT_MAX_ITERS, CLI_RUN, "measuring", "--max-iters N",
     "most samples per shape (default 100000)"},
    {"phase", required_argument, CLI_OPT_PHASE, CLI_RUN, "measuring", "--phase PHASE",
     "all (default: whole runs), or on NPU devices pack (pack A)\n"
     "or submit (submit + wait) alone, exactly --iters times\n"
     "after one full run, timed on the host clock (for perf\n"
     "stat: scripts/perf-stat.sh)"},
    {"perf", no_argument, CLI_OPT_PERF, CLI_RUN, "measuring", NULL,
     "host counters per phase (perf_event_open): task-clock,\n"
     "context switches, page faults; cycles, instructions and\n"
     "cache misses where the CPU exposes them"},
    {"verify", required_argument, CLI_OPT_VERIFY, BOTH, "verification", "--verify MODE",
     "auto (default: full up to M·N·K = 2^30, else sample),\n"
     "full, sample or none"},
    {"no-verify", no_argument, CLI_OPT_NO_VERIFY, CLI_RUN, "verification", NULL,
     "the same as --verify none"},
    {"samples", required_argument, CLI_OPT_SAMPLES, BOTH, "verification", "--samples N",
     "elements checked in sample mode (default 4096)"},
    {"atol", required_argument, CLI_OPT_ATOL, BOTH, "verification", "--atol X, --rtol X",
     "fp16 tolerance |got-exp| <= atol + rtol·|exp| (default 1e-3 each)"},
    {"rtol", required_argument, CLI_OPT_RTOL, BOTH, "verification", "", ""},
    {"seed", required_argument, CLI_OPT_SEED, BOTH, "verification", "--seed N",
     "seed of inputs, of the sample and of random (default 1)"},
    {"data", required_argument, CLI_OPT_DATA, BOTH, "verification", "--data KIND",
     "exact (default: small integers, order-independent sums)\n"
     "or uniform"},
    {"format", required_argument, CLI_OPT_FORMAT, BOTH, "output", "--format FMT",
     "run: table (default), csv, json or md (a Markdown table) on\n"
     "stdout; tune: table (default) or md, the summary"},
    {"output", required_argument, 'o', BOTH, "output", "-o, --output FILE",
     "run: also write the report to FILE, in the format its\n"
     "extension names (.json, .csv, .md; else json) unless\n"
     "--format is given; tune: the tuned JSON (default\n"
     "tuned.json); written atomically; - is stdout"},
    {"export-json", required_argument, CLI_OPT_EXPORT_JSON, CLI_RUN, "output", "--export-json FILE",
     "also write the JSON report to FILE (- is stdout)"},
    {"export-csv", required_argument, CLI_OPT_EXPORT_CSV, CLI_RUN, "output", "--export-csv FILE",
     "also write the CSV report to FILE"},
    {"export-md", required_argument, CLI_OPT_EXPORT_MD, CLI_RUN, "output", "--export-md FILE",
     "also write the Markdown table to FILE"},
    {"filter", required_argument, CLI_OPT_FILTER, BOTH, "shapes", "--filter REGEX",
     "only the pairs whose name matches REGEX (POSIX extended,\n"
     "unanchored), e.g. '^ffn_(up|out)-'"},
    {"cache", required_argument, CLI_OPT_CACHE, CLI_TUNE, "output", "--cache FILE",
     "results so far, JSON Lines (default OUTPUT.cache.jsonl);\n"
     "rerunning the same command resumes from it"},
    {"quiet", no_argument, CLI_OPT_QUIET, BOTH, "output", NULL,
     "no progress or warnings on stderr (errors stay)"},
    {"verbose", no_argument, CLI_OPT_VERBOSE, CLI_TUNE, "output", NULL,
     "one line per config evaluated (stderr)"},
};

#define N_OPTIONS (sizeof(options) / sizeof(options[0]))

static const char *const sections[] = {"shapes",    "search",       "device",
				       "measuring", "verification", "output"};

struct option *cli_bench_options(unsigned cmd)
{
	struct option own[N_OPTIONS + 2], *copy;
	size_t n = 0;

	own[n++] = (struct option){"help", no_argument, NULL, 'h'};
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (options[i].cmds & cmd)
			own[n++] = (struct option){options[i].name, options[i].has_arg, NULL,
						   options[i].code};
	own[n] = (struct option){NULL, 0, NULL, 0};
	if (cmd & CLI_RUN) /* tune's configs come from its space, not from plan flags */
		return cli_plan_options_join(own);
	copy = malloc(sizeof(own));
	return copy ? memcpy(copy, own, sizeof(own)) : NULL;
}

static void print_option(FILE *out, const struct cli_bench_option *o)
{
	char usage[64];
	const char *line = o->help;

	if (!o->usage || *o->usage)
		snprintf(usage, sizeof(usage), "%s", o->usage ? o->usage : "");
	if (!o->usage)
		snprintf(usage, sizeof(usage), "--%s", o->name);
	if (o->usage && !*o->usage)
		return; /* documented with the option before it */
	fprintf(out, "  %-20s", usage);
	if (strlen(usage) > 20) /* a long name: its help starts on the next line */
		fprintf(out, "\n  %-20s", "");
	while (line) {
		const char *nl = strchr(line, '\n');

		fprintf(out, " %.*s\n", nl ? (int)(nl - line) : (int)strlen(line), line);
		line = nl ? nl + 1 : NULL;
		if (line)
			fprintf(out, "  %-20s", "");
	}
}

void cli_bench_usage(FILE *out, unsigned cmd)
{
	for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++) {
		bool any = false;

		for (size_t i = 0; i < N_OPTIONS; i++) {
			if (!(options[i].cmds & cmd) ||
			    strcmp(options[i].section, sections[s]) != 0)
				continue;
			if (!any)
				fprintf(out, "%s:\n", sections[s]);
			any = true;
			print_option(out, &options[i]);
		}
	}
}

static int parse_int(const char *opt, const char *arg, long min, long max, int *out)
{
	long v;
	int ret = cli_parse_int(opt, arg, min, max, &v);

	if (ret == 0)
		*out = (int)v;
	return ret;
}

static int parse_named(const char *opt, const char *arg, int ret)
{
	if (ret < 0)
		return rb_error("%s '%s' is not one of the accepted values; see '--help'", opt,
				arg);
	return 0;
}

/* --soc: the emulator keeps a pointer until the engine is open (it copies it then). */
static int parse_soc(struct rb_engine_opts *engine, const char *path)
{
	static struct rb_soc_profile soc;

	int ret = rb_soc_load_file(&soc, path);

	if (ret < 0)
		return rb_error("--soc: %s%s", rb_last_error(), cli_data_hint(path, ret));
	snprintf(soc.chosen_by, sizeof(soc.chosen_by), "--soc %.180s", path);
	soc.pinned = true; /* its clock, whatever the driver */
	engine->sim.soc = &soc;
	return 0;
}

/* Without --soc: the built-in profile of the board's memory type, else the default
 * (rb_soc_choose); named in every report through chosen_by. */
static int choose_soc(struct rb_engine_opts *engine, const char *device)
{
	static struct rb_soc_profile soc;
	const char *dev = device ? device : "auto", *sysfs = getenv("RKNN_BENCH_SYSFS");

	if (engine->sim.soc)
		return 0;
	if (rb_soc_choose(&soc, rb_board_dt_root()) < 0)
		return rb_error("%s", rb_last_error());
	/* the clock the driver runs the NPU at: a board's kernel's, or mainline's */
	rb_soc_for_driver(&soc, strstr(dev, "rocket") != NULL,
			  strncmp(dev, "sim", 3) == 0 ? NULL
			  : sysfs                     ? sysfs
						      : "/sys");
	engine->sim.soc = &soc;
	return 0;
}

static int parse_measure(struct cli_bench *b, int code, const char *arg)
{
	long v;
	int ret;

	switch (code) {
	case CLI_OPT_THREADS:
		return parse_int("--threads", arg, 1, 1024, &b->engine->threads);
	case CLI_OPT_WARMUP:
		return parse_int("--warmup", arg, 0, 1000000, &b->measure->warmup);
	case CLI_OPT_ITERS:
		return parse_int("--iters", arg, 1, 100000000, &b->measure->iters);
	case CLI_OPT_SAMPLES:
		ret = cli_parse_int("--samples", arg, 1, 1L << 30, &v);
		b->verify->samples = v;
		return ret;
	case CLI_OPT_ATOL:
		return cli_parse_double("--atol", arg, 0, &b->verify->atol);
	case CLI_OPT_RTOL:
		return cli_parse_double("--rtol", arg, 0, &b->verify->rtol);
	default:
		return 1;
	}
}

int cli_bench_option(struct cli_bench *b, int code, const char *arg)
{
	switch (code) {
	case CLI_OPT_SHAPE:
		b->specs[b->n_specs++] = arg;
		return 0;
	case CLI_OPT_DTYPE:
		return parse_named("--dtype", arg, rb_dtype_parse(arg, &b->dtype));
	case CLI_OPT_DEVICE:
		*b->device_name = arg;
		return 0;
	case CLI_OPT_SOC:
		b->soc_path = cli_data_path(arg, "soc");
		return parse_soc(b->engine, b->soc_path);
	case CLI_OPT_WAIT_DEVICE:
		rb_npu_device_set_wait(true); /* dev/npu_device.h: the lock on the node */
		return 0;
	case CLI_OPT_VERIFY:
		return parse_named("--verify", arg, rb_verify_mode_parse(arg, &b->verify->mode));
	case CLI_OPT_SEED:
		return cli_parse_u64("--seed", arg, b->seed);
	case CLI_OPT_DATA:
		return parse_named("--data", arg, rb_data_kind_parse(arg, b->data));
	case 'o':
		*b->out_path = arg;
		return 0;
	case CLI_OPT_FILTER:
		b->filter = arg;
		return 0;
	case CLI_OPT_QUIET:
		cli_quiet = true; /* the same as the global --quiet */
		return 0;
	case CLI_UNSAFE_OPT_VAL:
		cli_unsafe_skip_validation(b->engine);
		return 0;
	default:
		if (code >= CLI_PLAN_OPT_BASE) {
			b->engine->config_given = true; /* no model-guided default then */
			return cli_plan_option(&b->engine->plan, code, arg);
		}
		return parse_measure(b, code, arg);
	}
}

int cli_bench_parse(struct cli_bench *b, unsigned cmd, int argc, char **argv,
		    const struct cli_bench_cmd *own)
{
	struct option *opts = cli_bench_options(cmd);
	int c, ret = 0;

	b->specs = calloc((size_t)argc + 1, sizeof(*b->specs));
	b->n_specs = 0;
	if (!b->specs || !opts)
		ret = rb_error("out of memory");
	while (ret == 0 && (c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		if (c == 'h') {
			own->usage();
			ret = -2;
		} else if (c == '?') {
			fprintf(stderr, "see 'rknn-bench %s --help'\n", own->name);
			ret = -1;
		} else {
			ret = cli_bench_option(b, c, optarg);
			if (ret > 0)
				ret = own->option(own->ctx, c, optarg);
		}
	}
	free(opts);
	if (ret == 0)
		ret = choose_soc(b->engine, *b->device_name);
	return ret;
}
