/* The Markdown report (report.h): the console table as a Markdown table, for a README,
 * an issue or a pull request, as llama-bench prints with -o md. */
#include "results/report_format.h"

int rb_report_write_md(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
		       size_t n)
{
	return rb_report_write_styled(out, RB_TABLE_MARKDOWN, ctx, results, n);
}
