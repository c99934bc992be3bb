/* What a user cares about per model: the matmuls of a shapes file summed the way the
 * model runs them. A shapes file lists every matmul node of a model (one pair per node
 * and layer); identical shapes are measured once but run once per pair, so each
 * shape's median counts once per pair. Rows with M = 1 are decode (the total is the
 * time per generated token spent in these matmuls); each M > 1 is a prefill prompt of
 * M tokens (the total is the time per prompt). */
#ifndef RB_CORE_TOTALS_H
#define RB_CORE_TOTALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

/* One measured shape: its M, its time, and how many pairs of the file run it. */
struct rb_total_item {
	int64_t m;
	double us;    /* NAN: not measured (the total is then incomplete) */
	size_t pairs; /* pairs of the shapes file with this shape (>= 1) */
};

/* The sum for one M. */
struct rb_total {
	int64_t m;       /* 1: decode (per token); > 1: prefill (per prompt of m tokens) */
	size_t pairs;    /* pairs summed */
	double total_us; /* Σ us · pairs */
	bool complete;   /* every pair of this M had a time */
};

#define RB_TOTALS_MAX 16

/* Sums items by M, in increasing M; at most `max` groups (more M values are left out).
 * Returns the number of groups written. */
size_t rb_totals_sum(const struct rb_total_item *items, size_t n, struct rb_total *out, size_t max);

/* The groups as a JSON array of {"m", "kind": "decode"|"prefill", "per": "token"|
 * "prompt", "pairs", "total_us" (null when incomplete)}; NULL when out of memory. */
cJSON *rb_totals_json(const struct rb_total *t, size_t n);

/* "decode (M = 1): 1234.5 µs per token over 35 pairs" into buf. */
void rb_total_text(const struct rb_total *t, char *buf, size_t size);

#endif
