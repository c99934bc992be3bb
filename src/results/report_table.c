/* The console table of a report (report.h): one row per result, then notes
 * (failures, outliers, the modeled footnote, host counters); drawn as aligned text or,
 * for the md format (report_md.c), as a Markdown table. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "results/report_format.h"
#include "core/table.h"
#include "results/totals.h"

#define MODELED_NOTE "modeled: times come from the emulator's timing model, not a clock"

/* ---- table ------------------------------------------------------------------- */

enum col {
	COL_NAME,
	COL_SHAPE,
	COL_DTYPE,
	COL_DEVICE,
	COL_MEDIAN,
	COL_MAD,
	COL_GFLOPS,
	COL_GBPS,
	COL_GBPS_B,
	COL_PEAK,
	COL_VERIFY,
	N_COLS,
};

static const struct rb_table_column columns[N_COLS] = {
    [COL_NAME] = {"name", false},       [COL_SHAPE] = {"shape", false},
    [COL_DTYPE] = {"dtype", false},     [COL_DEVICE] = {"device", false},
    [COL_MEDIAN] = {"median µs", true}, [COL_MAD] = {"±MAD µs", true},
    [COL_GFLOPS] = {"GFLOP/s", true},   [COL_GBPS] = {"GB/s", true},
    [COL_GBPS_B] = {"B GB/s", true},    [COL_PEAK] = {"roofline", false},
    [COL_VERIFY] = {"verify", false},
};

#define CELL_SIZE 96
typedef char row_cells[N_COLS][CELL_SIZE];

static void fmt_fixed(char *buf, double v, int prec, const char *prefix)
{
	if (isfinite(v))
		snprintf(buf, CELL_SIZE, "%s%.*f", prefix, prec, v);
	else
		snprintf(buf, CELL_SIZE, "-");
}

/* Three significant digits or more: 0.123, 12.3, 1234. */
static void fmt_rate(char *buf, double v)
{
	fmt_fixed(buf, v, fabs(v) >= 100 ? 0 : fabs(v) >= 10 ? 1 : 2, "");
}

void rb_report_fmt_shape(char *buf, size_t size, const struct rb_shape *s)
{
	snprintf(buf, size, "%" PRId64 "x%" PRId64 "x%" PRId64, s->m, s->k, s->n);
}

/* The row's name: first name, "+N" when the shape has N more; the shape if unnamed. */
void rb_report_fmt_name(char *buf, size_t size, const struct rb_result *r)
{
	if (r->n_names == 0 || !r->names)
		rb_report_fmt_shape(buf, size, &r->shape);
	else if (r->n_names == 1)
		snprintf(buf, size, "%s", r->names[0]);
	else
		snprintf(buf, size, "%s +%zu", r->names[0], r->n_names - 1);
}

static void fmt_verify(char *buf, const struct rb_verify_result *v)
{
	if (v->status == RB_VERIFY_SKIPPED)
		snprintf(buf, CELL_SIZE, "skipped");
	else
		snprintf(buf, CELL_SIZE, "%s (%s)",
			 v->status == RB_VERIFY_FAILED ? "FAILED"
						       : rb_verify_status_name(v->status),
			 rb_verify_mode_name(v->mode));
}

/* "97% DDR" or "64% MAC": the fraction of the ceiling that bounds this shape on the
 * roofline (MAC peak vs arithmetic intensity × DDR bandwidth), "-" without a profile. */
static void fmt_roofline(char *cell, const struct rb_result *r)
{
	struct rb_roofline rl;

	if (!rb_result_roofline(r, &rl)) {
		snprintf(cell, CELL_SIZE, "-");
		return;
	}
	if (rl.memory_bound)
		snprintf(cell, CELL_SIZE, "%.0f%% DDR", rl.ddr_pct);
	else
		snprintf(cell, CELL_SIZE, "%.0f%% MAC", rl.peak_pct);
}

static void fill_row(row_cells cells, const struct rb_result *r)
{
	rb_report_fmt_name(cells[COL_NAME], CELL_SIZE, r);
	rb_report_fmt_shape(cells[COL_SHAPE], CELL_SIZE, &r->shape);
	snprintf(cells[COL_DTYPE], CELL_SIZE, "%s", rb_dtype_name(r->shape.dtype));
	if (r->phase)
		snprintf(cells[COL_DEVICE], CELL_SIZE, "%s (%s alone, host)",
			 r->device ? r->device : "-", r->phase);
	else
		snprintf(cells[COL_DEVICE], CELL_SIZE, "%s%s", r->device ? r->device : "-",
			 r->modeled ? " (modeled)" : "");
	fmt_fixed(cells[COL_MEDIAN], r->stats.median_us, 1, "");
	fmt_fixed(cells[COL_MAD], r->stats.mad_us, 1, "±");
	fmt_rate(cells[COL_GFLOPS], rb_result_gflops(r));
	fmt_rate(cells[COL_GBPS], rb_result_gbps(r));
	if (r->shape.m <= RB_REPORT_DECODE_M)
		fmt_rate(cells[COL_GBPS_B], rb_result_gbps_b(r));
	else
		snprintf(cells[COL_GBPS_B], CELL_SIZE, "-");
	fmt_roofline(cells[COL_PEAK], r);
	fmt_verify(cells[COL_VERIFY], &r->verify);
}

static void print_failure(FILE *out, const struct rb_result *r)
{
	const struct rb_verify_result *v = &r->verify;
	char name[CELL_SIZE], shape[64];
	int i;

	rb_report_fmt_name(name, sizeof(name), r);
	rb_report_fmt_shape(shape, sizeof(shape), &r->shape);
	fprintf(out,
		"verify failed: '%s' (%s %s on %s): %" PRId64 " of %" PRId64
		" checked elements differ, max abs %.9g, max rel %.9g\n",
		name, shape, rb_dtype_name(r->shape.dtype), r->device ? r->device : "-",
		v->mismatches, v->checked, v->max_abs, v->max_rel);
	for (i = 0; i < v->n_reported; i++)
		fprintf(out, "  C[%" PRId64 ",%" PRId64 "] = %.9g, expected %.9g\n", v->first[i].i,
			v->first[i].j, v->first[i].got, v->first[i].expected);
	if (v->mismatches > v->n_reported)
		fprintf(out, "  ... and %" PRId64 " more\n", v->mismatches - v->n_reported);
}

/* run --perf: a block of host counters per result, then what could not be counted. */
static void print_perf(FILE *out, const struct rb_result *results, size_t n)
{
	const struct rb_perf *last = NULL;
	char name[CELL_SIZE], label[2 * CELL_SIZE];

	for (size_t i = 0; i < n; i++) {
		if (!results[i].perf)
			continue;
		rb_report_fmt_name(name, sizeof(name), &results[i]);
		snprintf(label, sizeof(label), "'%s' on %s", name, results[i].device);
		rb_perf_print(out, label, results[i].perf);
		last = results[i].perf;
	}
	if (last)
		rb_perf_print_unavailable(out, last);
}

/* What the model spends in these matmuls, per token and per prompt. */
static void print_totals(FILE *out, const struct rb_result *results, size_t n, bool modeled)
{
	struct rb_total t[RB_TOTALS_MAX];
	size_t groups = rb_report_totals(results, n, t);
	char line[160];

	if (groups)
		fprintf(out, "\nper model, the sum over every pair%s:\n",
			modeled ? " (modeled)" : "");
	for (size_t i = 0; i < groups; i++) {
		rb_total_text(&t[i], line, sizeof(line));
		fprintf(out, "  %s\n", line);
	}
}

/* Lines below the table: failures, outliers, the modeled footnote, the counters. */
static void print_notes(FILE *out, const struct rb_result *results, size_t n)
{
	char name[CELL_SIZE];
	bool modeled = false, first = true;
	size_t i;

	for (i = 0; i < n; i++) {
		const struct rb_result *r = &results[i];
		bool failed = r->verify.status == RB_VERIFY_FAILED;

		if ((failed || r->stats.outliers) && first) {
			fputc('\n', out);
			first = false;
		}
		if (failed)
			print_failure(out, r);
		rb_report_fmt_name(name, sizeof(name), r);
		if (r->stats.outliers)
			fprintf(out,
				"outliers: '%s': %zu of %zu samples (modified z-score > 3.5)\n",
				name, r->stats.outliers, r->stats.n);
		modeled |= r->modeled;
	}
	print_totals(out, results, n, modeled);
	if (modeled)
		fprintf(out, "\n" MODELED_NOTE "\n");
	print_perf(out, results, n);
}

int rb_report_write_styled(FILE *out, enum rb_table_style style, const struct rb_context *ctx,
			   const struct rb_result *results, size_t n)
{
	row_cells *rows = calloc(n ? n : 1, sizeof(*rows));
	char line[1024];
	size_t i;

	if (!rows)
		return rb_set_error(-ENOMEM, "out of memory for a table of %zu rows", n);
	if (ctx) {
		rb_context_line(ctx, line, sizeof(line));
		fprintf(out, "%s\n", line);
	}
	if (ctx && ctx->hw_profile)
		fprintf(out, "hardware profile: %s, chosen by %s\n", ctx->hw_profile,
			ctx->hw_profile_chosen_by ? ctx->hw_profile_chosen_by : "?");
	if (ctx)
		fputc('\n', out);
	for (i = 0; i < n; i++)
		fill_row(rows[i], &results[i]);
	rb_table_print_cells_style(out, style, columns, N_COLS, (const char *)rows, CELL_SIZE, n);
	print_notes(out, results, n);
	free(rows);
	return 0;
}

int rb_report_write_table(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
			  size_t n)
{
	return rb_report_write_styled(out, RB_TABLE_TEXT, ctx, results, n);
}
