/* Results and their metrics (report.h), and rb_report_write, which hands a report to
 * the writer of its format: one file per format (report_table.c, report_csv.c,
 * report_json.c, report_md.c). A new format is one more file and one more row of `writers`. */
#include "results/report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "results/report_format.h"
#include "results/totals.h"

/* ---- results ----------------------------------------------------------------- */

/* Per microsecond, scaled to 10^9 per second: x / (us · 1e-6) / 1e9. */
static double per_us_giga(double x, double median_us)
{
	if (!(median_us > 0) || !isfinite(median_us))
		return NAN;
	return x / (median_us * 1e3);
}

/* The time of one whole matmul: none when one phase was timed alone (run --phase). */
static double matmul_us(const struct rb_result *r)
{
	return r->phase ? NAN : r->stats.median_us;
}

double rb_result_gflops(const struct rb_result *r)
{
	const struct rb_shape *s = &r->shape;

	return per_us_giga(2.0 * (double)s->m * (double)s->n * (double)s->k, matmul_us(r));
}

double rb_result_gbps(const struct rb_result *r)
{
	const struct rb_shape *s = &r->shape;
	double in = (double)rb_dtype_in_size(s->dtype), out = (double)rb_dtype_out_size(s->dtype);
	double bytes = ((double)s->m * (double)s->k + (double)s->k * (double)s->n) * in +
		       (double)s->m * (double)s->n * out;

	return per_us_giga(bytes, matmul_us(r));
}

double rb_result_gbps_b(const struct rb_result *r)
{
	const struct rb_shape *s = &r->shape;

	return per_us_giga((double)s->k * (double)s->n * (double)rb_dtype_in_size(s->dtype),
			   matmul_us(r));
}

static double config_number(const cJSON *config, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(config, key);

	return cJSON_IsNumber(it) ? it->valuedouble : NAN;
}

bool rb_result_roofline(const struct rb_result *r, struct rb_roofline *rl)
{
	const struct rb_shape *s = &r->shape;
	double bytes = (double)rb_dtype_in_size(s->dtype) *
			   ((double)s->m * (double)s->k + (double)s->k * (double)s->n) +
		       (double)rb_dtype_out_size(s->dtype) * (double)s->m * (double)s->n;

	rl->peak_gflops = config_number(r->config, "peak_gflops");
	rl->ddr_gbps = config_number(r->config, "ddr_gbps");
	if (!(rl->peak_gflops > 0) || !(rl->ddr_gbps > 0) || r->phase)
		return false;
	rl->intensity = 2.0 * (double)s->m * (double)s->n * (double)s->k / bytes;
	rl->attainable_gflops = fmin(rl->peak_gflops, rl->intensity * rl->ddr_gbps);
	rl->memory_bound = rl->intensity * rl->ddr_gbps < rl->peak_gflops;
	rl->peak_pct = 100.0 * rb_result_gflops(r) / rl->peak_gflops;
	rl->ddr_pct = 100.0 * rb_result_gbps(r) / rl->ddr_gbps;
	return true;
}

void rb_result_release(struct rb_result *r)
{
	cJSON_Delete(r->config);
	r->config = NULL;
	rb_stats_release(&r->stats);
	free(r->perf);
	r->perf = NULL;
}

/* One named pair per name of each result (a result without names: one unnamed pair). */
static size_t report_pairs(const struct rb_result *results, size_t n, struct rb_total_pair *out)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		size_t names = results[i].n_names ? results[i].n_names : 1;

		for (size_t j = 0; j < names; j++)
			out[count++] = (struct rb_total_pair){
			    .name = results[i].n_names ? results[i].names[j] : NULL,
			    .m = results[i].shape.m,
			    .us = results[i].stats.median_us};
	}
	return count;
}

size_t rb_report_totals(const struct rb_result *results, size_t n, struct rb_total *out)
{
	struct rb_total_pair *pairs;
	size_t n_pairs = 0, groups;

	for (size_t i = 0; i < n; i++) {
		if (results[i].phase) /* a phase alone is not a matmul's time */
			return 0;
		n_pairs += results[i].n_names ? results[i].n_names : 1;
	}
	pairs = calloc(n_pairs ? n_pairs : 1, sizeof(*pairs));
	if (!pairs)
		return 0;
	groups = rb_totals_sum_pairs(pairs, report_pairs(results, n, pairs), out, RB_TOTALS_MAX);
	free(pairs);
	return groups;
}

static const struct {
	const char *name;
	rb_report_writer write;
} writers[] = {
    [RB_FORMAT_TABLE] = {"table", rb_report_write_table},
    [RB_FORMAT_CSV] = {"csv", rb_report_write_csv},
    [RB_FORMAT_JSON] = {"json", rb_report_write_json},
    [RB_FORMAT_MD] = {"md", rb_report_write_md},
};

int rb_format_parse(const char *text, enum rb_format *out)
{
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (text && strcmp(text, writers[i].name) == 0) {
			*out = (enum rb_format)i;
			return 0;
		}
	return rb_set_error(-EINVAL, "unknown format '%s'; use table, csv, json or md", text);
}

bool rb_format_of_path(const char *path, enum rb_format *out)
{
	const char *dot = path ? strrchr(path, '.') : NULL;

	if (!dot || strchr(dot, '/'))
		return false;
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (i != RB_FORMAT_TABLE && strcmp(dot + 1, writers[i].name) == 0) {
			*out = (enum rb_format)i;
			return true;
		}
	return false;
}

const char *rb_format_name(enum rb_format format)
{
	return (unsigned)format < sizeof(writers) / sizeof(writers[0]) ? writers[format].name
								       : "unknown";
}

int rb_report_write(FILE *out, enum rb_format format, const struct rb_context *ctx,
		    const struct rb_result *results, size_t n)
{
	int err;

	if ((unsigned)format >= sizeof(writers) / sizeof(writers[0]))
		return rb_set_error(-EINVAL, "unknown report format %d", (int)format);
	err = writers[format].write(out, ctx, results, n);
	if (err)
		return err;
	errno = 0; /* so that only fflush's own failure is named */
	if (fflush(out) != 0 || ferror(out))
		return rb_set_error(-EIO, "%s", errno ? strerror(errno) : "write error");
	return 0;
}
