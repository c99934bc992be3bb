/* The model-guided default config of a shape (npu/plan_rank.h) on the emulator's timing
 * model (sim/timing.h): what `run`, `plan`, the matmul executor and the shim use when no
 * config is given (and a tuned file has none for the shape), and what tune measures as
 * "default". On a board the model's ranking is what `calibrate` improves.
 *
 * The model here is the emulator's own, fed from the plan instead of from executed
 * register programs: each task's bytes, MAC cycles and regcmd words as the emulated
 * NPU counts them, ping-pong overlap inside a submit of chained tasks, the kernel's
 * fixed costs per submit and the kick order of each launch mode. It does not run the
 * emulated kernel, so it ranks; the emulator's own time is what a run reports.
 *
 * Budget: the same share of every core's tasks, the first of them, is timed (at most
 * RB_PLAN_MODEL_TASKS of the busiest core's) and each core's time scaled by its task
 * count over them (its tasks repeat the same tiles in order, so the rate of the first
 * few hundred is the rate of all). So a candidate costs at most
 * 3 cores x RB_PLAN_MODEL_TASKS task timings per launch mode, a shape at most
 * RB_PLAN_RANK_MAX candidates: under 50 ms for the largest shape of the model files
 * on a 2-core x86 VM (README, "The default config"), where the whole plans took up to
 * 1.4 s. A count, not a clock: the choice is the same on every machine.
 *
 * Ownership: plain data; the caller owns everything. */
#ifndef RB_RUN_PLAN_MODEL_H
#define RB_RUN_PLAN_MODEL_H

#include "hw/soc.h"
#include "run/engine.h"
#include "npu/plan_rank.h"

#define RB_PLAN_MODEL_TASKS RB_PLAN_RANK_HEAD

/* The model callback of rb_plan_rank; ctx is a const struct rb_soc_profile * (NULL:
 * the embedded default profile). */
int rb_plan_model_launches(void *ctx, const struct rb_plan *plan, unsigned launches,
			   double device_us[RB_PLAN_RANK_LAUNCHES]);

/* Ranks the candidates over base for shape on soc (NULL: the default profile) and sets
 * *cfg and *launch to the best; native_b and launches as rb_plan_rank's. ranking may be
 * NULL. 0 or as rb_plan_rank. */
int rb_plan_model_default(const struct rb_shape *shape, const struct rb_plan_config *base,
			  bool native_b, unsigned launches, const struct rb_soc_profile *soc,
			  struct rb_plan_config *cfg, enum rb_npu_launch *launch,
			  struct rb_plan_ranking *ranking);

/* The launch modes a device of that name runs (rb_plan_rank's mask): rocket has no
 * multi-core submit. */
unsigned rb_plan_model_launches_of(const char *device_name);

/* opts' plan (as base) and launch become the model's choice for shape, on opts'
 * hardware profile, among the launch modes of the device `ops`: what `run` does for a
 * pair without a config. 0 or as above. */
int rb_engine_opts_model_default(struct rb_engine_opts *opts, const struct rb_engine_ops *ops,
				 const struct rb_shape *shape);

#endif
