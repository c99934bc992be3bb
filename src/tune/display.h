/* What a tune shows while and after it runs, on the stream the command hands it (as
 * core/progress and the report writers do): the estimate before the search, the progress
 * lines (core/progress.h) fed by the search's callbacks, and the summary table with the
 * per-model totals. */
#ifndef RB_TUNE_DISPLAY_H
#define RB_TUNE_DISPLAY_H

#include <stdbool.h>
#include <stdio.h>

#include "core/progress.h"
#include "core/table.h"
#include "tune/search.h"

struct rb_tune_display {
	bool quiet, verbose;
	struct rb_progress progress;
	const struct rb_tune_opts *o;
	const struct rb_tune_best *best; /* filled shape by shape */
	bool modeled;
	size_t shape;   /* the unique shape under way (SIZE_MAX: none yet) */
	bool seen_run;  /* its device phase has started */
	bool side_pass; /* its rknn_matmul_api pass */
};

/* Sets t's progress and result callbacks to print on `out` (nothing but the result
 * lines of --verbose when quiet); _end prints the last shape's line after rb_tune_all. */
void rb_tune_display_start(struct rb_tune_display *d, struct rb_tune_run *t,
			   const struct rb_tune_best *best, FILE *out, bool quiet);
void rb_tune_display_end(struct rb_tune_display *d, int ret);
/* What the search will do, before it starts: configs per shape and what runs where. */
void rb_tune_print_estimate(FILE *out, struct rb_tune_run *t);
/* tune --list-space: the space, then per shape its configs: 0 or a negative errno. */
int rb_tune_space_print(FILE *out, const struct rb_tune_opts *o);
/* One row per unique shape (the config the tuned JSON holds for it), then the totals
 * per model from what the backend does to what rknn-bench does, with why. */
void rb_tune_summary_print(FILE *out, enum rb_table_style style, const struct rb_tune_run *t,
			   const struct rb_tune_best *best);

#endif
