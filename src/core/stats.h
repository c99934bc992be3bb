/* Timing statistics and the sampling loop.
 *
 * rb_measure runs warm-up iterations, then samples until both `iters` samples exist
 * and `min_time_s` of sampled time has passed (or `max_iters` is reached). Each sample
 * is the time the callback reports: wall time on the CPU, device time on an NPU,
 * modeled time on the emulator. Outliers (modified z-score |0.6745·(x - median)/MAD|
 * > 3.5, Iglewicz & Hoaglin) are counted, never dropped. */
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
 * NAN otherwise). Returns 0 or -ENOMEM / -EINVAL. Free with rb_stats_release. */
int rb_stats_compute(struct rb_stats *stats, const double *samples_us, size_t n);
void rb_stats_release(struct rb_stats *stats);

struct rb_measure_opts {
	int warmup;        /* runs before sampling */
	int iters;         /* minimum samples */
	double min_time_s; /* minimum total sampled time */
	int max_iters;     /* hard cap on samples */
};

#define RB_MEASURE_DEFAULT_WARMUP 2
#define RB_MEASURE_DEFAULT_ITERS 10
#define RB_MEASURE_DEFAULT_MIN_TIME 0.0
#define RB_MEASURE_DEFAULT_MAX_ITERS 100000

/* One timed run: stores its duration in *elapsed_us, returns 0 or a negative errno. */
typedef int (*rb_measure_fn)(void *ctx, double *elapsed_us);

void rb_measure_opts_init(struct rb_measure_opts *opts);
/* Returns 0, or the first error of `fn` (with stats left empty). */
int rb_measure(const struct rb_measure_opts *opts, rb_measure_fn fn, void *ctx,
	       struct rb_stats *stats);

/* Monotonic wall clock in microseconds. */
double rb_now_us(void);

#endif
