/* Sharding a tune (tune --shard I/N) for GNU parallel, Slurm arrays or a board farm:
 * shard I of N takes a deterministic part of the work, and `rknn-bench merge` joins
 * the shards' tuned JSONs (tune/merge.h).
 *
 * The split is by unique shape (M, K, N, dtype; one shape pinned to several cores, as
 * the slices of --target ggml-rknn are, is one unit, tuned on each by the same shard). With at
 * least as many shapes as shards, each shape goes whole to one shard, balanced by the modeled work
 * of its tune (rb_tune_shard_plan_init: its configs, the tasks of their programs and its
 * multiply-adds) with the longest-processing-time rule. With fewer shapes than shards, shard s
 * (0-based) takes shape s mod U, and the shards sharing a shape split its config space: slice j of
 * S holds the points whose enumeration index is j mod S. Each slice runs the strategy on its own
 * points (the model strategy: the best --top of the slice), times the default config and the CPU
 * reference as every tune does, and only slice 0 runs the rknn_matmul_api side pass. Together the
 * slices run every config the unsharded tune runs (a point among the best K overall is among the
 * best K of its slice), so the merged best is at least as fast. */
#ifndef RB_TUNE_SHARD_H
#define RB_TUNE_SHARD_H

#include <stdbool.h>

#include "rknn_bench/shape.h"

struct rb_tune_space;

#define RB_TUNE_MAX_SHARDS 256u

struct rb_tune_shard {
	unsigned index; /* 1..count */
	unsigned count; /* 0: not sharded */
};

/* What one shard does with one entry of the shapes list (only the first entry of a
 * unique shape is set; the others copy its result). */
struct rb_tune_shard_work {
	bool mine;       /* this shard tunes the shape */
	unsigned slice;  /* of the shape's config space: points i with i % slices == slice */
	unsigned slices; /* 1: the whole space */
};

/* The work of tuning one unique shape, known before the tune runs: the configs of the
 * space the planner accepts, the tasks of their programs and the shape's multiply-adds,
 * weighed in CPU seconds of a tune on the emulator (modeled: the weights are fitted to
 * measured tunes, shard.c says which). */
struct rb_tune_shard_unit {
	size_t entry;    /* its first entry in the shapes list */
	size_t configs;  /* points of the space */
	double tasks;    /* tasks of their programs, summed */
	double seconds;  /* modeled CPU seconds of its whole tune */
	unsigned shard;  /* 0-based: the shard that tunes it (with slices: the first one) */
	unsigned slices; /* shards that share its space (1: one shard tunes it whole) */
	unsigned tunes;  /* the cores it is tuned on apart (pinned entries; 1: unpinned) */
};

/* Which shard takes which shape, and the modeled work of each shard. The plan depends
 * on the shapes, the space and the count alone: every shard of a tune makes the same. */
struct rb_tune_shard_plan {
	unsigned count;
	size_t n_units;
	struct rb_tune_shard_unit *units; /* one per unique shape, in input order */
	double *seconds;                  /* per shard: modeled CPU seconds of its work */
};

/* "I/N" (1 <= I <= N <= RB_TUNE_MAX_SHARDS): 0 or -EINVAL with rb_last_error(). */
int rb_tune_shard_parse(const char *text, struct rb_tune_shard *out);
/* Enumerates each unique shape's points of space (plans every config once) and splits
 * them among count shards. 0, -EINVAL (a shape's space cannot be enumerated) or
 * -ENOMEM, with rb_last_error(); release the plan either way. */
int rb_tune_shard_plan_init(struct rb_tune_shard_plan *plan, const struct rb_shape_list *shapes,
			    const struct rb_tune_space *space, unsigned count);
void rb_tune_shard_plan_release(struct rb_tune_shard_plan *plan);
/* What shard (of plan->count) does: work[] has one slot per entry of shapes. */
void rb_tune_shard_split(const struct rb_tune_shard_plan *plan, const struct rb_shape_list *shapes,
			 const struct rb_tune_shard *shard, struct rb_tune_shard_work *work);
bool rb_tune_shard_active(const struct rb_tune_shard *shard);

#endif
