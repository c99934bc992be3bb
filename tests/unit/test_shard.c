/* tune --shard: parsing I/N and the split of the work (tune/shard.h). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/error.h"
#include "tune/shard.h"
#include "tune/tune.h"

/* Six unique shapes (one repeated under another name), as configs/regression.json. */
static const char shapes_json[] =
    "{\"pairs\":["
    "{\"src0\":{\"row\":1,\"col\":2048},\"src1\":{\"row\":2048,\"col\":8192},\"name\":\"a\"},"
    "{\"src0\":{\"row\":1,\"col\":8192},\"src1\":{\"row\":8192,\"col\":2048},\"name\":\"b\"},"
    "{\"src0\":{\"row\":128,\"col\":2048},\"src1\":{\"row\":2048,\"col\":2048},\"name\":\"c\"},"
    "{\"src0\":{\"row\":1,\"col\":2048},\"src1\":{\"row\":2048,\"col\":8192},\"name\":\"d\"},"
    "{\"src0\":{\"row\":128,\"col\":2048},\"src1\":{\"row\":2048,\"col\":8192},\"name\":\"e\"},"
    "{\"src0\":{\"row\":16,\"col\":256},\"src1\":{\"row\":256,\"col\":256},\"name\":\"f\"},"
    "{\"src0\":{\"row\":64,\"col\":512},\"src1\":{\"row\":512,\"col\":512},\"name\":\"g\"}]}";

static void load(struct rb_shape_list *l)
{
	rb_shape_list_init(l);
	assert_int_equal(rb_shape_list_load_string(l, shapes_json, strlen(shapes_json), "s.json"),
			 0);
}

static void plan_of(struct rb_tune_shard_plan *p, const struct rb_shape_list *l, unsigned n)
{
	struct rb_tune_space space;

	rb_tune_space_default(&space);
	assert_int_equal(rb_tune_shard_plan_init(p, l, &space, n), 0);
}

static void split(const struct rb_shape_list *l, unsigned i, unsigned n,
		  struct rb_tune_shard_work *w)
{
	struct rb_tune_shard s = {i, n};
	struct rb_tune_shard_plan p;

	plan_of(&p, l, n);
	rb_tune_shard_split(&p, l, &s, w);
	rb_tune_shard_plan_release(&p);
}

static void test_parse(void **state)
{
	struct rb_tune_shard s;
	static const char *const bad[] = {"",     "1",   "0/4",  "5/4",  "1/0",   "-1/4",
					  "1/-4", "a/4", "1/4x", "1//4", "1/257", " 1/4"};

	(void)state;
	assert_int_equal(rb_tune_shard_parse("2/4", &s), 0);
	assert_int_equal(s.index, 2);
	assert_int_equal(s.count, 4);
	assert_int_equal(rb_tune_shard_parse("1/1", &s), 0);
	assert_true(rb_tune_shard_active(&s));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(rb_tune_shard_parse(bad[i], &s), -EINVAL);
		assert_non_null(strstr(rb_last_error(), "--shard"));
	}
}

/* Every unique shape falls to exactly one shard, whole; repeats to none. */
static void test_every_shape_once(void **state)
{
	struct rb_shape_list l;
	struct rb_tune_shard_work w[4][8];

	(void)state;
	load(&l);
	for (unsigned n = 1; n <= 4; n++) {
		int owners[8] = {0};

		for (unsigned i = 1; i <= n; i++)
			split(&l, i, n, w[i - 1]);
		for (size_t e = 0; e < l.count; e++) {
			for (unsigned i = 0; i < n; i++) {
				owners[e] += w[i][e].mine;
				if (w[i][e].mine)
					assert_int_equal(w[i][e].slices, 1);
			}
		}
		for (size_t e = 0; e < l.count; e++)
			assert_int_equal(owners[e], 1);
	}
	rb_shape_list_release(&l);
}

/* Longest processing time first: the shape of the most modeled work alone on shard 1,
 * then each shape to the least loaded shard, so no two shards differ by more than the
 * largest shape; a shard's work is its shapes'; the same I/N gives the same work. */
static void test_balanced_and_deterministic(void **state)
{
	struct rb_shape_list l;
	struct rb_tune_shard_plan p;
	struct rb_tune_shard_work a[8], b[8];
	double most = 0, sum[3] = {0}, lo = INFINITY, hi = 0;

	(void)state;
	load(&l);
	plan_of(&p, &l, 3);
	assert_int_equal(p.n_units, 6);
	for (size_t u = 0; u < p.n_units; u++) {
		assert_true(p.units[u].configs > 0 && p.units[u].tasks > 0);
		sum[p.units[u].shard] += p.units[u].seconds;
		most = fmax(most, p.units[u].seconds);
	}
	for (unsigned s = 0; s < 3; s++) {
		assert_float_equal(sum[s], p.seconds[s], 1e-9);
		lo = fmin(lo, p.seconds[s]);
		hi = fmax(hi, p.seconds[s]);
	}
	assert_true(hi - lo <= most);
	split(&l, 1, 3, a);
	for (size_t u = 0; u < p.n_units; u++)
		assert_int_equal(a[p.units[u].entry].mine, p.units[u].seconds == most);
	split(&l, 2, 3, a);
	split(&l, 2, 3, b);
	assert_memory_equal(a, b, l.count * sizeof(a[0]));
	rb_tune_shard_plan_release(&p);
	rb_shape_list_release(&l);
}

/* The work, not the multiply-adds: with K = 8192 the K-slices add configs and tasks
 * (measured: 37 CPU s against 7 for the same multiply-adds with N = 8192). */
static void test_work_not_macs(void **state)
{
	static const char json[] =
	    "{\"pairs\":["
	    "{\"src0\":{\"row\":512,\"col\":2048},\"src1\":{\"row\":2048,\"col\":8192},"
	    "\"name\":\"up\"},"
	    "{\"src0\":{\"row\":512,\"col\":8192},\"src1\":{\"row\":8192,\"col\":2048},"
	    "\"name\":\"down\"}]}";
	struct rb_shape_list l;
	struct rb_tune_shard_plan p;

	(void)state;
	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_load_string(&l, json, strlen(json), "w.json"), 0);
	plan_of(&p, &l, 1);
	assert_int_equal(p.n_units, 2);
	assert_true(p.units[1].configs > p.units[0].configs);
	assert_true(p.units[1].seconds > 3 * p.units[0].seconds);
	assert_float_equal(p.seconds[0], p.units[0].seconds + p.units[1].seconds, 1e-9);
	rb_tune_shard_plan_release(&p);
	rb_shape_list_release(&l);
}

/* One shape pinned to two cores (ggml-rknn slices) is one unit: both in one shard. */
static void test_cores_of_a_shape_together(void **state)
{
	static const char json[] =
	    "{\"pairs\":["
	    "{\"src0\":{\"row\":1,\"col\":256},\"src1\":{\"row\":256,\"col\":64},"
	    "\"name\":\"a\",\"core\":0},"
	    "{\"src0\":{\"row\":1,\"col\":256},\"src1\":{\"row\":256,\"col\":96},"
	    "\"name\":\"b\",\"core\":1},"
	    "{\"src0\":{\"row\":1,\"col\":256},\"src1\":{\"row\":256,\"col\":64},"
	    "\"name\":\"c\",\"core\":1}]}";
	struct rb_shape_list l;
	struct rb_tune_shard_work w[2][4];

	(void)state;
	rb_shape_list_init(&l);
	assert_int_equal(rb_shape_list_load_string(&l, json, strlen(json), "c.json"), 0);
	assert_int_equal(l.count, 3);
	split(&l, 1, 2, w[0]);
	split(&l, 2, 2, w[1]);
	for (unsigned i = 0; i < 2; i++) {
		assert_int_equal(w[i][0].mine, w[i][2].mine);
		assert_int_not_equal(w[i][0].mine, w[i][1].mine);
	}
	rb_shape_list_release(&l);
}

/* More shards than shapes: shard s takes shape s mod U as slice s div U; the slices of
 * a shape are 0..S-1, each once. */
static void test_slices(void **state)
{
	struct rb_shape_list l;
	struct rb_tune_shard_work w[8];
	const size_t u = 6; /* unique shapes */
	unsigned seen[8][8] = {{0}};

	(void)state;
	load(&l);
	assert_int_equal(l.count, u);
	for (unsigned i = 1; i <= 14; i++) {
		unsigned mine = 0;

		split(&l, i, 14, w);
		for (size_t e = 0; e < l.count; e++) {
			if (!w[e].mine)
				continue;
			mine++;
			assert_int_equal(e, (i - 1) % u);
			assert_int_equal(w[e].slice, (i - 1) / u);
			assert_int_equal(w[e].slices, e < 14 % u ? 3 : 2);
			seen[e][w[e].slice]++;
		}
		assert_int_equal(mine, 1);
	}
	for (size_t e = 0; e < u; e++)
		for (unsigned s = 0; s < (e < 14 % u ? 3u : 2u); s++)
			assert_int_equal(seen[e][s], 1);
	rb_shape_list_release(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_every_shape_once),
	    cmocka_unit_test(test_balanced_and_deterministic),
	    cmocka_unit_test(test_work_not_macs),
	    cmocka_unit_test(test_cores_of_a_shape_together),
	    cmocka_unit_test(test_slices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
