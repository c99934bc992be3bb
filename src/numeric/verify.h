/* Verification of a device's C against the CPU reference.
 *
 * Integers must match exactly. Floats pass when |got - exp| <= atol + rtol·|exp|
 * (defaults per dtype: rb_verify_opts_init). `full` compares every element against a
 * full reference C; `sample` compares a seeded random subset of elements, each
 * recomputed on its own as a dot product, for shapes too big to check fully.
 *
 * Element rules (floats): an element passes when |got - exp| <= atol + rtol·|exp|. A NaN
 * or infinite `got` where `exp` is finite fails; a non-finite `exp` (only possible
 * from non-finite inputs) passes only against the same value (NaN against any NaN).
 * Integers pass when equal.
 *
 * Result numbers: max_abs is the largest |got - exp| over the checked elements (inf when
 * a non-finite value was found where a finite one was expected); max_rel is the largest
 * |got - exp| / |exp| over checked elements with exp != 0 (elements whose expected value
 * is 0 are judged by atol alone and left out of max_rel, rather than divided by a floor
 * that would make the number depend on an arbitrary constant). `first` holds the first
 * RB_VERIFY_MAX_REPORTED mismatches in row-major order.
 *
 * Sample mode checks the four corners (0,0), (0,N-1), (M-1,0), (M-1,N-1) plus
 * (`samples` minus the number of distinct corners) positions drawn by stratified
 * sampling: the M·N elements, in row-major order, are cut into that many runs of equal
 * length (±1) and one position is drawn uniformly (rb_rng, `seed`) from each run. The
 * positions are distinct and come out in row-major order, so the whole matrix is
 * covered evenly and the mismatches reported are the first ones in row-major order.
 * When samples >= M·N every element is checked. */
#ifndef RB_NUMERIC_VERIFY_H
#define RB_NUMERIC_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rknn_bench/shape.h"

enum rb_verify_mode {
	RB_VERIFY_AUTO = 0, /* full when M·N·K <= full_limit, else sample */
	RB_VERIFY_FULL,
	RB_VERIFY_SAMPLE,
	RB_VERIFY_NONE,
};

enum rb_verify_status {
	RB_VERIFY_VERIFIED = 0,
	RB_VERIFY_FAILED,
	RB_VERIFY_SKIPPED,
};

#define RB_VERIFY_MAX_REPORTED 10

/* fp16 defaults: fp16 inputs, fp32 accumulation in any order. */
#define RB_VERIFY_FP16_ATOL 1e-3
#define RB_VERIFY_FP16_RTOL 1e-3
/* M·N·K up to which `auto` means `full`. */
#define RB_VERIFY_FULL_LIMIT (INT64_C(1) << 30)
/* The same when the expected C comes from the fast reference GEMM rather than the naive
 * loop (~1 s of reference time on 2 cores at the limit). */
#define RB_VERIFY_FULL_LIMIT_FAST (INT64_C(1) << 36)
#define RB_VERIFY_DEFAULT_SAMPLES 4096

struct rb_verify_opts {
	enum rb_verify_mode mode;
	double atol, rtol;  /* floats only */
	int64_t samples;    /* elements checked in sample mode */
	uint64_t seed;      /* which elements are sampled */
	int64_t full_limit; /* see RB_VERIFY_AUTO */
};

struct rb_mismatch {
	int64_t i, j;
	double expected, got;
};

struct rb_verify_result {
	enum rb_verify_status status;
	enum rb_verify_mode mode; /* the mode actually used (never AUTO) */
	double max_abs, max_rel;
	int64_t checked, mismatches;
	int n_reported;
	struct rb_mismatch first[RB_VERIFY_MAX_REPORTED];
};

/* Inputs and output of one matmul, row-major: A M×K, B K×N, C M×N. Element types follow
 * the dtype: uint16_t (fp16) A/B with float C, or int8_t A/B with int32_t C. */
struct rb_inputs;
struct rb_matmul_io {
	struct rb_shape shape;
	const void *a, *b;
	const void *c;
	/* When b is NULL: streamed inputs (numeric/inputs.h) whose B sample mode reads a
	 * column at a time from the stream. */
	const struct rb_inputs *b_stream;
	/* When c is NULL (sample mode): C is read a few elements at a time, rows [m0, m0 +
	 * rows) and columns [n0, n0 + cols) into dst (rows×cols row-major, n0 a multiple
	 * of 16); 0 or -errno with a message. */
	int (*read_c)(void *ctx, int64_t m0, int64_t rows, int64_t n0, int64_t cols, void *dst);
	void *read_ctx;
};

/* A block of C and of the expected C, both rows×cols row-major (float for fp16, int32_t
 * for int8), at rows [i0, i0 + rows) and columns [j0, j0 + cols) of the whole. */
struct rb_verify_block {
	enum rb_dtype dtype;
	int64_t i0, j0, rows, cols;
	const void *c, *expected;
};

/* Mode AUTO, fp16 atol/rtol RB_VERIFY_FP16_* (int8: 0, exact), RB_VERIFY_DEFAULT_SAMPLES,
 * seed 0, full_limit RB_VERIFY_FULL_LIMIT. */
void rb_verify_opts_init(struct rb_verify_opts *opts, enum rb_dtype dtype);
/* The mode `opts` means for this shape (resolves AUTO). */
enum rb_verify_mode rb_verify_resolve_mode(const struct rb_verify_opts *opts,
					   const struct rb_shape *shape);

/* Compares io->c against a full expected C (float for fp16, int32_t for int8). */
void rb_verify_full(const struct rb_matmul_io *io, const void *expected,
		    const struct rb_verify_opts *opts, struct rb_verify_result *res);
/* The same a block at a time, for a C or an expected C too large to hold whole next to
 * each other: rb_verify_full_begin, then rb_verify_full_block once for each block of a
 * tiling of C, in any order (not concurrently on one res). res then equals what
 * rb_verify_full gives: every element is judged alike and `first` keeps the first
 * mismatches in row-major order whatever the order of the blocks. */
void rb_verify_full_begin(struct rb_verify_result *res);
void rb_verify_full_block(const struct rb_verify_block *blk, const struct rb_verify_opts *opts,
			  struct rb_verify_result *res);
/* Compares a seeded sample of io->c (or of C read through io->read_c) against dot
 * products of io->a and io->b (or of B's columns made from io->b_stream: the same
 * values, so the same verdict). 0, -ENOMEM (a column of a streamed B could not be
 * allocated) or read_c's error; res then says nothing. */
int rb_verify_sample(const struct rb_matmul_io *io, const struct rb_verify_opts *opts,
		     struct rb_verify_result *res);
/* Status SKIPPED, mode NONE, nothing checked, max_abs and max_rel NAN (undefined). */
void rb_verify_skipped(struct rb_verify_result *res);

const char *rb_verify_status_name(enum rb_verify_status status); /* verified|failed|skipped */
const char *rb_verify_mode_name(enum rb_verify_mode mode);       /* auto|full|sample|none */
/* 0, or -EINVAL with a message. */
int rb_verify_mode_parse(const char *text, enum rb_verify_mode *out);

#endif
