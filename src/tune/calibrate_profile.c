/* The fitted profile (calibrate.h, rb_calib_profile_json): the base profile's document
 * with the fitted numbers and their sources, and the "calibration" object with the
 * reports and every row. The profile document's module for what calibrate writes. */
#include "tune/calibrate.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/version.h"
#include "npu/plan.h"

/* The {"value", "source"} object at a dotted path of the profile document. */
static cJSON *sourced(cJSON *doc, const char *path)
{
	char name[64];
	const char *p = path;
	cJSON *v = doc;

	while (v && *p) {
		size_t n = strcspn(p, ".");

		snprintf(name, sizeof(name), "%.*s", (int)n, p);
		v = cJSON_GetObjectItemCaseSensitive(v, name);
		p += n + (p[n] == '.');
	}
	return cJSON_IsObject(v) ? v : NULL;
}

static int set_number(cJSON *doc, const char *path, double value, const char *source)
{
	cJSON *obj = sourced(doc, path);

	if (!obj)
		return rb_set_error(-EINVAL, "the base profile has no %s", path);
	cJSON_DeleteItemFromObjectCaseSensitive(obj, "value");
	cJSON_DeleteItemFromObjectCaseSensitive(obj, "source");
	if (!cJSON_AddNumberToObject(obj, "value", value) ||
	    !cJSON_AddStringToObject(obj, "source", source))
		return rb_set_error(-ENOMEM, "out of memory");
	return 0;
}

static void describe_source(const struct rb_calib *c, enum rb_calib_param j, size_t n_fields,
			    char *buf, size_t size)
{
	int n = snprintf(buf, size,
			 "fitted by rknn-bench calibrate %s to %zu %s results of %zu reports (host "
			 "'%.60s', driver %s; see calibration.rows)",
			 RB_VERSION, c->n_rows, c->modeled ? "modeled (emulator)" : "measured",
			 c->n_reports, c->host[0] ? c->host : "unknown", c->device);

	if (n_fields > 1 && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n,
			 "; run times only tell their sum (%s), the split is the base "
			 "profile's",
			 rb_calib_param_key(j));
}

static int set_fitted(cJSON *doc, const struct rb_calib *c)
{
	char source[512];
	int ret = 0;

	for (int j = 0; ret == 0 && j < RB_CALIB_PARAMS; j++) {
		const char *paths[RB_CALIB_MAX_FIELDS];
		double values[RB_CALIB_MAX_FIELDS];
		size_t n = rb_calib_param_fields(&c->fitted, (enum rb_calib_param)j, paths, values);

		if (c->held[j])
			continue;
		describe_source(c, (enum rb_calib_param)j, n, source, sizeof(source));
		for (size_t i = 0; ret == 0 && i < n; i++)
			ret = set_number(doc, paths[i], values[i], source);
	}
	return ret;
}

static cJSON *row_json(const struct rb_calib *c, const struct rb_calib_row *r)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "name", r->name);
	rb_json_add_shape(o, &r->shape);
	cJSON_AddStringToObject(o, "plan", r->plan);
	cJSON_AddStringToObject(o, "launch", rb_npu_launch_name(r->launch));
	cJSON_AddStringToObject(o, "report", c->reports[r->report]);
	cJSON_AddNumberToObject(o, "measured_us", r->measured_us);
	cJSON_AddNumberToObject(o, "fitted_us", r->fitted_us);
	cJSON_AddNumberToObject(o, "error_pct", 100 * (r->fitted_us / r->measured_us - 1));
	return o;
}

static cJSON *calibration_json(const struct rb_calib *c)
{
	cJSON *o = cJSON_CreateObject();
	cJSON *reports = cJSON_AddArrayToObject(o, "reports");
	cJSON *fitted = cJSON_AddArrayToObject(o, "fitted");
	cJSON *held = cJSON_AddArrayToObject(o, "held");
	cJSON *rows = cJSON_AddArrayToObject(o, "rows");

	cJSON_AddStringToObject(o, "tool_version", RB_VERSION);
	cJSON_AddBoolToObject(o, "modeled", c->modeled);
	cJSON_AddStringToObject(o, "host", c->host);
	cJSON_AddStringToObject(o, "driver", c->device);
	cJSON_AddStringToObject(o, "base", c->base.label);
	cJSON_AddNumberToObject(o, "rms_error_pct", 100 * c->rms_error);
	cJSON_AddNumberToObject(o, "max_error_pct", 100 * c->max_error);
	for (size_t i = 0; i < c->n_reports; i++)
		cJSON_AddItemToArray(reports, cJSON_CreateString(c->reports[i]));
	for (int j = 0; j < RB_CALIB_PARAMS; j++)
		cJSON_AddItemToArray(
		    c->held[j] ? held : fitted,
		    cJSON_CreateString(rb_calib_param_key((enum rb_calib_param)j)));
	for (size_t i = 0; i < c->n_rows; i++)
		cJSON_AddItemToArray(rows, row_json(c, &c->rows[i]));
	return o;
}

static int set_identity(cJSON *doc, const struct rb_calib *c, const char *name)
{
	const char *status = c->modeled ? "fitted to modeled reports (emulator), not a board"
					: "fitted to board reports by rknn-bench calibrate";

	if (name && (!name[0] || strlen(name) >= sizeof(c->base.name)))
		return rb_set_error(-EINVAL, "--name '%.64s' must be 1 to %zu characters", name,
				    sizeof(c->base.name) - 1);
	if (name)
		cJSON_ReplaceItemInObjectCaseSensitive(doc, "name", cJSON_CreateString(name));
	cJSON_ReplaceItemInObjectCaseSensitive(doc, "status", cJSON_CreateString(status));
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "calibration");
	cJSON_AddItemToObject(doc, "calibration", calibration_json(c));
	return 0;
}

cJSON *rb_calib_profile_json(const struct rb_calib *c, const char *base_json, size_t len,
			     const char *name)
{
	struct rb_soc_profile check;
	cJSON *doc = NULL;
	char *text;
	int ret = rb_json_load(base_json, len, "the base profile", NULL, &doc);

	if (!ret)
		ret = set_fitted(doc, c);
	if (!ret)
		ret = set_identity(doc, c, name);
	if (ret) {
		cJSON_Delete(doc);
		return NULL;
	}
	/* what is written must load as a profile */
	text = cJSON_Print(doc);
	ret = text ? rb_soc_load_string(&check, text, strlen(text), "the fitted profile")
		   : rb_set_error(-ENOMEM, "out of memory");
	free(text);
	if (ret) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}
