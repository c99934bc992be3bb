/* rknn-bench merge: joins the tuned JSONs of the shards of a tune (tune --shard I/N,
 * tune/shard.h) into one tuned JSON, and optionally their caches into one cache.
 *
 * Every input must come from the same setup: schema, tool version, device, driver, SoC
 * profile, strategy, target, space, measurement and search settings, validation, shard
 * count, CPU, and the same pairs (names, shapes, dtypes). A difference is refused with
 * the key and both files named.
 *
 * Inputs are grouped by the host they ran on (a board). Each board must bring every
 * shard 1..N and, for a shape split into slices, every slice. Per shape and board the
 * best verified config over the board's slices wins (ties: the lower slice); the default
 * config and the CPU reference come from slice 0; search counts are summed. With several
 * boards of one kind, each pair keeps the config most boards chose (ties: the lower
 * median), its time is the median over those boards, and "measured.boards" lists every
 * board's choice and time; a spread (max - min over median) above spread_pct is reported.
 * An input given twice (same host and shard, same results) counts once; the same shard
 * of one host with other results is refused. The output depends on neither the order nor
 * the repetition of the inputs: merging is idempotent.
 *
 * Library code: it never prints; notes go to the callback. Returns 0, or a negative
 * errno with rb_last_error() (-EINVAL: inputs that do not merge; -ENOENT: a missing
 * shard, slice or cache). */
#ifndef RB_TUNE_MERGE_H
#define RB_TUNE_MERGE_H

#include <stddef.h>

struct rb_merge_opts {
	const char *out_path;
	const char *const *inputs;
	size_t n_inputs;
	const char *cache_out; /* NULL: no cache; else the shards' caches joined here */
	double spread_pct;     /* boards disagree when their spread is larger */
	void (*note)(void *ctx, const char *text);
	void *note_ctx;
};

struct rb_merge_result {
	size_t shards;     /* shards per board */
	size_t boards;     /* hosts */
	size_t duplicates; /* inputs given more than once */
	size_t pairs;      /* pairs written */
	size_t untuned;    /* pairs with no verified config ("tuned": null) */
	size_t disagree;   /* pairs whose boards differ beyond spread_pct or in config */
	size_t records;    /* cache records written */
};

int rb_tune_merge(const struct rb_merge_opts *opts, struct rb_merge_result *result);
/* The cache a shard's tuned JSON names (its "shard.cache", beside the shard), which a
 * merge with cache_out reads: for the command's output guard. 0, or a negative errno. */
int rb_merge_shard_cache(const char *shard_path, char *buf, size_t size);

#endif
