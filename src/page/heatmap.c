/* A tune cache on the report page: two heatmaps per shape of the best time over
 * core mask x CBUF bank split and over split weights x launch mode, and the header as
 * provenance. The records are read by the tune cache's own reader (tune/cache.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "page/page_internal.h"
#include "tune/tune.h"

/* The value of `key=` in a config text ("mask=0x7 split=n:2,1 ..."), "" if absent. */
static void config_value(const char *config, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);

	buf[0] = '\0';
	for (const char *p = config; *p; p++) {
		if ((p == config || p[-1] == ' ') && strncmp(p, key, klen) == 0 && p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, " ");

			snprintf(buf, size, "%.*s", (int)n, p + klen + 1);
			return;
		}
	}
}

/* The axis labels of a record: mask, banks, weights, launch. */
struct labels {
	char mask[32], banks[32], weights[32], launch[32];
};

static void record_labels(const struct rb_tune_record *r, struct labels *l)
{
	char split[32];
	const char *colon;

	config_value(r->config, "mask", l->mask, sizeof(l->mask));
	config_value(r->config, "banks", l->banks, sizeof(l->banks));
	if (strcmp(l->banks, "0:0") == 0 || !l->banks[0])
		snprintf(l->banks, sizeof(l->banks), "auto");
	config_value(r->config, "split", split, sizeof(split));
	colon = strchr(split, ':');
	snprintf(l->weights, sizeof(l->weights), "%s", colon ? colon + 1 : "even");
	snprintf(l->launch, sizeof(l->launch), "%s", r->launch);
}

/* The index of `label` on an axis, added when new; -1 when the axis is full. */
static int axis_index(char (*axis)[32], size_t *n, const char *label)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(axis[i], label) == 0)
			return (int)i;
	if (*n == RB_PAGE_GRID)
		return -1;
	snprintf(axis[*n], 32, "%s", label);
	return (int)(*n)++;
}

/* A record into its cell (NULL: only its labels onto the axes). */
static void grid_add(struct rb_page_grid *g, const char *row, const char *col,
		     const struct rb_tune_record *r)
{
	int i = axis_index(g->rows, &g->n_rows, row), j = axis_index(g->cols, &g->n_cols, col);

	if (i < 0 || j < 0 || !r)
		return; /* full, or the pass that only collects the axes */
	g->tried[i][j] = true;
	if (r->ok && (isnan(g->us[i][j]) || r->median_us < g->us[i][j]))
		g->us[i][j] = r->median_us;
}

static void grid_setup(struct rb_page_grid *g, const char *title, const char *shape,
		       const char *row_axis, const char *col_axis, bool modeled)
{
	snprintf(g->title, sizeof(g->title), "%s: %s x %s", shape, row_axis, col_axis);
	snprintf(g->source, sizeof(g->source), "%s", title);
	snprintf(g->row_axis, sizeof(g->row_axis), "%s", row_axis);
	snprintf(g->col_axis, sizeof(g->col_axis), "%s", col_axis);
	for (size_t i = 0; i < RB_PAGE_GRID; i++)
		for (size_t j = 0; j < RB_PAGE_GRID; j++)
			g->us[i][j] = NAN;
	g->modeled = modeled;
}

/* Axis order: the planner's choice ("auto", "even") first, then by name (masks, bank
 * splits and weight lists sort as text). */
static int label_cmp(const void *a, const void *b)
{
	const char *x = a, *y = b;
	bool xa = !strcmp(x, "auto") || !strcmp(x, "even"),
	     ya = !strcmp(y, "auto") || !strcmp(y, "even");

	if (xa != ya)
		return xa ? -1 : 1;
	return strcmp(x, y);
}

static void sort_axes(struct rb_page_grid *g)
{
	qsort(g->rows, g->n_rows, sizeof(g->rows[0]), label_cmp);
	qsort(g->cols, g->n_cols, sizeof(g->cols[0]), label_cmp);
}

/* The two heatmaps of one shape from the records of one kind: the axes first (sorted),
 * then the best time per cell. */
static int shape_grids(struct rb_page *page, const struct rb_tune_cache *c, const char *shape,
		       enum rb_tune_kind kind, bool device_modeled, const char *path)
{
	struct rb_page_grid *a, *b;
	char title[RB_PAGE_TEXT];
	bool modeled = kind == RB_TUNE_MODEL || device_modeled;

	if (!page_grid(page) || !page_grid(page))
		return -ENOMEM;
	a = &page->grids[page->n_grids - 2]; /* the two just added */
	b = a + 1;
	snprintf(title, sizeof(title), "%s: the best time per cell, %s", path,
		 kind == RB_TUNE_MODEL ? "by the timing model" : "measured on the device");
	grid_setup(a, title, shape, "core mask", "bank split", modeled);
	grid_setup(b, title, shape, "split weights", "launch mode", modeled);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < c->count; i++) {
			const struct rb_tune_record *r = &c->records[i];
			struct labels l;

			if (r->kind != kind || strcmp(r->shape, shape) != 0)
				continue;
			record_labels(r, &l);
			grid_add(a, l.mask, l.banks, pass ? r : NULL);
			grid_add(b, l.weights, l.launch, pass ? r : NULL);
		}
		sort_axes(a);
		sort_axes(b);
	}
	return 0;
}

static bool has_kind(const struct rb_tune_cache *c, const char *shape, enum rb_tune_kind kind)
{
	for (size_t i = 0; i < c->count; i++)
		if (c->records[i].kind == kind && strcmp(c->records[i].shape, shape) == 0)
			return true;
	return false;
}

/* Every shape in first-seen order: the timing model's records when there are some (they
 * cover the whole space), else the device's. */
static int cache_grids(struct rb_page *page, const struct rb_tune_cache *c, bool modeled,
		       const char *path)
{
	for (size_t i = 0; i < c->count; i++) {
		const char *shape = c->records[i].shape;
		bool seen = false;
		int ret;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(c->records[j].shape, shape) == 0 &&
			       c->records[j].kind != RB_TUNE_CPU;
		if (seen || c->records[i].kind == RB_TUNE_CPU)
			continue;
		ret = shape_grids(page, c, shape,
				  has_kind(c, shape, RB_TUNE_MODEL) ? RB_TUNE_MODEL : RB_TUNE_RUN,
				  modeled, path);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* The header's fields as facts, named by the cache's own table (tune/cache.c). */
static int header_facts(struct rb_page_source *s, const struct rb_tune_header *h)
{
	const char *name, *value;
	int ret = 0;

	for (size_t i = 0; ret == 0 && (name = rb_tune_header_field(h, i, &value)); i++)
		if (value[0])
			ret = page_fact(s, name, value, false);
	return ret;
}

int rb_page_add_cache(struct rb_page *page, const char *path, const char *text, size_t len)
{
	struct rb_tune_header h;
	struct rb_tune_cache c;
	struct rb_page_source *s;
	size_t valid;
	bool modeled;
	int ret = rb_tune_cache_read_header(path, text, len, &h);

	if (ret < 0)
		return ret;
	ret = rb_tune_cache_parse(&c, path, text, len, &h, &valid);
	modeled = strncmp(h.device, "sim", 3) == 0;
	s = ret == 0 ? page_source(page, path, "tune cache", modeled) : NULL;
	if (ret == 0)
		ret = s ? header_facts(s, &h) : -ENOMEM;
	if (ret == 0 && c.dropped_last_line)
		ret = page_fact(s, "warning",
				"the last line is cut short (a tune stopped mid-write): left out",
				true);
	if (ret == 0)
		ret = cache_grids(page, &c, modeled, path);
	rb_tune_cache_close(&c);
	return ret;
}
