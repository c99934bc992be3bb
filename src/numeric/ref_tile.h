/* The generic micro-kernel's body (GCC vector extensions), always inlined: ref_generic.c
 * compiles it for any CPU, ref_x86.c again for AVX2/FMA. Include it after
 * ref_kernels.h, under the fp-contract pragma of both files. Private to numeric/. */
#ifndef RB_NUMERIC_REF_TILE_H
#define RB_NUMERIC_REF_TILE_H

#include <string.h>

#include "numeric/ref_kernels.h"

/* Writes (or adds, when `accumulate`) the mr×nr valid part of a tile held as MR rows
 * of NR 4-byte lanes of vec_t to C of elem_t; partial tiles go through lanes of lane_t
 * (the sum wraps for int32: uint32 lanes). One body for the fp32 and int32 stores. */
#define STORE_TILE_BODY(elem_t, vec_t, lane_t)                                                     \
	do {                                                                                       \
		lane_t tile[MR][NR];                                                               \
                                                                                                   \
		if (mr == MR && nr == NR) {                                                        \
			_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                       \
			    _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                   \
			{                                                                          \
				vec_t cv = acc[r][v], old;                                         \
				elem_t *at = c + r * ldc + v * VLEN;                               \
                                                                                                   \
				if (accumulate) {                                                  \
					memcpy(&old, at, sizeof(old));                             \
					cv += old;                                                 \
				}                                                                  \
				memcpy(at, &cv, sizeof(cv));                                       \
			}                                                                          \
			return;                                                                    \
		}                                                                                  \
		_Pragma("GCC unroll 8") for (int r = 0; r < MR; r++)                               \
		    _Pragma("GCC unroll 4") for (int v = 0; v < NV; v++)                           \
			memcpy(&tile[r][v * VLEN], &acc[r][v], sizeof(acc[r][v]));                 \
		for (int r = 0; r < mr; r++)                                                       \
			for (int j = 0; j < nr; j++)                                               \
				c[r * ldc + j] =                                                   \
				    (elem_t)(accumulate ? (lane_t)c[r * ldc + j] + tile[r][j]      \
							: tile[r][j]);                             \
	} while (0)

static inline __attribute__((always_inline)) void
store_tile_f32(float *c, int64_t ldc, vf acc[MR][NV], int mr, int nr, int accumulate)
{
	STORE_TILE_BODY(float, vf, float);
}

/* acc = the MR×NR product of a packed strip of A and one of B, kc deep. */
static inline __attribute__((always_inline)) void tile_f32(int64_t kc, const float *restrict a,
							   const float *restrict b, vf acc[MR][NV])
{
	memset(acc, 0, sizeof(vf) * MR * NV);
	for (int64_t p = 0; p < kc; p++, a += MR, b += NR) {
		vf bv[NV];

#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			memcpy(&bv[v], b + v * VLEN, sizeof(bv[v]));
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
			vf av = SPLAT(a[r]);

#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				acc[r][v] += av * bv[v];
		}
	}
}

static inline __attribute__((always_inline)) void kernel_f32_body(int64_t kc, const float *a,
								  const float *b, float *c,
								  int64_t ldc, int mr, int nr,
								  int accumulate)
{
	vf acc[MR][NV];

	tile_f32(kc, a, b, acc);
	store_tile_f32(c, ldc, acc, mr, nr, accumulate);
}

static inline __attribute__((always_inline)) void
store_tile_i32(int32_t *c, int64_t ldc, vu acc[MR][NV], int mr, int nr, int accumulate)
{
	STORE_TILE_BODY(int32_t, vu, uint32_t);
}

/* int8 on the fp32 FMA units, which have twice the throughput of int32 multiply-adds on
 * the Cortex-A76 and are no slower on x86: every product is an integer of magnitude
 * <= 2^14, so every partial sum of a KC-deep block is an integer below 2^22, which fp32
 * holds exactly whatever the rounding or fusing. The block's exact sums are converted
 * to int32 and added to C in uint32 arithmetic (wrapping, see top). */
_Static_assert(KC * 128 * 128 <= (1 << 24), "int8 blocks must sum exactly in fp32");

static inline __attribute__((always_inline)) void kernel_i32_body(int64_t kc, const float *a,
								  const float *b, int32_t *c,
								  int64_t ldc, int mr, int nr,
								  int accumulate)
{
	vf acc[MR][NV];
	vu iacc[MR][NV];

	tile_f32(kc, a, b, acc);
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			iacc[r][v] = (vu) __builtin_convertvector(acc[r][v], vi);
	store_tile_i32(c, ldc, iacc, mr, nr, accumulate);
}

#endif
