/* Helpers shared by the files of src/page/ (not part of the report's interface). */
#ifndef RB_PAGE_PAGE_INTERNAL_H
#define RB_PAGE_PAGE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cJSON.h>

#include "page/page.h"
#include "results/totals.h"
#include "rknn_bench/shape.h"

/* Each adds one element to the page (zeroed, then filled) and returns it, or NULL
 * (-ENOMEM recorded). page_roofline returns the device's existing roofline if any. */
struct rb_page_source *page_source(struct rb_page *page, const char *path, const char *kind,
				   bool modeled);
struct rb_page_roofline *page_roofline(struct rb_page *page, const char *device, bool modeled);
struct rb_page_bars *page_chart(struct rb_page *page, const char *title, bool modeled);
struct rb_page_bar *page_bar(struct rb_page_bars *chart, const char *name, const char *shape);
struct rb_page_grid *page_grid(struct rb_page *page);

/* 0 or -ENOMEM. */
int page_fact(struct rb_page_source *s, const char *key, const char *value, bool warning);
int page_facts(struct rb_page_source *s, const cJSON *o, const char *prefix,
	       const char *const *skip, size_t n_skip);
/* A point with no positive finite intensity or rate is left out (0). */
int page_point(struct rb_page_roofline *r, const char *label, bool int8, double intensity,
	       double gflops);
/* One document's totals, read by its reader ("run", or a tuned JSON's way of running
 * the pairs); 0 or -ENOMEM. */
int page_totals(struct rb_page *page, const char *path, const char *which,
		const struct rb_total *totals, size_t n, bool modeled);
void page_shape_text(const struct rb_shape *s, char *buf, size_t size);

/* HTML text: s with &, <, >, " and ' escaped. */
void html_text(FILE *f, const char *s);
/* The SVG charts (svg.c). */
void svg_roofline(FILE *f, const struct rb_page_roofline *r);
void svg_bars(FILE *f, const struct rb_page_bar *bar, const struct rb_page_bars *chart,
	      double max_us);
void svg_grid(FILE *f, const struct rb_page_grid *g);
/* One total per way of running a file's pairs at one M, as tokens per second. */
#define RB_PAGE_TOTAL_ROWS 8
void svg_totals(FILE *f, const struct rb_page_total *const *rows, size_t n);
/* The human name of a totals array ("tuned" -> "tuned (rknn-bench)"). */
const char *page_total_label(const char *which);

#endif
