/* Tuned kernels: the file `rknn-bench tune` writes, read by an inference backend.
 *
 * The file (schema "rknn-bench-tuned/1", docs/tuned-json.md) is a superset of the
 * backend's mat_kernel_size.json: every pair keeps src0, src1 and name, and a tuned
 * pair adds a "tuned" object (the NPU plan config, launch mode, per-core ranges) and a
 * "measured" object (time, rates, speedups, verification).
 *
 * Lookup order for (M, K, N, dtype, name):
 *   1. name:   a tuned pair with that name and exactly that shape;
 *   2. shape:  a tuned pair with exactly that M, K, N and dtype (the first in the file);
 *   3. bucket: the nearest shape bucket: same dtype, same K and same N, the M closest
 *              to the one asked for (ties: the smaller M). The config (core mask,
 *              split, banks, launch) is then a good start for that M, not a measured
 *              optimum; re-plan it for the real M (rknn-bench run --config).
 *   4. none:   NULL: use your default.
 *
 * Ownership and threads: rb_tuned_load_* return a heap db (free with rb_tuned_free);
 * it is immutable after loading, so any number of threads may look up in it at once.
 * Every pointer a lookup returns lives as long as the db. There is no global state;
 * on error the loaders return a negative errno and rb_last_error() (per thread) holds
 * a message naming the file, the JSON path and the problem. */
#ifndef RKNN_BENCH_TUNED_H
#define RKNN_BENCH_TUNED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rknn_bench/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RB_TUNED_SCHEMA    "rknn-bench-tuned/1"
#define RB_TUNED_MAX_CORES 3

/* One core's part of the split axis (rows for axis "m", padded kernels for "n"). */
struct rb_tuned_range {
	unsigned core;       /* NPU core 0..2 */
	uint32_t begin, end; /* [begin, end) */
	uint32_t tasks;      /* NPU tasks it runs */
};

/* One rknn_matmul_api context: a single-core matmul over columns [n_begin, n_end). */
struct rb_tuned_api_context {
	unsigned core; /* 0..2: rknn_matmul_set_core_mask(RKNN_NPU_CORE_0 << core) */
	uint32_t n_begin, n_end;
};

/* The pair's "rknn_matmul_api" section: the fastest config that API can express
 * (contexts on single cores, each a range of N, run from blocking threads), for a
 * backend on librknnrt. present is false when the file has none for the pair. */
struct rb_tuned_api {
	bool present;
	const char *type; /* "RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32", "RKNN_INT8_MM_INT8_TO_INT32" */
	int b_layout, ac_layout;
	unsigned n_contexts; /* one thread each */
	struct rb_tuned_api_context contexts[RB_TUNED_MAX_CORES];
	const char *config; /* the same as a plan config, for rknn-bench's own programs */
	const char *launch; /* "threads" */
	double median_us;
	double best_overall_speedup; /* median_us / the best overall config's; NAN: unknown */
};

struct rb_tuned_config {
	const char *name; /* the pair's name */
	struct rb_shape shape;
	/* tuned */
	const char *config; /* compact plan config (rknn-bench run --config '...') */
	/* "fences" (non-blocking submits), "threads" (one blocking submit per core from
	 * its own thread) or "multicore" (one submit for all cores) */
	const char *launch;
	unsigned core_mask;     /* 0x1..0x7 */
	const char *split_axis; /* "n" or "m" */
	unsigned n_ranges;
	struct rb_tuned_range ranges[RB_TUNED_MAX_CORES];
	unsigned data_banks, weight_banks;
	uint32_t k_slice;
	bool resident; /* weights of every task fit its banks */
	bool chain;    /* one submit per core for all its tasks */
	const char *reproducer;
	/* measured */
	const char *device; /* "sim", "rknpu" */
	bool modeled;       /* the time comes from the emulator's model, not a clock */
	double median_us, gflops, gbps;
	double speedup_vs_default, speedup_vs_cpu; /* NAN when unknown */
	const char *verify;                        /* "verified", "skipped" */
	struct rb_tuned_api api;
};

enum rb_tuned_match {
	RB_TUNED_NONE = 0,
	RB_TUNED_NAME,
	RB_TUNED_SHAPE,
	RB_TUNED_BUCKET,
};

struct rb_tuned_db;

int rb_tuned_load_file(struct rb_tuned_db **db, const char *path);
/* `label` stands for the file name in messages. */
int rb_tuned_load_string(struct rb_tuned_db **db, const char *json, size_t len, const char *label);
void rb_tuned_free(struct rb_tuned_db *db);

/* The config for a matmul (name may be NULL), or NULL: use your default. `match`
 * (may be NULL) tells which rule matched. */
const struct rb_tuned_config *rb_tuned_lookup(const struct rb_tuned_db *db, int64_t m, int64_t k,
					      int64_t n, enum rb_dtype dtype, const char *name,
					      enum rb_tuned_match *match);

/* Every tuned pair, in file order (pairs without a "tuned" object are left out). */
size_t rb_tuned_count(const struct rb_tuned_db *db);
const struct rb_tuned_config *rb_tuned_at(const struct rb_tuned_db *db, size_t i);

/* Top-level facts of the file: "device", "driver", "soc", "generated" ("" if absent). */
const char *rb_tuned_info(const struct rb_tuned_db *db, const char *key);

const char *rb_tuned_match_name(enum rb_tuned_match match); /* none|name|shape|bucket */

/* What the loader ignored: keys of a "tuned" object and launch modes this version does
 * not know (a file of a newer schema 1.x). Each warning names the file and the JSON
 * path; an unknown launch is read as "fences". Lives as long as the db. */
size_t rb_tuned_warning_count(const struct rb_tuned_db *db);
const char *rb_tuned_warning(const struct rb_tuned_db *db, size_t i);

/* The message of the last failed library call of this thread ("" if none). */
const char *rb_last_error(void);

#ifdef __cplusplus
}
#endif

#endif
