/* A plan as JSON (plan.h): what `rknn-bench plan --format json` prints, one object
 * per plan with its settings, padded sizes, buffers, totals and per-core tasks. */
#include <stdbool.h>

#include <cJSON.h>

#include "core/version.h"
#include "npu/plan.h"

/* ---- JSON ----------------------------------------------------------------------- */

static bool add_num(cJSON *o, const char *key, double v)
{
	return cJSON_AddNumberToObject(o, key, v) != NULL;
}

static bool json_task(cJSON *array, const struct rb_plan_task *t)
{
	const struct rb_npu_task *n = &t->npu;
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToArray(array, o))
		return cJSON_Delete(o), false;
	return add_num(o, "m0", t->m0) && add_num(o, "m", n->m) && add_num(o, "k0", t->k0) &&
	       add_num(o, "k", n->k) && add_num(o, "n0", t->n0) && add_num(o, "n", n->n) &&
	       add_num(o, "kslice", t->kslice) && add_num(o, "data_banks", n->data_banks) &&
	       add_num(o, "weight_banks", n->weight_banks) && add_num(o, "a_offset", n->a_addr) &&
	       add_num(o, "b_offset", n->b_addr) && add_num(o, "c_offset", n->c_addr) &&
	       add_num(o, "feature_bytes", (double)t->feature_bytes) &&
	       add_num(o, "weight_bytes", (double)t->weight_bytes) &&
	       add_num(o, "output_bytes", (double)t->output_bytes) &&
	       cJSON_AddBoolToObject(o, "streamed", t->streamed) &&
	       cJSON_AddBoolToObject(o, "weight_reuse", n->weight_reuse);
}

static bool json_core(cJSON *array, const struct rb_plan *p, const struct rb_plan_core *c)
{
	cJSON *o = cJSON_CreateObject(), *tasks;
	bool ok;

	if (!o || !cJSON_AddItemToArray(array, o))
		return cJSON_Delete(o), false;
	ok = add_num(o, "core", c->core) &&
	     cJSON_AddStringToObject(o, "axis", rb_plan_axis_name(p->config.axis)) &&
	     add_num(o, "begin", c->begin) && add_num(o, "end", c->end) &&
	     add_num(o, "task_count", (double)c->n_tasks) &&
	     add_num(o, "submits", (double)c->n_submits) &&
	     add_num(o, "feature_bytes", (double)c->feature_bytes) &&
	     add_num(o, "weight_bytes", (double)c->weight_bytes) &&
	     add_num(o, "output_bytes", (double)c->output_bytes);
	tasks = ok ? cJSON_AddArrayToObject(o, "tasks") : NULL;
	for (size_t i = 0; tasks && i < c->n_tasks; i++)
		if (!json_task(tasks, &c->tasks[i]))
			return false;
	return tasks != NULL;
}

static bool json_settings(cJSON *o, const struct rb_plan *p)
{
	const struct rb_plan_config *c = &p->config;
	cJSON *s = cJSON_AddObjectToObject(o, "settings");
	cJSON *w = s ? cJSON_AddArrayToObject(s, "weights") : NULL;

	for (unsigned i = 0; w && i < c->n_weights; i++)
		if (!cJSON_AddItemToArray(w, cJSON_CreateNumber(c->weights[i])))
			return false;
	return w && add_num(s, "core_mask", c->core_mask) &&
	       cJSON_AddStringToObject(s, "axis", rb_plan_axis_name(c->axis)) &&
	       add_num(s, "align", c->align) && add_num(s, "data_banks", c->data_banks) &&
	       add_num(s, "weight_banks", c->weight_banks) && add_num(s, "k_slice", c->k_slice) &&
	       cJSON_AddStringToObject(s, "residency", rb_plan_residency_name(c->residency)) &&
	       cJSON_AddBoolToObject(s, "chain", c->chain) &&
	       cJSON_AddStringToObject(s, "out", rb_plan_out_name(c->out)) &&
	       cJSON_AddBoolToObject(s, "mainline", c->mainline);
}

static bool json_sizes(cJSON *o, const struct rb_plan *p)
{
	cJSON *pad = cJSON_AddObjectToObject(o, "padded");
	cJSON *buf = cJSON_AddObjectToObject(o, "buffers");
	cJSON *tot = cJSON_AddObjectToObject(o, "totals");

	return pad && buf && tot && add_num(pad, "m", p->m) && add_num(pad, "k", p->k_pad) &&
	       add_num(pad, "n", p->n_pad) && add_num(o, "k_slice", p->k_slice) &&
	       add_num(o, "k_slices", p->n_kslices) && add_num(o, "m_cap", p->m_cap) &&
	       add_num(o, "n_cap", p->n_cap) && add_num(buf, "a_bytes", (double)p->a_bytes) &&
	       add_num(buf, "b_bytes", (double)p->b_bytes) &&
	       add_num(buf, "c_cube_bytes", (double)p->c_cube_bytes) &&
	       add_num(buf, "c_bytes", (double)p->c_bytes) &&
	       add_num(tot, "tasks", (double)p->n_tasks) &&
	       add_num(tot, "submits", (double)p->n_submits) &&
	       add_num(tot, "feature_bytes", (double)p->feature_bytes) &&
	       add_num(tot, "weight_bytes", (double)p->weight_bytes) &&
	       add_num(tot, "output_bytes", (double)p->output_bytes) &&
	       add_num(tot, "max_core_bytes", (double)p->max_core_bytes);
}

bool rb_plan_json_add(cJSON *array, const struct rb_plan *p, const char *name)
{
	cJSON *o = cJSON_CreateObject(), *shape, *cores;
	char cfg[256], req[256];

	if (!o || !cJSON_AddItemToArray(array, o))
		return cJSON_Delete(o), false;
	rb_plan_config_format(&p->config, cfg, sizeof(cfg));
	rb_plan_config_format(&p->requested, req, sizeof(req));
	shape = cJSON_AddObjectToObject(o, "shape");
	if (!shape || !cJSON_AddStringToObject(o, "name", name) ||
	    !add_num(shape, "m", (double)p->shape.m) || !add_num(shape, "k", (double)p->shape.k) ||
	    !add_num(shape, "n", (double)p->shape.n) ||
	    !cJSON_AddStringToObject(shape, "dtype", rb_dtype_name(p->shape.dtype)) ||
	    !cJSON_AddStringToObject(o, "out", rb_plan_prec_name(p->out)) ||
	    !cJSON_AddStringToObject(o, "config", cfg) ||
	    !cJSON_AddStringToObject(o, "config_requested", req) || !json_settings(o, p) ||
	    !cJSON_AddBoolToObject(o, "streamed", p->streamed) ||
	    !cJSON_AddBoolToObject(o, "weight_reuse", p->weight_reuse) ||
	    !cJSON_AddBoolToObject(o, "unproven_on_silicon", rb_plan_unproven(p)) ||
	    !json_sizes(o, p))
		return false;
	cores = cJSON_AddArrayToObject(o, "cores");
	for (unsigned i = 0; cores && i < p->n_cores; i++)
		if (!json_core(cores, p, &p->cores[i]))
			return false;
	return cores != NULL;
}

cJSON *rb_plans_json(const struct rb_plan *plans, const struct rb_shape_list *shapes)
{
	cJSON *doc = cJSON_CreateObject(), *ctx, *results;
	bool ok = doc && cJSON_AddStringToObject(doc, "schema", "rknn-bench/1");

	ctx = ok ? cJSON_AddObjectToObject(doc, "context") : NULL;
	ok = ctx && cJSON_AddStringToObject(ctx, "tool_version", RB_VERSION);
	results = ok ? cJSON_AddArrayToObject(doc, "results") : NULL;
	for (size_t i = 0; results && i < shapes->count; i++)
		if (!rb_plan_json_add(results, &plans[i], shapes->entries[i].names[0]))
			results = NULL;
	if (!results) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}
