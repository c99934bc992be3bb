/* The report page model: inputs told apart by schema, run reports and comparisons. */
#include "page/page.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fileio.h"
#include "core/json.h"
#include "page/page_internal.h"
#include "results/report.h"
#include "rknn_bench/tuned.h"
#include "tune/tune.h"

void rb_page_init(struct rb_page *page, const char *title)
{
	memset(page, 0, sizeof(*page));
	snprintf(page->title, sizeof(page->title), "%s", title);
}

void rb_page_release(struct rb_page *page)
{
	for (size_t i = 0; i < page->n_sources; i++)
		free(page->sources[i].facts);
	for (size_t i = 0; i < page->n_rooflines; i++)
		free(page->rooflines[i].points);
	for (size_t i = 0; i < page->n_charts; i++)
		free(page->charts[i].bars);
	free(page->sources);
	free(page->rooflines);
	free(page->charts);
	free(page->grids);
	free(page->totals);
	memset(page, 0, sizeof(*page));
}

void *rb_page_grow(void **items, size_t n, size_t *cap, size_t size)
{
	char *p;

	if (n == *cap) {
		size_t more = *cap ? 2 * *cap : 8;
		void *bigger = realloc(*items, more * size);

		if (!bigger) {
			rb_set_error(-ENOMEM, "out of memory for the report");
			return NULL;
		}
		*items = bigger;
		*cap = more;
	}
	p = (char *)*items + n * size;
	memset(p, 0, size);
	return p;
}

#define GROW(page, what)                                                                           \
	rb_page_grow((void **)&(page)->what, (page)->n_##what, &(page)->cap_##what,                \
		     sizeof(*(page)->what))

struct rb_page_source *page_source(struct rb_page *page, const char *path, const char *kind,
				   bool modeled)
{
	struct rb_page_source *s = GROW(page, sources);

	if (!s)
		return NULL;
	page->n_sources++;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->kind, sizeof(s->kind), "%s", kind);
	s->modeled = modeled;
	return s;
}

int page_fact(struct rb_page_source *s, const char *key, const char *value, bool warning)
{
	struct rb_page_fact *f =
	    rb_page_grow((void **)&s->facts, s->n_facts, &s->cap_facts, sizeof(*s->facts));

	if (!f)
		return -ENOMEM;
	s->n_facts++;
	snprintf(f->key, sizeof(f->key), "%s", key);
	snprintf(f->value, sizeof(f->value), "%s", value);
	f->warning = warning;
	return 0;
}

/* An array of scalars as one line: "a, b, c" (false when it holds an object or array). */
static bool join_scalars(const cJSON *array, char *buf, size_t size)
{
	const cJSON *v;
	size_t used = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(v, array)
	{
		char *text;

		if (cJSON_IsObject(v) || cJSON_IsArray(v))
			return false;
		text = cJSON_IsString(v) ? NULL : cJSON_PrintUnformatted(v);
		used += (size_t)snprintf(buf + used, used < size ? size - used : 0, "%s%s",
					 used ? ", " : "",
					 text                ? text
					 : cJSON_IsString(v) ? v->valuestring
							     : "?");
		free(text);
	}
	return true;
}

/* Every scalar under `o` as "prefix.key = value" facts; host-settings "warnings"
 * become warnings. Keys in `skip` (the data, not the provenance) are left out. */
int page_facts(struct rb_page_source *s, const cJSON *o, const char *prefix,
	       const char *const *skip, size_t n_skip)
{
	const cJSON *v;

	cJSON_ArrayForEach(v, o)
	{
		char key[64], value[512];
		bool skipped = false;
		int ret = 0;

		for (size_t i = 0; i < n_skip; i++)
			skipped = skipped || (v->string && strcmp(v->string, skip[i]) == 0);
		if (skipped)
			continue;
		snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "",
			 v->string ? v->string : "?");
		if (v->string && strcmp(v->string, "warnings") == 0 && cJSON_IsArray(v)) {
			const cJSON *w;

			cJSON_ArrayForEach(w, v)
			{
				if (cJSON_IsString(w) && ret == 0)
					ret = page_fact(s, "warning", w->valuestring, true);
			}
		} else if (cJSON_IsObject(v)) {
			ret = page_facts(s, v, key, NULL, 0);
		} else if (cJSON_IsArray(v) && join_scalars(v, value, sizeof(value))) {
			ret = page_fact(s, key, value[0] ? value : "(none)", false);
		} else if (cJSON_IsArray(v)) {
			const cJSON *item;
			int i = 0;

			cJSON_ArrayForEach(item, v)
			{
				char sub[80];

				snprintf(sub, sizeof(sub), "%s.%d", key, i++);
				if (ret == 0 && cJSON_IsObject(item))
					ret = page_facts(s, item, sub, NULL, 0);
			}
		} else {
			char *text = cJSON_IsString(v) ? NULL : cJSON_PrintUnformatted(v);

			ret = page_fact(s, key,
					text             ? text
					: v->valuestring ? v->valuestring
							 : "",
					false);
			free(text);
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The roofline of `device` (modeled or not), added when new. */
struct rb_page_roofline *page_roofline(struct rb_page *page, const char *device, bool modeled)
{
	struct rb_page_roofline *r;
	char label[RB_PAGE_TEXT];

	snprintf(label, sizeof(label), "%s%s", device, modeled ? " (modeled)" : "");
	for (size_t i = 0; i < page->n_rooflines; i++)
		if (strcmp(page->rooflines[i].device, label) == 0)
			return &page->rooflines[i];
	r = GROW(page, rooflines);
	if (!r)
		return NULL;
	page->n_rooflines++;
	snprintf(r->device, sizeof(r->device), "%s", label);
	r->modeled = modeled;
	return r;
}

int page_point(struct rb_page_roofline *r, const char *label, bool int8, double intensity,
	       double gflops)
{
	struct rb_page_point *p;

	if (!(intensity > 0) || !(gflops > 0) || !isfinite(intensity) || !isfinite(gflops))
		return 0; /* nothing to place (a cpu result, a phase alone) */
	p = rb_page_grow((void **)&r->points, r->n_points, &r->cap_points, sizeof(*r->points));
	if (!p)
		return -ENOMEM;
	r->n_points++;
	snprintf(p->label, sizeof(p->label), "%s", label);
	p->int8 = int8;
	p->intensity = intensity;
	p->gflops = gflops;
	return 0;
}

struct rb_page_bars *page_chart(struct rb_page *page, const char *title, bool modeled)
{
	struct rb_page_bars *c = GROW(page, charts);

	if (!c)
		return NULL;
	page->n_charts++;
	snprintf(c->title, sizeof(c->title), "%s", title);
	c->modeled = modeled;
	return c;
}

struct rb_page_bar *page_bar(struct rb_page_bars *c, const char *name, const char *shape)
{
	struct rb_page_bar *b =
	    rb_page_grow((void **)&c->bars, c->n_bars, &c->cap_bars, sizeof(*c->bars));

	if (!b)
		return NULL;
	c->n_bars++;
	snprintf(b->name, sizeof(b->name), "%s", name);
	snprintf(b->shape, sizeof(b->shape), "%s", shape);
	b->count = 1;
	b->share = NAN;
	for (int i = 0; i < RB_PAGE_BARS; i++)
		b->us[i] = NAN;
	return b;
}

struct rb_page_grid *page_grid(struct rb_page *page)
{
	struct rb_page_grid *g = GROW(page, grids);

	if (g)
		page->n_grids++;
	return g;
}

/* One document's totals ("run", or the tuned JSON's "default", "tuned", ...). */
int page_totals(struct rb_page *page, const char *path, const char *which,
		const struct rb_total *totals, size_t n, bool modeled)
{
	for (size_t i = 0; i < n; i++) {
		const struct rb_total *t = &totals[i];
		struct rb_page_total *row = GROW(page, totals);

		if (!row)
			return -ENOMEM;
		page->n_totals++;
		snprintf(row->source, sizeof(row->source), "%s", path);
		snprintf(row->which, sizeof(row->which), "%s", which);
		snprintf(row->kind, sizeof(row->kind), "%s", rb_total_kind(t));
		snprintf(row->per, sizeof(row->per), "%s", rb_total_per(t));
		row->m = (long long)t->m;
		row->pairs = (long long)t->pairs;
		row->total_us = t->complete ? t->total_us : NAN;
		row->modeled = modeled;
	}
	return 0;
}

void page_shape_text(const struct rb_shape *s, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRId64 "x%" PRId64 "x%" PRId64 " %s", s->m, s->k, s->n,
		 rb_dtype_name(s->dtype));
}

/* ---- run reports ---- */

/* The largest ceilings the results record (the most cores any of them used). */
static void run_ceilings(struct rb_page_roofline *r, const struct rb_compare_roofline *rl,
			 bool int8)
{
	if (rl->peak_gflops > r->peak_gflops[int8])
		r->peak_gflops[int8] = rl->peak_gflops;
	if (rl->ddr_gbps > r->ddr_gbps)
		r->ddr_gbps = rl->ddr_gbps;
}

/* "recorded in a.json, b.json (...)": every file whose ceilings the chart takes. */
static void ceilings_source(struct rb_page_roofline *r, const char *path)
{
	static const char tail[] = " (the largest: the most cores any result used)";
	char files[sizeof(r->ceilings)];
	size_t n = strlen(r->ceilings);

	if (n == 0) {
		snprintf(r->ceilings, sizeof(r->ceilings), "recorded in %s%s", path, tail);
		return;
	}
	if (n < sizeof(tail) || strcmp(r->ceilings + n - (sizeof(tail) - 1), tail) != 0 ||
	    strstr(r->ceilings, path))
		return; /* another file's kind of ceilings, or this file is named already */
	snprintf(files, sizeof(files), "%.*s, %s%s", (int)(n - (sizeof(tail) - 1)), r->ceilings,
		 path, tail);
	snprintf(r->ceilings, sizeof(r->ceilings), "%s", files);
}

static int run_points(struct rb_page *page, const char *path, const struct rb_compare_report *rep)
{
	for (size_t i = 0; i < rep->n; i++) {
		const struct rb_compare_entry *e = &rep->entries[i];
		struct rb_page_roofline *r;
		char shape[64], label[RB_PAGE_TEXT];
		bool int8 = e->shape.dtype == RB_DTYPE_INT8;

		if (!e->roofline.present || !isfinite(e->gflops))
			continue; /* no roofline: the cpu device or a phase alone */
		r = page_roofline(page, e->device, e->modeled);
		if (!r)
			return -ENOMEM;
		run_ceilings(r, &e->roofline, int8);
		ceilings_source(r, path);
		page_shape_text(&e->shape, shape, sizeof(shape));
		snprintf(label, sizeof(label), "%s %s (%s)", e->n_names ? e->names[0] : "", shape,
			 path);
		if (page_point(r, label, int8, e->roofline.intensity, e->gflops) < 0)
			return -ENOMEM;
	}
	return 0;
}

int rb_page_add_run(struct rb_page *page, const char *path, const char *text, size_t len)
{
	struct rb_compare_report rep;
	struct rb_page_source *s;
	bool modeled = false;
	int ret = rb_compare_parse(&rep, text, len, path);

	if (ret < 0)
		return ret;
	for (size_t i = 0; i < rep.n; i++)
		modeled = modeled || rep.entries[i].modeled;
	s = page_source(page, path, "run report", modeled);
	ret = s ? page_facts(s, rep.context, "", NULL, 0) : -ENOMEM;
	if (ret == 0)
		ret = run_points(page, path, &rep);
	if (ret == 0)
		ret = page_totals(page, path, "run", rep.totals, rep.n_totals, modeled);
	rb_compare_report_release(&rep);
	return ret;
}

/* ---- comparisons ---- */

int rb_page_add_compare(struct rb_page *page, const struct rb_compare *cmp, const char *base_path,
			const char *new_path)
{
	char title[2 * RB_PAGE_TEXT];
	struct rb_page_bars *c;
	bool modeled = false;

	for (size_t i = 0; i < cmp->n_rows; i++) {
		const struct rb_compare_row *row = &cmp->rows[i];

		modeled = modeled || (row->base && row->base->modeled) ||
			  (row->new_ && row->new_->modeled);
	}
	snprintf(title, sizeof(title), "Median per result: base %s, new %s", base_path, new_path);
	c = page_chart(page, title, modeled);
	if (!c)
		return -ENOMEM;
	snprintf(c->series[0], sizeof(c->series[0]), "base");
	snprintf(c->series[1], sizeof(c->series[1]), "new");
	snprintf(c->notes, sizeof(c->notes), "change and verdict");
	page->compare = (struct rb_page_compare){.present = true,
						 .matched = cmp->matched,
						 .regressions = cmp->regressions,
						 .improvements = cmp->improvements,
						 .only_base = cmp->only_base,
						 .only_new = cmp->only_new,
						 .geomean_change = cmp->geomean_change};
	for (size_t i = 0; i < cmp->n_rows; i++) {
		const struct rb_compare_row *row = &cmp->rows[i];
		const struct rb_compare_entry *e = row->base ? row->base : row->new_;
		char shape[64];
		struct rb_page_bar *b;

		page_shape_text(&e->shape, shape, sizeof(shape));
		b = page_bar(c, row->name, shape);
		if (!b)
			return -ENOMEM;
		b->us[0] = row->base ? row->base->median_us : NAN;
		b->us[1] = row->new_ ? row->new_->median_us : NAN;
		b->m = (long long)e->shape.m;
		snprintf(b->verdict, sizeof(b->verdict), "%s", rb_verdict_name(row->verdict));
		if (isfinite(row->change))
			snprintf(b->note[1], sizeof(b->note[1]), "%+.2f%% %s", row->change * 100,
				 rb_verdict_name(row->verdict));
		else
			snprintf(b->note[1], sizeof(b->note[1]), "%s",
				 rb_verdict_name(row->verdict));
	}
	return 0;
}

/* ---- any file ---- */

/* The schema of a JSON document, "" when it has none: every document of rknn-bench
 * names its own on its top level. */
static int read_schema(const char *path, const char *text, size_t len, char *schema, size_t size)
{
	cJSON *doc = NULL;
	const cJSON *v;
	int ret =
	    rb_json_load(text, len, path,
			 "a run report, a tuned JSON or a tune cache written by rknn-bench", &doc);

	schema[0] = '\0';
	if (ret < 0)
		return ret;
	v = cJSON_GetObjectItemCaseSensitive(doc, "schema");
	if (cJSON_IsString(v))
		snprintf(schema, size, "%s", v->valuestring);
	cJSON_Delete(doc);
	return 0;
}

/* Whether `schema` is `known` or a later minor version of it ("x/1" and "x/1.2"). */
static bool same_major(const char *schema, const char *known)
{
	size_t n = strlen(known);

	return strncmp(schema, known, n) == 0 && (schema[n] == '\0' || schema[n] == '.');
}

int rb_page_add_text(struct rb_page *page, const char *path, const char *text, size_t len)
{
	char schema[64];
	int ret;

	if (rb_tune_cache_text_is(text, len))
		return rb_page_add_cache(page, path, text, len);
	ret = read_schema(path, text, len, schema, sizeof(schema));
	if (ret < 0)
		return ret;
	if (same_major(schema, RB_TUNED_SCHEMA))
		return rb_page_add_tuned(page, path, text, len);
	if (same_major(schema, RB_SCHEMA))
		return rb_page_add_run(page, path, text, len);
	return rb_set_error(-EINVAL,
			    "%s: schema is '%s': expected a run report (" RB_SCHEMA
			    "), a tuned JSON (" RB_TUNED_SCHEMA ") or a tune cache (%s)",
			    path, schema[0] ? schema : "missing", RB_TUNE_CACHE_SCHEMA);
}

int rb_page_add_file(struct rb_page *page, const char *path)
{
	char *text = NULL;
	size_t len = 0;
	int ret = rb_file_read(path, &text, &len);

	if (ret == 0)
		ret = rb_page_add_text(page, path, text, len);
	free(text);
	return ret;
}
