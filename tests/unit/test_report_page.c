/* Unit tests of page/page: heatmap cells from cache records (best time per cell,
 * failed and absent cells, axis order), tuned-JSON bars and totals, names escaped in
 * the HTML, and the errors that name the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "page/page.h"
#include "page/page_internal.h"

#define HEADER                                                                                     \
	"{\"schema\":\"rknn-bench-tune-cache/1\",\"tool_version\":\"0.1.0\",\"device\":\"sim\","   \
	"\"driver\":\"0.9.8\",\"soc\":\"rk3588\",\"space\":\"ab\",\"space_desc\":\"d\","           \
	"\"measure\":\"m\"}\n"

/* a measured record that ran is verified (the cache refuses one that is not) */
#define RECORD(kind, config, launch, status, us, verify)                                           \
	"{\"kind\":\"" kind "\",\"shape\":\"1x64x64 fp16\",\"config\":\"" config                   \
	"\",\"launch\":\"" launch "\",\"status\":\"" status "\",\"median_us\":" us                 \
	",\"verify\":\"" verify "\",\"reason\":\"\"}\n"

static const char cache[] =
    HEADER RECORD("model", "mask=0x7 split=n align=16 banks=0:0 kslice=0", "fences", "ok", "30", "")
	RECORD("model", "mask=0x7 split=n align=32 banks=0:0 kslice=0", "fences", "ok", "20", "")
	    RECORD("model", "mask=0x1 split=n align=16 banks=2:10 kslice=0", "threads", "ok", "50",
		   "") RECORD("model", "mask=0x3 split=n:2,1 align=16 banks=2:10 kslice=0",
			      "threads", "failed", "null", "")
		RECORD("run", "mask=0x7 split=n align=16 banks=0:0 kslice=0", "fences", "ok", "99",
		       "verified") RECORD("cpu", "cpu", "-", "ok", "500", "verified");

static size_t find(const char (*axis)[32], size_t n, const char *label)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(axis[i], label) == 0)
			return i;
	fail_msg("no axis label '%s'", label);
	return 0;
}

static void test_cache_grids(void **state)
{
	struct rb_page page;
	const struct rb_page_grid *g;

	(void)state;
	rb_page_init(&page, "t");
	assert_int_equal(rb_page_add_cache(&page, "c.jsonl", cache, sizeof(cache) - 1), 0);
	assert_int_equal(page.n_grids, 2); /* one shape: mask x banks, weights x launch */
	g = &page.grids[0];
	assert_true(g->modeled);
	/* the timing model's records only (not the run's 99 µs), sorted, auto first */
	assert_int_equal(g->n_rows, 3);
	assert_string_equal(g->rows[0], "0x1");
	assert_string_equal(g->rows[2], "0x7");
	assert_int_equal(g->n_cols, 2);
	assert_string_equal(g->cols[0], "auto");
	assert_string_equal(g->cols[1], "2:10");
	/* the best of the cell's configs */
	assert_true(g->us[find(g->rows, 3, "0x7")][0] == 20);
	assert_true(g->us[find(g->rows, 3, "0x1")][1] == 50);
	/* a cell whose configs all failed, and one no config reached */
	assert_true(isnan(g->us[find(g->rows, 3, "0x3")][1]));
	assert_true(g->tried[find(g->rows, 3, "0x3")][1]);
	assert_false(g->tried[find(g->rows, 3, "0x3")][0]);
	g = &page.grids[1];
	assert_string_equal(g->rows[0], "even");
	assert_string_equal(g->rows[1], "2,1");
	assert_string_equal(g->cols[0], "fences");
	assert_string_equal(g->cols[1], "threads");
	assert_int_equal(page.n_sources, 1);
	assert_true(page.sources[0].modeled);
	rb_page_release(&page);
}

static void test_cache_errors(void **state)
{
	static const char bad_header[] = "{\"schema\":\"rknn-bench-tune-cache/1\"}\n";
	static const char bad_record[] = HEADER "{\"kind\":\"model\"}\n";
	struct rb_page page;

	(void)state;
	rb_page_init(&page, "t");
	assert_int_equal(rb_page_add_cache(&page, "h.jsonl", bad_header, sizeof(bad_header) - 1),
			 -EINVAL);
	assert_non_null(strstr(rb_last_error(), "h.jsonl: line 1 (the cache header) needs"));
	assert_int_equal(rb_page_add_cache(&page, "r.jsonl", bad_record, sizeof(bad_record) - 1),
			 -EINVAL);
	assert_non_null(strstr(rb_last_error(), "r.jsonl' line 2 is not a tune record"));
	rb_page_release(&page);
}

static const char tuned[] =
    "{\"schema\":\"rknn-bench-tuned/1\",\"device\":\"sim\",\"modeled\":true,"
    "\"soc\":\"x\",\"pairs\":[{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,\"col\":64},"
    "\"name\":\"<script>alert(1)</script>\",\"tuned\":{\"config\":\"mask=0x1\","
    "\"launch\":\"fences\"},\"measured\":{\"device\":\"sim\",\"modeled\":true,"
    "\"median_us\":10,\"gflops\":0.8,\"gbps\":0.8,\"default_us\":12}}],"
    "\"totals\":{\"tuned\":[{\"m\":1,\"kind\":\"decode\",\"per\":\"token\",\"pairs\":1,"
    "\"total_us\":10}]}}";

static void test_tuned(void **state)
{
	struct rb_page page;
	char *html = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	rb_page_init(&page, "a & b");
	assert_int_equal(rb_page_add_tuned(&page, "t.json", tuned, sizeof(tuned) - 1), 0);
	assert_int_equal(page.n_charts, 1);
	assert_int_equal(page.charts[0].n_bars, 1);
	assert_true(page.charts[0].bars[0].us[0] == 12);  /* default */
	assert_true(page.charts[0].bars[0].us[1] == 10);  /* tuned */
	assert_true(isnan(page.charts[0].bars[0].us[2])); /* no rknn_matmul_api section */
	assert_int_equal(page.n_totals, 1);
	assert_true(page.totals[0].total_us == 10);
	assert_int_equal(page.n_rooflines, 1);
	assert_int_equal(page.rooflines[0].n_points, 1);
	assert_true(page.rooflines[0].peak_gflops[0] > 0); /* the embedded profile's */
	assert_non_null(strstr(page.rooflines[0].ceilings, "the file names another, 'x'"));
	f = open_memstream(&html, &len);
	assert_non_null(f);
	assert_int_equal(rb_page_write_html(f, &page), 0);
	fclose(f);
	assert_null(strstr(html, "<script"));
	assert_non_null(strstr(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
	assert_non_null(strstr(html, "<title>a &amp; b: tuned JSON (modeled)</title>"));
	assert_non_null(strstr(html, "class=\"badge modeled\""));
	free(html);
	rb_page_release(&page);
}

/* Three pairs, two of one shape: one row for them (counted, both named, their share of
 * the M = 1 total), totals as a tokens/s chart, a title naming the kind of file. */
#define PAIR(name, n, us, def)                                                                     \
	"{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":64,\"col\":" n "},\"name\":\"" name    \
	"\",\"tuned\":{\"config\":\"mask=0x1\",\"launch\":\"fences\"},\"measured\":{\"device\":"   \
	"\"sim\",\"modeled\":true,\"median_us\":" us ",\"gflops\":0.8,\"gbps\":0.8,"               \
	"\"default_us\":" def "}}"
#define TOTAL(us)                                                                                  \
	"[{\"m\":1,\"kind\":\"decode\",\"per\":\"token\",\"pairs\":3,\"total_us\":" us "}]"

static const char grouped[] =
    "{\"schema\":\"rknn-bench-tuned/1\",\"device\":\"sim\",\"modeled\":true,\"soc\":\"x\","
    "\"pairs\":[" PAIR("q-0", "64", "10", "12") "," PAIR("q-1", "64", "10", "12") "," PAIR(
	"up", "128", "30",
	"40") "],\"totals\":{\"default\":" TOTAL("64") ",\"tuned\":" TOTAL("50") "}}";

static char *page_html(const struct rb_page *page)
{
	char *html = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&html, &len);

	assert_non_null(f);
	assert_int_equal(rb_page_write_html(f, page), 0);
	fclose(f);
	return html;
}

static size_t count(const char *text, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

static void test_grouped(void **state)
{
	const struct rb_page_bar *b;
	struct rb_page page;
	char *html;

	(void)state;
	rb_page_init(&page, "t");
	assert_int_equal(rb_page_add_tuned(&page, "g.json", grouped, sizeof(grouped) - 1), 0);
	assert_int_equal(page.charts[0].n_bars, 2); /* two unique shapes of three pairs */
	b = &page.charts[0].bars[0];
	assert_int_equal(b->count, 2);
	assert_string_equal(b->names, "q-0, q-1");
	assert_true(fabs(b->share - 20.0 / 50.0) < 1e-9); /* 2 x 10 of 2 x 10 + 30 */
	assert_int_equal(page.charts[0].bars[1].count, 1);
	assert_true(fabs(page.charts[0].bars[1].share - 30.0 / 50.0) < 1e-9);
	html = page_html(&page);
	assert_int_equal(count(html, "<tr class=\"group\">"), 2);
	assert_non_null(strstr(html, "<b>2 pairs</b>: q-0, q-1"));
	assert_non_null(strstr(html, "<td class=\"num\">40.0%</td>"));
	/* decode tokens/s = 1e6 / µs per token: 20000 tuned, 15625 default */
	assert_int_equal(count(html, "<rect class=\"total "), 2);
	assert_non_null(strstr(html, "20000.0 tokens/s (50.0 µs per token)"));
	assert_non_null(strstr(html, "15625.0 tokens/s (64.0 µs per token)"));
	assert_non_null(strstr(html, "<title>t: tuned JSON (modeled)</title>"));
	free(html);
	rb_page_release(&page);
}

/* The heatmaps' legends and best cells; roofline points at one spot under one label. */
static void test_legend_and_labels(void **state)
{
	struct rb_page_roofline *r;
	struct rb_page page;
	char *html;

	(void)state;
	rb_page_init(&page, "t");
	assert_int_equal(rb_page_add_cache(&page, "c.jsonl", cache, sizeof(cache) - 1), 0);
	r = page_roofline(&page, "sim", true);
	assert_non_null(r);
	r->peak_gflops[0] = 1000;
	r->ddr_gbps = 10;
	for (int i = 0; i < 3; i++) /* points 1-3 at one spot, 4 far from them */
		assert_int_equal(page_point(r, "same", false, 50, 100), 0);
	assert_int_equal(page_point(r, "apart", false, 2, 10), 0);
	html = page_html(&page);
	/* mask 0x7 with auto banks, and even weights with fences: 20 µs, the best */
	assert_int_equal(count(html, "<rect class=\"cell best\""), 2);
	assert_int_equal(count(html, "20.0 µs (the best)"), 2);
	assert_int_equal(count(html, "<g class=\"legend\">"), 2);
	assert_int_equal(count(html, "50.0 µs (slowest)"), 2);
	assert_int_equal(count(html, "<text class=\"num\""), 2);
	assert_non_null(strstr(html, ">1-3</text>"));
	assert_non_null(strstr(html, ">4</text>"));
	/* a page of one modeled cache says modeled; its title names the kind */
	assert_non_null(strstr(html, "<title>t: tune cache (modeled)</title>"));
	free(html);
	rb_page_release(&page);
}

/* The compare page: the geomean and the counts as the text output ends with, the
 * verdicts coloured under a column named for them; a measured file and a modeled one
 * make a title that says both. */
static void test_compare(void **state)
{
	struct rb_compare_entry base = {
	    .shape = {.m = 1, .k = 64, .n = 64}, .device = "sim", .modeled = true, .median_us = 10};
	struct rb_compare_entry new_ = base;
	struct rb_compare_row row = {.base = &base,
				     .new_ = &new_,
				     .name = "q",
				     .change = 0.5,
				     .verdict = RB_VERDICT_REGRESSION};
	struct rb_compare cmp = {
	    .rows = &row, .n_rows = 1, .matched = 1, .regressions = 1, .geomean_change = 0.5};
	struct rb_page page;
	char *html;

	(void)state;
	new_.median_us = 15;
	rb_page_init(&page, "c");
	assert_int_equal(rb_page_add_compare(&page, &cmp, "a.json", "b.json"), 0);
	assert_non_null(page_source(&page, "a.json", "run report", true));
	assert_non_null(page_source(&page, "b.json", "run report", false));
	html = page_html(&page);
	assert_non_null(strstr(html, "geomean: +50.00% over 1 matched row (new/base median); "
				     "<span class=\"verdict regression\">1 regression</span>"));
	assert_non_null(strstr(html, "<th>change and verdict</th>"));
	assert_null(strstr(html, "<th>configs</th>"));
	assert_non_null(strstr(html, "<span class=\"verdict regression\">+50.00% regression"));
	assert_non_null(strstr(html, "<title>c: run reports (modeled and measured)</title>"));
	assert_non_null(strstr(html,
			       "<h1>c: run reports<span class=\"badge modeled\">modeled</span>"
			       "<span class=\"badge measured\">and measured</span></h1>"));
	free(html);
	rb_page_release(&page);
}

static void test_bad_totals(void **state)
{
	static const char bad[] = "{\"schema\":\"rknn-bench-tuned/1\",\"pairs\":[],"
				  "\"totals\":{\"default\":[{\"m\":\"one\"}]}}";
	static const char huge[] = "{\"schema\":\"rknn-bench-tuned/1\",\"pairs\":[],"
				   "\"totals\":{\"tuned\":[{\"m\":1e300,\"kind\":\"decode\","
				   "\"per\":\"token\",\"pairs\":1,\"total_us\":1}]}}";
	struct rb_page page;

	(void)state;
	rb_page_init(&page, "t");
	assert_int_equal(rb_page_add_tuned(&page, "b.json", bad, sizeof(bad) - 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "b.json: totals.default[0] needs"));
	/* a number no long long holds is refused, not converted */
	assert_int_equal(rb_page_add_tuned(&page, "h.json", huge, sizeof(huge) - 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "h.json: totals.tuned[0] needs"));
	rb_page_release(&page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cache_grids), cmocka_unit_test(test_cache_errors),
	    cmocka_unit_test(test_tuned),       cmocka_unit_test(test_bad_totals),
	    cmocka_unit_test(test_grouped),     cmocka_unit_test(test_legend_and_labels),
	    cmocka_unit_test(test_compare),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
