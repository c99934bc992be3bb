/* A comparison as JSON (compare.h): what `compare --format json` prints. */
#include <math.h>

#include <cJSON.h>

#include "core/json.h"
#include "results/compare.h"

/* Undefined numbers are null (README "Output"). */
static void add_number(cJSON *obj, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(obj, key, v);
	else
		cJSON_AddNullToObject(obj, key);
}

static const char *test_name(enum rb_compare_test test)
{
	static const char *const names[] = {
	    [RB_TEST_NONE] = "none",
	    [RB_TEST_EXACT] = "exact",
	    [RB_TEST_MWU] = "mann-whitney-u",
	    [RB_TEST_THRESHOLD] = "threshold",
	};

	return names[test];
}

static void add_side(cJSON *obj, const char *key, const struct rb_compare_entry *e)
{
	cJSON *side;

	if (!e) {
		cJSON_AddNullToObject(obj, key);
		return;
	}
	side = cJSON_AddObjectToObject(obj, key);
	cJSON_AddStringToObject(side, "device", e->device);
	cJSON_AddBoolToObject(side, "modeled", e->modeled);
	cJSON_AddNumberToObject(side, "median_us", e->median_us);
	cJSON_AddNumberToObject(side, "samples", (double)e->n_samples);
	cJSON_AddBoolToObject(side, "verify_failed", e->verify_failed);
}

static cJSON *row_json(const struct rb_compare_row *row)
{
	const struct rb_compare_entry *e = row->base ? row->base : row->new_;
	cJSON *r = cJSON_CreateObject(), *shape;

	cJSON_AddStringToObject(r, "name", row->name);
	shape = cJSON_AddObjectToObject(r, "shape");
	rb_json_add_shape(shape, &e->shape);
	add_side(r, "base", row->base);
	add_side(r, "new", row->new_);
	add_number(r, "change_pct", row->change * 100);
	cJSON_AddStringToObject(r, "verdict", rb_verdict_name(row->verdict));
	cJSON_AddStringToObject(r, "test", test_name(row->test));
	add_number(r, "u", row->u);
	add_number(r, "p", row->p);
	cJSON_AddBoolToObject(r, "verify_failed", row->verify_failed);
	return r;
}

cJSON *rb_compare_json(const struct rb_compare *cmp, const char *base_path, const char *new_path,
		       const struct rb_compare_opts *opts)
{
	cJSON *doc = cJSON_CreateObject(), *rows, *sum;

	cJSON_AddStringToObject(doc, "schema", RB_COMPARE_SCHEMA);
	cJSON_AddStringToObject(doc, "base", base_path);
	cJSON_AddStringToObject(doc, "new", new_path);
	cJSON_AddNumberToObject(doc, "threshold_pct", opts->threshold_pct);
	cJSON_AddNumberToObject(doc, "alpha", opts->alpha);
	rows = cJSON_AddArrayToObject(doc, "rows");
	for (size_t i = 0; i < cmp->n_rows; i++)
		cJSON_AddItemToArray(rows, row_json(&cmp->rows[i]));
	sum = cJSON_AddObjectToObject(doc, "summary");
	cJSON_AddNumberToObject(sum, "matched", (double)cmp->matched);
	cJSON_AddNumberToObject(sum, "regressions", (double)cmp->regressions);
	cJSON_AddNumberToObject(sum, "improvements", (double)cmp->improvements);
	cJSON_AddNumberToObject(sum, "only_in_base", (double)cmp->only_base);
	cJSON_AddNumberToObject(sum, "only_in_new", (double)cmp->only_new);
	add_number(sum, "geomean_change_pct", cmp->geomean_change * 100);
	return doc;
}
