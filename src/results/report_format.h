/* The writers of the report formats, one file each (report.c dispatches), and what
 * they share. Internal to src/core/. */
#ifndef RB_RESULTS_REPORT_FORMAT_H
#define RB_RESULTS_REPORT_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "results/report.h"
#include "core/table.h"

typedef int (*rb_report_writer)(FILE *out, const struct rb_context *ctx,
				const struct rb_result *results, size_t n);

int rb_report_write_table(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
			  size_t n);
int rb_report_write_csv(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
			size_t n);
int rb_report_write_md(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
		       size_t n);
/* The table and its notes in a style (report_table.c): table and md share it. */
int rb_report_write_styled(FILE *out, enum rb_table_style style, const struct rb_context *ctx,
			   const struct rb_result *results, size_t n);
int rb_report_write_json(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
			 size_t n);

/* "MxKxN" of a shape; the row name (first name, "+N" for more; the shape if unnamed). */
void rb_report_fmt_shape(char *buf, size_t size, const struct rb_shape *s);
void rb_report_fmt_name(char *buf, size_t size, const struct rb_result *r);

#endif
