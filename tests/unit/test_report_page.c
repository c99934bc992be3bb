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
	assert_non_null(strstr(html, "<title>a &amp; b</title>"));
	assert_non_null(strstr(html, "class=\"badge modeled\""));
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
	    cmocka_unit_test(test_cache_grids),
	    cmocka_unit_test(test_cache_errors),
	    cmocka_unit_test(test_tuned),
	    cmocka_unit_test(test_bad_totals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
