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

#endif
