/* The tuned kernel JSON (docs/tuned-json.md): the input shapes files, pair for pair in
 * their order and with every key they had, plus per pair a "tuned" and a "measured"
 * object, so the backend's reader of mat_kernel_size.json reads it unchanged. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune/search.h"
#include "core/error.h"
#include "core/fileio.h"
#include "core/json.h"
#include "results/report.h"
#include "core/version.h"
#include "dev/info.h"
#include "hw/soc.h"
#include "rknn_bench/tuned.h"

void rb_tune_reproducer(const struct rb_tune_opts *o, const struct rb_shape *s,
			const struct rb_tune_point *p, char *buf, size_t size)
{
	snprintf(buf, size,
		 "rknn-bench run --device %s%s%s --shape %lldx%lldx%lld --dtype %s --seed %llu "
		 "--data %s --verify %s --launch %s --config '%s'",
		 o->device->name, o->engine.path ? ":" : "", o->engine.path ? o->engine.path : "",
		 (long long)s->m, (long long)s->k, (long long)s->n, rb_dtype_name(s->dtype),
		 (unsigned long long)o->seed, rb_data_kind_name(o->data),
		 rb_verify_mode_name(o->verify.mode), rb_npu_launch_name(p->launch), p->text);
}

/* A number, or null when it is not finite (undefined statistics are null). */
static cJSON *add_num(cJSON *o, const char *key, double v)
{
	return isfinite(v) ? cJSON_AddNumberToObject(o, key, v) : cJSON_AddNullToObject(o, key);
}

static cJSON *ranges_json(const struct rb_plan *plan)
{
	cJSON *a = cJSON_CreateArray();

	for (unsigned i = 0; a && i < plan->n_cores; i++) {
		const struct rb_plan_core *c = &plan->cores[i];
		cJSON *r = cJSON_CreateObject();

		cJSON_AddItemToArray(a, r);
		cJSON_AddNumberToObject(r, "core", c->core);
		cJSON_AddNumberToObject(r, "begin", c->begin);
		cJSON_AddNumberToObject(r, "end", c->end);
		cJSON_AddNumberToObject(r, "tasks", (double)c->n_tasks);
	}
	return a;
}

static cJSON *split_json(const struct rb_plan *plan)
{
	const struct rb_plan_config *c = &plan->config;
	cJSON *s = cJSON_CreateObject();
	cJSON *w;

	cJSON_AddStringToObject(s, "axis", rb_plan_axis_name(c->axis));
	w = cJSON_AddArrayToObject(s, "weights");
	for (unsigned i = 0; w && i < c->n_weights; i++)
		cJSON_AddItemToArray(w, cJSON_CreateNumber(c->weights[i]));
	cJSON_AddNumberToObject(s, "align", c->align);
	cJSON_AddItemToObject(s, "ranges", ranges_json(plan));
	return s;
}

static cJSON *tasks_json(const struct rb_plan *plan)
{
	cJSON *a = cJSON_CreateArray();

	for (unsigned i = 0; a && i < plan->n_cores; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)plan->cores[i].n_tasks));
	return a;
}

/* The winner, re-planned: the planner's choices (banks, K-slice, ranges) made explicit. */
static cJSON *tuned_json(const struct rb_tune_opts *o, const struct rb_tune_best *b)
{
	struct rb_tune_point planned = b->point;
	const struct rb_plan_config *c;
	struct rb_plan plan;
	char repro[768];
	cJSON *t;

	if (rb_plan_init(&plan, &b->shape, &b->point.plan) < 0)
		return NULL;
	c = &plan.config;
	t = cJSON_CreateObject();
	rb_plan_config_format(c, planned.text, sizeof(planned.text));
	cJSON_AddStringToObject(t, "config", planned.text);
	cJSON_AddStringToObject(t, "launch", rb_npu_launch_name(b->point.launch));
	cJSON_AddNumberToObject(t, "core_mask", c->core_mask);
	cJSON_AddItemToObject(t, "split", split_json(&plan));
	cJSON_AddNumberToObject(t, "data_banks", c->data_banks);
	cJSON_AddNumberToObject(t, "weight_banks", c->weight_banks);
	cJSON_AddStringToObject(t, "residency", rb_plan_residency_name(c->residency));
	cJSON_AddBoolToObject(t, "chain", c->chain);
	cJSON_AddNumberToObject(t, "k_slice", plan.k_slice);
	cJSON_AddNumberToObject(t, "k_slices", plan.n_kslices);
	cJSON_AddStringToObject(t, "out", rb_plan_out_name(c->out));
	cJSON_AddItemToObject(t, "tasks_per_core", tasks_json(&plan));
	cJSON_AddNumberToObject(t, "submits", (double)plan.n_submits);
	cJSON_AddBoolToObject(t, "unproven_on_silicon", rb_plan_unproven(&plan));
	add_num(t, "host_us", b->host_us);
	rb_tune_reproducer(o, &b->shape, &planned, repro, sizeof(repro));
	cJSON_AddStringToObject(t, "reproducer", repro);
	rb_plan_release(&plan);
	return t;
}

/* The CPU reference, timed on the host tune ran on. Only a measured device's time over
 * it is a headline number (measured.speedup_vs_cpu): a modeled NPU time over this
 * host's CPU (an x86 VM, not the board's Cortex-A76) is not a board number, so it stays
 * in cpu_reference, labelled with the host. */
static void add_cpu(cJSON *m, const struct rb_tune_run *t, const struct rb_context *ctx,
		    const struct rb_tune_best *b, double median_us)
{
	cJSON *c = cJSON_AddObjectToObject(m, "cpu_reference");

	if (!t->device.ops->modeled) {
		add_num(m, "cpu_us", b->cpu_us);
		add_num(m, "speedup_vs_cpu", b->cpu_us / median_us);
	}
	cJSON_AddStringToObject(c, "host", ctx->host);
	cJSON_AddStringToObject(c, "cpu", ctx->cpu);
	add_num(c, "cpu_us", b->cpu_us);
	add_num(c, "speedup", b->cpu_us / median_us);
	if (t->device.ops->modeled)
		cJSON_AddStringToObject(c, "note",
					"a modeled NPU time over this host's CPU time: not a "
					"board number");
}

/* The host part of a config's cost, phase by phase, and where the numbers come from. */
static cJSON *host_json(const struct rb_shape *shape, const struct rb_tune_point *p)
{
	struct rb_tune_host h = {NAN, NAN, NAN};
	struct rb_plan plan;
	cJSON *o = cJSON_CreateObject();

	if (rb_plan_init(&plan, shape, &p->plan) == 0) {
		rb_tune_host_model(&plan, &h);
		rb_plan_release(&plan);
	}
	cJSON_AddBoolToObject(o, "modeled", true);
	cJSON_AddStringToObject(o, "model", RB_TUNE_HOST_MODEL);
	cJSON_AddStringToObject(o, "cpu", "Cortex-A76 (the board's), not the host tune ran on");
	add_num(o, "pack_a_us", h.pack_a_us);
	add_num(o, "unpack_us", h.unpack_us);
	add_num(o, "kslice_sums_us", h.kslice_us);
	return o;
}

/* The device part and the host part apart, and their sum: what the search ranked. */
static void add_parts(cJSON *m, const struct rb_tune_best *b)
{
	double total = rb_tune_best_total_us(b), def = rb_tune_default_total_us(b);

	add_num(m, "device_us", b->found ? b->median_us : NAN);
	add_num(m, "host_us", b->found ? b->host_us : NAN);
	cJSON_AddItemToObject(m, "host",
			      b->found ? host_json(&b->shape, &b->point) : cJSON_CreateNull());
	add_num(m, "total_us", total);
	add_num(m, "default_us", b->default_us);
	add_num(m, "default_host_us", b->default_host_us);
	add_num(m, "default_total_us", def);
	add_num(m, "speedup_vs_default", def / total);
	add_num(m, "backend_split_us", rb_tune_backend_total_us(b));
	add_num(m, "speedup_vs_backend", rb_tune_backend_total_us(b) / total);
}

static cJSON *measured_json(const struct rb_tune_run *t, const struct rb_context *ctx,
			    const struct rb_tune_best *b)
{
	struct rb_result r = {.shape = b->shape};
	cJSON *m = cJSON_CreateObject();

	r.stats.median_us = b->found ? b->median_us : NAN;
	cJSON_AddStringToObject(m, "device", t->device.ops->name);
	cJSON_AddBoolToObject(m, "modeled", t->device.ops->modeled);
	add_num(m, "median_us", r.stats.median_us);
	add_num(m, "gflops", rb_result_gflops(&r));
	add_num(m, "gbps", rb_result_gbps(&r));
	add_num(m, "gbps_b", rb_result_gbps_b(&r));
	add_parts(m, b);
	add_cpu(m, t, ctx, b, r.stats.median_us);
	cJSON_AddStringToObject(m, "verify", b->found ? b->verify : "failed");
	cJSON_AddStringToObject(m, "strategy", rb_tune_strategy_name(t->o->strategy));
	cJSON_AddNumberToObject(m, "configs_in_space", (double)b->n_space);
	cJSON_AddNumberToObject(m, "configs_modeled", (double)b->n_model);
	cJSON_AddNumberToObject(m, "configs_run", (double)b->n_run);
	cJSON_AddNumberToObject(m, "configs_failed", (double)b->n_failed);
	cJSON_AddNumberToObject(m, "configs_not_run", (double)b->n_settled);
	if (t->work && b->found) { /* merge breaks ties between slices as one tune would */
		cJSON_AddNumberToObject(m, "config_index", (double)b->point.index);
		cJSON_AddBoolToObject(m, "default_won", b->default_won);
	}
	return m;
}

/* rknn_matmul_api's names of our dtypes (rknn_matmul_type, seed 004). */
static const char *api_type(enum rb_dtype dtype)
{
	return dtype == RB_DTYPE_INT8 ? "RKNN_INT8_MM_INT8_TO_INT32"
				      : "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32";
}

/* The contexts a backend creates: one per core with work, its range of N (the planner's
 * last range ends at N padded to the kernel group: a context ends at N). */
static cJSON *contexts_json(const struct rb_plan *plan, int64_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (unsigned i = 0; a && i < plan->n_cores; i++) {
		const struct rb_plan_core *c = &plan->cores[i];
		int64_t end = c->end < n ? c->end : n;
		cJSON *ctx;

		if (c->begin >= end)
			continue;
		ctx = cJSON_CreateObject();
		cJSON_AddItemToArray(a, ctx);
		cJSON_AddNumberToObject(ctx, "core", c->core);
		cJSON_AddNumberToObject(ctx, "n_begin", c->begin);
		cJSON_AddNumberToObject(ctx, "n_end", (double)end);
	}
	return a;
}

/* A point's config as planned: no auto value left. */
static const char *planned_text(const struct rb_shape *shape, const struct rb_tune_point *p,
				char *buf, size_t size)
{
	struct rb_plan plan;

	snprintf(buf, size, "%s", p->text);
	if (rb_plan_init(&plan, shape, &p->plan) < 0)
		return buf;
	rb_plan_config_format(&plan.config, buf, size);
	rb_plan_release(&plan);
	return buf;
}

/* The backend as it is: its own split, measured like the rest (null with why when it
 * was not: the backend cannot create the pair, or the config failed). */
static void add_backend(cJSON *o, const struct rb_tune_best *b, double api_total)
{
	double total = rb_tune_backend_total_us(b);
	char text[192];
	cJSON *s;

	add_num(o, "backend_split_us", total);
	add_num(o, "gain_vs_backend", total / api_total);
	if (!b->backend.found) {
		cJSON_AddNullToObject(o, "backend_split");
		cJSON_AddStringToObject(o, "backend_split_note",
					b->backend.tried ? b->backend.reason
							 : "not measured by this tune (a shard's)");
		return;
	}
	s = cJSON_AddObjectToObject(o, "backend_split");
	cJSON_AddStringToObject(s, "config",
				planned_text(&b->shape, &b->backend.point, text, sizeof(text)));
	cJSON_AddStringToObject(s, "launch", rb_npu_launch_name(b->backend.point.launch));
	add_num(s, "device_us", b->backend.median_us);
	add_num(s, "host_us", b->backend.point.host_us);
	add_num(s, "total_us", total);
}

/* The best config rknn_matmul_api can express, in its terms (docs/tuned-json.md),
 * next to the best overall and the backend's own split. */
static cJSON *api_json(const struct rb_tune_best *b)
{
	struct rb_plan plan;
	char text[192];
	cJSON *o, *contexts;

	if (!b->api.found || rb_plan_init(&plan, &b->shape, &b->api.point.plan) < 0)
		return NULL;
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "type", api_type(b->shape.dtype));
	cJSON_AddNumberToObject(o, "B_layout", 1);  /* native weights, as the seed passes them */
	cJSON_AddNumberToObject(o, "AC_layout", 1); /* A and C in the perf layout, likewise */
	contexts = contexts_json(&plan, b->shape.n);
	cJSON_AddNumberToObject(o, "threads", cJSON_GetArraySize(contexts));
	cJSON_AddItemToObject(o, "contexts", contexts);
	rb_plan_config_format(&plan.config, text, sizeof(text));
	cJSON_AddStringToObject(o, "config", text);
	cJSON_AddStringToObject(o, "launch", rb_npu_launch_name(b->api.point.launch));
	add_num(o, "median_us", b->api.median_us);
	add_num(o, "host_us", b->api.point.host_us);
	add_num(o, "total_us", rb_tune_api_total_us(b));
	add_num(o, "best_overall_us", rb_tune_best_total_us(b));
	add_num(o, "best_overall_speedup", rb_tune_api_total_us(b) / rb_tune_best_total_us(b));
	add_backend(o, b, rb_tune_api_total_us(b));
	rb_plan_release(&plan);
	return o;
}

/* ---- pairs ---- */

static int64_t dim_of(const cJSON *pair, const char *src, const char *key)
{
	const cJSON *v =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pair, src), key);

	return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : -1;
}

/* The shape-list entry of a pair: its name at its M, K and N (a name recurs at other
 * batch sizes; the shapes loader allows no other repeat). */
static long entry_of(const struct rb_shape_list *l, const char *name, const cJSON *pair)
{
	int64_t m = dim_of(pair, "src0", "row"), k = dim_of(pair, "src0", "col");
	int64_t n = dim_of(pair, "src1", "col");

	for (size_t i = 0; i < l->count; i++) {
		const struct rb_shape *s = &l->entries[i].shape;

		if (s->m != m || s->k != k || s->n != n)
			continue;
		for (size_t j = 0; j < l->entries[i].n_names; j++)
			if (strcmp(l->entries[i].names[j], name) == 0)
				return (long)i;
	}
	return -1;
}

static void annotate(const struct rb_tune_run *t, const struct rb_context *ctx,
		     const struct rb_tune_best *best, cJSON *pair)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(pair, "name");
	long i = cJSON_IsString(name) ? entry_of(&t->o->shapes, name->valuestring, pair) : -1;
	const struct rb_tune_best *b = i >= 0 ? &best[i] : NULL;
	cJSON *tuned, *api;

	if (!b || b->other_shard)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(pair, "tuned");
	cJSON_DeleteItemFromObjectCaseSensitive(pair, "measured");
	cJSON_DeleteItemFromObjectCaseSensitive(pair, "rknn_matmul_api");
	tuned = b->found ? tuned_json(t->o, b) : NULL;
	api = api_json(b);
	cJSON_AddItemToObject(pair, "tuned", tuned ? tuned : cJSON_CreateNull());
	cJSON_AddItemToObject(pair, "measured", measured_json(t, ctx, b));
	cJSON_AddItemToObject(pair, "rknn_matmul_api", api ? api : cJSON_CreateNull());
}

static cJSON *spec_pair(const struct rb_shape_entry *e, size_t name)
{
	cJSON *p = cJSON_CreateObject();
	cJSON *s0 = cJSON_AddObjectToObject(p, "src0"), *s1 = cJSON_AddObjectToObject(p, "src1");

	cJSON_AddNumberToObject(s0, "row", (double)e->shape.m);
	cJSON_AddNumberToObject(s0, "col", (double)e->shape.k);
	cJSON_AddNumberToObject(s1, "row", (double)e->shape.k);
	cJSON_AddNumberToObject(s1, "col", (double)e->shape.n);
	cJSON_AddStringToObject(p, "name", e->names[name]);
	cJSON_AddStringToObject(p, "dtype", rb_dtype_name(e->shape.dtype));
	return p;
}

static bool has_pair(const cJSON *pairs, const char *name, const struct rb_shape *s)
{
	for (const cJSON *p = pairs->child; p; p = p->next) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(p, "name");

		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0 &&
		    dim_of(p, "src0", "row") == s->m && dim_of(p, "src0", "col") == s->k &&
		    dim_of(p, "src1", "col") == s->n)
			return true;
	}
	return false;
}

/* Pairs of one more input file; their dtype made explicit when the file set one. */
static void append_file_pairs(cJSON *pairs, const cJSON *root)
{
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "dtype");
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(root, "pairs");

	for (const cJSON *p = cJSON_IsArray(src) ? src->child : NULL; p; p = p->next) {
		cJSON *copy = cJSON_Duplicate(p, true);

		if (cJSON_IsString(dt) && !cJSON_GetObjectItemCaseSensitive(copy, "dtype"))
			cJSON_AddStringToObject(copy, "dtype", dt->valuestring);
		cJSON_AddItemToArray(pairs, copy);
	}
}

/* Input file i as tune read it; without the kept text, read again (and refused if it
 * no longer parses: it changed while tuning). */
static cJSON *read_json(const struct rb_tune_opts *o, int i)
{
	const struct rb_text *t = o->file_texts ? &o->file_texts[i] : NULL;
	char why[512];
	cJSON *root;

	if (t && t->data) {
		rb_json_load(t->data, t->len, o->files[i], RB_JSON_EMPTY_SHAPES, &root);
		return root;
	}
	if (rb_json_load_file(o->files[i], 0, RB_JSON_EMPTY_SHAPES, &root) < 0) {
		snprintf(why, sizeof(why), "%s", rb_last_error()); /* the buffer is reused */
		rb_set_error(-EINVAL, "changed while tuning: %s", why);
	}
	return root;
}

/* The first file is the base (its top-level keys are kept); later files and --shape
 * specs add their pairs. */
static cJSON *input_pairs(const struct rb_tune_opts *o, cJSON **base)
{
	cJSON *pairs;

	*base = o->n_files ? read_json(o, 0) : cJSON_CreateObject();
	if (!*base)
		return NULL;
	pairs = cJSON_DetachItemFromObjectCaseSensitive(*base, "pairs");
	if (!cJSON_IsArray(pairs)) {
		cJSON_Delete(pairs);
		pairs = cJSON_CreateArray();
	}
	for (int i = 1; i < o->n_files; i++) {
		cJSON *root = read_json(o, i);

		if (!root)
			return cJSON_Delete(pairs), NULL;
		append_file_pairs(pairs, root);
		cJSON_Delete(root);
	}
	for (size_t i = 0; i < o->shapes.count; i++)
		for (size_t j = 0; j < o->shapes.entries[i].n_names; j++)
			if (!has_pair(pairs, o->shapes.entries[i].names[j],
				      &o->shapes.entries[i].shape))
				cJSON_AddItemToArray(pairs, spec_pair(&o->shapes.entries[i], j));
	return pairs;
}

/* ---- the document ---- */

/* The search settings besides strategy and target that decide which configs run. */
static const char *search_text(const struct rb_tune_opts *o, char *buf, size_t size)
{
	snprintf(buf, size, "top=%ld max_evals=%ld", o->top, o->max_evals);
	return buf;
}

/* "hw_profile": the hardware profile the tune ran with and how it was chosen (soc.h). */
static void add_hw_profile(const struct rb_tune_run *t, cJSON *doc)
{
	const struct rb_soc_profile *soc = t->o->engine.sim.soc;
	cJSON *o;

	if (!soc) {
		cJSON_AddNullToObject(doc, "hw_profile");
		return;
	}
	o = cJSON_AddObjectToObject(doc, "hw_profile");
	if (!o)
		return;
	cJSON_AddStringToObject(o, "label", soc->label);
	cJSON_AddStringToObject(o, "chosen_by", soc->chosen_by);
}

static void top_fields(const struct rb_tune_run *t, const struct rb_context *ctx, cJSON *doc)
{
	char limits[64];

	cJSON_AddStringToObject(doc, "schema", RB_TUNED_SCHEMA);
	cJSON_AddStringToObject(doc, "tool_version", RB_VERSION);
	cJSON_AddStringToObject(doc, "device", t->device.ops->name);
	cJSON_AddBoolToObject(doc, "modeled", t->device.ops->modeled);
	cJSON_AddStringToObject(doc, "driver", t->header.driver);
	cJSON_AddStringToObject(doc, "soc", t->header.soc);
	add_hw_profile(t, doc);
	cJSON_AddStringToObject(doc, "generated", ctx->date);
	cJSON_AddStringToObject(doc, "strategy", rb_tune_strategy_name(t->o->strategy));
	cJSON_AddStringToObject(doc, "target", rb_tune_target_name(t->o->target));
	cJSON_AddBoolToObject(doc, "unsafe_skip_validation", t->o->engine.unsafe_skip_validation);
	cJSON_AddStringToObject(doc, "space", t->header.space);
	cJSON_AddStringToObject(doc, "measure", t->header.measure);
	cJSON_AddStringToObject(doc, "search", search_text(t->o, limits, sizeof(limits)));
	cJSON_AddItemToObject(doc, "context", rb_context_json(ctx)); /* provenance, as run's */
}

/* Per model: the default config, the tuned ones and the best rknn_matmul_api ones. */
/* A graph pair's slowest slice so far: the pair's name and M, and that time. */
struct slice_group {
	const char *of;
	int64_t m;
	double us;
};

/* Folds one slice into its pair's group (a new one at groups[*n]); false when it has no
 * "slice.of". */
static bool fold_slice(const struct rb_tune_run *t, const struct rb_tune_best *best,
		       enum rb_tune_which which, const cJSON *pair, struct slice_group *groups,
		       size_t *n)
{
	const cJSON *of =
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(pair, "slice"), "of");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(pair, "name");
	long i = cJSON_IsString(name) ? entry_of(&t->o->shapes, name->valuestring, pair) : -1;
	int64_t m = dim_of(pair, "src0", "row");
	double us;
	size_t g = 0;

	if (!cJSON_IsString(of) || i < 0)
		return false;
	us = rb_tune_which_us(&best[i], which);
	while (g < *n && !(groups[g].m == m && strcmp(groups[g].of, of->valuestring) == 0))
		g++;
	if (g == *n)
		groups[(*n)++] = (struct slice_group){of->valuestring, m, us};
	else if (!(groups[g].us >= us)) /* NAN (a slice without a time) spreads */
		groups[g].us = us;
	return true;
}

size_t rb_tune_slice_totals(const struct rb_tune_run *t, const struct rb_tune_best *best,
			    enum rb_tune_which which, struct rb_total *out)
{
	cJSON *base = NULL, *pairs = input_pairs(t->o, &base);
	size_t n_pairs = (size_t)cJSON_GetArraySize(pairs), n = 0, sums = 0;
	struct slice_group *groups = calloc(n_pairs ? n_pairs : 1, sizeof(*groups));
	struct rb_total_pair *items = calloc(n_pairs ? n_pairs : 1, sizeof(*items));

	for (const cJSON *p = pairs && groups ? pairs->child : NULL; p; p = p->next)
		fold_slice(t, best, which, p, groups, &n);
	for (size_t g = 0; items && g < n; g++)
		items[g] = (struct rb_total_pair){groups[g].of, groups[g].m, groups[g].us};
	if (items && n)
		sums = rb_totals_sum_pairs(items, n, out, RB_TOTALS_MAX);
	free(items);
	free(groups);
	cJSON_Delete(pairs);
	cJSON_Delete(base);
	return sums;
}

/* ggml-rknn slices: the totals per graph pair, each its slowest slice. */
static void add_slice_totals(cJSON *o, const struct rb_tune_run *t, const struct rb_tune_best *best)
{
	static const enum rb_tune_which which[] = {RB_TUNE_BACKEND, RB_TUNE_API, RB_TUNE_OVERALL};
	static const char *const keys[] = {"backend", "rknn_matmul_api", "best_overall"};
	struct rb_total sums[RB_TOTALS_MAX];
	cJSON *s;

	if (!rb_tune_slice_totals(t, best, RB_TUNE_OVERALL, sums))
		return;
	s = cJSON_AddObjectToObject(o, "per_graph_pair");
	cJSON_AddStringToObject(s, "sums",
				"each graph pair's slowest slice (the backend runs "
				"a pair's slices at once, one per core)");
	for (size_t w = 0; w < 3; w++)
		cJSON_AddItemToObject(
		    s, keys[w],
		    rb_totals_json(sums, rb_tune_slice_totals(t, best, which[w], sums)));
}

static cJSON *totals_json(const struct rb_tune_run *t, const struct rb_tune_best *best)
{
	static const char *const keys[] = {"default", "tuned", "rknn_matmul_api", "backend",
					   "best_overall"};
	struct rb_total sums[RB_TOTALS_MAX];
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "modeled", t->device.ops->modeled);
	cJSON_AddStringToObject(o, "sums", "device + host time per pair");
	cJSON_AddStringToObject(o, "host_model", RB_TUNE_HOST_MODEL);
	for (int w = RB_TUNE_DEFAULT; w <= RB_TUNE_OVERALL; w++) {
		size_t n = rb_tune_totals(t->o, best, (enum rb_tune_which)w, sums);

		cJSON_AddItemToObject(o, keys[w], rb_totals_json(sums, n));
	}
	add_slice_totals(o, t, best);
	return o;
}

/* The directory part of path ("." when none), made absolute. */
static bool abs_dir(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], *real;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path), path);
	real = realpath(dir, NULL);
	if (real)
		snprintf(buf, size, "%s", real);
	free(real);
	return real != NULL;
}

/* Where merge --cache finds the shard's cache: its name when it lies beside the tuned
 * JSON (the files move together, e.g. back from a board), else its absolute path. */
static void cache_location(const struct rb_tune_opts *o, char *buf, size_t size)
{
	const char *slash = strrchr(o->cache_path, '/');
	const char *base = slash ? slash + 1 : o->cache_path;
	char out_dir[PATH_MAX], cache_dir[PATH_MAX];

	if (!abs_dir(o->out_path, out_dir, sizeof(out_dir)) ||
	    !abs_dir(o->cache_path, cache_dir, sizeof(cache_dir)))
		snprintf(buf, size, "%s", o->cache_path);
	else if (strcmp(out_dir, cache_dir) == 0)
		snprintf(buf, size, "%s", base);
	else
		snprintf(buf, size, "%s/%s", cache_dir, base);
}

/* tune --shard: which shard, where it ran, and its work (shape keys and slices). */
static cJSON *shard_json(const struct rb_tune_run *t, const struct rb_context *ctx,
			 const struct rb_tune_best *best)
{
	const struct rb_shape_list *l = &t->o->shapes;
	cJSON *o = cJSON_CreateObject(), *work;
	char key[64], where[PATH_MAX + 64];

	cJSON_AddNumberToObject(o, "index", t->o->shard.index);
	cJSON_AddNumberToObject(o, "count", t->o->shard.count);
	cJSON_AddStringToObject(o, "host", ctx->host);
	cJSON_AddStringToObject(o, "cpu", ctx->cpu);
	cJSON_AddStringToObject(o, "kernel", ctx->kernel);
	cache_location(t->o, where, sizeof(where));
	cJSON_AddStringToObject(o, "cache", where);
	work = cJSON_AddArrayToObject(o, "work");
	for (size_t i = 0; work && i < l->count; i++) {
		cJSON *w;

		if (rb_tune_first_same(l, i) != i || best[i].other_shard)
			continue;
		w = cJSON_CreateObject();
		cJSON_AddItemToArray(work, w);
		rb_tune_shape_key(&best[i].shape, key, sizeof(key));
		cJSON_AddStringToObject(w, "shape", key);
		cJSON_AddNumberToObject(w, "slice", best[i].slice);
		cJSON_AddNumberToObject(w, "slices", best[i].slices);
	}
	return o;
}

static cJSON *build(const struct rb_tune_run *t, const struct rb_context *ctx,
		    const struct rb_tune_best *best)
{
	cJSON *base = NULL, *pairs = input_pairs(t->o, &base), *doc;

	if (!pairs) {
		cJSON_Delete(base);
		return NULL;
	}
	doc = cJSON_CreateObject();
	top_fields(t, ctx, doc);
	/* an earlier tune's (when a tuned JSON is tuned again) describe that tune only */
	cJSON_DeleteItemFromObjectCaseSensitive(base, "totals");
	cJSON_DeleteItemFromObjectCaseSensitive(base, "shard");
	while (base && base->child) { /* the input's own top-level keys, after ours */
		cJSON *item = cJSON_DetachItemViaPointer(base, base->child);

		if (cJSON_GetObjectItemCaseSensitive(doc, item->string))
			cJSON_Delete(item);
		else
			cJSON_AddItemToObject(doc, item->string, item);
	}
	cJSON_Delete(base);
	for (cJSON *p = pairs->child; p; p = p->next)
		annotate(t, ctx, best, p);
	if (t->work) /* a shard: merge sums the totals of all shards */
		cJSON_AddItemToObject(doc, "shard", shard_json(t, ctx, best));
	else
		cJSON_AddItemToObject(doc, "totals", totals_json(t, best));
	cJSON_AddItemToObject(doc, "pairs", pairs);
	return doc;
}

int rb_tuned_write(const struct rb_tune_run *t, const struct rb_tune_best *best)
{
	cJSON *settings = rb_host_settings_json();
	struct rb_context ctx;
	cJSON *doc;
	int ret;

	rb_context_collect(&ctx);
	ctx.settings = settings; /* the governors and DDR clock the tune ran under */
	snprintf(ctx.driver, sizeof(ctx.driver), "%s %s", t->device.ops->name, t->header.driver);
	doc = build(t, &ctx, best);
	cJSON_Delete(settings);
	if (!doc) /* an input file could not be read again (the message says why) */
		return -EINVAL;
	ret = rb_file_write_atomic(t->o->out_path, rb_json_write, doc);
	cJSON_Delete(doc);
	return ret;
}
