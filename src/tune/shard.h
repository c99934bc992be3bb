/* Sharding a tune (tune --shard I/N) for GNU parallel, Slurm arrays or a board farm:
 * shard I of N takes a deterministic part of the work, and `rknn-bench merge` joins
 * the shards' tuned JSONs (tune/merge.h).
 *
 * The split is by unique shape (M, K, N, dtype). With at least as many shapes as
 * shards, each shape goes whole to one shard, balanced by multiply-adds (the
 * longest-processing-time rule). With fewer shapes than shards, shard s (0-based) takes
 * shape s mod U, and the shards sharing a shape split its config space: slice j of S
 * holds the points whose enumeration index is j mod S. Each slice runs the strategy on
 * its own points (the model strategy: the best --top of the slice), times the default
 * config and the CPU reference as every tune does, and only slice 0 runs the
 * rknn_matmul_api side pass. Together the slices run every config the unsharded tune
 * runs (a point among the best K overall is among the best K of its slice), so the merged
 * best is at least as fast. */
#ifndef RB_TUNE_SHARD_H
#define RB_TUNE_SHARD_H

#include <stdbool.h>

#include "rknn_bench/shape.h"

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

/* "I/N" (1 <= I <= N <= RB_TUNE_MAX_SHARDS): 0 or -EINVAL with rb_last_error(). */
int rb_tune_shard_parse(const char *text, struct rb_tune_shard *out);
/* work[] has one slot per entry of shapes. 0 or -ENOMEM. */
int rb_tune_shard_split(const struct rb_shape_list *shapes, const struct rb_tune_shard *shard,
			struct rb_tune_shard_work *work);
bool rb_tune_shard_active(const struct rb_tune_shard *shard);

#endif
