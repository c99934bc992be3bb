/* The shards of a tune as merge joins them (tuned_doc.h): a shard's tuned JSON read
 * into typed pairs, and the merged document written from the picks merge makes. Part
 * of the tuned JSON's module (with tuned_read.c and tuned_write.c): merge.c ranks,
 * votes and joins caches on these structs and never names a key. */
#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "results/totals.h"
#include "tune/shard.h"
#include "tune/tune.h"
#include "tune/tuned_doc.h"

static const cJSON *get(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

static double num(const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *str(const cJSON *o, const char *key)
{
	const cJSON *v = get(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const char *str_or_empty(const cJSON *o, const char *key)
{
	return str(o, key) ? str(o, key) : "";
}

static bool whole_in(const cJSON *o, const char *key, double lo, double hi)
{
	double v = num(o, key);

	return v >= lo && v <= hi && v == floor(v);
}

/* The modeled host part a config object carries (0 for a file written before it did):
 * tune ranks by device + host time, and so does merge. */
static double host_of(const cJSON *o, const char *key)
{
	double h = num(o, key);

	return isfinite(h) ? h : 0;
}

/* ---- reading a shard ---- */

static void read_pair(const cJSON *root, const cJSON *p, struct rb_tuned_slice_pair *out)
{
	const cJSON *meas = get(p, "measured"), *tu = get(p, "tuned");
	const cJSON *api = get(p, "rknn_matmul_api");
	const char *dt = str(p, "dtype") ? str(p, "dtype") : str(root, "dtype");

	out->doc = p;
	out->name = str(p, "name");
	out->m = (int64_t)num(get(p, "src0"), "row");
	snprintf(out->key, sizeof(out->key), "%lldx%lldx%lld %s", (long long)out->m,
		 (long long)num(get(p, "src0"), "col"), (long long)num(get(p, "src1"), "col"),
		 dt ? dt : "fp16");
	out->measured = cJSON_IsObject(meas);
	out->config = cJSON_IsObject(tu) ? str_or_empty(tu, "config") : NULL;
	out->launch = cJSON_IsObject(tu) ? str_or_empty(tu, "launch") : NULL;
	out->median_us = cJSON_IsObject(tu) ? num(meas, "median_us") : NAN;
	out->host_us = host_of(tu, "host_us");
	out->default_us = num(meas, "default_us");
	out->cpu_us = num(meas, "cpu_us");
	out->default_won = cJSON_IsTrue(get(meas, "default_won"));
	out->config_index = num(meas, "config_index");
	out->api_config = cJSON_IsObject(api) ? str_or_empty(api, "config") : NULL;
	out->api_launch = cJSON_IsObject(api) ? str_or_empty(api, "launch") : NULL;
	out->api_us = cJSON_IsObject(api) ? num(api, "median_us") : NAN;
}

/* The pairs' dimensions and the work list: what merge reads besides the compared keys. */
static int read_pairs(struct rb_tuned_shard *s, const cJSON *pairs)
{
	size_t i = 0;

	s->pairs = calloc((size_t)cJSON_GetArraySize(pairs) + 1, sizeof(*s->pairs));
	if (!s->pairs)
		return rb_set_error(-ENOMEM, "out of memory");
	for (const cJSON *p = pairs->child; p; p = p->next, i++) {
		if (!cJSON_IsString(get(p, "name")) ||
		    !whole_in(get(p, "src0"), "row", 1, (double)RB_SHAPE_DIM_MAX) ||
		    !whole_in(get(p, "src0"), "col", 1, (double)RB_SHAPE_DIM_MAX) ||
		    !whole_in(get(p, "src1"), "col", 1, (double)RB_SHAPE_DIM_MAX))
			return rb_set_error(-EINVAL,
					    "'%s': pairs[%zu] needs a name and src0.row, src0.col, "
					    "src1.col in 1..%lld",
					    s->path, i, (long long)RB_SHAPE_DIM_MAX);
		read_pair(s->root, p, &s->pairs[s->n_pairs++]);
	}
	return 0;
}

static int read_work(struct rb_tuned_shard *s, const cJSON *work)
{
	size_t i = 0;

	s->work = calloc((size_t)cJSON_GetArraySize(work) + 1, sizeof(*s->work));
	if (!s->work)
		return rb_set_error(-ENOMEM, "out of memory");
	for (const cJSON *w = work->child; w; w = w->next, i++) {
		if (!str(w, "shape") || !whole_in(w, "slices", 1, RB_TUNE_MAX_SHARDS) ||
		    !whole_in(w, "slice", 0, num(w, "slices") - 1))
			return rb_set_error(-EINVAL,
					    "'%s': shard.work[%zu] needs a shape and 0 <= slice < "
					    "slices <= %u",
					    s->path, i, RB_TUNE_MAX_SHARDS);
		s->work[s->n_work++] = (struct rb_tuned_work){
		    str(w, "shape"), (unsigned)num(w, "slice"), (unsigned)num(w, "slices")};
	}
	return 0;
}

static int read_shard(struct rb_tuned_shard *s)
{
	const cJSON *shard = get(s->root, "shard");

	if (!cJSON_IsObject(shard))
		return rb_set_error(-EINVAL,
				    "'%s' is not a shard (it has no \"shard\" object): merge joins "
				    "the outputs of tune --shard I/N",
				    s->path);
	if (!whole_in(shard, "count", 1, RB_TUNE_MAX_SHARDS) ||
	    !whole_in(shard, "index", 1, num(shard, "count")) || !str(shard, "host") ||
	    !cJSON_IsArray(get(shard, "work")))
		return rb_set_error(-EINVAL,
				    "'%s': shard needs count 1..%u, index 1..count, host and work",
				    s->path, RB_TUNE_MAX_SHARDS);
	s->index = (unsigned)num(shard, "index");
	s->count = (unsigned)num(shard, "count");
	s->host = str(shard, "host");
	s->cpu = str_or_empty(shard, "cpu");
	s->kernel = str_or_empty(shard, "kernel");
	s->cache = str_or_empty(shard, "cache");
	return read_work(s, get(shard, "work"));
}

int rb_tuned_shard_load(struct rb_tuned_shard *s, const char *path)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->path = strdup(path);
	if (!s->path)
		return rb_set_error(-ENOMEM, "out of memory");
	ret = rb_json_load_file(path, 0, "a tuned JSON of a shard", &s->root);
	if (ret < 0)
		return ret;
	if (!cJSON_IsString(get(s->root, "schema")) ||
	    strcmp(str(s->root, "schema"), RB_TUNED_SCHEMA) != 0 ||
	    !cJSON_IsArray(get(s->root, "pairs")))
		return rb_set_error(-EINVAL, "'%s' is not a tuned JSON (schema %s)", path,
				    RB_TUNED_SCHEMA);
	s->generated = str_or_empty(s->root, "generated");
	ret = read_shard(s);
	return ret ? ret : read_pairs(s, get(s->root, "pairs"));
}

void rb_tuned_shard_release(struct rb_tuned_shard *s)
{
	cJSON_Delete(s->root);
	free(s->pairs);
	free(s->work);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

/* ---- one setup ---- */

/* The keys every shard must share (at the top level, then in "shard"). */
static const char *const same_top_keys[] = {
    "schema",   "tool_version", "device", "modeled", "driver", "soc",
    "strategy", "target",       "space",  "measure", "search", "unsafe_skip_validation",
};
static const char *const same_shard_keys[] = {"count", "cpu"};
/* What identifies a pair: the rest is the tune's. */
static const char *const pair_keys[] = {"name", "src0", "src1", "dtype"};

static int differ(const char *what, const struct rb_tuned_shard *a, const cJSON *va,
		  const struct rb_tuned_shard *b, const cJSON *vb)
{
	char *ta = va ? cJSON_PrintUnformatted(va) : NULL;
	char *tb = vb ? cJSON_PrintUnformatted(vb) : NULL;

	rb_set_error(-EINVAL,
		     "'%s' has %s %s, '%s' has %s: the shards of one tune share it (tune every "
		     "shard with the same tool, device, profile and settings)",
		     b->path, what, tb ? tb : "(none)", a->path, ta ? ta : "(none)");
	free(ta);
	free(tb);
	return -EINVAL;
}

static int same_key(const struct rb_tuned_shard *a, const cJSON *oa, const struct rb_tuned_shard *b,
		    const cJSON *ob, const char *key, const char *what)
{
	const cJSON *va = get(oa, key), *vb = get(ob, key);

	if ((!va && !vb) || (va && vb && cJSON_Compare(va, vb, true)))
		return 0;
	return differ(what, a, va, b, vb);
}

static int same_pairs(const struct rb_tuned_shard *a, const struct rb_tuned_shard *b)
{
	const cJSON *pairs_a = get(a->root, "pairs"), *pairs_b = get(b->root, "pairs");
	char what[96];
	size_t i = 0;

	if (a->n_pairs != b->n_pairs)
		return rb_set_error(-EINVAL,
				    "'%s' has %zu pairs, '%s' has %zu: the shards of one tune "
				    "share the shapes file",
				    b->path, b->n_pairs, a->path, a->n_pairs);
	for (const cJSON *pa = pairs_a->child, *pb = pairs_b->child; pa && pb;
	     pa = pa->next, pb = pb->next, i++)
		for (size_t k = 0; k < sizeof(pair_keys) / sizeof(pair_keys[0]); k++) {
			snprintf(what, sizeof(what), "pairs[%zu].%s", i, pair_keys[k]);
			if (same_key(a, pa, b, pb, pair_keys[k], what) < 0)
				return -EINVAL;
		}
	return 0;
}

int rb_tuned_shard_same_setup(const struct rb_tuned_shard *a, const struct rb_tuned_shard *b)
{
	const cJSON *sa = get(a->root, "shard"), *sb = get(b->root, "shard");

	for (size_t k = 0; k < sizeof(same_top_keys) / sizeof(same_top_keys[0]); k++)
		if (same_key(a, a->root, b, b->root, same_top_keys[k], same_top_keys[k]) < 0)
			return -EINVAL;
	for (size_t k = 0; k < sizeof(same_shard_keys) / sizeof(same_shard_keys[0]); k++) {
		char what[32];

		snprintf(what, sizeof(what), "shard.%s", same_shard_keys[k]);
		if (same_key(a, sa, b, sb, same_shard_keys[k], what) < 0)
			return -EINVAL;
	}
	if (same_key(a, get(a->root, "context"), b, get(b->root, "context"), "tool_commit",
		     "context.tool_commit") < 0)
		return -EINVAL;
	return same_pairs(a, b);
}

bool rb_tuned_shard_same_results(const struct rb_tuned_shard *a, const struct rb_tuned_shard *b)
{
	return cJSON_Compare(get(a->root, "pairs"), get(b->root, "pairs"), true);
}

/* ---- the merged document ---- */

/* Replaces a number the writer wrote; a key it did not write stays out, so the merged
 * file has exactly the keys of an unsharded tune (e.g. speedup_vs_cpu: measured
 * devices only, docs/tuned-json.md). */
static void set_written(cJSON *o, const char *key, double v)
{
	cJSON *n = get(o, key) ? (isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull()) : NULL;

	if (n)
		cJSON_ReplaceItemInObjectCaseSensitive(o, key, n);
}

static void add_num(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

static void sum_counts(cJSON *into, const cJSON *from)
{
	static const char *const count_keys[] = {"configs_in_space", "configs_modeled",
						 "configs_run", "configs_failed",
						 "configs_not_run"};

	for (size_t k = 0; k < sizeof(count_keys) / sizeof(count_keys[0]); k++) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(into, count_keys[k]);

		if (cJSON_IsNumber(v) && isfinite(num(from, count_keys[k])))
			cJSON_SetNumberValue(v, v->valuedouble + num(from, count_keys[k]));
	}
}

/* Sets the time of a measured object and what derives from it (rates scale with it;
 * the ratios are of device + host times, as tune writes them). */
static void set_time(cJSON *measured, double us, double host)
{
	static const char *const rate_keys[] = {"gflops", "gbps", "gbps_b"};
	double total = us + host, old = num(measured, "median_us");
	cJSON *cpu_ref = cJSON_GetObjectItemCaseSensitive(measured, "cpu_reference");

	for (size_t k = 0; k < 3; k++)
		if (isfinite(old) && isfinite(us) && us != old)
			set_written(measured, rate_keys[k], num(measured, rate_keys[k]) * old / us);
	if (!(us == old))
		set_written(measured, "median_us", us);
	set_written(measured, "device_us", us);
	set_written(measured, "host_us", host);
	set_written(measured, "total_us", total);
	set_written(measured, "default_total_us",
		    num(measured, "default_us") + host_of(measured, "default_host_us"));
	set_written(measured, "speedup_vs_default", num(measured, "default_total_us") / total);
	set_written(measured, "speedup_vs_backend", num(measured, "backend_split_us") / total);
	set_written(measured, "speedup_vs_cpu", num(measured, "cpu_us") / us);
	set_written(cpu_ref, "speedup", num(cpu_ref, "cpu_us") / us);
}

static cJSON *dup_of(const struct rb_tuned_slice_pair *p, const char *key)
{
	const cJSON *o = p ? get(p->doc, key) : NULL;

	return o ? cJSON_Duplicate(o, true) : NULL;
}

static void add_boards(cJSON *measured, const struct rb_tuned_merged_pair *r)
{
	cJSON *boards;

	add_num(measured, "board_spread_pct", r->spread_pct);
	boards = cJSON_AddArrayToObject(measured, "boards");
	for (size_t j = 0; boards && j < r->n_boards; j++) {
		const struct rb_tuned_board_choice *c = &r->boards[j];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddItemToArray(boards, o);
		cJSON_AddStringToObject(o, "host", c->host);
		cJSON_AddStringToObject(o, "config", c->config ? c->config : "");
		cJSON_AddStringToObject(o, "launch", c->launch ? c->launch : "");
		add_num(o, "median_us", c->median_us);
	}
}

/* The measured part: slice 0's, the slices' counts summed, at the merged time, with the
 * winner's host part (its phases). */
static cJSON *measured_json(const struct rb_tuned_merged_pair *r)
{
	cJSON *m = dup_of(r->base, "measured"), *host = dup_of(r->tuned, "measured");
	cJSON *phases = host ? cJSON_DetachItemFromObjectCaseSensitive(host, "host") : NULL;

	cJSON_Delete(host);
	for (size_t s = 0; m && s < r->n_slices; s++)
		if (r->slices[s] != r->base)
			sum_counts(m, get(r->slices[s]->doc, "measured"));
	if (m && r->n_boards > 1) {
		set_written(m, "default_us", r->default_us);
		set_written(m, "cpu_us", r->cpu_us);
	}
	if (m)
		set_time(m, r->us, r->host_us);
	if (m && phases && get(m, "host"))
		cJSON_ReplaceItemInObjectCaseSensitive(m, "host", phases);
	else
		cJSON_Delete(phases);
	cJSON_DeleteItemFromObjectCaseSensitive(m, "config_index"); /* a shard's */
	cJSON_DeleteItemFromObjectCaseSensitive(m, "default_won");
	if (m && r->n_boards > 1)
		add_boards(m, r);
	return m;
}

static cJSON *api_json(const struct rb_tuned_merged_pair *r)
{
	cJSON *api = dup_of(r->api, "rknn_matmul_api");
	double api_total = r->api_us + host_of(api, "host_us");

	if (!api)
		return cJSON_CreateNull();
	if (!(num(api, "median_us") == r->api_us))
		set_written(api, "median_us", r->api_us);
	set_written(api, "total_us", api_total);
	set_written(api, "best_overall_us", r->us + r->host_us);
	set_written(api, "best_overall_speedup", api_total / (r->us + r->host_us));
	set_written(api, "gain_vs_backend", num(api, "backend_split_us") / api_total);
	return api;
}

/* The pair of base with its tune results replaced by the merged ones. */
static cJSON *pair_json(const struct rb_tuned_merged_pair *r)
{
	cJSON *pair = cJSON_Duplicate(r->base->doc, true);
	cJSON *tuned = r->tuned ? dup_of(r->tuned, "tuned") : cJSON_CreateNull();

	if (!pair)
		return NULL;
	cJSON_DeleteItemFromObjectCaseSensitive(pair, "tuned");
	cJSON_DeleteItemFromObjectCaseSensitive(pair, "measured");
	cJSON_DeleteItemFromObjectCaseSensitive(pair, "rknn_matmul_api");
	cJSON_AddItemToObject(pair, "tuned", tuned);
	cJSON_AddItemToObject(pair, "measured", measured_json(r));
	cJSON_AddItemToObject(pair, "rknn_matmul_api", api_json(r));
	return pair;
}

/* A pair's time for totals entry w (default, tuned, rknn_matmul_api, backend,
 * best_overall): device + host, as tune sums them (rb_tune_which_us). */
static double pair_total(const cJSON *p, int w)
{
	const cJSON *meas = get(p, "measured"), *api = get(p, "rknn_matmul_api");
	double def = num(meas, "default_us") + host_of(meas, "default_host_us");
	double tuned = cJSON_IsObject(get(p, "tuned"))
			   ? num(meas, "median_us") + host_of(get(p, "tuned"), "host_us")
			   : NAN;

	if (w == 0)
		return def;
	if (w == 1)
		return tuned;
	if (w == 2)
		return num(api, "median_us") + host_of(api, "host_us");
	if (w == 3)
		return num(api, "backend_split_us");
	/* the best overall: the default config when the tuned one is not faster */
	return isfinite(def) && !(tuned <= def) ? def : tuned;
}

/* One totals array: each pair once (per_graph: each graph pair, "slice.of", once at its
 * slowest slice, as the backend runs a pair's slices at once). */
static cJSON *totals_of(const cJSON *pairs, int w, bool per_graph, struct rb_total_pair *items)
{
	struct rb_total sums[RB_TOTALS_MAX];
	size_t i = 0;

	for (const cJSON *p = pairs->child; p; p = p->next) {
		const char *name = cJSON_GetStringValue(get(p, "name"));
		int64_t m = (int64_t)num(get(p, "src0"), "row");
		double us = pair_total(p, w);
		size_t g = 0;

		if (per_graph) {
			name = str(get(p, "slice"), "of");
			if (!name)
				continue;
			while (g < i && !(items[g].m == m && strcmp(items[g].name, name) == 0))
				g++;
			if (g < i) { /* NAN (a slice without a time) spreads */
				if (!(items[g].us >= us))
					items[g].us = us;
				continue;
			}
		}
		items[i++] = (struct rb_total_pair){name, m, us};
	}
	if (per_graph && i == 0)
		return NULL;
	return rb_totals_json(sums, rb_totals_sum_pairs(items, i, sums, RB_TOTALS_MAX));
}

/* Per model, as tune sums them (tuned_write.c totals_json): each pair once, a prompt
 * with the M = 1 pairs of its output row (results/totals.h). */
static cJSON *totals_json(const cJSON *root, const cJSON *pairs)
{
	static const char *const totals_keys[] = {"default", "tuned", "rknn_matmul_api", "backend",
						  "best_overall"};
	size_t n = (size_t)cJSON_GetArraySize(pairs);
	struct rb_total_pair *items = calloc(n ? n : 1, sizeof(*items));
	cJSON *o = cJSON_CreateObject(), *graph;

	cJSON_AddBoolToObject(o, "modeled", cJSON_IsTrue(get(root, "modeled")));
	cJSON_AddStringToObject(o, "sums", "device + host time per pair");
	cJSON_AddStringToObject(o, "host_model", RB_TUNE_HOST_MODEL);
	for (int w = 0; items && w < 5; w++)
		cJSON_AddItemToObject(o, totals_keys[w], totals_of(pairs, w, false, items));
	graph = items ? totals_of(pairs, 4, true, items) : NULL;
	if (graph) { /* ggml-rknn slices: backend, rknn_matmul_api, best_overall */
		cJSON *s = cJSON_AddObjectToObject(o, "per_graph_pair");

		cJSON_Delete(graph);
		cJSON_AddStringToObject(s, "sums",
					"each graph pair's slowest slice (the backend runs "
					"a pair's slices at once, one per core)");
		cJSON_AddItemToObject(s, "backend", totals_of(pairs, 3, true, items));
		cJSON_AddItemToObject(s, "rknn_matmul_api", totals_of(pairs, 2, true, items));
		cJSON_AddItemToObject(s, "best_overall", totals_of(pairs, 4, true, items));
	}
	free(items);
	return o;
}

/* Where the shards ran: one entry per board. */
static cJSON *provenance(const struct rb_tuned_shard *first,
			 const struct rb_tuned_shard *const *boards, size_t n_boards)
{
	cJSON *o = cJSON_CreateObject(), *list;

	cJSON_AddNumberToObject(o, "shards", first->count);
	list = cJSON_AddArrayToObject(o, "boards");
	for (size_t b = 0; b < n_boards; b++) {
		cJSON *e = cJSON_CreateObject();

		cJSON_AddStringToObject(e, "host", boards[b]->host);
		cJSON_AddStringToObject(e, "cpu", boards[b]->cpu);
		cJSON_AddStringToObject(e, "kernel", boards[b]->kernel);
		cJSON_AddItemToArray(list, e);
	}
	return o;
}

cJSON *rb_tuned_merged_json(const struct rb_tuned_shard *first,
			    const struct rb_tuned_merged_pair *pairs, size_t n,
			    const struct rb_tuned_shard *const *boards, size_t n_boards,
			    const char *generated)
{
	cJSON *doc = cJSON_Duplicate(first->root, true);
	cJSON *list = cJSON_CreateArray();
	bool ok = doc && list;

	for (size_t p = 0; ok && p < n; p++) {
		cJSON *pair = pair_json(&pairs[p]);

		ok = pair && cJSON_AddItemToArray(list, pair);
	}
	if (ok) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "pairs");
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "shard");
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "generated");
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "totals");
		cJSON_AddStringToObject(doc, "generated", generated);
		cJSON_AddItemToObject(doc, "merged", provenance(first, boards, n_boards));
		cJSON_AddItemToObject(doc, "totals", totals_json(doc, list));
		cJSON_AddItemToObject(doc, "pairs", list);
		return doc;
	}
	cJSON_Delete(list);
	cJSON_Delete(doc);
	rb_set_error(-ENOMEM, "out of memory");
	return NULL;
}
