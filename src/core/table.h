/* The one console table printer: run's report table, tune's summary and compare's
 * table all print through it, so every table of the tool aligns the same way. */
#ifndef RB_CORE_TABLE_H
#define RB_CORE_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct rb_table_column {
	const char *title;
	bool right; /* numbers are right-aligned */
};

/* How a table is drawn: aligned text for a terminal, or a Markdown (GitHub) table,
 * "| a | b |" rows under a "| --- | ---: |" line, '|' in a cell escaped as "\|". */
enum rb_table_style {
	RB_TABLE_TEXT = 0,
	RB_TABLE_MARKDOWN,
};

/* Prints the titles, then n_rows rows of n_cols cells (row-major: cells[r * n_cols + c]),
 * each column as wide as its widest cell, columns two spaces apart, no trailing blanks
 * (empty cells at the end of a row are left out). */
void rb_table_print(FILE *out, const struct rb_table_column *cols, size_t n_cols,
		    const char *const *cells, size_t n_rows);

/* The same for cells stored as fixed-size strings, row-major: cell (r, c) starts at
 * cells + (r * n_cols + c) * cell_size (a char rows[n][N_COLS][CELL] array). */
void rb_table_print_cells(FILE *out, const struct rb_table_column *cols, size_t n_cols,
			  const char *cells, size_t cell_size, size_t n_rows);

/* The same two in a style. */
void rb_table_print_style(FILE *out, enum rb_table_style style, const struct rb_table_column *cols,
			  size_t n_cols, const char *const *cells, size_t n_rows);
void rb_table_print_cells_style(FILE *out, enum rb_table_style style,
				const struct rb_table_column *cols, size_t n_cols,
				const char *cells, size_t cell_size, size_t n_rows);

#endif
