/* Helpers shared by the benchmark programs in bench/. */
#ifndef RB_BENCH_BENCH_H
#define RB_BENCH_BENCH_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The one option of a benchmark: "-t N" host threads (0, the default: every CPU).
 * 0, or -1 on anything else. */
static inline int bench_parse_threads(int argc, char **argv, int *threads)
{
	char *end;
	long v;

	*threads = 0;
	if (argc == 1)
		return 0;
	if (argc != 3 || strcmp(argv[1], "-t") != 0)
		return -1;
	errno = 0;
	v = strtol(argv[2], &end, 10);
	if (errno || *end || end == argv[2] || v < 0 || v > 1024)
		return -1;
	*threads = (int)v;
	return 0;
}

static inline int bench_cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* The median of v[0..n) (the mean of the two middle ones for n even); sorts v, so v[0]
 * is then the min. */
static inline double bench_median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), bench_cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
