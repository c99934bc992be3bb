/* The report page as one self-contained HTML file: inline CSS and SVG, no script, no
 * external resource, so it opens offline and the same in every browser. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/version.h"
#include "page/page_internal.h"

static const char style[] =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1240px}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}"
    "h3{font-size:15px}table{border-collapse:collapse;margin:8px 0}"
    "td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
    "td.v,code{overflow-wrap:anywhere}"
    "th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}"
    "code{font-size:12px}.badge{display:inline-block;padding:1px 8px;border-radius:9px;"
    "font-size:12px;font-weight:600;margin-left:8px;vertical-align:middle}"
    ".modeled{background:#fde68a;color:#7c4a03;border:1px solid #d4a106}"
    ".measured{background:#bbf7d0;color:#14532d;border:1px solid #16a34a}"
    "tr.warning td{background:#fee2e2;color:#7f1d1d}.note{color:#555;font-size:12px}"
    "svg text{font:11px system-ui,sans-serif;fill:#333}svg .label{font-size:12px}"
    "svg .grid{stroke:#e5e5e5}svg .c0{stroke:#2563eb;fill:#2563eb}"
    "svg .c1{stroke:#9333ea;fill:#9333ea}svg polyline.ceiling{fill:none;stroke-width:2}"
    "svg circle.point{fill-opacity:.75;stroke:#fff}svg text.c0,svg text.c1{stroke:none}"
    "svg .num{font-size:10px}svg .s0{fill:#9ca3af}svg .s1{fill:#2563eb}"
    "svg .s2{fill:#f59e0b}svg .empty{fill:#f3f4f6}svg .val{font-size:11px}"
    ".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;"
    "vertical-align:middle}svg rect.best{stroke:#111;stroke-width:3}"
    "svg .t0{fill:#9ca3af}svg .t1{fill:#2563eb}svg .t2{fill:#f59e0b}svg .t3{fill:#16a34a}"
    "svg .t4{fill:#9333ea}.verdict{font-weight:600;padding:0 6px;border-radius:4px}"
    ".verdict.regression{background:#fee2e2;color:#991b1b}"
    ".verdict.improvement{background:#dcfce7;color:#166534}"
    ".verdict.same{background:#f3f4f6;color:#374151}"
    "p.summary{font-size:15px;font-weight:600}details{margin:4px 0}"
    ".grids{display:flex;flex-wrap:wrap;gap:0 24px}.grids>div{flex:0 0 580px;overflow-x:auto}"
    "h4{font-size:13px;margin:12px 0 4px}table.bars td{font-size:12px}"
    "table.bars code{font-size:11px}";

void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

static void badge(FILE *f, bool modeled)
{
	fputs(modeled ? "<span class=\"badge modeled\" title=\"times come from the emulator's "
			"timing model, not a clock\">modeled</span>"
		      : "<span class=\"badge measured\">measured</span>",
	      f);
}

static void heading(FILE *f, const char *tag, const char *text, bool modeled)
{
	fprintf(f, "<%s>", tag);
	html_text(f, text);
	badge(f, modeled);
	fprintf(f, "</%s>\n", tag);
}

/* The facts of a source that are (or are not) warnings, as table rows. */
static void fact_rows(FILE *f, const struct rb_page_source *s, bool warnings)
{
	for (size_t j = 0; j < s->n_facts; j++) {
		if (s->facts[j].warning != warnings)
			continue;
		fprintf(f, "<tr%s><td>", warnings ? " class=\"warning\"" : "");
		html_text(f, s->facts[j].key);
		fputs("</td><td class=\"v\">", f);
		html_text(f, s->facts[j].value);
		fputs("</td></tr>\n", f);
	}
}

/* Per file: its warnings in sight, every other field folded (a tuned JSON has about a
 * hundred; the page shows them without a script when unfolded). */
static void write_sources(FILE *f, const struct rb_page *page)
{
	fputs("<h2>Provenance</h2>\n", f);
	for (size_t i = 0; i < page->n_sources; i++) {
		const struct rb_page_source *s = &page->sources[i];
		char title[2 * RB_PAGE_TEXT];
		size_t warnings = 0;

		for (size_t j = 0; j < s->n_facts; j++)
			warnings += s->facts[j].warning;
		snprintf(title, sizeof(title), "%s: %s", s->kind, s->path);
		heading(f, "h3", title, s->modeled);
		if (warnings) {
			fputs("<table class=\"warnings\"><tr><th>field</th><th>value</th></tr>\n",
			      f);
			fact_rows(f, s, true);
			fputs("</table>\n", f);
		}
		fprintf(f,
			"<details><summary>%zu fields</summary>"
			"<table><tr><th>field</th><th>value</th></tr>\n",
			s->n_facts - warnings);
		fact_rows(f, s, false);
		fputs("</table></details>\n", f);
	}
}

static void write_points(FILE *f, const struct rb_page_roofline *r)
{
	fputs("<table><tr><th>#</th><th>result</th><th>flop/byte</th><th>GFLOP/s</th>"
	      "<th>of the roof</th></tr>\n",
	      f);
	for (size_t i = 0; i < r->n_points; i++) {
		const struct rb_page_point *p = &r->points[i];
		double roof = fmin(r->peak_gflops[p->int8], p->intensity * r->ddr_gbps);

		fprintf(f, "<tr><td class=\"num\">%zu</td><td>", i + 1);
		html_text(f, p->label);
		fprintf(f, "</td><td class=\"num\">%.3g</td><td class=\"num\">%.1f</td>",
			p->intensity, p->gflops);
		if (roof > 0)
			fprintf(f, "<td class=\"num\">%.0f%%</td></tr>\n", 100 * p->gflops / roof);
		else
			fputs("<td>-</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void write_rooflines(FILE *f, const struct rb_page *page)
{
	fputs("<h2>Roofline per device</h2>\n", f);
	if (!page->n_rooflines)
		fputs("<p class=\"note\">No input has a result with a roofline position.</p>\n", f);
	for (size_t i = 0; i < page->n_rooflines; i++) {
		const struct rb_page_roofline *r = &page->rooflines[i];

		heading(f, "h3", r->device, r->modeled);
		if (r->n_points)
			svg_roofline(f, r);
		fputs("<p class=\"note\">Ceilings: ", f);
		html_text(f, r->ceilings[0] ? r->ceilings : "none recorded");
		fputs(".</p>\n", f);
		write_points(f, r);
	}
}

/* The longest bar of one row: each unique shape gets its own scale, so a 1 µs decode
 * shape and a 10 ms prefill one both show how their configs differ. */
static double bar_max(const struct rb_page_bar *b)
{
	double max = 0;

	for (int s = 0; s < RB_PAGE_BARS; s++)
		if (isfinite(b->us[s]))
			max = fmax(max, b->us[s]);
	return max;
}

/* The CSS class of a verdict: regressions red, improvements green, the rest grey. */
static const char *verdict_class(const char *verdict)
{
	if (strcmp(verdict, "regression") == 0)
		return "regression";
	if (strcmp(verdict, "improvement") == 0)
		return "improvement";
	return "same";
}

static void bar_notes(FILE *f, const struct rb_page_bars *c, const struct rb_page_bar *b)
{
	if (b->verdict[0]) {
		fprintf(f, "<span class=\"verdict %s\">", verdict_class(b->verdict));
		html_text(f, b->note[1][0] ? b->note[1] : b->verdict);
		fputs("</span>", f);
		return;
	}
	for (int s = 0; s < RB_PAGE_BARS; s++) {
		bool folded = s == RB_PAGE_BARS - 1; /* the long list of contexts */

		if (!c->series[s][0] || !b->note[s][0])
			continue;
		fprintf(f,
			folded ? "<details><summary>%s</summary><code>" : "<div><b>%s</b>: <code>",
			c->series[s]);
		html_text(f, b->note[s]);
		fputs(folded ? "</code></details>" : "</code></div>", f);
	}
}

/* The pairs a row stands for: the name, or the count and as many names as fit. */
static void bar_pairs(FILE *f, const struct rb_page_bar *b)
{
	if (b->count > 1)
		fprintf(f, "<b>%zu pairs</b>: ", b->count);
	html_text(f, b->names[0] ? b->names : b->name);
}

static void write_chart(FILE *f, const struct rb_page_bars *c)
{
	bool grouped = false, shares = false;

	for (size_t i = 0; i < c->n_bars; i++) {
		grouped = grouped || c->bars[i].count > 1;
		shares = shares || isfinite(c->bars[i].share);
	}
	heading(f, "h3", c->title, c->modeled);
	fputs("<p class=\"key\">", f);
	for (int s = 0; s < RB_PAGE_BARS; s++)
		if (c->series[s][0])
			fprintf(f,
				"<svg width=\"12\" height=\"12\"><rect class=\"s%d\" width=\"12\" "
				"height=\"12\"/></svg> %s ",
				s, c->series[s]);
	fputs("</p>\n<p class=\"note\">One scale per row: the longest bar is that row's slowest "
	      "time.",
	      f);
	if (shares)
		fputs(" Share: the row's pairs x its time over the sum at the same M (tuned "
		      "times).",
		      f);
	fprintf(f,
		"</p>\n<table class=\"bars%s\"><tr><th>shape</th><th>%s</th>%s<th>time</th>"
		"<th>",
		grouped ? " grouped" : "", grouped ? "pairs" : "layer",
		shares ? "<th>share</th>" : "");
	html_text(f, c->notes[0] ? c->notes : "notes");
	fputs("</th></tr>\n", f);
	for (size_t i = 0; i < c->n_bars; i++) {
		const struct rb_page_bar *b = &c->bars[i];

		fputs("<tr class=\"group\"><td>", f);
		html_text(f, b->shape);
		fputs("</td><td>", f);
		bar_pairs(f, b);
		fputs("</td>", f);
		if (shares && isfinite(b->share))
			fprintf(f, "<td class=\"num\">%.1f%%</td>", 100 * b->share);
		else if (shares)
			fputs("<td>-</td>", f);
		fputs("<td>", f);
		svg_bars(f, b, c, bar_max(b));
		fputs("</td><td>", f);
		bar_notes(f, c, b);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* The line the text output of compare ends with. */
static void write_compare_summary(FILE *f, const struct rb_page_compare *cmp)
{
	if (!cmp->present)
		return;
	fputs("<p class=\"summary compare\">", f);
	if (cmp->matched)
		fprintf(f, "geomean: %+.2f%% over %zu matched row%s (new/base median)",
			cmp->geomean_change * 100, cmp->matched, cmp->matched == 1 ? "" : "s");
	else
		fputs("geomean: - (no matched rows)", f);
	fprintf(f,
		"; <span class=\"verdict %s\">%zu regression%s</span>, <span class=\"verdict "
		"%s\">%zu improvement%s</span>",
		cmp->regressions ? "regression" : "same", cmp->regressions,
		cmp->regressions == 1 ? "" : "s", cmp->improvements ? "improvement" : "same",
		cmp->improvements, cmp->improvements == 1 ? "" : "s");
	if (cmp->only_base || cmp->only_new)
		fprintf(f, "; %zu only in base, %zu only in new", cmp->only_base, cmp->only_new);
	fputs("</p>\n", f);
}

static bool same_total_group(const struct rb_page_total *a, const struct rb_page_total *b)
{
	return strcmp(a->source, b->source) == 0 && a->m == b->m && strcmp(a->kind, b->kind) == 0;
}

/* One chart per file and M: every way of running the pairs the file holds. */
static void write_total_group(FILE *f, const struct rb_page *page, size_t first)
{
	const struct rb_page_total *rows[RB_PAGE_TOTAL_ROWS], *t = &page->totals[first];
	size_t n = 0;
	bool modeled = false;

	for (size_t i = first; i < page->n_totals && n < RB_PAGE_TOTAL_ROWS; i++)
		if (same_total_group(&page->totals[i], t)) {
			rows[n++] = &page->totals[i];
			modeled = modeled || page->totals[i].modeled;
		}
	fputs("<h3>", f);
	html_text(f, t->kind);
	fprintf(f, " (M = %lld) per ", t->m);
	html_text(f, t->per);
	fprintf(f, ", %lld pairs: ", t->pairs);
	html_text(f, t->source);
	badge(f, modeled);
	fputs("</h3>\n", f);
	svg_totals(f, rows, n);
}

static void write_totals(FILE *f, const struct rb_page *page)
{
	fputs("<h2>Per-model totals</h2>\n", f);
	if (!page->n_totals) {
		fputs("<p class=\"note\">No input records totals.</p>\n", f);
		return;
	}
	fputs("<p class=\"note\">Each shape's median once per pair of the shapes file, summed "
	      "per M: decode (M = 1) per generated token, prefill per prompt of M tokens. "
	      "Tokens per second: decode 1e6 / µs per token, prefill M x 1e6 / µs per "
	      "prompt.</p>\n",
	      f);
	for (size_t i = 0; i < page->n_totals; i++) {
		bool seen = false;

		for (size_t j = 0; j < i && !seen; j++)
			seen = same_total_group(&page->totals[j], &page->totals[i]);
		if (!seen)
			write_total_group(f, page, i);
	}
}

/* The heatmaps side by side (two per shape), wrapping when they do not fit. */
static void write_grids(FILE *f, const struct rb_page *page)
{
	fputs("<h2>Heatmaps per tuned shape</h2>\n", f);
	if (!page->n_grids) {
		fputs("<p class=\"note\">No tune cache with records among the inputs.</p>\n", f);
		return;
	}
	fputs("<p class=\"note\">Green the fastest cell, red the slowest (the scale under each "
	      "map); ★ and an outline mark the best cell.</p>\n",
	      f);
	for (size_t i = 0; i < page->n_grids; i++) {
		if (i == 0 || strcmp(page->grids[i].source, page->grids[i - 1].source) != 0) {
			fputs(i ? "</div>\n<h3>" : "<h3>", f);
			html_text(f, page->grids[i].source);
			fputs("</h3>\n<div class=\"grids\">\n", f);
		}
		fputs("<div>", f);
		heading(f, "h4", page->grids[i].title, page->grids[i].modeled);
		svg_grid(f, &page->grids[i]);
		fputs("</div>\n", f);
	}
	fputs("</div>\n", f);
}

/* How many sources are modeled. */
static size_t page_modeled(const struct rb_page *page)
{
	size_t n = 0;

	for (size_t i = 0; i < page->n_sources; i++)
		n += page->sources[i].modeled;
	return n;
}

/* "run reports, tuned JSON and tune cache": every kind of file the page shows, in the
 * order first met, plural when there are several of a kind. */
static void kinds_text(const struct rb_page *page, char *buf, size_t size)
{
	size_t used = 0, n_kinds = 0, k = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < page->n_sources; i++) {
		bool first = true;

		for (size_t j = 0; j < i; j++)
			first = first && strcmp(page->sources[j].kind, page->sources[i].kind) != 0;
		n_kinds += first;
	}
	for (size_t i = 0; i < page->n_sources && used < size; i++) {
		const char *kind = page->sources[i].kind;
		size_t count = 0;
		bool first = true;

		for (size_t j = 0; j < page->n_sources; j++) {
			count += strcmp(page->sources[j].kind, kind) == 0;
			first = first && (j >= i || strcmp(page->sources[j].kind, kind) != 0);
		}
		if (!first)
			continue;
		k++;
		used += (size_t)snprintf(buf + used, size - used, "%s%s%s",
					 k == 1 ? "" : (k == n_kinds ? " and " : ", "), kind,
					 count > 1 ? "s" : "");
	}
}

/* The title: the given one, the kinds of file shown, and "modeled" only when every
 * file is (both words when they mix). */
static void write_title(FILE *f, const struct rb_page *page, const char *tag)
{
	char kinds[256];
	size_t modeled = page_modeled(page);

	kinds_text(page, kinds, sizeof(kinds));
	fprintf(f, "<%s>", tag);
	html_text(f, page->title);
	if (kinds[0]) {
		fputs(": ", f);
		html_text(f, kinds);
	}
	if (strcmp(tag, "title") == 0)
		fputs(modeled == page->n_sources ? (modeled ? " (modeled)" : "")
		      : modeled                  ? " (modeled and measured)"
						 : " (measured)",
		      f);
	else if (page->n_sources && modeled == page->n_sources)
		badge(f, true);
	else if (modeled)
		fputs("<span class=\"badge modeled\">modeled</span><span class=\"badge "
		      "measured\">and measured</span>",
		      f);
	else if (page->n_sources)
		badge(f, false);
	fprintf(f, "</%s>\n", tag);
}

int rb_page_write_html(FILE *f, const struct rb_page *page)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n", f);
	write_title(f, page, "title");
	fprintf(f, "<style>%s</style></head><body>\n", style);
	write_title(f, page, "h1");
	fprintf(f, "<p class=\"note\">Written by rknn-bench %s from %zu file%s.", RB_VERSION,
		page->n_sources, page->n_sources == 1 ? "" : "s");
	if (page_modeled(page))
		fputs(" Times marked <b>modeled</b> come from the emulator's timing model, not a "
		      "clock.",
		      f);
	fputs("</p>\n", f);
	write_compare_summary(f, &page->compare);
	write_totals(f, page);
	write_rooflines(f, page);
	fputs("<h2>Per-layer time, one row per unique shape</h2>\n", f);
	if (!page->n_charts)
		fputs("<p class=\"note\">No tuned JSON or comparison among the inputs.</p>\n", f);
	for (size_t i = 0; i < page->n_charts; i++)
		write_chart(f, &page->charts[i]);
	write_grids(f, page);
	write_sources(f, page);
	fputs("</body></html>\n", f);
	return ferror(f) ? rb_set_error(-EIO, "cannot write the report") : 0;
}

int rb_page_writer(FILE *f, void *page)
{
	return rb_page_write_html(f, page);
}
