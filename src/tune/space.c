/* The search space of tune (see tune.h): knob lists, the space file, enumeration. */
#include "tune/tune.h"

#include <cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/error.h"
#include "core/fileio.h"
#include "core/rng.h"
#include "core/util.h"
#include "run/plan_model.h"

static const char *const knob_names[RB_KNOB_COUNT] = {
    "mask", "split", "weights", "align", "banks", "kslice", "res", "chain", "wreuse", "launch",
};

/* The config key each knob sets (launch is not a plan key). */
static const char *const knob_keys[RB_KNOB_COUNT] = {
    "mask", "axis", "weights", "align", "banks", "kslice", "res", "chain", "wreuse", NULL,
};

/* Why these lists: every core mask (0x5 and 0x6 run as one single-core submit per
 * core), both axes, the even split and the weighted splits that put more work on one
 * core, every alignment, the bank splits that trade feature rows for kernels per task,
 * K-slices where K is large enough for them to change the program, every launch mode.
 * A multi-core submit with mask 0x5 or 0x6 never runs on the vendor driver: on a board
 * each such config costs two timeouts and a reset, so they leave the default space
 * (known_failure); a space file naming those masks gets them back.
 * Streamed residency (unproven on silicon) and unchained submits (a fixed cost per
 * task) are opt-in through --space. */
static const char *const default_values[RB_KNOB_COUNT][8] = {
    {"0x1", "0x2", "0x4", "0x3", "0x5", "0x6", "0x7"},
    {"n", "m"},
    {"even", "2,1", "1,2", "2,1,1", "1,2,1", "1,1,2"},
    {"16", "32", "64"},
    {"auto", "1:11", "2:10", "4:8"},
    {"auto", "2048", "4096"},
    {"resident"},
    {"1"},
    {"1"},
    {"fences", "threads", "multicore"},
};

/* What rknn_matmul_api can express (the seed backend's way): single-core contexts on a
 * set of cores, each a range of N cut at multiples of 32 (the backend computes whole
 * 32-column blocks), run by blocking threads, one per context. Banks, K-slices,
 * residency and chaining are librknnrt's choice: the planner's defaults stand in. */
static const char *const api_values[RB_KNOB_COUNT][8] = {
    {"0x1", "0x2", "0x4", "0x3", "0x5", "0x6", "0x7"},
    {"n"},
    {"even", "2,1", "1,2", "2,1,1", "1,2,1", "1,1,2"},
    {"32"},
    {"auto"},
    {"auto"},
    {"resident"},
    {"1"},
    {"1"},
    {"threads"},
};

const char *rb_tune_knob_name(enum rb_tune_knob knob)
{
	return knob < RB_KNOB_COUNT ? knob_names[knob] : "unknown";
}

static bool has_value(const struct rb_tune_space *s, unsigned k, const char *v)
{
	for (unsigned i = 0; i < s->n[k]; i++)
		if (strcmp(s->values[k][i], v) == 0)
			return true;
	return false;
}

/* Appends a value already checked; duplicates are dropped. */
static int add_value(struct rb_tune_space *s, unsigned k, const char *v)
{
	if (has_value(s, k, v))
		return 0;
	if (s->n[k] >= RB_TUNE_MAX_VALUES)
		return rb_set_error(-E2BIG, "at most %d values per knob", RB_TUNE_MAX_VALUES);
	snprintf(s->values[k][s->n[k]++], RB_TUNE_VALUE_LEN, "%s", v);
	return 0;
}

static void space_of(struct rb_tune_space *space, const char *const values[RB_KNOB_COUNT][8])
{
	memset(space, 0, sizeof(*space));
	for (unsigned k = 0; k < RB_KNOB_COUNT; k++)
		for (unsigned i = 0; i < ARRAY_SIZE(values[k]) && values[k][i]; i++)
			add_value(space, k, values[k][i]);
}

void rb_tune_space_default(struct rb_tune_space *space)
{
	space_of(space, default_values);
}

void rb_tune_space_rknn_api(struct rb_tune_space *space)
{
	space_of(space, api_values);
}

void rb_tune_space_no_weight_reuse(struct rb_tune_space *space)
{
	space->n[RB_KNOB_WREUSE] = 1;
	snprintf(space->values[RB_KNOB_WREUSE][0], RB_TUNE_VALUE_LEN, "0");
}

void rb_tune_space_single_core(struct rb_tune_space *space)
{
	static const char *const cores[] = {"0x1", "0x2", "0x4"};

	space->n[RB_KNOB_MASK] = 3;
	for (unsigned i = 0; i < 3; i++)
		snprintf(space->values[RB_KNOB_MASK][i], RB_TUNE_VALUE_LEN, "%s", cores[i]);
}

void rb_tune_space_native_b(struct rb_tune_space *space)
{
	space->native_b_only = true;
}

void rb_tune_space_pin(struct rb_tune_space *space, unsigned core_mask)
{
	space->n[RB_KNOB_MASK] = 1;
	snprintf(space->values[RB_KNOB_MASK][0], RB_TUNE_VALUE_LEN, "0x%x", core_mask);
}

/* Applies one knob value to a point; the same parsers as the CLI flags. */
static int apply_value(struct rb_tune_point *p, unsigned k, const char *v)
{
	if (k == RB_KNOB_LAUNCH)
		return rb_npu_launch_parse(v, &p->launch);
	return rb_plan_config_set(&p->plan, knob_keys[k], v);
}

/* ---- the space file ---- */

static int knob_index(const char *name)
{
	for (unsigned k = 0; k < RB_KNOB_COUNT; k++)
		if (strcmp(knob_names[k], name) == 0)
			return (int)k;
	return -1;
}

/* One list element as text: a string, an integer, or (chain) a boolean. */
static int value_text(const cJSON *item, char *buf, size_t size)
{
	if (cJSON_IsString(item) && strlen(item->valuestring) < size) {
		snprintf(buf, size, "%s", item->valuestring);
		return 0;
	}
	if (cJSON_IsBool(item)) {
		snprintf(buf, size, "%d", cJSON_IsTrue(item) ? 1 : 0);
		return 0;
	}
	if (cJSON_IsNumber(item) && item->valuedouble >= 0 && item->valuedouble < 1e9 &&
	    item->valuedouble == (double)(int64_t)item->valuedouble) {
		snprintf(buf, size, "%" PRId64, (int64_t)item->valuedouble);
		return 0;
	}
	return -EINVAL;
}

static int load_knob(struct rb_tune_space *s, unsigned k, const cJSON *list, const char *label)
{
	struct rb_tune_point probe;
	char text[RB_TUNE_VALUE_LEN], why[512];
	int i = 0;

	if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) == 0)
		return rb_set_error(-EINVAL, "%s: %s must be a non-empty array of values", label,
				    knob_names[k]);
	for (const cJSON *item = list->child; item; item = item->next, i++) {
		if (value_text(item, text, sizeof(text)) < 0)
			return rb_set_error(-EINVAL, "%s: %s[%d] must be a string or a number",
					    label, knob_names[k], i);
		rb_plan_config_init(&probe.plan);
		/* the message is built from the last one: copy it out of its buffer first */
		if (apply_value(&probe, k, text) < 0 || add_value(s, k, text) < 0) {
			snprintf(why, sizeof(why), "%s", rb_last_error());
			return rb_set_error(-EINVAL, "%s: %s[%d]: %s", label, knob_names[k], i,
					    why);
		}
		if (k == RB_KNOB_MASK &&
		    (probe.plan.core_mask == 0x5 || probe.plan.core_mask == 0x6))
			s->keep_known_failures = true; /* asked for by name */
	}
	return 0;
}

static int load_mode(const cJSON *root, const char *label, bool *extend)
{
	const cJSON *mode = cJSON_GetObjectItemCaseSensitive(root, "mode");

	*extend = false;
	if (!mode)
		return 0;
	if (cJSON_IsString(mode) && strcmp(mode->valuestring, "extend") == 0)
		*extend = true;
	else if (!cJSON_IsString(mode) || strcmp(mode->valuestring, "replace") != 0)
		return rb_set_error(-EINVAL, "%s: mode must be \"replace\" or \"extend\"", label);
	return 0;
}

/* Every key must be a knob (or mode), each at most once. */
static int check_keys(const cJSON *root, const char *label)
{
	static const char *const keys[] = {"mode",   "mask", "split", "weights", "align", "banks",
					   "kslice", "res",  "chain", "wreuse",  "launch"};
	const char *typo, *meant;

	if (rb_json_misspelled_key(root, keys, sizeof(keys) / sizeof(keys[0]), &typo, &meant))
		return rb_set_error(-EINVAL, "%s: key '%s' is unknown; did you mean '%s'?", label,
				    typo, meant);
	for (const cJSON *a = root->child; a; a = a->next) {
		if (strcmp(a->string, "mode") != 0 && knob_index(a->string) < 0)
			return rb_set_error(-EINVAL,
					    "%s: key '%s' is unknown; keys are mode, mask, split, "
					    "weights, align, banks, kslice, res, chain, wreuse, "
					    "launch",
					    label, a->string);
		for (const cJSON *b = a->next; b; b = b->next)
			if (strcmp(a->string, b->string) == 0)
				return rb_set_error(-EINVAL, "%s: key '%s' is given twice", label,
						    a->string);
	}
	return 0;
}

static int load_root(struct rb_tune_space *s, const cJSON *root, const char *label)
{
	bool extend;
	int ret;

	if (!cJSON_IsObject(root))
		return rb_set_error(-EINVAL, "%s: the space must be a JSON object of knob lists",
				    label);
	ret = check_keys(root, label);
	if (ret == 0)
		ret = load_mode(root, label, &extend);
	for (unsigned k = 0; ret == 0 && k < RB_KNOB_COUNT; k++) {
		const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, knob_names[k]);

		if (!list)
			continue;
		if (!extend)
			s->n[k] = 0;
		ret = load_knob(s, k, list, label);
	}
	return ret;
}

int rb_tune_space_load_string(struct rb_tune_space *space, const char *json, size_t len,
			      const char *label)
{
	struct rb_tune_space tmp = *space;
	cJSON *root;
	int ret = rb_json_load(json, len, label, "an object of knob lists", &root);

	if (ret < 0)
		return ret;
	ret = load_root(&tmp, root, label);
	cJSON_Delete(root);
	if (ret == 0)
		*space = tmp;
	return ret;
}

int rb_tune_space_load_file(struct rb_tune_space *space, const char *path)
{
	char *data;
	size_t len;
	int ret = rb_file_read(path, &data, &len);

	if (ret < 0)
		return ret;
	ret = rb_tune_space_load_string(space, data, len, path);
	free(data);
	return ret;
}

int rb_tune_space_describe(const struct rb_tune_space *space, char *buf, size_t size)
{
	size_t o = 0;

	buf[0] = '\0';
	for (unsigned k = 0; k < RB_KNOB_COUNT; k++) {
		o += (size_t)snprintf(buf + o, o < size ? size - o : 0, "%s%s=", k ? ";" : "",
				      knob_names[k]);
		for (unsigned i = 0; i < space->n[k]; i++) /* '|': weights hold commas */
			o += (size_t)snprintf(buf + o, o < size ? size - o : 0, "%s%s",
					      i ? "|" : "", space->values[k][i]);
	}
	if (space->keep_known_failures) /* the same lists make another space */
		o += (size_t)snprintf(buf + o, o < size ? size - o : 0, ";known_failures=kept");
	if (space->native_b_only)
		o += (size_t)snprintf(buf + o, o < size ? size - o : 0, ";b_layout=native");
	return o < size ? 0 : rb_set_error(-ENOSPC, "the space description is too long");
}

static uint64_t fnv1a(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

#define FNV_OFFSET UINT64_C(0xcbf29ce484222325)

uint64_t rb_tune_space_combinations(const struct rb_tune_space *space)
{
	uint64_t n = 1;

	for (unsigned k = 0; k < RB_KNOB_COUNT; k++)
		n = space->n[k] && n > UINT64_MAX / space->n[k] ? UINT64_MAX : n * space->n[k];
	return n;
}

uint64_t rb_tune_space_hash(const struct rb_tune_space *space)
{
	char desc[8192]; /* 9 knobs x 32 values x 24 characters fit */

	rb_tune_space_describe(space, desc, sizeof(desc));
	return fnv1a(FNV_OFFSET, desc, strlen(desc));
}

/* ---- enumeration ---- */

static uint64_t hash_u64(uint64_t h, uint64_t v)
{
	return fnv1a(h, &v, sizeof(v));
}

/* The signature without the launch mode: one plan serves every launch mode. */
static uint64_t program_hash(const struct rb_plan *p)
{
	const struct rb_plan_config *c = &p->config;
	uint64_t h = FNV_OFFSET;

	/* Cores without tasks take no part: mask 0x7 cutting M = 1 is mask 0x4. */
	for (unsigned i = 0; i < p->n_cores; i++) {
		if (!p->cores[i].n_tasks)
			continue;
		h = hash_u64(h, p->cores[i].core);
		h = hash_u64(h, p->cores[i].begin);
		h = hash_u64(h, p->cores[i].end);
	}
	h = hash_u64(h, c->axis);
	h = hash_u64(h, (uint64_t)c->data_banks << 32 | c->weight_banks);
	h = hash_u64(h, (uint64_t)p->k_slice << 32 | p->n_kslices);
	h = hash_u64(h, (uint64_t)p->m_cap << 32 | p->n_cap);
	h = hash_u64(h, (uint64_t)c->chain << 16 | (uint64_t)c->out << 8 | c->mainline);
	return hash_u64(h, p->weight_reuse); /* whether a task reuses, not the knob */
}

uint64_t rb_tune_plan_signature(const struct rb_plan *p, enum rb_npu_launch launch)
{
	return hash_u64(program_hash(p), launch);
}

static unsigned popcount3(unsigned x)
{
	return (x & 1) + (x >> 1 & 1) + (x >> 2 & 1);
}

/* Builds the point of one combination; 1 if it is in the space, 0 if not, <0 error. */
/* A config that never runs: the vendor driver's multi-core submit takes masks 0x3
 * and 0x7 only. */
static bool known_failure(const struct rb_tune_point *p)
{
	return p->launch == RB_LAUNCH_MULTICORE &&
	       (p->plan.core_mask == 0x5 || p->plan.core_mask == 0x6);
}

static int make_point(const struct rb_tune_space *s, const unsigned idx[RB_KNOB_COUNT],
		      struct rb_tune_point *p)
{
	memset(p, 0, sizeof(*p));
	rb_plan_config_init(&p->plan);
	p->launch = RB_LAUNCH_FENCES;
	for (unsigned k = 0; k < RB_KNOB_COUNT; k++)
		if (apply_value(p, k, s->values[k][idx[k]]) < 0)
			return -EINVAL;
	if (p->plan.n_weights && p->plan.n_weights != popcount3(p->plan.core_mask))
		return 0;
	if (!s->keep_known_failures && known_failure(p))
		return 0;
	rb_plan_config_format(&p->plan, p->text, sizeof(p->text));
	return 1;
}

struct seen {
	uint64_t *sigs;
	size_t count;
	/* The last config planned and what came of it: the launch mode is the last knob, so
	 * the combinations of one plan follow each other and it is planned once. */
	bool have_last, last_ok, last_native;
	struct rb_plan_config last;
	uint64_t last_hash;
	double last_host_us; /* the host work of its result (rb_tune_host_us) */
	size_t last_tasks;   /* of its program */
	/* its device time per launch mode in the plan model (run/plan_model.h) */
	double last_estimate[RB_PLAN_RANK_LAUNCHES];
	const struct rb_soc_profile *soc;
};

static bool seen_has(const struct seen *seen, uint64_t sig)
{
	for (size_t i = 0; i < seen->count; i++)
		if (seen->sigs[i] == sig)
			return true;
	return false;
}

/* The plan model's times: a few hundred task timings per launch mode, where the
 * emulator runs every task's program. */
static void estimate(struct seen *seen, const struct rb_plan *plan)
{
	for (int l = 0; l < RB_PLAN_RANK_LAUNCHES; l++)
		seen->last_estimate[l] = NAN;
	if (rb_plan_model_launches((void *)seen->soc, plan, (1u << RB_PLAN_RANK_LAUNCHES) - 1,
				   seen->last_estimate) < 0)
		for (int l = 0; l < RB_PLAN_RANK_LAUNCHES; l++)
			seen->last_estimate[l] = NAN; /* no estimate: never skipped */
}

/* Plans the point; keeps it when the planner accepts it and its program is new. */
static int consider(const struct rb_tune_space *s, struct rb_tune_points *pts, struct seen *seen,
		    const struct rb_shape *shape, const struct rb_tune_point *p)
{
	uint64_t sig;

	if (!seen->have_last || !rb_plan_config_equal(&seen->last, &p->plan)) {
		struct rb_plan plan;

		seen->have_last = true;
		seen->last = p->plan;
		seen->last_ok = rb_plan_init(&plan, shape, &p->plan) == 0;
		if (seen->last_ok) {
			seen->last_native = rb_plan_native_b(&plan);
			seen->last_hash = program_hash(&plan);
			seen->last_host_us = rb_tune_host_us(&plan);
			seen->last_tasks = plan.n_tasks;
			estimate(seen, &plan);
		}
		rb_plan_release(&plan);
	}
	if (!seen->last_ok) {
		pts->rejected++;
		return 0;
	}
	if (s->native_b_only && !seen->last_native) {
		pts->not_native++;
		return 0;
	}
	sig = hash_u64(seen->last_hash, p->launch);
	if (seen_has(seen, sig)) {
		pts->duplicates++;
		return 0;
	}
	pts->items[pts->count] = *p;
	pts->items[pts->count].index = pts->count;
	pts->items[pts->count].host_us = seen->last_host_us;
	pts->items[pts->count].tasks = seen->last_tasks;
	pts->items[pts->count].estimate_us =
	    p->launch < RB_PLAN_RANK_LAUNCHES ? seen->last_estimate[p->launch] : NAN;
	pts->count++;
	seen->sigs[seen->count++] = sig;
	return 0;
}

/* Next combination, last knob fastest; false when every one was visited. */
static bool next_index(const struct rb_tune_space *s, unsigned idx[RB_KNOB_COUNT])
{
	for (int k = RB_KNOB_COUNT - 1; k >= 0; k--) {
		if (++idx[k] < s->n[k])
			return true;
		idx[k] = 0;
	}
	return false;
}

static size_t combinations(const struct rb_tune_space *s)
{
	size_t total = 1;

	for (unsigned k = 0; k < RB_KNOB_COUNT; k++)
		total *= s->n[k];
	return total;
}

int rb_tune_space_enumerate(const struct rb_tune_space *space, const struct rb_shape *shape,
			    struct rb_tune_points *pts)
{
	return rb_tune_space_enumerate_on(space, shape, NULL, pts);
}

int rb_tune_space_enumerate_on(const struct rb_tune_space *space, const struct rb_shape *shape,
			       const struct rb_soc_profile *soc, struct rb_tune_points *pts)
{
	unsigned idx[RB_KNOB_COUNT] = {0};
	size_t total = combinations(space);
	struct seen seen = {.sigs = calloc(total ? total : 1, sizeof(uint64_t)), .soc = soc};
	struct rb_tune_point p;
	int ret = 0;

	memset(pts, 0, sizeof(*pts));
	pts->items = calloc(total ? total : 1, sizeof(*pts->items));
	if (!pts->items || !seen.sigs) {
		free(seen.sigs);
		rb_tune_points_release(pts);
		return rb_set_error(-ENOMEM, "out of memory for %zu configs", total);
	}
	for (bool more = total > 0; more && ret == 0; more = next_index(space, idx)) {
		ret = make_point(space, idx, &p);
		if (ret == 1)
			ret = consider(space, pts, &seen, shape, &p);
	}
	free(seen.sigs);
	if (ret < 0)
		rb_tune_points_release(pts);
	return ret;
}

void rb_tune_points_release(struct rb_tune_points *pts)
{
	free(pts->items);
	memset(pts, 0, sizeof(*pts));
}

size_t *rb_tune_shuffle(size_t n, uint64_t seed)
{
	size_t *order = calloc(n ? n : 1, sizeof(*order));
	struct rb_rng rng;

	if (!order)
		return NULL;
	rb_rng_init(&rng, seed);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)rb_rng_range(&rng, 0, (int64_t)i - 1), t = order[i - 1];

		order[i - 1] = order[j];
		order[j] = t;
	}
	return order;
}
