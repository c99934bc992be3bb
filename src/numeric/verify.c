#include "numeric/verify.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "numeric/inputs.h"
#include "numeric/ref.h"
#include "core/rng.h"
#include "core/util.h"

static const char *const mode_names[] = {
    [RB_VERIFY_AUTO] = "auto",
    [RB_VERIFY_FULL] = "full",
    [RB_VERIFY_SAMPLE] = "sample",
    [RB_VERIFY_NONE] = "none",
};

static const char *const status_names[] = {
    [RB_VERIFY_VERIFIED] = "verified",
    [RB_VERIFY_FAILED] = "failed",
    [RB_VERIFY_SKIPPED] = "skipped",
};

void rb_verify_opts_init(struct rb_verify_opts *opts, enum rb_dtype dtype)
{
	memset(opts, 0, sizeof(*opts));
	opts->mode = RB_VERIFY_AUTO;
	if (dtype == RB_DTYPE_FP16) {
		opts->atol = RB_VERIFY_FP16_ATOL;
		opts->rtol = RB_VERIFY_FP16_RTOL;
	}
	opts->samples = RB_VERIFY_DEFAULT_SAMPLES;
	opts->seed = 0;
	opts->full_limit = RB_VERIFY_FULL_LIMIT;
}

enum rb_verify_mode rb_verify_resolve_mode(const struct rb_verify_opts *opts,
					   const struct rb_shape *shape)
{
	int64_t mn;

	if (opts->mode != RB_VERIFY_AUTO)
		return opts->mode;
	if (shape->m <= 0 || shape->n <= 0 || shape->k <= 0)
		return RB_VERIFY_FULL; /* nothing to compute: full is free */
	/* M·N·K can overflow int64 (each dimension may reach 2^31): compare M·N with
	 * full_limit / K instead, exact for positive integers. */
	mn = shape->m * shape->n;
	return mn <= opts->full_limit / shape->k ? RB_VERIFY_FULL : RB_VERIFY_SAMPLE;
}

static void result_start(struct rb_verify_result *res, enum rb_verify_mode mode)
{
	memset(res, 0, sizeof(*res));
	res->status = RB_VERIFY_VERIFIED;
	res->mode = mode;
}

/* Keeps the first RB_VERIFY_MAX_REPORTED mismatches in row-major order, whatever order
 * the blocks of a blocked verification come in: within a block they come in row-major
 * order, so the list of the whole is the first ones of the blocks' lists merged. */
static void record(struct rb_verify_result *res, int64_t i, int64_t j, double exp, double got)
{
	struct rb_mismatch *first = res->first;
	int at = res->n_reported;

	res->mismatches++;
	res->status = RB_VERIFY_FAILED;
	while (at > 0 && (first[at - 1].i > i || (first[at - 1].i == i && first[at - 1].j > j)))
		at--;
	if (at >= RB_VERIFY_MAX_REPORTED)
		return;
	if (res->n_reported < RB_VERIFY_MAX_REPORTED)
		res->n_reported++;
	memmove(&first[at + 1], &first[at], (size_t)(res->n_reported - 1 - at) * sizeof(*first));
	first[at] = (struct rb_mismatch){i, j, exp, got};
}

/* Error of one element, or -1 when exp is non-finite and so has no error. */
static double abs_error(double exp, double got)
{
	if (!isfinite(exp))
		return -1;
	if (!isfinite(got))
		return INFINITY;
	return fabs(got - exp);
}

static bool nonfinite_match(double exp, double got)
{
	return (isnan(exp) && isnan(got)) || exp == got;
}

/* Judges one element; the tolerance is 0 for integers. */
static void check(struct rb_verify_result *res, const struct rb_verify_opts *opts, int64_t i,
		  int64_t j, double exp, double got)
{
	double err = abs_error(exp, got);
	bool ok;

	res->checked++;
	if (err < 0) {
		ok = nonfinite_match(exp, got);
	} else {
		if (err > res->max_abs)
			res->max_abs = err;
		if (exp != 0 && err / fabs(exp) > res->max_rel)
			res->max_rel = err / fabs(exp);
		ok = err <= opts->atol + opts->rtol * fabs(exp);
	}
	if (!ok)
		record(res, i, j, exp, got);
}

void rb_verify_full_begin(struct rb_verify_result *res)
{
	result_start(res, RB_VERIFY_FULL);
}

void rb_verify_full_block(const struct rb_verify_block *blk, const struct rb_verify_opts *opts,
			  struct rb_verify_result *res)
{
	struct rb_verify_opts exact = *opts;
	const float *cf = blk->c, *ef = blk->expected;
	const int32_t *ci = blk->c, *ei = blk->expected;
	int64_t idx;

	if (blk->dtype == RB_DTYPE_INT8) {
		exact.atol = exact.rtol = 0; /* integers match exactly, whatever opts say */
		opts = &exact;
	}
	for (int64_t i = 0; i < blk->rows; i++) {
		for (int64_t j = 0; j < blk->cols; j++) {
			idx = i * blk->cols + j;
			if (blk->dtype == RB_DTYPE_INT8)
				check(res, opts, blk->i0 + i, blk->j0 + j, ei[idx], ci[idx]);
			else
				check(res, opts, blk->i0 + i, blk->j0 + j, ef[idx], cf[idx]);
		}
	}
}

void rb_verify_full(const struct rb_matmul_io *io, const void *expected,
		    const struct rb_verify_opts *opts, struct rb_verify_result *res)
{
	struct rb_verify_block whole = {io->shape.dtype, 0,     0,       io->shape.m,
					io->shape.n,     io->c, expected};

	rb_verify_full_begin(res);
	rb_verify_full_block(&whole, opts, res);
}

/* Where sample mode reads B: io->b, or one column at a time from io->b_stream. */
struct b_source {
	const void *b;
	void *column; /* K elements: column `have` of a streamed B, made on demand */
	int64_t have;
};

/* Where column j of B is for the dot products: the buffer, and *col, its column there. */
static const void *b_column(const struct rb_matmul_io *io, struct b_source *src, int64_t j,
			    int64_t *col)
{
	if (!src->column) {
		*col = j;
		return src->b;
	}
	if (src->have != j)
		rb_inputs_b_block(io->b_stream, 0, io->shape.k, j, 1, src->column, 1);
	src->have = j;
	*col = 0;
	return src->column;
}

/* Where sample mode reads C: io->c, or (io->c NULL) the 16 columns around an element
 * read through io->read_c, kept for the next element of the same row. */
#define C_RUN 16
struct c_source {
	int64_t i, j0; /* the run held: row i, columns [j0, j0 + C_RUN); i < 0: none */
	union {
		float f[C_RUN];
		int32_t i[C_RUN];
	} run;
	int err; /* the first read error: the checks after it are skipped */
};

/* Element (i, j) of C as a double, or false after a read error. */
static bool c_element(const struct rb_matmul_io *io, struct c_source *src, int64_t i, int64_t j,
		      double *value)
{
	int64_t j0 = j / C_RUN * C_RUN, n = io->shape.n, at = j - j0;
	bool int8 = io->shape.dtype == RB_DTYPE_INT8;

	if (io->c) {
		*value =
		    int8 ? ((const int32_t *)io->c)[i * n + j] : ((const float *)io->c)[i * n + j];
		return true;
	}
	if (!src->err && (src->i != i || src->j0 != j0)) {
		src->err =
		    io->read_c(io->read_ctx, i, 1, j0, n - j0 < C_RUN ? n - j0 : C_RUN, &src->run);
		src->i = src->err ? -1 : i;
		src->j0 = j0;
	}
	*value = int8 ? src->run.i[at] : src->run.f[at];
	return !src->err;
}

/* Checks element `idx` (row-major) against its own dot product. */
static void check_dot(const struct rb_matmul_io *io, struct b_source *src, struct c_source *csrc,
		      const struct rb_verify_opts *opts, struct rb_verify_result *res, int64_t idx)
{
	int64_t k = io->shape.k, n = io->shape.n, i = idx / n, j = idx % n, col;
	const void *b;
	int64_t ldb = src->column ? 1 : n;
	double got;

	if (!c_element(io, csrc, i, j, &got))
		return;
	b = b_column(io, src, j, &col);
	if (io->shape.dtype == RB_DTYPE_INT8)
		check(res, opts, i, j, rb_ref_dot_i8(io->a, b, k, ldb, i, col), got);
	else
		check(res, opts, i, j, rb_ref_dot_f16(io->a, b, k, ldb, i, col), got);
}

/* The distinct corner indices in increasing order; returns how many. */
static int corners(const struct rb_shape *s, int64_t out[4])
{
	int64_t c[4] = {0, s->n - 1, (s->m - 1) * s->n, s->m * s->n - 1}, tmp;
	int i, count = 0;

	/* Only M = 1 puts (M-1, 0) before (0, N-1); equal ones appear when M or N is 1. */
	if (c[2] < c[1]) {
		tmp = c[1];
		c[1] = c[2];
		c[2] = tmp;
	}
	/* c is sorted now: keep each value once. */
	for (i = 0; i < 4; i++)
		if (i == 0 || c[i] != c[i - 1])
			out[count++] = c[i];
	return count;
}

/* Checks the corners merged, in row-major order, with one seeded position from each
 * of `runs` equal runs of the M·N elements. */
static void check_strata(const struct rb_matmul_io *io, struct b_source *src, struct c_source *csrc,
			 const struct rb_verify_opts *opts, struct rb_verify_result *res,
			 int64_t runs)
{
	int64_t total = io->shape.m * io->shape.n, corner[4], t, start, len, pos;
	int64_t width = runs ? total / runs : 0, rem = runs ? total % runs : 0;
	int nc = corners(&io->shape, corner), ci = 0;
	struct rb_rng rng;

	rb_rng_init(&rng, opts->seed);
	for (t = 0; t < runs; t++) {
		start = t * width + (t < rem ? t : rem);
		len = width + (t < rem);
		pos = start + rb_rng_range(&rng, 0, len - 1);
		for (; ci < nc && corner[ci] <= pos; ci++)
			if (corner[ci] != pos)
				check_dot(io, src, csrc, opts, res, corner[ci]);
		check_dot(io, src, csrc, opts, res, pos);
	}
	for (; ci < nc; ci++)
		check_dot(io, src, csrc, opts, res, corner[ci]);
}

int rb_verify_sample(const struct rb_matmul_io *io, const struct rb_verify_opts *opts,
		     struct rb_verify_result *res)
{
	struct rb_verify_opts exact = *opts;
	int64_t total = io->shape.m * io->shape.n, idx, corner[4], runs;
	struct b_source src = {io->b, NULL, -1};
	struct c_source csrc = {.i = -1};

	result_start(res, RB_VERIFY_SAMPLE);
	if (io->shape.m <= 0 || io->shape.n <= 0)
		return 0;
	if (io->shape.dtype == RB_DTYPE_INT8) {
		exact.atol = exact.rtol = 0;
		opts = &exact;
	}
	if (!io->b && io->b_stream) {
		src.column = malloc((size_t)io->shape.k * rb_dtype_in_size(io->shape.dtype));
		if (!src.column)
			return rb_set_error(-ENOMEM, "out of memory for a column of B (K = %lld)",
					    (long long)io->shape.k);
	}
	if (opts->samples >= total) {
		for (idx = 0; idx < total; idx++)
			check_dot(io, &src, &csrc, opts, res, idx);
	} else {
		runs = opts->samples - corners(&io->shape, corner);
		check_strata(io, &src, &csrc, opts, res, runs > 0 ? runs : 0);
	}
	free(src.column);
	return csrc.err;
}

void rb_verify_skipped(struct rb_verify_result *res)
{
	result_start(res, RB_VERIFY_NONE);
	res->status = RB_VERIFY_SKIPPED;
	res->max_abs = NAN;
	res->max_rel = NAN;
}

const char *rb_verify_status_name(enum rb_verify_status status)
{
	if ((unsigned)status >= ARRAY_SIZE(status_names))
		return "unknown";
	return status_names[status];
}

const char *rb_verify_mode_name(enum rb_verify_mode mode)
{
	if ((unsigned)mode >= ARRAY_SIZE(mode_names))
		return "unknown";
	return mode_names[mode];
}

int rb_verify_mode_parse(const char *text, enum rb_verify_mode *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mode_names); i++) {
		if (strcmp(text, mode_names[i]) == 0) {
			*out = (enum rb_verify_mode)i;
			return 0;
		}
	}
	return rb_set_error(-EINVAL, "unknown verify mode '%s'; use auto, full, sample or none",
			    text);
}
