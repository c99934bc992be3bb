/* What a user cares about per model: the matmuls of a shapes file summed the way the
 * model runs them. A shapes file lists every matmul node of a model (one pair per node
 * and layer); identical shapes are measured once but run once per pair, so each
 * shape's median counts once per pair. Rows with M = 1 are decode (the total is the
 * time per generated token spent in these matmuls); each M > 1 is a prefill prompt of
 * M tokens (the total is the time per prompt).
 *
 * A prompt also runs matmuls with M = 1: llama.cpp computes the last layer after its
 * attention, and result_output, only for the rows whose logits are wanted (ggml_get_rows
 * on inp_out_ids in the graph builders, llama-model.cpp 4216-4221 of the seed revision),
 * one row when generating. A shapes file lists those pairs once, at M = 1 (they are the
 * decode pairs of the same names too), so the totals of named pairs
 * (rb_totals_sum_pairs) count them in every prompt that has no pair of the same name
 * at its own M (with every token's logits, --all-logits, the prompt lists them at M). */
#ifndef RB_RESULTS_TOTALS_H
#define RB_RESULTS_TOTALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

/* One pair of a shapes file, named, with its shape's time. */
struct rb_total_pair {
	const char *name;
	int64_t m;
	double us; /* NAN: not measured */
};

/* The sum for one M. */
struct rb_total {
	int64_t m;          /* 1: decode (per token); > 1: prefill (per prompt of m tokens) */
	size_t pairs;       /* pairs summed */
	size_t output_rows; /* of them, a prompt's pairs at M = 1 (its output row) */
	double total_us;    /* Σ us over the pairs */
	bool complete;      /* every pair of this M had a time */
};

#define RB_TOTALS_MAX 16

/* Sums named pairs, one per pair of the file, by M, in increasing M; each prompt group
 * also counts the M = 1 pairs of its output row (above). At most `max` groups (more M
 * values are left out); returns the number of groups written. */
size_t rb_totals_sum_pairs(const struct rb_total_pair *pairs, size_t n, struct rb_total *out,
			   size_t max);

/* Whether llama.cpp computes graph node `node` (a name without its layer: "ffn_up",
 * "result_output") of the last layer for the output rows only. */
bool rb_totals_output_rows_node(const char *node);

/* The groups as a JSON array of {"m", "kind": "decode"|"prefill", "per": "token"|
 * "prompt", "pairs", "output_rows" (prompts: the pairs of them at M = 1), "total_us" (null when
 * incomplete)}; NULL when out of memory. */
cJSON *rb_totals_json(const struct rb_total *t, size_t n);

/* The groups of a "totals" array read back (rb_totals_json's shape): at most `max`
 * into out, *n of them. 0, or -EINVAL naming `label`, `where` and the entry. */
int rb_totals_parse(const cJSON *array, const char *label, const char *where, struct rb_total *out,
		    size_t max, size_t *n);
/* "decode" or "prefill", and what a total is per: "token" or "prompt". */
const char *rb_total_kind(const struct rb_total *t);
const char *rb_total_per(const struct rb_total *t);

/* "decode (M = 1): 1234.5 µs per token over 35 pairs" into buf; a prompt that runs
 * pairs at M = 1 says how many ("over 113 pairs, 4 of them at M = 1 (output row)"). */
void rb_total_text(const struct rb_total *t, char *buf, size_t size);

#endif
