/* Unit tests of calibration (core/lsq, tune/calibrate): the linear solver and the
 * Levenberg-Marquardt fit on problems with known answers, bounds, the spread telling
 * identifiable parameters from collinear ones, the parameters of a profile (a sum keeps
 * its split), every refused report (table below) and mix of reports, too few results
 * for the parameters, and the fitted profile loading as a profile. The round trip
 * through the emulator is tests/e2e/calibrate.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/lsq.h"
#include "hw/soc.h"
#include "tune/calibrate.h"

/* ---- the solver ---- */

static void test_solve_linear(void **state)
{
	/* 2x + y - z = 8, -3x - y + 2z = -11, -2x + y + 2z = -3: x = 2, y = 3, z = -1
	 * (the first pivot is not on the diagonal) */
	double a[9] = {2, 1, -1, -3, -1, 2, -2, 1, 2};
	double b[3] = {8, -11, -3};
	double s[9] = {1, 2, 3, 2, 4, 6, 0, 1, 1};
	double t[3] = {1, 2, 3};

	(void)state;
	assert_int_equal(rb_lsq_solve_linear(a, b, 3), 0);
	assert_near(b[0], 2, 1e-12);
	assert_near(b[1], 3, 1e-12);
	assert_near(b[2], -1, 1e-12);
	assert_int_equal(rb_lsq_solve_linear(s, t, 3), -ERANGE); /* row 2 = 2 * row 1 */
}

/* y = a·exp(b·t) at t = 0..9 from a = 2, b = -0.5: a model nonlinear in b. */
static int exponential(const double *x, double *r, void *ctx)
{
	int *calls = ctx;

	++*calls;
	for (int i = 0; i < 10; i++)
		r[i] = x[0] * exp(x[1] * i) - 2 * exp(-0.5 * i);
	return 0;
}

static void test_fit_exponential(void **state)
{
	int calls = 0;
	struct rb_lsq_problem p = {
	    .n_params = 2, .n_rows = 10, .residuals = exponential, .ctx = &calls, .step = 1e-7};
	struct rb_lsq_result res;
	double x[2] = {1, -0.1};

	(void)state;
	assert_int_equal(rb_lsq_fit(&p, x, &res), 0);
	assert_near(x[0], 2, 1e-5);
	assert_near(x[1], -0.5, 1e-5);
	assert_true(res.cost < 1e-10);
	assert_true(res.iterations > 1);
	assert_int_equal(res.evaluations, calls);
}

static void test_fit_bounds(void **state)
{
	int calls = 0;
	double lo[2] = {0, -0.4}, hi[2] = {10, 0};
	struct rb_lsq_problem p = {.n_params = 2,
				   .n_rows = 10,
				   .residuals = exponential,
				   .ctx = &calls,
				   .lo = lo,
				   .hi = hi,
				   .step = 1e-7};
	double x[2] = {1, -0.1};

	(void)state;
	assert_int_equal(rb_lsq_fit(&p, x, NULL), 0);
	assert_near(x[1], -0.4, 1e-12); /* the solution -0.5 is out of bounds */
	assert_true(x[0] > 0 && x[0] < 10);
}

static int failing(const double *x, double *r, void *ctx)
{
	(void)x;
	(void)r;
	(void)ctx;
	return rb_set_error(-ENODEV, "the model is gone");
}

static void test_fit_errors(void **state)
{
	struct rb_lsq_problem none = {.n_params = 0, .n_rows = 3, .residuals = failing};
	struct rb_lsq_problem p = {.n_params = 1, .n_rows = 3, .residuals = failing};
	double x[1] = {1};

	(void)state;
	assert_int_equal(rb_lsq_fit(&none, x, NULL), -EINVAL);
	assert_int_equal(rb_lsq_fit(&p, x, NULL), -ENODEV);
	assert_contains(rb_last_error(), "the model is gone");
}

/* r = x0 + x1·t - y at t = 1..4: two parameters the rows tell apart; with collinear
 * set, r = (x0 + x1)·t - y: only their sum is determined. */
static int line(const double *x, double *r, void *ctx)
{
	bool collinear = *(bool *)ctx;

	for (int t = 1; t <= 4; t++)
		r[t - 1] = (collinear ? (x[0] + x[1]) * t : x[0] + x[1] * t) - (1 + 2 * t);
	return 0;
}

static void test_spread(void **state)
{
	bool collinear = false;
	struct rb_lsq_problem p = {
	    .n_params = 2, .n_rows = 4, .residuals = line, .ctx = &collinear};
	double x[2] = {1, 2}, spread[2];

	(void)state;
	assert_int_equal(rb_lsq_spread(&p, x, 0.01, spread), 0);
	/* (JᵀJ)⁻¹ of rows (1, t): diag 1.5 and 0.2 */
	assert_near(spread[0], 0.01 * sqrt(1.5), 1e-6);
	assert_near(spread[1], 0.01 * sqrt(0.2), 1e-6);
	collinear = true;
	assert_int_equal(rb_lsq_spread(&p, x, 0.01, spread), 0);
	assert_true(!(spread[0] < 1) && !(spread[1] < 1));
}

/* ---- the parameters of a profile ---- */

static const struct rb_soc_profile *soc(void)
{
	const struct rb_soc_profile *s = rb_soc_default();

	assert_non_null(s);
	return s;
}

static void test_params(void **state)
{
	struct rb_soc_profile p = *soc();
	double commit = p.submit_commit_ns, irq = p.submit_irq_ns;

	(void)state;
	assert_string_equal(rb_calib_param_key(RB_CALIB_DDR_TOTAL), "ddr.gbps_total");
	assert_near(rb_calib_param_get(&p, RB_CALIB_DDR_TOTAL), p.ddr_total_gbps, 0);
	assert_near(rb_calib_param_get(&p, RB_CALIB_SUBMIT_KICK), commit + irq, 0);
	rb_calib_param_set(&p, RB_CALIB_SUBMIT_KICK, 2 * (commit + irq));
	assert_near(p.submit_commit_ns, 2 * commit, 1e-9); /* the split is kept */
	assert_near(p.submit_irq_ns, 2 * irq, 1e-9);
	assert_near(p.submit_wake_ns, soc()->submit_wake_ns, 0); /* others untouched */
	p.submit_commit_ns = p.submit_irq_ns = 0;
	rb_calib_param_set(&p, RB_CALIB_SUBMIT_KICK, 10);
	assert_near(p.submit_commit_ns, 5, 0); /* a 0 sum: split evenly */
}

/* ---- reports ---- */

static char dir[] = "/tmp/rb-calib-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

#define PLAN                                                                                       \
	"mask=0x1 split=n:1 align=16 banks=1:11 kslice=64 res=resident chain=1 out=fp32 "          \
	"mainline=0"

/* A report of one result; NULL arguments take the defaults of a good sim report. */
struct report {
	const char *host, *device, *modeled, *plan, *launch, *driver, *status, *median;
};

static const char *write_report(const char *name, const struct report *r)
{
	static char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"{\"schema\": \"rknn-bench/1\", \"context\": {\"host\": \"%s\"}, \"results\": "
		"[{\"shape\": {\"m\": 1, \"k\": 64, \"n\": 64, \"dtype\": \"fp16\"}, \"names\": "
		"[\"a\"], \"device\": \"%s\", \"modeled\": %s, \"config\": {\"plan\": \"%s\", "
		"\"launch\": \"%s\", \"driver\": \"%s\"}, \"stats\": {\"median_us\": %s}, "
		"\"verify\": {\"status\": \"%s\"}}]}\n",
		r->host ? r->host : "h", r->device ? r->device : "sim",
		r->modeled ? r->modeled : "true", r->plan ? r->plan : PLAN,
		r->launch ? r->launch : "fences", r->driver ? r->driver : "rknpu",
		r->median ? r->median : "30.5", r->status ? r->status : "skipped");
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Every report calibrate refuses alone, with what its message must say. */
static const struct {
	struct report r;
	const char *message;
} refused[] = {
    {{.device = "cpu"}, "results[0] ran on 'cpu'"},
    {{.status = "failed"}, "results[0] failed verification"},
    {{.plan = "mask=0x9"}, "results[0].config.plan 'mask=0x9' is not a plan config string"},
    {{.launch = "rockets"}, "results[0].config.launch 'rockets' is not a launch mode"},
    {{.driver = "nvidia"}, "results[0].config.driver 'nvidia' must be rknpu or rocket"},
    {{.median = "0"}, "results[0].stats.median_us must be a positive number"},
    {{.modeled = "\"yes\""}, "results[0].modeled must be true or false"},
};

static void test_refused_reports(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		struct rb_calib c;
		const char *path = write_report("bad.json", &refused[i].r);

		rb_calib_init(&c, soc());
		assert_int_equal(rb_calib_add_report(&c, path), -EINVAL);
		assert_contains(rb_last_error(), path);
		assert_contains(rb_last_error(), refused[i].message);
		assert_int_equal(c.n_rows, 0);
		assert_int_equal(c.n_reports, 0);
		rb_calib_release(&c);
	}
}

static void test_missing_config(void **state)
{
	char path[128];
	FILE *f;
	struct rb_calib c;

	(void)state;
	snprintf(path, sizeof(path), "%s/noconfig.json", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("{\"schema\": \"rknn-bench/1\", \"results\": [{\"shape\": {\"m\": 1, \"k\": 64, "
	      "\"n\": 64, \"dtype\": \"fp16\"}, \"names\": [\"a\"], \"device\": \"rknpu\", "
	      "\"modeled\": false, \"stats\": {\"median_us\": 30}}]}",
	      f);
	assert_int_equal(fclose(f), 0);
	rb_calib_init(&c, soc());
	assert_int_equal(rb_calib_add_report(&c, path), -EINVAL);
	assert_contains(rb_last_error(), "results[0].config.plan is missing");
	rb_calib_release(&c);
}

/* A second report that does not go with the first: refused, the first one stays. */
static void expect_mix_refused(const struct report *second, const char *message)
{
	struct rb_calib c;
	const struct report good = {0};

	rb_calib_init(&c, soc());
	assert_int_equal(rb_calib_add_report(&c, write_report("one.json", &good)), 0);
	assert_int_equal(rb_calib_add_report(&c, write_report("two.json", second)), -EINVAL);
	assert_contains(rb_last_error(), "two.json");
	assert_contains(rb_last_error(), message);
	assert_int_equal(c.n_rows, 1);
	assert_int_equal(c.n_reports, 1);
	rb_calib_release(&c);
}

static void test_mixed_reports(void **state)
{
	const struct report measured = {.device = "rknpu", .modeled = "false"};
	const struct report rocket = {.device = "sim:rocket", .driver = "rocket"};
	const struct report other_host = {.host = "other"};

	(void)state;
	expect_mix_refused(&measured, "is measured where the reports before are modeled");
	expect_mix_refused(&rocket, "driver 'rocket' where the reports before have 'rknpu'");
	expect_mix_refused(&other_host, "context.host 'other' where the reports before have 'h'");
}

static void test_too_few_results(void **state)
{
	struct rb_calib c;
	const struct report good = {0};

	(void)state;
	rb_calib_init(&c, soc());
	assert_int_equal(rb_calib_fit(&c), -EINVAL); /* no rows at all */
	assert_int_equal(rb_calib_add_report(&c, write_report("one.json", &good)), 0);
	assert_int_equal(rb_calib_fit(&c), -EINVAL);
	assert_contains(rb_last_error(), "1 results cannot fit");
	assert_contains(rb_last_error(), "docs/boards.md");
	rb_calib_release(&c);
}

/* ---- the fitted profile ---- */

static void test_profile_json(void **state)
{
	struct rb_calib c;
	struct rb_soc_profile back;
	size_t len;
	const char *base = rb_soc_default_text(&len);
	const struct report good = {0};
	cJSON *doc;
	char *text;

	(void)state;
	rb_calib_init(&c, soc());
	assert_int_equal(rb_calib_add_report(&c, write_report("one.json", &good)), 0);
	c.fitted.ddr_total_gbps = 27.5;
	c.fitted.submit_commit_ns = 1000;
	c.fitted.fp16_efficiency = 0.75;
	c.held[RB_CALIB_MAC_INT8] = true;
	c.fitted.int8_efficiency = 0.5; /* held: not written */
	c.rows[0].fitted_us = 31;
	doc = rb_calib_profile_json(&c, base, len, "my-board");
	assert_non_null(doc);
	text = cJSON_Print(doc);
	assert_int_equal(rb_soc_load_string(&back, text, strlen(text), "fit.json"), 0);
	assert_string_equal(back.name, "my-board");
	assert_string_equal(back.status, "fitted to modeled reports (emulator), not a board");
	assert_near(back.ddr_total_gbps, 27.5, 0);
	assert_near(back.submit_commit_ns, 1000, 0);
	assert_near(back.fp16_efficiency, 0.75, 0);
	assert_near(back.int8_efficiency, soc()->int8_efficiency, 0);
	assert_contains(text, "fitted by rknn-bench calibrate");
	assert_contains(text, "\"error_pct\"");
	free(text);
	cJSON_Delete(doc);
	assert_null(rb_calib_profile_json(&c, base, len, "a name longer than thirty-one bytes"));
	assert_contains(rb_last_error(), "--name");
	rb_calib_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_solve_linear),    cmocka_unit_test(test_fit_exponential),
	    cmocka_unit_test(test_fit_bounds),      cmocka_unit_test(test_fit_errors),
	    cmocka_unit_test(test_spread),          cmocka_unit_test(test_params),
	    cmocka_unit_test(test_refused_reports), cmocka_unit_test(test_missing_config),
	    cmocka_unit_test(test_mixed_reports),   cmocka_unit_test(test_too_few_results),
	    cmocka_unit_test(test_profile_json),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
