/* The report's charts as inline SVG: a log-log roofline, bar groups, heatmaps. Every
 * mark carries a <title>, which browsers show on hover without any script. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "page/page_internal.h"

#define RL_W      720.0
#define RL_H      400.0
#define RL_LEFT   70.0
#define RL_RIGHT  20.0
#define RL_TOP    20.0
#define RL_BOTTOM 50.0

/* A log10 axis over whole decades. */
struct axis {
	double lo, hi;   /* log10 of the ends */
	double from, to; /* pixels */
};

static double axis_px(const struct axis *a, double v)
{
	return a->from + (log10(v) - a->lo) / (a->hi - a->lo) * (a->to - a->from);
}

static void decades(double min, double max, struct axis *a)
{
	a->lo = floor(log10(min));
	a->hi = ceil(log10(max));
	if (a->hi <= a->lo)
		a->hi = a->lo + 1;
}

/* The value range the chart must show: every point, the ridge, the ceilings. */
static void roofline_axes(const struct rb_page_roofline *r, struct axis *x, struct axis *y)
{
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;

	for (size_t i = 0; i < r->n_points; i++) {
		xmin = fmin(xmin, r->points[i].intensity);
		xmax = fmax(xmax, r->points[i].intensity);
		ymin = fmin(ymin, r->points[i].gflops);
		ymax = fmax(ymax, r->points[i].gflops);
	}
	for (int d = 0; d < 2 && r->ddr_gbps > 0; d++) {
		if (!(r->peak_gflops[d] > 0))
			continue;
		xmax = fmax(xmax, 2 * r->peak_gflops[d] / r->ddr_gbps);
		ymax = fmax(ymax, r->peak_gflops[d]);
	}
	decades(xmin / 2, xmax * 2, x);
	decades(ymin / 2, ymax * 2, y);
	x->from = RL_LEFT;
	x->to = RL_W - RL_RIGHT;
	y->from = RL_H - RL_BOTTOM;
	y->to = RL_TOP;
}

static void roofline_grid(FILE *f, const struct axis *x, const struct axis *y)
{
	for (int d = (int)x->lo; d <= (int)x->hi; d++) {
		double px = axis_px(x, pow(10, d));

		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			px, y->from, px, y->to);
		fprintf(
		    f,
		    "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>",
		    px, y->from + 16, pow(10, d));
	}
	for (int d = (int)y->lo; d <= (int)y->hi; d++) {
		double py = axis_px(y, pow(10, d));

		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>",
			x->from, py, x->to, py);
		fprintf(f,
			"<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>",
			x->from - 6, py + 4, pow(10, d));
	}
	fprintf(f,
		"<text class=\"label\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">arithmetic "
		"intensity (flop per byte of A+B+C)</text>",
		(x->from + x->to) / 2, RL_H - 12);
	fprintf(f,
		"<text class=\"label\" transform=\"translate(16 %.1f) rotate(-90)\" "
		"text-anchor=\"middle\">GFLOP/s</text>",
		(y->from + y->to) / 2);
}

/* The DDR slope up to the ridge, then the MAC ceiling of each dtype. */
static void roofline_ceilings(FILE *f, const struct rb_page_roofline *r, const struct axis *x,
			      const struct axis *y)
{
	static const char *const dtype[] = {"fp16", "int8"};
	double x0 = pow(10, x->lo), x1 = pow(10, x->hi);

	for (int d = 0; d < 2 && r->ddr_gbps > 0; d++) {
		double peak = r->peak_gflops[d], ridge = peak / r->ddr_gbps, start = x0;

		if (!(peak > 0))
			continue;
		if (start * r->ddr_gbps < pow(10, y->lo)) /* the slope enters at the bottom */
			start = pow(10, y->lo) / r->ddr_gbps;
		fprintf(f,
			"<polyline class=\"ceiling c%d\" points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\">"
			"<title>%s: MAC ceiling %.0f GFLOP/s, DDR ceiling %.1f GB/s, ridge at %.1f "
			"flop/byte</title></polyline>",
			d, axis_px(x, start), axis_px(y, start * r->ddr_gbps), axis_px(x, ridge),
			axis_px(y, peak), axis_px(x, x1), axis_px(y, peak), dtype[d], peak,
			r->ddr_gbps, ridge);
		fprintf(f,
			"<text class=\"tick c%d\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s MAC "
			"%.0f GFLOP/s</text>",
			d, axis_px(x, x1) - 4, axis_px(y, peak) - 6, dtype[d], peak);
	}
	if (r->ddr_gbps > 0)
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">DDR %.1f GB/s</text>",
			x->from + 8, y->from - 8, r->ddr_gbps);
}

/* A point's number label: the points drawn at (nearly) the same spot share one label
 * ("3-5, 9"), and a label moves until it overlaps no label placed before it. The
 * numbers key the table under the chart. */
struct rl_label {
	double px, py;  /* the point */
	double x, y, w; /* the label's box: baseline-left corner and width */
	size_t owner;   /* the point whose label holds this one's number */
	char text[64];
};

#define RL_NEAR    6.0  /* px: points closer than this share a label */
#define RL_LABEL_H 11.0 /* px: a label's height */

static bool labels_overlap(const struct rl_label *a, const struct rl_label *b)
{
	return a->x < b->x + b->w && b->x < a->x + a->w && a->y - RL_LABEL_H < b->y &&
	       b->y - RL_LABEL_H < a->y;
}

/* Appends number k to a label, as a range when it follows the last one. */
static void label_add(struct rl_label *l, size_t k, size_t *last)
{
	size_t used = strlen(l->text);
	char *dash = strrchr(l->text, '-');
	char *comma = strrchr(l->text, ',');

	if (used && *last + 1 == k) {
		if (dash && (!comma || dash > comma))
			used = (size_t)(dash - l->text); /* extend "3-4" to "3-5" */
		snprintf(l->text + used, sizeof(l->text) - used, "-%zu", k);
	} else if (used + 8 < sizeof(l->text)) {
		snprintf(l->text + used, sizeof(l->text) - used, "%s%zu", used ? ", " : "", k);
	}
	*last = k;
}

static void label_place(struct rl_label *labels, size_t i)
{
	static const double dy[] = {-5, 14, -17, 26, -29, 38, -41, 50};
	struct rl_label *l = &labels[i];

	l->w = 6.5 * (double)strlen(l->text);
	for (size_t t = 0; t < ARRAY_SIZE(dy); t++) {
		bool clear = true;

		l->x = l->px + 7;
		l->y = l->py + dy[t];
		for (size_t j = 0; j < i && clear; j++)
			clear = labels[j].owner != j || !labels_overlap(l, &labels[j]);
		if (clear)
			return;
	}
}

static void roofline_labels(FILE *f, struct rl_label *labels, size_t n)
{
	size_t last = 0;

	for (size_t i = 0; i < n; i++) {
		labels[i].owner = i;
		for (size_t j = 0; j < i; j++)
			if (labels[j].owner == j && fabs(labels[j].px - labels[i].px) < RL_NEAR &&
			    fabs(labels[j].py - labels[i].py) < RL_NEAR) {
				labels[i].owner = j;
				break;
			}
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t k = i; k < n; k++)
			if (labels[k].owner == i)
				label_add(&labels[i], k + 1, &last);
		if (labels[i].owner != i)
			continue;
		label_place(labels, i);
		fprintf(f, "<text class=\"num\" x=\"%.1f\" y=\"%.1f\">%s</text>", labels[i].x,
			labels[i].y, labels[i].text);
	}
}

void svg_roofline(FILE *f, const struct rb_page_roofline *r)
{
	struct rl_label *labels = calloc(r->n_points, sizeof(*labels));
	struct axis x, y;

	roofline_axes(r, &x, &y);
	fprintf(f,
		"<svg class=\"roofline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">",
		RL_W, RL_H, RL_W, RL_H);
	roofline_grid(f, &x, &y);
	roofline_ceilings(f, r, &x, &y);
	for (size_t i = 0; i < r->n_points; i++) {
		const struct rb_page_point *p = &r->points[i];
		double px = axis_px(&x, p->intensity), py = axis_px(&y, p->gflops);

		fprintf(f,
			"<circle class=\"point c%d\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\"><title>%zu: ",
			p->int8, px, py, i + 1);
		html_text(f, p->label);
		fprintf(f, ": %.3g flop/byte, %.1f GFLOP/s</title></circle>", p->intensity,
			p->gflops);
		if (labels) {
			labels[i].px = px;
			labels[i].py = py;
		}
	}
	if (labels) /* without memory the numbers stay in the table and the hover titles */
		roofline_labels(f, labels, r->n_points);
	free(labels);
	fputs("</svg>\n", f);
}

#define BAR_W     300.0
#define BAR_H     12.0
#define BAR_LABEL 90.0

void svg_bars(FILE *f, const struct rb_page_bar *bar, const struct rb_page_bars *chart,
	      double max_us)
{
	int n = 0;

	for (int i = 0; i < RB_PAGE_BARS; i++)
		n += chart->series[i][0] != '\0';
	fprintf(f,
		"<svg class=\"bars\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\">",
		BAR_W + BAR_LABEL, n * (BAR_H + 2) + 2);
	for (int i = 0, row = 0; i < RB_PAGE_BARS; i++) {
		double w, yy = 1 + row * (BAR_H + 2);

		if (!chart->series[i][0])
			continue;
		row++;
		if (!isfinite(bar->us[i])) {
			fprintf(f, "<text class=\"tick\" x=\"2\" y=\"%.1f\">%s: none</text>",
				yy + BAR_H - 2, chart->series[i]);
			continue;
		}
		w = max_us > 0 ? bar->us[i] / max_us * BAR_W : 0;
		fprintf(f,
			"<rect class=\"bar s%d\" x=\"0\" y=\"%.1f\" width=\"%.1f\" height=\"%.0f\">"
			"<title>%s: %.1f µs</title></rect>",
			i, yy, w < 1 ? 1 : w, BAR_H, chart->series[i], bar->us[i]);
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%.1f µs</text>", w + 4,
			yy + BAR_H - 2, bar->us[i]);
	}
	fputs("</svg>", f);
}

#define CELL_W  90.0
#define CELL_H  24.0
#define GRID_X0 100.0
#define GRID_Y0 36.0

/* Green for the grid's best time, to red for its worst. */
static void cell_fill(FILE *f, double us, double lo, double hi)
{
	double t = hi > lo ? (us - lo) / (hi - lo) : 0;

	fprintf(f, "hsl(%.0f, 65%%, %.0f%%)", 120 * (1 - t), 78 - 10 * t);
}

static void grid_range(const struct rb_page_grid *g, double *lo, double *hi)
{
	*lo = INFINITY;
	*hi = 0;
	for (size_t i = 0; i < g->n_rows; i++)
		for (size_t j = 0; j < g->n_cols; j++)
			if (isfinite(g->us[i][j])) {
				*lo = fmin(*lo, g->us[i][j]);
				*hi = fmax(*hi, g->us[i][j]);
			}
}

/* A cell; the first with the grid's best time is marked as the best (*marked then
 * set), any later one with the same time says it ties. */
static void grid_cell(FILE *f, const struct rb_page_grid *g, size_t i, size_t j, double lo,
		      double hi, bool *marked)
{
	double x = GRID_X0 + (double)j * CELL_W, y = GRID_Y0 + (double)i * CELL_H;
	double us = g->us[i][j];
	bool ties = isfinite(us) && us == lo, best = ties && !*marked;

	*marked = *marked || best;
	fprintf(f, "<rect class=\"cell%s\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\"",
		isfinite(us) ? (best ? " best" : "") : " empty", x, y, CELL_W - 2, CELL_H - 2);
	if (isfinite(us)) {
		fputs(" fill=\"", f);
		cell_fill(f, us, lo, hi);
		fputc('"', f);
	}
	fprintf(f, "><title>%s ", g->row_axis);
	html_text(f, g->rows[i]);
	fprintf(f, ", %s ", g->col_axis);
	html_text(f, g->cols[j]);
	fputs(": ", f);
	if (isfinite(us))
		fprintf(f, "%.1f µs%s</title></rect>", us,
			best ? " (the best)" : (ties ? " (ties the best)" : ""));
	else
		fprintf(f, "%s</title></rect>",
			g->tried[i][j] ? "every config failed" : "not in the space");
	fprintf(f, "<text class=\"val\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
		x + CELL_W / 2 - 1, y + CELL_H / 2 + 4);
	if (isfinite(us))
		fprintf(f, "%s%.1f", best ? "★ " : "", us);
	else
		fputs(g->tried[i][j] ? "failed" : "-", f);
	fputs("</text>", f);
}

#define LEGEND_STEPS 10
#define LEGEND_W     24.0
#define LEGEND_H     24.0

/* The colour scale under the grid: fastest (green) to slowest (red) in steps, the end
 * values in µs, the best cell's mark and the grey of cells without a time. */
static void grid_legend(FILE *f, double top, double lo, double hi)
{
	double x = GRID_X0;

	fprintf(f,
		"<g class=\"legend\"><text class=\"tick\" x=\"%.0f\" y=\"%.0f\" "
		"text-anchor=\"end\">%.1f µs</text>",
		x - 6, top + 14, lo);
	for (int s = 0; s < LEGEND_STEPS; s++) {
		double us = lo + (hi - lo) * s / (LEGEND_STEPS - 1);

		fprintf(f,
			"<rect class=\"legend\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" "
			"height=\"18\" fill=\"",
			x + s * LEGEND_W, top, LEGEND_W);
		cell_fill(f, us, lo, hi);
		fprintf(f, "\"><title>%.1f µs</title></rect>", us);
	}
	x += LEGEND_STEPS * LEGEND_W;
	fprintf(f,
		"<text class=\"tick\" x=\"%.0f\" y=\"%.0f\">%.1f µs (slowest); grey: no "
		"time</text></g>",
		x + 6, top + 14, hi);
}

void svg_grid(FILE *f, const struct rb_page_grid *g)
{
	double lo, hi, bottom = GRID_Y0 + (double)g->n_rows * CELL_H;
	bool marked = false;

	grid_range(g, &lo, &hi);
	fprintf(f,
		"<svg class=\"heatmap\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\">",
		fmax(GRID_X0 + (double)g->n_cols * CELL_W, GRID_X0 + 420),
		bottom + 8 + (isfinite(lo) ? LEGEND_H : 0));
	fprintf(f, "<text class=\"label\" x=\"4\" y=\"14\">");
	html_text(f, g->row_axis);
	fputs(" \\ ", f);
	html_text(f, g->col_axis);
	fputs(" (µs)</text>", f);
	for (size_t j = 0; j < g->n_cols; j++) {
		fprintf(f, "<text class=\"tick\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
			GRID_X0 + (double)j * CELL_W + CELL_W / 2, GRID_Y0 - 8);
		html_text(f, g->cols[j]);
		fputs("</text>", f);
	}
	for (size_t i = 0; i < g->n_rows; i++) {
		fprintf(f, "<text class=\"tick\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">",
			GRID_X0 - 8, GRID_Y0 + (double)i * CELL_H + CELL_H / 2 + 4);
		html_text(f, g->rows[i]);
		fputs("</text>", f);
		for (size_t j = 0; j < g->n_cols; j++)
			grid_cell(f, g, i, j, lo, hi, &marked);
	}
	if (isfinite(lo))
		grid_legend(f, bottom + 8, lo, hi);
	fputs("</svg>\n", f);
}

static const char *const total_names[][2] = {
    {"default", "default config"},
    {"tuned", "tuned (rknn-bench)"},
    {"rknn_matmul_api", "librknnrt-expressible"},
    {"backend", "ggml-rknn backend as it is"},
    {"best_overall", "best overall"},
    {"run", "run"},
};

/* The index of a totals array's name (its colour), ARRAY_SIZE when unknown. */
static size_t total_index(const char *which)
{
	size_t i = 0;

	while (i < ARRAY_SIZE(total_names) && strcmp(which, total_names[i][0]) != 0)
		i++;
	return i;
}

const char *page_total_label(const char *which)
{
	size_t i = total_index(which);

	return i < ARRAY_SIZE(total_names) ? total_names[i][1] : which;
}

/* Tokens per second of a total: decode one token per total, prefill M. */
static double tokens_per_s(const struct rb_page_total *t)
{
	double tokens = strcmp(t->per, "token") == 0 ? 1 : (double)t->m;

	return t->total_us > 0 ? tokens * 1e6 / t->total_us : NAN;
}

#define TOT_LABEL 190.0
#define TOT_W     420.0
#define TOT_H     18.0

void svg_totals(FILE *f, const struct rb_page_total *const *rows, size_t n)
{
	double max = 0;

	for (size_t i = 0; i < n; i++)
		if (isfinite(tokens_per_s(rows[i])))
			max = fmax(max, tokens_per_s(rows[i]));
	fprintf(f,
		"<svg class=\"totals\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%.0f\">",
		TOT_LABEL + TOT_W + 300, (double)n * (TOT_H + 4) + 4);
	for (size_t i = 0; i < n; i++) {
		double tps = tokens_per_s(rows[i]), y = 2 + (double)i * (TOT_H + 4);
		double w = max > 0 && isfinite(tps) ? tps / max * TOT_W : 0;

		fprintf(f,
			"<text class=\"label\" x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
			TOT_LABEL - 6, y + TOT_H - 5, page_total_label(rows[i]->which));
		if (!isfinite(tps)) {
			fprintf(f, "<text class=\"tick\" x=\"%.0f\" y=\"%.1f\">incomplete</text>",
				TOT_LABEL, y + TOT_H - 5);
			continue;
		}
		fprintf(f,
			"<rect class=\"total t%zu\" x=\"%.0f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.0f\"><title>%s: %.1f tokens/s, %.1f µs per %s</title></rect>",
			total_index(rows[i]->which) % 5, TOT_LABEL, y, w < 1 ? 1 : w, TOT_H,
			rows[i]->which, tps, rows[i]->total_us, rows[i]->per);
		fprintf(f,
			"<text class=\"val\" x=\"%.1f\" y=\"%.1f\">%.1f tokens/s (%.1f µs per "
			"%s)</text>",
			TOT_LABEL + w + 6, y + TOT_H - 5, tps, rows[i]->total_us, rows[i]->per);
	}
	fputs("</svg>\n", f);
}
