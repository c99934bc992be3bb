/* Matmul shape lists and the shapes file parser (see include/rknn_bench/shape.h).
 *
 * Loading is transactional: the list is copied, the file is added to the copy, and the
 * copy replaces the list only when every pair was accepted. Shape lists are short
 * (tens to a few thousand names), so lookups are linear scans. */
#include "rknn_bench/shape.h"

#include "core/error.h"
#include "core/fileio.h"
#include "core/json.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DTYPE_CHOICES "\"fp16\" or \"int8\""
#define SPEC_USAGE    "must be MxKxN, e.g. 1x2048x8192"

/* ---- dtypes ---- */

const char *rb_dtype_name(enum rb_dtype dtype)
{
	switch (dtype) {
	case RB_DTYPE_FP16:
		return "fp16";
	case RB_DTYPE_INT8:
		return "int8";
	}
	return "unknown";
}

int rb_dtype_parse(const char *text, enum rb_dtype *out)
{
	if (text && strcmp(text, "fp16") == 0) {
		*out = RB_DTYPE_FP16;
		return 0;
	}
	if (text && strcmp(text, "int8") == 0) {
		*out = RB_DTYPE_INT8;
		return 0;
	}
	return rb_set_error(-EINVAL, "unknown dtype '%s': must be " DTYPE_CHOICES,
			    text ? text : "(null)");
}

void rb_json_add_shape(cJSON *o, const struct rb_shape *s)
{
	cJSON_AddNumberToObject(o, "m", (double)s->m);
	cJSON_AddNumberToObject(o, "k", (double)s->k);
	cJSON_AddNumberToObject(o, "n", (double)s->n);
	cJSON_AddStringToObject(o, "dtype", rb_dtype_name(s->dtype));
}

size_t rb_dtype_in_size(enum rb_dtype dtype)
{
	switch (dtype) {
	case RB_DTYPE_FP16:
		return 2;
	case RB_DTYPE_INT8:
		return 1;
	}
	return 0;
}

size_t rb_dtype_out_size(enum rb_dtype dtype)
{
	/* fp16 accumulates into fp32, int8 into int32: both 4 bytes */
	switch (dtype) {
	case RB_DTYPE_FP16:
	case RB_DTYPE_INT8:
		return 4;
	}
	return 0;
}

/* ---- text helpers for messages ---- */

/* Shortest text that reads back as d, so 4294967296 is not shown as 4.29497e+09. */
static const char *fmt_number(char *buf, size_t size, double d)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return buf;
}

/* What a JSON value is, for "must be X, not <this>". */
static const char *describe(char *buf, size_t size, const cJSON *item)
{
	char tmp[64];

	if (cJSON_IsNull(item))
		return "null";
	if (cJSON_IsTrue(item))
		return "true";
	if (cJSON_IsFalse(item))
		return "false";
	if (cJSON_IsArray(item))
		return "an array";
	if (cJSON_IsObject(item))
		return "an object";
	if (cJSON_IsNumber(item))
		snprintf(buf, size, "the number %s",
			 fmt_number(tmp, sizeof(tmp), item->valuedouble));
	else if (cJSON_IsString(item))
		snprintf(buf, size, "the string %s",
			 rb_json_quote(tmp, sizeof(tmp), item->valuestring, SIZE_MAX, '"'));
	else
		snprintf(buf, size, "an invalid value");
	return buf;
}

static const char *fmt_shape(char *buf, size_t size, const struct rb_shape *s)
{
	snprintf(buf, size, "%" PRId64 "x%" PRId64 "x%" PRId64 " %s", s->m, s->k, s->n,
		 rb_dtype_name(s->dtype));
	return buf;
}

/* ---- the list ---- */

void rb_shape_list_init(struct rb_shape_list *list)
{
	list->entries = NULL;
	list->count = 0;
}

static void entry_release(struct rb_shape_entry *e)
{
	for (size_t i = 0; i < e->n_names; i++)
		free(e->names[i]);
	free(e->names);
	free(e->config);
	e->names = NULL;
	e->n_names = 0;
	e->config = NULL;
}

void rb_shape_list_release(struct rb_shape_list *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->count; i++)
		entry_release(&list->entries[i]);
	free(list->entries);
	rb_shape_list_init(list);
}

bool rb_shape_equal(const struct rb_shape *a, const struct rb_shape *b)
{
	return a->m == b->m && a->k == b->k && a->n == b->n && a->dtype == b->dtype;
}

static bool dim_valid(int64_t d)
{
	return d >= 1 && d <= RB_SHAPE_DIM_MAX;
}

static bool shape_valid(const struct rb_shape *s)
{
	return dim_valid(s->m) && dim_valid(s->k) && dim_valid(s->n) &&
	       (s->dtype == RB_DTYPE_FP16 || s->dtype == RB_DTYPE_INT8);
}

static bool config_equal(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Entries are unique per shape, config and core: one shape pinned to two configs, or to
 * two cores, is two runs. */
static struct rb_shape_entry *find_shape(const struct rb_shape_list *list,
					 const struct rb_shape *shape, const char *config,
					 unsigned core_mask)
{
	for (size_t i = 0; i < list->count; i++)
		if (rb_shape_equal(&list->entries[i].shape, shape) &&
		    config_equal(list->entries[i].config, config) &&
		    list->entries[i].core_mask == core_mask)
			return &list->entries[i];
	return NULL;
}

/* A graph node keeps its name at every batch size, so one name may stand for shapes
 * that differ in M only (ffn_up-0 at M = 1 and M = 128): the backend matches name and
 * shape. The entry holding `name` whose shape clashes with `shape` (another K, N or
 * dtype), else the one holding it with an M equal to shape's, else NULL. */
static bool same_node(const struct rb_shape *a, const struct rb_shape *b)
{
	return a->k == b->k && a->n == b->n && a->dtype == b->dtype;
}

static struct rb_shape_entry *find_name(const struct rb_shape_list *list, const char *name,
					const struct rb_shape *shape)
{
	struct rb_shape_entry *same = NULL;

	for (size_t i = 0; i < list->count; i++) {
		struct rb_shape_entry *e = &list->entries[i];

		for (size_t j = 0; j < e->n_names; j++) {
			if (strcmp(e->names[j], name) != 0)
				continue;
			if (!same_node(&e->shape, shape))
				return e;
			if (e->shape.m == shape->m && !same)
				same = e;
		}
	}
	return same;
}

/* Arrays grow one element at a time: lists are short, and a capacity hidden from the
 * public struct would break lists that callers build or copy by hand. */
static int entry_add_name(struct rb_shape_entry *e, const char *name)
{
	char *copy = strdup(name);
	char **names;

	if (!copy)
		return -ENOMEM;
	names = realloc(e->names, (e->n_names + 1) * sizeof(*names));
	if (!names) {
		free(copy);
		return -ENOMEM;
	}
	names[e->n_names++] = copy;
	e->names = names;
	return 0;
}

static int list_add_entry(struct rb_shape_list *list, const struct rb_shape *shape,
			  const char *name, const char *config, unsigned core_mask)
{
	struct rb_shape_entry e = {.shape = *shape, .core_mask = core_mask};
	struct rb_shape_entry *entries;

	if (config && !(e.config = strdup(config)))
		return -ENOMEM;
	if (entry_add_name(&e, name)) {
		entry_release(&e);
		return -ENOMEM;
	}
	entries = realloc(list->entries, (list->count + 1) * sizeof(*entries));
	if (!entries) {
		entry_release(&e);
		return -ENOMEM;
	}
	entries[list->count++] = e;
	list->entries = entries;
	return 0;
}

/* Adds a name known not to clash: to the entry of its shape, config and core, or a new
 * one. */
static int add_named(struct rb_shape_list *list, const struct rb_shape *shape, const char *name,
		     const char *config, unsigned core_mask)
{
	struct rb_shape_entry *e = find_shape(list, shape, config, core_mask);

	if (e ? entry_add_name(e, name) : list_add_entry(list, shape, name, config, core_mask))
		return rb_set_error(-ENOMEM, "out of memory");
	return 0;
}

int rb_shape_list_add(struct rb_shape_list *list, const struct rb_shape *shape, const char *name)
{
	return rb_shape_list_add_config(list, shape, name, NULL);
}

int rb_shape_list_add_config(struct rb_shape_list *list, const struct rb_shape *shape,
			     const char *name, const char *config)
{
	return rb_shape_list_add_pinned(list, shape, name, config, 0);
}

int rb_shape_list_add_pinned(struct rb_shape_list *list, const struct rb_shape *shape,
			     const char *name, const char *config, unsigned core_mask)
{
	struct rb_shape_entry *e;
	char q[80], a[96], b[96];

	if (!shape_valid(shape))
		return rb_set_error(-EINVAL, "shape %s: dimensions must be 1..%" PRId64,
				    fmt_shape(a, sizeof(a), shape), RB_SHAPE_DIM_MAX);
	if (!name || !*name)
		return rb_set_error(-EINVAL, "shape %s needs a non-empty name",
				    fmt_shape(a, sizeof(a), shape));
	if (core_mask != 0 && core_mask != 0x1 && core_mask != 0x2 && core_mask != 0x4)
		return rb_set_error(-EINVAL, "shape %s: core mask 0x%x is not one core",
				    fmt_shape(a, sizeof(a), shape), core_mask);
	e = find_name(list, name, shape);
	if (e && rb_shape_equal(&e->shape, shape) && config_equal(e->config, config) &&
	    e->core_mask == core_mask)
		return 0;
	if (e && !rb_shape_equal(&e->shape, shape))
		return rb_set_error(-EINVAL,
				    "name %s is already used by shape %s, not %s (a name may "
				    "repeat only with another M)",
				    rb_json_quote(q, sizeof(q), name, SIZE_MAX, '\''),
				    fmt_shape(b, sizeof(b), &e->shape),
				    fmt_shape(a, sizeof(a), shape));
	if (e && !config_equal(e->config, config))
		return rb_set_error(-EINVAL, "name %s is already used with config '%s', not '%s'",
				    rb_json_quote(q, sizeof(q), name, SIZE_MAX, '\''),
				    e->config ? e->config : "", config ? config : "");
	if (e)
		return rb_set_error(
		    -EINVAL, "name %s is already pinned to core mask 0x%x, not 0x%x",
		    rb_json_quote(q, sizeof(q), name, SIZE_MAX, '\''), e->core_mask, core_mask);
	return add_named(list, shape, name, config, core_mask);
}

/* The copy of a valid list: its names need no checks (linear in the names). */
static int list_copy(struct rb_shape_list *dst, const struct rb_shape_list *src)
{
	rb_shape_list_init(dst);
	for (size_t i = 0; i < src->count; i++) {
		const struct rb_shape_entry *e = &src->entries[i];
		int rc = list_add_entry(dst, &e->shape, e->names[0], e->config, e->core_mask);
		struct rb_shape_entry *d = &dst->entries[dst->count - 1];

		for (size_t j = 1; rc == 0 && j < e->n_names; j++)
			rc = entry_add_name(d, e->names[j]);
		if (rc) {
			rb_shape_list_release(dst);
			return rb_set_error(-ENOMEM, "out of memory");
		}
	}
	return 0;
}

/* ---- MxKxN specs ---- */

/* One dimension of a spec: digits only (strtoll alone would take spaces and signs). */
static int spec_dim(const char *quoted, const char **p, char axis, char stop, int64_t *out)
{
	const char *s = *p;
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return rb_set_error(-EINVAL, "shape %s " SPEC_USAGE, quoted);
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end != stop)
		return rb_set_error(-EINVAL, "shape %s " SPEC_USAGE, quoted);
	if (errno == ERANGE || v > RB_SHAPE_DIM_MAX)
		return rb_set_error(-EINVAL, "shape %s: %c is %.*s: larger than %" PRId64, quoted,
				    axis, (int)(end - s), s, RB_SHAPE_DIM_MAX);
	if (v < 1)
		return rb_set_error(-EINVAL, "shape %s: %c is %.*s: must be a positive integer",
				    quoted, axis, (int)(end - s), s);
	*out = v;
	*p = *end ? end + 1 : end;
	return 0;
}

int rb_shape_list_add_spec(struct rb_shape_list *list, const char *spec, enum rb_dtype dtype)
{
	struct rb_shape s = {.dtype = dtype};
	char quoted[96], name[80];
	const char *p = spec;
	int rc;

	if (!spec)
		return rb_set_error(-EINVAL, "no shape given: " SPEC_USAGE);
	rb_json_quote(quoted, sizeof(quoted), spec, SIZE_MAX, '\'');
	rc = spec_dim(quoted, &p, 'M', 'x', &s.m);
	if (!rc)
		rc = spec_dim(quoted, &p, 'K', 'x', &s.k);
	if (!rc)
		rc = spec_dim(quoted, &p, 'N', '\0', &s.n);
	if (rc)
		return rc;
	/* the name is the normalised spec, so "01x2x3" and "1x2x3" are one name */
	snprintf(name, sizeof(name), "%" PRId64 "x%" PRId64 "x%" PRId64, s.m, s.k, s.n);
	return rb_shape_list_add(list, &s, name);
}

/* ---- JSON text: emptiness, syntax errors and their positions ---- */

/* Names seen so far (the list's before the file, then the file's pairs'): a pair whose
 * name is not in it cannot clash and skips the scan of every name (find_name), which
 * made a file of 100,000 pairs take a minute. Open addressing, FNV-1a. */
struct name_set {
	const char **v; /* borrowed: the list's copies and the parsed document's strings */
	size_t cap, n;
};

static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3u;
	return h;
}

static bool set_has(const struct name_set *set, const char *name)
{
	for (size_t i = name_hash(name) & (set->cap - 1); set->cap && set->v[i];
	     i = (i + 1) & (set->cap - 1))
		if (strcmp(set->v[i], name) == 0)
			return true;
	return false;
}

static int set_add(struct name_set *set, const char *name);

static int set_grow(struct name_set *set)
{
	struct name_set bigger = {calloc(set->cap ? 2 * set->cap : 256, sizeof(char *)),
				  set->cap ? 2 * set->cap : 256, 0};

	if (!bigger.v)
		return -ENOMEM;
	for (size_t i = 0; i < set->cap; i++)
		if (set->v[i])
			set_add(&bigger, set->v[i]);
	free(set->v);
	*set = bigger;
	return 0;
}

static int set_add(struct name_set *set, const char *name)
{
	size_t i;

	if (2 * (set->n + 1) > set->cap && set_grow(set))
		return -ENOMEM;
	for (i = name_hash(name) & (set->cap - 1); set->v[i]; i = (i + 1) & (set->cap - 1))
		if (strcmp(set->v[i], name) == 0)
			return 0;
	set->v[i] = name;
	set->n++;
	return 0;
}

struct parse_ctx {
	const char *label;  /* the file name in messages */
	const cJSON *pairs; /* to find the pair that first used a name */
	struct rb_shape_list *list;
	struct name_set seen;
};

static int fail(const struct parse_ctx *c, const char *fmt, ...) RB_PRINTF(2, 3);
static int fail(const struct parse_ctx *c, const char *fmt, ...)
{
	char msg[896];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return rb_set_error(-EINVAL, "%s: %s", c->label, msg);
}

/* ---- JSON values: fields, integers, dtypes, names ---- */

static void join(char *buf, size_t size, const char *path, const char *key)
{
	snprintf(buf, size, "%s%s%s", path, *path ? "." : "", key);
}

/* Looks key up case-sensitively, as nlohmann::json in the seed backend does. A key
 * given twice is refused because JSON parsers disagree about which one wins. */
static int get_field(const struct parse_ctx *c, const cJSON *obj, const char *path, const char *key,
		     bool required, const cJSON **out)
{
	const cJSON *it, *found = NULL, *other = NULL;
	char full[96], q[80];

	join(full, sizeof(full), path, key);
	cJSON_ArrayForEach(it, obj)
	{
		if (!it->string)
			continue;
		if (strcmp(it->string, key) == 0) {
			if (found)
				return fail(c, "%s appears twice", full);
			found = it;
		} else if (!other && strcasecmp(it->string, key) == 0) {
			other = it;
		}
	}
	*out = found;
	if (found || !required)
		return 0;
	if (other)
		return fail(c, "%s is missing (there is %s: keys are case-sensitive)", full,
			    rb_json_quote(q, sizeof(q), other->string, SIZE_MAX, '"'));
	return fail(c, "%s is missing", full);
}

static bool is_integral(double d)
{
	/* beyond 2^52 every double is an integer (and so is infinity) */
	if (d > 4503599627370496.0 || d < -4503599627370496.0)
		return true;
	return d == (double)(int64_t)d;
}

/* cJSON keeps numbers as doubles: check integral and in range before converting. */
static int get_dim(const struct parse_ctx *c, const cJSON *obj, const char *path, const char *key,
		   int64_t *out)
{
	const cJSON *it;
	char full[96], num[40], what[96];
	double d;
	int rc = get_field(c, obj, path, key, true, &it);

	if (rc)
		return rc;
	join(full, sizeof(full), path, key);
	if (!cJSON_IsNumber(it))
		return fail(c, "%s must be a positive integer, not %s", full,
			    describe(what, sizeof(what), it));
	d = it->valuedouble;
	fmt_number(num, sizeof(num), d);
	if (d != d || !is_integral(d))
		return fail(c, "%s is %s: must be an integer", full, num);
	if (d < 1)
		return fail(c, "%s is %s: must be a positive integer", full, num);
	if (d > (double)RB_SHAPE_DIM_MAX)
		return fail(c, "%s is %s: larger than %" PRId64, full, num, RB_SHAPE_DIM_MAX);
	*out = (int64_t)d;
	return 0;
}

/* {"row": R, "col": C} under key */
/* Unknown keys are ignored (a tuned JSON is a shapes file too), except a near miss of a
 * known one: "dtpye" would silently run the default dtype. */
static int check_spelling(const struct parse_ctx *c, const cJSON *obj, const char *path,
			  const char *const *known, size_t n)
{
	const char *key, *meant;
	char q[80];

	if (!rb_json_misspelled_key(obj, known, n, &key, &meant))
		return 0;
	return fail(c,
		    "%s%sunknown key %s; did you mean \"%s\"? (a misspelled key would be "
		    "ignored)",
		    path, *path ? ": " : "", rb_json_quote(q, sizeof(q), key, SIZE_MAX, '"'),
		    meant);
}

static const char *const matrix_keys[] = {"row", "col"};
static const char *const pair_keys[] = {
    "src0", "src1", "name", "dtype", "config", "core", "measured", "rknn_matmul_api", "tuned"};
static const char *const root_keys[] = {"pairs", "dtype"};
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static int get_matrix(const struct parse_ctx *c, const cJSON *pair, const char *path,
		      const char *key, int64_t *row, int64_t *col)
{
	const cJSON *m;
	char full[96], what[96];
	int rc = get_field(c, pair, path, key, true, &m);

	if (rc)
		return rc;
	join(full, sizeof(full), path, key);
	if (!cJSON_IsObject(m))
		return fail(c, "%s must be an object like {\"row\": 1, \"col\": 2048}, not %s",
			    full, describe(what, sizeof(what), m));
	rc = get_dim(c, m, full, "row", row);
	if (!rc)
		rc = get_dim(c, m, full, "col", col);
	return rc ? rc : check_spelling(c, m, full, matrix_keys, COUNT_OF(matrix_keys));
}

/* An optional "dtype"; *dtype keeps its value (the default) when there is none. */
static int get_dtype(const struct parse_ctx *c, const cJSON *obj, const char *path,
		     enum rb_dtype *dtype)
{
	const cJSON *it;
	char full[96], what[96];
	int rc = get_field(c, obj, path, "dtype", false, &it);

	if (rc || !it)
		return rc;
	join(full, sizeof(full), path, "dtype");
	if (!cJSON_IsString(it))
		return fail(c, "%s must be a string, not %s", full,
			    describe(what, sizeof(what), it));
	if (rb_dtype_parse(it->valuestring, dtype))
		return fail(c, "%s is %s: must be " DTYPE_CHOICES, full,
			    rb_json_quote(what, sizeof(what), it->valuestring, SIZE_MAX, '"'));
	return 0;
}

/* Names are required: the seed backend looks its kernels up by name. */
static int get_name(const struct parse_ctx *c, const cJSON *pair, const char *path,
		    const char **name)
{
	const cJSON *it;
	char what[96];
	size_t bad;
	int rc = get_field(c, pair, path, "name", true, &it);

	if (rc)
		return rc;
	if (!cJSON_IsString(it))
		return fail(c, "%s.name must be a string, not %s", path,
			    describe(what, sizeof(what), it));
	if (!it->valuestring[0])
		return fail(c, "%s.name must not be empty", path);
	if (!rb_text_printable(it->valuestring, &bad))
		return fail(c,
			    "%s.name %s has a control character or invalid UTF-8 at byte %zu: "
			    "names are printed and matched as given",
			    path, rb_json_quote(what, sizeof(what), it->valuestring, SIZE_MAX, '"'),
			    bad);
	*name = it->valuestring;
	return 0;
}

/* ---- pairs ---- */

/* An optional "config": the compact plan config a pair is pinned to (checked by the
 * planner when the shape runs, not here: shapes files know nothing of NPU plans). */
static int get_config(const struct parse_ctx *c, const cJSON *pair, const char *path,
		      const char **config)
{
	const cJSON *it;
	char what[96];
	int rc = get_field(c, pair, path, "config", false, &it);

	if (rc || !it)
		return rc;
	if (!cJSON_IsString(it))
		return fail(c, "%s.config must be a string like \"mask=0x1\", not %s", path,
			    describe(what, sizeof(what), it));
	*config = it->valuestring;
	return 0;
}

/* An optional "core": the NPU core (0, 1 or 2) the pair's context is pinned to, or null
 * (none, as when absent). */
static int get_core(const struct parse_ctx *c, const cJSON *pair, const char *path,
		    unsigned *core_mask)
{
	const cJSON *it;
	char what[96];
	int rc = get_field(c, pair, path, "core", false, &it);

	*core_mask = 0;
	if (rc || !it || cJSON_IsNull(it))
		return rc;
	if (!cJSON_IsNumber(it) || !is_integral(it->valuedouble) || it->valuedouble < 0 ||
	    it->valuedouble > 2)
		return fail(c, "%s.core must be 0, 1 or 2 (the NPU core) or null, not %s", path,
			    describe(what, sizeof(what), it));
	*core_mask = 1u << (unsigned)it->valuedouble;
	return 0;
}

static int parse_pair(const struct parse_ctx *c, const cJSON *pair, const char *path,
		      struct rb_shape *s, const char **name, const char **config,
		      unsigned *core_mask)
{
	int64_t k1;
	char what[96];
	int rc;

	if (!cJSON_IsObject(pair))
		return fail(c, "%s must be an object, not %s", path,
			    describe(what, sizeof(what), pair));
	rc = get_matrix(c, pair, path, "src0", &s->m, &s->k);
	if (!rc)
		rc = get_matrix(c, pair, path, "src1", &k1, &s->n);
	if (!rc && k1 != s->k)
		rc = fail(c, "%s.src1.row is %" PRId64 " but src0.col is %" PRId64, path, k1, s->k);
	if (!rc)
		rc = get_dtype(c, pair, path, &s->dtype);
	if (!rc)
		rc = get_config(c, pair, path, config);
	if (!rc)
		rc = get_core(c, pair, path, core_mask);
	if (!rc)
		rc = get_name(c, pair, path, name);
	return rc ? rc : check_spelling(c, pair, path, pair_keys, COUNT_OF(pair_keys));
}

/* Index of the first pair before `before` named `name`, or `before` if none. */
static size_t first_use(const cJSON *pairs, size_t before, const char *name)
{
	const cJSON *pair;
	size_t i = 0;

	cJSON_ArrayForEach(pair, pairs)
	{
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(pair, "name");

		if (i == before)
			break;
		if (cJSON_IsString(it) && strcmp(it->valuestring, name) == 0)
			return i;
		i++;
	}
	return before;
}

static int add_pair(struct parse_ctx *c, size_t i, const struct rb_shape *s, const char *name,
		    const char *config, unsigned core_mask)
{
	const struct rb_shape_entry *e;

	if (!set_has(&c->seen, name)) { /* a new name: nothing to check it against */
		if (add_named(c->list, s, name, config, core_mask) || set_add(&c->seen, name))
			return rb_set_error(-ENOMEM, "%s: out of memory", c->label);
		return 0;
	}
	e = find_name(c->list, name, s);
	char q[80], was[96], now[96];
	size_t first;
	int rc;

	if (e && !rb_shape_equal(&e->shape, s)) {
		rb_json_quote(q, sizeof(q), name, SIZE_MAX, '"');
		fmt_shape(was, sizeof(was), &e->shape);
		fmt_shape(now, sizeof(now), s);
		first = first_use(c->pairs, i, name);
		if (first < i)
			return fail(c, "pairs[%zu].name %s was pairs[%zu] with shape %s, now %s", i,
				    q, first, was, now);
		return fail(c, "pairs[%zu].name %s was already loaded with shape %s, now %s", i, q,
			    was, now);
	}
	rc = rb_shape_list_add_pinned(c->list, s, name, config, core_mask);
	if (rc == -EINVAL) {
		char why[256];

		snprintf(why, sizeof(why), "%s", rb_last_error()); /* fail() rewrites it */
		return fail(c, "pairs[%zu]: %s", i, why);
	}
	return rc ? rb_set_error(rc, "%s: out of memory", c->label) : 0;
}

static int parse_pairs(struct parse_ctx *c, enum rb_dtype dtype)
{
	const cJSON *pair;
	size_t i = 0;

	cJSON_ArrayForEach(pair, c->pairs)
	{
		struct rb_shape s = {.dtype = dtype};
		const char *name = NULL, *config = NULL;
		unsigned core_mask = 0;
		char path[40];
		int rc;

		snprintf(path, sizeof(path), "pairs[%zu]", i);
		rc = parse_pair(c, pair, path, &s, &name, &config, &core_mask);
		if (!rc)
			rc = add_pair(c, i, &s, name, config, core_mask);
		if (rc)
			return rc;
		i++;
	}
	return 0;
}

static int parse_root(struct parse_ctx *c, const cJSON *root)
{
	enum rb_dtype dtype = RB_DTYPE_FP16;
	char what[96];
	int rc;

	if (!cJSON_IsObject(root))
		return fail(c, "top level must be an object like {\"pairs\": [...]}, not %s",
			    describe(what, sizeof(what), root));
	rc = get_dtype(c, root, "", &dtype);
	if (!rc)
		rc = get_field(c, root, "", "pairs", true, &c->pairs);
	if (!rc)
		rc = check_spelling(c, root, "", root_keys, COUNT_OF(root_keys));
	if (rc)
		return rc;
	if (!cJSON_IsArray(c->pairs))
		return fail(c, "pairs must be an array, not %s",
			    describe(what, sizeof(what), c->pairs));
	if (!c->pairs->child)
		return fail(c, "pairs is empty");
	return parse_pairs(c, dtype);
}

int rb_shape_list_load_string(struct rb_shape_list *list, const char *json, size_t len,
			      const char *label)
{
	struct rb_shape_list tmp;
	struct parse_ctx c = {.label = label ? label : "<string>", .list = &tmp};
	cJSON *root = NULL;
	int rc;

	if (!json && len)
		return rb_set_error(-EINVAL, "%s: no data", c.label);
	rc = rb_json_load(json ? json : "", len, c.label, RB_JSON_EMPTY_SHAPES, &root);
	if (rc)
		return rc;
	rc = list_copy(&tmp, list);
	for (size_t i = 0; !rc && i < tmp.count; i++)
		for (size_t j = 0; !rc && j < tmp.entries[i].n_names; j++)
			rc = set_add(&c.seen, tmp.entries[i].names[j]);
	if (rc == -ENOMEM)
		rb_shape_list_release(&tmp);
	if (!rc) {
		rc = parse_root(&c, root);
		if (rc)
			rb_shape_list_release(&tmp);
	}
	free(c.seen.v);
	cJSON_Delete(root);
	if (rc)
		return rc;
	rb_shape_list_release(list);
	*list = tmp;
	return 0;
}

static int load_shapes(void *list, const char *json, size_t len, const char *label)
{
	return rb_shape_list_load_string(list, json, len, label);
}

int rb_shape_list_load_file(struct rb_shape_list *list, const char *path)
{
	return rb_json_load_file_with(path, load_shapes, list);
}
