/* The arithmetic of a task: the 1×1 convolution C = A·B read and written in the NPU's
 * own layouts (npu-facts §b.2-§b.4), blocked and multi-threaded like a GEMM.
 *
 * Accumulation order, fixed per output element whatever the threads, the blocking, the
 * kernel variant or the split of a matmul into tasks along M or N (the silicon's order
 * is unknown, open question 1):
 *   fp16: channel k goes to lane k mod 8; each lane sums its products in increasing k,
 *   in fp32, from +0. The element is ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))
 *   in fp32, rounded to fp16 (nearest, ties to even) for fp16 output. A product of two
 *   fp16 (or int8) values is exact in fp32, so fused and unfused multiply-adds agree and
 *   every kernel variant gives the same bits.
 *   int8: exact, int32 modulo 2^32. Within a pass of KC channels the lane sums are exact
 *   in fp32 (|sum| <= 32·2^14 < 2^24); they are added to int32 lanes after each pass.
 *
 * Blocking: work items of ROWS pixels × KERNELS kernels are handed to threads by an
 * atomic counter; an item runs over the channels in passes of KC. Each pass converts
 * the item's feature rows and weight blocks to fp32 tiles that keep the NPU's order
 * (A: planes of 8 channels × rows, straight from the NC1HWC2 surfaces, or the whole row
 * panel at once when several kernel panels share it; B: blocks of kg kernels × 32
 * channels, straight from the weight layout, or in pairs of kernels for AVX-512), then
 * an MR×NR register-blocked kernel adds into per-element lane accumulators. Kernel
 * families, picked at run time (rb_sim_gemm_force_impl picks one for tests): portable
 * (GCC vector extensions, 8-lane multiply-adds), avx2 (the same built for AVX2+FMA),
 * avx512 (two kernels' 8 lanes per register, see kern_avx512). The item's results go
 * to memory through the DPU address model when its last pass ends. Items of one row
 * panel (M <= 3: decode) would use a B tile once; on x86 they skip it: a direct kernel
 * converts B's vectors from the weights in registers (AVX2/F16C: strips of 4 kernels;
 * AVX-512: strips of 16, each weight block read once from start to end, see d512_body).
 *
 * From task to task a core keeps (struct rb_sim_gemm_mem) its workers' scratch and the
 * weights its last task converted, which a task with WEIGHT_REUSE computes from, as
 * the silicon computes from its CBUF (see plan_wcache). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "numeric/layout.h"
#include "core/fp16.h"
#include "hw/task.h"
#include "sim/npu_internal.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define SIM_X86 1
#endif

/* The 8 lanes of the order above. A vector holds VL of them: 8 on x86 (one AVX
 * register; two SSE registers in the portable build), 4 on aarch64, where GCC spills
 * wider generic vectors. */
#define LANES 8
#if defined(__aarch64__)
#define VL 4
#else
#define VL 8
#endif
#define NV (LANES / VL)

typedef float vf __attribute__((vector_size(VL * sizeof(float))));
typedef int32_t vi __attribute__((vector_size(VL * sizeof(int32_t))));
typedef uint32_t vu __attribute__((vector_size(VL * sizeof(uint32_t))));

#define ATOM    16 /* bytes of a cube atom (§b.1) */
#define K_BLOCK 32 /* channels of a weight block (§b.3) */

/* KC: channels per pass, a multiple of K_BLOCK. ROWS × KC fp32 of A (96 KiB), KERNELS ×
 * KC of B (64 KiB) and the ROWS × KERNELS lane accumulators (192 KiB) sit in L2; one
 * NR-kernel strip of B (4 KiB) in L1. KERNELS is a multiple of both kernel groups.
 * (ROWS 96 measured a little faster than 48 on 128×2048×2048 and 512×2048×8192, whose
 * default plans give tasks of 32 pixels: there ROWS only sets the planes' stride.)
 *
 * Where an emulated run's time goes (x86-64 with AVX-512, 2 CPUs, the default plan of
 * 512×2048×8192, measured 2026-11-27): tasks of 32 pixels × 64 kernels are one item
 * each, so each core runs its tasks on one thread and the cores run at once (npu.c).
 * The 6×4 AVX-512 kernel takes 70% of the CPU time; alone, with B's tile as laid out,
 * it does 105-110 GFLOP/s per CPU, 72% of the FMA peak (151), whether A is laid out by
 * planes or in blocks of 6 rows (126-134 with A and B in L1; B's tile strip by strip
 * measured no faster in a run). Converting A takes 9% of the profile: a task converts
 * its 32 rows, so A is converted once per 64 kernels. Skipping it (wrong results) made
 * runs 18% faster, but neither a cache of the converted rows, used in place or copied
 * into the scratch, nor prefetching the next pass's rows measured faster than
 * converting. KC 512 (half the accumulator loads and stores) measured the same within
 * 2%. */
enum {
	KC = 256,
	ROWS = 96,
	KERNELS = 64,
	MR_MAX = 3,
	NR_MAX = 4,
};

/* Floats from one plane of A to the next in the scratch (a constant: the kernels
 * address A with immediate offsets). */
#define A_PLANE (ROWS * LANES)

/* The most a thread's scratch holds of A converted (a row panel, every channel). */
#define A_WHOLE_BYTES ((size_t)2 << 20)

/* How far ahead (in weight blocks) the direct kernels prefetch. */
#define PREFETCH_BLOCKS 8

/* Below this many multiply-adds per thread, starting a thread costs more than it saves. */
#define MIN_MACS_PER_THREAD (INT64_C(1) << 20)
#define MAX_THREADS         256

struct kargs {
	const float *a;   /* row 0 of the kernel's rows, plane 0 */
	const float *b;   /* kernel 0 of the kernel's kernels, block 0 */
	const uint8_t *w; /* the same in the weights themselves (direct kernels) */
	int64_t w_block;  /* bytes from one 32-channel block of w to the next */
	void *acc;        /* lanes of (row 0, kernel 0): fp32, or int32 for int8 */
	int64_t steps;    /* planes of 8 channels */
	int64_t b_block;  /* floats from one 32-channel block of B to the next */
	int64_t acc_row;  /* 4-byte lanes from one row of acc to the next */
};

typedef void (*kern_fn)(const struct kargs *k, int mr, int nr, int ints);

/* The sums of n output elements from their lanes (fp32, or int32 if ints), as bits. */
typedef void (*reduce_fn)(uint32_t *dst, const float *lanes, int64_t n, int ints);

/* Blocks [0, blocks) of one kernel group of the weights to fp32 in the pairs layout. */
typedef void (*pairs_fn)(float *dst, const uint8_t *src, int64_t kg, int64_t blocks);

struct kern_ops {
	const char *name;
	kern_fn fn;
	int mr, nr; /* nr divides every kernel group (16, 32) */
	/* int8 and fp16 (exact) -> fp32, n a multiple of 8 */
	void (*i8_to_f32)(float *dst, const uint8_t *src, size_t n);
	void (*f16_to_f32)(float *dst, const uint8_t *src, size_t n);
	void (*f16_planes)(float *dst, const uint8_t *const *surf, size_t off, int64_t planes,
			   size_t n);
	/* Kernels that convert B from the weights in registers, for items of at most dmr
	 * rows, where a converted tile of B would be used once; NULL if none. They take
	 * dmr × dnr tiles. */
	kern_fn direct_f16, direct_i8;
	int dmr, dnr;
	/* fn reads B's tile in the pairs layout made by these (NULL: the weights' own
	 * order of blocks) */
	pairs_fn pairs_f16, pairs_i8;
	reduce_fn reduce;
};

static void reduce_portable(uint32_t *dst, const float *lanes, int64_t n, int ints);

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
static struct kern_ops pick_kernel(void)
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
	return pick_kernel().name;
}

/* ---- driver --------------------------------------------------------------------- */

struct ctx {
	const struct rb_sim_gemm *g;
	struct kern_ops ops;
	int64_t pixels, kernel_items, items;
	int64_t kg, bpe;
	bool dense; /* a surface's pixels are 16 bytes apart */
	/* The weights' tiles for every kernel panel and pass, converted (see plan_wcache):
	 * read from (wcache_use) or, by the items of the first row panel, written to
	 * (wcache_fill); NULL if neither. */
	float *wcache;
	bool wcache_use, wcache_fill;
	int64_t passes;
	atomic_llong next, done;
	atomic_int workers; /* started: each takes the next index */
};

/* A worker's buffers; kept in the core's rb_sim_gemm_mem from task to task. */
struct rb_sim_scratch {
	float *a, *b;
	void *acc;
	size_t a_cap;   /* floats */
	bool a_whole;   /* a holds every channel of a row panel, not one pass */
	int64_t a_rows; /* the first row of the panel a holds, or -1 */
};

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t div_up(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* Pixel p of a feature surface (§b.2): line p / W, pixel p % W of it. */
static const uint8_t *pixel(const struct ctx *x, const uint8_t *surf, int64_t p)
{
	const struct rb_sim_gemm *g = x->g;

	return surf + (p / g->width) * g->a_line + (p % g->width) * ATOM;
}

/* convert_a pixel by pixel: int8 (two planes a surface) or surfaces with gaps. */
static void convert_a_pixels(const struct ctx *x, float *a, int64_t r0, int64_t rn, int64_t k0,
			     int64_t planes)
{
	const struct rb_sim_gemm *g = x->g;

	for (int64_t p = 0; p < planes; p++) {
		/* channel c's byte in the C2 channels of a surface's atom: a shift, where
		 * dividing by C2 (a variable) was most of convert_a's time on decode tasks */
		int64_t byte = (k0 + p * LANES) * x->bpe;
		const uint8_t *surf = g->a_surf[byte / ATOM];
		size_t off = (size_t)(byte % ATOM);

		for (int64_t i = 0; i < rn; i++) {
			const uint8_t *src = pixel(x, surf, r0 + i) + off;
			float *dst = a + p * A_PLANE + i * LANES;

			if (g->int8)
				x->ops.i8_to_f32(dst, src, LANES);
			else
				x->ops.f16_to_f32(dst, src, LANES);
		}
	}
}

/* Channels [k0, k0 + kc) of pixels [r0, r0 + rn) into planes of 8 channels × ROWS. */
static void convert_a(const struct ctx *x, float *a, int64_t r0, int64_t rn, int64_t k0, int64_t kc)
{
	const struct rb_sim_gemm *g = x->g;
	int64_t planes = div_up(kc, LANES), tail = kc % LANES;

	/* fp16: C2 is 8 channels, a plane; a pass starts on a plane (k0 % 8 == 0) */
	if (!g->int8 && x->dense)
		x->ops.f16_planes(a, g->a_surf + k0 / LANES, (size_t)(r0 * ATOM), planes,
				  (size_t)(rn * LANES));
	else
		convert_a_pixels(x, a, r0, rn, k0, planes);
	/* channels past DATAIN_CHANNEL in the last plane take no part */
	for (int64_t i = 0; tail && i < rn; i++)
		memset(a + (planes - 1) * A_PLANE + i * LANES + tail, 0,
		       (size_t)(LANES - tail) * sizeof(float));
}

/* Where kernel r's 8 channels of plane s of block bl are in a converted kernel group:
 * in the weights' order (kernel by kernel, 32 channels each), or in pairs of kernels
 * (plane by plane, the pair's two vectors side by side). */
static int64_t b_vector(bool pairs, int64_t kg, int64_t bl, int64_t r, int64_t s)
{
	if (pairs)
		return (bl * kg + r / 2 * 2) * K_BLOCK + s * 2 * LANES + r % 2 * LANES;
	return (bl * kg + r) * K_BLOCK + s * LANES;
}

/* Channels [k0, k0 + kc) of kernels [n0, n0 + nn): per kernel group, its blocks. */
static void convert_b(const struct ctx *x, float *b, int64_t n0, int64_t nn, int64_t k0, int64_t kc)
{
	const struct rb_sim_gemm *g = x->g;
	int64_t kg = x->kg, blocks = div_up(kc, K_BLOCK), tail = kc % LANES;
	int64_t last = (kc - 1) / K_BLOCK, plane = (kc - 1) % K_BLOCK / LANES;
	size_t count = (size_t)(blocks * kg * K_BLOCK);
	pairs_fn pairs = g->int8 ? x->ops.pairs_i8 : x->ops.pairs_f16;

	for (int64_t q = 0; q < div_up(nn, kg); q++) {
		const uint8_t *src = g->b + (n0 / kg + q) * kg * g->kernel_bytes +
				     k0 / K_BLOCK * kg * K_BLOCK * x->bpe;
		float *dst = b + q * KC * kg;

		if (pairs)
			pairs(dst, src, kg, blocks);
		else if (g->int8)
			x->ops.i8_to_f32(dst, src, count);
		else
			x->ops.f16_to_f32(dst, src, count);
		for (int64_t r = 0; tail && r < kg; r++)
			memset(dst + b_vector(pairs != NULL, kg, last, r, plane) + tail, 0,
			       (size_t)(LANES - tail) * sizeof(float));
	}
}

/* The direct kernel of this item, or NULL: it needs whole planes of channels (the
 * tile path zeroes the lanes past DATAIN_CHANNEL) and a single panel of rows. */
static kern_fn direct_kernel(const struct ctx *x, int64_t rn)
{
	const struct rb_sim_gemm *g = x->g;

	if (rn > x->ops.dmr || g->channels % LANES)
		return NULL;
	return g->int8 ? x->ops.direct_i8 : x->ops.direct_f16;
}

/* Where kernel n0 + j's block of channel k0 is in the weights (§b.3). */
static const uint8_t *weights_at(const struct ctx *x, int64_t n, int64_t k0)
{
	return x->g->b + n / x->kg * x->kg * x->g->kernel_bytes +
	       (k0 / K_BLOCK * x->kg + n % x->kg) * K_BLOCK * x->bpe;
}

/* a, b: the pass's first plane of A, its tile of B (NULL for the direct kernels). */
static void multiply(const struct ctx *x, const struct rb_sim_scratch *s, const float *a,
		     const float *b, int64_t rn, int64_t n0, int64_t nn, int64_t k0, int64_t kc)
{
	const struct kern_ops *o = &x->ops;
	kern_fn direct = direct_kernel(x, rn), fn = direct ? direct : o->fn;
	int64_t mr = direct ? o->dmr : o->mr, nr = direct ? o->dnr : o->nr;
	struct kargs k = {
	    .steps = div_up(kc, LANES),
	    .b_block = x->kg * K_BLOCK,
	    .w_block = x->kg * K_BLOCK * x->bpe,
	    .acc_row = KERNELS * LANES,
	};

	/* j is a multiple of nr, even: the pairs layout's kernel j is at the same place */
	for (int64_t j = 0; j < nn; j += nr) {
		k.b = b ? b + j / x->kg * KC * x->kg + j % x->kg * K_BLOCK : NULL;
		k.w = weights_at(x, n0 + j, k0);
		for (int64_t i = 0; i < rn; i += mr) {
			k.a = a + i * LANES;
			k.acc = (float *)s->acc + (i * KERNELS + j) * LANES;
			fn(&k, (int)min64(mr, rn - i), (int)min64(nr, nn - j), x->g->int8);
		}
	}
}

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

/* cnt channels of one pixel, their sums' bits in sums: one atom of the output (§b.4). */
static void store_atom(const struct rb_sim_gemm *g, uint8_t *dst, const uint32_t *sums, int64_t cnt)
{
	float v;
	uint16_t h;

	if (g->out_prec != RB_PREC_FP16) {
		/* a whole atom in one 16-byte move, not a library call of a variable size */
		if (cnt * 4 == ATOM)
			memcpy(dst, sums, ATOM);
		else
			memcpy(dst, sums, (size_t)cnt * 4);
		return;
	}
	for (int64_t t = 0; t < cnt; t++) {
		memcpy(&v, &sums[t], 4);
		h = rb_fp16_from_f32(v);
		memcpy(dst + t * 2, &h, 2);
	}
}

/* The DPU's write (§b.4): SIZE_E of the pixel's line (first, middle, last) says which
 * sub-surfaces of each KB-channel group are written. */
static void write_out(const struct ctx *x, const struct rb_sim_scratch *s, int64_t r0, int64_t rn,
		      int64_t n0, int64_t nn)
{
	const struct rb_sim_gemm *g = x->g;
	int64_t c2 = g->c2_out, atoms = div_up(nn, c2);
	uint8_t *surf[KERNELS];
	unsigned sub[KERNELS];
	uint32_t sums[KERNELS];

	/* each atom of channels: its surface and sub-surface, the same for every pixel */
	for (int64_t t = 0; t < atoms; t++) {
		int64_t n = n0 + t * c2;

		surf[t] = g->c_surf[n / c2];
		sub[t] = (unsigned)(n % g->kb / c2);
	}
	for (int64_t i = 0; i < rn; i++) {
		int64_t p = r0 + i, h = p / g->width, w = p % g->width;
		unsigned e = g->size_e[h == 0 ? 0 : h == g->height - 1 ? 2 : 1];
		size_t off = (size_t)((h * (g->width + g->notch) + w) * ATOM);

		x->ops.reduce(sums, (const float *)s->acc + i * KERNELS * LANES, nn,
			      g->out_prec == RB_PREC_INT32);
		for (int64_t t = 0; t < atoms; t++)
			if (surf[t] && sub[t] <= e)
				store_atom(g, surf[t] + off, sums + t * c2, min64(c2, nn - t * c2));
	}
}

/* The pass's tile of B for the item at rows r0, kernels n0: from the cache of the
 * weights, converted into it, or converted into the scratch; NULL for the direct
 * kernels, which read the weights. */
static const float *b_tile(const struct ctx *x, struct rb_sim_scratch *s, int64_t r0, int64_t rn,
			   int64_t n0, int64_t k0, int64_t kc)
{
	int64_t nn = min64(KERNELS, x->g->kernels - n0);
	float *cached = NULL;

	if (direct_kernel(x, rn))
		return NULL;
	if (x->wcache)
		cached = x->wcache + (n0 / KERNELS * x->passes + k0 / KC) * KC * KERNELS;
	if (x->wcache_use)
		return cached;
	if (x->wcache_fill && r0 == 0) {
		convert_b(x, cached, n0, nn, k0, kc);
		return cached;
	}
	convert_b(x, s->b, n0, nn, k0, kc);
	return s->b;
}

/* Items are handed out kernel panel by kernel panel: a thread's next item often has
 * the same rows, whose A it then converts once for every channel, if that fits. */
static void run_item(const struct ctx *x, struct rb_sim_scratch *s, int64_t item)
{
	const struct rb_sim_gemm *g = x->g;
	int64_t r0 = item / x->kernel_items * ROWS, n0 = item % x->kernel_items * KERNELS;
	int64_t rn = min64(ROWS, x->pixels - r0), nn = min64(KERNELS, g->kernels - n0);

	if (s->a_whole && s->a_rows != r0) {
		convert_a(x, s->a, r0, rn, 0, g->channels);
		s->a_rows = r0;
	}
	/* The direct kernels need no tile of B: with A whole, fp16 takes one pass of every
	 * channel (int8 keeps passes of KC, within which lane sums are exact, see the top). */
	int64_t pass = s->a_whole && !g->int8 && direct_kernel(x, rn) ? g->channels : KC;

	memset(s->acc, 0, (size_t)(rn * KERNELS * LANES) * sizeof(float));
	for (int64_t k0 = 0; k0 < g->channels; k0 += pass) {
		int64_t kc = min64(pass, g->channels - k0);
		const float *a = s->a;

		if (s->a_whole)
			a += k0 / LANES * A_PLANE;
		else
			convert_a(x, s->a, r0, rn, k0, kc);
		const float *b = b_tile(x, s, r0, rn, n0, k0, kc);

		multiply(x, s, a, b, rn, n0, nn, k0, kc);
	}
	write_out(x, s, r0, rn, n0, nn);
}

static void *alloc_floats(size_t n)
{
	return aligned_alloc(64, (n * sizeof(float) + 63) & ~(size_t)63);
}

/* A row panel of A for every channel, when several kernel panels may use it and it
 * takes at most A_WHOLE_BYTES (K <= 5461); else one pass of it, which stays in cache. A
 * scratch kept from an earlier task is reused if big enough. */
static int scratch_alloc(const struct ctx *x, struct rb_sim_scratch *s)
{
	size_t whole = (size_t)div_up(x->g->channels, LANES) * LANES * ROWS;
	size_t a = x->kernel_items > 1 && whole * sizeof(float) <= A_WHOLE_BYTES
		       ? whole
		       : (size_t)KC * ROWS;

	s->a_whole = a == whole;
	s->a_rows = -1;
	if (s->a && s->a_cap < a) {
		free(s->a);
		s->a = NULL;
	}
	if (!s->a) {
		s->a = alloc_floats(a);
		s->a_cap = s->a ? a : 0;
	}
	if (!s->b)
		s->b = alloc_floats((size_t)KC * KERNELS);
	if (!s->acc)
		s->acc = alloc_floats((size_t)ROWS * KERNELS * LANES);
	return s->a && s->b && s->acc ? 0 : -ENOMEM;
}

static void scratch_free(struct rb_sim_scratch *s)
{
	if (!s)
		return;
	free(s->a);
	free(s->b);
	free(s->acc);
}

/* Worker i's scratch: the core's i-th, made on first use, or (no room to keep it) a
 * fresh one the worker frees. */
static struct rb_sim_scratch *scratch_of(struct ctx *x, int i, struct rb_sim_scratch *own)
{
	struct rb_sim_gemm_mem *m = x->g->mem;

	if (!m || i >= m->scratch_n)
		return own;
	if (!m->scratch[i])
		m->scratch[i] = calloc(1, sizeof(*m->scratch[i]));
	return m->scratch[i] ? m->scratch[i] : own;
}

static void *worker(void *arg)
{
	struct ctx *x = arg;
	struct rb_sim_scratch own = {0}, *s = scratch_of(x, atomic_fetch_add(&x->workers, 1), &own);
	long long item;

	if (scratch_alloc(x, s) == 0) {
		while ((item = atomic_fetch_add(&x->next, 1)) < x->items) {
			run_item(x, s, item);
			atomic_fetch_add(&x->done, 1);
		}
	}
	if (s == &own)
		scratch_free(&own);
	return NULL;
}

/* Room for n workers' scratch in the core's memory (as many as fit if it cannot grow). */
static void scratch_pool(const struct ctx *x, int n)
{
	struct rb_sim_gemm_mem *m = x->g->mem;
	struct rb_sim_scratch **v;

	if (!m || n <= m->scratch_n)
		return;
	v = realloc(m->scratch, (size_t)n * sizeof(*v));
	if (!v)
		return;
	for (int i = m->scratch_n; i < n; i++)
		v[i] = NULL;
	m->scratch = v;
	m->scratch_n = n;
}

static int thread_count(const struct ctx *x)
{
	const struct rb_sim_gemm *g = x->g;
	double macs = (double)x->pixels * (double)g->channels * (double)g->kernels;
	int64_t n = g->threads < 1 ? 1 : g->threads;

	n = min64(n, min64(x->items, MAX_THREADS));
	if (macs / MIN_MACS_PER_THREAD < (double)n)
		n = (int64_t)(macs / MIN_MACS_PER_THREAD);
	return n < 1 ? 1 : (int)n;
}

/* WEIGHT_REUSE (§c): the task computes with what the CBUF holds, the weights the last
 * task on the core loaded. Their tiles as that task converted them are kept: a task
 * that claims reuse of the same weights (the same host pointer, shape and kernel
 * family) takes them as they are. Any other task empties the cache, and refills it
 * when its weights are resident (they fit the banks, so the next task may reuse them)
 * and its first row panel runs the tile kernels. The first row panel's items write
 * each tile once: no two threads write the same tile. */
static void plan_wcache(struct ctx *x)
{
	const struct rb_sim_gemm *g = x->g;
	struct rb_sim_gemm_mem *c = g->mem;
	size_t need = (size_t)(x->kernel_items * x->passes) * KC * KERNELS;

	if (!c)
		return;
	if (g->weight_reuse && c->valid && c->b == g->b && c->channels == g->channels &&
	    c->kernels == g->kernels && c->int8 == g->int8 && c->impl == x->ops.name) {
		x->wcache = c->f;
		x->wcache_use = true;
		return;
	}
	c->valid = false;
	if (!g->weights_resident || direct_kernel(x, min64(ROWS, x->pixels)))
		return;
	if (need > c->cap) {
		float *f = alloc_floats(need);

		if (!f)
			return; /* the scratch converts them, as without a cache */
		free(c->f);
		c->f = f;
		c->cap = need;
	}
	x->wcache = c->f;
	x->wcache_fill = true;
}

/* After the task: a cache it filled is the CBUF's weights for the next one. */
static void keep_wcache(const struct ctx *x)
{
	const struct rb_sim_gemm *g = x->g;
	struct rb_sim_gemm_mem *c = g->mem;

	if (!x->wcache_fill || atomic_load(&x->done) != x->items)
		return;
	c->valid = true;
	c->b = g->b;
	c->channels = g->channels;
	c->kernels = g->kernels;
	c->int8 = g->int8;
	c->impl = x->ops.name;
}

void rb_sim_gemm_mem_init(struct rb_sim_gemm_mem *m)
{
	memset(m, 0, sizeof(*m));
	rb_sim_pool_init(&m->pool);
}

void rb_sim_gemm_mem_free(struct rb_sim_gemm_mem *m)
{
	rb_sim_pool_release(&m->pool);
	free(m->f);
	for (int i = 0; i < m->scratch_n; i++) {
		scratch_free(m->scratch[i]);
		free(m->scratch[i]);
	}
	free(m->scratch);
	memset(m, 0, sizeof(*m));
}

static void worker_job(void *x, int job)
{
	(void)job; /* workers take the next item, whoever they are */
	worker(x);
}

/* Workers 1..n-1 run on the core's kept threads, this thread is worker 0. A thread that
 * cannot be started leaves its items to the others: slower, the same result. */
int rb_sim_gemm_run(const struct rb_sim_gemm *g)
{
	struct ctx x = {.g = g, .ops = pick_kernel()};
	int n;

	x.pixels = g->width * g->height;
	x.kernel_items = div_up(g->kernels, KERNELS);
	x.items = div_up(x.pixels, ROWS) * x.kernel_items;
	x.kg = rb_layout_kernel_group(g->int8 ? RB_DTYPE_INT8 : RB_DTYPE_FP16);
	x.bpe = g->int8 ? 1 : 2;
	x.dense = g->a_line == ATOM * g->width;
	x.passes = div_up(g->channels, KC);
	plan_wcache(&x);
	atomic_init(&x.next, 0);
	atomic_init(&x.done, 0);
	atomic_init(&x.workers, 0);
	n = thread_count(&x);
	scratch_pool(&x, n);
	if (g->mem)
		rb_sim_pool_run(&g->mem->pool, n, worker_job, &x);
	else
		worker(&x); /* no core to keep threads in: this thread takes every item */
	keep_wcache(&x);
	return atomic_load(&x.done) == x.items ? 0 : -ENOMEM;
}
