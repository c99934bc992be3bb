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
#include "tune/shard.h"
#include "tune/tune.h"
#include "tune/tuned_doc.h"

struct input {
	struct rb_tuned_shard doc;
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

/* ---- checking the inputs ---- */

/* Every input against the first given. */
static int check_same(const struct input *in, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (rb_tuned_shard_same_setup(&in[0].doc, &in[i].doc) < 0)
			return -EINVAL;
	return 0;
}

static int by_host_index(const void *a, const void *b)
{
	const struct input *x = a, *y = b;
	int c = strcmp(x->doc.host, y->doc.host);

	if (c)
		return c;
	return x->doc.index < y->doc.index ? -1 : x->doc.index > y->doc.index;
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

		if (prev && !strcmp(prev->doc.host, a->doc.host) &&
		    prev->doc.index == a->doc.index) {
			if (!rb_tuned_shard_same_results(&prev->doc, &a->doc))
				return rb_set_error(-EINVAL,
						    "'%s' and '%s' are both shard %u/%u of host "
						    "'%s' with other results: give one of them",
						    prev->doc.path, a->doc.path, a->doc.index,
						    a->doc.count, a->doc.host);
			a->duplicate = true;
			a->board = prev->board;
			m->res->duplicates++;
			note(m, "'%s' repeats '%s' (shard %u/%u of host '%s'): counted once",
			     a->doc.path, prev->doc.path, a->doc.index, a->doc.count, a->doc.host);
			continue;
		}
		if (!prev || strcmp(prev->doc.host, a->doc.host) != 0)
			m->hosts[m->n_hosts++] = a->doc.host;
		a->board = m->n_hosts - 1;
	}
	return 0;
}

/* Each board brings shards 1..N. */
static int check_complete(const struct merge *m)
{
	unsigned count = m->in[0].doc.count;

	for (size_t b = 0; b < m->n_hosts; b++) {
		char missing[512] = "";
		size_t len = 0, n_missing = 0;

		for (unsigned idx = 1; idx <= count; idx++) {
			bool have = false;

			for (size_t i = 0; i < m->n && !have; i++)
				have = m->in[i].board == b && m->in[i].doc.index == idx;
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

/* The slice input in tunes of the shape (key), or -1. */
static int slice_of(const struct input *in, const char *key, unsigned *slices)
{
	for (size_t w = 0; w < in->doc.n_work; w++)
		if (strcmp(in->doc.work[w].shape, key) == 0) {
			*slices = in->doc.work[w].slices;
			return (int)in->doc.work[w].slice;
		}
	return -1;
}

/* One board's result for one pair: the slices of the shape joined. */
struct board_pick {
	struct rb_tuned_merged_pair r; /* its slices point into slices[] */
	const struct rb_tuned_slice_pair *slices[RB_TUNE_MAX_SHARDS];
};

/* Whether a slice's winner (w) beats the best so far (us, of best): faster, or as fast
 * and first in the order the unsharded tune would have met them: the default config
 * (run first), then by enumeration index (the model strategy runs equal times in that
 * order; on the emulator the model's time is the measured one). */
static bool beats(const struct rb_tuned_slice_pair *w, double us,
		  const struct rb_tuned_slice_pair *best)
{
	double t = w->median_us + w->host_us;

	if (!best || t < us)
		return true;
	if (t > us)
		return false;
	if (w->default_won != best->default_won)
		return w->default_won;
	return w->config_index < best->config_index;
}

/* A slice's pair into its board's pick: the fastest tuned and API configs win. */
static void take_slice(struct board_pick *bp, const struct rb_tuned_slice_pair *sp, unsigned s)
{
	struct rb_tuned_merged_pair *r = &bp->r;

	bp->slices[s] = sp;
	if (s == 0)
		r->base = sp;
	if (sp->config && isfinite(sp->median_us) && beats(sp, r->us + r->host_us, r->tuned))
		r->tuned = sp, r->us = sp->median_us, r->host_us = sp->host_us;
	if (sp->api_config && !(sp->api_us >= r->api_us))
		r->api = sp, r->api_us = sp->api_us;
}

/* The slices of one board: slice 0's baselines, the fastest tuned and API configs. */
static int pick_board(const struct merge *m, size_t b, size_t p, struct board_pick *out)
{
	const char *key = m->in[0].doc.pairs[p].key;
	unsigned slices = 0, got = 0;

	memset(out, 0, sizeof(*out));
	out->r.us = out->r.api_us = NAN;
	for (size_t i = 0; i < m->n; i++) {
		const struct input *in = &m->in[i];
		unsigned n_sl = 0;
		int s = in->duplicate || in->board != b ? -1 : slice_of(in, key, &n_sl);

		if (s < 0)
			continue;
		if (n_sl == 0 || n_sl > RB_TUNE_MAX_SHARDS || (unsigned)s >= n_sl ||
		    (slices && n_sl != slices) || out->slices[s] || !in->doc.pairs[p].measured)
			return rb_set_error(
			    -EINVAL,
			    "'%s': pairs[%zu] (%s): slice %d of %u does not fit the "
			    "other shards' slices of the shape, or has no result",
			    in->doc.path, p, key, s, n_sl);
		slices = n_sl;
		got++;
		take_slice(out, &in->doc.pairs[p], (unsigned)s);
	}
	if (!slices || got != slices)
		return rb_set_error(-ENOENT,
				    "host '%s': no shard has %s (pair %zu) %s: a shard is missing "
				    "or was cut short",
				    m->hosts[b], key, p,
				    slices ? "in every slice of its space" : "");
	out->r.slices = out->slices;
	out->r.n_slices = slices;
	return 0;
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

/* "config|launch" of a board's tuned or API choice, for counting the boards' choices;
 * false when it has none. */
static bool choice(const struct board_pick *bp, bool api, char *buf, size_t size)
{
	const struct rb_tuned_slice_pair *w = api ? bp->r.api : bp->r.tuned;
	const char *config = !w ? "" : api ? w->api_config : w->config;
	const char *launch = !w ? "" : api ? w->api_launch : w->launch;

	snprintf(buf, size, "%s|%s", config, launch);
	return w != NULL;
}

static double time_of(const struct board_pick *bp, bool api)
{
	return api ? bp->r.api_us : bp->r.us;
}

/* The choice most boards made (ties: the lower median time, then the text). */
static size_t majority(const struct board_pick *bp, size_t n, bool api)
{
	size_t best = SIZE_MAX, best_votes = 0;
	double best_us = NAN;
	char a[320], b[320];

	for (size_t i = 0; i < n; i++) {
		double v[64];
		size_t votes = 0;

		if (!choice(&bp[i], api, a, sizeof(a)))
			continue;
		for (size_t j = 0; j < n; j++)
			if (choice(&bp[j], api, b, sizeof(b)) && strcmp(a, b) == 0 && votes < 64)
				v[votes++] = time_of(&bp[j], api);
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

	choice(&bp[w], api, a, sizeof(a));
	for (size_t j = 0; j < n && k < 64; j++) {
		double us = time_of(&bp[j], api);

		if (!choice(&bp[j], api, b, sizeof(b)) || strcmp(a, b) != 0)
			continue;
		v[k++] = us;
		lo = us < lo ? us : lo;
		hi = us > hi ? us : hi;
	}
	med = median_of(v, k);
	*spread = k > 1 ? (hi - lo) / med * 100 : 0;
	return med;
}

/* The median over the boards of a baseline of their slice 0 (default_us or cpu_us). */
static double baseline_median(const struct board_pick *bp, size_t n, bool cpu)
{
	double v[64];
	size_t k = 0;

	for (size_t j = 0; j < n && k < 64; j++) {
		double us = cpu ? bp[j].r.base->cpu_us : bp[j].r.base->default_us;

		if (isfinite(us))
			v[k++] = us;
	}
	return median_of(v, k);
}

/* Boards whose tuned config is not bp[w]'s. */
static size_t other_choices(const struct board_pick *bp, size_t n, size_t w)
{
	char a[320] = "|", b[320];
	size_t others = 0;

	if (w != SIZE_MAX)
		choice(&bp[w], false, a, sizeof(a));
	for (size_t j = 0; j < n; j++) {
		choice(&bp[j], false, b, sizeof(b));
		others += strcmp(a, b) != 0;
	}
	return others;
}

/* Several boards: the majority config at the median time; every board's choice kept. */
static void join_boards(const struct merge *m, const struct board_pick *bp, size_t n,
			const char *key, struct rb_tuned_board_choice *choices,
			struct rb_tuned_merged_pair *out)
{
	size_t w = majority(bp, n, false), wa = majority(bp, n, true);
	double spread = 0;

	*out = bp[w == SIZE_MAX ? 0 : w].r;
	out->default_us = baseline_median(bp, n, false);
	out->cpu_us = baseline_median(bp, n, true);
	out->tuned = NULL;
	out->us = out->host_us = NAN;
	if (w != SIZE_MAX) {
		out->tuned = bp[w].r.tuned;
		out->us = boards_median(bp, n, w, false, &spread);
		out->host_us = bp[w].r.host_us;
	}
	out->api = NULL;
	out->api_us = NAN;
	if (wa != SIZE_MAX) {
		double api_spread;

		out->api = bp[wa].r.api;
		out->api_us = boards_median(bp, n, wa, true, &api_spread);
	}
	out->spread_pct = spread;
	for (size_t j = 0; j < n; j++)
		choices[j] = (struct rb_tuned_board_choice){
		    m->hosts[j], bp[j].r.tuned ? bp[j].r.tuned->config : NULL,
		    bp[j].r.tuned ? bp[j].r.tuned->launch : NULL, bp[j].r.us};
	out->boards = choices;
	out->n_boards = n;
	if (spread > m->o->spread_pct || other_choices(bp, n, w)) {
		m->res->disagree++;
		note(m,
		     "%s: the boards disagree (%zu chose another config; the times of the kept one "
		     "spread by %.1f %%, the limit is %.1f %%): the majority config at its median "
		     "time is kept",
		     key, other_choices(bp, n, w), spread, m->o->spread_pct);
	}
}

/* Every pair's picks: per board, then across boards. */
struct picks {
	struct board_pick *boards;             /* n_pairs x n_hosts */
	struct rb_tuned_board_choice *choices; /* likewise */
	struct rb_tuned_merged_pair *merged;   /* n_pairs */
};

static int merge_pair(const struct merge *m, struct picks *pk, size_t p)
{
	struct board_pick *bp = &pk->boards[p * m->n_hosts];
	int ret = 0;

	for (size_t b = 0; ret == 0 && b < m->n_hosts; b++)
		ret = pick_board(m, b, p, &bp[b]);
	if (ret)
		return ret;
	if (m->n_hosts == 1)
		pk->merged[p] = bp[0].r;
	else
		join_boards(m, bp, m->n_hosts, m->in[0].doc.pairs[p].key,
			    &pk->choices[p * m->n_hosts], &pk->merged[p]);
	m->res->untuned += pk->merged[p].tuned == NULL;
	return 0;
}

/* ---- the document ---- */

/* The latest generation time of the inputs: the output depends on the inputs alone. */
static const char *latest(const struct merge *m)
{
	const char *last = "";

	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->in[i].doc.generated, last) > 0)
			last = m->in[i].doc.generated;
	return last;
}

/* One shard per board, for its host, CPU and kernel. */
static const struct rb_tuned_shard **board_shards(const struct merge *m)
{
	const struct rb_tuned_shard **boards = calloc(m->n_hosts + 1, sizeof(*boards));

	for (size_t i = 0; boards && i < m->n; i++)
		if (!m->in[i].duplicate && !boards[m->in[i].board])
			boards[m->in[i].board] = &m->in[i].doc;
	return boards;
}

static int build(struct merge *m, cJSON **out)
{
	size_t n_pairs = m->in[0].doc.n_pairs, cells = n_pairs * m->n_hosts + 1;
	struct picks pk = {calloc(cells, sizeof(*pk.boards)), calloc(cells, sizeof(*pk.choices)),
			   calloc(n_pairs + 1, sizeof(*pk.merged))};
	const struct rb_tuned_shard **boards = board_shards(m);
	int ret = pk.boards && pk.choices && pk.merged && boards
		      ? 0
		      : rb_set_error(-ENOMEM, "out of memory");

	for (size_t p = 0; ret == 0 && p < n_pairs; p++)
		ret = merge_pair(m, &pk, p);
	if (ret == 0) {
		*out = rb_tuned_merged_json(&m->in[0].doc, pk.merged, n_pairs,
					    (const struct rb_tuned_shard *const *)boards,
					    m->n_hosts, latest(m));
		ret = *out ? 0 : -ENOMEM;
		m->res->pairs = n_pairs;
	}
	free(pk.boards);
	free(pk.choices);
	free(pk.merged);
	free(boards);
	return ret;
}

/* ---- caches ---- */

/* The cache a shard recorded: a bare name lies beside the shard's JSON. */
static void cache_path(const struct input *in, char *buf, size_t size)
{
	const char *where = in->doc.cache, *slash = strrchr(in->doc.path, '/');

	if (where[0] == '/' || !slash)
		snprintf(buf, size, "%s", where);
	else
		snprintf(buf, size, "%.*s/%s", (int)(slash - in->doc.path), in->doc.path, where);
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

/* A shard's cache is the one its tune wrote: its header names the same shard. Another
 * shard's cache (or a whole tune's) would give records of other shapes for this one. */
static int check_cache_shard(const struct input *in, const char *path, const char *data, size_t len)
{
	struct rb_tune_header h;
	char want[sizeof(h.shard)];
	int ret = rb_tune_cache_read_header(path, data, len, &h);

	if (ret < 0)
		return ret;
	snprintf(want, sizeof(want), "%u/%u", in->doc.index, in->doc.count);
	if (strcmp(h.shard, want) != 0)
		return rb_set_error(-EINVAL,
				    "'%s' is shard %s but its cache '%s' was written by %s%s: "
				    "give each shard the cache its own tune wrote",
				    in->doc.path, want, path,
				    h.shard[0] ? "shard " : "a whole tune", h.shard);
	return 0;
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
				    in->doc.path, path, strerror(-ret));
	ret = check_cache_shard(in, path, data, len);
	if (ret == 0 && !*have_first)
		ret = rb_tune_cache_read_header(path, data, len, first);
	*have_first = true;
	if (ret == 0) { /* the setup compared; each cache's shard was checked against its own */
		struct rb_tune_header setup = *first;

		setup.shard[0] = '\0';
		ret = rb_tune_cache_parse(c, path, data, len, &setup, &valid);
	}
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
		struct rb_tune_cache c = {.lock_fd = -1};

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
	for (size_t i = 0; ret == 0 && i < m.n; i++)
		ret = rb_tuned_shard_load(&m.in[i].doc, o->inputs[i]);
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
		res->shards = m.in[0].doc.count;
		res->boards = m.n_hosts;
		ret = rb_file_write_atomic(o->out_path, rb_json_write, doc);
	}
	cJSON_Delete(doc);
	for (size_t i = 0; m.in && i < m.n; i++)
		rb_tuned_shard_release(&m.in[i].doc);
	free(m.in);
	free(m.hosts);
	return ret;
}
