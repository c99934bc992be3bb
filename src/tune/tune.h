/* Tuning: the search space of planner configs and the append-only result cache.
 *
 * Space. Each knob holds a list of values, written as in the compact config string
 * (npu/plan.h) so the space file, the CLI flags and the tuned JSON share one parser:
 *   mask     core masks            0x1 0x2 0x4 0x3 0x5 0x6 0x7
 *   split    split axis            n m
 *   weights  per-core weights      even 2,1 1,2 2,1,1 1,2,1 1,1,2
 *   align    cut-point alignment   16 32 64
 *   banks    data:weight banks     auto 1:11 2:10 4:8
 *   kslice   channels per K-slice  auto 2048 4096
 *   res      weight residency      resident            (streamed: unproven on silicon)
 *   chain    chained submits       1                   (0: a submit per task)
 *   wreuse   weight reuse          1                   (unproven on silicon; tune
 *                                                       --no-weight-reuse: 0)
 *   launch   how jobs start        fences threads multicore
 * A point of the space is one value per knob. A multicore launch with mask 0x5 or 0x6
 * never runs on the vendor driver: those points leave the space unless a space file
 * asks for the masks (keep_known_failures). Points the planner rejects
 * (rb_plan_init fails) are not in the space, nor are weight lists whose length is not
 * the mask's core count ("even" fits every mask). Points that plan to the same
 * program (same per-core ranges, tiles, banks, K-slices, chaining, weight reuse and
 * launch) are one
 * point, the first in enumeration order: that is how alignments that cut at the same
 * place, or a K-slice at least K, cost nothing. Enumeration order is the knob order
 * above, the last knob varying fastest.
 *
 * Cache. JSON Lines: a header object (tool version, device, driver, SoC profile, space
 * hash and description, measurement settings), then one record per evaluated config.
 * Every line is flushed and fsync'ed when written, so a crash loses at most the line
 * being written; a truncated last line is dropped when the cache is reopened.
 *
 * Ownership: structs are caller-owned; _release / _close free what they hold.
 * Functions return 0 or -errno with rb_last_error() set; they never print. */
#ifndef RB_TUNE_TUNE_H
#define RB_TUNE_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "npu/job.h"
#include "npu/plan.h"
#include "npu/plan_rank.h"
#include "rknn_bench/shape.h"

/* ---- the space ---- */

enum rb_tune_knob {
	RB_KNOB_MASK = 0,
	RB_KNOB_SPLIT,
	RB_KNOB_WEIGHTS,
	RB_KNOB_ALIGN,
	RB_KNOB_BANKS,
	RB_KNOB_KSLICE,
	RB_KNOB_RES,
	RB_KNOB_CHAIN,
	RB_KNOB_WREUSE,
	RB_KNOB_LAUNCH,
	RB_KNOB_COUNT,
};

#define RB_TUNE_MAX_VALUES 32
#define RB_TUNE_VALUE_LEN  24

struct rb_tune_space {
	unsigned n[RB_KNOB_COUNT];
	char values[RB_KNOB_COUNT][RB_TUNE_MAX_VALUES][RB_TUNE_VALUE_LEN];
	/* Keep the configs known to fail (a multicore launch with mask 0x5 or 0x6, which
	 * the vendor driver never runs): false in the default space; a space file whose
	 * mask list names 0x5 or 0x6 sets it (they were asked for). */
	bool keep_known_failures;
	/* Only configs whose B is the native layout (rb_plan_native_b), which the shim
	 * reads in place from the backend's memory: tune --target ggml-rknn, unless
	 * --weight-copies. */
	bool native_b_only;
};

/* The default space above. */
void rb_tune_space_default(struct rb_tune_space *space);
/* What rknn_matmul_api can express (tune --target rknn-api): masks 0x1..0x7 as one
 * single-core context per core, split n with every weight list, align 32 (each range
 * but the last a multiple of 32 columns), banks and K-slice auto, launch threads. */
void rb_tune_space_rknn_api(struct rb_tune_space *space);
/* Applies a space file: {"mode": "replace"|"extend", "<knob>": [values], ...}. A knob
 * given replaces the default list (mode replace, the default) or is appended to it
 * (extend); knobs not given keep theirs. Values are strings or integers (chain also
 * true/false). Every value is checked; errors name the file, the JSON path and why. */
int rb_tune_space_load_file(struct rb_tune_space *space, const char *path);
/* tune --no-weight-reuse: the wreuse knob holds 0 only. */
void rb_tune_space_no_weight_reuse(struct rb_tune_space *space);
/* tune --target ggml-rknn: the mask knob holds the single cores 0x1, 0x2, 0x4 (each
 * slice the backend creates is one single-core context); _pin: the one core a pinned
 * slice runs on. */
void rb_tune_space_single_core(struct rb_tune_space *space);
void rb_tune_space_pin(struct rb_tune_space *space, unsigned core_mask);
/* Sets native_b_only (above). */
void rb_tune_space_native_b(struct rb_tune_space *space);
int rb_tune_space_load_string(struct rb_tune_space *space, const char *json, size_t len,
			      const char *label);
const char *rb_tune_knob_name(enum rb_tune_knob knob);
/* "mask=0x1|0x2;split=n|m;weights=even|2,1;..." */
int rb_tune_space_describe(const struct rb_tune_space *space, char *buf, size_t size);
/* Points before the planner's refusals and duplicates: the product of the knob counts.
 * tune refuses a space of more than RB_TUNE_MAX_COMBINATIONS per shape before it starts
 * (enumerating it alone would take hours). */
uint64_t rb_tune_space_combinations(const struct rb_tune_space *space);
#define RB_TUNE_MAX_COMBINATIONS 100000u
/* FNV-1a 64 of the description: what the cache header records. */
uint64_t rb_tune_space_hash(const struct rb_tune_space *space);

/* One point: a config as requested (auto values left to the planner) and a launch. */
struct rb_tune_point {
	struct rb_plan_config plan;
	enum rb_npu_launch launch;
	char text[192]; /* rb_plan_config_format of `plan` */
	size_t index;   /* in the enumeration of its space (SIZE_MAX: not in it) */
	double host_us; /* the host work its result needs, modeled (rb_tune_host_us) */
	size_t tasks;   /* of its program: what the timing model steps through (tune/shard.h) */
	/* the plan model's device time for its launch (run/plan_model.h), a bound on what
	 * the emulator models that lets a search skip the configs that cannot win (NAN:
	 * none) */
	double estimate_us;
};

/* ---- what the consumer pays on the host ----
 *
 * A run needs host work around the NPU: packing A into its cube before, unpacking the C
 * cubes and adding the K-slice partial sums after (npu/job.c). The search ranks configs
 * by device time + this host time. It is modeled for the board's Cortex-A76, not timed:
 * on the emulator the host is this machine (an x86 VM, noisy), not the board. The model
 * is bytes moved by each host phase over RB_TUNE_HOST_GBPS (docs/tuned-json.md, "The
 * host part", gives the figure's public source: it is the SoC's sequential bandwidth,
 * more than one thread reaches, so host_us is a lower bound). */
#define RB_TUNE_HOST_GBPS  RB_PLAN_HOST_GBPS
#define RB_TUNE_HOST_MODEL "cortex-a76 bytes/17GB/s v1"

struct rb_tune_host {
	double pack_a_us; /* read A, write its cube */
	double unpack_us; /* read the first C cube, write C */
	double kslice_us; /* each further K-slice: read its cube, read and write C */
};

void rb_tune_host_model(const struct rb_plan *plan, struct rb_tune_host *h);
/* The sum of the three phases. */
double rb_tune_host_us(const struct rb_plan *plan);
/* Plans p for shape and sets p->host_us (NAN when the planner refuses it). */
void rb_tune_point_host(struct rb_tune_point *p, const struct rb_shape *shape);

/* ---- the backend's own split ----
 *
 * What the seed ggml-rknn backend does with a pair whatever any tuned file says: three
 * single-core contexts on cores 0, 1 and 2, the first two N/32/3*32 columns each, the
 * last the rest, run by blocking threads. As a point: mask 0x7, split n with weights
 * that cut exactly there (rb_ggml_rknn_init_share, model/ggml_rknn.h), align 32, everything else
 * auto, launch threads. One slice of that split (core_mask 0x1, 0x2 or 0x4: `shapes --for
 * ggml-rknn` pairs): one single-core context on that core, auto, threads (core_mask 0 is the 3-way
 * rule). -EINVAL (with rb_last_error() saying why) when the backend cannot create the pair (N < 96
 * leaves a context no column) or no weighted split cuts there. The one definition every baseline
 * uses. */
int rb_tune_backend_point(const struct rb_shape *shape, unsigned core_mask,
			  struct rb_tune_point *p);

struct rb_tune_points {
	struct rb_tune_point *items;
	size_t count;
	size_t rejected;   /* combinations the planner refused */
	size_t not_native; /* and those left out for their B layout (native_b_only) */
	size_t duplicates; /* combinations planning to a program already in the list */
};

int rb_tune_space_enumerate(const struct rb_tune_space *space, const struct rb_shape *shape,
			    struct rb_tune_points *points);
/* The same, each point's estimate_us on the hardware profile soc (NULL: the default). */
int rb_tune_space_enumerate_on(const struct rb_tune_space *space, const struct rb_shape *shape,
			       const struct rb_soc_profile *soc, struct rb_tune_points *points);
void rb_tune_points_release(struct rb_tune_points *points);

/* The signature rb_tune_space_enumerate deduplicates on (a hash of the program). */
uint64_t rb_tune_plan_signature(const struct rb_plan *plan, enum rb_npu_launch launch);

/* Indices 0..n-1 in a seeded random order (Fisher-Yates with rb_rng); caller frees. */
size_t *rb_tune_shuffle(size_t n, uint64_t seed);

/* ---- the cache ---- */

#define RB_TUNE_CACHE_SCHEMA "rknn-bench-tune-cache/1"
/* The longest time a record may hold, µs: an hour. The slowest matmul a tune runs (the
 * CPU reference of a 128k-vocabulary output layer) takes minutes. */
#define RB_TUNE_MAX_US 3.6e9

struct rb_tune_header {
	char tool_version[32];
	char device[64];
	char driver[32];
	char soc[96];
	char space[32];       /* rb_tune_space_hash, hex */
	char space_desc[768]; /* rb_tune_space_describe (informative) */
	char measure[192];    /* settings the numbers depend on */
	char shard[24];       /* tune --shard "I/N", "" for a whole tune (informative: the
			       * results of any shard are valid in any tune of the setup) */
};

enum rb_tune_kind {
	RB_TUNE_MODEL = 0, /* modeled time of the timing model alone (no arithmetic) */
	RB_TUNE_RUN,       /* verified, then timed on the device */
	RB_TUNE_CPU,       /* the CPU reference of the shape */
};

struct rb_tune_record {
	enum rb_tune_kind kind;
	char shape[64];   /* "1x2048x8192 fp16" */
	char config[192]; /* the point's text (or "cpu") */
	char launch[16];  /* "fences", "threads" or "-" */
	bool ok;          /* ran (and, for RUN, verified or skipped) */
	double median_us; /* NAN when !ok */
	char verify[16];  /* RUN: verified, skipped, failed; else "" */
	char reason[512]; /* why it failed, "" when ok */
};

struct rb_tune_cache {
	char *path;
	FILE *f;
	struct rb_tune_record *records;
	uint64_t *keys;
	size_t count, cap;
	int lock_fd;            /* the locked descriptor while open (-1: none) */
	size_t resumed;         /* records read back when the cache was opened */
	bool dropped_last_line; /* the last line was truncated (a crash mid-write) */
};

/* Opens (creating it with the header if missing or empty) the cache at path, a regular
 * file locked for this process until _close: -ETXTBSY when another tune holds it. An
 * existing cache whose header differs is refused with -ESTALE and a message naming the
 * field; a line other than the last that is not a record, or a record its own fields
 * rule out (a time that is not a positive number up to RB_TUNE_MAX_US, an ok run that
 * is not verified or skipped, a failed one with a time, a verified model
 * record), is -EINVAL naming the line and the rule. */
int rb_tune_cache_open(struct rb_tune_cache *cache, const char *path,
		       const struct rb_tune_header *header);
/* The reading half of _open, on the text of an existing cache held in memory (path
 * names it in messages): sets up *cache (closed: no FILE; release with _close, also on
 * error) with the records read, and *valid to the length of the complete lines. */
int rb_tune_cache_parse(struct rb_tune_cache *cache, const char *path, const char *data, size_t len,
			const struct rb_tune_header *header, size_t *valid);
const struct rb_tune_record *rb_tune_cache_find(const struct rb_tune_cache *cache,
						enum rb_tune_kind kind, const char *shape,
						const char *config, const char *launch);
/* Adds a record and writes it durably (write, fflush, fsync) before returning. */
int rb_tune_cache_append(struct rb_tune_cache *cache, const struct rb_tune_record *record);
void rb_tune_cache_close(struct rb_tune_cache *cache);
/* The header on the first line of a cache's text (fields it lacks that are not compared
 * are ""): 0 or -EINVAL. */
int rb_tune_cache_read_header(const char *path, const char *data, size_t len,
			      struct rb_tune_header *header);
/* The i-th field of the header: its key in the cache, with *value its text (""
 * when absent); NULL past the last. How the page lists a header without naming it. */
const char *rb_tune_header_field(const struct rb_tune_header *header, size_t i, const char **value);
/* Whether the first line of a text is a tune cache's header (its schema). */
bool rb_tune_cache_text_is(const char *text, size_t len);
/* A whole cache, header and records, written to path at once (temporary file, rename):
 * what `merge --cache` writes. 0 or a negative errno. */
int rb_tune_cache_write(const char *path, const struct rb_tune_header *header,
			const struct rb_tune_record *records, size_t count);

const char *rb_tune_kind_name(enum rb_tune_kind kind); /* model, run, cpu */
void rb_tune_shape_key(const struct rb_shape *shape, char *buf, size_t size);

#endif
