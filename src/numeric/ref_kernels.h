/* The kernels of the reference GEMM (ref.c drives them): the blocking, the packed
 * layouts they read (struct gemm_ops), and the kernel set of each ISA family, one file
 * each: ref_generic.c (GCC vector extensions, every CPU), ref_x86.c (AVX2/FMA, F16C,
 * AVX-512 and VNNI, picked at run time), ref_neon.c (aarch64). Private to numeric/. */
#ifndef RB_NUMERIC_REF_KERNELS_H
#define RB_NUMERIC_REF_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/util.h"

#if defined(__x86_64__) || defined(__i386__)
#define RB_REF_X86 1
#elif defined(__aarch64__)
#define RB_REF_NEON 1
#endif

/* Vector width: 32 bytes on x86 (one AVX register; the portable x86 build splits it
 * into two SSE registers), 16 bytes on aarch64 where GCC handles wider generic vectors
 * badly (it spills them to the stack). */
#if defined(RB_REF_NEON)
#define VBYTES 16
#else
#define VBYTES 32
#endif
#define VLEN (VBYTES / 4)

typedef float vf __attribute__((vector_size(VBYTES)));
typedef uint32_t vu __attribute__((vector_size(VBYTES)));
typedef int32_t vi __attribute__((vector_size(VBYTES)));

/* Every lane s, as an initializer: GCC makes that one broadcast, while `vec + s` would
 * add a zero vector first (x + 0 is not x when x is -0). */
/* clang-format off */
#if VLEN == 8
#define SPLAT(s) {(s), (s), (s), (s), (s), (s), (s), (s)}
#else
#define SPLAT(s) {(s), (s), (s), (s)}
#endif
/* clang-format on */

/* Blocking. The MR×NR accumulators take 12 of the 16 AVX registers, or 21 of the 32
 * NEON ones (with 6×16 or 8×12 there, GCC spills accumulators in the loop). A KC×NR
 * strip of B (12-16 KiB) sits in L1, the MC×KC block of A (96-112 KiB) in L2. */
enum {
#if defined(RB_REF_NEON)
	MR = 7,
	NR = 12,
#else
	MR = 6,
	NR = 16,
#endif
	NV = NR / VLEN,
	KC = 256,
	MC = 16 * MR,
	NC = 2048,
};

typedef void (*kernel_fn)(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr,
			  int nr, int accumulate);

/* Each of these computes c[0..w) = sum_p a[p] · B[p][0..w) for one column chunk of B
 * (row stride ldb), in the order p = 0, 1, ... for every column. */
typedef void (*gemv_fn)(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			float *scratch);

struct gemm_ops;
typedef void (*pack_fn)(const struct gemm_ops *o, void *dst, const void *src, int64_t ld,
			int64_t rows, int64_t cols, float *row);

/* One set of kernels with the blocking and packed layout they read. A packed strip of
 * A holds mr rows, one of B nr columns; K is padded to a multiple of kgrain, each packed
 * element takes pel bytes, and an A strip ends with a_tail bytes per row. */
struct gemm_ops {
	size_t in_size; /* bytes of one element of A and B */
	int mr, nr, kc, mc, nc;
	int kgrain, pel, a_tail;
	/* Loop order of the macro-kernel. 0: a strip of B stays in L1 while the kernel sweeps
	 * the block of A; 1: a strip of A stays in L1 while it sweeps the panel of B (L2). */
	int a_in_l1;
	pack_fn pack_a; /* rows = mc, cols = kc */
	pack_fn pack_b; /* rows = kc, cols = nc */
	kernel_fn kernel;
	gemv_fn gemv;
};

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Bytes of one packed strip of A or B, kc deep. */
static inline size_t strip_a_bytes(const struct gemm_ops *o, int64_t kc)
{
	return (size_t)(o->mr * (DIV_UP(kc, o->kgrain) * o->kgrain * o->pel + o->a_tail));
}

static inline size_t strip_b_bytes(const struct gemm_ops *o, int64_t kc)
{
	return (size_t)(o->nr * DIV_UP(kc, o->kgrain) * o->kgrain * o->pel);
}

/* ref_generic.c: the kernels every CPU runs, with the generic blocking. */
void rb_ref_generic_f16_ops(struct gemm_ops *ops);
void rb_ref_generic_i8_ops(struct gemm_ops *ops);
/* Row p of a packed B panel of strips nr wide, from one converted row of nc values. */
void rb_ref_scatter_b_row(float *dst, const float *row, int64_t kc, int64_t p, int64_t nc,
			  int64_t nr);

/* The int8 GEMV of the SIMD families: rows4 folds four rows of B into the sums, row1 one;
 * rb_ref_axpy_i8_tail does the columns past the last whole vector. */
typedef void (*rows4_i8_fn)(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb, int64_t w);
typedef void (*row_i8_fn)(int32_t *acc, int8_t a, const int8_t *b, int64_t w);
void rb_ref_gemv_i8_rows(rows4_i8_fn rows4, row_i8_fn row1, const int8_t *a, const int8_t *b,
			 int64_t ldb, int64_t k, int64_t w, int32_t *c);
void rb_ref_axpy_i8_tail(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb, int rows,
			 int64_t j0, int64_t w);

/* The same for fp16 (A already in fp32): rows [p0, k) of B added into acc, which the
 * caller zeroed, four at a time, then one; rb_ref_fma_f16_tail adds the columns
 * [j0, w) of `rows` rows with fused multiply-adds in row order, as the vectors do. */
typedef void (*rows4_f16_fn)(float *restrict acc, const float *af, const uint16_t *b, int64_t ldb,
			     int64_t w);
typedef void (*row_f16_fn)(float *restrict acc, float s, const uint16_t *b, int64_t w);
void rb_ref_gemv_f16_rows(rows4_f16_fn rows4, row_f16_fn row1, const float *af, const uint16_t *b,
			  int64_t ldb, int64_t k, int64_t w, float *acc, int64_t p0);
void rb_ref_fma_f16_tail(float *acc, const float *af, const uint16_t *b, int64_t ldb, int rows,
			 int64_t j0, int64_t w);

/* ref_x86.c: on top of the generic set, what the CPU has: AVX2/FMA kernels (avx2),
 * AVX-512 kernels with their own blocking (avx512), the F16C GEMV (f16c), VNNI int8. */
void rb_ref_x86_f16_ops(struct gemm_ops *ops, bool avx2, bool avx512, bool f16c);
void rb_ref_x86_i8_ops(struct gemm_ops *ops, bool avx2, bool vnni);

/* ref_neon.c: the NEON GEMVs on top of the generic set. */
void rb_ref_neon_f16_ops(struct gemm_ops *ops);
void rb_ref_neon_i8_ops(struct gemm_ops *ops);

#endif
