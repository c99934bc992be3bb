/* The one console table printer (table.h). */
#include "core/table.h"

#include <stdlib.h>

#include "core/text.h"

#define MAX_COLS 32

/* Width of a cell as drawn: a Markdown cell gains a backslash before each '|'. */
static int cell_width(const char *s, enum rb_table_style style)
{
	int w = rb_display_width(s);

	for (; style == RB_TABLE_MARKDOWN && *s; s++)
		w += *s == '|';
	return w;
}

static void print_text_line(FILE *out, const struct rb_table_column *cols, size_t n_cols,
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

static void put_escaped(FILE *out, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', out);
		fputc(*s, out);
	}
}

/* "| a   |    1 |": every cell padded to its column, numbers on the right. */
static void print_md_line(FILE *out, const struct rb_table_column *cols, size_t n_cols,
			  const char *const *cells, const int *width)
{
	for (size_t c = 0; c < n_cols; c++) {
		int pad = width[c] - cell_width(cells[c], RB_TABLE_MARKDOWN);

		fputs("| ", out);
		if (cols[c].right)
			fprintf(out, "%*s", pad, "");
		put_escaped(out, cells[c]);
		if (!cols[c].right)
			fprintf(out, "%*s", pad, "");
		fputc(' ', out);
	}
	fputs("|\n", out);
}

/* "| --- | ---: |": the alignment row under the titles. */
static void print_md_rule(FILE *out, const struct rb_table_column *cols, size_t n_cols,
			  const int *width)
{
	for (size_t c = 0; c < n_cols; c++) {
		int dashes = width[c] > 3 ? width[c] : 3;

		fputs("| ", out);
		for (int i = 0; i < dashes - (cols[c].right ? 1 : 0); i++)
			fputc('-', out);
		fputs(cols[c].right ? ": " : " ", out);
	}
	fputs("|\n", out);
}

void rb_table_print_style(FILE *out, enum rb_table_style style, const struct rb_table_column *cols,
			  size_t n_cols, const char *const *cells, size_t n_rows)
{
	const char *titles[MAX_COLS];
	int width[MAX_COLS];
	void (*line)(FILE *, const struct rb_table_column *, size_t, const char *const *,
		     const int *) = style == RB_TABLE_MARKDOWN ? print_md_line : print_text_line;

	if (n_cols == 0 || n_cols > MAX_COLS)
		return;
	for (size_t c = 0; c < n_cols; c++) {
		titles[c] = cols[c].title;
		width[c] = cell_width(cols[c].title, style);
		if (style == RB_TABLE_MARKDOWN && width[c] < 3)
			width[c] = 3; /* the rule needs three dashes */
		for (size_t r = 0; r < n_rows; r++) {
			int w = cell_width(cells[r * n_cols + c], style);

			width[c] = w > width[c] ? w : width[c];
		}
	}
	line(out, cols, n_cols, titles, width);
	if (style == RB_TABLE_MARKDOWN)
		print_md_rule(out, cols, n_cols, width);
	for (size_t r = 0; r < n_rows; r++)
		line(out, cols, n_cols, cells + r * n_cols, width);
}

void rb_table_print(FILE *out, const struct rb_table_column *cols, size_t n_cols,
		    const char *const *cells, size_t n_rows)
{
	rb_table_print_style(out, RB_TABLE_TEXT, cols, n_cols, cells, n_rows);
}

void rb_table_print_cells_style(FILE *out, enum rb_table_style style,
				const struct rb_table_column *cols, size_t n_cols,
				const char *cells, size_t cell_size, size_t n_rows)
{
	const char **ptrs = calloc(n_rows ? n_rows * n_cols : 1, sizeof(*ptrs));

	if (!ptrs)
		return;
	for (size_t i = 0; i < n_rows * n_cols; i++)
		ptrs[i] = cells + i * cell_size;
	rb_table_print_style(out, style, cols, n_cols, ptrs, n_rows);
	free(ptrs);
}

void rb_table_print_cells(FILE *out, const struct rb_table_column *cols, size_t n_cols,
			  const char *cells, size_t cell_size, size_t n_rows)
{
	rb_table_print_cells_style(out, RB_TABLE_TEXT, cols, n_cols, cells, cell_size, n_rows);
}
