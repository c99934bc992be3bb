/* run --tuned: the tuned JSON's config per shape (tuned_run.c). */
#ifndef RB_CLI_TUNED_RUN_H
#define RB_CLI_TUNED_RUN_H

#include "npu/engine.h"
#include "rknn_bench/shape.h"
#include "rknn_bench/tuned.h"

/* Loads the file; prints the error. 0 or -1. */
int cli_tuned_load(const char *path, struct rb_tuned_db **db);
/* Sets opts' plan and launch for the entry: the tuned config (name, shape, then
 * nearest-M lookup) or, without one, base's (with a warning). db NULL: nothing to do.
 * 0 or -1 (printed). */
int cli_tuned_apply(const struct rb_tuned_db *db, const struct rb_shape_entry *entry,
		    const struct rb_engine_opts *base, struct rb_engine_opts *opts);

#endif
