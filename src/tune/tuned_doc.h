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

#endif
