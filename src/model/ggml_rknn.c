/* The seed ggml-rknn backend's view of a pair (ggml_rknn.h). */
#include "model/ggml_rknn.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/error.h"

int64_t rb_ggml_rknn_init_share(int64_t n)
{
	return n / 32 / RB_GGML_RKNN_CORES * 32;
}

/* Init: N/32/3*32 columns per core, the last core takes the rest. */
static void init_range(int64_t n, int core, int64_t *begin, int64_t *end)
{
	int64_t share = rb_ggml_rknn_init_share(n);

	*begin = core * share;
	*end = core == RB_GGML_RKNN_CORES - 1 ? n : (core + 1) * share;
}

/* Run time: whole 32-column blocks only, so the last N % 32 columns are left out. */
static void run_range(int64_t n, int threads, int t, int64_t *begin, int64_t *end)
{
	*begin = t * n / threads / 32 * 32;
	*end = (t + 1) * n / threads / 32 * 32;
}

int rb_ggml_rknn_run_threads(int64_t n, int threads)
{
	int used = threads;

	/* ggml_rk_mul_mat walks down from `threads` while N is not a multiple of 16·i and
	 * keeps the last i it passed. */
	for (int i = threads; i >= 1 && n % (16 * i) != 0; i--)
		used = i;
	return used;
}

RB_PRINTF(3, 4) static bool fail(char *why, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (size)
		vsnprintf(why, size, fmt, ap);
	va_end(ap);
	return false;
}

bool rb_ggml_rknn_usable(const struct rb_shape *s, int threads, char *why, size_t size)
{
	int used = rb_ggml_rknn_run_threads(s->n, threads);

	if (size)
		why[0] = '\0';
	if (s->k % 32)
		return fail(why, size,
			    "K = %" PRId64
			    " is not a multiple of 32: the backend's native B layout "
			    "takes whole 32-channel blocks",
			    s->k);
	if (s->n % 16)
		return fail(why, size,
			    "N = %" PRId64
			    " is not a multiple of 16: the backend's native B layout "
			    "takes whole 16-column blocks",
			    s->n);
	if (s->n < 32 * RB_GGML_RKNN_CORES)
		return fail(why, size,
			    "N = %" PRId64 " < %" PRId64
			    ": the backend's 3-way split at init gives a "
			    "core N = 0, rknn_matmul_create fails and llama.cpp aborts "
			    "(GGML_ASSERT(ret == 0))",
			    s->n, (int64_t)32 * RB_GGML_RKNN_CORES);
	if (s->n % 32)
		return fail(why, size,
			    "N = %" PRId64 " is not a multiple of 32: the backend computes whole "
			    "32-column blocks, so its last %" PRId64
			    " columns would be left as zeros",
			    s->n, s->n % 32);
	for (int t = 0; t < used; t++) {
		int64_t begin, end;

		run_range(s->n, used, t, &begin, &end);
		if (begin == end)
			return fail(why, size,
				    "N = %" PRId64 " over %d threads: a thread's columns are "
				    "empty, rknn_matmul_create fails and llama.cpp aborts "
				    "(give llama.cpp fewer threads, -t/-tb)",
				    s->n, used);
	}
	return true;
}

/* The init contexts, each run by its own thread when that thread's width is the same. */
static int init_slices(const struct rb_shape *s, int used, struct rb_ggml_rknn_slice *out)
{
	for (int c = 0; c < RB_GGML_RKNN_CORES; c++) {
		int64_t rb = 0, re = 0;

		init_range(s->n, c, &out[c].n_begin, &out[c].n_end);
		if (c < used)
			run_range(s->n, used, c, &rb, &re);
		out[c].core = c;
		out[c].at_init = true;
		out[c].thread = c < used && re - rb == out[c].n_end - out[c].n_begin ? c : -1;
	}
	return RB_GGML_RKNN_CORES;
}

int rb_ggml_rknn_slices(const struct rb_shape *s, int threads, struct rb_ggml_rknn_slice *out)
{
	char why[256];
	int used, n;

	if (threads < 1 || threads > RB_GGML_RKNN_MAX_THREADS)
		return rb_set_error(-EINVAL, "threads %d: give 1 to %d", threads,
				    RB_GGML_RKNN_MAX_THREADS);
	if (!rb_ggml_rknn_usable(s, threads, why, sizeof(why)))
		return rb_set_error(-EINVAL, "%s", why);
	used = rb_ggml_rknn_run_threads(s->n, threads);
	n = init_slices(s, used, out);
	for (int t = 0; t < used; t++) {
		if (t < RB_GGML_RKNN_CORES && out[t].thread == t)
			continue;
		run_range(s->n, used, t, &out[n].n_begin, &out[n].n_end);
		out[n].core = t < RB_GGML_RKNN_CORES ? t : -1;
		out[n].thread = t;
		out[n].at_init = false;
		n++;
	}
	return n;
}
