/* A fit as calibrate prints it (tune/calibrate_table.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/table.h"
#include "dev/npu_device.h"
#include "tune/calibrate_table.h"

enum { COL_NAME, COL_SHAPE, COL_DTYPE, COL_LAUNCH, COL_MEASURED, COL_FITTED, COL_ERROR, N_COLS };

static const struct rb_table_column row_columns[N_COLS] = {
    [COL_NAME] = {"name", false},           [COL_SHAPE] = {"shape", false},
    [COL_DTYPE] = {"dtype", false},         [COL_LAUNCH] = {"mask/launch", false},
    [COL_MEASURED] = {"measured µs", true}, [COL_FITTED] = {"fitted µs", true},
    [COL_ERROR] = {"error", true},
};

#define CELL_SIZE 96
typedef char row_cells[N_COLS][CELL_SIZE];

static void row_cells_fill(row_cells cells, const struct rb_calib_row *r)
{
	const char *mask = strstr(r->plan, "mask=");
	int mask_len = mask ? (int)strcspn(mask + 5, " ") : 1;

	snprintf(cells[COL_NAME], CELL_SIZE, "%s", r->name);
	snprintf(cells[COL_SHAPE], CELL_SIZE, "%lldx%lldx%lld", (long long)r->shape.m,
		 (long long)r->shape.k, (long long)r->shape.n);
	snprintf(cells[COL_DTYPE], CELL_SIZE, "%s", rb_dtype_name(r->shape.dtype));
	snprintf(cells[COL_LAUNCH], CELL_SIZE, "%.*s/%s%s", mask_len, mask ? mask + 5 : "?",
		 rb_npu_launch_name(r->launch), strstr(r->plan, "chain=0") ? "/no-chain" : "");
	snprintf(cells[COL_MEASURED], CELL_SIZE, "%.1f", r->measured_us);
	snprintf(cells[COL_FITTED], CELL_SIZE, "%.1f", r->fitted_us);
	snprintf(cells[COL_ERROR], CELL_SIZE, "%+.2f %%",
		 100 * (r->fitted_us / r->measured_us - 1));
}

static int print_rows(FILE *out, const struct rb_calib *c)
{
	row_cells *cells = calloc(c->n_rows, sizeof(*cells));

	if (!cells)
		return -ENOMEM;
	for (size_t i = 0; i < c->n_rows; i++)
		row_cells_fill(cells[i], &c->rows[i]);
	rb_table_print_cells(out, row_columns, N_COLS, &cells[0][0][0], CELL_SIZE, c->n_rows);
	free(cells);
	return 0;
}

static void param_note(const struct rb_calib *c, int j, char *buf)
{
	if (c->held[j])
		snprintf(buf, CELL_SIZE, "held: no result constrains it");
	else if (!(c->spread[j] <= RB_CALIB_LOOSE))
		snprintf(buf, CELL_SIZE, "loose: the results hardly tell it from the others");
	else
		buf[0] = '\0';
}

static void print_params(FILE *out, const struct rb_calib *c)
{
	static const struct rb_table_column cols[] = {{"parameter", false}, {"base", true},
						      {"fitted", true},     {"change", true},
						      {"±/1 %", true},      {"", false}};
	char cells[RB_CALIB_PARAMS][6][CELL_SIZE];

	for (int j = 0; j < RB_CALIB_PARAMS; j++) {
		double b = rb_calib_param_get(&c->base, (enum rb_calib_param)j);
		double f = rb_calib_param_get(&c->fitted, (enum rb_calib_param)j);

		snprintf(cells[j][0], CELL_SIZE, "%s", rb_calib_param_key((enum rb_calib_param)j));
		snprintf(cells[j][1], CELL_SIZE, "%.5g", b);
		snprintf(cells[j][2], CELL_SIZE, "%.5g", f);
		snprintf(cells[j][3], CELL_SIZE, b > 0 ? "%+.1f %%" : "-", 100 * (f / b - 1));
		snprintf(cells[j][4], CELL_SIZE, c->held[j] ? "-" : "%.1f %%", 100 * c->spread[j]);
		param_note(c, j, cells[j][5]);
	}
	rb_table_print_cells(out, cols, 6, &cells[0][0][0], CELL_SIZE, RB_CALIB_PARAMS);
	fprintf(out, "(±/1 %%: how far a parameter moves if the times are off by 1 %%)\n");
}

void rb_calib_print(FILE *out, const struct rb_calib *c)
{
	if (print_rows(out, c) < 0)
		return;
	fprintf(out,
		"\nfit error over %zu results: rms %.2f %%, largest %.2f %% (%d iterations)\n\n",
		c->n_rows, 100 * c->rms_error, 100 * c->max_error, c->iterations);
	print_params(out, c);
	if (c->modeled)
		fprintf(out,
			"\nmodeled: the reports are the emulator's, so this profile describes no "
			"board\n");
}
