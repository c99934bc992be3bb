/* The CSV report (report.h): one row per result, RFC 4180 quoting. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/util.h"
#include "results/report_format.h"

/* ---- CSV --------------------------------------------------------------------- */

struct csv {
	FILE *out;
	int col; /* fields written on this line */
};

static void csv_sep(struct csv *w)
{
	if (w->col++)
		fputc(',', w->out);
}

static bool csv_needs_quotes(const char *s)
{
	return s[strcspn(s, ",\"\r\n")] != '\0';
}

static void csv_put(FILE *out, const char *s, bool quoted)
{
	for (; *s; s++) {
		if (quoted && *s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
}

static void csv_text(struct csv *w, const char *s)
{
	bool q = csv_needs_quotes(s);

	csv_sep(w);
	if (q)
		fputc('"', w->out);
	csv_put(w->out, s, q);
	if (q)
		fputc('"', w->out);
}

/* Names joined with ';' as one field, quoted as a whole when any name needs it. */
static void csv_names(struct csv *w, char *const *names, size_t n)
{
	bool q = false;
	size_t i;

	for (i = 0; i < n; i++)
		q = q || csv_needs_quotes(names[i]);
	csv_sep(w);
	if (q)
		fputc('"', w->out);
	for (i = 0; i < n; i++) {
		if (i)
			fputc(';', w->out);
		csv_put(w->out, names[i], q);
	}
	if (q)
		fputc('"', w->out);
}

/* The shortest of %.15g and %.17g that reads back as the same double. */
static void fmt_exact(char *buf, size_t size, double v)
{
	snprintf(buf, size, "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, size, "%.17g", v);
}

static void csv_num(struct csv *w, double v)
{
	char buf[40];

	csv_sep(w);
	if (!isfinite(v))
		return; /* undefined: empty field */
	fmt_exact(buf, sizeof(buf), v);
	fputs(buf, w->out);
}

static void csv_int(struct csv *w, int64_t v)
{
	csv_sep(w);
	fprintf(w->out, "%" PRId64, v);
}

static const char *const csv_header[] = {
    "names",   "m",          "k",       "n",       "dtype",       "device",
    "modeled", "median_us",  "min_us",  "mean_us", "stddev_us",   "cv",
    "mad_us",  "p90_us",     "max_us",  "samples", "outliers",    "setup_us",
    "gflops",  "gbps",       "gbps_b",  "verify",  "verify_mode", "max_abs",
    "max_rel", "mismatches", "checked", "config",  "reproducer",  "phase",
};

static void csv_stats(struct csv *w, const struct rb_stats *s)
{
	csv_num(w, s->median_us);
	csv_num(w, s->min_us);
	csv_num(w, s->mean_us);
	csv_num(w, s->stddev_us);
	csv_num(w, s->cv);
	csv_num(w, s->mad_us);
	csv_num(w, s->p90_us);
	csv_num(w, s->max_us);
	csv_int(w, (int64_t)s->n);
	csv_int(w, (int64_t)s->outliers);
}

static int csv_row(struct csv *w, const struct rb_result *r)
{
	char *config = r->config ? cJSON_PrintUnformatted(r->config) : NULL;

	if (r->config && !config)
		return rb_set_error(-ENOMEM, "out of memory printing a device configuration");
	w->col = 0;
	csv_names(w, r->names, r->names ? r->n_names : 0);
	csv_int(w, r->shape.m);
	csv_int(w, r->shape.k);
	csv_int(w, r->shape.n);
	csv_text(w, rb_dtype_name(r->shape.dtype));
	csv_text(w, r->device ? r->device : "");
	csv_text(w, r->modeled ? "true" : "false");
	csv_stats(w, &r->stats);
	csv_num(w, r->setup_us);
	csv_num(w, rb_result_gflops(r));
	csv_num(w, rb_result_gbps(r));
	csv_num(w, rb_result_gbps_b(r));
	csv_text(w, rb_verify_status_name(r->verify.status));
	csv_text(w, rb_verify_mode_name(r->verify.mode));
	csv_num(w, r->verify.max_abs);
	csv_num(w, r->verify.max_rel);
	csv_int(w, r->verify.mismatches);
	csv_int(w, r->verify.checked);
	csv_text(w, config ? config : "");
	csv_text(w, r->reproducer);
	csv_text(w, r->phase ? r->phase : "");
	fputc('\n', w->out);
	free(config);
	return 0;
}

int rb_report_write_csv(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
			size_t n)
{
	(void)ctx; /* CSV rows carry no context */
	struct csv w = {out, 0};
	size_t i;
	int err = 0;

	for (i = 0; i < ARRAY_SIZE(csv_header); i++)
		csv_text(&w, csv_header[i]);
	fputc('\n', out);
	for (i = 0; i < n && !err; i++)
		err = csv_row(&w, &results[i]);
	return err;
}
