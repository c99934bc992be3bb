/* CPU reference GEMM: C[M×N] = A[M×K] · B[K×N], all row-major.
 *
 *   fp16 × fp16 -> fp32, products and sums in fp32
 *   int8 × int8 -> int32, exact
 *
 * rb_ref_gemm_* is the fast path (cache-blocked, vectorised micro-kernels, pthreads,
 * a GEMV path for M = 1); `threads` <= 0 means one per online CPU. They return 0 or
 * -ENOMEM. rb_ref_naive_* is the plain i-k-j triple loop, single-threaded: the test
 * oracle and the baseline of bench/ref. rb_ref_dot_* computes one element of C on its
 * own (sampled verification). */
#ifndef RB_NUMERIC_REF_H
#define RB_NUMERIC_REF_H

#include <stdint.h>

#include "rknn_bench/shape.h"

int rb_ref_gemm_f16(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t k, int64_t n,
		    int threads);
int rb_ref_gemm_i8(const int8_t *a, const int8_t *b, int32_t *c, int64_t m, int64_t k, int64_t n,
		   int threads);

void rb_ref_naive_f16(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t k,
		      int64_t n);
void rb_ref_naive_i8(const int8_t *a, const int8_t *b, int32_t *c, int64_t m, int64_t k, int64_t n);

float rb_ref_dot_f16(const uint16_t *a, const uint16_t *b, int64_t k, int64_t n, int64_t i,
		     int64_t j);
int32_t rb_ref_dot_i8(const int8_t *a, const int8_t *b, int64_t k, int64_t n, int64_t i, int64_t j);

/* Dispatches on shape->dtype: uint16_t/float for fp16, int8_t/int32_t for int8. */
int rb_ref_gemm(const struct rb_shape *shape, const void *a, const void *b, void *c, int threads);

/* Number of worker threads `threads` resolves to (<= 0: online CPUs; at most 256).
 * Small products use fewer threads than this. */
int rb_ref_threads(int threads);

/* Which kernels the fast path uses: "avx512+vnni" (int8 on VNNI), "avx512" (int8 on
 * the AVX2 kernels), "avx2+fma", "neon" or "portable". */
const char *rb_ref_impl(void);
/* For tests and benchmarks: nonzero makes the fast path use its portable kernels (the
 * same results for int8; for fp16 the same up to fp32 rounding, as the portable
 * kernels may not fuse multiply-adds), zero restores the automatic choice. */
void rb_ref_force_portable(int on);
/* Same for any family rb_ref_impl() can name ("avx512" stands for both AVX-512 names);
 * NULL restores the automatic choice. Returns 0, -ENOTSUP when this CPU or build lacks
 * the family, or -EINVAL for an unknown name. */
int rb_ref_force_impl(const char *name);

#endif
