/* Comparing two JSON reports: loading, the Mann-Whitney U test, pairing and verdicts
 * (see compare.h). */
#include "results/compare.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json.h"
#include "results/report.h"

/* ---- loading ---- */

static const cJSON *item(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* "FILE: results[I].WHAT MUST" */
static int field_error(const char *label, size_t i, const char *what, const char *must)
{
	return rb_set_error(-EINVAL, "%s: results[%zu].%s %s", label, i, what, must);
}

static int parse_shape(const char *label, size_t i, const cJSON *r, struct rb_shape *s)
{
	static const char *const keys[] = {"m", "k", "n"};
	int64_t *dims[] = {&s->m, &s->k, &s->n};
	const cJSON *shape = item(r, "shape"), *v;
	char what[16];

	if (!cJSON_IsObject(shape))
		return field_error(label, i, "shape",
				   "must be an object {\"m\", \"k\", \"n\", \"dtype\"}");
	for (size_t j = 0; j < 3; j++) {
		v = item(shape, keys[j]);
		snprintf(what, sizeof(what), "shape.%s", keys[j]);
		if (!cJSON_IsNumber(v) || !(v->valuedouble >= 1) ||
		    v->valuedouble > (double)RB_SHAPE_DIM_MAX ||
		    v->valuedouble != floor(v->valuedouble))
			return field_error(label, i, what, "must be an integer from 1 to 2^31");
		*dims[j] = (int64_t)v->valuedouble;
	}
	v = item(shape, "dtype");
	if (!cJSON_IsString(v) || rb_dtype_parse(v->valuestring, &s->dtype) < 0)
		return field_error(label, i, "shape.dtype", "must be \"fp16\" or \"int8\"");
	return 0;
}

static int parse_names(const char *label, size_t i, const cJSON *r, struct rb_compare_entry *e)
{
	const cJSON *names = item(r, "names"), *v;
	int n = cJSON_GetArraySize(names);

	if (!cJSON_IsArray(names) || n < 1)
		return field_error(label, i, "names", "must be a non-empty array of strings");
	e->names = calloc((size_t)n, sizeof(*e->names));
	if (!e->names)
		return rb_set_error(-ENOMEM, "%s: out of memory", label);
	cJSON_ArrayForEach(v, names)
	{
		if (!cJSON_IsString(v))
			return field_error(label, i, "names", "must hold only strings");
		e->names[e->n_names++] = v->valuestring;
	}
	return 0;
}

/* Raw samples are optional: without them the threshold alone decides. */
static int parse_samples(const char *label, size_t i, const cJSON *stats,
			 struct rb_compare_entry *e)
{
	const cJSON *samples = item(stats, "samples_us"), *v;
	int n = cJSON_GetArraySize(samples);

	if (!samples || cJSON_IsNull(samples) || (cJSON_IsArray(samples) && n == 0))
		return 0;
	if (!cJSON_IsArray(samples))
		return field_error(label, i, "stats.samples_us", "must be an array of numbers");
	e->samples_us = malloc((size_t)n * sizeof(*e->samples_us));
	if (!e->samples_us)
		return rb_set_error(-ENOMEM, "%s: out of memory", label);
	cJSON_ArrayForEach(v, samples)
	{
		if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < 0)
			return field_error(label, i, "stats.samples_us",
					   "must hold only non-negative numbers (µs)");
		e->samples_us[e->n_samples++] = v->valuedouble;
	}
	return 0;
}

static int parse_stats(const char *label, size_t i, const cJSON *r, struct rb_compare_entry *e)
{
	const cJSON *stats = item(r, "stats"), *median = item(stats, "median_us");

	if (!cJSON_IsObject(stats))
		return field_error(label, i, "stats", "must be an object with \"median_us\"");
	/* a ratio of medians needs a positive base; run never writes anything else */
	if (!cJSON_IsNumber(median) || !isfinite(median->valuedouble) || !(median->valuedouble > 0))
		return field_error(label, i, "stats.median_us", "must be a positive number (µs)");
	e->median_us = median->valuedouble;
	return parse_samples(label, i, stats, e);
}

static double number_or_nan(const cJSON *v)
{
	return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *string_or_null(const cJSON *v)
{
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* What the page and calibrate read: the rates, the roofline and the config's strings. */
static void parse_extras(const cJSON *r, struct rb_compare_entry *e)
{
	const cJSON *rl = item(r, "roofline"), *config = item(r, "config");

	e->gflops = number_or_nan(item(r, "gflops"));
	e->roofline.present =
	    cJSON_IsObject(rl) && cJSON_IsNumber(item(rl, "intensity_flop_per_byte"));
	e->roofline.intensity = number_or_nan(item(rl, "intensity_flop_per_byte"));
	e->roofline.peak_gflops = number_or_nan(item(rl, "peak_gflops"));
	e->roofline.ddr_gbps = number_or_nan(item(rl, "ddr_gbps"));
	e->plan = string_or_null(item(config, "plan"));
	e->launch = string_or_null(item(config, "launch"));
	e->driver = string_or_null(item(config, "driver"));
}

static int parse_entry(const char *label, size_t i, const cJSON *r, struct rb_compare_entry *e)
{
	const cJSON *device = item(r, "device"), *modeled = item(r, "modeled");
	const cJSON *status = item(item(r, "verify"), "status");
	int ret;

	if (!cJSON_IsObject(r))
		return rb_set_error(-EINVAL, "%s: results[%zu] must be an object", label, i);
	ret = parse_shape(label, i, r, &e->shape);
	if (ret == 0)
		ret = parse_names(label, i, r, e);
	if (ret == 0)
		ret = parse_stats(label, i, r, e);
	if (ret < 0)
		return ret;
	if (!cJSON_IsString(device))
		return field_error(label, i, "device", "must be a string");
	if (!cJSON_IsBool(modeled))
		return field_error(label, i, "modeled", "must be true or false");
	e->device = device->valuestring;
	e->modeled = cJSON_IsTrue(modeled);
	e->verify_failed = cJSON_IsString(status) && strcmp(status->valuestring, "failed") == 0;
	parse_extras(r, e);
	return 0;
}

static int check_schema(const char *label, const cJSON *root)
{
	const cJSON *schema = item(root, "schema");

	if (!cJSON_IsObject(root))
		return rb_set_error(-EINVAL,
				    "%s: not an rknn-bench report: expected an object "
				    "with \"schema\": \"" RB_SCHEMA "\"",
				    label);
	if (!schema)
		return rb_set_error(-EINVAL,
				    "%s: no \"schema\" field: not an rknn-bench report "
				    "(write one with 'rknn-bench run --format json' or -o)",
				    label);
	if (!cJSON_IsString(schema))
		return rb_set_error(-EINVAL, "%s: schema must be the string \"" RB_SCHEMA "\"",
				    label);
	if (strcmp(schema->valuestring, RB_SCHEMA) != 0)
		return rb_set_error(-EINVAL,
				    "%s: schema is \"%.64s\" but compare reads \"" RB_SCHEMA "\"",
				    label, schema->valuestring);
	if (!cJSON_IsArray(item(root, "results")))
		return rb_set_error(-EINVAL, "%s: results must be an array", label);
	return 0;
}

static uint64_t fnv1a(uint64_t h, const char *text)
{
	for (const char *p = text; p && *p; p++)
		h = (h ^ (unsigned char)*p) * UINT64_C(0x100000001b3);
	return h;
}

/* The fingerprint of the evidence: context and results printed compactly. */
static int fingerprint(struct rb_compare_report *rep)
{
	char *ctx = rep->context ? cJSON_PrintUnformatted(rep->context) : NULL;
	char *results = cJSON_PrintUnformatted(item(rep->doc, "results"));
	int ret = results && (ctx || !rep->context) ? 0 : rb_set_error(-ENOMEM, "out of memory");

	rep->fingerprint = fnv1a(fnv1a(UINT64_C(0xcbf29ce484222325), ctx), results);
	free(ctx);
	free(results);
	return ret;
}

/* The context's facts that readers use, and the totals. */
static int parse_context(struct rb_compare_report *rep)
{
	const cJSON *ctx = item(rep->doc, "context");
	const cJSON *warnings = item(item(ctx, "host_settings"), "warnings");

	rep->context = cJSON_IsObject(ctx) ? ctx : NULL;
	rep->host = string_or_null(item(ctx, "host"));
	rep->settings_warning = string_or_null(cJSON_GetArrayItem(warnings, 0));
	return rb_totals_parse(item(rep->doc, "totals"), rep->label, "totals", rep->totals,
			       RB_TOTALS_MAX, &rep->n_totals);
}

static int parse_results(struct rb_compare_report *rep)
{
	const cJSON *results = item(rep->doc, "results"), *r;
	int ret = check_schema(rep->label, rep->doc);
	size_t n;

	if (ret < 0)
		return ret;
	n = (size_t)cJSON_GetArraySize(results);
	rep->entries = calloc(n ? n : 1, sizeof(*rep->entries));
	if (!rep->entries)
		return rb_set_error(-ENOMEM, "%s: out of memory", rep->label);
	cJSON_ArrayForEach(r, results)
	{
		/* counted first, so a failing entry is released with the others */
		ret = parse_entry(rep->label, rep->n, r, &rep->entries[rep->n]);
		rep->n++;
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Parses `text` (len bytes) into rep->doc with the shared strict loader. */
static int parse_doc(struct rb_compare_report *rep, const char *text, size_t len)
{
	return rb_json_load(text, len, rep->label, "a report of 'rknn-bench run --format json'",
			    &rep->doc);
}

int rb_compare_parse(struct rb_compare_report *rep, const char *json, size_t len, const char *label)
{
	char *text;
	int ret;

	memset(rep, 0, sizeof(*rep));
	rep->label = strdup(label);
	/* a terminated copy: the parser and strspn stay within bounds */
	text = malloc(len + 1);
	if (!rep->label || !text) {
		free(text);
		free(rep->label);
		rep->label = NULL;
		return rb_set_error(-ENOMEM, "%s: out of memory", label);
	}
	memcpy(text, json, len);
	text[len] = '\0';
	ret = parse_doc(rep, text, len);
	free(text);
	if (ret == 0)
		ret = parse_results(rep);
	if (ret == 0)
		ret = parse_context(rep);
	if (ret == 0)
		ret = fingerprint(rep);
	if (ret < 0)
		rb_compare_report_release(rep);
	return ret;
}

static int load_report(void *rep, const char *json, size_t len, const char *label)
{
	return rb_compare_parse(rep, json, len, label);
}

int rb_compare_load(struct rb_compare_report *rep, const char *path)
{
	memset(rep, 0, sizeof(*rep));
	return rb_json_load_file_with(path, load_report, rep);
}

void rb_compare_report_release(struct rb_compare_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		free(rep->entries[i].names);
		free(rep->entries[i].samples_us);
	}
	free(rep->entries);
	cJSON_Delete(rep->doc);
	free(rep->label);
	memset(rep, 0, sizeof(*rep));
}

/* ---- Mann-Whitney U ---- */

struct obs {
	double v;
	int from_a;
};

static int obs_cmp(const void *x, const void *y)
{
	const struct obs *a = x, *b = y;

	return (a->v > b->v) - (a->v < b->v);
}

/* Sum of the midranks of `a` in the sorted pool; *ties = sum of t^3 - t over groups. */
static double rank_sum_a(const struct obs *o, size_t n, double *ties)
{
	double ra = 0, t, mid;
	size_t i, j, k;

	*ties = 0;
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && o[j].v == o[i].v; j++)
			;
		t = (double)(j - i);
		mid = (double)(i + 1 + j) / 2; /* mean of ranks i+1 .. j */
		for (k = i; k < j; k++)
			ra += o[k].from_a ? mid : 0;
		*ties += t * t * t - t;
	}
	return ra;
}

/* Exact two-sided p without ties. The number of arrangements of the pooled sample
 * with U = k is the coefficient of q^k in the Gaussian binomial [m+n choose m]_q =
 * prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i); every step is integer and below 2^53
 * while m + n <= RB_MWU_EXACT_MAX, so the counts are exact in doubles. */
static int exact_p(size_t na, size_t nb, double u, double *p)
{
	size_t m = na < nb ? na : nb, n = na < nb ? nb : na, top = m * n, i, k;
	double *g = calloc(top + m + 1, sizeof(*g)), total = 0, tail = 0;
	double lo = fmin(u, (double)top - u);

	if (!g)
		return rb_set_error(-ENOMEM, "out of memory for the U distribution");
	g[0] = 1;
	for (i = 1; i <= m; i++) {
		for (k = (i - 1) * n + n + i; k >= n + i; k--)
			g[k] -= g[k - (n + i)]; /* times (1 - q^(n+i)) */
		for (k = i; k <= i * n + i; k++)
			g[k] += g[k - i]; /* divided by (1 - q^i) */
	}
	for (k = 0; k <= top; k++) {
		total += g[k];
		tail += (double)k <= lo ? g[k] : 0;
	}
	free(g);
	*p = fmin(1, 2 * tail / total);
	return 0;
}

/* Normal approximation: sigma^2 = na·nb/12 · ((n+1) - sum(t^3 - t) / (n(n-1))), and a
 * continuity correction of 1/2 toward the mean. */
static double normal_p(size_t na, size_t nb, double u, double ties)
{
	double n = (double)(na + nb), mu = (double)na * (double)nb / 2;
	double var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	double z;

	if (!(var > 0))
		return 1; /* every value equal: nothing tells the samples apart */
	z = (fabs(u - mu) - 0.5) / sqrt(var);
	return z <= 0 ? 1 : fmin(1, erfc(z / sqrt(2.0)));
}

static int pool(const double *a, size_t na, const double *b, size_t nb, struct obs *o)
{
	for (size_t i = 0; i < na + nb; i++) {
		o[i].from_a = i < na;
		o[i].v = i < na ? a[i] : b[i - na];
		if (!isfinite(o[i].v))
			return rb_set_error(-EINVAL, "sample %zu of %s is not a finite number",
					    i < na ? i : i - na, i < na ? "a" : "b");
	}
	qsort(o, na + nb, sizeof(*o), obs_cmp);
	return 0;
}

int rb_mann_whitney_u(const double *a, size_t na, const double *b, size_t nb, double *u, double *p)
{
	struct obs *o;
	double ties;
	int ret;

	if (na == 0 || nb == 0)
		return rb_set_error(-EINVAL, "the U test needs at least one sample on each side");
	o = malloc((na + nb) * sizeof(*o));
	if (!o)
		return rb_set_error(-ENOMEM, "out of memory for %zu samples", na + nb);
	ret = pool(a, na, b, nb, o);
	if (ret == 0) {
		*u = rank_sum_a(o, na + nb, &ties) - (double)na * (double)(na + 1) / 2;
		if (ties == 0 && na + nb <= RB_MWU_EXACT_MAX)
			ret = exact_p(na, nb, *u, p);
		else
			*p = normal_p(na, nb, *u, ties);
	}
	free(o);
	return ret;
}

/* ---- pairing and verdicts ---- */

void rb_compare_opts_init(struct rb_compare_opts *opts)
{
	opts->threshold_pct = RB_COMPARE_DEFAULT_THRESHOLD_PCT;
	opts->alpha = RB_COMPARE_DEFAULT_ALPHA;
	opts->allow_device_mismatch = false;
}

static bool same_shape(const struct rb_shape *a, const struct rb_shape *b)
{
	return a->m == b->m && a->k == b->k && a->n == b->n && a->dtype == b->dtype;
}

/* The first name of `a` that `b` has too, or NULL. */
static const char *shared_name(const struct rb_compare_entry *a, const struct rb_compare_entry *b)
{
	for (size_t i = 0; i < a->n_names; i++)
		for (size_t j = 0; j < b->n_names; j++)
			if (strcmp(a->names[i], b->names[j]) == 0)
				return a->names[i];
	return NULL;
}

static void add_row(struct rb_compare *cmp, const struct rb_compare_entry *base,
		    const struct rb_compare_entry *new_, const char *name)
{
	struct rb_compare_row *row = &cmp->rows[cmp->n_rows++];

	memset(row, 0, sizeof(*row));
	row->base = base;
	row->new_ = new_;
	/* Every caller passes base, new_ or both. */
	// cppcheck-suppress nullPointer
	row->name = name ? name : (base ? base : new_)->names[0];
	row->change = row->u = row->p = NAN;
}

/* The first unused result of `rep` with the shape of `e` and a name in common; its
 * index, or rep->n when there is none. */
static size_t find_match(const struct rb_compare_entry *e, const struct rb_compare_report *rep,
			 const bool *used, const char **name)
{
	for (size_t j = 0; j < rep->n; j++) {
		if (used[j] || !same_shape(&e->shape, &rep->entries[j].shape))
			continue;
		*name = shared_name(e, &rep->entries[j]);
		if (*name)
			return j;
	}
	return rep->n;
}

/* Greedy: each base result takes the first unused new result that matches. */
static int pair_rows(struct rb_compare *cmp, const struct rb_compare_report *base,
		     const struct rb_compare_report *new_)
{
	bool *used = calloc(new_->n + 1, sizeof(*used));
	const char *name = NULL;
	size_t i, j;

	cmp->rows = calloc(base->n + new_->n + 1, sizeof(*cmp->rows));
	if (!used || !cmp->rows) {
		free(used);
		return rb_set_error(-ENOMEM, "out of memory for %zu rows", base->n + new_->n);
	}
	for (i = 0; i < base->n; i++) {
		j = find_match(&base->entries[i], new_, used, &name);
		if (j == new_->n) {
			add_row(cmp, &base->entries[i], NULL, NULL);
			continue;
		}
		used[j] = true;
		add_row(cmp, &base->entries[i], &new_->entries[j], name);
	}
	for (j = 0; j < new_->n; j++)
		if (!used[j])
			add_row(cmp, NULL, &new_->entries[j], NULL);
	free(used);
	return 0;
}

static const char *timing_name(bool modeled)
{
	return modeled ? "modeled" : "measured";
}

static int check_devices(const struct rb_compare *cmp, const struct rb_compare_report *base,
			 const struct rb_compare_report *new_)
{
	const struct rb_compare_entry *b, *n;

	for (size_t i = 0; i < cmp->n_rows; i++) {
		b = cmp->rows[i].base;
		n = cmp->rows[i].new_;
		if (!b || !n || (strcmp(b->device, n->device) == 0 && b->modeled == n->modeled))
			continue;
		return rb_set_error(-EINVAL,
				    "'%s' ran on '%s' (%s) in '%s' but on '%s' (%s) in '%s': times "
				    "of different devices are not comparable; pass "
				    "--allow-device-mismatch to compare them anyway",
				    cmp->rows[i].name, b->device, timing_name(b->modeled),
				    base->label, n->device, timing_name(n->modeled), new_->label);
	}
	return 0;
}

/* Rounding must not turn exactly +5 % (105/100 - 1 = 0.05000000000000004) into a
 * change beyond a 5 % threshold; no timing means anything at 1e-9. */
#define CHANGE_EPSILON 1e-9

static enum rb_verdict by_threshold(double change, double threshold)
{
	if (change > threshold + CHANGE_EPSILON)
		return RB_VERDICT_REGRESSION;
	if (change < -threshold - CHANGE_EPSILON)
		return RB_VERDICT_IMPROVEMENT;
	return RB_VERDICT_SAME;
}

/* Equal medians, and for a clock equal samples too (the same file twice): equal
 * measured medians alone are a coincidence. */
static bool identical(const struct rb_compare_entry *b, const struct rb_compare_entry *n)
{
	if (b->median_us != n->median_us)
		return false;
	if (b->modeled && n->modeled)
		return true;
	if (b->n_samples != n->n_samples)
		return false;
	for (size_t i = 0; i < b->n_samples; i++)
		if (b->samples_us[i] != n->samples_us[i])
			return false;
	return true;
}

static int judge_pair(struct rb_compare_row *row, const struct rb_compare_opts *opts)
{
	const struct rb_compare_entry *b = row->base, *n = row->new_;
	double threshold = opts->threshold_pct / 100;
	int ret;

	row->change = n->median_us / b->median_us - 1;
	row->verdict = by_threshold(row->change, threshold);
	if (b->modeled && n->modeled) {
		row->test = RB_TEST_EXACT;
	} else if (b->n_samples >= RB_COMPARE_MIN_SAMPLES &&
		   n->n_samples >= RB_COMPARE_MIN_SAMPLES) {
		row->test = RB_TEST_MWU;
		/* U of the new samples: large when new is slower */
		ret = rb_mann_whitney_u(n->samples_us, n->n_samples, b->samples_us, b->n_samples,
					&row->u, &row->p);
		if (ret < 0)
			return ret;
		row->significant = row->p < opts->alpha;
		if (!row->significant)
			row->verdict = RB_VERDICT_SAME;
	} else {
		row->test = RB_TEST_THRESHOLD;
	}
	if (identical(b, n))
		row->verdict = RB_VERDICT_IDENTICAL;
	return 0;
}

static int judge(struct rb_compare *cmp, const struct rb_compare_opts *opts)
{
	struct rb_compare_row *row;
	double log_sum = 0;
	int ret;

	for (size_t i = 0; i < cmp->n_rows; i++) {
		row = &cmp->rows[i];
		row->verdict = row->base ? RB_VERDICT_ONLY_BASE : RB_VERDICT_ONLY_NEW;
		if (row->base && row->new_) {
			ret = judge_pair(row, opts);
			if (ret < 0)
				return ret;
			cmp->matched++;
			log_sum += log(row->new_->median_us / row->base->median_us);
		}
		cmp->only_base += !row->new_;
		cmp->only_new += !row->base;
		/* a wrong result is never fast enough */
		if (row->new_ && row->new_->verify_failed) {
			row->verify_failed = true;
			row->verdict = RB_VERDICT_REGRESSION;
		}
		cmp->regressions += row->verdict == RB_VERDICT_REGRESSION;
		cmp->improvements += row->verdict == RB_VERDICT_IMPROVEMENT;
	}
	cmp->geomean_change = cmp->matched ? exp(log_sum / (double)cmp->matched) - 1 : NAN;
	return 0;
}

int rb_compare_rows(struct rb_compare *cmp, const struct rb_compare_report *base,
		    const struct rb_compare_report *new_, const struct rb_compare_opts *opts)
{
	int ret;

	memset(cmp, 0, sizeof(*cmp));
	ret = pair_rows(cmp, base, new_);
	if (ret == 0 && !opts->allow_device_mismatch)
		ret = check_devices(cmp, base, new_);
	if (ret == 0)
		ret = judge(cmp, opts);
	if (ret < 0)
		rb_compare_release(cmp);
	return ret;
}

void rb_compare_release(struct rb_compare *cmp)
{
	free(cmp->rows);
	memset(cmp, 0, sizeof(*cmp));
}

const char *rb_verdict_name(enum rb_verdict verdict)
{
	static const char *const names[] = {
	    [RB_VERDICT_IDENTICAL] = "identical",     [RB_VERDICT_SAME] = "same",
	    [RB_VERDICT_IMPROVEMENT] = "improvement", [RB_VERDICT_REGRESSION] = "regression",
	    [RB_VERDICT_ONLY_BASE] = "only in base",  [RB_VERDICT_ONLY_NEW] = "only in new",
	};

	return (unsigned)verdict < sizeof(names) / sizeof(names[0]) ? names[verdict] : "?";
}
