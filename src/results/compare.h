/* Comparing two JSON reports ("rknn-bench/1"): the regression gate.
 *
 * Results of BASE and NEW are paired when their shapes (m, k, n, dtype) are equal and
 * they share at least one name; the others are reported as "only in base" or "only in
 * new". Per pair, change = new median / base median - 1 and a verdict:
 *
 *   modeled (both sides "modeled": true, the emulator): times are deterministic, so the
 *     medians are compared exactly: "identical" when equal, "regression" when change >
 *     +threshold, "improvement" when change < -threshold, else "same".
 *   measured (a clock): with at least RB_COMPARE_MIN_SAMPLES raw samples on both sides,
 *     a change beyond the threshold counts only when the two-sided Mann-Whitney U test
 *     on stats.samples_us also gives p < alpha (a noisy 6 % is not a regression); with
 *     fewer samples the threshold alone decides.
 *
 * A result whose verification "failed" in NEW is a regression whatever its time (also
 * when it is only in new). The summary has the geometric mean of the new/base median
 * ratios of the paired rows.
 *
 * Results timed on different devices, or modeled against measured, are not comparable:
 * rb_compare_rows refuses them unless opts.allow_device_mismatch is set.
 *
 * Ownership: a struct rb_compare_report is owned by the caller, filled by
 * rb_compare_load / rb_compare_parse and freed with rb_compare_report_release. A
 * struct rb_compare is filled by rb_compare_rows and freed with rb_compare_release;
 * its rows point into both reports, which must outlive it. Functions are silent: on
 * error they return a negative errno and rb_last_error() names the file and problem. */
#ifndef RB_RESULTS_COMPARE_H
#define RB_RESULTS_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

#include <stdint.h>

#include "results/totals.h"
#include "rknn_bench/shape.h"

/* Fewest raw samples per side for the significance test. */
#define RB_COMPARE_MIN_SAMPLES           9
#define RB_COMPARE_DEFAULT_THRESHOLD_PCT 5.0
#define RB_COMPARE_DEFAULT_ALPHA         0.05

/* Where a result sits on its device's roofline, as the report recorded it. */
struct rb_compare_roofline {
	bool present;                            /* false: the cpu device, or a phase timed alone */
	double intensity, peak_gflops, ddr_gbps; /* flop/byte; NAN when not recorded */
};

/* One result of a report, as its readers (compare, calibrate, the page) need it.
 * Strings point into the report's JSON document. */
struct rb_compare_entry {
	struct rb_shape shape;
	const char **names;
	size_t n_names;
	const char *device;
	bool modeled;
	double median_us;
	double *samples_us; /* owned; NULL when n_samples is 0 */
	size_t n_samples;
	bool verify_failed; /* verify.status is "failed" */
	double gflops;      /* NAN when not recorded */
	struct rb_compare_roofline roofline;
	/* the device's config strings (NULL when absent): the plan, the launch mode and
	 * the driver an NPU result ran with */
	const char *plan, *launch, *driver;
};

struct rb_compare_report {
	char *label; /* the file name, for messages */
	cJSON *doc;
	struct rb_compare_entry *entries;
	size_t n;
	/* the context (provenance, a free-form object of facts; NULL when absent), its
	 * host (NULL when absent) and the first warning about the host's settings (NULL) */
	const cJSON *context;
	const char *host, *settings_warning;
	struct rb_total totals[RB_TOTALS_MAX];
	size_t n_totals;
	/* FNV-1a over the context and results as written: the same evidence twice (a
	 * report given again, or copied) has the same fingerprint */
	uint64_t fingerprint;
};

/* Reads and checks a report. Returns 0, -ENOENT/-EIO/... when the file cannot be read,
 * or -EINVAL for invalid JSON (line and column) or a wrong schema or field. */
int rb_compare_load(struct rb_compare_report *rep, const char *path);
/* The same from memory; `label` stands for the file name in messages. */
int rb_compare_parse(struct rb_compare_report *rep, const char *json, size_t len,
		     const char *label);
void rb_compare_report_release(struct rb_compare_report *rep);

/* Two-sided Mann-Whitney U test. *u is the U statistic of `a` (pairs with a_i > b_j,
 * ties counting one half; the other sample's is na·nb - *u). *p is exact when there
 * are no ties and na + nb <= RB_MWU_EXACT_MAX, else from the normal approximation
 * with tie and continuity corrections. Returns 0, or -EINVAL for an empty sample or a
 * value that is not finite. */
#define RB_MWU_EXACT_MAX 50
int rb_mann_whitney_u(const double *a, size_t na, const double *b, size_t nb, double *u, double *p);

enum rb_verdict {
	RB_VERDICT_IDENTICAL = 0,
	RB_VERDICT_SAME,
	RB_VERDICT_IMPROVEMENT,
	RB_VERDICT_REGRESSION,
	RB_VERDICT_ONLY_BASE,
	RB_VERDICT_ONLY_NEW,
};

/* How a pair was judged. */
enum rb_compare_test {
	RB_TEST_NONE = 0, /* unpaired row */
	RB_TEST_EXACT,    /* modeled: exact medians */
	RB_TEST_MWU,      /* measured: threshold and Mann-Whitney U */
	RB_TEST_THRESHOLD /* measured, too few samples: threshold only */
};

struct rb_compare_opts {
	double threshold_pct; /* |change| beyond this many percent counts */
	double alpha;         /* significance level of the U test */
	bool allow_device_mismatch;
};

struct rb_compare_row {
	const struct rb_compare_entry *base, *new_; /* one of them NULL when unpaired */
	const char *name; /* the first shared name (or the entry's first) */
	double change;    /* new/base - 1; NAN when unpaired */
	double u, p;      /* NAN unless test is RB_TEST_MWU */
	enum rb_compare_test test;
	enum rb_verdict verdict;
	bool significant;   /* MWU only: p < alpha */
	bool verify_failed; /* NEW failed verification: a regression */
};

struct rb_compare {
	struct rb_compare_row *rows; /* base order, then results only in new */
	size_t n_rows;
	size_t matched, regressions, improvements, only_base, only_new;
	double geomean_change; /* geomean of new/base over matched rows, - 1; NAN if none */
};

void rb_compare_opts_init(struct rb_compare_opts *opts);
/* Pairs and judges; returns 0, -EINVAL on a device or modeled/measured mismatch
 * (message names the row, both files and both devices), or -ENOMEM. */
int rb_compare_rows(struct rb_compare *cmp, const struct rb_compare_report *base,
		    const struct rb_compare_report *new_, const struct rb_compare_opts *opts);
void rb_compare_release(struct rb_compare *cmp);

const char *rb_verdict_name(enum rb_verdict verdict); /* "identical", "only in base", ... */

/* The schema of `compare --format json`. */
#define RB_COMPARE_SCHEMA "rknn-bench-compare/1"

/* The comparison as a JSON document (compare_json.c): the two paths, the options, a
 * row per pair and the summary; undefined numbers are null. NULL when out of memory. */
cJSON *rb_compare_json(const struct rb_compare *cmp, const char *base_path, const char *new_path,
		       const struct rb_compare_opts *opts);

#endif
