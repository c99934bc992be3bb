/* Calibration from boards (see calibrate.h): report rows, the model of a row through
 * the emulator, the fit, and the fitted profile. */
#include "tune/calibrate.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/compare.h"
#include "core/error.h"
#include "core/lsq.h"
#include "npu/plan.h"
#include "run/engine.h"

/* ---- the parameters ---- */

#define MAX_FIELDS RB_CALIB_MAX_FIELDS

struct param {
	const char *key;
	size_t fields[MAX_FIELDS]; /* offsets of doubles in struct rb_soc_profile */
	size_t n_fields;
	const char *paths[MAX_FIELDS]; /* their profile keys */
};

#define FIELD(f) offsetof(struct rb_soc_profile, f)

static const struct param params[RB_CALIB_PARAMS] = {
    [RB_CALIB_DDR_STREAM] = {"ddr.gbps_per_stream",
			     {FIELD(ddr_stream_gbps)},
			     1,
			     {"ddr.gbps_per_stream"}},
    [RB_CALIB_DDR_CORE] = {"ddr.gbps_per_core", {FIELD(ddr_core_gbps)}, 1, {"ddr.gbps_per_core"}},
    [RB_CALIB_DDR_TOTAL] = {"ddr.gbps_total", {FIELD(ddr_total_gbps)}, 1, {"ddr.gbps_total"}},
    [RB_CALIB_MAC_FP16] = {"mac.fp16_efficiency",
			   {FIELD(fp16_efficiency)},
			   1,
			   {"mac.fp16_efficiency"}},
    [RB_CALIB_MAC_INT8] = {"mac.int8_efficiency",
			   {FIELD(int8_efficiency)},
			   1,
			   {"mac.int8_efficiency"}},
    [RB_CALIB_TASK_FETCH] = {"task.fetch_ns", {FIELD(task_fetch_ns)}, 1, {"task.fetch_ns"}},
    [RB_CALIB_TASK_PIPELINE] = {"task.pipeline_ns",
				{FIELD(task_pipeline_ns)},
				1,
				{"task.pipeline_ns"}},
    [RB_CALIB_SUBMIT_IOCTL] = {"submit.ioctl_ns", {FIELD(submit_ioctl_ns)}, 1, {"submit.ioctl_ns"}},
    [RB_CALIB_SUBMIT_KICK] = {"submit.commit_ns+irq_ns",
			      {FIELD(submit_commit_ns), FIELD(submit_irq_ns)},
			      2,
			      {"submit.commit_ns", "submit.irq_ns"}},
    [RB_CALIB_SUBMIT_WAKE] = {"submit.wake_ns", {FIELD(submit_wake_ns)}, 1, {"submit.wake_ns"}},
};

static double *field(struct rb_soc_profile *soc, size_t off)
{
	return (double *)((char *)soc + off);
}

const char *rb_calib_param_key(enum rb_calib_param p)
{
	return params[p].key;
}

double rb_calib_param_get(const struct rb_soc_profile *soc, enum rb_calib_param p)
{
	double v = 0;

	for (size_t i = 0; i < params[p].n_fields; i++)
		v += *field((struct rb_soc_profile *)soc, params[p].fields[i]);
	return v;
}

void rb_calib_param_set(struct rb_soc_profile *soc, enum rb_calib_param p, double v)
{
	const struct param *q = &params[p];
	double old = rb_calib_param_get(soc, p);

	for (size_t i = 0; i < q->n_fields; i++) {
		double *f = field(soc, q->fields[i]);

		*f = old > 0 ? *f * (v / old) : v / (double)q->n_fields;
	}
}

/* ---- reading reports ---- */

void rb_calib_init(struct rb_calib *c, const struct rb_soc_profile *base)
{
	memset(c, 0, sizeof(*c));
	c->base = *base;
	c->fitted = *base;
}

void rb_calib_release(struct rb_calib *c)
{
	for (size_t i = 0; i < c->n_reports; i++)
		free(c->reports[i]);
	free(c->reports);
	free(c->fingerprints);
	free(c->rows);
	memset(c, 0, sizeof(*c));
}

static void note(struct rb_calib *c, const char *fmt, ...) RB_PRINTF(2, 3);
static void note(struct rb_calib *c, const char *fmt, ...)
{
	va_list ap;

	if (c->n_notes == RB_CALIB_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(c->notes[c->n_notes++], sizeof(c->notes[0]), fmt, ap);
	va_end(ap);
}

/* A config string of results[i], or an error naming it. */
static int config_string(const char *path, size_t i, const char *value, const char *what,
			 const char **out)
{
	*out = value;
	if (!value)
		return rb_set_error(-EINVAL,
				    "%s: results[%zu].config.%s is missing or not a string: "
				    "calibrate needs the report of an NPU device written by "
				    "'rknn-bench run -o'",
				    path, i, what);
	return 0;
}

/* The report's machine and kernel driver must be those of the reports before. */
static int check_same(struct rb_calib *c, const char *path, size_t i, const char *what, char *have,
		      size_t size, const char *got)
{
	if (!c->n_rows) {
		snprintf(have, size, "%s", got);
		return 0;
	}
	if (strcmp(have, got) == 0)
		return 0;
	return rb_set_error(-EINVAL,
			    "%s: results[%zu] has %s '%s' where the reports before have '%s': a "
			    "profile describes one board and one kernel driver, calibrate them "
			    "apart",
			    path, i, what, got, have);
}

static int check_modeled(struct rb_calib *c, const char *path, size_t i, bool modeled)
{
	if (c->n_rows && modeled != c->modeled)
		return rb_set_error(-EINVAL,
				    "%s: results[%zu] is %s where the reports before are %s: "
				    "modeled times (the emulator) and measured ones do not mix",
				    path, i, modeled ? "modeled" : "measured",
				    c->modeled ? "modeled" : "measured");
	c->modeled = modeled;
	return 0;
}

static int add_row(struct rb_calib *c, const char *path, size_t i, const struct rb_compare_entry *e)
{
	const char *plan, *launch, *driver;
	struct rb_calib_row *row = &c->rows[c->n_rows];
	struct rb_plan_config cfg;
	int ret;

	if (strcmp(e->device, "cpu") == 0)
		return rb_set_error(-EINVAL,
				    "%s: results[%zu] ran on 'cpu': calibrate needs NPU results "
				    "(run --device rknpu or rocket)",
				    path, i);
	if (e->verify_failed)
		return rb_set_error(-EINVAL,
				    "%s: results[%zu] failed verification: the time of a wrong "
				    "result cannot calibrate; fix or drop it",
				    path, i);
	if (!(e->median_us > 0))
		return rb_set_error(-EINVAL, "%s: results[%zu].stats.median_us must be above 0",
				    path, i);
	ret = config_string(path, i, e->plan, "plan", &plan);
	if (!ret)
		ret = config_string(path, i, e->launch, "launch", &launch);
	if (!ret)
		ret = config_string(path, i, e->driver, "driver", &driver);
	if (ret)
		return ret;
	rb_plan_config_init(&cfg);
	if (strlen(plan) >= sizeof(row->plan) || rb_plan_config_parse(&cfg, plan))
		return rb_set_error(-EINVAL,
				    "%s: results[%zu].config.plan '%.200s' is not a plan "
				    "config string: %s",
				    path, i, plan, rb_last_error());
	if (rb_npu_launch_parse(launch, &row->launch))
		return rb_set_error(-EINVAL,
				    "%s: results[%zu].config.launch '%.40s' is not a "
				    "launch mode",
				    path, i, launch);
	if (strcmp(driver, "rknpu") != 0 && strcmp(driver, "rocket") != 0)
		return rb_set_error(-EINVAL,
				    "%s: results[%zu].config.driver '%.40s' must be "
				    "rknpu or rocket",
				    path, i, driver);
	ret = check_modeled(c, path, i, e->modeled);
	if (!ret)
		ret = check_same(c, path, i, "driver", c->device, sizeof(c->device), driver);
	if (ret)
		return ret;
	c->rocket = strcmp(driver, "rocket") == 0;
	row->shape = e->shape;
	snprintf(row->name, sizeof(row->name), "%s", e->n_names ? e->names[0] : "");
	snprintf(row->plan, sizeof(row->plan), "%s", plan);
	row->report = c->n_reports;
	row->measured_us = e->median_us;
	c->n_rows++;
	return 0;
}

/* The same evidence twice (a report given again, or a copy of it: same context and
 * results) would count its rows twice and weigh the fit towards them. */
static int check_new_evidence(const struct rb_calib *c, const char *path,
			      const struct rb_compare_report *rep)
{
	for (size_t i = 0; i < c->n_reports; i++)
		if (c->fingerprints[i] == rep->fingerprint)
			return rb_set_error(-EINVAL,
					    "%s: the same results and provenance as '%s': the "
					    "same evidence given twice is not independent; give "
					    "each report once",
					    path, c->reports[i]);
	return 0;
}

static int add_rows(struct rb_calib *c, const char *path, const struct rb_compare_report *rep)
{
	struct rb_calib_row *rows;
	int ret = check_new_evidence(c, path, rep);

	if (ret)
		return ret;
	rows = realloc(c->rows, (c->n_rows + rep->n) * sizeof(*rows));
	if (!rows)
		return rb_set_error(-ENOMEM, "%s: out of memory", path);
	c->rows = rows;
	if (!rep->n)
		return rb_set_error(-EINVAL, "%s: results is empty: nothing to calibrate", path);
	for (size_t i = 0; ret == 0 && i < rep->n; i++) {
		if (i == 0 && rep->host)
			ret = check_same(c, path, i, "context.host", c->host, sizeof(c->host),
					 rep->host);
		if (!ret)
			ret = add_row(c, path, i, &rep->entries[i]);
	}
	/* reports taken with clocks that were not pinned */
	if (!ret && rep->settings_warning)
		note(c,
		     "%s: taken with host settings that were not pinned: %s (docs/boards.md "
		     "section 4)",
		     path, rep->settings_warning);
	return ret;
}

int rb_calib_add_report(struct rb_calib *c, const char *path)
{
	struct rb_compare_report rep;
	size_t rows_before = c->n_rows;
	char **reports = realloc(c->reports, (c->n_reports + 1) * sizeof(*reports));
	uint64_t *prints =
	    reports ? realloc(c->fingerprints, (c->n_reports + 1) * sizeof(*prints)) : NULL;
	int ret;

	if (reports)
		c->reports = reports;
	if (prints)
		c->fingerprints = prints;
	if (!reports || !prints)
		return rb_set_error(-ENOMEM, "%s: out of memory", path);
	ret = rb_compare_load(&rep, path);
	if (ret)
		return ret;
	ret = add_rows(c, path, &rep);
	c->fingerprints[c->n_reports] = rep.fingerprint;
	rb_compare_report_release(&rep);
	if (ret == 0)
		c->reports[c->n_reports] = strdup(path);
	if (ret == 0 && !c->reports[c->n_reports])
		ret = rb_set_error(-ENOMEM, "%s: out of memory", path);
	if (ret) {
		c->n_rows = rows_before;
		return ret;
	}
	c->n_reports++;
	return 0;
}

/* ---- the model of the rows: each plan run through the emulator ---- */

/* The modeled time of every row on `soc`. */
static int model_times(const struct rb_calib *c, const struct rb_soc_profile *soc, double *us)
{
	struct rb_engine_opts opts;
	const struct rb_engine_ops *ops;
	struct rb_engine e;
	int ret;

	rb_engine_opts_init(&opts);
	ops = rb_engine_find(c->rocket ? "sim:rocket" : "sim", &opts);
	if (!ops)
		return -EINVAL;
	opts.sim.model_only = true; /* timing only: no arithmetic */
	/* Each row ran to the end on the board: a candidate profile slow enough that the
	 * vendor's cleanup would drop its jobs is a bad fit, not a run that failed. */
	opts.sim.vendor_cleanup = false;
	opts.sim.soc = soc;
	ret = rb_engine_open(&e, ops, &opts);
	if (ret)
		return ret;
	for (size_t i = 0; ret == 0 && i < c->n_rows; i++) {
		const struct rb_calib_row *row = &c->rows[i];

		ret = rb_engine_model_us(&e, &row->shape, row->plan, row->launch, &us[i]);
		if (ret) {
			char why[512];

			snprintf(why, sizeof(why), "%s",
				 rb_last_error()); /* the buffer is reused */
			ret = rb_set_error(ret, "%s: the model cannot run %s (%s, %s): %s",
					   c->reports[row->report], row->name, row->plan,
					   rb_npu_launch_name(row->launch), why);
		}
	}
	rb_engine_close(&e);
	return ret;
}

/* What the least-squares solver sees: x = log of each fitted parameter, a residual per
 * row = log(modeled / measured), so every row weighs by its relative error. */
struct fit {
	const struct rb_calib *c;
	enum rb_calib_param which[RB_CALIB_PARAMS];
	size_t n;
	struct rb_soc_profile soc;
	double *us;
};

static void apply(struct fit *f, const double *x)
{
	f->soc = f->c->base;
	for (size_t j = 0; j < f->n; j++)
		rb_calib_param_set(&f->soc, f->which[j], exp(x[j]));
}

static int residuals(const double *x, double *r, void *ctx)
{
	struct fit *f = ctx;
	int ret;

	apply(f, x);
	ret = model_times(f->c, &f->soc, f->us);
	for (size_t i = 0; ret == 0 && i < f->c->n_rows; i++)
		r[i] = log(f->us[i] / f->c->rows[i].measured_us);
	return ret;
}

/* Log steps of 1 %: well above the model's 1 ns rounding on the shortest rows. */
#define LOG_STEP 0.01
/* A fit stays within 1/100..100 times the base. */
#define LOG_RANGE 4.6
/* A parameter whose 1 % change moves no row by 0.001 % is not constrained. */
#define MIN_SENSITIVITY 1e-3

static void problem_init(struct rb_lsq_problem *p, struct fit *f, double *lo, double *hi,
			 const double *x)
{
	memset(p, 0, sizeof(*p));
	p->n_params = f->n;
	p->n_rows = f->c->n_rows;
	p->residuals = residuals;
	p->ctx = f;
	p->step = LOG_STEP;
	p->tol = 1e-6;
	p->max_iter = 60;
	for (size_t j = 0; j < f->n; j++) {
		lo[j] = x[j] - LOG_RANGE;
		hi[j] = x[j] + LOG_RANGE;
	}
	p->lo = lo;
	p->hi = hi;
}

/* The parameters to fit: every one with a base above 0 (a 0 cannot be scaled). */
static void choose(struct rb_calib *c, struct fit *f, double *x)
{
	f->n = 0;
	for (int j = 0; j < RB_CALIB_PARAMS; j++) {
		double v = rb_calib_param_get(&c->base, (enum rb_calib_param)j);

		c->held[j] = !(v > 0);
		if (!c->held[j]) {
			f->which[f->n] = (enum rb_calib_param)j;
			x[f->n++] = log(v);
		}
	}
}

/* A parameter no row moves at the solution goes back to its base and is held: a kink
 * of the model (a bandwidth limit that binds nowhere) leaves it undetermined. Asked at
 * the solution, not at the start, because which limits bind depends on the others. */
static int hold_unconstrained(struct rb_calib *c, struct fit *f, double *x)
{
	double lo[RB_CALIB_PARAMS], hi[RB_CALIB_PARAMS], norms[RB_CALIB_PARAMS];
	struct rb_lsq_problem p;
	size_t fitted = 0;
	int ret;

	problem_init(&p, f, lo, hi, x);
	ret = rb_lsq_sensitivity(&p, x, norms);
	for (size_t j = 0; ret == 0 && j < f->n; j++) {
		if (norms[j] >= MIN_SENSITIVITY) {
			fitted++;
			continue;
		}
		c->held[f->which[j]] = true;
		x[j] = log(rb_calib_param_get(&c->base, f->which[j]));
	}
	if (ret == 0 && c->n_rows < fitted)
		ret = rb_set_error(-EINVAL,
				   "%zu results cannot fit %zu parameters: make the calibration "
				   "runs of docs/boards.md section 6",
				   c->n_rows, fitted);
	return ret;
}

/* The spread of every fitted parameter at the solution (calibrate.h), on the problem
 * of the fitted ones alone. */
static int measure_spread(struct rb_calib *c, const struct fit *f, const double *x)
{
	double lo[RB_CALIB_PARAMS], hi[RB_CALIB_PARAMS], x2[RB_CALIB_PARAMS];
	double spread[RB_CALIB_PARAMS];
	struct fit f2 = *f;
	struct rb_lsq_problem p;
	int ret;

	f2.n = 0;
	for (size_t j = 0; j < f->n; j++) {
		c->spread[f->which[j]] = 0;
		if (c->held[f->which[j]])
			continue;
		f2.which[f2.n] = f->which[j];
		x2[f2.n++] = x[j];
	}
	if (!f2.n)
		return 0;
	problem_init(&p, &f2, lo, hi, x2);
	ret = rb_lsq_spread(&p, x2, 0.01, spread);
	for (size_t j = 0; ret == 0 && j < f2.n; j++)
		c->spread[f2.which[j]] = spread[j];
	return ret;
}

/* 5 significant digits, the double nearest their decimal form: what the profile file
 * keeps, printed as written. */
static double round_sig(double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%.5g", v);
	return strtod(buf, NULL);
}

static int finish(struct rb_calib *c, struct fit *f)
{
	int ret;
	double sq = 0;

	for (size_t j = 0; j < f->n; j++)
		for (size_t i = 0; i < params[f->which[j]].n_fields; i++) {
			double *v = field(&f->soc, params[f->which[j]].fields[i]);

			*v = round_sig(*v);
		}
	c->fitted = f->soc;
	ret = model_times(c, &c->fitted, f->us);
	c->max_error = 0;
	for (size_t i = 0; ret == 0 && i < c->n_rows; i++) {
		double e = f->us[i] / c->rows[i].measured_us - 1;

		c->rows[i].fitted_us = f->us[i];
		sq += e * e;
		c->max_error = fmax(c->max_error, fabs(e));
	}
	c->rms_error = sqrt(sq / (double)c->n_rows);
	return ret;
}

/* A fit the model cannot make close is no profile: refused, naming its worst row. */
static int check_error(const struct rb_calib *c)
{
	const struct rb_calib_row *worst = &c->rows[0];

	if (c->rms_error <= RB_CALIB_MAX_RMS_ERROR)
		return 0;
	for (size_t i = 1; i < c->n_rows; i++)
		if (fabs(c->rows[i].fitted_us / c->rows[i].measured_us - 1) >
		    fabs(worst->fitted_us / worst->measured_us - 1))
			worst = &c->rows[i];
	return rb_set_error(-EINVAL,
			    "the fit's rms error is %.1f %% (%s of %s: %.1f µs measured, "
			    "%.1f µs fitted), above the %.0f %% a profile may have: the model "
			    "cannot reproduce these reports (docs/reliability.md); no profile "
			    "written",
			    100 * c->rms_error, worst->name, c->reports[worst->report],
			    worst->measured_us, worst->fitted_us, 100 * RB_CALIB_MAX_RMS_ERROR);
}

int rb_calib_fit(struct rb_calib *c)
{
	double x[RB_CALIB_PARAMS], lo[RB_CALIB_PARAMS], hi[RB_CALIB_PARAMS];
	struct fit f = {.c = c};
	struct rb_lsq_problem p;
	struct rb_lsq_result res = {0};
	int ret = 0;

	if (!c->n_rows)
		return rb_set_error(-EINVAL, "no results to calibrate");
	f.us = calloc(c->n_rows, sizeof(double));
	if (!f.us)
		return rb_set_error(-ENOMEM, "out of memory");
	choose(c, &f, x);
	if (f.n) {
		problem_init(&p, &f, lo, hi, x);
		ret = rb_lsq_fit(&p, x, &res);
		c->iterations = res.iterations;
		if (ret == 0)
			ret = hold_unconstrained(c, &f, x);
		if (ret == 0)
			ret = measure_spread(c, &f, x);
	}
	if (ret == 0) {
		apply(&f, x);
		ret = finish(c, &f);
	}
	free(f.us);
	return ret ? ret : check_error(c);
}

/* ---- the profile's fields of a parameter (calibrate_profile.c writes them) ---- */

size_t rb_calib_param_fields(const struct rb_soc_profile *soc, enum rb_calib_param p,
			     const char **paths, double *values)
{
	for (size_t i = 0; i < params[p].n_fields; i++) {
		paths[i] = params[p].paths[i];
		values[i] = *field((struct rb_soc_profile *)soc, params[p].fields[i]);
	}
	return params[p].n_fields;
}
