/* Tuning: the options of a tune, tuning one shape (search.c: the strategies) and the
 * tuned JSON writer (tuned_write.c, beside its reader tuned_read.c).
 *
 * Library code: nothing here prints. Progress and per-config results reach the caller
 * through the callbacks of struct rb_tune_run; a stop flag ends the search after the
 * config being measured; errors are negative errno codes with rb_last_error(). */
#ifndef RB_TUNE_SEARCH_H
#define RB_TUNE_SEARCH_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>

#include "core/fileio.h"
#include "numeric/inputs.h"
#include "core/stats.h"
#include "numeric/verify.h"
#include "run/engine.h"
#include "rknn_bench/shape.h"
#include "results/totals.h"
#include "tune/shard.h"
#include "tune/tune.h"

enum rb_tune_strategy {
	RB_TUNE_STRATEGY_MODEL = 0, /* rank by the timing model, run the best --top on the device */
	RB_TUNE_STRATEGY_EXHAUSTIVE,
	RB_TUNE_STRATEGY_RANDOM,
};

/* "model", "exhaustive", "random"; parse: 0 or -EINVAL. */
const char *rb_tune_strategy_name(enum rb_tune_strategy s);
int rb_tune_strategy_parse(const char *text, enum rb_tune_strategy *out);

enum rb_tune_target {
	RB_TUNE_TARGET_RKNN_BENCH = 0, /* the space: everything rknn-bench's programs can do */
	RB_TUNE_TARGET_RKNN_API,       /* only what rknn_matmul_api expresses (tune.h) */
	/* The slices the seed ggml-rknn backend creates (shapes --for ggml-rknn), each a
	 * single-core matmul on the core the backend pins it to (the pair's "core"), with
	 * every knob the shim applies to it: what librknnrt's place takes without the
	 * backend changing (docs/backend.md, way 2). */
	RB_TUNE_TARGET_GGML_RKNN,
};

/* "rknn-bench", "rknn-api", "ggml-rknn"; parse: 0 or -EINVAL. */
const char *rb_tune_target_name(enum rb_tune_target t);
int rb_tune_target_parse(const char *text, enum rb_tune_target *out);

struct rb_tune_opts {
	struct rb_shape_list shapes;
	char **files;
	int n_files;
	/* the files' text as tune read it (NULL: read them again when writing): the tuned
	 * JSON keeps their pairs and keys, and a pipe can be read once only */
	struct rb_text *file_texts;
	const char *device_name;
	const struct rb_engine_ops *device;
	struct rb_engine_opts engine;
	struct rb_measure_opts measure;
	struct rb_verify_opts verify;
	uint64_t seed;
	enum rb_data_kind data;
	enum rb_tune_strategy strategy;
	enum rb_tune_target target;
	long top, max_evals;
	struct rb_tune_space space;
	const char *space_path;     /* --space, applied to the default space */
	struct rb_tune_shard shard; /* --shard I/N (count 0: the whole tune) */
	bool list_space, verbose;
	bool no_weight_reuse; /* --no-weight-reuse: the wreuse knob holds 0 only */
	bool weight_copies;   /* --weight-copies: ggml-rknn also tunes non-native B layouts */
	const char *out_path;
	const char *cache_path;
	char cache_buf[PATH_MAX];
};

/* What tuning one unique shape found. */
struct rb_tune_best {
	struct rb_shape shape;
	bool found;                 /* a config ran and verified */
	struct rb_tune_point point; /* the fastest such config */
	double median_us;
	char verify[16];
	double default_us, cpu_us; /* NAN when unknown */
	bool other_shard;          /* --shard: another shard tunes this shape */
	bool default_won;          /* the default config, a candidate, is the best (it wins
				    * ties: it runs first) */
	unsigned slice, slices;    /* --shard: the slice of the space searched (0 of 1: all) */
	size_t n_space, n_model, n_run, n_failed;
	size_t n_pruned;  /* not modeled: their bound shows they cannot win (search.c) */
	size_t n_settled; /* candidates not run: a modeled device cannot time them faster */
	/* The fastest verified config rknn_matmul_api can express (rb_tune_space_rknn_api):
	 * the backend's own way, next to the best overall (for target rknn-api, the same). */
	struct {
		bool found;
		struct rb_tune_point point;
		double median_us;
	} api;
	/* The backend as it is: its own split (rb_tune_backend_point), measured like every
	 * config, in the rknn_matmul_api pass; a candidate of that pass. */
	struct {
		bool tried; /* the pass that measures it ran for this shape */
		bool found; /* it ran and verified */
		struct rb_tune_point point;
		double median_us; /* device time */
		char reason[512]; /* why not found */
	} backend;
	/* Host work (modeled, rb_tune_host_us) of the best config and of the default: the
	 * search ranks by median_us + host_us, the device part and the host part. */
	double host_us, default_host_us;
	unsigned core_mask;                 /* the core the shape is pinned to (0: none) */
	struct rb_tune_point default_point; /* the default config, as timed */
};

/* Device time + modeled host time: what a consumer pays per run, what the search ranks. */
double rb_tune_best_total_us(const struct rb_tune_best *b);
double rb_tune_api_total_us(const struct rb_tune_best *b);
double rb_tune_backend_total_us(const struct rb_tune_best *b);
double rb_tune_default_total_us(const struct rb_tune_best *b);

/* Where the search of one shape is, for a progress display. */
struct rb_tune_progress {
	size_t shape_index, n_shapes; /* this shape among the unique shapes */
	const char *label;            /* its first name */
	const char *phase;            /* "model", "run" */
	size_t done, total;           /* configs of this phase */
	double phase_elapsed_s;
	double best_us;       /* fastest verified on the device so far (NAN: none) */
	double best_model_us; /* fastest modeled so far (NAN: none) */
};

/* Everything open while tuning. */
/* Host threads of the model phase: configs are modeled independently, on engines of
 * their own; the results are kept in the space's order whatever finished first. */
#define RB_TUNE_MODEL_THREADS 16

/* A shape's points of the space, enumerated before its search (rb_tune_enumerate). */
struct rb_tune_enumerated {
	struct rb_shape shape;
	struct rb_tune_points points;
};

struct rb_tune_run {
	const struct rb_tune_opts *o;
	struct rb_engine device; /* the --device engine */
	/* sim, model_only: the timing model (strategy model), one engine per host thread
	 * that models configs at once (--threads, at most RB_TUNE_MODEL_THREADS) */
	struct rb_engine model[RB_TUNE_MODEL_THREADS];
	unsigned n_model;
	struct rb_engine cpu; /* the CPU reference, timed once per shape */
	bool device_open, cpu_open, cache_open;
	struct rb_tune_header header; /* what the cache was opened with */
	struct rb_tune_cache cache;
	size_t shape_index, n_shapes;
	struct rb_tune_shard_work *work; /* --shard: per entry of the shapes (NULL: all) */
	double t0_us;
	/* Optional: sampling and the search end when *stop becomes non-zero (-EINTR). */
	const volatile sig_atomic_t *stop;
	/* What rb_tune_enumerate made: the search of such a shape takes its points instead
	 * of planning every combination of the space again (seconds for a big space). */
	struct rb_tune_enumerated *enumerated;
	size_t n_enumerated;
	/* Optional callbacks (NULL: none): progress after each config; every result
	 * (cached: found in the cache, not measured again). */
	void (*on_progress)(void *ctx, const struct rb_tune_progress *p);
	void (*on_result)(void *ctx, const char *shape_key, const struct rb_tune_record *r,
			  bool cached);
	void *cb_ctx;
};

/* Opens the engines of t->o (device, CPU reference, and the timing model for strategy
 * model) and the cache with its header (rb_tune_header: tool version, device, driver,
 * SoC, space, measuring settings; a cache of another setup is refused). 0, -ENODEV
 * (an engine did not open) or the cache's error (-EINVAL for a cache of another setup
 * or a corrupt one), with rb_last_error(). rb_tune_close releases whatever was opened
 * (also after a failed open). */
int rb_tune_open(struct rb_tune_run *t);
/* The points of t->o->space for shape, enumerated once and kept in t for its search
 * (NULL with rb_last_error() on error); valid until that search or rb_tune_close. */
const struct rb_tune_points *rb_tune_enumerate(struct rb_tune_run *t, const struct rb_shape *shape);
void rb_tune_close(struct rb_tune_run *t);
/* Frees what rb_tune_enumerate kept (rb_tune_close does). */
void rb_tune_enumerated_release(struct rb_tune_run *t);

/* Tunes one shape (the slice of the space work says; NULL: all of it): 0, -EINTR (*t->stop was set:
 * it stops after the config being measured), -EINVAL (the space cannot be enumerated for it),
 * -ENOMEM, or the cache's error. A shape pinned to one core (core_mask 0x1, 0x2 or 0x4; 0:
 * none) is searched on that core only, and its baselines are that core's. */
int rb_tune_shape(struct rb_tune_run *t, const struct rb_shape *shape, unsigned core_mask,
		  const char *label, const struct rb_tune_shard_work *work,
		  struct rb_tune_best *best);

/* Tunes every shape of t->o in order (with --shard, those of the shard; the others get
 * other_shard); an identical shape (M, K, N, dtype) is tuned once and its result copied
 * (best has one slot per entry). 0 or as rb_tune_shape. */
int rb_tune_all(struct rb_tune_run *t, struct rb_tune_best *best);
/* The entry tuned for an identical shape (and core, for pinned entries) earlier in the
 * list, or i itself. */
size_t rb_tune_first_same(const struct rb_shape_list *l, size_t i);

/* Which config of each shape a total sums. */
enum rb_tune_which {
	RB_TUNE_DEFAULT = 0, /* what run does without flags */
	RB_TUNE_TUNED,       /* the best overall */
	RB_TUNE_API,         /* the best rknn_matmul_api can express */
	RB_TUNE_BACKEND,     /* the backend as it is: its own split */
	RB_TUNE_OVERALL,     /* our best overall: rb_tune_overall_point */
};

/* Our best overall per shape: the tuned config, or the default config when it cost less
 * (it lies outside the searched space: --target rknn-api, a --space file). */
const struct rb_tune_point *rb_tune_overall_point(const struct rb_tune_best *b, double *total_us);

/* What two configs of a shape do differently, as RB_TUNE_DIFF_* bits (planned: the
 * planner's choices compared, not the requests), and the bits' names. */
enum {
	RB_TUNE_DIFF_LAUNCH = 1u << 0,
	RB_TUNE_DIFF_CORES = 1u << 1,
	RB_TUNE_DIFF_SPLIT = 1u << 2,
	RB_TUNE_DIFF_BANKS = 1u << 3,
	RB_TUNE_DIFF_KSLICE = 1u << 4,
	RB_TUNE_DIFF_CHAIN = 1u << 5,
	RB_TUNE_DIFF_WREUSE = 1u << 6,
	RB_TUNE_DIFF_COUNT = 7,
};
unsigned rb_tune_point_diff(const struct rb_shape *shape, const struct rb_tune_point *a,
			    const struct rb_tune_point *b);
const char *rb_tune_diff_name(unsigned bit_index);

/* Per-model totals (results/totals.h) of one config per shape, every pair of the input
 * counted. */
size_t rb_tune_totals(const struct rb_tune_opts *o, const struct rb_tune_best *best,
		      enum rb_tune_which which, struct rb_total *out);
/* A shape's time in such a total: device + host of the config `which` names. */
double rb_tune_which_us(const struct rb_tune_best *b, enum rb_tune_which which);
/* The same per graph pair for slices of `shapes --for ggml-rknn` (pairs with
 * "slice": {"of": NAME}): the backend runs a pair's slices at once, one per core, so a
 * pair takes its slowest slice; each pair (NAME at its M) counts that once. Returns the
 * number of groups (0 when the input has no slices, or its files cannot be read again). */
size_t rb_tune_slice_totals(const struct rb_tune_run *t, const struct rb_tune_best *best,
			    enum rb_tune_which which, struct rb_total *out);

/* Writes the tuned JSON: the input files' pairs (in order, every name) with "tuned"
 * and "measured" objects. Returns 0 or a negative errno (with rb_last_error()). */
int rb_tuned_write(const struct rb_tune_run *t, const struct rb_tune_best *best);

/* The command line that replays a config alone on the device. */
void rb_tune_reproducer(const struct rb_tune_opts *o, const struct rb_shape *s,
			const struct rb_tune_point *p, char *buf, size_t size);

#endif
