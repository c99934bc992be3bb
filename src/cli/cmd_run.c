/* rknn-bench run: benchmark and verify the matmuls of shapes files on a device. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "run/measure.h"
#include "tune/tuned_opts.h"
#include "run/plan_model.h"
#include "run/tuned_run.h"
#include "core/debug.h"
#include "run/engine.h"
#include "core/error.h"
#include "dev/info.h"
#include "core/json.h"
#include "core/fileio.h"
#include "numeric/inputs.h"
#include "numeric/ref.h"
#include "core/progress.h"
#include "results/report.h"
#include "core/stats.h"
#include "rknn_bench/shape.h"
#include "hw/soc.h"

#define DEFAULT_SEED 1

struct run_opts {
	struct rb_shape_list shapes;
	const char *device_name;
	const struct rb_engine_ops *device;
	struct rb_engine_opts engine;
	struct rb_measure_opts measure;
	struct rb_verify_opts verify;
	uint64_t seed;
	enum rb_data_kind data;
	struct cli_reports reports; /* stdout, -o, --export-* */
	const char *out_path;
	const char *tuned_path;
	struct rb_tuned_db *tuned; /* --tuned: configs per shape */
	bool perf;                 /* --perf: host counters per phase */
	enum rb_phase phase_only;  /* --phase pack|submit: the phase sampled alone */
};

/* run --tuned FILE: every shape runs with the config the tuned JSON gives it, looked
 * up exactly as a backend does (rknn_bench/tuned.h), so a tuned time can be checked
 * independently of tune. The reader's warnings (keys or launch modes this version does
 * not know) are printed once. */
static int tuned_load(const char *path, struct rb_tuned_db **db)
{
	if (rb_tuned_load_file(db, path) < 0)
		return rb_error("--tuned: %s", rb_last_error());
	for (size_t i = 0; !cli_quiet && i < rb_tuned_warning_count(*db); i++)
		rb_warn("--tuned: %s", rb_tuned_warning(*db, i));
	return 0;
}

/* opts = base, then the tuned config of the entry; says when there is none or only a
 * nearest-M one. 1 when a tuned config applies, 0 when not, -1 on error. */
static int tuned_apply(const struct rb_tuned_db *db, const struct rb_shape_entry *entry,
		       const struct rb_engine_opts *base, struct rb_engine_opts *opts)
{
	const struct rb_shape *s = &entry->shape;
	const struct rb_tuned_config *t;
	enum rb_tuned_match how;

	if (rb_engine_opts_lookup_tuned(opts, base, db, entry, &t, &how) < 0)
		return rb_error("--tuned: %s", rb_last_error());
	if (db && !t && !cli_quiet)
		rb_warn("%s: no tuned config for %lldx%lldx%lld %s: runs with the default",
			entry->names[0], (long long)s->m, (long long)s->k, (long long)s->n,
			rb_dtype_name(s->dtype));
	if (how == RB_TUNED_BUCKET && !cli_quiet)
		rb_warn("%s: using the config tuned for M = %lld (nearest shape)", entry->names[0],
			(long long)t->shape.m);
	return t != NULL;
}

static void run_usage(void)
{
	fputs("usage: rknn-bench run [options] [SHAPES.json ...]\n"
	      "\n"
	      "Benchmark C = A·B for every shape of the shapes files (and --shape) on a device,\n"
	      "verifying each result against the CPU reference before timing it. With --tuned\n"
	      "FILE and neither, the pairs of FILE (a tuned JSON lists its pairs).\n"
	      "\n",
	      stdout);
	cli_bench_usage(stdout, CLI_RUN);
	fputs(cli_plan_usage, stdout);
	fputs("\nOps are counted as 2·M·N·K. Exit codes: 0 ok, 1 a result failed verification,\n"
	      "2 usage or input error, 3 device error, 130/143 stopped by SIGINT/SIGTERM (the\n"
	      "device is released, nothing is reported or written).\n",
	      stdout);
}

static int parse_named(const char *opt, const char *arg, int ret)
{
	if (ret < 0)
		return rb_error("%s '%s' is not one of the accepted values; see 'rknn-bench run "
				"--help'",
				opt, arg);
	return 0;
}

/* The --phase value of a phase sampled alone. */
static const char *phase_option(enum rb_phase phase)
{
	return phase == RB_PHASE_PACK_A ? "pack" : phase == RB_PHASE_SUBMIT ? "submit" : "all";
}

static int parse_phase(const char *arg, enum rb_phase *out)
{
	if (strcmp(arg, "all") == 0)
		*out = RB_PHASE_NONE;
	else if (strcmp(arg, "pack") == 0)
		*out = RB_PHASE_PACK_A;
	else if (strcmp(arg, "submit") == 0)
		*out = RB_PHASE_SUBMIT;
	else
		return -EINVAL;
	return 0;
}

/* The options only run has (the shared ones are cli_bench_option's). */
static int parse_option(struct run_opts *o, int c, const char *arg)
{
	long v;
	int ret;

	switch (c) {
	case CLI_OPT_LAUNCH:
		o->engine.config_given = true;
		return parse_named("--launch", arg, rb_npu_launch_parse(arg, &o->engine.launch));
	case CLI_OPT_MIN_TIME:
		return cli_parse_double("--min-time", arg, 0, &o->measure.min_time_s);
	case CLI_OPT_MAX_ITERS:
		ret = cli_parse_int("--max-iters", arg, 1, 100000000, &v);
		o->measure.max_iters = (int)v;
		return ret;
	case CLI_OPT_FORMAT:
		o->reports.format_given = true;
		return parse_named("--format", arg, rb_format_parse(arg, &o->reports.format));
	case CLI_OPT_EXPORT_JSON:
		return cli_reports_add(&o->reports, "--export-json", arg, RB_FORMAT_JSON);
	case CLI_OPT_EXPORT_CSV:
		return cli_reports_add(&o->reports, "--export-csv", arg, RB_FORMAT_CSV);
	case CLI_OPT_EXPORT_MD:
		return cli_reports_add(&o->reports, "--export-md", arg, RB_FORMAT_MD);
	case CLI_OPT_PERF:
		o->perf = true;
		return 0;
	case CLI_OPT_PHASE:
		return parse_named("--phase", arg, parse_phase(arg, &o->phase_only));
	case CLI_OPT_NO_VERIFY:
		o->verify.mode = RB_VERIFY_NONE;
		return 0;
	case CLI_OPT_TUNED:
		rb_tuned_free(o->tuned); /* the last --tuned wins */
		o->tuned_path = arg;
		return tuned_load(arg, &o->tuned);
	default:
		return rb_error("option code %d is not one of run's", c);
	}
}

static void run_opts_init(struct run_opts *o)
{
	memset(o, 0, sizeof(*o));
	rb_shape_list_init(&o->shapes);
	o->device_name = "auto";
	rb_engine_opts_init(&o->engine);
	rb_measure_opts_init(&o->measure);
	rb_verify_opts_init(&o->verify, RB_DTYPE_FP16);
	o->seed = DEFAULT_SEED;
}

static int own_option(void *ctx, int code, const char *arg)
{
	return parse_option(ctx, code, arg);
}

/* The report files before anything runs: writable, and none of the files the run reads. */
static int check_out(struct run_opts *o, const struct cli_bench *b, const char *const *files,
		     size_t n_files)
{
	const char **inputs = calloc(n_files + 2, sizeof(*inputs));
	int ret;

	if (!inputs)
		return rb_error("out of memory");
	memcpy(inputs, files, n_files * sizeof(*inputs));
	inputs[n_files] = o->tuned_path;
	inputs[n_files + 1] = b->soc_path;
	ret = cli_reports_finish(&o->reports, o->out_path, inputs, n_files + 2);
	free(inputs);
	return ret;
}

/* The shapes files and --shape shapes; with neither, the pairs of the --tuned file (a
 * tuned JSON is a shapes file with more keys), each with its tuned config. */
static int load_shapes(struct run_opts *o, const struct cli_bench *b, char **files, int n_files)
{
	char *tuned_file[1] = {(char *)o->tuned_path};

	if (n_files == 0 && b->n_specs == 0 && o->tuned_path)
		return cli_load_shapes(&o->shapes, tuned_file, 1, NULL, 0, b->dtype, "run", false);
	return cli_load_shapes(&o->shapes, files, n_files, b->specs, b->n_specs, b->dtype, "run",
			       false);
}

/* Parses argv into `o`; returns 0, or an exit code > 0 (help printed: RB_EXIT_OK + 100). */
static int parse_args(struct run_opts *o, int argc, char **argv)
{
	const struct cli_bench_cmd own = {"run", run_usage, own_option, o};
	struct cli_bench b = CLI_BENCH_OF(o);
	int ret = cli_bench_parse(&b, CLI_RUN, argc, argv, &own);

	if (ret == 0)
		ret = check_out(o, &b, (const char *const *)argv + optind, (size_t)(argc - optind));
	if (ret == 0)
		ret = load_shapes(o, &b, argv + optind, argc - optind);
	if (ret == 0)
		ret = cli_filter_shapes(&o->shapes, b.filter);
	if (ret == 0) {
		o->device = cli_find_device(o->device_name, &o->engine);
		ret = o->device ? 0 : -1;
	}
	if (ret == 0 && o->phase_only != RB_PHASE_NONE && o->device->is_reference)
		ret = rb_error("--phase %s: the CPU reference has no such phase; use an NPU "
			       "device (sim, rknpu) or --phase all",
			       phase_option(o->phase_only));
	free(b.specs);
	if (ret == -2)
		return 100 + RB_EXIT_OK;
	return ret < 0 ? RB_EXIT_USAGE : 0;
}

static int run_shape(const struct run_opts *o, struct rb_engine *e,
		     const struct rb_shape_entry *entry, struct rb_result *r,
		     struct rb_progress *progress)
{
	struct rb_shape_measure m = {.measure = &o->measure,
				     .verify = &o->verify,
				     .ref_threads = o->engine.threads,
				     .stop = &cli_stop_signal,
				     .phase_only = o->phase_only};
	int ret = rb_measure_entry(&m, e, entry, o->seed, o->data, r);

	if (ret < 0)
		rb_progress_end(progress); /* the message goes on a line of its own */
	return ret < 0 ? cli_fail(cli_exit_code(ret), "%s", m.reason) : 0;
}

/* ---- progress: a shape is an item, its work 2·M·N·K plus a fixed cost ---- */

#define SHAPE_FIXED_WORK 1e7 /* planning, buffers, a few runs of a tiny shape */

static double shape_work(const struct rb_shape *s)
{
	return 2.0 * (double)s->m * (double)s->k * (double)s->n + SHAPE_FIXED_WORK;
}

static void progress_start(struct rb_progress *p, const struct rb_shape_list *l)
{
	double work = 0;

	for (size_t i = 0; i < l->count; i++)
		work += shape_work(&l->entries[i].shape);
	rb_progress_init(p, stderr, isatty(STDERR_FILENO) != 0, l->count, work, rb_now_us() / 1e6);
}

static void progress_shape(struct rb_progress *p, const struct rb_shape_entry *entry,
			   const char *device)
{
	char label[160];

	snprintf(label, sizeof(label), "%s (%lldx%lldx%lld %s) on %s", entry->names[0],
		 (long long)entry->shape.m, (long long)entry->shape.k, (long long)entry->shape.n,
		 rb_dtype_name(entry->shape.dtype), device);
	rb_progress_item(p, label, shape_work(&entry->shape), rb_now_us() / 1e6);
}

static void progress_result(struct rb_progress *p, const struct rb_result *r)
{
	char text[160];

	snprintf(text, sizeof(text), "%.1f µs%s, %s", r->stats.median_us,
		 r->phase     ? " (one phase, host)"
		 : r->modeled ? " (modeled)"
			      : "",
		 rb_verify_status_name(r->verify.status));
	rb_progress_item_done(p, text, rb_now_us() / 1e6);
}

/* A pair pinned to a config ("config" in the shapes file) runs with it on top of the
 * command line's plan flags, unless a tuned config (run --tuned) applies: that one is
 * complete and wins, as it was tuned for the pair. */
static int run_entry(const struct run_opts *o, struct rb_engine *e,
		     const struct rb_shape_entry *entry, bool tuned, struct rb_result *r,
		     struct rb_progress *progress)
{
	struct rb_plan_config saved = e->opts.plan;
	enum rb_npu_launch saved_launch = e->opts.launch;
	int ret;

	if (entry->config && !tuned && rb_plan_config_parse(&e->opts.plan, entry->config) < 0) {
		rb_progress_end(progress);
		rb_error("%s: config '%s': %s", entry->names[0], entry->config, rb_last_error());
		return RB_EXIT_USAGE;
	}
	/* no config at all: the model-guided default (a refusal is reported by the run) */
	if (!entry->config && !tuned && !e->opts.config_given && !e->ops->is_reference)
		rb_engine_opts_model_default(&e->opts, e->ops, &entry->shape);
	ret = run_shape(o, e, entry, r, progress);
	e->opts.plan = saved;
	e->opts.launch = saved_launch;
	return ret;
}

/* Counters open before the engine, so that its threads are counted (perfctr.h). A
 * stop signal ends the shape being measured (cli_measure.stoppable); the engine is
 * closed either way. */
static int run_all(const struct run_opts *o, struct rb_result **out, char *driver,
		   size_t driver_size)
{
	struct rb_perfctr perf;
	struct rb_engine engine;
	struct rb_progress progress;
	int ret;

	if (o->perf)
		rb_perfctr_open(&perf);
	if (rb_engine_open(&engine, o->device, &o->engine) < 0) {
		rb_error("cannot open device '%s': %s", o->device->name, rb_last_error());
		ret = RB_EXIT_DEVICE;
		goto err_close_perf;
	}
	cli_driver_text(&engine, driver, driver_size);
	engine.perf = o->perf ? &perf : NULL;
	*out = calloc(o->shapes.count, sizeof(**out));
	ret = *out ? 0 : RB_EXIT_DEVICE;
	progress_start(&progress, &o->shapes);
	for (size_t i = 0; ret == 0 && i < o->shapes.count; i++) {
		const struct rb_shape_entry *entry = &o->shapes.entries[i];

		ret = tuned_apply(o->tuned, entry, &o->engine, &engine.opts);
		if (!cli_quiet)
			progress_shape(&progress, entry, o->device->name);
		ret = ret < 0 ? RB_EXIT_USAGE
			      : run_entry(o, &engine, entry, ret == 1, &(*out)[i], &progress);
		if (ret == 0 && !cli_quiet)
			progress_result(&progress, &(*out)[i]);
	}
	if (!cli_quiet)
		rb_progress_end(&progress);
	rb_engine_close(&engine);
err_close_perf:
	if (o->perf)
		rb_perfctr_close(&perf);
	return ret;
}

/* Writes the report files and prints the results; returns the exit code. Nothing is printed when a
 * shape could not be run (ret != 0): a partial report would look like a complete one. */
static int report(const struct run_opts *o, const struct rb_context *ctx,
		  const struct rb_result *results, int ret)
{
	size_t n = o->shapes.count;

	if (ret == 0 && cli_stop_signal) /* after the last shape, before any output */
		ret =
		    cli_fail(128 + cli_stop_signal, "interrupted: nothing is reported or written");
	if (ret == 0)
		ret = cli_reports_write(&o->reports, ctx, results, n);
	if (ret != 0)
		return ret;
	for (size_t i = 0; i < n; i++)
		if (results[i].verify.status == RB_VERIFY_FAILED)
			return RB_EXIT_FAIL;
	return RB_EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	struct run_opts o;
	struct rb_context ctx;
	struct rb_result *results = NULL;
	cJSON *settings = NULL;
	char driver[64] = "";
	int ret;

	run_opts_init(&o);
	ret = parse_args(&o, argc, argv);
	cli_catch_stop(true);
	if (ret == 0) {
		/* The governors and DDR clock the numbers are taken under (info's checks). */
		settings = rb_host_settings_json();
		cli_warn_host_settings(settings, o.device->modeled);
		ret = run_all(&o, &results, driver, sizeof(driver));
	}
	if (results) {
		rb_context_collect(&ctx);
		ctx.settings = settings;
		snprintf(ctx.driver, sizeof(ctx.driver), "%s", driver);
		ctx.unsafe_skip_validation = o.engine.unsafe_skip_validation;
		if (o.device != &rb_engine_cpu && o.engine.sim.soc) {
			ctx.hw_profile = o.engine.sim.soc->label;
			ctx.hw_profile_chosen_by = o.engine.sim.soc->chosen_by;
		}
		ret = report(&o, &ctx, results, ret);
		for (size_t i = 0; i < o.shapes.count; i++)
			rb_result_release(&results[i]);
		free(results);
	}
	cJSON_Delete(settings);
	cli_catch_stop(false);
	rb_shape_list_release(&o.shapes);
	rb_tuned_free(o.tuned);
	return ret == 100 + RB_EXIT_OK ? RB_EXIT_OK : ret; /* 100: --help */
}
