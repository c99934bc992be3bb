/* Unit tests of core/stats: statistics of hand-computed arrays, outlier counting, and
 * the sampling loop driven by a fake timed run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "assert.h"

#include <errno.h>
#include <math.h>
#include <time.h>

#include "core/stats.h"
#include "core/util.h"

/* {1, 2, 3, 4, 100}: mean 22; squared deviations 441+400+361+324+6084 = 7610, over
 * n-1 = 4 gives 1902.5; |x - 3| = {2,1,0,1,97} has median 1; p90: h = 3.6, so
 * 4 + 0.6·(100 - 4) = 61.6; 100 scores 0.6745·97/1 = 65.4, an outlier; 1 scores 1.35. */
static void test_odd_with_outlier(void **state)
{
	const double x[] = {3, 100, 1, 4, 2};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_stats_compute(&s, x, ARRAY_SIZE(x)), 0);
	assert_int_equal(s.n, 5);
	assert_near(s.min_us, 1, 0);
	assert_near(s.max_us, 100, 0);
	assert_near(s.median_us, 3, 0);
	assert_near(s.mean_us, 22, 1e-12);
	assert_near(s.stddev_us, sqrt(1902.5), 1e-9);
	assert_near(s.cv, sqrt(1902.5) / 22, 1e-12);
	assert_near(s.mad_us, 1, 0);
	assert_near(s.p90_us, 61.6, 1e-9);
	assert_int_equal(s.outliers, 1);
	/* The samples keep the order they were measured in. */
	assert_near(s.samples_us[0], 3, 0);
	assert_near(s.samples_us[1], 100, 0);
	rb_stats_release(&s);
	assert_null(s.samples_us);
	assert_int_equal(s.n, 0);
}

/* {4, 1, 3, 2}: median (2+3)/2 = 2.5; |x - 2.5| = {1.5,.5,.5,1.5}, MAD 1; variance
 * (2.25+.25+.25+2.25)/3 = 5/3; p90: h = 2.7, 3 + 0.7·1 = 3.7; no outliers. */
static void test_even(void **state)
{
	const double x[] = {4, 1, 3, 2};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_stats_compute(&s, x, ARRAY_SIZE(x)), 0);
	assert_near(s.median_us, 2.5, 0);
	assert_near(s.mean_us, 2.5, 0);
	assert_near(s.stddev_us, sqrt(5.0 / 3), 1e-12);
	assert_near(s.mad_us, 1, 0);
	assert_near(s.p90_us, 3.7, 1e-12);
	assert_int_equal(s.outliers, 0);
	rb_stats_release(&s);
}

static void test_single_sample(void **state)
{
	const double x[] = {42.5};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_stats_compute(&s, x, 1), 0);
	assert_near(s.min_us, 42.5, 0);
	assert_near(s.median_us, 42.5, 0);
	assert_near(s.p90_us, 42.5, 0);
	assert_near(s.max_us, 42.5, 0);
	assert_near(s.mad_us, 0, 0);
	assert_true(isnan(s.stddev_us));
	assert_true(isnan(s.cv));
	assert_int_equal(s.outliers, 0);
	rb_stats_release(&s);
}

/* MAD = 0: nine samples of 10 and one of 20. meanAD = 1, so 20 scores
 * 10 / 1.253314 = 7.98 > 3.5: an outlier. */
static void test_mad_zero_outlier(void **state)
{
	const double x[] = {10, 10, 10, 20, 10, 10, 10, 10, 10, 10};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_stats_compute(&s, x, ARRAY_SIZE(x)), 0);
	assert_near(s.mad_us, 0, 0);
	assert_int_equal(s.outliers, 1);
	rb_stats_release(&s);
}

/* MAD = 0 with a quantised clock: six 10s and four 11s. meanAD = 0.4, so 11 scores
 * 1 / (1.253314·0.4) = 1.99: no outlier. All-equal samples have none either. */
static void test_mad_zero_no_outlier(void **state)
{
	const double x[] = {10, 11, 10, 11, 10, 11, 10, 11, 10, 10};
	const double same[] = {7, 7, 7, 7};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_stats_compute(&s, x, ARRAY_SIZE(x)), 0);
	assert_near(s.median_us, 10, 0);
	assert_near(s.mad_us, 0, 0);
	assert_int_equal(s.outliers, 0);
	rb_stats_release(&s);
	assert_int_equal(rb_stats_compute(&s, same, ARRAY_SIZE(same)), 0);
	assert_int_equal(s.outliers, 0);
	assert_near(s.stddev_us, 0, 0);
	assert_near(s.cv, 0, 0);
	rb_stats_release(&s);
}

/* Two outliers on both sides: median 100, MAD 1 ({99..101} deviations), threshold
 * 3.5/0.6745 = 5.19 µs from the median; 94.7 and 105.3 are beyond, 95 and 105 not. */
static void test_outlier_threshold(void **state)
{
	const double x[] = {100, 99, 101, 100, 99, 101, 100, 94.7, 105.3, 95, 105};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_stats_compute(&s, x, ARRAY_SIZE(x)), 0);
	assert_near(s.median_us, 100, 0);
	assert_near(s.mad_us, 1, 0);
	assert_int_equal(s.outliers, 2);
	rb_stats_release(&s);
}

static void test_bad_input(void **state)
{
	const double x[] = {1, NAN};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_stats_compute(&s, x, 0), -EINVAL);
	assert_null(s.samples_us);
	assert_int_equal(rb_stats_compute(&s, NULL, 3), -EINVAL);
	assert_int_equal(rb_stats_compute(&s, x, 2), -EINVAL);
	rb_stats_release(&s); /* safe on an empty struct */
}

/* A fake timed run: returns times[calls % n] and counts its calls. */
struct fake {
	const double *times;
	int n, calls, fail_at, err;
};

static int fake_run(void *ctx, double *elapsed_us)
{
	struct fake *f = ctx;

	if (f->calls == f->fail_at) {
		f->calls++;
		return f->err;
	}
	*elapsed_us = f->times[f->calls % f->n];
	f->calls++;
	return 0;
}

static void test_measure_counts(void **state)
{
	const double t[] = {1000, 2000, 3, 4, 5, 6, 7};
	struct fake f = {t, 7, 0, -1, 0};
	struct rb_measure_opts o;
	struct rb_stats s;

	(void)state;
	rb_measure_opts_init(&o);
	assert_int_equal(o.warmup, RB_MEASURE_DEFAULT_WARMUP);
	assert_int_equal(o.max_iters, RB_MEASURE_DEFAULT_MAX_ITERS);
	o.warmup = 2;
	o.iters = 5;
	assert_int_equal(rb_measure(&o, fake_run, &f, &s), 0);
	assert_int_equal(f.calls, 7);
	assert_int_equal(s.n, 5);
	/* Warm-up times (1000, 2000) are not samples. */
	assert_near(s.samples_us[0], 3, 0);
	assert_near(s.max_us, 7, 0);
	assert_near(s.median_us, 5, 0);
	rb_stats_release(&s);
}

static void test_measure_min_time_and_cap(void **state)
{
	const double t[] = {100};
	struct fake f = {t, 1, 0, -1, 0};
	struct rb_measure_opts o = {
	    .warmup = 1, .iters = 3, .min_time_s = 0.001, .max_iters = 1000};
	struct rb_stats s;

	(void)state;
	/* 1 ms of 100 µs runs: 10 samples, more than iters. */
	assert_int_equal(rb_measure(&o, fake_run, &f, &s), 0);
	assert_int_equal(s.n, 10);
	assert_int_equal(f.calls, 11);
	rb_stats_release(&s);
	/* 1 s would need 10000 samples: the cap stops it at 20 (beyond the initial
	 * buffer, so the buffer grows). */
	f.calls = 0;
	o.min_time_s = 1;
	o.max_iters = 20;
	assert_int_equal(rb_measure(&o, fake_run, &f, &s), 0);
	assert_int_equal(s.n, 20);
	rb_stats_release(&s);
	/* The cap also wins over iters. */
	o.min_time_s = 0;
	o.iters = 50;
	o.max_iters = 7;
	assert_int_equal(rb_measure(&o, fake_run, &f, &s), 0);
	assert_int_equal(s.n, 7);
	rb_stats_release(&s);
}

static void test_measure_errors(void **state)
{
	const double t[] = {10}, bad[] = {-1};
	struct fake f = {t, 1, 0, 4, -EIO};
	struct rb_measure_opts o = {.warmup = 2, .iters = 10, .max_iters = 100};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_measure(&o, fake_run, &f, &s), -EIO);
	assert_int_equal(f.calls, 5);
	assert_int_equal(s.n, 0);
	assert_null(s.samples_us);
	/* An error during warm-up stops before sampling. */
	f.calls = 0;
	f.fail_at = 0;
	assert_int_equal(rb_measure(&o, fake_run, &f, &s), -EIO);
	assert_int_equal(f.calls, 1);
	/* A negative time is refused. */
	f = (struct fake){bad, 1, 0, -1, 0};
	assert_int_equal(rb_measure(&o, fake_run, &f, &s), -ERANGE);
	assert_null(s.samples_us);
}

static void test_measure_default_opts(void **state)
{
	const double t[] = {1};
	struct fake f = {t, 1, 0, -1, 0};
	struct rb_stats s;

	(void)state;
	assert_int_equal(rb_measure(NULL, fake_run, &f, &s), 0);
	assert_int_equal(f.calls, RB_MEASURE_DEFAULT_WARMUP + RB_MEASURE_DEFAULT_ITERS);
	assert_int_equal(s.n, RB_MEASURE_DEFAULT_ITERS);
	rb_stats_release(&s);
}

static void test_now_us(void **state)
{
	struct timespec ts = {0, 2000000};
	double t0, t1;

	(void)state;
	t0 = rb_now_us();
	nanosleep(&ts, NULL);
	t1 = rb_now_us();
	assert_true(t0 > 0);
	assert_true(t1 - t0 >= 2000);
	assert_true(t1 - t0 < 2e6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_odd_with_outlier),
	    cmocka_unit_test(test_even),
	    cmocka_unit_test(test_single_sample),
	    cmocka_unit_test(test_mad_zero_outlier),
	    cmocka_unit_test(test_mad_zero_no_outlier),
	    cmocka_unit_test(test_outlier_threshold),
	    cmocka_unit_test(test_bad_input),
	    cmocka_unit_test(test_measure_counts),
	    cmocka_unit_test(test_measure_min_time_and_cap),
	    cmocka_unit_test(test_measure_errors),
	    cmocka_unit_test(test_measure_default_opts),
	    cmocka_unit_test(test_now_us),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
