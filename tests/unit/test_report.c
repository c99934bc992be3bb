/* Unit tests of results/report: rates, the JSON document read back with cJSON (null for
 * undefined numbers), CSV quoting, the table and its footnotes, context collection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/report.h"
#include "core/table.h"
#include "results/totals.h"
#include "core/version.h"

static char *const decode_names[] = {"ffn_up-0", "ffn,gate \"x\""};
static char *const attn_names[] = {"attn_q"};

/* Two rows: a decode fp16 shape measured on "npu" whose verification failed (one got
 * is NaN), and an int8 shape on the emulator (modeled) with a single sample. */
struct fixture {
	struct rb_context ctx;
	struct rb_result r[2];
};

static void make_fixture(struct fixture *f)
{
	const double samples[] = {100, 110, 90, 100, 105}, one[] = {250};
	struct rb_verify_result *v;

	memset(f, 0, sizeof(*f));
	snprintf(f->ctx.tool_version, sizeof(f->ctx.tool_version), "9.9.9");
	snprintf(f->ctx.tool_commit, sizeof(f->ctx.tool_commit), "abc1234");
	snprintf(f->ctx.board, sizeof(f->ctx.board), "Radxa ROCK 5B");
	snprintf(f->ctx.host, sizeof(f->ctx.host), "rock5b");
	snprintf(f->ctx.cpu, sizeof(f->ctx.cpu), "rockchip,rk3588 (Cortex-A55 + Cortex-A76)");
	snprintf(f->ctx.kernel, sizeof(f->ctx.kernel), "Linux 6.1.75 aarch64");
	snprintf(f->ctx.date, sizeof(f->ctx.date), "2025-01-02T03:04:05Z");
	f->ctx.cpu_count = 8;

	f->r[0].shape = (struct rb_shape){1, 2048, 8192, RB_DTYPE_FP16};
	f->r[0].names = decode_names;
	f->r[0].n_names = 2;
	f->r[0].device = "npu";
	f->r[0].config = cJSON_Parse("{\"cores\":3,\"mode\":\"x,y\"}");
	assert_int_equal(rb_stats_compute(&f->r[0].stats, samples, 5), 0);
	f->r[0].setup_us = 1234.5;
	v = &f->r[0].verify;
	v->status = RB_VERIFY_FAILED;
	v->mode = RB_VERIFY_FULL;
	v->max_abs = INFINITY;
	v->max_rel = INFINITY;
	v->checked = 8192;
	v->mismatches = 2;
	v->n_reported = 2;
	v->first[0] = (struct rb_mismatch){0, 5, 1.25, 1.5};
	v->first[1] = (struct rb_mismatch){0, 77, -3, NAN};
	snprintf(f->r[0].reproducer, sizeof(f->r[0].reproducer),
		 "rknn-bench run --shape 1x2048x8192 --device npu");

	f->r[1].shape = (struct rb_shape){512, 4096, 4096, RB_DTYPE_INT8};
	f->r[1].names = attn_names;
	f->r[1].n_names = 1;
	f->r[1].device = "sim";
	f->r[1].modeled = true;
	assert_int_equal(rb_stats_compute(&f->r[1].stats, one, 1), 0);
	f->r[1].setup_us = NAN;
	f->r[1].verify = (struct rb_verify_result){
	    .status = RB_VERIFY_VERIFIED, .mode = RB_VERIFY_SAMPLE, .checked = 4096};
}

static void free_fixture(struct fixture *f)
{
	rb_result_release(&f->r[0]);
	rb_result_release(&f->r[1]);
	assert_null(f->r[0].config);
	assert_null(f->r[0].stats.samples_us);
}

/* Output of rb_report_write as a string (free it). */
static char *write_to_string(enum rb_format fmt, struct fixture *f, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_non_null(out);
	assert_int_equal(rb_report_write(out, fmt, &f->ctx, f->r, n), 0);
	fclose(out);
	if (getenv("RB_TEST_SHOW")) /* to look at the output: RB_TEST_SHOW=1 test_report */
		fprintf(stderr, "---- %d\n%s", (int)fmt, buf);
	return buf;
}

/* 1x2048x8192 fp16 at a median of 100 µs: 2·2048·8192 / 1e5 = 335.54432 GFLOP/s;
 * B is 2048·8192·2 = 33554432 bytes, A 4096, C 8192·4 = 32768. */
static void test_rates(void **state)
{
	struct fixture f;

	(void)state;
	make_fixture(&f);
	assert_near(f.r[0].stats.median_us, 100, 0);
	assert_near(rb_result_gflops(&f.r[0]), 335.54432, 1e-9);
	assert_near(rb_result_gbps_b(&f.r[0]), 335.54432, 1e-9);
	assert_near(rb_result_gbps(&f.r[0]), (33554432 + 4096 + 32768) / 1e5, 1e-9);
	f.r[0].stats.median_us = 0;
	assert_true(isnan(rb_result_gflops(&f.r[0])));
	free_fixture(&f);
}

static cJSON *item(const cJSON *o, const char *key)
{
	cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!it)
		print_error("missing JSON field '%s'\n", key);
	assert_non_null(it);
	return it;
}

static double num(const cJSON *o, const char *key)
{
	cJSON *it = item(o, key);

	assert_true(cJSON_IsNumber(it));
	return it->valuedouble;
}

static const char *str(const cJSON *o, const char *key)
{
	cJSON *it = item(o, key);

	assert_true(cJSON_IsString(it));
	return it->valuestring;
}

static void check_context(const cJSON *doc)
{
	const cJSON *ctx = item(doc, "context");

	assert_string_equal(str(doc, "schema"), "rknn-bench/1");
	assert_string_equal(str(ctx, "tool_version"), "9.9.9");
	assert_string_equal(str(ctx, "host"), "rock5b");
	assert_string_equal(str(ctx, "cpu"), "rockchip,rk3588 (Cortex-A55 + Cortex-A76)");
	assert_string_equal(str(ctx, "kernel"), "Linux 6.1.75 aarch64");
	assert_string_equal(str(ctx, "date"), "2025-01-02T03:04:05Z");
	assert_near(num(ctx, "cpu_count"), 8, 0);
}

static void check_first_result(const cJSON *r, const struct fixture *f)
{
	const cJSON *stats = item(r, "stats"), *v = item(r, "verify"), *mm;

	assert_near(num(item(r, "shape"), "m"), 1, 0);
	assert_near(num(item(r, "shape"), "k"), 2048, 0);
	assert_near(num(item(r, "shape"), "n"), 8192, 0);
	assert_string_equal(str(item(r, "shape"), "dtype"), "fp16");
	assert_int_equal(cJSON_GetArraySize(item(r, "names")), 2);
	assert_string_equal(cJSON_GetArrayItem(item(r, "names"), 1)->valuestring, "ffn,gate \"x\"");
	assert_string_equal(str(r, "device"), "npu");
	assert_true(cJSON_IsFalse(item(r, "modeled")));
	/* A copy, not the result's own object. */
	assert_true(item(r, "config") != f->r[0].config);
	assert_near(num(item(r, "config"), "cores"), 3, 0);
	assert_near(num(stats, "median_us"), 100, 0);
	assert_near(num(stats, "mean_us"), 101, 1e-12);
	assert_near(num(stats, "min_us"), 90, 0);
	assert_near(num(stats, "mad_us"), 5, 0);
	assert_int_equal(cJSON_GetArraySize(item(stats, "samples_us")), 5);
	assert_near(cJSON_GetArrayItem(item(stats, "samples_us"), 1)->valuedouble, 110, 0);
	assert_near(num(stats, "outliers"), 0, 0);
	assert_near(num(r, "setup_us"), 1234.5, 0);
	assert_near(num(r, "gflops"), 335.54432, 1e-9);
	assert_near(num(r, "gbps_b"), 335.54432, 1e-9);
	assert_string_equal(str(v, "status"), "failed");
	assert_string_equal(str(v, "mode"), "full");
	assert_true(cJSON_IsNull(item(v, "max_abs"))); /* inf is not JSON */
	assert_near(num(v, "mismatches"), 2, 0);
	assert_near(num(v, "checked"), 8192, 0);
	assert_int_equal(cJSON_GetArraySize(item(v, "first_mismatches")), 2);
	mm = cJSON_GetArrayItem(item(v, "first_mismatches"), 1);
	assert_near(num(mm, "i"), 0, 0);
	assert_near(num(mm, "j"), 77, 0);
	assert_near(num(mm, "expected"), -3, 0);
	assert_true(cJSON_IsNull(item(mm, "got")));
	assert_string_equal(str(r, "reproducer"),
			    "rknn-bench run --shape 1x2048x8192 --device npu");
}

static void check_second_result(const cJSON *r)
{
	const cJSON *stats = item(r, "stats");

	assert_string_equal(str(item(r, "shape"), "dtype"), "int8");
	assert_true(cJSON_IsTrue(item(r, "modeled")));
	assert_true(cJSON_IsObject(item(r, "config")));
	assert_null(item(r, "config")->child);
	assert_true(cJSON_IsNull(item(stats, "stddev_us")));
	assert_true(cJSON_IsNull(item(stats, "cv")));
	assert_near(num(stats, "p90_us"), 250, 0);
	assert_true(cJSON_IsNull(item(r, "setup_us")));
	assert_near(num(r, "gflops"), 2.0 * 512 * 4096 * 4096 / 250e3, 1e-6);
	assert_true(cJSON_IsNumber(item(r, "gbps_b")));
	assert_string_equal(str(item(r, "verify"), "status"), "verified");
	assert_int_equal(cJSON_GetArraySize(item(item(r, "verify"), "first_mismatches")), 0);
}

/* The written document parses back, and so does rb_report_json's tree. */
static void test_json(void **state)
{
	struct fixture f;
	char *text;
	cJSON *doc, *tree;

	(void)state;
	make_fixture(&f);
	text = write_to_string(RB_FORMAT_JSON, &f, 2);
	doc = cJSON_Parse(text);
	assert_non_null(doc);
	check_context(doc);
	assert_int_equal(cJSON_GetArraySize(item(doc, "results")), 2);
	check_first_result(cJSON_GetArrayItem(item(doc, "results"), 0), &f);
	check_second_result(cJSON_GetArrayItem(item(doc, "results"), 1));
	tree = rb_report_json(&f.ctx, f.r, 2);
	assert_true(cJSON_Compare(doc, tree, true));
	cJSON_Delete(tree);
	cJSON_Delete(doc);
	free(text);
	free_fixture(&f);
}

/* Splits one CSV record (RFC 4180) into fields; returns the count. */
static int csv_split(const char *line, char fields[][256], int max)
{
	int n = 0, len = 0;
	bool quoted = false;

	for (; *line && *line != '\n' && n < max; line++) {
		if (quoted && *line == '"' && line[1] == '"') {
			fields[n][len++] = *line++;
		} else if (*line == '"') {
			quoted = !quoted;
		} else if (*line == ',' && !quoted) {
			fields[n++][len] = '\0';
			len = 0;
		} else if (len < 255) {
			fields[n][len++] = *line;
		}
	}
	fields[n][len] = '\0';
	return n + 1;
}

static int column(char header[][256], int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(header[i], name) == 0)
			return i;
	fail_msg("no CSV column '%s'", name);
	return -1;
}

static void test_csv(void **state)
{
	static char header[64][256], row[64][256], row2[64][256];
	struct fixture f;
	char *text, *line2, *line3;
	int nh;

	(void)state;
	make_fixture(&f);
	text = write_to_string(RB_FORMAT_CSV, &f, 2);
	assert_non_null(strstr(text, "\"ffn_up-0;ffn,gate \"\"x\"\"\","));
	line2 = strchr(text, '\n') + 1;
	line3 = strchr(line2, '\n') + 1;
	assert_non_null(strchr(line3, '\n'));
	assert_string_equal(strchr(line3, '\n'), "\n"); /* exactly three records */
	nh = csv_split(text, header, 64);
	assert_int_equal(csv_split(line2, row, 64), nh);
	assert_int_equal(csv_split(line3, row2, 64), nh);
	assert_string_equal(header[0], "names");
	assert_string_equal(row[0], "ffn_up-0;ffn,gate \"x\"");
	assert_string_equal(row[column(header, nh, "k")], "2048");
	assert_string_equal(row[column(header, nh, "median_us")], "100");
	assert_string_equal(row[column(header, nh, "mean_us")], "101");
	assert_string_equal(row[column(header, nh, "gflops")], "335.54432");
	assert_string_equal(row[column(header, nh, "verify")], "failed");
	assert_string_equal(row[column(header, nh, "mismatches")], "2");
	assert_string_equal(row[column(header, nh, "config")], "{\"cores\":3,\"mode\":\"x,y\"}");
	assert_string_equal(row[column(header, nh, "max_abs")], "");
	assert_string_equal(row2[column(header, nh, "stddev_us")], "");
	assert_string_equal(row2[column(header, nh, "modeled")], "true");
	assert_string_equal(row2[column(header, nh, "dtype")], "int8");
	free(text);
	free_fixture(&f);
}

static void test_table(void **state)
{
	struct fixture f;
	char *text;

	(void)state;
	make_fixture(&f);
	text = write_to_string(RB_FORMAT_TABLE, &f, 2);
	assert_non_null(strstr(text, "ffn_up-0 +1"));
	assert_non_null(strstr(text, "1x2048x8192"));
	assert_non_null(strstr(text, "sim (modeled)"));
	assert_non_null(strstr(text, "B GB/s"));
	assert_non_null(strstr(text, "FAILED (full)"));
	assert_non_null(strstr(text, "verified (sample)"));
	assert_non_null(strstr(text, "  336  ")); /* GFLOP/s, 3 significant digits */
	assert_non_null(strstr(text, "  C[0,5] = 1.5, expected 1.25\n"));
	assert_non_null(strstr(text, "  C[0,77] = nan, expected -3\n"));
	assert_non_null(strstr(text, "modeled: times come from the emulator's timing model"));
	assert_null(strstr(text, " \n")); /* no trailing blanks */
	free(text);
	/* Without a modeled row there is no footnote. */
	text = write_to_string(RB_FORMAT_TABLE, &f, 1);
	assert_null(strstr(text, "modeled"));
	assert_null(strstr(text, "attn_q"));
	free(text);
	free_fixture(&f);
}

static void test_write_error(void **state)
{
	struct fixture f;
	FILE *full = fopen("/dev/full", "w");

	(void)state;
	if (!full)
		skip();
	make_fixture(&f);
	assert_int_equal(rb_report_write(full, RB_FORMAT_JSON, &f.ctx, f.r, 2), -EIO);
	assert_int_equal(rb_report_write(full, (enum rb_format)9, &f.ctx, f.r, 2), -EINVAL);
	fclose(full);
	free_fixture(&f);
}

static void test_format_parse(void **state)
{
	enum rb_format fmt;

	(void)state;
	assert_int_equal(rb_format_parse("table", &fmt), 0);
	assert_int_equal(fmt, RB_FORMAT_TABLE);
	assert_int_equal(rb_format_parse("csv", &fmt), 0);
	assert_int_equal(fmt, RB_FORMAT_CSV);
	assert_int_equal(rb_format_parse("json", &fmt), 0);
	assert_int_equal(fmt, RB_FORMAT_JSON);
	assert_int_equal(rb_format_parse("xml", &fmt), -EINVAL);
	assert_string_equal(rb_format_name(RB_FORMAT_CSV), "csv");
}

static char *temp_file(const char *data, size_t len)
{
	char *path = strdup("/tmp/rb-test-report-XXXXXX");
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	return path;
}

static void test_cpu_model(void **state)
{
	static const char x86[] = "processor\t: 0\nvendor_id\t: GenuineIntel\n"
				  "model name\t: Intel(R) Xeon(R) CPU @ 2.20GHz  \n";
	static const char arm[] = "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd05\n\n"
				  "processor\t: 4\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n\n"
				  "processor\t: 5\nCPU implementer\t: 0x41\nCPU part\t: 0xd0b\n";
	static const char dt[] = "radxa,rock-5b\0rockchip,rk3588\0";
	char *p1 = temp_file(x86, sizeof(x86) - 1), *p2 = temp_file(arm, sizeof(arm) - 1);
	char *p3 = temp_file(dt, sizeof(dt) - 1), buf[128];

	(void)state;
	rb_cpu_model_read(buf, sizeof(buf), p1, p3);
	assert_string_equal(buf, "Intel(R) Xeon(R) CPU @ 2.20GHz");
	rb_cpu_model_read(buf, sizeof(buf), p2, p3);
	assert_string_equal(buf, "rockchip,rk3588 (Cortex-A55 + Cortex-A76)");
	rb_cpu_model_read(buf, sizeof(buf), p2, "/nonexistent");
	assert_string_equal(buf, "Cortex-A55 + Cortex-A76");
	rb_cpu_model_read(buf, sizeof(buf), "/nonexistent", p3);
	assert_string_equal(buf, "rockchip,rk3588");
	rb_cpu_model_read(buf, sizeof(buf), "/nonexistent", "/nonexistent");
	assert_string_equal(buf, "unknown");
	remove(p1);
	remove(p2);
	remove(p3);
	free(p1);
	free(p2);
	free(p3);
}

/* The one table printer: widths from the widest cell (UTF-8 counted by code point),
 * numbers right-aligned, two spaces between columns, no trailing blanks. */
static void test_table_printer(void **state)
{
	static const struct rb_table_column cols[] = {
	    {"name", false}, {"µs", true}, {"note", false}};
	static const char *const cells[] = {"ffn_up-0", "12.5", "", "x", "1234.0", "fast"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	rb_table_print(f, cols, 3, cells, 2);
	fclose(f);
	assert_string_equal(buf, "name          µs  note\n"
				 "ffn_up-0    12.5\n"
				 "x         1234.0  fast\n");
	free(buf);
}

/* Per-model totals: each pair's time once, grouped by M in increasing order; a pair
 * without a time makes its group incomplete. Qcur is computed for every row of a
 * prompt, so no M = 1 pair joins the prompts here. */
static void test_totals(void **state)
{
	static const struct {
		int64_t m;
		double us;
		int pairs;
	} groups[] = {{128, 10.0, 2}, {1, 3.0, 16}, {1, 5.0, 1}, {512, NAN, 1}, {128, 1.5, 4}};
	static char names[32][16];
	struct rb_total_pair pairs[32];
	struct rb_total t[RB_TOTALS_MAX];
	char line[160];
	size_t n = 0;

	(void)state;
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		for (int i = 0; i < groups[g].pairs; i++, n++) {
			snprintf(names[n], sizeof(names[n]), "Qcur-%zu", n);
			pairs[n] = (struct rb_total_pair){names[n], groups[g].m, groups[g].us};
		}
	assert_int_equal(rb_totals_sum_pairs(pairs, n, t, RB_TOTALS_MAX), 3);
	assert_true(t[0].m == 1 && t[0].pairs == 17 && t[0].complete);
	assert_true(t[0].total_us == 53.0);
	assert_true(t[1].m == 128 && t[1].pairs == 6 && t[1].total_us == 26.0);
	assert_true(t[1].output_rows == 0);
	assert_true(t[2].m == 512 && !t[2].complete);
	rb_total_text(&t[0], line, sizeof(line));
	assert_string_equal(line, "decode (M = 1): 53.0 µs per token over 17 pairs");
	rb_total_text(&t[1], line, sizeof(line));
	assert_string_equal(line, "prefill (M = 128): 26.0 µs per 128-token prompt over 6 pairs");
	assert_int_equal(rb_totals_sum_pairs(pairs, n, t, 1), 1); /* more M values than room */
}

static void test_context_collect(void **state)
{
	static const char pattern[] = "dddd-dd-ddTdd:dd:ddZ"; /* d: a digit */
	struct rb_context ctx;
	long y, mo;

	(void)state;
	rb_context_collect(&ctx);
	assert_string_equal(ctx.tool_version, RB_VERSION);
	assert_true(ctx.host[0] != '\0');
	assert_true(ctx.cpu[0] != '\0');
	assert_non_null(strstr(ctx.kernel, "Linux"));
	assert_int_equal(strlen(ctx.date), strlen(pattern));
	for (size_t i = 0; pattern[i]; i++)
		assert_true(pattern[i] == 'd' ? isdigit((unsigned char)ctx.date[i]) != 0
					      : ctx.date[i] == pattern[i]);
	y = strtol(ctx.date, NULL, 10);
	mo = strtol(ctx.date + 5, NULL, 10);
	assert_true(y >= 2024 && mo >= 1 && mo <= 12);
	assert_true(ctx.cpu_count >= 1);
}

/* The Markdown report: the same rows as the table, as a Markdown table whose numbers
 * are aligned right; the context line above, the notes below. */
static void test_markdown(void **state)
{
	struct fixture f;
	char *text, *line;

	(void)state;
	make_fixture(&f);
	text = write_to_string(RB_FORMAT_MD, &f, 2);
	line = strstr(text, "\n| name ");
	assert_non_null(line);
	/* the rule under the titles: left for text, right (---:) for numbers */
	assert_non_null(strstr(text, "\n| ----------- | ------------- | ----- |"));
	assert_non_null(strstr(text, "--------: | "));
	assert_non_null(strstr(text, "| ffn_up-0 +1 | 1x2048x8192   | fp16  | npu "));
	assert_non_null(strstr(text, "| sim (modeled) |"));
	assert_non_null(strstr(text, "rknn-bench 9.9.9 (commit abc1234) on rock5b"));
	assert_non_null(strstr(text, "modeled: times come from the emulator's timing model"));
	free(text);
	free_fixture(&f);
}

/* A '|' in a cell would end it: escaped, and the column widened for the backslash. */
static void test_markdown_escape(void **state)
{
	static const struct rb_table_column cols[] = {{"n", false}, {"µs", true}};
	static const char *const cells[] = {"a|b", "1.5"};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	assert_non_null(f);
	rb_table_print_style(f, RB_TABLE_MARKDOWN, cols, 2, cells, 1);
	fclose(f);
	assert_string_equal(buf, "| n    |  µs |\n"
				 "| ---- | --: |\n"
				 "| a\\|b | 1.5 |\n");
	free(buf);
}

/* -o FILE: the format its extension names; other names (and tables) none. */
static void test_format_of_path(void **state)
{
	enum rb_format fmt = RB_FORMAT_TABLE;

	(void)state;
	assert_true(rb_format_of_path("out/x.csv", &fmt));
	assert_int_equal(fmt, RB_FORMAT_CSV);
	assert_true(rb_format_of_path("x.md", &fmt));
	assert_int_equal(fmt, RB_FORMAT_MD);
	assert_true(rb_format_of_path("a.b.json", &fmt));
	assert_int_equal(fmt, RB_FORMAT_JSON);
	fmt = RB_FORMAT_TABLE;
	assert_false(rb_format_of_path("report", &fmt));
	assert_false(rb_format_of_path("x.table", &fmt));
	assert_false(rb_format_of_path("dir.csv/report", &fmt));
	assert_false(rb_format_of_path("x.txt", &fmt));
	assert_int_equal(fmt, RB_FORMAT_TABLE);
	assert_int_equal(rb_format_parse("md", &fmt), 0);
	assert_int_equal(fmt, RB_FORMAT_MD);
}

/* The board: the device tree's model, NUL-terminated; none without the file. */
static void test_board_model(void **state)
{
	static const char model[] = "Radxa ROCK 5 Model B\0";
	char *path = temp_file(model, sizeof(model) - 1);
	char board[128];

	(void)state;
	rb_board_model_read(board, sizeof(board), path);
	assert_string_equal(board, "Radxa ROCK 5 Model B");
	unlink(path);
	free(path);
	rb_board_model_read(board, sizeof(board), "/nonexistent/model");
	assert_string_equal(board, "");
}

/* The context records the commit the tool was built from, and null for what is not
 * known (no board, no driver). */
static void test_context_json(void **state)
{
	struct fixture f;
	cJSON *o;

	(void)state;
	make_fixture(&f);
	o = rb_context_json(&f.ctx);
	assert_string_equal(str(o, "tool_commit"), "abc1234");
	assert_string_equal(str(o, "board"), "Radxa ROCK 5B");
	assert_true(cJSON_IsNull(item(o, "driver")));
	cJSON_Delete(o);
	rb_context_collect(&f.ctx);
	assert_string_equal(f.ctx.tool_commit, rb_git_commit);
	assert_true(rb_git_commit[0] != '\0');
	free_fixture(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rates),
	    cmocka_unit_test(test_json),
	    cmocka_unit_test(test_csv),
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_write_error),
	    cmocka_unit_test(test_format_parse),
	    cmocka_unit_test(test_cpu_model),
	    cmocka_unit_test(test_context_collect),
	    cmocka_unit_test(test_table_printer),
	    cmocka_unit_test(test_totals),
	    cmocka_unit_test(test_markdown),
	    cmocka_unit_test(test_markdown_escape),
	    cmocka_unit_test(test_format_of_path),
	    cmocka_unit_test(test_board_model),
	    cmocka_unit_test(test_context_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
