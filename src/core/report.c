#include "core/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "core/json.h"
#include "core/version.h"

#ifndef RB_VERSION
#define RB_VERSION "0.1.0"
#endif

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#define MODELED_NOTE "modeled: times come from the emulator's timing model, not a clock"

/* ---- context ----------------------------------------------------------------- */

/* Arm's "CPU part" numbers (implementer 0x41) of cores found in SoCs we may meet. */
static const struct {
	unsigned part;
	const char *name;
} arm_parts[] = {
    {0xd03, "Cortex-A53"},  {0xd04, "Cortex-A35"},  {0xd05, "Cortex-A55"},  {0xd07, "Cortex-A57"},
    {0xd08, "Cortex-A72"},  {0xd09, "Cortex-A73"},  {0xd0a, "Cortex-A75"},  {0xd0b, "Cortex-A76"},
    {0xd0c, "Neoverse-N1"}, {0xd0d, "Cortex-A77"},  {0xd41, "Cortex-A78"},  {0xd44, "Cortex-X1"},
    {0xd46, "Cortex-A510"}, {0xd47, "Cortex-A710"}, {0xd48, "Cortex-X2"},   {0xd4d, "Cortex-A715"},
    {0xd4e, "Cortex-X3"},   {0xd80, "Cortex-A520"}, {0xd81, "Cortex-A720"}, {0xd82, "Cortex-X4"},
};

#define MAX_PARTS 8

struct cpuinfo {
	char model[128];
	unsigned parts[MAX_PARTS]; /* implementer << 16 | part, distinct */
	int n_parts;
};

/* Copies as much of src as fits, NUL-terminated: these fields are truncated on purpose. */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t len = strnlen(src, size - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

/* The value of a "key<blanks>: value" line of /proc/cpuinfo, or NULL. */
static const char *field_value(const char *line, const char *key)
{
	size_t len = strlen(key);

	if (strncmp(line, key, len) != 0)
		return NULL;
	line += len;
	line += strspn(line, " \t");
	if (*line != ':')
		return NULL;
	line++;
	return line + strspn(line, " \t");
}

static void copy_trimmed(char *dst, size_t size, const char *src)
{
	size_t len = strcspn(src, "\r\n");

	while (len > 0 && (src[len - 1] == ' ' || src[len - 1] == '\t'))
		len--;
	snprintf(dst, size, "%.*s", (int)len, src);
}

static void add_part(struct cpuinfo *ci, unsigned id)
{
	int i;

	for (i = 0; i < ci->n_parts; i++)
		if (ci->parts[i] == id)
			return;
	if (ci->n_parts < MAX_PARTS)
		ci->parts[ci->n_parts++] = id;
}

static void parse_cpuinfo_line(struct cpuinfo *ci, const char *line, unsigned *impl)
{
	const char *v;

	if (!ci->model[0] && (v = field_value(line, "model name")))
		copy_trimmed(ci->model, sizeof(ci->model), v);
	else if ((v = field_value(line, "CPU implementer")))
		*impl = (unsigned)strtoul(v, NULL, 0);
	else if ((v = field_value(line, "CPU part")))
		add_part(ci, *impl << 16 | ((unsigned)strtoul(v, NULL, 0) & 0xffff));
}

static void read_cpuinfo(const char *path, struct cpuinfo *ci)
{
	char *line = NULL;
	size_t cap = 0;
	unsigned impl = 0;
	FILE *f;

	memset(ci, 0, sizeof(*ci));
	f = path ? fopen(path, "r") : NULL;
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0)
		parse_cpuinfo_line(ci, line, &impl);
	free(line);
	fclose(f);
}

/* The last string of a device-tree "compatible" list (NUL-separated, most specific
 * first), which names the SoC: "radxa,rock-5b\0rockchip,rk3588\0" -> rockchip,rk3588. */
static void read_dt_soc(const char *path, char *buf, size_t size)
{
	char data[512];
	size_t len, i, last = 0;
	FILE *f;

	buf[0] = '\0';
	f = path ? fopen(path, "rb") : NULL;
	if (!f)
		return;
	len = fread(data, 1, sizeof(data) - 1, f);
	fclose(f);
	data[len] = '\0';
	for (i = 0; i + 1 < len; i++)
		if (data[i] == '\0' && data[i + 1] != '\0')
			last = i + 1;
	copy_str(buf, size, data + last);
}

static void part_name(char *buf, size_t size, unsigned id)
{
	size_t i;

	if (id >> 16 == 0x41)
		for (i = 0; i < ARRAY_SIZE(arm_parts); i++)
			if (arm_parts[i].part == (id & 0xffff)) {
				snprintf(buf, size, "%s", arm_parts[i].name);
				return;
			}
	snprintf(buf, size, "0x%02x/0x%03x", id >> 16, id & 0xffff);
}

/* "Cortex-A55 + Cortex-A76" */
static void parts_text(const struct cpuinfo *ci, char *buf, size_t size)
{
	char name[32];
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < ci->n_parts && len < size; i++) {
		part_name(name, sizeof(name), ci->parts[i]);
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? " + " : "", name);
	}
}

void rb_cpu_model_read(char *buf, size_t size, const char *cpuinfo_path,
		       const char *dt_compatible_path)
{
	struct cpuinfo ci;
	char soc[128], parts[128];

	read_cpuinfo(cpuinfo_path, &ci);
	if (ci.model[0]) {
		copy_str(buf, size, ci.model);
		return;
	}
	read_dt_soc(dt_compatible_path, soc, sizeof(soc));
	parts_text(&ci, parts, sizeof(parts));
	if (soc[0] && parts[0])
		snprintf(buf, size, "%s (%s)", soc, parts);
	else if (soc[0] || parts[0])
		snprintf(buf, size, "%s", soc[0] ? soc : parts);
	else
		snprintf(buf, size, "unknown");
}

void rb_context_collect(struct rb_context *ctx)
{
	struct utsname u;
	struct tm tm;
	time_t now = time(NULL);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	memset(ctx, 0, sizeof(*ctx));
	copy_str(ctx->tool_version, sizeof(ctx->tool_version), RB_VERSION);
	if (gethostname(ctx->host, sizeof(ctx->host) - 1) != 0 || !ctx->host[0])
		snprintf(ctx->host, sizeof(ctx->host), "unknown");
	rb_cpu_model_read(ctx->cpu, sizeof(ctx->cpu), "/proc/cpuinfo",
			  "/proc/device-tree/compatible");
	if (uname(&u) == 0)
		snprintf(ctx->kernel, sizeof(ctx->kernel), "%.32s %.90s %.32s", u.sysname,
			 u.release, u.machine);
	else
		snprintf(ctx->kernel, sizeof(ctx->kernel), "unknown");
	if (!gmtime_r(&now, &tm) ||
	    !strftime(ctx->date, sizeof(ctx->date), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(ctx->date, sizeof(ctx->date), "unknown");
	ctx->cpu_count = cpus > 0 ? (int)cpus : 0;
}

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

static const char *const format_names[] = {
    [RB_FORMAT_TABLE] = "table",
    [RB_FORMAT_CSV] = "csv",
    [RB_FORMAT_JSON] = "json",
};

int rb_format_parse(const char *text, enum rb_format *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(format_names); i++) {
		if (strcmp(text, format_names[i]) == 0) {
			*out = (enum rb_format)i;
			return 0;
		}
	}
	return rb_set_error(-EINVAL, "unknown format '%s'; use table, csv or json", text);
}

const char *rb_format_name(enum rb_format format)
{
	if ((unsigned)format >= ARRAY_SIZE(format_names))
		return "unknown";
	return format_names[format];
}

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

static const struct {
	const char *title;
	bool right; /* numbers are right-aligned */
} columns[N_COLS] = {
    [COL_NAME] = {"name", false},       [COL_SHAPE] = {"shape", false},
    [COL_DTYPE] = {"dtype", false},     [COL_DEVICE] = {"device", false},
    [COL_MEDIAN] = {"median µs", true}, [COL_MAD] = {"±MAD µs", true},
    [COL_GFLOPS] = {"GFLOP/s", true},   [COL_GBPS] = {"GB/s", true},
    [COL_GBPS_B] = {"B GB/s", true},    [COL_PEAK] = {"roofline", false},
    [COL_VERIFY] = {"verify", false},
};

#define CELL_SIZE 96
typedef char row_cells[N_COLS][CELL_SIZE];

/* Terminal columns of a UTF-8 string: one per code point (no wide characters here). */
int rb_display_width(const char *s)
{
	int w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

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

static void fmt_shape(char *buf, size_t size, const struct rb_shape *s)
{
	snprintf(buf, size, "%" PRId64 "x%" PRId64 "x%" PRId64, s->m, s->k, s->n);
}

/* The row's name: first name, "+N" when the shape has N more; the shape if unnamed. */
static void fmt_name(char *buf, size_t size, const struct rb_result *r)
{
	if (r->n_names == 0 || !r->names)
		fmt_shape(buf, size, &r->shape);
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
	fmt_name(cells[COL_NAME], CELL_SIZE, r);
	fmt_shape(cells[COL_SHAPE], CELL_SIZE, &r->shape);
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

/* One line, columns two spaces apart, no trailing blanks. */
static void print_cells(FILE *out, const char *const cells[N_COLS], const int width[N_COLS])
{
	int c, pad;

	for (c = 0; c < N_COLS; c++) {
		pad = width[c] - rb_display_width(cells[c]);
		if (columns[c].right)
			fprintf(out, "%*s%s", pad, "", cells[c]);
		else if (c == N_COLS - 1)
			fputs(cells[c], out);
		else
			fprintf(out, "%s%*s", cells[c], pad, "");
		fputs(c == N_COLS - 1 ? "\n" : "  ", out);
	}
}

static void print_grid(FILE *out, row_cells *rows, size_t n)
{
	const char *cells[N_COLS];
	int width[N_COLS], c, w;
	size_t i;

	for (c = 0; c < N_COLS; c++) {
		width[c] = rb_display_width(columns[c].title);
		for (i = 0; i < n; i++) {
			w = rb_display_width(rows[i][c]);
			width[c] = w > width[c] ? w : width[c];
		}
		cells[c] = columns[c].title;
	}
	print_cells(out, cells, width);
	for (i = 0; i < n; i++) {
		for (c = 0; c < N_COLS; c++)
			cells[c] = rows[i][c];
		print_cells(out, cells, width);
	}
}

static void print_failure(FILE *out, const struct rb_result *r)
{
	const struct rb_verify_result *v = &r->verify;
	char name[CELL_SIZE], shape[64];
	int i;

	fmt_name(name, sizeof(name), r);
	fmt_shape(shape, sizeof(shape), &r->shape);
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
		fmt_name(name, sizeof(name), &results[i]);
		snprintf(label, sizeof(label), "'%s' on %s", name, results[i].device);
		rb_perf_print(out, label, results[i].perf);
		last = results[i].perf;
	}
	if (last)
		rb_perf_print_unavailable(out, last);
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
		fmt_name(name, sizeof(name), r);
		if (r->stats.outliers)
			fprintf(out,
				"outliers: '%s': %zu of %zu samples (modified z-score > 3.5)\n",
				name, r->stats.outliers, r->stats.n);
		modeled |= r->modeled;
	}
	if (modeled)
		fprintf(out, "\n" MODELED_NOTE "\n");
	print_perf(out, results, n);
}

static int write_table(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
		       size_t n)
{
	row_cells *rows = calloc(n ? n : 1, sizeof(*rows));
	size_t i;

	if (!rows)
		return rb_set_error(-ENOMEM, "out of memory for a table of %zu rows", n);
	if (ctx)
		fprintf(out, "rknn-bench %s on %s: %s, %d CPUs, %s, %s\n\n", ctx->tool_version,
			ctx->host, ctx->cpu, ctx->cpu_count, ctx->kernel, ctx->date);
	for (i = 0; i < n; i++)
		fill_row(rows[i], &results[i]);
	print_grid(out, rows, n);
	print_notes(out, results, n);
	free(rows);
	return 0;
}

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

static int write_csv(FILE *out, const struct rb_result *results, size_t n)
{
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

/* ---- JSON -------------------------------------------------------------------- */

/* Adds a number, or null when it is undefined (NaN, inf). */
static bool add_num(cJSON *o, const char *key, double v)
{
	if (!isfinite(v))
		return cJSON_AddNullToObject(o, key) != NULL;
	return cJSON_AddNumberToObject(o, key, v) != NULL;
}

static bool push_num(cJSON *array, double v)
{
	cJSON *item = isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull();

	if (item && cJSON_AddItemToArray(array, item))
		return true;
	cJSON_Delete(item);
	return false;
}

static bool add_str(cJSON *o, const char *key, const char *s)
{
	return cJSON_AddStringToObject(o, key, s ? s : "") != NULL;
}

static bool json_context(cJSON *doc, const struct rb_context *ctx)
{
	cJSON *o = cJSON_AddObjectToObject(doc, "context");

	if (!o)
		return false;
	if (!ctx)
		return true;
	if (ctx->settings &&
	    !cJSON_AddItemToObject(o, "host_settings", cJSON_Duplicate(ctx->settings, true)))
		return false;
	return add_str(o, "tool_version", ctx->tool_version) && add_str(o, "host", ctx->host) &&
	       add_str(o, "cpu", ctx->cpu) && add_str(o, "kernel", ctx->kernel) &&
	       add_str(o, "date", ctx->date) && add_num(o, "cpu_count", ctx->cpu_count) &&
	       cJSON_AddBoolToObject(o, "unsafe_skip_validation", ctx->unsafe_skip_validation);
}

static bool json_shape(cJSON *res, const struct rb_result *r)
{
	cJSON *o = cJSON_AddObjectToObject(res, "shape");
	cJSON *names = cJSON_AddArrayToObject(res, "names");
	cJSON *s;
	size_t i;

	if (!o || !names || !add_num(o, "m", (double)r->shape.m) ||
	    !add_num(o, "k", (double)r->shape.k) || !add_num(o, "n", (double)r->shape.n) ||
	    !add_str(o, "dtype", rb_dtype_name(r->shape.dtype)))
		return false;
	for (i = 0; r->names && i < r->n_names; i++) {
		s = cJSON_CreateString(r->names[i]);
		if (!s || !cJSON_AddItemToArray(names, s)) {
			cJSON_Delete(s);
			return false;
		}
	}
	return true;
}

/* "roofline": null on devices without a hardware profile (the CPU). */
static bool json_roofline(cJSON *res, const struct rb_result *r)
{
	struct rb_roofline rl;
	cJSON *o;

	if (!rb_result_roofline(r, &rl))
		return cJSON_AddNullToObject(res, "roofline") != NULL;
	o = cJSON_AddObjectToObject(res, "roofline");
	return o && add_num(o, "intensity_flop_per_byte", rl.intensity) &&
	       add_num(o, "peak_gflops", rl.peak_gflops) && add_num(o, "ddr_gbps", rl.ddr_gbps) &&
	       add_num(o, "attainable_gflops", rl.attainable_gflops) &&
	       add_str(o, "bound", rl.memory_bound ? "memory" : "compute") &&
	       add_num(o, "peak_pct", rl.peak_pct) && add_num(o, "ddr_pct", rl.ddr_pct);
}

static bool json_stats(cJSON *res, const struct rb_stats *s, int batch)
{
	cJSON *o = cJSON_AddObjectToObject(res, "stats");
	cJSON *samples;
	size_t i;

	if (!o || !add_num(o, "median_us", s->median_us) || !add_num(o, "min_us", s->min_us) ||
	    !add_num(o, "mean_us", s->mean_us) || !add_num(o, "stddev_us", s->stddev_us) ||
	    !add_num(o, "cv", s->cv) || !add_num(o, "mad_us", s->mad_us) ||
	    !add_num(o, "p90_us", s->p90_us))
		return false;
	samples = cJSON_AddArrayToObject(o, "samples_us");
	if (!samples)
		return false;
	for (i = 0; s->samples_us && i < s->n; i++)
		if (!push_num(samples, s->samples_us[i]))
			return false;
	return add_num(o, "outliers", (double)s->outliers) &&
	       add_num(o, "batch", batch > 0 ? batch : 1);
}

static bool json_mismatch(cJSON *array, const struct rb_mismatch *mm)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToArray(array, o)) {
		cJSON_Delete(o);
		return false;
	}
	return add_num(o, "i", (double)mm->i) && add_num(o, "j", (double)mm->j) &&
	       add_num(o, "expected", mm->expected) && add_num(o, "got", mm->got);
}

static bool json_verify(cJSON *res, const struct rb_verify_result *v)
{
	cJSON *o = cJSON_AddObjectToObject(res, "verify");
	cJSON *first;
	int i;

	if (!o || !add_str(o, "status", rb_verify_status_name(v->status)) ||
	    !add_str(o, "mode", rb_verify_mode_name(v->mode)) ||
	    !add_num(o, "max_abs", v->max_abs) || !add_num(o, "max_rel", v->max_rel) ||
	    !add_num(o, "mismatches", (double)v->mismatches) ||
	    !add_num(o, "checked", (double)v->checked))
		return false;
	first = cJSON_AddArrayToObject(o, "first_mismatches");
	if (!first)
		return false;
	for (i = 0; i < v->n_reported && i < RB_VERIFY_MAX_REPORTED; i++)
		if (!json_mismatch(first, &v->first[i]))
			return false;
	return true;
}

static bool json_config(cJSON *res, const cJSON *config)
{
	cJSON *copy = config ? cJSON_Duplicate(config, true) : cJSON_CreateObject();

	if (copy && cJSON_AddItemToObject(res, "config", copy))
		return true;
	cJSON_Delete(copy);
	return false;
}

static bool json_perf(cJSON *res, const struct rb_perf *perf)
{
	cJSON *o = perf ? rb_perf_json(perf) : NULL;

	if (!perf)
		return true;
	if (o && cJSON_AddItemToObject(res, "perf", o))
		return true;
	cJSON_Delete(o);
	return false;
}

static bool json_result(cJSON *results, const struct rb_result *r)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddItemToArray(results, o)) {
		cJSON_Delete(o);
		return false;
	}
	return json_shape(o, r) && add_str(o, "device", r->device) &&
	       cJSON_AddBoolToObject(o, "modeled", r->modeled) && json_config(o, r->config) &&
	       json_stats(o, &r->stats, r->batch) && add_num(o, "setup_us", r->setup_us) &&
	       add_num(o, "gflops", rb_result_gflops(r)) && add_num(o, "gbps", rb_result_gbps(r)) &&
	       add_num(o, "gbps_b", rb_result_gbps_b(r)) && json_roofline(o, r) &&
	       json_verify(o, &r->verify) && add_str(o, "reproducer", r->reproducer) &&
	       (!r->phase || add_str(o, "phase", r->phase)) && json_perf(o, r->perf);
}

cJSON *rb_report_json(const struct rb_context *ctx, const struct rb_result *results, size_t n)
{
	cJSON *doc = cJSON_CreateObject();
	cJSON *array;
	size_t i;

	if (!doc || !add_str(doc, "schema", RB_SCHEMA) || !json_context(doc, ctx))
		goto err_delete;
	array = cJSON_AddArrayToObject(doc, "results");
	if (!array)
		goto err_delete;
	for (i = 0; i < n; i++)
		if (!json_result(array, &results[i]))
			goto err_delete;
	return doc;

err_delete:
	cJSON_Delete(doc);
	return NULL;
}

static int write_json(FILE *out, const struct rb_context *ctx, const struct rb_result *results,
		      size_t n)
{
	cJSON *doc = rb_report_json(ctx, results, n);
	int ret = doc ? rb_json_write(out, doc) : -ENOMEM;

	cJSON_Delete(doc);
	if (ret == -ENOMEM)
		return rb_set_error(ret, "out of memory building the JSON report");
	return ret < 0 ? rb_set_error(ret, "cannot write the JSON report") : 0;
}

int rb_report_write(FILE *out, enum rb_format format, const struct rb_context *ctx,
		    const struct rb_result *results, size_t n)
{
	int err;

	switch (format) {
	case RB_FORMAT_TABLE:
		err = write_table(out, ctx, results, n);
		break;
	case RB_FORMAT_CSV:
		err = write_csv(out, results, n);
		break;
	case RB_FORMAT_JSON:
		err = write_json(out, ctx, results, n);
		break;
	default:
		return rb_set_error(-EINVAL, "unknown report format %d", (int)format);
	}
	if (err)
		return err;
	errno = 0; /* so that only fflush's own failure is named */
	if (fflush(out) != 0 || ferror(out))
		return rb_set_error(-EIO, "cannot write the report: %s",
				    errno ? strerror(errno) : "write error");
	return 0;
}
