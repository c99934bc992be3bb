/* Unit tests of results/compare: the Mann-Whitney U test against hand-computed values,
 * loading reports, pairing by shape and name, verdicts, the geometric mean, and the
 * gate itself: an injected 10 % slowdown is caught and a 1 % change is not, for modeled
 * (exact) reports and for measured reports with noisy samples. */
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

#include "results/compare.h"
#include "core/error.h"
#include "core/rng.h"
#include "core/util.h"

#define MAX_SAMPLES 64

/* ---- Mann-Whitney U ---- */

/* The tortoise and the hare (Wikipedia's illustration): finishing order
 * T H H H H H T T T T T H. Ranks of T {1,7,8,9,10,11}, of H {2,3,4,5,6,12}.
 * U_T = R_T - 6·7/2 = 46 - 21 = 25, U_H = 36 - 25 = 11. No ties, so the p value is
 * exact: of the C(12,6) = 924 orders, 143 have U <= 11, two-sided p = 286/924. */
static void test_mwu_tortoise_hare(void **state)
{
	const double t[] = {1, 7, 8, 9, 10, 11}, h[] = {2, 3, 4, 5, 6, 12};
	double u, p;

	(void)state;
	assert_int_equal(rb_mann_whitney_u(t, 6, h, 6, &u, &p), 0);
	assert_near(u, 25, 0);
	assert_near(p, 286.0 / 924, 1e-15);
	/* the other way round: U of the hare, same p */
	assert_int_equal(rb_mann_whitney_u(h, 6, t, 6, &u, &p), 0);
	assert_near(u, 11, 0);
	assert_near(p, 286.0 / 924, 1e-15);
}

/* Small exact cases: 1 vs 1 (U = 0 has probability 1/2, so p = 1); 2 vs 2 separated
 * (1 order of 6 has U = 0, p = 2/6); 10 vs 10 separated (p = 2/C(20,10) = 2/184756). */
static void test_mwu_exact_small(void **state)
{
	const double one[] = {1}, two[] = {2}, a2[] = {1, 2}, b2[] = {3, 4};
	double a[10], b[10], u, p;

	(void)state;
	assert_int_equal(rb_mann_whitney_u(one, 1, two, 1, &u, &p), 0);
	assert_near(u, 0, 0);
	assert_near(p, 1, 0);
	assert_int_equal(rb_mann_whitney_u(a2, 2, b2, 2, &u, &p), 0);
	assert_near(p, 2.0 / 6, 1e-15);
	for (int i = 0; i < 10; i++) {
		a[i] = 100 + i;
		b[i] = 200 + i;
	}
	assert_int_equal(rb_mann_whitney_u(b, 10, a, 10, &u, &p), 0);
	assert_near(u, 100, 0);
	assert_near(p, 2.0 / 184756, 1e-18);
}

/* Unequal sizes use the same distribution: 3 vs 5 separated, C(8,3) = 56, p = 2/56. */
static void test_mwu_exact_unequal(void **state)
{
	const double a[] = {1, 2, 3}, b[] = {4, 5, 6, 7, 8};
	double u, p;

	(void)state;
	assert_int_equal(rb_mann_whitney_u(a, 3, b, 5, &u, &p), 0);
	assert_near(u, 0, 0);
	assert_near(p, 2.0 / 56, 1e-15);
	assert_int_equal(rb_mann_whitney_u(b, 5, a, 3, &u, &p), 0);
	assert_near(u, 15, 0);
	assert_near(p, 2.0 / 56, 1e-15);
}

/* Ties: normal approximation. a = {1,2,2,3,4,5,5,6,7}, b = {3,4,5,6,6,7,8,8,9,10}:
 * U_a = 16.5 (pairs a > b plus half the ties); tie groups 2,3,4,7,8 (t = 2) and 5,6
 * (t = 3) give sum(t^3 - t) = 5·6 + 2·24 = 78; sigma^2 = 90/12·(20 - 78/(19·18)) =
 * 148.289..., z = (|16.5 - 45| - 0.5)/12.1774 = 2.29934, p = erfc(z/sqrt 2). */
static void test_mwu_ties_normal(void **state)
{
	const double a[] = {1, 2, 2, 3, 4, 5, 5, 6, 7}, b[] = {3, 4, 5, 6, 6, 7, 8, 8, 9, 10};
	double u, p;

	(void)state;
	assert_int_equal(rb_mann_whitney_u(a, ARRAY_SIZE(a), b, ARRAY_SIZE(b), &u, &p), 0);
	assert_near(u, 16.5, 0);
	assert_near(p, 0.02148573776933647, 1e-12);
}

/* Identical samples: every value tied, nothing tells them apart, p = 1. */
static void test_mwu_identical(void **state)
{
	double a[12], u, p;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(a); i++)
		a[i] = 58.22;
	assert_int_equal(rb_mann_whitney_u(a, 12, a, 12, &u, &p), 0);
	assert_near(u, 72, 0);
	assert_near(p, 1, 0);
}

/* 30 vs 30 separated (beyond the exact limit): mu = 450, sigma^2 = 900/12·61 = 4575,
 * z = 449.5/67.6387 = 6.6456, p = erfc(z/sqrt 2) = 3.0199e-11. */
static void test_mwu_separated_normal(void **state)
{
	double a[30], b[30], u, p;

	(void)state;
	for (int i = 0; i < 30; i++) {
		a[i] = 10 + 0.01 * i;
		b[i] = 11 + 0.01 * i;
	}
	assert_int_equal(rb_mann_whitney_u(a, 30, b, 30, &u, &p), 0);
	assert_near(u, 0, 0);
	assert_near(p, 3.019859359162151e-11, 1e-20);
}

static void test_mwu_errors(void **state)
{
	const double a[] = {1, 2}, bad[] = {1, NAN};
	double u, p;

	(void)state;
	assert_int_equal(rb_mann_whitney_u(a, 0, a, 2, &u, &p), -EINVAL);
	assert_int_equal(rb_mann_whitney_u(a, 2, a, 0, &u, &p), -EINVAL);
	assert_int_equal(rb_mann_whitney_u(a, 2, bad, 2, &u, &p), -EINVAL);
	assert_contains(rb_last_error(), "finite");
}

/* ---- reports built in memory ---- */

struct spec {
	const char *names[4]; /* NULL-terminated */
	int64_t m, k, n;
	const char *dtype;
	const char *device;
	bool modeled;
	double median_us;
	double samples[MAX_SAMPLES];
	size_t n_samples;
	const char *status; /* verify.status; NULL means "verified" */
};

static cJSON *spec_json(const struct spec *s)
{
	cJSON *r = cJSON_CreateObject(), *shape, *names, *stats, *verify;

	shape = cJSON_AddObjectToObject(r, "shape");
	cJSON_AddNumberToObject(shape, "m", (double)s->m);
	cJSON_AddNumberToObject(shape, "k", (double)s->k);
	cJSON_AddNumberToObject(shape, "n", (double)s->n);
	cJSON_AddStringToObject(shape, "dtype", s->dtype ? s->dtype : "fp16");
	names = cJSON_AddArrayToObject(r, "names");
	for (size_t i = 0; s->names[i]; i++)
		cJSON_AddItemToArray(names, cJSON_CreateString(s->names[i]));
	cJSON_AddStringToObject(r, "device", s->device ? s->device : "sim");
	cJSON_AddBoolToObject(r, "modeled", s->modeled);
	stats = cJSON_AddObjectToObject(r, "stats");
	cJSON_AddNumberToObject(stats, "median_us", s->median_us);
	cJSON_AddItemToObject(stats, "samples_us",
			      cJSON_CreateDoubleArray(s->samples, (int)s->n_samples));
	verify = cJSON_AddObjectToObject(r, "verify");
	cJSON_AddStringToObject(verify, "status", s->status ? s->status : "verified");
	return r;
}

/* Writes the specs as a report and reads it back through the parser. */
static void make_report(struct rb_compare_report *rep, const struct spec *specs, size_t n,
			const char *label)
{
	cJSON *doc = cJSON_CreateObject(), *results;
	char *text;

	cJSON_AddStringToObject(doc, "schema", "rknn-bench/1");
	results = cJSON_AddArrayToObject(doc, "results");
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(results, spec_json(&specs[i]));
	text = cJSON_Print(doc);
	assert_non_null(text);
	if (rb_compare_parse(rep, text, strlen(text), label) != 0) {
		print_error("%s\n", rb_last_error());
		fail();
	}
	free(text);
	cJSON_Delete(doc);
}

static struct spec modeled(const char *name, int64_t m, double median_us)
{
	struct spec s = {.names = {name},
			 .m = m,
			 .k = 256,
			 .n = 512,
			 .modeled = true,
			 .median_us = median_us,
			 .n_samples = 10};

	for (size_t i = 0; i < s.n_samples; i++)
		s.samples[i] = median_us;
	return s;
}

static void compare(const struct spec *b, size_t nb, const struct spec *n, size_t nn,
		    const struct rb_compare_opts *opts, struct rb_compare *cmp,
		    struct rb_compare_report reps[2])
{
	make_report(&reps[0], b, nb, "base.json");
	make_report(&reps[1], n, nn, "new.json");
	assert_int_equal(rb_compare_rows(cmp, &reps[0], &reps[1], opts), 0);
}

static void release(struct rb_compare *cmp, struct rb_compare_report reps[2])
{
	rb_compare_release(cmp);
	rb_compare_report_release(&reps[0]);
	rb_compare_report_release(&reps[1]);
}

/* ---- loading ---- */

static int parse_text(const char *text, struct rb_compare_report *rep)
{
	return rb_compare_parse(rep, text, strlen(text), "r.json");
}

static void test_load_fields(void **state)
{
	struct spec s = modeled("ffn_up-0", 1, 58.22);
	struct rb_compare_report rep;

	(void)state;
	s.names[1] = "ffn_up-1";
	s.status = "failed";
	make_report(&rep, &s, 1, "x.json");
	assert_int_equal(rep.n, 1);
	assert_string_equal(rep.label, "x.json");
	assert_int_equal(rep.entries[0].shape.m, 1);
	assert_int_equal(rep.entries[0].shape.n, 512);
	assert_int_equal(rep.entries[0].n_names, 2);
	assert_string_equal(rep.entries[0].names[1], "ffn_up-1");
	assert_string_equal(rep.entries[0].device, "sim");
	assert_true(rep.entries[0].modeled);
	assert_true(rep.entries[0].verify_failed);
	assert_near(rep.entries[0].median_us, 58.22, 0);
	assert_int_equal(rep.entries[0].n_samples, 10);
	rb_compare_report_release(&rep);
	assert_null(rep.entries);
}

/* Bad inputs and the message each must give (file name first). */
static void test_load_errors(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
	    {"", "r.json: file is empty"},
	    {"{\"schema\": \"rknn-bench/1\",\n \"results\": [",
	     "line 2, column 14: unexpected end"},
	    {"{\"schema\": \"rknn-bench/1\",\n \"results\": }",
	     "r.json: invalid JSON at line 2, column 13"},
	    {"{} {}", "extra text after the JSON value at line 1, column 4"},
	    {"[]", "r.json: not an rknn-bench report"},
	    {"{\"pairs\": []}", "r.json: no \"schema\" field"},
	    {"{\"schema\": 1}", "schema must be the string \"rknn-bench/1\""},
	    {"{\"schema\": \"rknn-bench/2\", \"results\": []}",
	     "r.json: schema is \"rknn-bench/2\" but compare reads \"rknn-bench/1\""},
	    {"{\"schema\": \"rknn-bench/1\"}", "r.json: results must be an array"},
	    {"{\"schema\": \"rknn-bench/1\", \"results\": [1]}", "results[0] must be an object"},
	    {"{\"schema\": \"rknn-bench/1\", \"results\": [{\"shape\": {\"m\": 0}}]}",
	     "results[0].shape.m must be an integer"},
	};
	struct rb_compare_report rep;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		assert_int_equal(parse_text(cases[i].text, &rep), -EINVAL);
		assert_contains(rb_last_error(), cases[i].msg);
		assert_null(rep.doc);
	}
}

/* A report with one result changed by `edit`; returns what parsing it returns. */
static int parse_edited(void (*edit)(cJSON *result), struct rb_compare_report *rep)
{
	struct spec s = modeled("a", 1, 10);
	cJSON *doc = cJSON_CreateObject(), *r = spec_json(&s);
	char *text;
	int ret;

	cJSON_AddStringToObject(doc, "schema", "rknn-bench/1");
	cJSON_AddItemToArray(cJSON_AddArrayToObject(doc, "results"), r);
	edit(r);
	text = cJSON_PrintUnformatted(doc);
	ret = parse_text(text, rep);
	free(text);
	cJSON_Delete(doc);
	return ret;
}

static void negative_median(cJSON *r)
{
	cJSON_SetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "stats"), "median_us"), -1);
}

static void null_sample(cJSON *r)
{
	cJSON *samples = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "stats"), "samples_us");

	cJSON_ReplaceItemInArray(samples, 3, cJSON_CreateNull());
}

static void no_names(cJSON *r)
{
	cJSON_ReplaceItemInObject(r, "names", cJSON_CreateArray());
}

static void modeled_string(cJSON *r)
{
	cJSON_ReplaceItemInObject(r, "modeled", cJSON_CreateString("yes"));
}

static void test_load_field_errors(void **state)
{
	struct rb_compare_report rep;

	(void)state;
	assert_int_equal(parse_edited(negative_median, &rep), -EINVAL);
	assert_contains(rb_last_error(), "r.json: results[0].stats.median_us must be a positive");
	assert_int_equal(parse_edited(null_sample, &rep), -EINVAL);
	assert_contains(rb_last_error(), "results[0].stats.samples_us must hold only");
	assert_int_equal(parse_edited(no_names, &rep), -EINVAL);
	assert_contains(rb_last_error(), "results[0].names must be a non-empty array");
	assert_int_equal(parse_edited(modeled_string, &rep), -EINVAL);
	assert_contains(rb_last_error(), "results[0].modeled must be true or false");
}

static void test_load_file(void **state)
{
	char path[] = "/tmp/test_compare_XXXXXX";
	const char *json = "{\"schema\": \"rknn-bench/1\", \"results\": [], \"extra\": 1}";
	struct rb_compare_report rep;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, json, strlen(json)), (ssize_t)strlen(json));
	close(fd);
	assert_int_equal(rb_compare_load(&rep, path), 0);
	assert_int_equal(rep.n, 0);
	rb_compare_report_release(&rep);
	unlink(path);
	assert_int_equal(rb_compare_load(&rep, path), -ENOENT);
	assert_contains(rb_last_error(), path);
}

/* ---- pairing ---- */

/* Pairs need the same m, k, n and dtype and a name in common. */
static void test_pairing(void **state)
{
	struct spec b[] = {modeled("ffn_up-0", 1, 100), modeled("attn_q", 128, 200),
			   modeled("gone", 4, 50), modeled("x", 2, 10)};
	struct spec n[] = {modeled("ffn_up-9", 1, 100), modeled("attn_q", 64, 200),
			   modeled("other", 128, 200), modeled("x", 2, 10),
			   modeled("ffn_up-1", 1, 110)};
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	b[0].names[1] = "ffn_up-1"; /* shares ffn_up-1 with n[4], nothing with n[0] */
	n[3].dtype = "int8";        /* same name and dims, other dtype */
	rb_compare_opts_init(&opts);
	compare(b, ARRAY_SIZE(b), n, ARRAY_SIZE(n), &opts, &cmp, reps);
	assert_int_equal(cmp.n_rows, 8);
	assert_int_equal(cmp.matched, 1);
	assert_int_equal(cmp.only_base, 3);
	assert_int_equal(cmp.only_new, 4);
	assert_ptr_equal(cmp.rows[0].base, &reps[0].entries[0]);
	assert_ptr_equal(cmp.rows[0].new_, &reps[1].entries[4]);
	assert_string_equal(cmp.rows[0].name, "ffn_up-1");
	assert_int_equal(cmp.rows[0].verdict, RB_VERDICT_REGRESSION);
	for (size_t i = 1; i < 4; i++) {
		assert_int_equal(cmp.rows[i].verdict, RB_VERDICT_ONLY_BASE);
		assert_true(isnan(cmp.rows[i].change));
	}
	assert_string_equal(cmp.rows[4].name, "ffn_up-9");
	assert_int_equal(cmp.rows[4].verdict, RB_VERDICT_ONLY_NEW);
	assert_int_equal(cmp.regressions, 1);
	release(&cmp, reps);
}

/* A name is used once: the second base result with the same shape and name pairs with
 * the second new one. */
static void test_pairing_duplicates(void **state)
{
	struct spec b[] = {modeled("a", 1, 100), modeled("a", 1, 200)};
	struct spec n[] = {modeled("a", 1, 100), modeled("a", 1, 200)};
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	rb_compare_opts_init(&opts);
	compare(b, 2, n, 2, &opts, &cmp, reps);
	assert_int_equal(cmp.matched, 2);
	assert_ptr_equal(cmp.rows[1].new_, &reps[1].entries[1]);
	release(&cmp, reps);
}

/* ---- verdicts and the geometric mean ---- */

static void test_verdicts_modeled(void **state)
{
	struct spec b[] = {modeled("same", 1, 100), modeled("up", 2, 100), modeled("down", 3, 100),
			   modeled("eq", 4, 100), modeled("edge", 5, 100)};
	struct spec n[] = {modeled("same", 1, 104), modeled("up", 2, 106), modeled("down", 3, 94),
			   modeled("eq", 4, 100), modeled("edge", 5, 105)};
	static const enum rb_verdict want[] = {RB_VERDICT_SAME, RB_VERDICT_REGRESSION,
					       RB_VERDICT_IMPROVEMENT, RB_VERDICT_IDENTICAL,
					       RB_VERDICT_SAME};
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	rb_compare_opts_init(&opts);
	compare(b, 5, n, 5, &opts, &cmp, reps);
	for (size_t i = 0; i < 5; i++) {
		assert_int_equal(cmp.rows[i].verdict, want[i]);
		assert_int_equal(cmp.rows[i].test, RB_TEST_EXACT);
	}
	assert_near(cmp.rows[1].change, 0.06, 1e-12);
	assert_int_equal(cmp.regressions, 1);
	assert_int_equal(cmp.improvements, 1);
	assert_string_equal(rb_verdict_name(RB_VERDICT_ONLY_BASE), "only in base");
	release(&cmp, reps);
}

/* Ratios 2, 1/2 and 1 have geometric mean 1 (change 0); 1.21 and 1 give 1.1. */
static void test_geomean(void **state)
{
	struct spec b[] = {modeled("a", 1, 100), modeled("b", 2, 100), modeled("c", 3, 100),
			   modeled("only", 4, 1)};
	struct spec n[] = {modeled("a", 1, 200), modeled("b", 2, 50), modeled("c", 3, 100)};
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	rb_compare_opts_init(&opts);
	compare(b, 4, n, 3, &opts, &cmp, reps);
	assert_int_equal(cmp.matched, 3);
	assert_near(cmp.geomean_change, 0, 1e-15);
	release(&cmp, reps);

	compare(b + 2, 1, n, 1, &opts, &cmp, reps); /* "c" and "a": nothing pairs */
	assert_int_equal(cmp.matched, 0);
	assert_true(isnan(cmp.geomean_change));
	release(&cmp, reps);
}

/* Ratios 1.21 and 1: geometric mean sqrt(1.21) = 1.1, a change of +10 %. */
static void test_geomean_ten_percent(void **state)
{
	struct spec b[] = {modeled("a", 1, 100), modeled("b", 2, 80)};
	struct spec n[] = {modeled("a", 1, 121), modeled("b", 2, 80)};
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	rb_compare_opts_init(&opts);
	compare(b, 2, n, 2, &opts, &cmp, reps);
	assert_near(cmp.geomean_change, 0.1, 1e-12);
	release(&cmp, reps);
}

/* A wrong result is a regression whatever its time, also when only in new. */
static void test_verify_failed(void **state)
{
	struct spec b[] = {modeled("a", 1, 100)};
	struct spec n[] = {modeled("a", 1, 80), modeled("new", 2, 10)};
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	n[0].status = "failed";
	n[1].status = "failed";
	rb_compare_opts_init(&opts);
	compare(b, 1, n, 2, &opts, &cmp, reps);
	assert_int_equal(cmp.rows[0].verdict, RB_VERDICT_REGRESSION);
	assert_true(cmp.rows[0].verify_failed);
	assert_int_equal(cmp.rows[1].verdict, RB_VERDICT_REGRESSION);
	assert_null(cmp.rows[1].base);
	assert_int_equal(cmp.regressions, 2);
	assert_int_equal(cmp.improvements, 0);
	release(&cmp, reps);
}

/* Different devices, or modeled against measured, are refused unless allowed. */
static void test_device_mismatch(void **state)
{
	struct spec b[] = {modeled("a", 1, 100)}, n[] = {modeled("a", 1, 100)};
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	rb_compare_opts_init(&opts);
	n[0].device = "cpu";
	n[0].modeled = false;
	make_report(&reps[0], b, 1, "base.json");
	make_report(&reps[1], n, 1, "new.json");
	assert_int_equal(rb_compare_rows(&cmp, &reps[0], &reps[1], &opts), -EINVAL);
	assert_contains(rb_last_error(), "'a' ran on 'sim' (modeled) in 'base.json' but on "
					 "'cpu' (measured) in 'new.json'");
	assert_contains(rb_last_error(), "--allow-device-mismatch");
	assert_null(cmp.rows);
	opts.allow_device_mismatch = true;
	assert_int_equal(rb_compare_rows(&cmp, &reps[0], &reps[1], &opts), 0);
	assert_int_equal(cmp.rows[0].test, RB_TEST_MWU);
	release(&cmp, reps);

	/* same device name, one side modeled: still not comparable */
	n[0].device = "sim";
	opts.allow_device_mismatch = false;
	make_report(&reps[0], b, 1, "base.json");
	make_report(&reps[1], n, 1, "new.json");
	assert_int_equal(rb_compare_rows(&cmp, &reps[0], &reps[1], &opts), -EINVAL);
	release(&cmp, reps);
}

/* ---- the gate: 10 % caught, 1 % ignored ---- */

/* Modeled: a report of three shapes, one slowed by 10 %, one by 1 %. */
static void test_gate_modeled(void **state)
{
	struct spec b[] = {modeled("ffn_up-0", 1, 58.22), modeled("ffn_out-0", 2, 49.37),
			   modeled("result_output", 3, 1234.5)};
	struct spec n[3];
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	memcpy(n, b, sizeof(b));
	n[0].median_us *= 1.10;
	n[1].median_us *= 1.01;
	rb_compare_opts_init(&opts);
	compare(b, 3, n, 3, &opts, &cmp, reps);
	assert_int_equal(cmp.rows[0].verdict, RB_VERDICT_REGRESSION);
	assert_int_equal(cmp.rows[1].verdict, RB_VERDICT_SAME);
	assert_int_equal(cmp.rows[2].verdict, RB_VERDICT_IDENTICAL);
	assert_int_equal(cmp.regressions, 1);
	assert_near(cmp.rows[0].change, 0.10, 1e-12);
	assert_near(cmp.geomean_change, cbrt(1.10 * 1.01) - 1, 1e-12);
	release(&cmp, reps);
}

/* Normal noise by Box-Muller, seeded. */
static double gauss(struct rb_rng *rng)
{
	double u1 = 1 - rb_rng_unit(rng), u2 = rb_rng_unit(rng);

	return sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2);
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* A measured result: n samples of mean_us with relative noise `cv`. */
static struct spec measured(const char *name, double mean_us, double cv, size_t n,
			    struct rb_rng *rng)
{
	struct spec s = {
	    .names = {name}, .m = 1, .k = 2048, .n = 8192, .device = "cpu", .n_samples = n};
	double sorted[MAX_SAMPLES];

	for (size_t i = 0; i < n; i++)
		s.samples[i] = mean_us * (1 + cv * gauss(rng));
	memcpy(sorted, s.samples, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	s.median_us = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	return s;
}

/* One measured comparison of `n` samples with 2 % noise, new slowed by `factor`. */
static enum rb_verdict judge_measured(uint64_t seed, double factor, size_t n,
				      struct rb_compare_row *out)
{
	struct rb_rng rng;
	struct spec b, nw;
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;
	enum rb_verdict v;

	rb_rng_init(&rng, seed);
	b = measured("ffn_up-0", 1000, 0.02, n, &rng);
	nw = measured("ffn_up-0", 1000 * factor, 0.02, n, &rng);
	rb_compare_opts_init(&opts);
	compare(&b, 1, &nw, 1, &opts, &cmp, reps);
	v = cmp.rows[0].verdict;
	if (out)
		*out = cmp.rows[0];
	release(&cmp, reps);
	return v;
}

/* With 2 % noise and 15 samples a side, every one of 50 seeds flags +10 % as a
 * significant regression and none flags +1 %. */
static void test_gate_measured(void **state)
{
	struct rb_compare_row row;

	(void)state;
	for (uint64_t seed = 1; seed <= 50; seed++) {
		assert_int_equal(judge_measured(seed, 1.10, 15, &row), RB_VERDICT_REGRESSION);
		assert_int_equal(row.test, RB_TEST_MWU);
		assert_true(row.significant);
		assert_true(row.p < 0.001);
		assert_true(row.change > 0.05);
		assert_int_not_equal(judge_measured(seed, 1.01, 15, &row), RB_VERDICT_REGRESSION);
		assert_int_not_equal(judge_measured(seed, 1 / 1.01, 15, NULL),
				     RB_VERDICT_IMPROVEMENT);
		assert_int_equal(judge_measured(seed, 1 / 1.10, 15, NULL), RB_VERDICT_IMPROVEMENT);
	}
}

/* The threshold is not enough on a clock: a 6 % change of the median from samples
 * that overlap (two interleaved sets) is not significant, so not a regression. */
static void test_gate_not_significant(void **state)
{
	struct spec b = {.names = {"a"},
			 .m = 1,
			 .k = 1,
			 .n = 1,
			 .device = "cpu",
			 .median_us = 100,
			 .n_samples = 9,
			 .samples = {60, 70, 80, 90, 100, 110, 120, 130, 140}};
	struct spec n = b;
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	n.median_us = 106;
	n.samples[4] = 106;
	rb_compare_opts_init(&opts);
	compare(&b, 1, &n, 1, &opts, &cmp, reps);
	assert_int_equal(cmp.rows[0].test, RB_TEST_MWU);
	assert_false(cmp.rows[0].significant);
	assert_true(cmp.rows[0].p > 0.5);
	assert_int_equal(cmp.rows[0].verdict, RB_VERDICT_SAME);
	assert_int_equal(cmp.regressions, 0);
	release(&cmp, reps);
}

/* Fewer than 9 samples on a side: the threshold alone decides. */
static void test_gate_few_samples(void **state)
{
	struct rb_compare_row row;

	(void)state;
	assert_int_equal(judge_measured(7, 1.10, 8, &row), RB_VERDICT_REGRESSION);
	assert_int_equal(row.test, RB_TEST_THRESHOLD);
	assert_true(isnan(row.p));
	assert_int_equal(judge_measured(7, 1.01, 8, &row), RB_VERDICT_SAME);
	assert_int_equal(judge_measured(7, 1.10, 9, &row), RB_VERDICT_REGRESSION);
	assert_int_equal(row.test, RB_TEST_MWU);
}

/* The same measured report twice is identical (p = 1). */
static void test_measured_identical(void **state)
{
	struct rb_rng rng;
	struct spec b;
	struct rb_compare_opts opts;
	struct rb_compare_report reps[2];
	struct rb_compare cmp;

	(void)state;
	rb_rng_init(&rng, 3);
	b = measured("a", 500, 0.05, 20, &rng);
	rb_compare_opts_init(&opts);
	compare(&b, 1, &b, 1, &opts, &cmp, reps);
	assert_int_equal(cmp.rows[0].verdict, RB_VERDICT_IDENTICAL);
	assert_near(cmp.rows[0].p, 1, 0);
	release(&cmp, reps);
}

/* What calibrate and the page read of a report, typed: the config's strings, the
 * rates and roofline, the context's host and first settings warning, the totals (kind
 * and per checked against m), and a fingerprint that is the evidence's, not the text's. */
#define TYPED_REPORT(ws, median)                                                                   \
	"{\"schema\":\"rknn-bench/1\"," ws "\"context\":{\"host\":\"b1\",\"host_settings\":"       \
	"{\"warnings\":[\"governor ondemand\"]}},\"results\":[{\"shape\":{\"m\":1,\"k\":64,\"n\":" \
	"64,\"dtype\":\"fp16\"},\"names\":[\"a\"],\"device\":\"sim\",\"modeled\":true,\"config\":" \
	"{\"plan\":\"mask=0x1\",\"launch\":\"fences\",\"driver\":\"rknpu\"},\"stats\":{"           \
	"\"median_us\":" median "},\"gflops\":0.5,\"roofline\":{\"intensity_flop_per_byte\":"      \
	"2,\"peak_gflops\":1000,\"ddr_gbps\":20}}],\"totals\":[{\"m\":1,\"kind\":\"decode\","      \
	"\"per\":\"token\",\"pairs\":1,\"total_us\":30}]}"

static void test_typed_report(void **state)
{
	static const char text[] = TYPED_REPORT("", "30");
	static const char spaced[] = TYPED_REPORT(" \n ", "30");
	static const char other[] = TYPED_REPORT("", "31");
	static const char bad_kind[] = "{\"schema\":\"rknn-bench/1\",\"results\":[],\"totals\":"
				       "[{\"m\":4,\"kind\":\"decode\",\"pairs\":1,"
				       "\"total_us\":null}]}";
	struct rb_compare_report a, b, c;
	const struct rb_compare_entry *e;

	(void)state;
	assert_int_equal(rb_compare_parse(&a, text, sizeof(text) - 1, "a.json"), 0);
	e = &a.entries[0];
	assert_string_equal(e->plan, "mask=0x1");
	assert_string_equal(e->launch, "fences");
	assert_string_equal(e->driver, "rknpu");
	assert_true(e->gflops == 0.5 && e->roofline.present && e->roofline.intensity == 2 &&
		    e->roofline.peak_gflops == 1000 && e->roofline.ddr_gbps == 20);
	assert_string_equal(a.host, "b1");
	assert_string_equal(a.settings_warning, "governor ondemand");
	assert_int_equal(a.n_totals, 1);
	assert_true(a.totals[0].m == 1 && a.totals[0].complete && a.totals[0].total_us == 30);
	assert_int_equal(rb_compare_parse(&b, spaced, sizeof(spaced) - 1, "b.json"), 0);
	assert_true(a.fingerprint == b.fingerprint); /* the same evidence, other whitespace */
	assert_int_equal(rb_compare_parse(&c, other, sizeof(other) - 1, "c.json"), 0);
	assert_true(a.fingerprint != c.fingerprint); /* another result */
	rb_compare_report_release(&a);
	rb_compare_report_release(&b);
	rb_compare_report_release(&c);
	assert_int_equal(rb_compare_parse(&a, bad_kind, sizeof(bad_kind) - 1, "k.json"), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "k.json: totals[0] needs"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mwu_tortoise_hare),
	    cmocka_unit_test(test_mwu_exact_small),
	    cmocka_unit_test(test_mwu_exact_unequal),
	    cmocka_unit_test(test_mwu_ties_normal),
	    cmocka_unit_test(test_mwu_identical),
	    cmocka_unit_test(test_mwu_separated_normal),
	    cmocka_unit_test(test_mwu_errors),
	    cmocka_unit_test(test_load_fields),
	    cmocka_unit_test(test_load_errors),
	    cmocka_unit_test(test_load_field_errors),
	    cmocka_unit_test(test_load_file),
	    cmocka_unit_test(test_pairing),
	    cmocka_unit_test(test_pairing_duplicates),
	    cmocka_unit_test(test_verdicts_modeled),
	    cmocka_unit_test(test_geomean),
	    cmocka_unit_test(test_geomean_ten_percent),
	    cmocka_unit_test(test_verify_failed),
	    cmocka_unit_test(test_device_mismatch),
	    cmocka_unit_test(test_gate_modeled),
	    cmocka_unit_test(test_gate_measured),
	    cmocka_unit_test(test_gate_not_significant),
	    cmocka_unit_test(test_gate_few_samples),
	    cmocka_unit_test(test_measured_identical),
	    cmocka_unit_test(test_typed_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
