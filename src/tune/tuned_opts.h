/* run --tuned: the tuned config of a shape looked up as a backend does, as engine
 * options. On the tune floor because the lookup is the tuned reader's
 * (tune/tuned_read.c); run/tuned_run.h turns a config into options. */
#ifndef RB_TUNE_TUNED_OPTS_H
#define RB_TUNE_TUNED_OPTS_H

#include "rknn_bench/tuned.h"
#include "run/tuned_run.h"

/* run --tuned: opts = base, then (db not NULL) the config of the entry looked up as a
 * backend does (name, shape, nearest M): *t and *how say what was found (NULL and
 * RB_TUNED_NONE: the base runs). 0 or as rb_engine_opts_apply_tuned. */
int rb_engine_opts_lookup_tuned(struct rb_engine_opts *opts, const struct rb_engine_opts *base,
				const struct rb_tuned_db *db, const struct rb_shape_entry *entry,
				const struct rb_tuned_config **t, enum rb_tuned_match *how);

#endif
