/* The JSON report (report.h): {"schema": "rknn-bench/1", "context": {...},
 * "results": [...]} with raw samples; undefined statistics are null. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/util.h"
#include "results/report_format.h"
#include "results/totals.h"

/* ---- JSON -------------------------------------------------------------------- */

/* Adds a number, or null when it is undefined (NaN, inf). */
static bool add_num(cJSON *o, const char *key, double v)
{
	if (!isfinite(v))
		return cJSON_AddNullToObject(o, key) != NULL;
	return cJSON_AddNumberToObject(o, key, v) != NULL;
}

static bool push_num(cJSON *array, double v)
{
	cJSON *item = isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();

	if (item && cJSON_AddItemToArray(array, item))
		return true;
	cJSON_Delete(item);
	return false;
}

static bool add_str(cJSON *o, const char *key, const char *s)
{
	return cJSON_AddStringToObject(o, key, s ? s : "") != NULL;
}

/* "hw_profile": {"label", "chosen_by"}, or null on a device without one. */
static bool json_hw_profile(cJSON *o, const struct rb_context *ctx)
{
	cJSON *p;

	if (!ctx->hw_profile)
		return cJSON_AddNullToObject(o, "hw_profile") != NULL;
	p = cJSON_AddObjectToObject(o, "hw_profile");
	return p && add_str(p, "label", ctx->hw_profile) &&
	       add_str(p, "chosen_by", ctx->hw_profile_chosen_by ? ctx->hw_profile_chosen_by : "");
}

static bool add_str_or_null(cJSON *o, const char *key, const char *s)
{
	if (!s || !*s)
		return cJSON_AddNullToObject(o, key) != NULL;
	return add_str(o, key, s);
}

static bool context_fields(cJSON *o, const struct rb_context *ctx)
{
	if (ctx->settings &&
	    !cJSON_AddItemToObject(o, "host_settings", cJSON_Duplicate(ctx->settings, true)))
		return false;
	if (!json_hw_profile(o, ctx))
		return false;
	return add_str(o, "tool_version", ctx->tool_version) &&
	       add_str(o, "tool_commit", ctx->tool_commit) && add_str(o, "host", ctx->host) &&
	       add_str(o, "cpu", ctx->cpu) && add_str_or_null(o, "board", ctx->board) &&
	       add_str(o, "kernel", ctx->kernel) && add_str_or_null(o, "driver", ctx->driver) &&
	       add_str(o, "date", ctx->date) && add_num(o, "cpu_count", ctx->cpu_count) &&
	       cJSON_AddBoolToObject(o, "unsafe_skip_validation", ctx->unsafe_skip_validation);
}

cJSON *rb_context_json(const struct rb_context *ctx)
{
	cJSON *o = cJSON_CreateObject();

	if (o && ctx && !context_fields(o, ctx)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static bool json_context(cJSON *doc, const struct rb_context *ctx)
{
	cJSON *o = rb_context_json(ctx);

	if (o && cJSON_AddItemToObject(doc, "context", o))
		return true;
	cJSON_Delete(o);
	return false;
}

static bool json_shape(cJSON *res, const struct rb_result *r)
{
	cJSON *o = cJSON_AddObjectToObject(res, "shape");
	cJSON *names = cJSON_AddArrayToObject(res, "names");
	cJSON *s;
	size_t i;

	if (!o || !names || !add_num(o, "m", (double)r->shape.m) ||
	    !add_num(o, "k", (double)r->shape.k) || !add_num(o, "n", (double)r->shape.n) ||
	    !add_str(o, "dtype", rb_dtype_name(r->shape.dtype)))
		return false;
	for (i = 0; r->names && i < r->n_names; i++) {
		s = cJSON_CreateString(r->names[i]);
		if (!s || !cJSON_AddItemToArray(names, s)) {
			cJSON_Delete(s);
			return false;
		}
	}
	return true;
}

/* "roofline": null on devices without a hardware profile (the CPU). */
static bool json_roofline(cJSON *res, const struct rb_result *r)
{
	struct rb_roofline rl;
	cJSON *o;

	if (!rb_result_roofline(r, &rl))
		return cJSON_AddNullToObject(res, "roofline") != NULL;
	o = cJSON_AddObjectToObject(res, "roofline");
	return o && add_num(o, "intensity_flop_per_byte", rl.intensity) &&
	       add_num(o, "peak_gflops", rl.peak_gflops) && add_num(o, "ddr_gbps", rl.ddr_gbps) &&
	       add_num(o, "attainable_gflops", rl.attainable_gflops) &&
	       add_str(o, "bound", rl.memory_bound ? "memory" : "compute") &&
	       add_num(o, "peak_pct", rl.peak_pct) && add_num(o, "ddr_pct", rl.ddr_pct);
}

static bool json_stats(cJSON *res, const struct rb_stats *s, int batch)
{
	cJSON *o = cJSON_AddObjectToObject(res, "stats");
	cJSON *samples;
	size_t i;

	if (!o || !add_num(o, "median_us", s->median_us) || !add_num(o, "min_us", s->min_us) ||
	    !add_num(o, "mean_us", s->mean_us) || !add_num(o, "stddev_us", s->stddev_us) ||
	    !add_num(o, "cv", s->cv) || !add_num(o, "mad_us", s->mad_us) ||
	    !add_num(o, "p90_us", s->p90_us))
		return false;
	samples = cJSON_AddArrayToObject(o, "samples_us");
	if (!samples)
		return false;
	for (i = 0; s->samples_us && i < s->n; i++)
		if (!push_num(samples, s->samples_us[i]))
			return false;
	return add_num(o, "outliers", (double)s->outliers) &&
	       add_num(o, "batch", batch > 0 ? batch : 1);
}

static bool json_mismatch(cJSON *array, const struct rb_mismatch *mm)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToArray(array, o)) {
		cJSON_Delete(o);
		return false;
	}
	return add_num(o, "i", (double)mm->i) && add_num(o, "j", (double)mm->j) &&
	       add_num(o, "expected", mm->expected) && add_num(o, "got", mm->got);
}

static bool json_verify(cJSON *res, const struct rb_verify_result *v)
{
	cJSON *o = cJSON_AddObjectToObject(res, "verify");
	cJSON *first;
	int i;

	if (!o || !add_str(o, "status", rb_verify_status_name(v->status)) ||
	    !add_str(o, "mode", rb_verify_mode_name(v->mode)) ||
	    !add_num(o, "max_abs", v->max_abs) || !add_num(o, "max_rel", v->max_rel) ||
	    !add_num(o, "mismatches", (double)v->mismatches) ||
	    !add_num(o, "checked", (double)v->checked))
		return false;
	first = cJSON_AddArrayToObject(o, "first_mismatches");
	if (!first)
		return false;
	for (i = 0; i < v->n_reported && i < RB_VERIFY_MAX_REPORTED; i++)
		if (!json_mismatch(first, &v->first[i]))
			return false;
	return true;
}

static bool json_config(cJSON *res, const cJSON *config)
{
	cJSON *copy = config ? cJSON_Duplicate(config, true) : cJSON_CreateObject();

	if (copy && cJSON_AddItemToObject(res, "config", copy))
		return true;
	cJSON_Delete(copy);
	return false;
}

static bool json_perf(cJSON *res, const struct rb_perf *perf)
{
	cJSON *o = perf ? rb_perf_json(perf) : NULL;

	if (!perf)
		return true;
	if (o && cJSON_AddItemToObject(res, "perf", o))
		return true;
	cJSON_Delete(o);
	return false;
}

static bool json_result(cJSON *results, const struct rb_result *r)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToArray(results, o)) {
		cJSON_Delete(o);
		return false;
	}
	return json_shape(o, r) && add_str(o, "device", r->device) &&
	       cJSON_AddBoolToObject(o, "modeled", r->modeled) && json_config(o, r->config) &&
	       json_stats(o, &r->stats, r->batch) && add_num(o, "setup_us", r->setup_us) &&
	       add_num(o, "gflops", rb_result_gflops(r)) && add_num(o, "gbps", rb_result_gbps(r)) &&
	       add_num(o, "gbps_b", rb_result_gbps_b(r)) && json_roofline(o, r) &&
	       json_verify(o, &r->verify) && add_str(o, "reproducer", r->reproducer) &&
	       (!r->phase || add_str(o, "phase", r->phase)) && json_perf(o, r->perf);
}

/* "totals": per model, the sum over every pair per M (results/totals.h). */
static bool json_totals(cJSON *doc, const struct rb_result *results, size_t n)
{
	struct rb_total t[RB_TOTALS_MAX];
	size_t groups = rb_report_totals(results, n, t);
	cJSON *array = rb_totals_json(t, groups);

	return array && cJSON_AddItemToObject(doc, "totals", array);
}

cJSON *rb_report_json(const struct rb_context *ctx, const struct rb_result *results, size_t n)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *array;
	size_t i;

	if (!doc || !add_str(doc, "schema", RB_SCHEMA) || !json_context(doc, ctx))
		goto err_delete;
	array = cJSON_AddArrayToObject(doc, "results");
	if (!array)
		goto err_delete;
	for (i = 0; i < n; i++)
		if (!json_result(array, &results[i]))
			goto err_delete;
	if (!json_totals(doc, results, n))
		goto err_delete;
	return doc;

err_delete:
	cJSON_Delete(doc);
	return NULL;
}

int rb_report_write_json(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
			 size_t n)
{
	cJSON *doc = rb_report_json(ctx, results, n);
	int ret = doc ? rb_json_write(out, doc) : -ENOMEM;

	cJSON_Delete(doc);
	if (ret == -ENOMEM)
		return rb_set_error(ret, "out of memory building the JSON report");
	return ret < 0 ? rb_set_error(ret, "cannot write the JSON report") : 0;
}
