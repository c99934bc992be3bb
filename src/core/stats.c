#include "core/stats.h"

#include <errno.h>
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"

/* Iglewicz & Hoaglin: 0.6745 is the 0.75 quantile of N(0, 1), which makes
 * 0.6745·(x - median)/MAD a z-score for normal data. */
#define MODZ_SCALE 0.6745
#define MODZ_LIMIT 3.5
/* sqrt(pi/2): meanAD·1.253314 estimates σ for normal data (MAD = 0 fallback). */
#define MEANAD_SIGMA 1.253314

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return (a > b) - (a < b);
}

/* Median of a sorted array. */
static double sorted_median(const double *x, size_t n)
{
	if (n % 2)
		return x[n / 2];
	return (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* Quantile q of a sorted array, Hyndman & Fan type 7. */
static double sorted_quantile(const double *x, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t lo = (size_t)floor(h);

	if (lo + 1 >= n)
		return x[n - 1];
	return x[lo] + (h - (double)lo) * (x[lo + 1] - x[lo]);
}

static void moments(struct rb_stats *s)
{
	double sum = 0, ss = 0;
	size_t i;

	for (i = 0; i < s->n; i++)
		sum += s->samples_us[i];
	s->mean_us = sum / (double)s->n;
	if (s->n < 2) {
		s->stddev_us = NAN;
		s->cv = NAN;
		return;
	}
	/* Two passes: sums of squares about the mean do not cancel catastrophically. */
	for (i = 0; i < s->n; i++)
		ss += (s->samples_us[i] - s->mean_us) * (s->samples_us[i] - s->mean_us);
	s->stddev_us = sqrt(ss / (double)(s->n - 1));
	s->cv = s->mean_us != 0 ? s->stddev_us / s->mean_us : NAN;
}

/* Fills mad_us from the absolute deviations, sorted in place into `dev`. */
static void deviations(struct rb_stats *s, double *dev)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		dev[i] = fabs(s->samples_us[i] - s->median_us);
	qsort(dev, s->n, sizeof(*dev), cmp_double);
	s->mad_us = sorted_median(dev, s->n);
}

static size_t count_outliers(const struct rb_stats *s)
{
	double scale, sum = 0;
	size_t i, count = 0;

	if (s->mad_us > 0) {
		scale = s->mad_us / MODZ_SCALE;
	} else {
		for (i = 0; i < s->n; i++)
			sum += fabs(s->samples_us[i] - s->median_us);
		scale = MEANAD_SIGMA * sum / (double)s->n;
	}
	if (!(scale > 0))
		return 0; /* every sample equals the median */
	for (i = 0; i < s->n; i++)
		if (fabs(s->samples_us[i] - s->median_us) / scale > MODZ_LIMIT)
			count++;
	return count;
}

static int check_samples(const double *samples_us, size_t n)
{
	size_t i;

	if (!samples_us || n == 0)
		return rb_set_error(-EINVAL, "no timing samples to summarise");
	for (i = 0; i < n; i++)
		if (!isfinite(samples_us[i]))
			return rb_set_error(-EINVAL, "timing sample %zu is not a finite number", i);
	return 0;
}

int rb_stats_compute(struct rb_stats *stats, const double *samples_us, size_t n)
{
	double *sorted;
	int err;

	memset(stats, 0, sizeof(*stats));
	err = check_samples(samples_us, n);
	if (err)
		return err;
	if (n > SIZE_MAX / sizeof(double) / 2)
		return rb_set_error(-ENOMEM, "too many timing samples (%zu)", n);
	stats->samples_us = malloc(n * sizeof(double));
	sorted = malloc(n * sizeof(double));
	if (!stats->samples_us || !sorted) {
		free(sorted);
		rb_stats_release(stats);
		return rb_set_error(-ENOMEM, "out of memory for %zu timing samples", n);
	}
	memcpy(stats->samples_us, samples_us, n * sizeof(double));
	memcpy(sorted, samples_us, n * sizeof(double));
	stats->n = n;
	qsort(sorted, n, sizeof(double), cmp_double);
	stats->min_us = sorted[0];
	stats->max_us = sorted[n - 1];
	stats->median_us = sorted_median(sorted, n);
	stats->p90_us = sorted_quantile(sorted, n, 0.9);
	moments(stats);
	deviations(stats, sorted); /* the sorted copy is no longer needed */
	stats->outliers = count_outliers(stats);
	free(sorted);
	return 0;
}

void rb_stats_release(struct rb_stats *stats)
{
	free(stats->samples_us);
	memset(stats, 0, sizeof(*stats));
}

void rb_measure_opts_init(struct rb_measure_opts *opts)
{
	opts->warmup = RB_MEASURE_DEFAULT_WARMUP;
	opts->iters = RB_MEASURE_DEFAULT_ITERS;
	opts->min_time_s = RB_MEASURE_DEFAULT_MIN_TIME;
	opts->max_iters = RB_MEASURE_DEFAULT_MAX_ITERS;
}

/* One run of the callback, with its reported time checked. */
static int run_once(rb_measure_fn fn, void *ctx, double *elapsed_us)
{
	int err;

	*elapsed_us = NAN;
	err = fn(ctx, elapsed_us);
	if (err)
		return err;
	if (!isfinite(*elapsed_us) || *elapsed_us < 0)
		return rb_set_error(-ERANGE, "a timed run reported %g µs; expected a time >= 0",
				    *elapsed_us);
	return 0;
}

/* Sample buffer that grows by doubling, never beyond `cap` elements. */
static int reserve(double **buf, size_t *size, size_t want, size_t cap)
{
	size_t grown = *size ? *size : 16;
	double *p;

	if (want <= *size)
		return 0;
	while (grown < want)
		grown *= 2;
	if (grown > cap)
		grown = cap;
	p = realloc(*buf, grown * sizeof(double));
	if (!p)
		return rb_set_error(-ENOMEM, "out of memory for %zu timing samples", grown);
	*buf = p;
	*size = grown;
	return 0;
}

static int sample_loop(const struct rb_measure_opts *o, rb_measure_fn fn, void *ctx, double **buf,
		       size_t *count)
{
	size_t iters = o->iters > 1 ? (size_t)o->iters : 1;
	size_t cap = o->max_iters > 1 ? (size_t)o->max_iters : 1;
	double min_us = o->min_time_s * 1e6, sum = 0;
	size_t size = 0;
	int err;

	while (*count < cap && (*count < iters || sum < min_us)) {
		err = reserve(buf, &size, *count + 1, cap);
		if (!err)
			err = run_once(fn, ctx, &(*buf)[*count]);
		if (err)
			return err;
		sum += (*buf)[(*count)++];
	}
	return 0;
}

int rb_measure(const struct rb_measure_opts *opts, rb_measure_fn fn, void *ctx,
	       struct rb_stats *stats)
{
	struct rb_measure_opts defaults;
	double *buf = NULL, t;
	size_t count = 0;
	int i, err = 0;

	memset(stats, 0, sizeof(*stats));
	if (!opts) {
		rb_measure_opts_init(&defaults);
		opts = &defaults;
	}
	for (i = 0; i < opts->warmup && !err; i++)
		err = run_once(fn, ctx, &t);
	if (!err)
		err = sample_loop(opts, fn, ctx, &buf, &count);
	if (!err)
		err = rb_stats_compute(stats, buf, count);
	free(buf);
	return err;
}

double rb_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}
