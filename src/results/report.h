/* Reports: console table, CSV and JSON.
 *
 * Table (for people): one row per result: first name ("+N" when the shape has N more),
 * MxKxN, dtype, device (" (modeled)" when timed by a model), median µs, ±MAD µs,
 * GFLOP/s, GB/s of A+B+C, GB/s of B (decode shapes, M <= RB_REPORT_DECODE_M, else "-")
 * and the verification. Below it: the first mismatches of every failed verification,
 * outlier counts, and a footnote when any row is modeled.
 *
 * CSV: a header row, then one row per result with every scalar field (names joined
 * with ';', config as compact JSON, undefined numbers empty). Fields holding a comma,
 * a double quote, CR or LF are quoted, quotes doubled (RFC 4180); records end with LF.
 * Numbers are printed with the fewest digits that read back to the same double.
 *
 * JSON (schema "rknn-bench/1"): {"schema","context":{...},"results":[...]}; readers
 * ignore unknown fields; undefined statistics (NaN, inf) are null. Each result:
 *   shape {m,k,n,dtype}, names[], device, modeled, config (copy, or {}),
 *   stats {median_us,min_us,mean_us,stddev_us,cv,mad_us,p90_us,samples_us[],outliers},
 *   setup_us, gflops, gbps, gbps_b (always present, meaningful for small M),
 *   verify {status,mode,max_abs,max_rel,mismatches,checked,
 *           first_mismatches[{i,j,expected,got}]},
 *   reproducer;
 *   with run --phase: phase (the NPU phase timed alone, on the host clock);
 *   with run --perf: perf (rb_perf_json: host counters per phase).
 * The table prints the perf blocks and unavailable counters below the notes.
 *
 * Markdown (md): the table as a Markdown table ("| name | ... |", numbers aligned
 * right), with the context line above it and the notes below. */
#ifndef RB_RESULTS_REPORT_H
#define RB_RESULTS_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <cJSON.h>

#include "core/stats.h"
#include "host/context.h"
#include "host/perfctr.h"
#include "numeric/verify.h"
#include "rknn_bench/shape.h"

#define RB_SCHEMA "rknn-bench/1"

/* Largest M for which the table shows the GB/s of B (decode: weights streamed). */
#define RB_REPORT_DECODE_M 4

enum rb_format {
	RB_FORMAT_TABLE = 0,
	RB_FORMAT_CSV,
	RB_FORMAT_JSON,
	RB_FORMAT_MD, /* the table as Markdown */
};

struct rb_result {
	struct rb_shape shape;
	char *const *names;
	size_t n_names;
	const char *device;
	bool modeled;  /* times come from a model, not a clock */
	cJSON *config; /* owned; the device's configuration */
	struct rb_stats stats;
	double setup_us; /* one-time preparation, reported apart from run time */
	int batch;       /* runs per sample (short measured runs are batched); 0 means 1 */
	struct rb_verify_result verify;
	char reproducer[512]; /* command line that measures this row alone */
	const char *phase;    /* run --phase: the phase timed alone (host clock), or NULL */
	struct rb_perf *perf; /* owned (free), run --perf: host counters, or NULL */
};

/* The context as JSON, the "context" object of a report (tool_version, tool_commit,
 * host, cpu, board, kernel, driver, date, cpu_count, host_settings, ...). NULL when out
 * of memory. */
cJSON *rb_context_json(const struct rb_context *ctx);
/* Rates are NAN when the median is not a positive number, or is the time of one phase
 * alone (r->phase; then there is no roofline either). */
/* 2·M·N·K / median, in GFLOP/s. */
double rb_result_gflops(const struct rb_result *r);
/* Bytes of A, B and C moved once / median, in GB/s. */
double rb_result_gbps(const struct rb_result *r);
/* Bytes of B / median, in GB/s (the weight-streaming rate of decode shapes). */
double rb_result_gbps_b(const struct rb_result *r);

/* Where a result sits on the roofline of the device it ran on: from the ceilings the
 * device put in its config ("peak_gflops", "ddr_gbps" of the cores used). Bytes are A,
 * B and C moved once. False when the device has no such numbers (the CPU). */
struct rb_roofline {
	double intensity; /* flop per byte */
	double peak_gflops, ddr_gbps, attainable_gflops;
	bool memory_bound;
	double peak_pct, ddr_pct; /* of the MAC peak, of the DDR bandwidth */
};

bool rb_result_roofline(const struct rb_result *r, struct rb_roofline *rl);

/* Frees config, stats and perf (not names, which the caller owns). */
void rb_result_release(struct rb_result *r);

/* table|csv|json|md; or -EINVAL with a message. */
int rb_format_parse(const char *text, enum rb_format *out);
const char *rb_format_name(enum rb_format format);
/* The format a file name's extension names (.json, .csv, .md): true, else false. */
bool rb_format_of_path(const char *path, enum rb_format *out);

/* Writes the results in `format` to `out`. Returns 0 or a negative errno; a failed
 * write is -EIO with the reason alone as the message ("No space left on device"): the
 * caller names the file. */
int rb_report_write(FILE *out, enum rb_format format, const struct rb_context *ctx,
		    const struct rb_result *results, size_t n);
/* The JSON document (caller frees with cJSON_Delete); NULL on allocation failure. */
cJSON *rb_report_json(const struct rb_context *ctx, const struct rb_result *results, size_t n);

/* Per-model totals of the results (results/totals.h): each result's median once per pair
 * that has its shape (its names), summed per M, a prompt with the M = 1 pairs of its
 * output row (rb_totals_sum_pairs). Fills at most RB_TOTALS_MAX groups;
 * none for results of one phase alone (run --phase). */
struct rb_total;
size_t rb_report_totals(const struct rb_result *results, size_t n, struct rb_total *out);

#endif
