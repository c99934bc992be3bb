/* Reports: console table, CSV and JSON.
 *
 * JSON (schema "rknn-bench/1"): {"schema","context":{...},"results":[...]}; readers
 * ignore unknown fields; undefined statistics are null. */
#ifndef RB_CORE_REPORT_H
#define RB_CORE_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include <cJSON.h>

#include "core/stats.h"
#include "core/verify.h"
#include "rknn_bench/shape.h"

#define RB_SCHEMA "rknn-bench/1"

enum rb_format {
	RB_FORMAT_TABLE = 0,
	RB_FORMAT_CSV,
	RB_FORMAT_JSON,
};

/* Where the numbers were taken. */
struct rb_context {
	char tool_version[32];
	char host[128];
	char cpu[128];
	char kernel[160];
	char date[32]; /* ISO 8601, UTC */
	int cpu_count;
};

struct rb_result {
	struct rb_shape shape;
	char *const *names;
	size_t n_names;
	const char *device;
	bool modeled;         /* times come from a model, not a clock */
	cJSON *config;        /* owned; the device's configuration */
	struct rb_stats stats;
	double setup_us;      /* one-time preparation, reported apart from run time */
	struct rb_verify_result verify;
	char reproducer[512]; /* command line that measures this row alone */
};

void rb_context_collect(struct rb_context *ctx);

/* 2·M·N·K / median, in GFLOP/s. */
double rb_result_gflops(const struct rb_result *r);
/* Bytes of A, B and C moved once / median, in GB/s. */
double rb_result_gbps(const struct rb_result *r);
/* Bytes of B / median, in GB/s (the weight-streaming rate of decode shapes). */
double rb_result_gbps_b(const struct rb_result *r);

void rb_result_release(struct rb_result *r);

int rb_format_parse(const char *text, enum rb_format *out);

/* Writes the results in `format` to `out`. Returns 0 or a negative errno. */
int rb_report_write(FILE *out, enum rb_format format, const struct rb_context *ctx,
		    const struct rb_result *results, size_t n);
/* The JSON document (caller frees with cJSON_Delete); NULL on allocation failure. */
cJSON *rb_report_json(const struct rb_context *ctx, const struct rb_result *results, size_t n);

#endif
