/* A tuned config (rknn_bench/tuned.h) as engine options: what run --tuned and the
 * matmul executor run for a looked-up entry. */
#ifndef RB_RUN_TUNED_RUN_H
#define RB_RUN_TUNED_RUN_H

#include "rknn_bench/tuned.h"
#include "run/engine.h"

/* Sets opts' plan and launch from t (on top of an all-auto plan config). A launch this
 * version does not know falls back to fences (rb_tuned_config.launch_known is false
 * then; the reader has recorded a warning). 0, or -EINVAL with a message naming the
 * pair when its config does not parse. */
int rb_engine_opts_apply_tuned(struct rb_engine_opts *opts, const struct rb_tuned_config *t);

#endif
