/* rknn-bench merge (merge.h): the shards' tuned JSONs joined into one, per board and
 * across boards, with the totals of the whole tune; optionally their caches too. */
#include "tune/merge.h"

#include <cJSON.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json.h"
#include "results/totals.h"
#include "rknn_bench/shape.h"
#include "rknn_bench/tuned.h"
#include "tune/shard.h"
#include "tune/tune.h"

struct input {
	const char *path;
	cJSON *root;
	const cJSON *shard, *pairs, *work;
	unsigned index, count;
	const char *host;
	size_t board;
	bool duplicate;
};

struct merge {
	const struct rb_merge_opts *o;
	struct rb_merge_result *res;
	struct input *in; /* sorted by host, then shard index */
	size_t n;
	const char **hosts;
	size_t n_hosts;
};

static void note(const struct merge *m, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	if (!m->o->note)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	m->o->note(m->o->note_ctx, text);
}

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

/* ---- reading and checking the inputs ---- */

static bool whole_in(const cJSON *o, const char *key, double lo, double hi)
{
	double v = num(o, key);

	return v >= lo && v <= hi && v == floor(v);
}

/* What merge reads besides the compared keys: the pairs' dimensions and the work list. */
static int check_fields(const struct input *in)
{
	size_t i = 0;

	for (const cJSON *p = in->pairs->child; p; p = p->next, i++)
		if (!cJSON_IsString(get(p, "name")) ||
		    !whole_in(get(p, "src0"), "row", 1, (double)RB_SHAPE_DIM_MAX) ||
		    !whole_in(get(p, "src0"), "col", 1, (double)RB_SHAPE_DIM_MAX) ||
		    !whole_in(get(p, "src1"), "col", 1, (double)RB_SHAPE_DIM_MAX))
			return rb_set_error(-EINVAL,
					    "'%s': pairs[%zu] needs a name and src0.row, src0.col, "
					    "src1.col in 1..%lld",
					    in->path, i, (long long)RB_SHAPE_DIM_MAX);
	i = 0;
	for (const cJSON *w = in->work->child; w; w = w->next, i++)
		if (!str(w, "shape") || !whole_in(w, "slices", 1, RB_TUNE_MAX_SHARDS) ||
		    !whole_in(w, "slice", 0, num(w, "slices") - 1))
			return rb_set_error(-EINVAL,
					    "'%s': shard.work[%zu] needs a shape and 0 <= slice < "
					    "slices <= %u",
					    in->path, i, RB_TUNE_MAX_SHARDS);
	return 0;
}

static int load_input(struct input *in)
{
	int ret = rb_json_load_file(in->path, 0, "a tuned JSON of a shard", &in->root);

	if (ret < 0)
		return ret;
	if (!cJSON_IsString(get(in->root, "schema")) ||
	    strcmp(str(in->root, "schema"), RB_TUNED_SCHEMA) != 0 ||
	    !cJSON_IsArray(get(in->root, "pairs")))
		return rb_set_error(-EINVAL, "'%s' is not a tuned JSON (schema %s)", in->path,
				    RB_TUNED_SCHEMA);
	in->pairs = get(in->root, "pairs");
	in->shard = get(in->root, "shard");
	if (!cJSON_IsObject(in->shard))
		return rb_set_error(-EINVAL,
				    "'%s' is not a shard (it has no \"shard\" object): merge joins "
				    "the outputs of tune --shard I/N",
				    in->path);
	in->host = str(in->shard, "host");
	in->work = get(in->shard, "work");
	if (!whole_in(in->shard, "count", 1, RB_TUNE_MAX_SHARDS) ||
	    !whole_in(in->shard, "index", 1, num(in->shard, "count")) || !in->host ||
	    !cJSON_IsArray(in->work))
		return rb_set_error(-EINVAL,
				    "'%s': shard needs count 1..%u, index 1..count, host and work",
				    in->path, RB_TUNE_MAX_SHARDS);
	in->index = (unsigned)num(in->shard, "index");
	in->count = (unsigned)num(in->shard, "count");
	return check_fields(in);
}

/* The keys every input must share (at the top level, then in "shard"). */
static const char *const same_top[] = {
    "schema",   "tool_version", "device", "modeled", "driver", "soc",
    "strategy", "target",       "space",  "measure", "search", "unsafe_skip_validation",
};
static const char *const same_shard[] = {"count", "cpu"};
/* What identifies a pair: the rest is the tune's. */
static const char *const pair_keys[] = {"name", "src0", "src1", "dtype"};

static int differ(const char *what, const struct input *a, const cJSON *va, const struct input *b,
		  const cJSON *vb)
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

static int same_key(const struct input *a, const cJSON *oa, const struct input *b, const cJSON *ob,
		    const char *key, const char *what)
{
	const cJSON *va = get(oa, key), *vb = get(ob, key);

	if ((!va && !vb) || (va && vb && cJSON_Compare(va, vb, true)))
		return 0;
	return differ(what, a, va, b, vb);
}

static int same_pairs(const struct input *a, const struct input *b)
{
	char what[96];
	size_t i = 0;

	if (cJSON_GetArraySize(a->pairs) != cJSON_GetArraySize(b->pairs))
		return rb_set_error(-EINVAL,
				    "'%s' has %d pairs, '%s' has %d: the shards of one tune share "
				    "the shapes file",
				    b->path, cJSON_GetArraySize(b->pairs), a->path,
				    cJSON_GetArraySize(a->pairs));
	for (const cJSON *pa = a->pairs->child, *pb = b->pairs->child; pa && pb;
	     pa = pa->next, pb = pb->next, i++)
		for (size_t k = 0; k < sizeof(pair_keys) / sizeof(pair_keys[0]); k++) {
			snprintf(what, sizeof(what), "pairs[%zu].%s", i, pair_keys[k]);
			if (same_key(a, pa, b, pb, pair_keys[k], what) < 0)
				return -EINVAL;
		}
	return 0;
}

/* Every input against the first given. */
static int check_same(const struct input *in, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		for (size_t k = 0; k < sizeof(same_top) / sizeof(same_top[0]); k++)
			if (same_key(&in[0], in[0].root, &in[i], in[i].root, same_top[k],
				     same_top[k]) < 0)
				return -EINVAL;
		for (size_t k = 0; k < sizeof(same_shard) / sizeof(same_shard[0]); k++) {
			char what[32];

			snprintf(what, sizeof(what), "shard.%s", same_shard[k]);
			if (same_key(&in[0], in[0].shard, &in[i], in[i].shard, same_shard[k],
				     what) < 0)
				return -EINVAL;
		}
		if (same_key(&in[0], get(in[0].root, "context"), &in[i], get(in[i].root, "context"),
			     "tool_commit", "context.tool_commit") < 0 ||
		    same_pairs(&in[0], &in[i]) < 0)
			return -EINVAL;
	}
	return 0;
}

static int by_host_index(const void *a, const void *b)
{
	const struct input *x = a, *y = b;
	int c = strcmp(x->host, y->host);

	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Sorts the inputs, drops repeats, numbers the boards. */
static int group(struct merge *m)
{
	qsort(m->in, m->n, sizeof(*m->in), by_host_index);
	m->hosts = calloc(m->n ? m->n : 1, sizeof(*m->hosts));
	if (!m->hosts)
		return rb_set_error(-ENOMEM, "out of memory");
	for (size_t i = 0; i < m->n; i++) {
		struct input *a = &m->in[i], *prev = i ? &m->in[i - 1] : NULL;

		if (prev && !strcmp(prev->host, a->host) && prev->index == a->index) {
			if (!cJSON_Compare(prev->pairs, a->pairs, true))
				return rb_set_error(-EINVAL,
						    "'%s' and '%s' are both shard %u/%u of host "
						    "'%s' with other results: give one of them",
						    prev->path, a->path, a->index, a->count,
						    a->host);
			a->duplicate = true;
			a->board = prev->board;
			m->res->duplicates++;
			note(m, "'%s' repeats '%s' (shard %u/%u of host '%s'): counted once",
			     a->path, prev->path, a->index, a->count, a->host);
			continue;
		}
		if (!prev || strcmp(prev->host, a->host) != 0)
			m->hosts[m->n_hosts++] = a->host;
		a->board = m->n_hosts - 1;
	}
	return 0;
}

/* Each board brings shards 1..N. */
static int check_complete(const struct merge *m)
{
	unsigned count = m->in[0].count;

	for (size_t b = 0; b < m->n_hosts; b++) {
		char missing[512] = "";
		size_t len = 0, n_missing = 0;

		for (unsigned idx = 1; idx <= count; idx++) {
			bool have = false;

			for (size_t i = 0; i < m->n && !have; i++)
				have = m->in[i].board == b && m->in[i].index == idx;
			if (have)
				continue;
			n_missing++;
			if (len < sizeof(missing) - 16)
				len += (size_t)snprintf(missing + len, sizeof(missing) - len,
							"%s%u", n_missing > 1 ? ", " : "", idx);
		}
		if (n_missing)
			return rb_set_error(-ENOENT,
					    "host '%s': shard%s %s of %u missing: merge needs "
					    "every shard of a tune",
					    m->hosts[b], n_missing > 1 ? "s" : "", missing, count);
	}
	return 0;
}

/* ---- one pair ---- */

static void pair_key(const cJSON *root, const cJSON *pair, char *buf, size_t size)
{
	const char *dt = str(pair, "dtype") ? str(pair, "dtype") : str(root, "dtype");

	snprintf(buf, size, "%lldx%lldx%lld %s", (long long)num(get(pair, "src0"), "row"),
		 (long long)num(get(pair, "src0"), "col"), (long long)num(get(pair, "src1"), "col"),
		 dt ? dt : "fp16");
}

/* The slice input in tunes of the shape (key), or -1. */
static int slice_of(const struct input *in, const char *key, unsigned *slices)
{
	for (const cJSON *w = in->work->child; w; w = w->next)
		if (str(w, "shape") && strcmp(str(w, "shape"), key) == 0) {
			*slices = (unsigned)num(w, "slices");
			return (int)num(w, "slice");
		}
	return -1;
}

/* One board's result for one pair: the slices of the shape joined. */
struct board_pick {
	const cJSON *tuned, *api; /* borrowed from the winning slices (NULL: none) */
	cJSON *measured;          /* owned */
	double us, api_us;        /* device time */
	double host_us;           /* the tuned config's modeled host part */
};

/* The modeled host part a config object carries (0 for a file written before it did):
 * tune ranks by device + host time, and so does merge. */
static double host_of(const cJSON *o)
{
	double h = num(o, "host_us");

	return isfinite(h) ? h : 0;
}

static double host_of_default(const cJSON *measured)
{
	double h = num(measured, "default_host_us");

	return isfinite(h) ? h : 0;
}

static void sum_counts(cJSON *into, const cJSON *from)
{
	static const char *const counts[] = {"configs_in_space", "configs_modeled", "configs_run",
					     "configs_failed", "configs_not_run"};

	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		cJSON *v = cJSON_GetObjectItemCaseSensitive(into, counts[k]);

		if (cJSON_IsNumber(v) && isfinite(num(from, counts[k])))
			cJSON_SetNumberValue(v, v->valuedouble + num(from, counts[k]));
	}
}

static void replace_num(cJSON *o, const char *key, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* Sets the time of a measured object and what derives from it (rates scale with it;
 * the ratios are of device + host times, as tune writes them). */
static void set_time(cJSON *measured, double us, double host)
{
	double total = us + host;

	double old = num(measured, "median_us");
	static const char *const rates[] = {"gflops", "gbps", "gbps_b"};

	for (size_t k = 0; k < 3; k++)
		if (isfinite(old) && isfinite(us) && us != old)
			replace_num(measured, rates[k], num(measured, rates[k]) * old / us);
	if (!(us == old))
		replace_num(measured, "median_us", us);
	replace_num(measured, "device_us", us);
	replace_num(measured, "host_us", host);
	replace_num(measured, "total_us", total);
	replace_num(measured, "default_total_us",
		    num(measured, "default_us") + host_of_default(measured));
	replace_num(measured, "speedup_vs_default", num(measured, "default_total_us") / total);
	replace_num(measured, "speedup_vs_backend", num(measured, "backend_split_us") / total);
	replace_num(measured, "speedup_vs_cpu", num(measured, "cpu_us") / us);
}

/* Whether a slice's winner (meas) beats the best so far (us, of best): faster, or as
 * fast and first in the order the unsharded tune would have met them: the default
 * config (run first), then by enumeration index (the model strategy runs equal times in
 * that order; on the emulator the model's time is the measured one). */
static bool beats(const cJSON *meas, const cJSON *tuned, double us, const cJSON *best)
{
	double t = num(meas, "median_us") + host_of(tuned);

	if (!best || t < us)
		return true;
	if (t > us)
		return false;
	if (cJSON_IsTrue(get(meas, "default_won")) != cJSON_IsTrue(get(best, "default_won")))
		return cJSON_IsTrue(get(meas, "default_won"));
	return num(meas, "config_index") < num(best, "config_index");
}

/* The slices of one board: slice 0's baselines, the fastest tuned and API configs. */
static int pick_board(const struct merge *m, size_t b, size_t p, const char *key,
		      struct board_pick *out)
{
	const cJSON *slice0 = NULL, *best_meas = NULL, *mine[RB_TUNE_MAX_SHARDS] = {0};
	unsigned slices = 0, got = 0;

	memset(out, 0, sizeof(*out));
	out->us = out->api_us = NAN;
	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];
		unsigned n_sl = 0;
		int s = in->duplicate || in->board != b ? -1 : slice_of(in, key, &n_sl);
		const cJSON *pair = cJSON_GetArrayItem(in->pairs, (int)p);
		const cJSON *meas = get(pair, "measured"), *tu = get(pair, "tuned");
		const cJSON *api = get(pair, "rknn_matmul_api");

		if (s < 0)
			continue;
		if (n_sl == 0 || n_sl > sizeof(mine) / sizeof(mine[0]) || (unsigned)s >= n_sl ||
		    (slices && n_sl != slices) || mine[s] || !cJSON_IsObject(meas))
			return rb_set_error(
			    -EINVAL,
			    "'%s': pairs[%zu] (%s): slice %d of %u does not fit the "
			    "other shards' slices of the shape, or has no result",
			    in->path, p, key, s, n_sl);
		slices = n_sl;
		mine[s] = meas;
		got++;
		if (s == 0)
			slice0 = meas;
		if (cJSON_IsObject(tu) && isfinite(num(meas, "median_us")) &&
		    beats(meas, tu, out->us + out->host_us, best_meas))
			out->tuned = tu, out->us = num(meas, "median_us"),
			out->host_us = host_of(tu), best_meas = meas;
		if (cJSON_IsObject(api) && !(num(api, "median_us") >= out->api_us))
			out->api = api, out->api_us = num(api, "median_us");
	}
	if (!slices || got != slices)
		return rb_set_error(-ENOENT,
				    "host '%s': no shard has %s (pair %zu) %s: a shard is missing "
				    "or was cut short",
				    m->hosts[b], key, p,
				    slices ? "in every slice of its space" : "");
	out->measured = cJSON_Duplicate(slice0, true);
	for (unsigned s = 1; out->measured && s < slices; s++)
		sum_counts(out->measured, mine[s]);
	if (out->measured)
		set_time(out->measured, out->us, out->host_us);
	return out->measured ? 0 : rb_set_error(-ENOMEM, "out of memory");
}

static double median_of(double *v, size_t n)
{
	for (size_t i = 1; i < n; i++) /* insertion sort: a few boards */
		for (size_t j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	if (!n)
		return NAN;
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* "config|launch" of a tuned or API object, for counting the boards' choices. */
static void choice(const cJSON *o, char *buf, size_t size)
{
	snprintf(buf, size, "%s|%s", o && str(o, "config") ? str(o, "config") : "",
		 o && str(o, "launch") ? str(o, "launch") : "");
}

/* The choice most boards made (ties: the lower median time, then the text). */
static size_t majority(const struct board_pick *bp, size_t n, bool api)
{
	size_t best = SIZE_MAX, best_votes = 0;
	double best_us = NAN;
	char a[320], b[320];

	for (size_t i = 0; i < n; i++) {
		const cJSON *oi = api ? bp[i].api : bp[i].tuned;
		double v[64];
		size_t votes = 0;

		if (!oi)
			continue;
		choice(oi, a, sizeof(a));
		for (size_t j = 0; j < n; j++) {
			const cJSON *oj = api ? bp[j].api : bp[j].tuned;

			choice(oj, b, sizeof(b));
			if (oj && strcmp(a, b) == 0 && votes < 64)
				v[votes++] = api ? bp[j].api_us : bp[j].us;
		}
		if (best == SIZE_MAX || votes > best_votes ||
		    (votes == best_votes && median_of(v, votes) < best_us)) {
			best = i;
			best_votes = votes;
			best_us = median_of(v, votes);
		}
	}
	return best;
}

/* The medians over the boards that chose bp[w]'s config, and their spread in %. */
static double boards_median(const struct board_pick *bp, size_t n, size_t w, bool api,
			    double *spread)
{
	double v[64], lo = INFINITY, hi = -INFINITY, med;
	size_t k = 0;
	char a[320], b[320];

	choice(api ? bp[w].api : bp[w].tuned, a, sizeof(a));
	for (size_t j = 0; j < n && k < 64; j++) {
		const cJSON *oj = api ? bp[j].api : bp[j].tuned;
		double us = api ? bp[j].api_us : bp[j].us;

		choice(oj, b, sizeof(b));
		if (!oj || strcmp(a, b) != 0)
			continue;
		v[k++] = us;
		lo = us < lo ? us : lo;
		hi = us > hi ? us : hi;
	}
	med = median_of(v, k);
	*spread = k > 1 ? (hi - lo) / med * 100 : 0;
	return med;
}

static double baseline_median(const struct board_pick *bp, size_t n, const char *key)
{
	double v[64];
	size_t k = 0;

	for (size_t j = 0; j < n && k < 64; j++)
		if (isfinite(num(bp[j].measured, key)))
			v[k++] = num(bp[j].measured, key);
	return median_of(v, k);
}

/* Boards whose tuned config is not bp[w]'s. */
static size_t other_choices(const struct board_pick *bp, size_t n, size_t w)
{
	char a[320], b[320];
	size_t others = 0;

	choice(w == SIZE_MAX ? NULL : bp[w].tuned, a, sizeof(a));
	for (size_t j = 0; j < n; j++) {
		choice(bp[j].tuned, b, sizeof(b));
		others += strcmp(a, b) != 0;
	}
	return others;
}

/* Several boards: the majority config at the median time; every board's choice kept. */
static void join_boards(const struct merge *m, struct board_pick *bp, size_t n, const char *key,
			struct board_pick *out)
{
	size_t w = majority(bp, n, false), wa = majority(bp, n, true);
	double spread = 0;
	cJSON *boards;

	*out = (struct board_pick){.us = NAN, .api_us = NAN};
	out->measured = cJSON_Duplicate(bp[w == SIZE_MAX ? 0 : w].measured, true);
	replace_num(out->measured, "default_us", baseline_median(bp, n, "default_us"));
	replace_num(out->measured, "cpu_us", baseline_median(bp, n, "cpu_us"));
	if (w != SIZE_MAX) {
		out->tuned = bp[w].tuned;
		out->us = boards_median(bp, n, w, false, &spread);
		out->host_us = bp[w].host_us;
	}
	set_time(out->measured, out->us, out->host_us);
	if (wa != SIZE_MAX) {
		double api_spread;

		out->api = bp[wa].api;
		out->api_us = boards_median(bp, n, wa, true, &api_spread);
	}
	replace_num(out->measured, "board_spread_pct", spread);
	boards = cJSON_AddArrayToObject(out->measured, "boards");
	for (size_t j = 0; boards && j < n; j++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddItemToArray(boards, o);
		cJSON_AddStringToObject(o, "host", m->hosts[j]);
		cJSON_AddStringToObject(o, "config", bp[j].tuned ? str(bp[j].tuned, "config") : "");
		cJSON_AddStringToObject(o, "launch", bp[j].tuned ? str(bp[j].tuned, "launch") : "");
		replace_num(o, "median_us", bp[j].us);
	}
	if (spread > m->o->spread_pct || other_choices(bp, n, w)) {
		m->res->disagree++;
		note(m,
		     "%s: the boards disagree (%zu chose another config; the times of the kept one "
		     "spread by %.1f %%, the limit is %.1f %%): the majority config at its median "
		     "time is kept",
		     key, other_choices(bp, n, w), spread, m->o->spread_pct);
	}
}

/* Replaces a pair's tune results with the merged ones. */
static void put_pair(cJSON *pair, const struct board_pick *r)
{
	cJSON *api = r->api ? cJSON_Duplicate(r->api, true) : NULL;

	cJSON_DeleteItemFromObjectCaseSensitive(pair, "tuned");
	cJSON_DeleteItemFromObjectCaseSensitive(pair, "measured");
	cJSON_DeleteItemFromObjectCaseSensitive(pair, "rknn_matmul_api");
	cJSON_AddItemToObject(pair, "tuned",
			      r->tuned ? cJSON_Duplicate(r->tuned, true) : cJSON_CreateNull());
	cJSON_DeleteItemFromObjectCaseSensitive(r->measured, "config_index"); /* a shard's */
	cJSON_DeleteItemFromObjectCaseSensitive(r->measured, "default_won");
	cJSON_AddItemToObject(pair, "measured", r->measured);
	if (api) {
		double api_total = r->api_us + host_of(api);

		if (!(num(api, "median_us") == r->api_us))
			replace_num(api, "median_us", r->api_us);
		replace_num(api, "total_us", api_total);
		replace_num(api, "best_overall_us", r->us + r->host_us);
		replace_num(api, "best_overall_speedup", api_total / (r->us + r->host_us));
		replace_num(api, "gain_vs_backend", num(api, "backend_split_us") / api_total);
	}
	cJSON_AddItemToObject(pair, "rknn_matmul_api", api ? api : cJSON_CreateNull());
}

static int merge_pair(const struct merge *m, const cJSON *root, cJSON *pair, size_t p)
{
	struct board_pick *bp = calloc(m->n_hosts ? m->n_hosts : 1, sizeof(*bp)), r;
	char key[96];
	int ret = bp ? 0 : rb_set_error(-ENOMEM, "out of memory");

	pair_key(root, pair, key, sizeof(key));
	for (size_t b = 0; ret == 0 && b < m->n_hosts; b++)
		ret = pick_board(m, b, p, key, &bp[b]);
	if (ret == 0) {
		if (m->n_hosts == 1) {
			r = bp[0];
			bp[0].measured = NULL;
		} else {
			join_boards(m, bp, m->n_hosts, key, &r);
		}
		put_pair(pair, &r);
		m->res->untuned += r.tuned == NULL;
	}
	for (size_t b = 0; bp && b < m->n_hosts; b++)
		cJSON_Delete(bp[b].measured);
	free(bp);
	return ret;
}

/* ---- the document ---- */

/* A pair's time for totals entry w (default, tuned, rknn_matmul_api, backend): device +
 * host, as tune sums them. */
static double pair_total(const cJSON *p, int w)
{
	const cJSON *meas = get(p, "measured"), *api = get(p, "rknn_matmul_api");

	if (w == 0)
		return num(meas, "default_us") + host_of_default(meas);
	if (w == 1)
		return cJSON_IsObject(get(p, "tuned"))
			   ? num(meas, "median_us") + host_of(get(p, "tuned"))
			   : NAN;
	if (w == 2)
		return num(api, "median_us") + host_of(api);
	return num(api, "backend_split_us");
}

/* Per model, as tune sums them: each pair once, a prompt with the M = 1 pairs of its
 * output row (results/totals.h). */
static cJSON *totals(const cJSON *root, const cJSON *pairs)
{
	static const char *const names[] = {"default", "tuned", "rknn_matmul_api", "backend"};
	size_t n = (size_t)cJSON_GetArraySize(pairs);
	struct rb_total_pair *items = calloc(n ? n : 1, sizeof(*items));
	cJSON *o = cJSON_CreateObject();

	cJSON_AddBoolToObject(o, "modeled", cJSON_IsTrue(get(root, "modeled")));
	cJSON_AddStringToObject(o, "sums", "device + host time per pair");
	for (int w = 0; items && w < 4; w++) {
		struct rb_total sums[RB_TOTALS_MAX];
		size_t i = 0;

		for (const cJSON *p = pairs->child; p; p = p->next)
			items[i++] = (struct rb_total_pair){cJSON_GetStringValue(get(p, "name")),
							    (int64_t)num(get(p, "src0"), "row"),
							    pair_total(p, w)};
		cJSON_AddItemToObject(
		    o, names[w],
		    rb_totals_json(sums, rb_totals_sum_pairs(items, i, sums, RB_TOTALS_MAX)));
	}
	free(items);
	return o;
}

/* Where the shards ran: one entry per board. */
static cJSON *provenance(const struct merge *m)
{
	cJSON *o = cJSON_CreateObject(), *boards;

	cJSON_AddNumberToObject(o, "shards", m->in[0].count);
	boards = cJSON_AddArrayToObject(o, "boards");
	for (size_t b = 0; b < m->n_hosts; b++) {
		cJSON *e = cJSON_CreateObject();

		for (size_t i = 0; i < m->n; i++)
			if (m->in[i].board == b && !m->in[i].duplicate) {
				cJSON_AddStringToObject(e, "host", m->hosts[b]);
				cJSON_AddStringToObject(
				    e, "cpu",
				    str(m->in[i].shard, "cpu") ? str(m->in[i].shard, "cpu") : "");
				cJSON_AddStringToObject(e, "kernel",
							str(m->in[i].shard, "kernel")
							    ? str(m->in[i].shard, "kernel")
							    : "");
				break;
			}
		cJSON_AddItemToArray(boards, e);
	}
	return o;
}

/* The latest "generated" of the inputs: the output depends on the inputs alone. */
static const char *latest(const struct merge *m)
{
	const char *last = "";

	for (size_t i = 0; i < m->n; i++) {
		const char *g = str(m->in[i].root, "generated");

		if (g && strcmp(g, last) > 0)
			last = g;
	}
	return last;
}

static int build(struct merge *m, cJSON **out)
{
	cJSON *doc = cJSON_Duplicate(m->in[0].root, true);
	cJSON *pairs = doc ? cJSON_DetachItemFromObjectCaseSensitive(doc, "pairs") : NULL;
	size_t p = 0;
	int ret = doc && pairs ? 0 : rb_set_error(-ENOMEM, "out of memory");

	for (cJSON *pair = pairs ? pairs->child : NULL; ret == 0 && pair; pair = pair->next, p++)
		ret = merge_pair(m, doc, pair, p);
	if (ret == 0) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "shard");
		cJSON_DeleteItemFromObjectCaseSensitive(doc, "generated");
		cJSON_AddStringToObject(doc, "generated", latest(m));
		cJSON_AddItemToObject(doc, "merged", provenance(m));
		cJSON_AddItemToObject(doc, "totals", totals(doc, pairs));
		cJSON_AddItemToObject(doc, "pairs", pairs);
		m->res->pairs = p;
		*out = doc;
		return 0;
	}
	cJSON_Delete(pairs);
	cJSON_Delete(doc);
	return ret;
}

/* ---- caches ---- */

/* The cache a shard recorded: a bare name lies beside the shard's JSON. */
static void cache_path(const struct input *in, char *buf, size_t size)
{
	const char *where = str(in->shard, "cache"), *slash = strrchr(in->path, '/');

	if (!where || where[0] == '/' || !slash)
		snprintf(buf, size, "%s", where ? where : "");
	else
		snprintf(buf, size, "%.*s/%s", (int)(slash - in->path), in->path, where);
}

int rb_merge_shard_cache(const char *shard_path, char *buf, size_t size)
{
	struct input in = {.path = shard_path};
	int ret = load_input(&in);

	if (ret == 0)
		cache_path(&in, buf, size);
	cJSON_Delete(in.root);
	return ret < 0 ? ret : buf[0] ? 0 : -ENOENT;
}

struct tagged {
	struct rb_tune_record r;
	size_t board, order;
};

static int by_record(const void *a, const void *b)
{
	const struct tagged *x = a, *y = b;
	int c = (int)x->r.kind - (int)y->r.kind;

	if (!c)
		c = strcmp(x->r.shape, y->r.shape);
	if (!c)
		c = strcmp(x->r.config, y->r.config);
	if (!c)
		c = strcmp(x->r.launch, y->r.launch);
	if (!c)
		c = x->order < y->order ? -1 : x->order > y->order;
	return c;
}

static bool same_record(const struct rb_tune_record *a, const struct rb_tune_record *b)
{
	return a->kind == b->kind && !strcmp(a->shape, b->shape) && !strcmp(a->config, b->config) &&
	       !strcmp(a->launch, b->launch);
}

/* One record per config: a board's first (its lowest shard, as the tuned JSON takes the
 * baselines of slice 0), and across boards the median of their times. */
static size_t join_records(struct tagged *t, size_t n, struct rb_tune_record *out)
{
	size_t kept = 0;

	qsort(t, n, sizeof(*t), by_record);
	for (size_t i = 0, j; i < n; i = j) {
		double v[64];
		size_t k = 0, first_ok = SIZE_MAX;

		for (j = i; j < n && same_record(&t[i].r, &t[j].r); j++) {
			bool board_seen = false;

			for (size_t q = i; q < j; q++)
				board_seen |= t[q].board == t[j].board;
			if (board_seen || !t[j].r.ok || k == 64)
				continue;
			first_ok = first_ok == SIZE_MAX ? j : first_ok;
			v[k++] = t[j].r.median_us;
		}
		out[kept] = t[first_ok == SIZE_MAX ? i : first_ok].r;
		if (k > 1)
			out[kept].median_us = median_of(v, k);
		kept++;
	}
	return kept;
}

static int read_cache(const struct input *in, struct rb_tune_header *first, bool *have_first,
		      struct rb_tune_cache *c)
{
	char path[PATH_MAX + 64];
	char *data = NULL;
	size_t len, valid;
	int ret;

	cache_path(in, path, sizeof(path));
	ret = rb_file_read(path, &data, &len);
	if (ret < 0)
		return rb_set_error(-ENOENT, "the cache of '%s' ('%s', its shard's \"cache\"): %s",
				    in->path, path, strerror(-ret));
	if (!*have_first)
		ret = rb_tune_cache_read_header(path, data, len, first);
	*have_first = true;
	if (ret == 0)
		ret = rb_tune_cache_parse(c, path, data, len, first, &valid);
	free(data);
	return ret;
}

static int merge_caches(struct merge *m)
{
	struct rb_tune_header header;
	struct tagged *all = NULL;
	struct rb_tune_record *out = NULL;
	size_t n = 0, cap = 0;
	bool have_header = false;
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < m->n; i++) {
		struct rb_tune_cache c;

		if (m->in[i].duplicate)
			continue;
		ret = read_cache(&m->in[i], &header, &have_header, &c);
		if (ret == 0 && n + c.count > cap) {
			struct tagged *grown;

			cap = (n + c.count) * 2;
			grown = realloc(all, cap * sizeof(*all));
			if (grown)
				all = grown;
			else
				ret = rb_set_error(-ENOMEM, "out of memory");
		}
		for (size_t r = 0; ret == 0 && r < c.count; r++, n++)
			all[n] = (struct tagged){c.records[r], m->in[i].board, n};
		rb_tune_cache_close(&c);
	}
	if (ret == 0 && !(out = calloc(n ? n : 1, sizeof(*out))))
		ret = rb_set_error(-ENOMEM, "out of memory");
	if (ret == 0) {
		header.shard[0] = '\0'; /* the whole tune: a later tune resumes from it */
		m->res->records = join_records(all, n, out);
		ret = rb_tune_cache_write(m->o->cache_out, &header, out, m->res->records);
	}
	free(all);
	free(out);
	return ret;
}

/* ---- the whole merge ---- */

int rb_tune_merge(const struct rb_merge_opts *o, struct rb_merge_result *res)
{
	struct merge m = {o,           res,  calloc(o->n_inputs ? o->n_inputs : 1, sizeof(*m.in)),
			  o->n_inputs, NULL, 0};
	cJSON *doc = NULL;
	int ret = m.in ? 0 : rb_set_error(-ENOMEM, "out of memory");

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; ret == 0 && i < m.n; i++) {
		m.in[i].path = o->inputs[i];
		ret = load_input(&m.in[i]);
	}
	if (ret == 0 && m.n == 0)
		ret = rb_set_error(-EINVAL, "no shard to merge");
	if (ret == 0)
		ret = check_same(m.in, m.n);
	if (ret == 0)
		ret = group(&m);
	if (ret == 0)
		ret = check_complete(&m);
	if (ret == 0)
		ret = build(&m, &doc);
	if (ret == 0 && o->cache_out)
		ret = merge_caches(&m);
	if (ret == 0) {
		res->shards = m.in[0].count;
		res->boards = m.n_hosts;
		ret = rb_file_write_atomic(o->out_path, rb_json_write, doc);
	}
	cJSON_Delete(doc);
	for (size_t i = 0; m.in && i < m.n; i++)
		cJSON_Delete(m.in[i].root);
	free(m.in);
	free(m.hosts);
	return ret;
}
