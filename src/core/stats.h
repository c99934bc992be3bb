/* Timing statistics and the sampling loop.
 *
 * rb_measure runs warm-up iterations, then samples until both `iters` samples exist
 * and `min_time_s` of sampled time has passed (or `max_iters` is reached). Each sample
 * is the time the callback reports: wall time on the CPU, device time on an NPU,
 * modeled time on the emulator. Outliers (modified z-score |0.6745·(x - median)/MAD|
 * > 3.5, Iglewicz & Hoaglin) are counted, never dropped.
 *
 * Definitions used by rb_stats_compute:
 *   median   middle order statistic, or the mean of the two middle ones (n even)
 *   stddev   sample standard deviation (divides by n - 1)
 *   cv       stddev / mean (NAN when n < 2 or mean == 0)
 *   mad      median of |x - median|, unscaled, in µs (not multiplied by 1.4826)
 *   p90      linear interpolation between order statistics x(1) <= ... <= x(n):
 *            h = 0.9·(n - 1), p90 = x(⌊h⌋+1) + (h - ⌊h⌋)·(x(⌊h⌋+2) - x(⌊h⌋+1)),
 *            Hyndman & Fan type 7 (the default of R and NumPy)
 *   outliers samples whose modified z-score exceeds 3.5. When MAD is 0 (at least half
 *            the samples equal the median, e.g. a quantised clock) the score is
 *            undefined; it then uses the mean absolute deviation from the median,
 *            |x - median| / (1.253314·meanAD) (the usual fallback, 1.253314·meanAD
 *            estimating σ as 1.4826·MAD does). When that is 0 too, every sample equals
 *            the median and none is an outlier. */
#ifndef RB_CORE_STATS_H
#define RB_CORE_STATS_H

#include <stddef.h>

struct rb_stats {
	size_t n;
	double *samples_us; /* owned copy, in the order measured */
	double min_us, median_us, mean_us, stddev_us, cv, mad_us, p90_us, max_us;
	size_t outliers;
};

/* Computes every statistic of `n` samples (n >= 1; stddev and cv need n >= 2 and are
 * NAN otherwise). Samples must be finite. Returns 0 or -ENOMEM / -EINVAL, leaving
 * *stats empty on error. Free with rb_stats_release (also safe on an empty or zeroed
 * struct). */
int rb_stats_compute(struct rb_stats *stats, const double *samples_us, size_t n);
void rb_stats_release(struct rb_stats *stats);

struct rb_measure_opts {
	int warmup;        /* runs before sampling */
	int iters;         /* minimum samples (values < 1 mean 1) */
	double min_time_s; /* minimum total sampled time */
	int max_iters;     /* hard cap on samples, wins over iters (values < 1 mean 1) */
};

#define RB_MEASURE_DEFAULT_WARMUP    2
#define RB_MEASURE_DEFAULT_ITERS     10
#define RB_MEASURE_DEFAULT_MIN_TIME  0.0
#define RB_MEASURE_DEFAULT_MAX_ITERS 100000

/* One timed run: stores its duration in *elapsed_us, returns 0 or a negative errno. */
typedef int (*rb_measure_fn)(void *ctx, double *elapsed_us);

void rb_measure_opts_init(struct rb_measure_opts *opts);
/* Returns 0, or the first error of `fn` (with stats left empty). A negative or
 * non-finite elapsed time is refused with -ERANGE and a message. */
int rb_measure(const struct rb_measure_opts *opts, rb_measure_fn fn, void *ctx,
	       struct rb_stats *stats);

/* Monotonic wall clock (CLOCK_MONOTONIC) in microseconds. */
double rb_now_us(void);

#endif
