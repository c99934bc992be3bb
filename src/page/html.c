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
    "vertical-align:middle}";

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

static void write_sources(FILE *f, const struct rb_page *page)
{
	fputs("<h2>Provenance</h2>\n", f);
	for (size_t i = 0; i < page->n_sources; i++) {
		const struct rb_page_source *s = &page->sources[i];
		char title[2 * RB_PAGE_TEXT];

		snprintf(title, sizeof(title), "%s: %s", s->kind, s->path);
		heading(f, "h3", title, s->modeled);
		fputs("<table><tr><th>field</th><th>value</th></tr>\n", f);
		for (size_t j = 0; j < s->n_facts; j++) {
			fprintf(f, "<tr%s><td>", s->facts[j].warning ? " class=\"warning\"" : "");
			html_text(f, s->facts[j].key);
			fputs("</td><td class=\"v\">", f);
			html_text(f, s->facts[j].value);
			fputs("</td></tr>\n", f);
		}
		fputs("</table>\n", f);
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

static double chart_max(const struct rb_page_bars *c)
{
	double max = 0;

	for (size_t i = 0; i < c->n_bars; i++)
		for (int s = 0; s < RB_PAGE_BARS; s++)
			if (isfinite(c->bars[i].us[s]))
				max = fmax(max, c->bars[i].us[s]);
	return max;
}

static void write_chart(FILE *f, const struct rb_page_bars *c)
{
	double max = chart_max(c);

	heading(f, "h3", c->title, c->modeled);
	fputs("<p class=\"key\">", f);
	for (int s = 0; s < RB_PAGE_BARS; s++)
		if (c->series[s][0])
			fprintf(f,
				"<svg width=\"12\" height=\"12\"><rect class=\"s%d\" width=\"12\" "
				"height=\"12\"/></svg> %s ",
				s, c->series[s]);
	fputs("</p>\n<table><tr><th>layer</th><th>shape</th><th>time</th><th>configs</th></tr>\n",
	      f);
	for (size_t i = 0; i < c->n_bars; i++) {
		const struct rb_page_bar *b = &c->bars[i];

		fputs("<tr><td>", f);
		html_text(f, b->name);
		fputs("</td><td>", f);
		html_text(f, b->shape);
		fputs("</td><td>", f);
		svg_bars(f, b, c, max);
		fputs("</td><td>", f);
		for (int s = 0; s < RB_PAGE_BARS; s++) {
			if (!c->series[s][0] || !b->note[s][0])
				continue;
			fprintf(f, "<div><b>%s</b>: <code>", c->series[s]);
			html_text(f, b->note[s]);
			fputs("</code></div>", f);
		}
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void write_totals(FILE *f, const struct rb_page *page)
{
	fputs("<h2>Per-model totals</h2>\n", f);
	if (!page->n_totals) {
		fputs("<p class=\"note\">No input records totals.</p>\n", f);
		return;
	}
	fputs("<p class=\"note\">Each shape's median once per pair of the shapes file, summed "
	      "per M: decode (M = 1) per generated token, prefill per prompt of M tokens.</p>\n"
	      "<table><tr><th>file</th><th>configs</th><th>what</th><th>pairs</th>"
	      "<th>total</th><th></th></tr>\n",
	      f);
	for (size_t i = 0; i < page->n_totals; i++) {
		const struct rb_page_total *t = &page->totals[i];

		fputs("<tr><td>", f);
		html_text(f, t->source);
		fputs("</td><td>", f);
		html_text(f, t->which);
		fputs("</td><td>", f);
		html_text(f, t->kind);
		fprintf(f, " (M = %lld) per ", t->m);
		html_text(f, t->per);
		fprintf(f, "</td><td class=\"num\">%lld</td>", t->pairs);
		if (isfinite(t->total_us))
			fprintf(f, "<td class=\"num\">%.1f µs</td><td>", t->total_us);
		else
			fputs("<td>incomplete</td><td>", f);
		badge(f, t->modeled);
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void write_grids(FILE *f, const struct rb_page *page)
{
	fputs("<h2>Heatmaps per tuned shape</h2>\n", f);
	if (!page->n_grids)
		fputs("<p class=\"note\">No tune cache with records among the inputs.</p>\n", f);
	for (size_t i = 0; i < page->n_grids; i++) {
		heading(f, "h3", page->grids[i].title, page->grids[i].modeled);
		svg_grid(f, &page->grids[i]);
	}
}

static bool page_modeled(const struct rb_page *page)
{
	for (size_t i = 0; i < page->n_sources; i++)
		if (page->sources[i].modeled)
			return true;
	return false;
}

int rb_page_write_html(FILE *f, const struct rb_page *page)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
	html_text(f, page->title);
	fprintf(f, "</title>\n<style>%s</style></head><body>\n<h1>", style);
	html_text(f, page->title);
	if (page_modeled(page))
		badge(f, true);
	fprintf(f, "</h1>\n<p class=\"note\">Written by rknn-bench %s from %zu file%s.", RB_VERSION,
		page->n_sources, page->n_sources == 1 ? "" : "s");
	if (page_modeled(page))
		fputs(" Times marked <b>modeled</b> come from the emulator's timing model, not a "
		      "clock.",
		      f);
	fputs("</p>\n", f);
	write_rooflines(f, page);
	fputs("<h2>Per-layer time</h2>\n", f);
	if (!page->n_charts)
		fputs("<p class=\"note\">No tuned JSON or comparison among the inputs.</p>\n", f);
	for (size_t i = 0; i < page->n_charts; i++)
		write_chart(f, &page->charts[i]);
	write_totals(f, page);
	write_grids(f, page);
	write_sources(f, page);
	fputs("</body></html>\n", f);
	return ferror(f) ? rb_set_error(-EIO, "cannot write the report") : 0;
}

int rb_page_writer(FILE *f, void *page)
{
	return rb_page_write_html(f, page);
}
