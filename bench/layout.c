/* bench-layout: speed of the NPU layout conversions (src/numeric/layout.c).
 *
 * For each shape it times pack A, pack B and unpack C (fp32/int32 cube -> row-major)
 * and, in the same run, memcpy of the same number of bytes between the same buffers,
 * so the ratio says how close a conversion gets to the machine's copy bandwidth.
 * GB/s counts the bytes of the matrix converted once (10^9 bytes per second), as for
 * memcpy; the headline time is the median of the samples. Before timing, each
 * conversion is undone by its inverse and compared with its input (the shapes need no
 * padding, so the round trip is exact).
 *
 * ratio is memcpy's time over the conversion's (1: as fast as memcpy; 0.8: 1.25× its
 * time), min_rat the same for the fastest samples: on a shared machine the min is the
 * least disturbed sample. The conversion runs with THREADS threads, memcpy on one.
 *
 * Usage: bench-layout [-t THREADS] [-s MIN_SECONDS] [-f FILTER]
 * (THREADS <= 0: online CPUs; FILTER: run only the rows whose "shape op" contains it) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "numeric/layout.h"

#define MAX_SAMPLES 2000
#define MIN_SAMPLES 5

struct options {
	int threads;
	double min_time;
	const char *filter;
};

struct bench_case {
	const char *name;
	enum rb_dtype dtype;
	int64_t m, k, n;
};

static const struct bench_case cases[] = {
    {"fp16 1x2048x8192", RB_DTYPE_FP16, 1, 2048, 8192},
    {"fp16 128x2048x2048", RB_DTYPE_FP16, 128, 2048, 2048},
    {"fp16 512x2048x8192", RB_DTYPE_FP16, 512, 2048, 8192},
    {"fp16 1x2048x128256", RB_DTYPE_FP16, 1, 2048, 128256},
    {"int8 512x2048x8192", RB_DTYPE_INT8, 512, 2048, 8192},
};

enum op { OP_PACK_A, OP_PACK_B, OP_UNPACK_C, OP_MEMCPY };

/* One conversion: src -> dst of `bytes` bytes. */
struct job {
	enum op op;
	const struct bench_case *bc;
	void *dst;
	const void *src;
	size_t bytes;
	int threads;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_once(const struct job *j)
{
	const struct bench_case *c = j->bc;
	struct rb_layout_c_tile tile;

	switch (j->op) {
	case OP_PACK_A:
		return rb_layout_pack_a(j->dst, j->src, c->dtype, c->m, c->k, c->k, j->threads);
	case OP_PACK_B:
		return rb_layout_pack_b(j->dst, j->src, c->dtype, c->k, c->n, c->k, c->n,
					j->threads);
	case OP_UNPACK_C:
		rb_layout_c_tile_full(&tile, c->m, c->n);
		return rb_layout_unpack_c(j->dst, c->n, j->src, 4, &tile, j->threads);
	case OP_MEMCPY:
		memcpy(j->dst, j->src, j->bytes);
		return 0;
	}
	return -EINVAL;
}

/* The inverse of j's conversion, from j->dst into `back`. */
static int run_inverse(const struct job *j, void *back)
{
	const struct bench_case *c = j->bc;

	switch (j->op) {
	case OP_PACK_A:
		return rb_layout_unpack_a(back, j->dst, c->dtype, c->m, c->k, c->k, j->threads);
	case OP_PACK_B:
		return rb_layout_unpack_b_sliced(back, j->dst, c->dtype, c->k, c->n, c->k, c->n,
						 c->k, j->threads);
	case OP_UNPACK_C:
		return rb_layout_rknn_pack_c(back, j->dst, 4, c->m, c->n, j->threads);
	case OP_MEMCPY:
		break;
	}
	return -EINVAL;
}

static int verify(const struct job *j)
{
	void *back = malloc(j->bytes);
	int ok = back && !run_once(j) && !run_inverse(j, back) && !memcmp(back, j->src, j->bytes);

	free(back);
	return ok ? 0 : -EINVAL;
}

struct timing {
	double median, min;
};

/* Median and min seconds of one run, after one warm-up run (which also faults the pages
 * in); median -1 when the run fails. */
static struct timing time_job(const struct job *j, double min_time)
{
	static double samples[MAX_SAMPLES];
	double total = 0.0;
	int n = 0;

	if (run_once(j))
		return (struct timing){-1.0, -1.0};
	while (n < MAX_SAMPLES && (n < MIN_SAMPLES || total < min_time)) {
		double t0 = now_s();

		run_once(j);
		samples[n] = now_s() - t0;
		total += samples[n++];
	}
	double median = bench_median(samples, n); /* sorts: samples[0] is the min */

	return (struct timing){median, samples[0]};
}

static void *filled(size_t bytes)
{
	unsigned char *p = malloc(bytes);

	if (!p)
		return NULL;
	for (size_t i = 0; i < bytes; i++)
		p[i] = (unsigned char)(i * 2654435761u >> 13);
	return p;
}

static int bench_op(const struct bench_case *c, enum op op, const char *name, size_t bytes,
		    const struct options *o)
{
	struct job j = {.op = op, .bc = c, .bytes = bytes, .threads = o->threads};
	struct job copy = {.op = OP_MEMCPY, .bc = c, .bytes = bytes};
	struct timing t = {-1.0, -1.0}, tc;
	char label[64];

	snprintf(label, sizeof(label), "%s %s", c->name, name);
	if (o->filter && !strstr(label, o->filter))
		return 0;
	j.src = filled(bytes);
	j.dst = malloc(bytes);
	if (!j.src || !j.dst) {
		fprintf(stderr, "bench-layout: out of memory for %zu bytes\n", bytes);
		free((void *)j.src);
		free(j.dst);
		return -ENOMEM;
	}
	copy.src = j.src;
	copy.dst = j.dst;
	if (!verify(&j))
		t = time_job(&j, o->min_time);
	tc = time_job(&copy, o->min_time);
	if (t.median > 0)
		printf("%-20s %-9s %12zu %11.1f %10.1f %8.2f %11.2f %7.2f %7.2f\n", c->name, name,
		       bytes, t.median * 1e6, t.min * 1e6, (double)bytes / t.median * 1e-9,
		       (double)bytes / tc.median * 1e-9, tc.median / t.median, tc.min / t.min);
	else
		fprintf(stderr, "bench-layout: %s %s failed or did not round-trip\n", c->name,
			name);
	free((void *)j.src);
	free(j.dst);
	return t.median > 0 ? 0 : -EINVAL;
}

static int bench_case(const struct bench_case *c, const struct options *o)
{
	size_t es = c->dtype == RB_DTYPE_FP16 ? 2 : 1;
	int err = 0;

	err |= bench_op(c, OP_PACK_A, "pack_a", (size_t)(c->m * c->k) * es, o);
	err |= bench_op(c, OP_PACK_B, "pack_b", (size_t)(c->k * c->n) * es, o);
	err |= bench_op(c, OP_UNPACK_C, "unpack_c", (size_t)(c->m * c->n) * 4, o);
	return err;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	int opt;
	char *end;

	while ((opt = getopt(argc, argv, "t:s:f:h")) != -1) {
		errno = 0;
		if (opt == 't') {
			long v = strtol(optarg, &end, 10);

			if (errno || *end || v > 1024 || v < -1)
				return -1;
			o->threads = (int)v;
		} else if (opt == 's') {
			o->min_time = strtod(optarg, &end);
			if (errno || *end || !(o->min_time >= 0))
				return -1;
		} else if (opt == 'f') {
			o->filter = optarg;
		} else {
			return -1;
		}
	}
	return optind == argc ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct options o = {.threads = 0, .min_time = 0.3};
	int err = 0;

	if (parse_options(argc, argv, &o)) {
		fprintf(stderr, "usage: bench-layout [-t THREADS] [-s MIN_SECONDS] [-f FILTER]\n");
		return 2;
	}
	printf("# threads %d (%ld online CPUs), median of >= %d samples and >= %.2f s\n", o.threads,
	       sysconf(_SC_NPROCESSORS_ONLN), MIN_SAMPLES, o.min_time);
	printf("%-20s %-9s %12s %11s %10s %8s %11s %7s %7s\n", "shape", "op", "bytes", "median_us",
	       "min_us", "GB/s", "memcpy_GB/s", "ratio", "min_rat");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		err |= bench_case(&cases[i], &o);
	return err ? 1 : 0;
}
