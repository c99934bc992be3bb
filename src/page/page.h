/* The HTML report (`rknn-bench report`, `compare --format html`): a page model filled
 * from the files rknn-bench writes, then written as one self-contained HTML file
 * (inline CSS and SVG, no script, no network).
 *
 * Inputs, told apart by their schema: run reports ("rknn-bench/1", read through
 * results/compare's reader), tuned JSON files ("rknn-bench-tuned/1", read through the
 * tuned reader of include/rknn_bench/tuned.h) and tune caches (JSON Lines whose first
 * line is a "rknn-bench-tune-cache/1" header, read through tune/cache.c). What each
 * gives:
 *
 *   roofline   per device: one point per result (run) or tuned shape (tuned JSON) at
 *              its arithmetic intensity (GFLOP/s over GB/s of A+B+C) and GFLOP/s, under
 *              the MAC ceiling (per dtype) and the DDR ceiling: the ones a run report
 *              records, else those of the embedded hardware profile (hw/soc.h) with
 *              every core. Where they come from is written under the chart.
 *   bars       per unique shape of a tuned JSON (its pairs counted and named, its
 *              share of the total at its M): the default config's time, the tuned
 *              one and the best rknn_matmul_api config, with the configs beside
 *              them, on one scale per shape; compare: base and new median per
 *              paired result, the verdicts coloured, the geomean and the counts.
 *   heatmaps   per shape of a cache: the best time over core mask x CBUF bank split and
 *              over split weights x launch mode (the timing model's records when the
 *              cache has them, else the device's).
 *   totals     the per-token decode and per-prompt prefill totals a report records,
 *              as a chart of tokens per second (decode 1e6 / µs per token, prefill
 *              M x 1e6 / µs per prompt) with the µs beside.
 *   provenance every scalar of a run report's context, a tuned JSON's top level and a
 *              cache's header, and the host-settings warnings.
 *
 * Every chart whose times come from a model carries a "modeled" badge.
 *
 * Ownership: struct rb_page is owned by the caller: rb_page_init, then rb_page_add_*,
 * rb_page_write_html, rb_page_release (also after an error). The page copies what it
 * keeps. Functions are silent: 0 or a negative errno with rb_last_error() naming the
 * file and what is wrong (-EINVAL for bad content, -ENOMEM, or the read error). */
#ifndef RB_PAGE_PAGE_H
#define RB_PAGE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "results/compare.h"

#define RB_PAGE_TEXT 192
#define RB_PAGE_GRID 16 /* most rows or columns of a heatmap */

struct rb_page_point {
	char label[RB_PAGE_TEXT];
	bool int8;
	double intensity; /* flop per byte of A+B+C */
	double gflops;
};

struct rb_page_roofline {
	char device[RB_PAGE_TEXT]; /* "sim (modeled)" */
	bool modeled;
	double peak_gflops[2]; /* MAC ceilings: [0] fp16, [1] int8; 0: none */
	double ddr_gbps;
	char ceilings[2 * RB_PAGE_TEXT]; /* where the ceilings come from */
	struct rb_page_point *points;
	size_t n_points, cap_points;
};

/* One group of bars: up to three times of one unique shape, shared by `count` pairs
 * (a tuned JSON lists a shape once per layer: 16 identical rows per decode layer). */
#define RB_PAGE_BARS 3
struct rb_page_bar {
	char name[RB_PAGE_TEXT];      /* the first pair's name */
	char names[RB_PAGE_TEXT * 2]; /* every pair's, as many as fit ("" when one) */
	char shape[64];
	long long m;             /* rows of A: the prompt or token the pair belongs to */
	size_t count;            /* pairs with this shape */
	double share;            /* of the chart's total at this m (count x time); NAN: none */
	double us[RB_PAGE_BARS]; /* NAN: none */
	char note[RB_PAGE_BARS][RB_PAGE_TEXT * 2]; /* shown beside the bars (a config) */
	char verdict[32]; /* compare: the verdict ("regression", ...); "" otherwise */
};

struct rb_page_bars {
	char title[RB_PAGE_TEXT * 2];
	char series[RB_PAGE_BARS][32]; /* "default", "tuned", "rknn_matmul_api"; "" unused */
	char notes[32];                /* the heading of the notes' column */
	bool modeled;
	struct rb_page_bar *bars;
	size_t n_bars, cap_bars;
};

struct rb_page_grid {
	char title[RB_PAGE_TEXT * 2];
	char source[RB_PAGE_TEXT]; /* the cache and which records: "c.jsonl, the timing model" */
	char row_axis[32], col_axis[32];
	char rows[RB_PAGE_GRID][32], cols[RB_PAGE_GRID][32];
	size_t n_rows, n_cols;
	double us[RB_PAGE_GRID][RB_PAGE_GRID];  /* best time; NAN: no config ran */
	bool tried[RB_PAGE_GRID][RB_PAGE_GRID]; /* some config of the cell was tried */
	bool modeled;
};

struct rb_page_total {
	char source[RB_PAGE_TEXT]; /* file */
	char which[32];            /* "run", "default", "tuned", "rknn_matmul_api" */
	long long m;
	char kind[16]; /* decode, prefill */
	char per[16];  /* token, prompt */
	long long pairs;
	double total_us; /* NAN: incomplete */
	bool modeled;
};

struct rb_page_fact {
	char key[64];
	char value[512];
	bool warning;
};

struct rb_page_source {
	char path[RB_PAGE_TEXT];
	char kind[32]; /* "run report", "tuned JSON", "tune cache" */
	bool modeled;
	struct rb_page_fact *facts;
	size_t n_facts, cap_facts;
};

/* A comparison's summary, as the text output ends with. */
struct rb_page_compare {
	bool present;
	size_t matched, regressions, improvements, only_base, only_new;
	double geomean_change; /* new/base - 1; NAN: no matched row */
};

struct rb_page {
	char title[RB_PAGE_TEXT];
	struct rb_page_compare compare;
	struct rb_page_source *sources;
	size_t n_sources, cap_sources;
	struct rb_page_roofline *rooflines;
	size_t n_rooflines, cap_rooflines;
	struct rb_page_bars *charts;
	size_t n_charts, cap_charts;
	struct rb_page_grid *grids;
	size_t n_grids, cap_grids;
	struct rb_page_total *totals;
	size_t n_totals, cap_totals;
};

void rb_page_init(struct rb_page *page, const char *title);
void rb_page_release(struct rb_page *page);

/* Adds a run report, a tuned JSON or a tune cache, whichever `path` holds. */
int rb_page_add_file(struct rb_page *page, const char *path);
/* The same on the file's text held in memory (path names it in messages). */
int rb_page_add_text(struct rb_page *page, const char *path, const char *text, size_t len);
/* The parts of each kind. */
int rb_page_add_run(struct rb_page *page, const char *path, const char *text, size_t len);
int rb_page_add_tuned(struct rb_page *page, const char *path, const char *text, size_t len);
int rb_page_add_cache(struct rb_page *page, const char *path, const char *text, size_t len);
/* Bars of base and new median per paired row of a comparison. */
int rb_page_add_compare(struct rb_page *page, const struct rb_compare *cmp, const char *base_path,
			const char *new_path);

/* Grows *items (count n, capacity *cap) to hold one more element of `size` bytes,
 * zeroed: the new element, or NULL (-ENOMEM recorded). */
void *rb_page_grow(void **items, size_t n, size_t *cap, size_t size);

/* The whole page. 0, or -EIO when writing fails. */
int rb_page_write_html(FILE *f, const struct rb_page *page);
/* An rb_file_writer (core/fileio.h) for a struct rb_page. */
int rb_page_writer(FILE *f, void *page);

#endif
