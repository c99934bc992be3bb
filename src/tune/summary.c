/* A tune's summary: the table of its shapes and the totals per model (tune/display.h). */
#include <stdlib.h>

#include "results/totals.h"
#include "dev/npu_device.h"
#include "hw/soc.h"
#include "tune/display.h"

enum {
	T_NAME,
	T_SHAPE,
	T_LAUNCH,
	T_TUNED,
	T_HOST,
	T_DEFAULT,
	T_SPEEDUP,
	T_API,
	T_BACKEND,
	T_CONFIG,
	T_COLS
};
#define T_CELL 160

static void summary_row(char (*cells)[T_CELL], const char *name, const struct rb_tune_best *b)
{
	snprintf(cells[T_NAME], T_CELL, "%s", name);
	snprintf(cells[T_SHAPE], T_CELL, "%lldx%lldx%lld", (long long)b->shape.m,
		 (long long)b->shape.k, (long long)b->shape.n);
	if (!b->found) {
		snprintf(cells[T_LAUNCH], T_CELL, "no verified config (%zu failed)", b->n_failed);
		return;
	}
	snprintf(cells[T_LAUNCH], T_CELL, "%s", rb_npu_launch_name(b->point.launch));
	snprintf(cells[T_TUNED], T_CELL, "%.1f", b->median_us);
	snprintf(cells[T_HOST], T_CELL, "%.1f", b->host_us);
	snprintf(cells[T_DEFAULT], T_CELL, "%.1f", rb_tune_default_total_us(b));
	snprintf(cells[T_SPEEDUP], T_CELL, "%.2fx",
		 rb_tune_default_total_us(b) / rb_tune_best_total_us(b));
	if (b->api.found)
		snprintf(cells[T_API], T_CELL, "%.1f", rb_tune_api_total_us(b));
	if (b->backend.found)
		snprintf(cells[T_BACKEND], T_CELL, "%.1f", rb_tune_backend_total_us(b));
	snprintf(cells[T_CONFIG], T_CELL, "%s", b->point.text);
}

/* The knobs in which the configs behind two totals of one M differ, shape by shape:
 * "launch, split" ("" when none). */
static void why_text(const struct rb_tune_run *t, const struct rb_tune_best *best, int64_t m,
		     enum rb_tune_which slow, char *buf, size_t size)
{
	unsigned diff = 0;
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < t->o->shapes.count; i++) {
		const struct rb_tune_best *b = &best[i];
		const struct rb_tune_point *fast, *from;
		double us;

		if (b->shape.m != m || !(fast = rb_tune_overall_point(b, &us)))
			continue;
		from = slow == RB_TUNE_BACKEND ? &b->backend.point : &b->api.point;
		if (slow == RB_TUNE_BACKEND && b->api.found)
			fast = &b->api.point; /* backend against rknn-api */
		if ((slow == RB_TUNE_BACKEND && b->backend.found) ||
		    (slow == RB_TUNE_API && b->api.found))
			diff |= rb_tune_point_diff(&b->shape, from, fast);
	}
	for (unsigned k = 0; k < RB_TUNE_DIFF_COUNT; k++)
		if (diff & 1u << k && len < size)
			len += (size_t)snprintf(buf + len, size - len, "%s%s", len ? ", " : "",
						rb_tune_diff_name(k));
}

/* One line saying why a total is worse than the next one's (the lines go from what the
 * backend does to what rknn-bench does). */
static void print_why(FILE *out, const struct rb_tune_run *t, const struct rb_tune_best *best,
		      const struct rb_total *slow, const struct rb_total *fast,
		      enum rb_tune_which which)
{
	char knobs[160];

	if (!slow->complete || !fast->complete || !(slow->total_us > fast->total_us))
		return;
	why_text(t, best, slow->m, which, knobs, sizeof(knobs));
	if (which == RB_TUNE_BACKEND)
		fprintf(
		    out,
		    "    why: the backend's own split (3 cores, N/32/3*32 columns each) is %.1f µs "
		    "slower than the best rknn_matmul_api config, which differs in %s\n",
		    slow->total_us - fast->total_us, knobs[0] ? knobs : "nothing but noise");
	else
		fprintf(
		    out,
		    "    why: rknn_matmul_api is %.1f µs slower: rknn-bench's configs differ in "
		    "%s, "
		    "which librknnrt cannot express (it runs one blocking thread per single-core "
		    "context on 32-column cuts)%s\n",
		    slow->total_us - fast->total_us, knobs[0] ? knobs : "nothing but noise",
		    t->o->target == RB_TUNE_TARGET_RKNN_API
			? "; with --target rknn-api rknn-bench's best is its default config, "
			  "not searched"
			: "");
}

/* The three totals, from what the backend does to what rknn-bench does. */
static const enum rb_tune_which three[] = {RB_TUNE_BACKEND, RB_TUNE_API, RB_TUNE_OVERALL};
static const char *const three_labels[] = {"backend   ", "rknn-api  ", "rknn-bench"};

static void print_three(FILE *out, struct rb_total sums[3][RB_TOTALS_MAX], size_t i)
{
	char line[160];

	for (int w = 0; w < 3; w++) {
		rb_total_text(&sums[w][i], line, sizeof(line));
		fprintf(out, "  %s %s\n", three_labels[w], line);
	}
}

/* Slices of `shapes --for ggml-rknn`: the same three per graph pair, each pair its
 * slowest slice (the backend runs a pair's slices at once, one per core). */
static void print_slice_totals(FILE *out, const struct rb_tune_run *t,
			       const struct rb_tune_best *best)
{
	struct rb_total sums[3][RB_TOTALS_MAX];
	size_t n[3];

	for (int w = 0; w < 3; w++)
		n[w] = rb_tune_slice_totals(t, best, three[w], sums[w]);
	if (!n[0])
		return;
	fprintf(out, "\nper graph pair, its slowest slice (the slices run at once, one per "
		     "core):\n");
	for (size_t i = 0; i < n[0] && i < n[1] && i < n[2]; i++)
		print_three(out, sums, i);
}

/* Per model, from what the backend does to what rknn-bench does: the backend as it is
 * (its own split), the best rknn_matmul_api can express, our best overall; each a sum of
 * device + host time per pair; a line says why when one is worse than the next. */
static void print_totals(FILE *out, const struct rb_tune_run *t, const struct rb_tune_best *best)
{
	struct rb_total sums[3][RB_TOTALS_MAX];
	size_t n[3];

	for (int w = 0; w < 3; w++)
		n[w] = rb_tune_totals(t->o, best, three[w], sums[w]);
	fprintf(
	    out,
	    "\nper model, the sum over every pair of device%s + host time (host: %s, modeled):\n",
	    t->device.ops->modeled ? " (modeled)" : "", RB_TUNE_HOST_MODEL);
	for (size_t i = 0; i < n[0] && i < n[1] && i < n[2]; i++) {
		print_three(out, sums, i);
		print_why(out, t, best, &sums[0][i], &sums[1][i], RB_TUNE_BACKEND);
		print_why(out, t, best, &sums[1][i], &sums[2][i], RB_TUNE_API);
		if (sums[2][i].complete && sums[1][i].complete &&
		    sums[2][i].total_us > sums[1][i].total_us)
			fprintf(
			    out,
			    "    why: rknn-bench's best is %.1f µs slower than rknn_matmul_api's: "
			    "the space searched (--space) leaves the API's configs out\n",
			    sums[2][i].total_us - sums[1][i].total_us);
	}
	fprintf(out,
		"  (backend: ggml-rknn as it is, its own split; rknn-api: the best librknnrt can "
		"express; rknn-bench: our best overall)\n");
	if (t->o->target == RB_TUNE_TARGET_GGML_RKNN)
		fprintf(out, "  (ggml-rknn slices: each slice's time on its core, summed; the "
			     "backend runs a pair's slices at once on three cores, so a pair takes "
			     "about its slowest slice)\n");
	print_slice_totals(out, t, best);
}

/* The summary: the row of a shape prints the config the tuned JSON holds for it
 * (tuned.config, the planner's choices made explicit), as the tests check. */
void rb_tune_summary_print(FILE *out, enum rb_table_style style, const struct rb_tune_run *t,
			   const struct rb_tune_best *best)
{
	const struct rb_shape_list *l = &t->o->shapes;
	bool modeled = t->device.ops->modeled;
	const struct rb_table_column cols[T_COLS] = {
	    {"name", false},
	    {"shape", false},
	    {"launch", false},
	    {modeled ? "device µs (modeled)" : "device µs", true},
	    {"host µs (A76 model)", true},
	    {"default µs", true},
	    {"speedup", true},
	    {"rknn-api µs", true},
	    {"backend µs", true},
	    {"config", false},
	};
	char(*rows)[T_COLS][T_CELL] = calloc(l->count ? l->count : 1, sizeof(*rows));
	const struct rb_soc_profile *soc = t->o->engine.sim.soc;
	size_t n = 0;

	if (soc)
		fprintf(out, "hardware profile: %s, chosen by %s\n\n", soc->label, soc->chosen_by);
	for (size_t i = 0; rows && i < l->count; i++)
		if (rb_tune_first_same(l, i) == i && !best[i].other_shard)
			summary_row(rows[n++], l->entries[i].names[0], &best[i]);
	if (rows)
		rb_table_print_cells_style(out, style, cols, T_COLS, (const char *)rows, T_CELL, n);
	if (t->work) /* the totals need every shape: `rknn-bench merge` sums them */
		fprintf(out,
			"\nshard %u/%u: %zu of the shapes; `rknn-bench merge` joins the shards\n",
			t->o->shard.index, t->o->shard.count, n);
	else
		print_totals(out, t, best);
	fprintf(
	    out,
	    "\ndefault, rknn-api and backend µs and the speedup are device + host; the host part "
	    "is modeled for the board's Cortex-A76 (docs/tuned-json.md)\n");
	if (modeled)
		fprintf(out, "modeled: times come from the emulator's timing model, not a clock\n");
	free(rows);
}
