/* The tuned-kernel file reader (include/rknn_bench/tuned.h, docs/tuned-json.md), beside
 * its writer tuned_write.c.
 *
 * Schema 1.x is read forward-compatibly: keys of a "tuned" object and launch modes
 * this version does not know are ignored with a warning (rb_tuned_warning), falling
 * back to the default launch, so a file written by a newer 1.x still loads. A
 * different major version is refused.
 *
 * The parsed document is kept inside the db: every string a config points at is the
 * document's own, so a db is one cJSON tree plus an array, freed together. The fields
 * of the plan (core mask, axis, banks, K-slice, residency, chaining) are read from the
 * config string through the planner's own parser, so they cannot disagree with it. */
#include "rknn_bench/tuned.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/error.h"
#include "npu/plan.h"
#include "tune/tuned_doc.h"

/* What an empty tuned file should have held (for messages). */
#define TUNED_EXPECTED "a tuned kernel JSON"
#define MAX_WARNINGS   32

struct rb_tuned_db {
	cJSON *root;
	struct rb_tuned_config *items;
	struct rb_tuned_times *times; /* beside items */
	size_t count;
	cJSON *facts;                 /* rb_tuned_facts, made when first asked */
	char *warnings[MAX_WARNINGS]; /* the first MAX_WARNINGS; the last says how many more */
	size_t n_warnings, n_dropped;
};

/* Where a message points: "<label>: pairs[3].tuned.launch". */
struct ctx {
	const char *label;
	size_t pair;
	struct rb_tuned_db *db;
};

static void warn(const struct ctx *c, const char *fmt, ...) RB_PRINTF(2, 3);

static void warn(const struct ctx *c, const char *fmt, ...)
{
	struct rb_tuned_db *db = c->db;
	char msg[512];
	int n = snprintf(msg, sizeof(msg), "%s: pairs[%zu].", c->label, c->pair);
	va_list ap;

	if (db->n_warnings == MAX_WARNINGS) {
		db->n_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	db->warnings[db->n_warnings] = strdup(msg);
	db->n_warnings += db->warnings[db->n_warnings] != NULL;
}

/* The keys of "tuned" this version knows (docs/tuned-json.md). */
static const char *const tuned_keys[] = {
    "config",     "launch",
    "core_mask",  "split",
    "data_banks", "weight_banks",
    "residency",  "chain",
    "k_slice",    "k_slices",
    "out",        "tasks_per_core",
    "submits",    "unproven_on_silicon",
    "reproducer", "host_us",
};

static void warn_unknown_keys(const struct ctx *c, const cJSON *tuned)
{
	for (const cJSON *item = tuned->child; item; item = item->next) {
		bool known = false;

		for (size_t i = 0; i < sizeof(tuned_keys) / sizeof(tuned_keys[0]) && !known; i++)
			known = strcmp(item->string, tuned_keys[i]) == 0;
		if (!known)
			warn(c, "tuned.%s: unknown key, ignored (written by a newer rknn-bench?)",
			     item->string);
	}
}

#define PAIR_ERR(c, fmt, ...)                                                                      \
	rb_set_error(-EINVAL, "%s: pairs[%zu]." fmt, (c)->label, (c)->pair, __VA_ARGS__)

static const char *const pair_keys[] = {
    "src0", "src1", "name", "dtype", "config", "core", "measured", "rknn_matmul_api", "tuned"};

/* Keys a newer 1.x writer adds are warnings (warn_unknown_keys); a near miss of a known
 * key is a typo in a hand-edited file, whose real value would silently be missing. */
static int check_spelling(const struct ctx *c, const cJSON *obj, const char *where,
			  const char *const *known, size_t n)
{
	const char *typo, *meant;

	if (!rb_json_misspelled_key(obj, known, n, &typo, &meant))
		return 0;
	return PAIR_ERR(c, "%s%s: unknown key; did you mean \"%s\"?", where, typo, meant);
}

static int get_dim(const struct ctx *c, const cJSON *obj, const char *o, const char *key,
		   int64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > (double)RB_SHAPE_DIM_MAX ||
	    v->valuedouble != floor(v->valuedouble))
		return PAIR_ERR(c, "%s.%s must be an integer from 1 to %lld", o, key,
				(long long)RB_SHAPE_DIM_MAX);
	*out = (int64_t)v->valuedouble;
	return 0;
}

static int get_shape(const struct ctx *c, const cJSON *pair, enum rb_dtype dtype,
		     struct rb_shape *s)
{
	const cJSON *src0 = cJSON_GetObjectItemCaseSensitive(pair, "src0");
	const cJSON *src1 = cJSON_GetObjectItemCaseSensitive(pair, "src1");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(pair, "dtype");
	int64_t k1;
	int ret;

	if (!cJSON_IsObject(src0) || !cJSON_IsObject(src1))
		return PAIR_ERR(c, "%s must be an object", cJSON_IsObject(src0) ? "src1" : "src0");
	ret = get_dim(c, src0, "src0", "row", &s->m);
	if (!ret)
		ret = get_dim(c, src0, "src0", "col", &s->k);
	if (!ret)
		ret = get_dim(c, src1, "src1", "row", &k1);
	if (!ret)
		ret = get_dim(c, src1, "src1", "col", &s->n);
	if (!ret && k1 != s->k)
		ret = PAIR_ERR(c, "src1.row is %lld but src0.col is %lld", (long long)k1,
			       (long long)s->k);
	s->dtype = dtype;
	if (!ret && dt && (!cJSON_IsString(dt) || rb_dtype_parse(dt->valuestring, &s->dtype) < 0))
		ret = PAIR_ERR(c, "%s", "dtype must be \"fp16\" or \"int8\"");
	return ret;
}

/* Optional typed members: absent is fine, the wrong type is not. */
static int opt_string(const struct ctx *c, const cJSON *obj, const char *o, const char *key,
		      const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (v && !cJSON_IsString(v))
		return PAIR_ERR(c, "%s.%s must be a string", o, key);
	*out = v ? v->valuestring : "";
	return 0;
}

static int opt_number(const struct ctx *c, const cJSON *obj, const char *o, const char *key,
		      double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	*out = NAN;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (!cJSON_IsNumber(v))
		return PAIR_ERR(c, "%s.%s must be a number or null", o, key);
	*out = v->valuedouble;
	return 0;
}

static int get_range(const struct ctx *c, const cJSON *r, size_t i, struct rb_tuned_range *out)
{
	static const char *const keys[] = {"core", "begin", "end", "tasks"};
	double v[4];

	for (size_t k = 0; k < 4; k++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(r, keys[k]);

		if (!cJSON_IsNumber(f) || f->valuedouble < 0 || f->valuedouble > 4294967295.0)
			return PAIR_ERR(c, "tuned.split.ranges[%zu].%s must be an unsigned integer",
					i, keys[k]);
		v[k] = f->valuedouble;
	}
	if (v[0] >= RB_TUNED_MAX_CORES || v[2] < v[1])
		return PAIR_ERR(c, "tuned.split.ranges[%zu] names no core or ends before it begins",
				i);
	*out =
	    (struct rb_tuned_range){(unsigned)v[0], (uint32_t)v[1], (uint32_t)v[2], (uint32_t)v[3]};
	return 0;
}

static int get_ranges(const struct ctx *c, const cJSON *tuned, struct rb_tuned_config *t)
{
	const cJSON *split = cJSON_GetObjectItemCaseSensitive(tuned, "split");
	const cJSON *ranges = cJSON_GetObjectItemCaseSensitive(split, "ranges");
	int ret = 0;

	if (!ranges)
		return 0;
	if (!cJSON_IsArray(ranges) || cJSON_GetArraySize(ranges) > RB_TUNED_MAX_CORES)
		return PAIR_ERR(c, "%s", "tuned.split.ranges must be an array of at most 3 cores");
	for (const cJSON *r = ranges->child; ret == 0 && r; r = r->next)
		ret = get_range(c, r, t->n_ranges, &t->ranges[t->n_ranges]), t->n_ranges++;
	return ret;
}

/* The plan fields, from the config string through the planner's parser. */
static int get_plan(const struct ctx *c, const cJSON *tuned, struct rb_tuned_config *t)
{
	const cJSON *cfg = cJSON_GetObjectItemCaseSensitive(tuned, "config");
	const cJSON *launch = cJSON_GetObjectItemCaseSensitive(tuned, "launch");
	struct rb_plan_config pc;
	char why[512];

	if (!cJSON_IsString(cfg))
		return PAIR_ERR(c, "%s", "tuned.config must be a string (the compact plan config)");
	rb_plan_config_init(&pc);
	if (rb_plan_config_parse(&pc, cfg->valuestring) < 0) {
		snprintf(why, sizeof(why), "%s", rb_last_error()); /* the buffer is reused */
		return PAIR_ERR(c, "tuned.config: %s", why);
	}
	if (!cJSON_IsString(launch))
		return PAIR_ERR(c, "%s", "tuned.launch must be a string");
	t->config = cfg->valuestring;
	t->launch = launch->valuestring;
	if (strcmp(t->launch, "fences") != 0 && strcmp(t->launch, "threads") != 0 &&
	    strcmp(t->launch, "multicore") != 0) {
		warn(c, "tuned.launch \"%s\" is not known to this version: runs with \"fences\"",
		     t->launch);
		t->launch = "fences";
	}
	t->core_mask = pc.core_mask;
	t->split_axis = rb_plan_axis_name(pc.axis);
	t->data_banks = pc.data_banks;
	t->weight_banks = pc.weight_banks;
	t->k_slice = pc.k_slice;
	t->resident = pc.residency == RB_PLAN_RESIDENT;
	t->chain = pc.chain;
	return 0;
}

static int get_measured(const struct ctx *c, const cJSON *pair, struct rb_tuned_config *t)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(pair, "measured");
	const cJSON *modeled = cJSON_GetObjectItemCaseSensitive(m, "modeled");
	int ret = 0;

	if (m && !cJSON_IsObject(m))
		return PAIR_ERR(c, "%s", "measured must be an object");
	t->modeled = cJSON_IsTrue(modeled);
	ret = opt_string(c, m, "measured", "device", &t->device);
	if (!ret)
		ret = opt_string(c, m, "measured", "verify", &t->verify);
	if (!ret)
		ret = opt_number(c, m, "measured", "median_us", &t->median_us);
	if (!ret)
		ret = opt_number(c, m, "measured", "gflops", &t->gflops);
	if (!ret)
		ret = opt_number(c, m, "measured", "gbps", &t->gbps);
	if (!ret)
		ret = opt_number(c, m, "measured", "speedup_vs_default", &t->speedup_vs_default);
	if (!ret)
		ret = opt_number(c, m, "measured", "speedup_vs_cpu", &t->speedup_vs_cpu);
	return ret;
}

static int get_context(const struct ctx *c, const cJSON *o, const struct rb_shape *s, size_t i,
		       struct rb_tuned_api_context *out)
{
	static const char *const keys[] = {"core", "n_begin", "n_end"};
	double v[3];

	for (size_t k = 0; k < 3; k++) {
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, keys[k]);

		if (!cJSON_IsNumber(f) || f->valuedouble < 0 || f->valuedouble > 4294967295.0)
			return PAIR_ERR(c,
					"rknn_matmul_api.contexts[%zu].%s must be an unsigned "
					"integer",
					i, keys[k]);
		v[k] = f->valuedouble;
	}
	if (v[0] >= RB_TUNED_MAX_CORES || v[2] <= v[1] || v[2] > (double)s->n)
		return PAIR_ERR(c,
				"rknn_matmul_api.contexts[%zu] names no core or is not a range "
				"of N = %lld",
				i, (long long)s->n);
	*out = (struct rb_tuned_api_context){(unsigned)v[0], (uint32_t)v[1], (uint32_t)v[2]};
	return 0;
}

static int get_contexts(const struct ctx *c, const cJSON *api, struct rb_tuned_config *t)
{
	const cJSON *ctxs = cJSON_GetObjectItemCaseSensitive(api, "contexts");
	int ret = 0;

	if (!cJSON_IsArray(ctxs) || cJSON_GetArraySize(ctxs) > RB_TUNED_MAX_CORES)
		return PAIR_ERR(c, "%s", "rknn_matmul_api.contexts must be an array of at most 3");
	for (const cJSON *x = ctxs->child; ret == 0 && x; x = x->next, t->api.n_contexts++)
		ret = get_context(c, x, &t->shape, t->api.n_contexts,
				  &t->api.contexts[t->api.n_contexts]);
	return ret;
}

/* The optional "rknn_matmul_api" section; keys this version does not know are skipped
 * (it is read-only data for backends). */
static int get_api(const struct ctx *c, const cJSON *pair, struct rb_tuned_config *t)
{
	const cJSON *api = cJSON_GetObjectItemCaseSensitive(pair, "rknn_matmul_api");
	const cJSON *bl = cJSON_GetObjectItemCaseSensitive(api, "B_layout");
	const cJSON *acl = cJSON_GetObjectItemCaseSensitive(api, "AC_layout");
	int ret;

	if (!api || cJSON_IsNull(api))
		return 0;
	if (!cJSON_IsObject(api))
		return PAIR_ERR(c, "%s", "rknn_matmul_api must be an object or null");
	t->api.present = true;
	t->api.b_layout = cJSON_IsNumber(bl) ? bl->valueint : 0;
	t->api.ac_layout = cJSON_IsNumber(acl) ? acl->valueint : 0;
	ret = opt_string(c, api, "rknn_matmul_api", "type", &t->api.type);
	if (!ret)
		ret = opt_string(c, api, "rknn_matmul_api", "config", &t->api.config);
	if (!ret)
		ret = opt_string(c, api, "rknn_matmul_api", "launch", &t->api.launch);
	if (!ret)
		ret = opt_number(c, api, "rknn_matmul_api", "median_us", &t->api.median_us);
	if (!ret)
		ret = opt_number(c, api, "rknn_matmul_api", "best_overall_speedup",
				 &t->api.best_overall_speedup);
	return ret ? ret : get_contexts(c, api, t);
}

/* One pair; *tuned is false for a pair without a "tuned" object. */
static int get_pair(const struct ctx *c, const cJSON *pair, enum rb_dtype dtype,
		    struct rb_tuned_config *t, bool *tuned)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(pair, "name");
	const cJSON *tu = cJSON_GetObjectItemCaseSensitive(pair, "tuned");
	int ret;

	memset(t, 0, sizeof(*t));
	*tuned = false;
	if (!cJSON_IsObject(pair))
		return rb_set_error(-EINVAL, "%s: pairs[%zu] must be an object", c->label, c->pair);
	if (!cJSON_IsString(name) || !name->valuestring[0])
		return PAIR_ERR(c, "%s", "name must be a non-empty string");
	t->name = name->valuestring;
	ret = get_shape(c, pair, dtype, &t->shape);
	if (ret || !tu || cJSON_IsNull(tu))
		return ret;
	if (!cJSON_IsObject(tu))
		return PAIR_ERR(c, "%s", "tuned must be an object or null");
	*tuned = true;
	ret = check_spelling(c, pair, "", pair_keys, sizeof(pair_keys) / sizeof(pair_keys[0]));
	if (!ret)
		ret = check_spelling(c, tu, "tuned.", tuned_keys,
				     sizeof(tuned_keys) / sizeof(tuned_keys[0]));
	if (ret)
		return ret;
	warn_unknown_keys(c, tu);
	ret = get_plan(c, tu, t);
	if (!ret)
		ret = get_ranges(c, tu, t);
	if (!ret)
		ret = opt_string(c, tu, "tuned", "reproducer", &t->reproducer);
	if (!ret)
		ret = get_measured(c, pair, t);
	return ret ? ret : get_api(c, pair, t);
}

/* "rknn-bench-tuned/1" or "rknn-bench-tuned/1.<minor>": readable by this version. */
static bool schema_major_1(const char *schema)
{
	size_t n = strlen(RB_TUNED_SCHEMA);
	const char *minor = schema + n + 1;

	if (strncmp(schema, RB_TUNED_SCHEMA, n) != 0)
		return false;
	if (schema[n] == '\0')
		return true;
	if (schema[n] != '.' || !*minor)
		return false;
	return strspn(minor, "0123456789") == strlen(minor);
}

static int get_top(const cJSON *root, const char *label, const cJSON **pairs, enum rb_dtype *dtype)
{
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(root, "dtype");

	if (!cJSON_IsObject(root))
		return rb_set_error(-EINVAL, "%s: the top level must be an object", label);
	if (!cJSON_IsString(schema) || !schema_major_1(schema->valuestring))
		return rb_set_error(
		    -EINVAL,
		    "%s: schema must be \"%s\" or a 1.x minor of it (is this a file "
		    "written by rknn-bench tune?)",
		    label, RB_TUNED_SCHEMA);
	if (cJSON_GetObjectItemCaseSensitive(root, "shard"))
		return rb_set_error(-EINVAL,
				    "%s is one shard of a tune (tune --shard), with the results of "
				    "its shapes only: join the shards with `rknn-bench merge "
				    "OUT.json SHARD.json...` and read OUT.json",
				    label);
	*pairs = cJSON_GetObjectItemCaseSensitive(root, "pairs");
	if (!cJSON_IsArray(*pairs))
		return rb_set_error(-EINVAL, "%s: pairs must be an array", label);
	*dtype = RB_DTYPE_FP16;
	if (dt && (!cJSON_IsString(dt) || rb_dtype_parse(dt->valuestring, dtype) < 0))
		return rb_set_error(-EINVAL, "%s: dtype must be \"fp16\" or \"int8\"", label);
	return 0;
}

static double number_or_nan(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static void get_times(const cJSON *pair, struct rb_tuned_times *t)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(pair, "measured");

	t->default_us = number_or_nan(m, "default_us");
	t->default_host_us = number_or_nan(m, "default_host_us");
	t->host_us = number_or_nan(cJSON_GetObjectItemCaseSensitive(pair, "tuned"), "host_us");
	t->api_host_us =
	    number_or_nan(cJSON_GetObjectItemCaseSensitive(pair, "rknn_matmul_api"), "host_us");
}

static int load_pairs(struct rb_tuned_db *db, const char *label)
{
	const cJSON *pairs = NULL;
	enum rb_dtype dtype;
	struct ctx c = {label, 0, db};
	bool tuned;
	int ret = get_top(db->root, label, &pairs, &dtype);

	if (ret)
		return ret;
	db->items = calloc((size_t)cJSON_GetArraySize(pairs) + 1, sizeof(*db->items));
	db->times = calloc((size_t)cJSON_GetArraySize(pairs) + 1, sizeof(*db->times));
	if (!db->items || !db->times)
		return rb_set_error(-ENOMEM, "%s: out of memory", label);
	for (const cJSON *p = pairs->child; ret == 0 && p; p = p->next, c.pair++) {
		ret = get_pair(&c, p, dtype, &db->items[db->count], &tuned);
		if (ret == 0 && tuned)
			get_times(p, &db->times[db->count++]);
	}
	return ret;
}

/* Takes root (a loaded tuned JSON, NULL when loading failed with ret) into a new db. */
static int tuned_from_root(struct rb_tuned_db **out, cJSON *root, int ret, const char *label)
{
	struct rb_tuned_db *db;

	*out = NULL;
	if (ret < 0)
		return ret;
	db = calloc(1, sizeof(*db));
	if (!db) {
		cJSON_Delete(root);
		return rb_set_error(-ENOMEM, "%s: out of memory", label);
	}
	db->root = root;
	ret = load_pairs(db, label);
	if (ret < 0) {
		rb_tuned_free(db);
		return ret;
	}
	*out = db;
	return 0;
}

int rb_tuned_load_string(struct rb_tuned_db **out, const char *json, size_t len, const char *label)
{
	cJSON *root = NULL;
	int ret = rb_json_load(json, len, label, TUNED_EXPECTED, &root);

	return tuned_from_root(out, root, ret, label);
}

int rb_tuned_load_file(struct rb_tuned_db **db, const char *path)
{
	cJSON *root = NULL;
	int ret = rb_json_load_file(path, 0, TUNED_EXPECTED, &root);

	return tuned_from_root(db, root, ret, path);
}

void rb_tuned_free(struct rb_tuned_db *db)
{
	if (!db)
		return;
	cJSON_Delete(db->root);
	cJSON_Delete(db->facts);
	free(db->items);
	free(db->times);
	for (size_t i = 0; i < db->n_warnings; i++)
		free(db->warnings[i]);
	free(db);
}

/* ---- lookup ---- */

static bool same_shape(const struct rb_shape *s, int64_t m, int64_t k, int64_t n,
		       enum rb_dtype dtype)
{
	return s->m == m && s->k == k && s->n == n && s->dtype == dtype;
}

static int64_t distance(int64_t a, int64_t b)
{
	return a > b ? a - b : b - a;
}

/* Same dtype, K and N; the closest M, the smaller on a tie. */
static const struct rb_tuned_config *nearest(const struct rb_tuned_db *db, int64_t m, int64_t k,
					     int64_t n, enum rb_dtype dtype)
{
	const struct rb_tuned_config *best = NULL;

	for (size_t i = 0; i < db->count; i++) {
		const struct rb_tuned_config *t = &db->items[i];
		int64_t d = distance(t->shape.m, m);

		if (t->shape.k != k || t->shape.n != n || t->shape.dtype != dtype)
			continue;
		if (!best || d < distance(best->shape.m, m) ||
		    (d == distance(best->shape.m, m) && t->shape.m < best->shape.m))
			best = t;
	}
	return best;
}

const struct rb_tuned_config *rb_tuned_lookup(const struct rb_tuned_db *db, int64_t m, int64_t k,
					      int64_t n, enum rb_dtype dtype, const char *name,
					      enum rb_tuned_match *match)
{
	const struct rb_tuned_config *found = NULL;
	enum rb_tuned_match how = RB_TUNED_NONE;

	for (size_t i = 0; name && db && i < db->count && !found; i++)
		if (strcmp(db->items[i].name, name) == 0 &&
		    same_shape(&db->items[i].shape, m, k, n, dtype))
			found = &db->items[i], how = RB_TUNED_NAME;
	for (size_t i = 0; db && i < db->count && !found; i++)
		if (same_shape(&db->items[i].shape, m, k, n, dtype))
			found = &db->items[i], how = RB_TUNED_SHAPE;
	if (db && !found) {
		found = nearest(db, m, k, n, dtype);
		how = found ? RB_TUNED_BUCKET : RB_TUNED_NONE;
	}
	if (match)
		*match = how;
	return found;
}

size_t rb_tuned_count(const struct rb_tuned_db *db)
{
	return db ? db->count : 0;
}

const struct rb_tuned_config *rb_tuned_at(const struct rb_tuned_db *db, size_t i)
{
	return db && i < db->count ? &db->items[i] : NULL;
}

const char *rb_tuned_info(const struct rb_tuned_db *db, const char *key)
{
	const cJSON *v = db ? cJSON_GetObjectItemCaseSensitive(db->root, key) : NULL;

	return cJSON_IsString(v) ? v->valuestring : "";
}

size_t rb_tuned_warning_count(const struct rb_tuned_db *db)
{
	return db ? db->n_warnings + (db->n_dropped > 0) : 0;
}

const char *rb_tuned_warning(const struct rb_tuned_db *db, size_t i)
{
	static const char more[] = "more warnings left out";

	if (!db || i >= rb_tuned_warning_count(db))
		return "";
	return i < db->n_warnings ? db->warnings[i] : more;
}

const char *rb_tuned_match_name(enum rb_tuned_match match)
{
	static const char *const names[] = {"none", "name", "shape", "bucket"};

	return match <= RB_TUNED_BUCKET ? names[match] : "unknown";
}

/* ---- rknn-bench's own readers (tune/tuned_doc.h) ---- */

const struct rb_tuned_times *rb_tuned_times_at(const struct rb_tuned_db *db, size_t i)
{
	return db && i < db->count ? &db->times[i] : NULL;
}

static const char *const totals_names[RB_TUNED_TOTALS_OF] = {
    [RB_TUNED_TOTALS_DEFAULT] = "default",     [RB_TUNED_TOTALS_TUNED] = "tuned",
    [RB_TUNED_TOTALS_API] = "rknn_matmul_api", [RB_TUNED_TOTALS_BACKEND] = "backend",
    [RB_TUNED_TOTALS_BEST] = "best_overall",
};

const char *rb_tuned_totals_name(enum rb_tuned_totals_of of)
{
	return of < RB_TUNED_TOTALS_OF ? totals_names[of] : "";
}

int rb_tuned_totals(const struct rb_tuned_db *db, const char *label, enum rb_tuned_totals_of of,
		    struct rb_total *out, size_t max, size_t *n)
{
	const cJSON *totals = cJSON_GetObjectItemCaseSensitive(db->root, "totals");
	char where[48];

	*n = 0;
	if (totals && !cJSON_IsObject(totals))
		return rb_set_error(-EINVAL, "%s: totals is not an object", label);
	snprintf(where, sizeof(where), "totals.%s", rb_tuned_totals_name(of));
	return rb_totals_parse(cJSON_GetObjectItemCaseSensitive(totals, rb_tuned_totals_name(of)),
			       label, where, out, max, n);
}

bool rb_tuned_modeled(const struct rb_tuned_db *db)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(db->root, "modeled")) ||
	       strncmp(rb_tuned_device(db), "sim", 3) == 0;
}

const char *rb_tuned_device(const struct rb_tuned_db *db)
{
	return rb_tuned_info(db, "device");
}

const char *rb_tuned_soc(const struct rb_tuned_db *db)
{
	return rb_tuned_info(db, "soc");
}

const cJSON *rb_tuned_facts(const struct rb_tuned_db *db)
{
	struct rb_tuned_db *mut = (struct rb_tuned_db *)db; /* made once, kept with the db */

	if (!mut->facts) {
		mut->facts = cJSON_Duplicate(db->root, true);
		cJSON_DeleteItemFromObjectCaseSensitive(mut->facts, "schema");
		cJSON_DeleteItemFromObjectCaseSensitive(mut->facts, "pairs");
		cJSON_DeleteItemFromObjectCaseSensitive(mut->facts, "totals");
	}
	return mut->facts;
}
