/* A comparison (core/compare.h) as `rknn-bench compare` prints it, on the stream the
 * command hands it: both files, the settings, one row per pair (medians, change,
 * verdict, how it was reached), then the geometric mean with the counts. */
#ifndef RB_RESULTS_COMPARE_TABLE_H
#define RB_RESULTS_COMPARE_TABLE_H

#include <stdio.h>

#include "results/compare.h"
#include "core/table.h"

/* 0, or -ENOMEM. */
int rb_compare_print(FILE *out, enum rb_table_style style, const struct rb_compare *cmp,
		     const char *base_path, const char *new_path,
		     const struct rb_compare_opts *opts);

#endif
