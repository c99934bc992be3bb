/* The kernels of the emulated NPU's arithmetic (hw_gemm_kern.h; the accumulation order
 * they keep is described in hw_gemm.c): the MR×NR micro-kernels on GCC vector
 * extensions (portable, and built again for AVX2+FMA), the AVX-512 and direct kernels
 * on x86, the conversions of A and B to fp32, and the choice of a family at run time. */
#include "sim/hw_gemm_kern.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/fp16.h"
#include "sim/npu_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define SIM_X86 1
#endif

/* A vector holds VL of the 8 lanes: 8 on x86 (one AVX register; two SSE registers in
 * the portable build), 4 on aarch64, where GCC spills wider generic vectors. */
#if defined(__aarch64__)
#define VL 4
#else
#define VL 8
#endif
#define NV (LANES / VL)

typedef float vf __attribute__((vector_size(VL * sizeof(float))));
typedef int32_t vi __attribute__((vector_size(VL * sizeof(int32_t))));
typedef uint32_t vu __attribute__((vector_size(VL * sizeof(uint32_t))));

/* How far ahead (in weight blocks) the direct kernels prefetch. */
#define PREFETCH_BLOCKS 8

static float reduce_f32(const float *l)
{
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}

static int32_t reduce_i32(const int32_t *l)
{
	uint32_t u[LANES];

	for (int i = 0; i < LANES; i++)
		u[i] = (uint32_t)l[i];
	return (int32_t)(((u[0] + u[4]) + (u[2] + u[6])) + ((u[1] + u[5]) + (u[3] + u[7])));
}

static void reduce_portable(uint32_t *dst, const float *lanes, int64_t n, int ints)
{
	for (int64_t t = 0; t < n; t++) {
		const float *l = lanes + t * LANES;
		float v;
		int32_t i;

		if (ints) {
			i = reduce_i32((const int32_t *)(const void *)l);
			memcpy(&dst[t], &i, 4);
		} else {
			v = reduce_f32(l);
			memcpy(&dst[t], &v, 4);
		}
	}
}

/* ---- micro-kernels -------------------------------------------------------------- */

/* GCC does not contract in ISO C mode; the kernels want fused multiply-adds (which give
 * the same bits here, see the top). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#endif

static inline __attribute__((always_inline)) void
kern_load(const struct kargs *k, vf acc[MR_MAX][NR_MAX][NV], int mr, int nr, int ints)
{
#pragma GCC unroll 4
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int j = 0; j < nr; j++)
#pragma GCC unroll 2
			for (int v = 0; v < NV; v++) {
				const float *p =
				    (const float *)k->acc + i * k->acc_row + j * LANES + v * VL;

				if (ints)
					acc[i][j][v] = (vf){0};
				else
					memcpy(&acc[i][j][v], p, sizeof(vf));
			}
}

static inline __attribute__((always_inline)) void
kern_store(const struct kargs *k, vf acc[MR_MAX][NR_MAX][NV], int mr, int nr, int ints)
{
#pragma GCC unroll 4
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int j = 0; j < nr; j++)
#pragma GCC unroll 2
			for (int v = 0; v < NV; v++) {
				float *p = (float *)k->acc + i * k->acc_row + j * LANES + v * VL;
				vu sum;

				if (!ints) {
					memcpy(p, &acc[i][j][v], sizeof(vf));
					continue;
				}
				memcpy(&sum, p, sizeof(sum));
				sum += (vu) __builtin_convertvector(acc[i][j][v], vi);
				memcpy(p, &sum, sizeof(sum));
			}
}

/* One plane: 8 channels of mr rows times 8 channels of nr kernels. */
static inline __attribute__((always_inline)) void
kern_step(vf acc[MR_MAX][NR_MAX][NV], const float *ap, const float *bp, int mr, int nr)
{
	vf av[MR_MAX][NV];

#pragma GCC unroll 4
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 2
		for (int v = 0; v < NV; v++)
			memcpy(&av[i][v], ap + i * LANES + v * VL, sizeof(vf));
#pragma GCC unroll 4
	for (int j = 0; j < nr; j++) {
		vf bv[NV];

#pragma GCC unroll 2
		for (int v = 0; v < NV; v++)
			memcpy(&bv[v], bp + j * K_BLOCK + v * VL, sizeof(vf));
#pragma GCC unroll 4
		for (int i = 0; i < mr; i++)
#pragma GCC unroll 2
			for (int v = 0; v < NV; v++)
				acc[i][j][v] += av[i][v] * bv[v];
	}
}

static inline __attribute__((always_inline)) void kern_body(const struct kargs *k, int mr, int nr,
							    int ints)
{
	vf acc[MR_MAX][NR_MAX][NV];
	const float *a = k->a, *b = k->b;
	int64_t g = 0;

	kern_load(k, acc, mr, nr, ints);
	/* whole 32-channel blocks: four planes each */
	for (; g + 4 <= k->steps; g += 4, a += 4 * A_PLANE, b += k->b_block) {
#pragma GCC unroll 4
		for (int s = 0; s < 4; s++)
			kern_step(acc, a + s * A_PLANE, b + s * LANES, mr, nr);
	}
	for (int s = 0; g < k->steps; g++, s++)
		kern_step(acc, a + s * A_PLANE, b + s * LANES, mr, nr);
	kern_store(k, acc, mr, nr, ints);
}

#define KERN_CASE(m, n)                                                                            \
	case (m)*8 + (n):                                                                          \
		kern_body(k, m, n, ints);                                                          \
		break;
#define KERN_CASES_ROW(m) KERN_CASE(m, 1) KERN_CASE(m, 2) KERN_CASE(m, 3) KERN_CASE(m, 4)
#define KERN_SWITCH(k, mr, nr, ints)                                                               \
	switch ((mr)*8 + (nr)) {                                                                   \
		KERN_CASES_ROW(1)                                                                  \
		KERN_CASES_ROW(2)                                                                  \
		KERN_CASES_ROW(3)                                                                  \
	default:                                                                                   \
		break;                                                                             \
	}

static void kern_portable(const struct kargs *k, int mr, int nr, int ints)
{
	KERN_SWITCH(k, mr, nr, ints);
}

#if defined(SIM_X86)
__attribute__((target("avx2,fma"))) static void kern_avx2(const struct kargs *k, int mr, int nr,
							  int ints)
{
	KERN_SWITCH(k, mr, nr, ints);
}

/* The direct kernels: kern_body with B's vectors converted from the weights (8 fp16 or
 * 8 int8 channels of one kernel). Only for LANES == VL == 8. */
#define AVX_DIRECT __attribute__((always_inline, target("avx2,fma,f16c"))) static inline

AVX_DIRECT vf load_w_f16(const uint8_t *p)
{
	return (vf)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
}

AVX_DIRECT vf load_w_i8(const uint8_t *p)
{
	return (vf)_mm256_cvtepi32_ps(
	    _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)p)));
}

AVX_DIRECT void direct_step(vf acc[MR_MAX][NR_MAX][NV], const float *ap, const uint8_t *wp, int mr,
			    int nr, int i8)
{
	vf av[MR_MAX][NV];

#pragma GCC unroll 4
	for (int i = 0; i < mr; i++)
		memcpy(&av[i][0], ap + i * LANES, sizeof(vf));
#pragma GCC unroll 4
	for (int j = 0; j < nr; j++) {
		vf bv = i8 ? load_w_i8(wp + j * K_BLOCK) : load_w_f16(wp + j * K_BLOCK * 2);

#pragma GCC unroll 4
		for (int i = 0; i < mr; i++)
			acc[i][j][0] += av[i][0] * bv;
	}
}

AVX_DIRECT void direct_body(const struct kargs *k, int mr, int nr, int i8)
{
	vf acc[MR_MAX][NR_MAX][NV];
	int64_t plane = i8 ? LANES : 2 * LANES; /* bytes of 8 channels */
	const float *a = k->a;
	const uint8_t *w = k->w;
	int64_t g = 0;

	kern_load(k, acc, mr, nr, i8);
	for (; g + 4 <= k->steps; g += 4, a += 4 * A_PLANE, w += k->w_block) {
		/* a strip reads nr rows of every block: too sparse for the hardware prefetcher */
#pragma GCC unroll 4
		for (int j = 0; j < nr; j++)
			__builtin_prefetch(w + PREFETCH_BLOCKS * k->w_block + j * plane * 4);
#pragma GCC unroll 4
		for (int s = 0; s < 4; s++)
			direct_step(acc, a + s * A_PLANE, w + s * plane, mr, nr, i8);
	}
	for (int s = 0; g < k->steps; g++, s++)
		direct_step(acc, a + s * A_PLANE, w + s * plane, mr, nr, i8);
	kern_store(k, acc, mr, nr, i8);
}

#define DIRECT_CASE(m, n, i8)                                                                      \
	case (m)*8 + (n):                                                                          \
		direct_body(k, m, n, i8);                                                          \
		break;
#define DIRECT_CASES_ROW(m, i8)                                                                    \
	DIRECT_CASE(m, 1, i8) DIRECT_CASE(m, 2, i8) DIRECT_CASE(m, 3, i8) DIRECT_CASE(m, 4, i8)
#define DIRECT_SWITCH(k, mr, nr, i8)                                                               \
	switch ((mr)*8 + (nr)) {                                                                   \
		DIRECT_CASES_ROW(1, i8)                                                            \
		DIRECT_CASES_ROW(2, i8)                                                            \
		DIRECT_CASES_ROW(3, i8)                                                            \
	default:                                                                                   \
		break;                                                                             \
	}

__attribute__((target("avx2,fma,f16c"))) static void kern_direct_f16(const struct kargs *k, int mr,
								     int nr, int ints)
{
	(void)ints;
	DIRECT_SWITCH(k, mr, nr, 0);
}

__attribute__((target("avx2,fma,f16c"))) static void kern_direct_i8(const struct kargs *k, int mr,
								    int nr, int ints)
{
	(void)ints;
	DIRECT_SWITCH(k, mr, nr, 1);
}
#endif

#if defined(SIM_X86)
/* ---- AVX-512: two kernels per register -------------------------------------------
 * A zmm holds the 8 lanes of (row i, kernel j) and the 8 of (row i, kernel j + 1):
 * the same lanes in the same order, twice the multiply-adds per instruction. Row i's 8
 * channels of a plane are broadcast to both halves; the tile of B keeps the two
 * kernels' 8 channels of a plane side by side (the pairs layout, see convert_b), so a
 * pair is one load. 6 rows × 4 pairs of accumulators take 24 of the 32 registers, the
 * 4 pairs of B 4 more; 8 kernels divide both kernel groups. An odd kernel count leaves
 * the last pair half used: its other half adds the next kernel of the group (in the
 * weights, never written out) into an accumulator slot of the item that nobody reads. */
#define AVX512_TARGET "avx512f,avx2,fma,f16c"
#define AVX512_INLINE __attribute__((always_inline, target(AVX512_TARGET))) static inline
enum { MR512 = 6, NP512 = 4 };

AVX512_INLINE __m512 bcast_plane(const float *p)
{
	/* vbroadcastf64x4 moves the 8 floats' bits as 4 doubles: AVX-512F, unlike f32x8 */
	return _mm512_castpd_ps(
	    _mm512_broadcast_f64x4(_mm256_loadu_pd((const double *)(const void *)p)));
}

/* acc: mr rows of np pairs, row i at acc + i * stride (the kernels' own arrays). */
AVX512_INLINE void k512_load(const struct kargs *k, __m512 *acc, int stride, int mr, int np,
			     int ints)
{
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 8
		for (int p = 0; p < np; p++)
			acc[i * stride + p] = ints
						  ? _mm512_setzero_ps()
						  : _mm512_loadu_ps((const float *)k->acc +
								    i * k->acc_row + p * 2 * LANES);
}

AVX512_INLINE void k512_store(const struct kargs *k, const __m512 *acc, int stride, int mr, int np,
			      int ints)
{
#pragma GCC unroll 8
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 8
		for (int p = 0; p < np; p++) {
			float *dst = (float *)k->acc + i * k->acc_row + p * 2 * LANES;

			if (!ints) {
				_mm512_storeu_ps(dst, acc[i * stride + p]);
				continue;
			}
			/* exact integers: truncation is conversion; vpaddd wraps mod 2^32 */
			_mm512_storeu_si512(
			    dst, _mm512_add_epi32(_mm512_loadu_si512(dst),
						  _mm512_cvttps_epi32(acc[i * stride + p])));
		}
}

/* One plane: 8 channels of mr rows times 8 channels of np pairs of kernels. */
AVX512_INLINE void k512_step(__m512 acc[MR512][NP512], const float *ap, const float *bp, int mr,
			     int np)
{
	__m512 av[MR512];

#pragma GCC unroll 8
	for (int i = 0; i < mr; i++)
		av[i] = bcast_plane(ap + i * LANES);
#pragma GCC unroll 8
	for (int p = 0; p < np; p++) {
		__m512 bv = _mm512_loadu_ps(bp + p * 2 * K_BLOCK);

#pragma GCC unroll 8
		for (int i = 0; i < mr; i++)
			acc[i][p] = _mm512_fmadd_ps(av[i], bv, acc[i][p]);
	}
}

AVX512_INLINE void k512_body(const struct kargs *k, int mr, int np, int ints)
{
	__m512 acc[MR512][NP512];
	const float *a = k->a, *b = k->b;
	int64_t g = 0;

	k512_load(k, &acc[0][0], NP512, mr, np, ints);
	for (; g + 4 <= k->steps; g += 4, a += 4 * A_PLANE, b += k->b_block) {
#pragma GCC unroll 4
		for (int s = 0; s < 4; s++)
			k512_step(acc, a + s * A_PLANE, b + s * 2 * LANES, mr, np);
	}
	for (int s = 0; g < k->steps; g++, s++)
		k512_step(acc, a + s * A_PLANE, b + s * 2 * LANES, mr, np);
	k512_store(k, &acc[0][0], NP512, mr, np, ints);
}

#define K512_CASE(m, p)                                                                            \
	case (m)*8 + (p):                                                                          \
		k512_body(k, m, p, ints);                                                          \
		break;
#define K512_CASES_ROW(m) K512_CASE(m, 1) K512_CASE(m, 2) K512_CASE(m, 3) K512_CASE(m, 4)

/* nr kernels: (nr + 1) / 2 pairs. */
__attribute__((target(AVX512_TARGET))) static void kern_avx512(const struct kargs *k, int mr,
							       int nr, int ints)
{
	switch (mr * 8 + (nr + 1) / 2) {
		K512_CASES_ROW(1)
		K512_CASES_ROW(2)
		K512_CASES_ROW(3)
		K512_CASES_ROW(4)
		K512_CASES_ROW(5)
		K512_CASES_ROW(6)
	default:
		break;
	}
}

/* A pair from the weights: w is kernel r's 8 channels of a plane; kernel r + 1's are a
 * weight block's kernel stride (32 channels) further. */
AVX512_INLINE __m512 pair_w_f16(const uint8_t *w)
{
	__m256i h = _mm256_inserti128_si256(
	    _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)w)),
	    _mm_loadu_si128((const __m128i *)(const void *)(w + K_BLOCK * 2)), 1);

	return _mm512_cvtph_ps(h);
}

AVX512_INLINE __m512 pair_w_i8(const uint8_t *w)
{
	__m128i q8 =
	    _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)(const void *)w),
			       _mm_loadl_epi64((const __m128i *)(const void *)(w + K_BLOCK)));

	return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8));
}

/* The direct kernel of AVX-512: k512_body with the pairs made from the weights in
 * registers, for items of at most DMR512 rows (decode), where a converted tile would be
 * used once. Its strip is DNP512 pairs, a whole fp16 kernel group (half an int8 one):
 * each weight block's strip is one run of memory (1 KiB in fp16), read once from start
 * to end, where the AVX2 kernel's 4 kernels take a quarter of it and come back for the
 * rest. 3 rows x 8 pairs of accumulators take 24 of the 32 registers. */
enum { DMR512 = 3, DNP512 = 8 };

AVX512_INLINE void d512_step(__m512 acc[DMR512][DNP512], const float *ap, const uint8_t *wp, int mr,
			     int np, int i8)
{
	__m512 av[DMR512];

#pragma GCC unroll 4
	for (int i = 0; i < mr; i++)
		av[i] = bcast_plane(ap + i * LANES);
#pragma GCC unroll 8
	for (int p = 0; p < np; p++) {
		__m512 bv =
		    i8 ? pair_w_i8(wp + p * 2 * K_BLOCK) : pair_w_f16(wp + p * 2 * K_BLOCK * 2);

#pragma GCC unroll 4
		for (int i = 0; i < mr; i++)
			acc[i][p] = _mm512_fmadd_ps(av[i], bv, acc[i][p]);
	}
}

/* A whole block pair by pair: the pair's lines are read once, in order, for all 4
 * planes (each accumulator still adds its planes in increasing order). */
AVX512_INLINE void d512_block(__m512 acc[DMR512][DNP512], const float *ap, const uint8_t *wp,
			      int mr, int np, int i8)
{
	int64_t plane = i8 ? LANES : 2 * LANES;
	__m512 av[2][4];

#pragma GCC unroll 2
	for (int i = 0; i < mr; i++)
#pragma GCC unroll 4
		for (int s = 0; s < 4; s++)
			av[i][s] = bcast_plane(ap + s * A_PLANE + i * LANES);
#pragma GCC unroll 8
	for (int p = 0; p < np; p++)
#pragma GCC unroll 4
		for (int s = 0; s < 4; s++) {
			const uint8_t *w = wp + p * 8 * plane + s * plane;
			__m512 bv = i8 ? pair_w_i8(w) : pair_w_f16(w);

#pragma GCC unroll 2
			for (int i = 0; i < mr; i++)
				acc[i][p] = _mm512_fmadd_ps(av[i][s], bv, acc[i][p]);
		}
}

AVX512_INLINE void d512_body(const struct kargs *k, int mr, int np, int i8)
{
	__m512 acc[DMR512][DNP512];
	int64_t plane = i8 ? LANES : 2 * LANES; /* bytes of 8 channels */
	const float *a = k->a;
	const uint8_t *w = k->w;
	int64_t g = 0;

	k512_load(k, &acc[0][0], DNP512, mr, np, i8);
	for (; g + 4 <= k->steps; g += 4, a += 4 * A_PLANE, w += k->w_block) {
		/* the strip's cache lines PREFETCH_BLOCKS blocks ahead: a pair of kernels is
		 * 8 planes of the block */
#pragma GCC unroll 16
		for (int64_t l = 0; l < np * 8 * plane; l += 64)
			__builtin_prefetch(w + PREFETCH_BLOCKS * k->w_block + l);
		if (mr <= 2) {
			d512_block(acc, a, w, mr, np, i8);
			continue;
		}
#pragma GCC unroll 4
		for (int s = 0; s < 4; s++)
			d512_step(acc, a + s * A_PLANE, w + s * plane, mr, np, i8);
	}
	for (int s = 0; g < k->steps; g++, s++)
		d512_step(acc, a + s * A_PLANE, w + s * plane, mr, np, i8);
	k512_store(k, &acc[0][0], DNP512, mr, np, i8);
}

#define D512_CASE(m, p, i8)                                                                        \
	case (m)*16 + (p):                                                                         \
		d512_body(k, m, p, i8);                                                            \
		break;
#define D512_CASES_4(m, p, i8)                                                                     \
	D512_CASE(m, p, i8) D512_CASE(m, p + 1, i8) D512_CASE(m, p + 2, i8) D512_CASE(m, p + 3, i8)
#define D512_CASES_ROW(m, i8) D512_CASES_4(m, 1, i8) D512_CASES_4(m, 5, i8)
/* nr kernels: (nr + 1) / 2 pairs. */
#define D512_SWITCH(k, mr, nr, i8)                                                                 \
	switch ((mr)*16 + ((nr) + 1) / 2) {                                                        \
		D512_CASES_ROW(1, i8)                                                              \
		D512_CASES_ROW(2, i8)                                                              \
		D512_CASES_ROW(3, i8)                                                              \
	default:                                                                                   \
		break;                                                                             \
	}

__attribute__((target(AVX512_TARGET))) static void kern_direct512_f16(const struct kargs *k, int mr,
								      int nr, int ints)
{
	(void)ints;
	D512_SWITCH(k, mr, nr, 0);
}

__attribute__((target(AVX512_TARGET))) static void kern_direct512_i8(const struct kargs *k, int mr,
								     int nr, int ints)
{
	(void)ints;
	D512_SWITCH(k, mr, nr, 1);
}

/* Blocks [0, blocks) of one kernel group of the weights to fp32 in the pairs layout:
 * per block, per pair of kernels, per plane, the pair's two 8-channel vectors. */
__attribute__((target(AVX512_TARGET))) static void b_pairs_f16(float *dst, const uint8_t *src,
							       int64_t kg, int64_t blocks)
{
	for (int64_t q = 0; q < blocks * kg; q += 2, src += 2 * K_BLOCK * 2)
		for (int s = 0; s < K_BLOCK / LANES; s++, dst += 2 * LANES)
			_mm512_storeu_ps(dst, pair_w_f16(src + s * LANES * 2));
}

__attribute__((target(AVX512_TARGET))) static void b_pairs_i8(float *dst, const uint8_t *src,
							      int64_t kg, int64_t blocks)
{
	for (int64_t q = 0; q < blocks * kg; q += 2, src += 2 * K_BLOCK)
		for (int s = 0; s < K_BLOCK / LANES; s++, dst += 2 * LANES)
			_mm512_storeu_ps(dst, pair_w_i8(src + s * LANES));
}

/* The tree of the top for two elements per register, in three additions: each lane
 * plus the one 4 away (the other 128-bit half: l0 + l4, l1 + l5, ...), plus the one 2
 * away, plus its neighbour. Lane 0 of each half ends with the sum (a + b == b + a). */
__attribute__((target(AVX512_TARGET))) static void reduce_avx512(uint32_t *dst, const float *lanes,
								 int64_t n, int ints)
{
	int64_t t = 0;

	for (; t + 2 <= n; t += 2) {
		__m512 z = _mm512_loadu_ps(lanes + t * LANES);
		__m512i q = _mm512_castps_si512(z);
		uint32_t out[2 * LANES];

		if (ints) {
			q = _mm512_add_epi32(q,
					     _mm512_shuffle_i32x4(q, q, _MM_SHUFFLE(2, 3, 0, 1)));
			q = _mm512_add_epi32(
			    q, _mm512_shuffle_epi32(q, (_MM_PERM_ENUM)_MM_SHUFFLE(1, 0, 3, 2)));
			q = _mm512_add_epi32(
			    q, _mm512_shuffle_epi32(q, (_MM_PERM_ENUM)_MM_SHUFFLE(2, 3, 0, 1)));
		} else {
			z = _mm512_add_ps(z, _mm512_shuffle_f32x4(z, z, _MM_SHUFFLE(2, 3, 0, 1)));
			z = _mm512_add_ps(z, _mm512_permute_ps(z, _MM_SHUFFLE(1, 0, 3, 2)));
			z = _mm512_add_ps(z, _mm512_permute_ps(z, _MM_SHUFFLE(2, 3, 0, 1)));
			q = _mm512_castps_si512(z);
		}
		_mm512_storeu_si512(out, q);
		dst[t] = out[0];
		dst[t + 1] = out[LANES];
	}
	reduce_portable(dst + t, lanes + t * LANES, n - t, ints);
}
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

typedef int8_t v8qi __attribute__((vector_size(LANES)));
typedef float v8sf __attribute__((vector_size(LANES * sizeof(float))));

/* int8 -> fp32, n a multiple of 8 (planes and blocks are). Baseline x86 lowers the
 * conversion element by element, hence the AVX2 build. */
static inline __attribute__((always_inline)) void i8_body(float *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i += LANES) {
		v8qi q;
		v8sf f;

		memcpy(&q, src + i, sizeof(q));
		f = __builtin_convertvector(q, v8sf);
		memcpy(dst + i, &f, sizeof(f));
	}
}

static void i8_portable(float *dst, const uint8_t *src, size_t n)
{
	i8_body(dst, src, n);
}

#if defined(SIM_X86)
__attribute__((target("avx2"))) static void i8_avx2(float *dst, const uint8_t *src, size_t n)
{
	i8_body(dst, src, n);
}
#endif

static void f16_portable(float *dst, const uint8_t *src, size_t n)
{
	rb_fp16_to_f32_array(dst, (const uint16_t *)(const void *)src, n);
}

/* fp16 A of dense surfaces, one surface per plane: n values at byte off of surf[p] to
 * plane p of the scratch, for p < planes. One call per convert_a: a decode task's
 * planes hold 8 values each, and a call per plane cost more than its conversion. */
static void f16_planes_portable(float *dst, const uint8_t *const *surf, size_t off, int64_t planes,
				size_t n)
{
	for (int64_t p = 0; p < planes; p++)
		f16_portable(dst + p * A_PLANE, surf[p] + off, n);
}

#if defined(SIM_X86)
/* The families that have F16C: no probe per call (convert_a calls this per plane). */
__attribute__((always_inline, target("avx,f16c"))) static inline void
f16_f16c_body(float *dst, const uint8_t *src, size_t n)
{
	for (size_t i = 0; i < n; i += LANES)
		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(
					      (const __m128i *)(const void *)(src + i * 2))));
}

__attribute__((target("avx,f16c"))) static void f16_f16c(float *dst, const uint8_t *src, size_t n)
{
	f16_f16c_body(dst, src, n);
}

__attribute__((target("avx,f16c"))) static void
f16_planes_f16c(float *dst, const uint8_t *const *surf, size_t off, int64_t planes, size_t n)
{
	for (int64_t p = 0; p < planes; p++)
		f16_f16c_body(dst + p * A_PLANE, surf[p] + off, n);
}
#endif

#if defined(SIM_X86)
/* CPUID leaf 1, ECX: clang 14's __builtin_cpu_supports does not know "f16c". Asked
 * once per process: CPUID traps to the hypervisor in a VM (about 7 µs), and every
 * emulated task picks its kernel. 0: not asked yet, 1: no, 2: yes. */
static bool has_f16c(void)
{
	static atomic_int known;
	unsigned a, b, c, d;
	int v = atomic_load_explicit(&known, memory_order_relaxed);

	if (!v) {
		v = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) ? 2 : 1;
		atomic_store_explicit(&known, v, memory_order_relaxed);
	}
	return v == 2;
}
#endif

/* Kernel families, best last; on other machines only SIM_PORTABLE applies. */
enum sim_impl { SIM_AUTO, SIM_PORTABLE, SIM_AVX2, SIM_AVX512 };

static const char *const impl_names[] = {
    [SIM_PORTABLE] = "portable", [SIM_AVX2] = "avx2", [SIM_AVX512] = "avx512"};

static atomic_int forced_impl; /* SIM_AUTO: the best this CPU has */

static enum sim_impl best_impl(void)
{
#if defined(SIM_X86)
	if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !has_f16c())
		return SIM_PORTABLE;
	return __builtin_cpu_supports("avx512f") ? SIM_AVX512 : SIM_AVX2;
#else
	return SIM_PORTABLE;
#endif
}

int rb_sim_gemm_force_impl(const char *name)
{
	if (!name) {
		atomic_store(&forced_impl, SIM_AUTO);
		return 0;
	}
	for (int i = SIM_PORTABLE; i <= SIM_AVX512; i++) {
		if (strcmp(name, impl_names[i]) != 0)
			continue;
		if (i > (int)best_impl()) /* each family's CPU runs the ones before it */
			return -ENOTSUP;
		atomic_store(&forced_impl, i);
		return 0;
	}
	return -EINVAL;
}

/* Tiles: 3×4 takes 12 of the 16 AVX registers for accumulators; AVX-512 see above; the
 * SSE build (two registers per vector) and NEON (two per 8 lanes, 32 registers) get
 * smaller tiles. */
struct kern_ops rb_sim_gemm_kernels(void)
{
	int forced = atomic_load_explicit(&forced_impl, memory_order_relaxed);
	enum sim_impl impl = forced != SIM_AUTO ? (enum sim_impl)forced : best_impl();
	struct kern_ops o = {.name = impl_names[SIM_PORTABLE],
			     .fn = kern_portable,
			     .mr = 2,
			     .nr = 2,
			     .i8_to_f32 = i8_portable,
			     .f16_to_f32 = f16_portable,
			     .f16_planes = f16_planes_portable,
			     .reduce = reduce_portable};

#if defined(SIM_X86)
	if (impl >= SIM_AVX2)
		o = (struct kern_ops){.name = impl_names[SIM_AVX2],
				      .fn = kern_avx2,
				      .mr = 3,
				      .nr = 4,
				      .i8_to_f32 = i8_avx2,
				      .f16_to_f32 = f16_f16c,
				      .f16_planes = f16_planes_f16c,
				      .direct_f16 = kern_direct_f16,
				      .direct_i8 = kern_direct_i8,
				      .dmr = 3,
				      .dnr = 4,
				      .reduce = reduce_portable};
	if (impl == SIM_AVX512) {
		o.name = impl_names[SIM_AVX512];
		o.fn = kern_avx512;
		o.mr = MR512;
		o.nr = 2 * NP512;
		o.pairs_f16 = b_pairs_f16;
		o.pairs_i8 = b_pairs_i8;
		o.direct_f16 = kern_direct512_f16;
		o.direct_i8 = kern_direct512_i8;
		o.dmr = DMR512;
		o.dnr = 2 * DNP512;
		o.reduce = reduce_avx512;
	}
#elif defined(__aarch64__)
	o.nr = 4;
#endif
	(void)impl;
	return o;
}

const char *rb_sim_gemm_impl(void)
{
	return rb_sim_gemm_kernels().name;
}
