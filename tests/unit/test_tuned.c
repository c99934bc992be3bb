/* The tuned-kernel reader a backend links: loading, lookup fallbacks, errors. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rknn_bench/tuned.h"

#define TUNED(cfg, launch)                                                                         \
	"\"tuned\":{\"config\":\"" cfg "\",\"launch\":\"" launch "\",\"split\":{\"axis\":\"n\","   \
	"\"ranges\":[{\"core\":0,\"begin\":0,\"end\":2720,\"tasks\":34},"                          \
	"{\"core\":1,\"begin\":2720,\"end\":8192,\"tasks\":69}]}}"

static const char doc[] =
    "{\"schema\":\"rknn-bench-tuned/1\",\"device\":\"sim\",\"driver\":\"0.9.8\","
    "\"soc\":\"rk3588\",\"generated\":\"2026-11-22T00:00:00Z\",\"future\":{\"x\":1},\"pairs\":["
    "{\"src0\":{\"row\":1,\"col\":2048},\"src1\":{\"row\":2048,\"col\":8192},\"name\":\"up-"
    "0\"," TUNED(
	"mask=0x3 split=n:1,2 banks=1:11",
	"fences") ",\"measured\":{\"device\":\"sim\",\"modeled\":true,\"median_us\":1169.902,"
		  "\"speedup_vs_cpu\":null,\"verify\":\"verified\",\"unknown\":[1]}},"
		  "{\"src0\":{\"row\":1,\"col\":2048},\"src1\":{\"row\":2048,\"col\":8192},"
		  "\"name\":\"up-1\"," TUNED(
		      "mask=0x7 banks=2:10",
		      "threads") "},"
				 "{\"src0\":{\"row\":16,\"col\":2048},\"src1\":{\"row\":2048,"
				 "\"col\":8192},\"name\":\"up-16\"," TUNED(
				     "mask=0x5",
				     "fences") "},"
					       "{\"src0\":{\"row\":1,\"col\":8192},\"src1\":{"
					       "\"row\":8192,\"col\":2048},\"name\":\"down\","
					       "\"tuned\":null},"
					       "{\"src0\":{\"row\":1,\"col\":64},\"src1\":{\"row\":"
					       "64,\"col\":64},\"name\":\"i8\","
					       "\"dtype\":\"int8\"," TUNED("mask=0x1",
									   "fences") "}]}";

static struct rb_tuned_db *load(void)
{
	struct rb_tuned_db *db;

	assert_int_equal(rb_tuned_load_string(&db, doc, strlen(doc), "tuned.json"), 0);
	return db;
}

static void test_load(void **state)
{
	struct rb_tuned_db *db = load();
	const struct rb_tuned_config *t;

	(void)state;
	assert_int_equal(rb_tuned_count(db), 4); /* "down" has no tuned config */
	t = rb_tuned_at(db, 0);
	assert_string_equal(t->name, "up-0");
	assert_int_equal(t->shape.m, 1);
	assert_int_equal(t->shape.k, 2048);
	assert_int_equal(t->shape.n, 8192);
	assert_int_equal(t->core_mask, 3);
	assert_string_equal(t->split_axis, "n");
	assert_int_equal(t->data_banks, 1);
	assert_int_equal(t->weight_banks, 11);
	assert_true(t->resident && t->chain);
	assert_int_equal(t->n_ranges, 2);
	assert_int_equal(t->ranges[1].begin, 2720);
	assert_int_equal(t->ranges[1].tasks, 69);
	assert_true(t->modeled);
	assert_true(t->median_us == 1169.902);
	assert_true(isnan(t->speedup_vs_cpu));
	assert_string_equal(t->verify, "verified");
	assert_string_equal(rb_tuned_info(db, "driver"), "0.9.8");
	assert_string_equal(rb_tuned_info(db, "nope"), "");
	assert_int_equal(rb_tuned_at(db, 3)->shape.dtype, RB_DTYPE_INT8);
	assert_null(rb_tuned_at(db, 4));
	rb_tuned_free(db);
}

/* name -> shape -> nearest M of the same K, N and dtype -> none. */
static void test_lookup(void **state)
{
	struct rb_tuned_db *db = load();
	enum rb_tuned_match how;
	const struct rb_tuned_config *t;

	(void)state;
	t = rb_tuned_lookup(db, 1, 2048, 8192, RB_DTYPE_FP16, "up-1", &how);
	assert_true(t && how == RB_TUNED_NAME && strcmp(t->launch, "threads") == 0);
	/* a name given with another shape does not match by name */
	t = rb_tuned_lookup(db, 16, 2048, 8192, RB_DTYPE_FP16, "up-1", &how);
	assert_true(t && how == RB_TUNED_SHAPE && strcmp(t->name, "up-16") == 0);
	t = rb_tuned_lookup(db, 1, 2048, 8192, RB_DTYPE_FP16, NULL, &how);
	assert_true(t && how == RB_TUNED_SHAPE && strcmp(t->name, "up-0") == 0);
	t = rb_tuned_lookup(db, 6, 2048, 8192, RB_DTYPE_FP16, "blk.3.up", &how);
	assert_true(t && how == RB_TUNED_BUCKET && t->shape.m == 1);
	t = rb_tuned_lookup(db, 12, 2048, 8192, RB_DTYPE_FP16, NULL, &how);
	assert_true(t && how == RB_TUNED_BUCKET && t->shape.m == 16);
	t = rb_tuned_lookup(db, 8, 2048, 8192, RB_DTYPE_FP16, NULL, &how); /* 7 from 1, 8 from 16 */
	assert_true(t && t->shape.m == 1);
	t = rb_tuned_lookup(db, 9, 2048, 8192, RB_DTYPE_FP16, NULL, &how);
	assert_true(t && t->shape.m == 16);
	assert_null(rb_tuned_lookup(db, 1, 2048, 8192, RB_DTYPE_INT8, NULL, &how));
	assert_int_equal(how, RB_TUNED_NONE);
	assert_null(rb_tuned_lookup(db, 1, 8192, 2048, RB_DTYPE_FP16, "down", &how));
	assert_null(rb_tuned_lookup(db, 1, 4096, 8192, RB_DTYPE_FP16, NULL, NULL));
	t = rb_tuned_lookup(db, 1, 64, 64, RB_DTYPE_INT8, "i8", &how);
	assert_true(t && how == RB_TUNED_NAME);
	assert_null(rb_tuned_lookup(NULL, 1, 64, 64, RB_DTYPE_INT8, "i8", &how));
	assert_string_equal(rb_tuned_match_name(RB_TUNED_BUCKET), "bucket");
	rb_tuned_free(db);
}

static void expect_error(const char *json, const char *message)
{
	struct rb_tuned_db *db = (struct rb_tuned_db *)1;

	assert_int_equal(rb_tuned_load_string(&db, json, strlen(json), "t.json"), -EINVAL);
	assert_null(db);
	if (!strstr(rb_last_error(), message))
		fail_msg("'%s' lacks '%s'", rb_last_error(), message);
}

#define PAIR0                                                                                      \
	"{\"schema\":\"rknn-bench-tuned/1\",\"pairs\":[{\"src0\":{\"row\":1,\"col\":32},"          \
	"\"src1\":{\"row\":32,\"col\":16},\"name\":\"a\""

static void test_errors(void **state)
{
	(void)state;
	expect_error("{\"pairs\":[]}", "t.json: schema must be \"rknn-bench-tuned/1\"");
	expect_error("{\"schema\":\"rknn-bench-tuned/2\",\"pairs\":[]}", "schema must be");
	expect_error("{\"schema\":\"rknn-bench-tuned/1\"}", "t.json: pairs must be an array");
	expect_error("{\"schema\":\"rknn-bench-tuned/1\",\"pairs\":[]} x",
		     "t.json: extra text after the JSON value at line 1, column 44");
	expect_error("[]", "t.json: the top level must be an object");
	expect_error(PAIR0 ",\"tuned\":{\"launch\":\"fences\"}}]}",
		     "t.json: pairs[0].tuned.config must be a string");
	expect_error(PAIR0 ",\"tuned\":{\"config\":\"mask=0x9\",\"launch\":\"fences\"}}]}",
		     "t.json: pairs[0].tuned.config: core mask '0x9' must be 0x1 to 0x7");
	expect_error(PAIR0 ",\"tuned\":{\"config\":\"mask=0x1\",\"launch\":3}}]}",
		     "pairs[0].tuned.launch must be a string");
	expect_error(PAIR0 ",\"tuned\":{\"config\":\"mask=0x1\",\"confg\":\"mask=0x7\","
			   "\"launch\":\"fences\"}}]}",
		     "t.json: pairs[0].tuned.confg: unknown key; did you mean \"config\"?");
	expect_error(PAIR0 ",\"tuned\":{\"config\":\"mask=0x1\",\"launch\":\"fences\"},"
			   "\"measurd\":{}}]}",
		     "t.json: pairs[0].measurd: unknown key; did you mean \"measured\"?");
	expect_error("{\"schema\":\"rknn-bench-tuned/1.x\",\"pairs\":[]}", "schema must be");
	expect_error("{\"schema\":\"rknn-bench-tuned/10\",\"pairs\":[]}", "schema must be");
	expect_error(PAIR0 ",\"tuned\":{\"config\":\"mask=0x1\",\"launch\":\"fences\"},"
			   "\"measured\":{\"median_us\":\"fast\"}}]}",
		     "pairs[0].measured.median_us must be a number or null");
	expect_error("{\"schema\":\"rknn-bench-tuned/1\",\"pairs\":[{\"src0\":{\"row\":1,\"col\":"
		     "32},\"src1\":{\"row\":31,\"col\":16},\"name\":\"a\"}]}",
		     "pairs[0].src1.row is 31 but src0.col is 32");
	expect_error("{\"schema\":\"rknn-bench-tuned/1\",\"pairs\":[{\"src0\":{\"row\":0,\"col\":"
		     "32},\"src1\":{\"row\":32,\"col\":16},\"name\":\"a\"}]}",
		     "pairs[0].src0.row must be an integer from 1");
	expect_error("{\"schema\":\"rknn-bench-tuned/1\",\"pairs\":[{\"src0\":{\"row\":1,\"col\":"
		     "32},\"src1\":{\"row\":32,\"col\":16}}]}",
		     "pairs[0].name must be a non-empty string");
}

/* Schema 1.x is read forward-compatibly: every launch tune writes loads, and what this
 * version does not know (a key of "tuned", a launch mode) is a warning, not an error. */
static void test_forward_compatible(void **state)
{
	static const char json[] =
	    "{\"schema\":\"rknn-bench-tuned/1.7\",\"pairs\":["
	    "{\"src0\":{\"row\":1,\"col\":32},\"src1\":{\"row\":32,\"col\":16},\"name\":\"mc\","
	    "\"tuned\":{\"config\":\"mask=0x7\",\"launch\":\"multicore\"}},"
	    "{\"src0\":{\"row\":2,\"col\":32},\"src1\":{\"row\":32,\"col\":16},\"name\":\"new\","
	    "\"tuned\":{\"config\":\"mask=0x1\",\"launch\":\"warp\",\"turbo\":true}}]}";
	struct rb_tuned_db *db;
	const struct rb_tuned_config *t;

	(void)state;
	assert_int_equal(rb_tuned_load_string(&db, json, strlen(json), "t.json"), 0);
	assert_int_equal(rb_tuned_count(db), 2);
	t = rb_tuned_at(db, 0);
	assert_string_equal(t->launch, "multicore");
	assert_int_equal(t->core_mask, 7);
	t = rb_tuned_at(db, 1);
	assert_string_equal(t->launch, "fences");
	assert_int_equal(rb_tuned_warning_count(db), 2);
	assert_non_null(
	    strstr(rb_tuned_warning(db, 0), "t.json: pairs[1].tuned.turbo: unknown key"));
	assert_non_null(strstr(rb_tuned_warning(db, 1), "tuned.launch \"warp\" is not known"));
	assert_string_equal(rb_tuned_warning(db, 2), "");
	rb_tuned_free(db);
}

/* What tune writes for issue 30: a slice of `shapes --for ggml-rknn` with its "core",
 * a tuned config with its modeled "host_us": known keys, read without a warning; a near
 * miss of "core" is a typo. */
static void test_slices_and_host(void **state)
{
	static const char json[] =
	    "{\"schema\":\"rknn-bench-tuned/1\",\"pairs\":["
	    "{\"src0\":{\"row\":1,\"col\":2048},\"src1\":{\"row\":2048,\"col\":2720},"
	    "\"name\":\"ffn_up-0:core1:2720-5440\",\"core\":1,"
	    "\"tuned\":{\"config\":\"mask=0x2\",\"launch\":\"fences\",\"host_us\":1.8},"
	    "\"measured\":{\"median_us\":954.2}}]}";
	struct rb_tuned_db *db;
	enum rb_tuned_match how;
	const struct rb_tuned_config *t;

	(void)state;
	assert_int_equal(rb_tuned_load_string(&db, json, strlen(json), "t.json"), 0);
	assert_int_equal(rb_tuned_warning_count(db), 0);
	t = rb_tuned_lookup(db, 1, 2048, 2720, RB_DTYPE_FP16, NULL, &how);
	assert_non_null(t);
	assert_int_equal(how, RB_TUNED_SHAPE);
	assert_int_equal(t->core_mask, 2);
	rb_tuned_free(db);
	expect_error(PAIR0
		     ",\"cor\":1,\"tuned\":{\"config\":\"mask=0x1\",\"launch\":\"fences\"}}]}",
		     "t.json: pairs[0].cor: unknown key; did you mean \"core\"?");
}

static void test_load_file_missing(void **state)
{
	struct rb_tuned_db *db;

	(void)state;
	assert_true(rb_tuned_load_file(&db, "/nonexistent/tuned.json") < 0);
	assert_null(db);
	assert_non_null(strstr(rb_last_error(), "/nonexistent/tuned.json"));
	rb_tuned_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_load),
	    cmocka_unit_test(test_lookup),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_forward_compatible),
	    cmocka_unit_test(test_slices_and_host),
	    cmocka_unit_test(test_load_file_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
