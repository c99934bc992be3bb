/* The one console table printer (table.h). */
#include "core/table.h"

#include <stdlib.h>

int rb_display_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void print_line(FILE *out, const struct rb_table_column *cols, size_t n_cols,
		       const char *const *cells, const int *width)
{
	size_t last = n_cols - 1;

	while (last > 0 && !cells[last][0])
		last--;
	for (size_t c = 0; c <= last; c++) {
		int pad = width[c] - rb_display_width(cells[c]);

		if (cols[c].right)
			fprintf(out, "%*s%s", pad, "", cells[c]);
		else if (c == last)
			fputs(cells[c], out);
		else
			fprintf(out, "%s%*s", cells[c], pad, "");
		fputs(c == last ? "\n" : "  ", out);
	}
}

void rb_table_print(FILE *out, const struct rb_table_column *cols, size_t n_cols,
		    const char *const *cells, size_t n_rows)
{
	const char *titles[32];
	int width[32];

	if (n_cols == 0 || n_cols > 32)
		return;
	for (size_t c = 0; c < n_cols; c++) {
		titles[c] = cols[c].title;
		width[c] = rb_display_width(cols[c].title);
		for (size_t r = 0; r < n_rows; r++) {
			int w = rb_display_width(cells[r * n_cols + c]);

			width[c] = w > width[c] ? w : width[c];
		}
	}
	print_line(out, cols, n_cols, titles, width);
	for (size_t r = 0; r < n_rows; r++)
		print_line(out, cols, n_cols, cells + r * n_cols, width);
}

void rb_table_print_cells(FILE *out, const struct rb_table_column *cols, size_t n_cols,
			  const char *cells, size_t cell_size, size_t n_rows)
{
	const char **ptrs = calloc(n_rows ? n_rows * n_cols : 1, sizeof(*ptrs));

	if (!ptrs)
		return;
	for (size_t i = 0; i < n_rows * n_cols; i++)
		ptrs[i] = cells + i * cell_size;
	rb_table_print(out, cols, n_cols, ptrs, n_rows);
	free(ptrs);
}
