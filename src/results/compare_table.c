/* The comparison as a console table (core/compare_table.h). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/compare_table.h"
#include "core/error.h"

enum {
	COL_NAME,
	COL_SHAPE,
	COL_DEVICE,
	COL_BASE,
	COL_NEW,
	COL_CHANGE,
	COL_VERDICT,
	COL_TEST,
	N_COLS
};

static const struct rb_table_column columns[N_COLS] = {
    [COL_NAME] = {"name", false},       [COL_SHAPE] = {"shape", false},
    [COL_DEVICE] = {"device", false},   [COL_BASE] = {"base µs", true},
    [COL_NEW] = {"new µs", true},       [COL_CHANGE] = {"change", true},
    [COL_VERDICT] = {"verdict", false}, [COL_TEST] = {"test", false},
};

#define CELL_SIZE 128
typedef char row_cells[N_COLS][CELL_SIZE];

static void fmt_us(char *buf, const struct rb_compare_entry *e)
{
	if (e)
		snprintf(buf, CELL_SIZE, "%.2f", e->median_us);
	else
		snprintf(buf, CELL_SIZE, "-");
}

static void fmt_device(char *buf, const struct rb_compare_row *row)
{
	const struct rb_compare_entry *b = row->base, *n = row->new_;

	if (b && n && (strcmp(b->device, n->device) != 0 || b->modeled != n->modeled))
		snprintf(buf, CELL_SIZE, "%s%s -> %s%s", b->device, b->modeled ? " (modeled)" : "",
			 n->device, n->modeled ? " (modeled)" : "");
	else
		snprintf(buf, CELL_SIZE, "%s%s", (b ? b : n)->device,
			 (b ? b : n)->modeled ? " (modeled)" : "");
}

/* How the verdict was reached, in words. */
static void fmt_test(char *buf, const struct rb_compare_row *row, double threshold_pct)
{
	if (row->verify_failed) {
		snprintf(buf, CELL_SIZE, "verification failed in new");
		return;
	}
	switch (row->test) {
	case RB_TEST_EXACT:
		snprintf(buf, CELL_SIZE, "exact (modeled)");
		break;
	case RB_TEST_MWU:
		snprintf(buf, CELL_SIZE, "U=%g p=%.2g%s", row->u, row->p,
			 !row->significant && fabs(row->change) * 100 > threshold_pct
			     ? " (not significant)"
			     : "");
		break;
	case RB_TEST_THRESHOLD:
		snprintf(buf, CELL_SIZE, "no significance test (fewer than %d samples)",
			 RB_COMPARE_MIN_SAMPLES);
		break;
	default:
		buf[0] = '\0';
	}
}

static void fill_row(row_cells cells, const struct rb_compare_row *row, double threshold_pct)
{
	const struct rb_compare_entry *e = row->base ? row->base : row->new_;

	snprintf(cells[COL_NAME], CELL_SIZE, "%s", row->name);
	snprintf(cells[COL_SHAPE], CELL_SIZE, "%" PRId64 "x%" PRId64 "x%" PRId64 " %s", e->shape.m,
		 e->shape.k, e->shape.n, rb_dtype_name(e->shape.dtype));
	fmt_device(cells[COL_DEVICE], row);
	fmt_us(cells[COL_BASE], row->base);
	fmt_us(cells[COL_NEW], row->new_);
	if (isfinite(row->change))
		snprintf(cells[COL_CHANGE], CELL_SIZE, "%+.2f%%", row->change * 100);
	else
		snprintf(cells[COL_CHANGE], CELL_SIZE, "-");
	snprintf(cells[COL_VERDICT], CELL_SIZE, "%s", rb_verdict_name(row->verdict));
	fmt_test(cells[COL_TEST], row, threshold_pct);
}

static void print_grid(FILE *out, row_cells *rows, size_t n, enum rb_table_style style)
{
	rb_table_print_cells_style(out, style, columns, N_COLS, (const char *)rows, CELL_SIZE, n);
}

/* The last line: the geometric mean, with the counts. */
static void print_geomean(FILE *out, const struct rb_compare *cmp)
{
	if (cmp->matched)
		fprintf(out, "geomean: %+.2f%% over %zu matched row%s (new/base median)",
			cmp->geomean_change * 100, cmp->matched, cmp->matched == 1 ? "" : "s");
	else
		fprintf(out, "geomean: - (no matched rows)");
	fprintf(out, "; %zu regression%s, %zu improvement%s\n", cmp->regressions,
		cmp->regressions == 1 ? "" : "s", cmp->improvements,
		cmp->improvements == 1 ? "" : "s");
}

int rb_compare_print(FILE *out, enum rb_table_style style, const struct rb_compare *cmp,
		     const char *base_path, const char *new_path,
		     const struct rb_compare_opts *opts)
{
	row_cells *rows = calloc(cmp->n_rows + 1, sizeof(*rows));

	if (!rows)
		return rb_set_error(-ENOMEM, "out of memory for %zu rows", cmp->n_rows);
	fprintf(out, "base: %s\nnew:  %s\nthreshold %g%%, alpha %g\n\n", base_path, new_path,
		opts->threshold_pct, opts->alpha);
	for (size_t i = 0; i < cmp->n_rows; i++)
		fill_row(rows[i], &cmp->rows[i], opts->threshold_pct);
	print_grid(out, rows, cmp->n_rows, style);
	free(rows);
	fprintf(out, "\n");
	print_geomean(out, cmp);
	return 0;
}
