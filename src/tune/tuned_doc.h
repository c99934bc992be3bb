/* What rknn-bench's own readers take from a tuned JSON beyond a backend's view
 * (include/rknn_bench/tuned.h): the times the report page draws, the per-model totals,
 * the provenance. Read by tuned_read.c, the one reader of the document, so no other
 * file names its keys (docs/tuned-json.md). */
#ifndef RB_TUNE_TUNED_DOC_H
#define RB_TUNE_TUNED_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include "results/totals.h"
#include "rknn_bench/tuned.h"

/* A tuned pair's times beside its config's median (µs; NAN when the file has none). */
struct rb_tuned_times {
	double default_us;      /* the default config on the device */
	double default_host_us; /* its host part, modeled for the board's CPU */
	double host_us;         /* the tuned config's host part */
	double api_host_us;     /* the rknn_matmul_api config's host part */
};

/* The i-th tuned pair's times (the order of rb_tuned_at). */
const struct rb_tuned_times *rb_tuned_times_at(const struct rb_tuned_db *db, size_t i);

/* The file's totals, one array per way of running the pairs. */
enum rb_tuned_totals_of {
	RB_TUNED_TOTALS_DEFAULT = 0,
	RB_TUNED_TOTALS_TUNED,
	RB_TUNED_TOTALS_API,
	RB_TUNED_TOTALS_BACKEND,
	RB_TUNED_TOTALS_BEST,
	RB_TUNED_TOTALS_OF
};

/* Its name in the file ("default", "tuned", "rknn_matmul_api", ...). */
const char *rb_tuned_totals_name(enum rb_tuned_totals_of of);
/* The totals of one way (n = 0: the file has none); -EINVAL naming the file (label) and
 * entry for a totals section that is not what the writer writes. */
int rb_tuned_totals(const struct rb_tuned_db *db, const char *label, enum rb_tuned_totals_of of,
		    struct rb_total *out, size_t max, size_t *n);

/* Whether the file's times are modeled, its device and its SoC profile ("" if absent). */
bool rb_tuned_modeled(const struct rb_tuned_db *db);
const char *rb_tuned_device(const struct rb_tuned_db *db);
const char *rb_tuned_soc(const struct rb_tuned_db *db);
/* The provenance: the top level without the schema, pairs and totals (owned by db);
 * NULL when out of memory. */
const cJSON *rb_tuned_facts(const struct rb_tuned_db *db);

/* ---- the shards of a tune, as merge joins them (tuned_shard.c) ---- */

/* A shape a shard tuned: one slice of its space ("1x2048x8192 fp16"). */
struct rb_tuned_work {
	const char *shape;
	unsigned slice, slices;
};

/* One pair of one shard's file, with the numbers merge ranks and joins by. Times in
 * µs, NAN when the file has none; a host part the file has not is 0 (files written
 * before it). */
struct rb_tuned_slice_pair {
	const char *name;
	char key[96]; /* "MxKxN dtype", the shape a shard's work names */
	int64_t m;
	bool measured;               /* has its measured object */
	const char *config, *launch; /* the tuned config (NULL: none) */
	double median_us, host_us;   /* its device time and host part */
	double default_us, cpu_us;
	bool default_won;    /* the default config won in this slice */
	double config_index; /* the winner's index in the space (ties between slices) */
	const char *api_config, *api_launch; /* the rknn_matmul_api config (NULL: none) */
	double api_us;
	const cJSON *doc; /* the pair's object in the file (the module's own) */
};

struct rb_tuned_shard {
	char *path;
	cJSON *root; /* the document (the module's own) */
	unsigned index, count;
	const char *host, *cpu, *kernel, *cache, *generated; /* "" when absent */
	struct rb_tuned_work *work;
	size_t n_work;
	struct rb_tuned_slice_pair *pairs;
	size_t n_pairs;
};

/* Reads a shard's tuned JSON (tune --shard): 0, or -EINVAL naming the file and field
 * (not a tuned JSON, not a shard, a pair or work entry out of range). Release with
 * rb_tuned_shard_release, also after an error. */
int rb_tuned_shard_load(struct rb_tuned_shard *s, const char *path);
void rb_tuned_shard_release(struct rb_tuned_shard *s);
/* 0 when b comes from the setup of a (tool, device, profile, settings, shard count,
 * CPU, pairs), else -EINVAL naming the key and both files. */
int rb_tuned_shard_same_setup(const struct rb_tuned_shard *a, const struct rb_tuned_shard *b);
/* Whether two shards hold the same results (a shard given twice). */
bool rb_tuned_shard_same_results(const struct rb_tuned_shard *a, const struct rb_tuned_shard *b);

/* One board's choice for a pair, listed when several boards joined. */
struct rb_tuned_board_choice {
	const char *host, *config, *launch; /* config and launch NULL: none */
	double median_us;
};

/* A merged pair: the measured part of `base` (a board's slice 0) with the search counts
 * of `slices` summed, the tuned config of `tuned` and the rknn_matmul_api config of
 * `api` (NULL: none), at the merged times. With several boards, the boards' choices
 * and the medians of their baselines. */
struct rb_tuned_merged_pair {
	const struct rb_tuned_slice_pair *base, *tuned, *api;
	const struct rb_tuned_slice_pair *const *slices;
	size_t n_slices;
	double us, host_us, api_us;
	const struct rb_tuned_board_choice *boards; /* n_boards > 1 only */
	size_t n_boards;
	double default_us, cpu_us, spread_pct; /* over the boards */
};

/* The merged tuned JSON: `first`'s setup, the pairs, every board's host, CPU and
 * kernel, the latest generation time, and the totals as tune sums them. NULL with a
 * message when out of memory. */
cJSON *rb_tuned_merged_json(const struct rb_tuned_shard *first,
			    const struct rb_tuned_merged_pair *pairs, size_t n,
			    const struct rb_tuned_shard *const *boards, size_t n_boards,
			    const char *generated);

#endif
