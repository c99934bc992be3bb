/* rknn-bench run: benchmark and verify the matmuls of shapes files on a device. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "run/plan_model.h"
#include "run/run_text.h"
#include "tune/tuned_opts.h"
#include "run/measure.h"
#include "run/tuned_run.h"
#include "dev/info.h"
#include "core/progress.h"

struct run_opts {
	struct cli_bench b; /* the options run shares with tune */
	int format;         /* --format, an enum rb_format */
	bool format_given;
	const char *export_json, *export_csv, *export_md;
	const char *tuned_path;
	struct rb_tuned_db *tuned;  /* --tuned: configs per shape */
	bool perf;                  /* --perf: host counters per phase */
	int phase;                  /* --phase: all, pack or submit, sampled alone */
	struct cli_reports reports; /* stdout, -o, --export-* */
	struct rb_shape_list shapes;
	const struct rb_engine_ops *device;
	enum rb_phase phase_only;
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

static void run_init(void *opts)
{
	struct run_opts *o = opts;

	cli_bench_init(&o->b);
	rb_shape_list_init(&o->shapes);
}

static void run_release(void *opts)
{
	struct run_opts *o = opts;

	rb_shape_list_release(&o->shapes);
	rb_tuned_free(o->tuned);
	free(o->b.specs.items);
}

static int set_option(const struct cli_opt *opt, void *group, const char *arg)
{
	struct run_opts *o = group;

	if (strcmp(opt->name, "format") == 0) {
		o->format_given = true;
		return rb_format_parse(arg, (enum rb_format *)&o->format);
	}
	if (strcmp(opt->name, "no-verify") == 0) {
		o->b.verify.mode = RB_VERIFY_NONE;
		return 0;
	}
	if (strcmp(opt->name, "launch") == 0) {
		o->b.engine.config_given = true;
		return rb_npu_launch_parse(arg, &o->b.engine.launch);
	}
	rb_tuned_free(o->tuned); /* --tuned: the last one wins */
	o->tuned = NULL;
	o->tuned_path = arg;
	return tuned_load(arg, &o->tuned);
}

/* The shapes files and --shape shapes; with neither, the pairs of the --tuned file (a
 * tuned JSON is a shapes file with more keys), each with its tuned config. */
static int load_shapes(struct run_opts *o, const struct cli_args *a)
{
	char *tuned_file[1] = {(char *)o->tuned_path};

	if (a->n == 0 && o->b.specs.n == 0 && o->tuned_path)
		return cli_load_shapes(&o->shapes, tuned_file, 1, NULL, NULL, o->b.dtype, "run",
				       false);
	return cli_load_shapes(&o->shapes, a->v, a->n, NULL, &o->b.specs, o->b.dtype, "run", false);
}

static int add_reports(struct run_opts *o)
{
	struct cli_reports *r = &o->reports;
	enum rb_format format = RB_FORMAT_JSON; /* what -o has always written */

	r->format = (enum rb_format)o->format;
	r->format_given = o->format_given;
	if (o->b.out_path && !o->format_given)
		rb_format_of_path(o->b.out_path, &format);
	if (cli_reports_add(r, "-o", o->b.out_path, o->format_given ? r->format : format) < 0 ||
	    cli_reports_add(r, "--export-json", o->export_json, RB_FORMAT_JSON) < 0 ||
	    cli_reports_add(r, "--export-csv", o->export_csv, RB_FORMAT_CSV) < 0 ||
	    cli_reports_add(r, "--export-md", o->export_md, RB_FORMAT_MD) < 0)
		return -1;
	return cli_reports_check(r);
}

static int run_prepare(void *opts, const struct cli_args *a, struct cli_paths *p)
{
	struct run_opts *o = opts;
	int ret = cli_bench_finish(&o->b);

	(void)p;
	o->b.engine.config_given |= cli_plan_flags_given;
	o->phase_only = o->phase == 1   ? RB_PHASE_PACK_A
			: o->phase == 2 ? RB_PHASE_SUBMIT
					: RB_PHASE_NONE;
	if (ret == 0)
		ret = add_reports(o);
	if (ret == 0)
		ret = load_shapes(o, a);
	if (ret == 0)
		ret = cli_filter_shapes(&o->shapes, o->b.filter);
	if (ret == 0) {
		o->device = cli_find_device(o->b.device_name, &o->b.engine);
		ret = o->device ? 0 : -1;
	}
	if (ret == 0 && o->phase_only != RB_PHASE_NONE && o->device->is_reference)
		ret = rb_error("--phase %s: the CPU reference has no such phase; use an NPU "
			       "device (sim, rknpu) or --phase all",
			       o->phase == 1 ? "pack" : "submit");
	return ret < 0 ? RB_EXIT_USAGE : 0;
}

static int run_shape(const struct run_opts *o, struct rb_engine *e,
		     const struct rb_shape_entry *entry, struct rb_result *r,
		     struct rb_progress *progress)
{
	struct rb_shape_measure m = {.measure = &o->b.measure,
				     .verify = &o->b.verify,
				     .ref_threads = o->b.engine.threads,
				     .stop = &cli_stop_signal,
				     .phase_only = o->phase_only};
	int ret = rb_measure_entry(&m, e, entry, o->b.seed, o->b.data, r);

	if (ret < 0)
		rb_progress_end(progress); /* the message goes on a line of its own */
	return ret < 0 ? cli_fail(cli_exit_code(ret), "%s", m.reason) : 0;
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
	if (rb_engine_open(&engine, o->device, &o->b.engine) < 0) {
		rb_error("cannot open device '%s': %s", o->device->name, rb_last_error());
		ret = RB_EXIT_DEVICE;
		goto err_close_perf;
	}
	rb_engine_driver_text(&engine, driver, driver_size);
	engine.perf = o->perf ? &perf : NULL;
	*out = calloc(o->shapes.count, sizeof(**out));
	ret = *out ? 0 : RB_EXIT_DEVICE;
	rb_run_progress_start(&progress, stderr, &o->shapes);
	for (size_t i = 0; ret == 0 && i < o->shapes.count; i++) {
		const struct rb_shape_entry *entry = &o->shapes.entries[i];

		ret = tuned_apply(o->tuned, entry, &o->b.engine, &engine.opts);
		if (!cli_quiet)
			rb_run_progress_shape(&progress, entry, o->device->name);
		ret = ret < 0 ? RB_EXIT_USAGE
			      : run_entry(o, &engine, entry, ret == 1, &(*out)[i], &progress);
		if (ret == 0 && !cli_quiet)
			rb_run_progress_result(&progress, &(*out)[i]);
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

static int run_run(void *opts, const struct cli_args *a)
{
	struct run_opts *o = opts;
	struct rb_context ctx;
	struct rb_result *results = NULL;
	cJSON *settings = rb_host_settings_json();
	char driver[64] = "";
	int ret;

	(void)a;
	/* The governors and DDR clock the numbers are taken under (info's checks). */
	cli_warn_host_settings(settings, o->device->modeled);
	cli_catch_stop(true);
	ret = run_all(o, &results, driver, sizeof(driver));
	if (results) {
		rb_context_collect(&ctx);
		ctx.settings = settings;
		snprintf(ctx.driver, sizeof(ctx.driver), "%s", driver);
		ctx.unsafe_skip_validation = o->b.engine.unsafe_skip_validation;
		if (o->device != &rb_engine_cpu && o->b.engine.sim.soc) {
			ctx.hw_profile = o->b.engine.sim.soc->label;
			ctx.hw_profile_chosen_by = o->b.engine.sim.soc->chosen_by;
		}
		ret = report(o, &ctx, results, ret);
		for (size_t i = 0; i < o->shapes.count; i++)
			rb_result_release(&results[i]);
		free(results);
	}
	cJSON_Delete(settings);
	cli_catch_stop(false);
	return ret;
}

#define R(field) offsetof(struct run_opts, field)

static const struct cli_opt run_opts[] = {
    {"launch", 0, CLI_ENUM, "MODE", "fences|threads|multicore", .set = set_option,
     .section = CLI_SEC_DEVICE,
     .help = "NPU: fences (default: non-blocking submits, one per core),\n"
	     "threads (one blocking submit per core per thread) or\n"
	     "multicore (one submit for all cores); on rocket: fences = one\n"
	     "SUBMIT with a job per core, threads = a SUBMIT per core per\n"
	     "thread (no multicore)"},
    {"tuned", 0, CLI_CALL, "FILE", .offset = R(tuned_path), .set = set_option, .path = CLI_IN,
     .section = CLI_SEC_DEVICE,
     .help = "NPU: each shape with its config from a tuned JSON\n"
	     "(rknn-bench tune); overrides --launch and the plan flags"},
    {"min-time", 0, CLI_DOUBLE, "S", .offset = R(b.measure.min_time_s),
     .section = CLI_SEC_MEASURING, .help = "minimum seconds of samples per shape (default 0)"},
    {"max-iters", 0, CLI_INT, "N", .offset = R(b.measure.max_iters), .min = 1, .max = 100000000,
     .section = CLI_SEC_MEASURING, .help = "most samples per shape (default 100000)"},
    {"phase", 0, CLI_ENUM, "PHASE", "all|pack|submit", R(phase), .section = CLI_SEC_MEASURING,
     .help = "all (default: whole runs), or on NPU devices pack (pack A)\n"
	     "or submit (submit + wait) alone, exactly --iters times\n"
	     "after one full run, timed on the host clock (for perf\n"
	     "stat: scripts/perf-stat.sh)"},
    {"perf", 0, CLI_BOOL, .offset = R(perf), .section = CLI_SEC_MEASURING,
     .help = "host counters per phase (perf_event_open): task-clock,\n"
	     "context switches, page faults; cycles, instructions and\n"
	     "cache misses where the CPU exposes them"},
    {"no-verify", 0, CLI_CALL, .set = set_option, .section = CLI_SEC_VERIFICATION,
     .help = "the same as --verify none"},
    {"format", 0, CLI_ENUM, "FMT", "table|csv|json|md", R(format), .set = set_option,
     .section = CLI_SEC_OUTPUT,
     .help = "table (default), csv, json or md (a Markdown table) on stdout"},
    {"export-json", 0, CLI_STR, "FILE", .offset = R(export_json), .path = CLI_OUT,
     .section = CLI_SEC_OUTPUT, .help = "also write the JSON report to FILE (- is stdout)"},
    {"export-csv", 0, CLI_STR, "FILE", .offset = R(export_csv), .path = CLI_OUT,
     .section = CLI_SEC_OUTPUT, .help = "also write the CSV report to FILE"},
    {"export-md", 0, CLI_STR, "FILE", .offset = R(export_md), .path = CLI_OUT,
     .section = CLI_SEC_OUTPUT, .help = "also write the Markdown table to FILE"},
    {NULL},
};

const struct cli_command cli_cmd_run = {
    .name = "run",
    .summary = "benchmark and verify the matmuls of shapes files on a device",
    .synopsis = "[options] [SHAPES.json ...]",
    .about = "Benchmark C = A·B for every shape of the shapes files (and --shape) on a device,\n"
	     "verifying each result against the CPU reference before timing it. With --tuned\n"
	     "FILE and neither, the pairs of FILE (a tuned JSON lists its pairs).\n",
    .notes = "Ops are counted as 2·M·N·K. Exit codes: 0 ok, 1 a result failed verification,\n"
	     "2 usage or input error (or an output that cannot be written), 3 device error,\n"
	     "130/143 stopped by SIGINT/SIGTERM (the device is released, nothing is reported\n"
	     "or written).\n",
    .groups = {CLI_BENCH_GROUP(struct run_opts, b), CLI_GROUP(run_opts, 0),
	       CLI_PLAN_GROUP(struct run_opts, b.engine.plan)},
    .pos = {{"SHAPES.json", CLI_IN, 0, -1}},
    .size = sizeof(struct run_opts),
    .init = run_init,
    .prepare = run_prepare,
    .run = run_run,
    .release = run_release,
};
