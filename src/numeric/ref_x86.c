/* The reference GEMM's x86 kernels (ref_kernels.h), each compiled for its ISA with a
 * target attribute and picked at run time, so no -march flag is needed: the generic
 * micro-kernel built for AVX2/FMA, the AVX2 int8 and F16C fp16 GEMVs, AVX-512 kernels
 * with their own blocking (fp32 FMA for fp16, VNNI for int8, packed as bytes). */
#include "numeric/ref_kernels.h"

#if defined(RB_REF_X86)
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#include "core/fp16.h"

/* GCC turns off FMA contraction in ISO C mode (-std=c11); the kernels want it, as
 * `acc += a * b` is meant as a fused multiply-add. clang contracts by default. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=fast")
#endif

#include "numeric/ref_tile.h"

__attribute__((target("avx2,fma"))) static void kernel_f32_avx2(int64_t kc, const void *a,
								const void *b, void *c, int64_t ldc,
								int mr, int nr, int accumulate)
{
	kernel_f32_body(kc, a, b, c, ldc, mr, nr, accumulate);
}

__attribute__((target("avx2,fma"))) static void kernel_i32_avx2(int64_t kc, const void *a,
								const void *b, void *c, int64_t ldc,
								int mr, int nr, int accumulate)
{
	kernel_i32_body(kc, a, b, c, ldc, mr, nr, accumulate);
}

/* |a·b| <= 2^14, so the low 32 bits of each product are the product; the adds wrap. */
__attribute__((target("avx2"))) static inline __m256i mla_i8_avx2(__m256i s, __m256i a,
								  const int8_t *b)
{
	__m256i x = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const void *)b));

	return _mm256_add_epi32(s, _mm256_mullo_epi32(a, x));
}

__attribute__((target("avx2"))) static void
gemv_i8_rows4_avx2(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb, int64_t w)
{
	__m256i a0 = _mm256_set1_epi32(a[0]), a1 = _mm256_set1_epi32(a[1]);
	__m256i a2 = _mm256_set1_epi32(a[2]), a3 = _mm256_set1_epi32(a[3]);
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		__m256i s = _mm256_loadu_si256((const void *)(acc + j));

		s = mla_i8_avx2(s, a0, b + j);
		s = mla_i8_avx2(s, a1, b + ldb + j);
		s = mla_i8_avx2(s, a2, b + 2 * ldb + j);
		s = mla_i8_avx2(s, a3, b + 3 * ldb + j);
		_mm256_storeu_si256((void *)(acc + j), s);
	}
	rb_ref_axpy_i8_tail(acc, a, b, ldb, 4, j, w);
}

__attribute__((target("avx2"))) static void gemv_i8_row_avx2(int32_t *acc, int8_t a,
							     const int8_t *b, int64_t w)
{
	__m256i av = _mm256_set1_epi32(a);
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		__m256i s = _mm256_loadu_si256((const void *)(acc + j));

		_mm256_storeu_si256((void *)(acc + j), mla_i8_avx2(s, av, b + j));
	}
	rb_ref_axpy_i8_tail(acc, &a, b, 0, 1, j, w);
}

static void gemv_i8_avx2(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			 float *scratch)
{
	(void)scratch;
	rb_ref_gemv_i8_rows(gemv_i8_rows4_avx2, gemv_i8_row_avx2, a, b, ldb, k, w, c);
}

/* One pass folds four rows of B into the sums: a quarter of the L1 traffic on acc. */
__attribute__((target("avx2,fma,f16c"))) static void
gemv_f16_rows4_f16c(float *restrict acc, const float *af, const uint16_t *b, int64_t ldb, int64_t w)
{
	__m256 a0 = _mm256_set1_ps(af[0]), a1 = _mm256_set1_ps(af[1]);
	__m256 a2 = _mm256_set1_ps(af[2]), a3 = _mm256_set1_ps(af[3]);
	const uint16_t *b0 = b, *b1 = b + ldb, *b2 = b + 2 * ldb, *b3 = b + 3 * ldb;
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		__m256 s = _mm256_loadu_ps(acc + j);

		s = _mm256_fmadd_ps(a0, _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b0 + j))),
				    s);
		s = _mm256_fmadd_ps(a1, _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b1 + j))),
				    s);
		s = _mm256_fmadd_ps(a2, _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b2 + j))),
				    s);
		s = _mm256_fmadd_ps(a3, _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b3 + j))),
				    s);
		_mm256_storeu_ps(acc + j, s);
	}
	rb_ref_fma_f16_tail(acc, af, b, ldb, 4, j, w);
}

__attribute__((target("avx2,fma,f16c"))) static void gemv_f16_row_f16c(float *restrict acc, float s,
								       const uint16_t *b, int64_t w)
{
	__m256 sv = _mm256_set1_ps(s);
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		__m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b + j)));

		_mm256_storeu_ps(acc + j, _mm256_fmadd_ps(sv, x, _mm256_loadu_ps(acc + j)));
	}
	rb_ref_fma_f16_tail(acc, &s, b, 0, 1, j, w);
}

static void gemv_f16_f16c(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			  float *scratch)
{
	(void)scratch;
	memset(c, 0, (size_t)w * sizeof(float));
	rb_ref_gemv_f16_rows(gemv_f16_rows4_f16c, gemv_f16_row_f16c, a, b, ldb, k, w, c, 0);
}

/* ---- AVX-512 ---------------------------------------------------------------------------
 *
 * MR×32 tiles: MR rows of two zmm registers hold C (12 rows for int8, 14 for fp32), two
 * more hold a k-step of the B strip, and each A value is broadcast from memory. Edges are
 * handled with lane masks when C is stored, so the kernels always run full tiles over the
 * zero-padded packed strips. */
enum { MR5 = 12, NR5 = 32 };
/* fp32 tiles are 14×32 (28 accumulators): 12×32, 8×48 and 6×64 were 3-10% slower on
 * the VM of issue 15 (two threads, 512x2048x8192). */
enum { MRF = 14, NVF = 2, NRF = 16 * NVF };

#define AVX512 "avx512f,avx512bw,avx512vl,avx2,fma,f16c"

/* Lanes of each 16-lane part of a row that hold one of the first nr columns. */
__attribute__((target(AVX512))) static inline void row_masks(int nr, __mmask16 *m, int parts)
{
	for (int h = 0; h < parts; h++) {
		int lanes = nr - 16 * h;

		m[h] = lanes >= 16 ? (__mmask16)0xffff
		       : lanes > 0 ? (__mmask16)((1u << lanes) - 1)
				   : (__mmask16)0;
	}
}

__attribute__((target(AVX512))) static void kernel_f32_avx512(int64_t kc, const void *a,
							      const void *b, void *c, int64_t ldc,
							      int mr, int nr, int accumulate)
{
	const float *pa = a, *pb = b;
	__m512 acc[MRF][NVF];
	__mmask16 m[NVF];

#pragma GCC unroll 16
	for (int r = 0; r < MRF; r++)
#pragma GCC unroll 4
		for (int h = 0; h < NVF; h++)
			acc[r][h] = _mm512_setzero_ps();
	for (int64_t p = 0; p < kc; p++, pa += MRF, pb += NRF) {
		__m512 bv[NVF];

#pragma GCC unroll 4
		for (int h = 0; h < NVF; h++)
			bv[h] = _mm512_loadu_ps(pb + 16 * h);
		/* B comes from L2: asking 8 steps ahead was 5-8% faster than the hardware
		 * prefetchers alone (16 ahead about the same; issue 15's VM). Past the end of
		 * the strip this touches the next one, which is read next anyway. */
		_mm_prefetch((const char *)(pb + 8 * NRF), _MM_HINT_T0);
		_mm_prefetch((const char *)(pb + 8 * NRF + 16), _MM_HINT_T0);
#pragma GCC unroll 16
		for (int r = 0; r < MRF; r++) {
			__m512 av = _mm512_set1_ps(pa[r]);

#pragma GCC unroll 4
			for (int h = 0; h < NVF; h++)
				acc[r][h] = _mm512_fmadd_ps(av, bv[h], acc[r][h]);
		}
	}
	row_masks(nr, m, NVF);
#pragma GCC unroll 16
	for (int r = 0; r < MRF; r++) {
		float *row = (float *)c + r * ldc;

		if (r >= mr)
			break;
#pragma GCC unroll 4
		for (int h = 0; h < NVF; h++) {
			__m512 v = acc[r][h];

			if (accumulate)
				v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m[h], row + 16 * h));
			_mm512_mask_storeu_ps(row + 16 * h, m[h], v);
		}
	}
}

/* Packed B for kernel_f32_avx512: whole strips converted straight into place. */
__attribute__((target(AVX512))) static void pack_b_f16_avx512(const struct gemm_ops *o, void *dst,
							      const void *src, int64_t ldb,
							      int64_t kc, int64_t nc, float *row)
{
	float *out = dst;
	int64_t full = nc / NRF * NRF;

	for (int64_t p = 0; p < kc; p++) {
		const uint16_t *in = (const uint16_t *)src + p * ldb;

		for (int64_t j = 0; j < full; j += NRF) {
			float *at = out + (j / NRF) * kc * NRF + p * NRF;

#pragma GCC unroll 4
			for (int h = 0; h < NVF; h++)
				_mm512_storeu_ps(at + 16 * h, _mm512_cvtph_ps(_mm256_loadu_si256((
								  const void *)(in + j + 16 * h))));
		}
		if (full < nc) {
			rb_fp16_to_f32_array(row, in + full, (size_t)(nc - full));
			rb_ref_scatter_b_row(out + (full / NRF) * kc * NRF, row, kc, p, nc - full,
					     o->nr);
		}
	}
}

/* GEMV on AVX-512: eight rows of B per pass over the sums (half the L2 traffic on them of
 * four), one cache line of each row per step, and each row asked for GEMV_PF columns
 * ahead. Every column still adds its products in the order p = 0, 1, ..., with fused
 * multiply-adds like gemv_f16_f16c, so both give the same bits. */
#define GEMV_PF 512

__attribute__((target(AVX512))) static void gemv_f16_rows8_avx512(float *restrict acc,
								  const float *af,
								  const uint16_t *b, int64_t ldb,
								  int64_t w)
{
	__m512 av[8];
	int64_t j = 0;

#pragma GCC unroll 8
	for (int r = 0; r < 8; r++)
		av[r] = _mm512_set1_ps(af[r]);
	for (; j + 32 <= w; j += 32) {
		__m512 s0 = _mm512_loadu_ps(acc + j), s1 = _mm512_loadu_ps(acc + j + 16);

#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) {
			const uint16_t *row = b + r * ldb + j;

			_mm_prefetch((const char *)(row + GEMV_PF), _MM_HINT_T0);
			s0 = _mm512_fmadd_ps(
			    av[r], _mm512_cvtph_ps(_mm256_loadu_si256((const void *)row)), s0);
			s1 = _mm512_fmadd_ps(
			    av[r], _mm512_cvtph_ps(_mm256_loadu_si256((const void *)(row + 16))),
			    s1);
		}
		_mm512_storeu_ps(acc + j, s0);
		_mm512_storeu_ps(acc + j + 16, s1);
	}
	rb_ref_fma_f16_tail(acc, af, b, ldb, 8, j, w);
}

static void gemv_f16_avx512(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w,
			    void *c, float *scratch)
{
	const float *af = a;
	const uint16_t *bh = b;
	int64_t p = 0;

	(void)scratch;
	memset(c, 0, (size_t)w * sizeof(float));
	for (; p + 8 <= k; p += 8)
		gemv_f16_rows8_avx512(c, af + p, bh + p * ldb, ldb, w);
	rb_ref_gemv_f16_rows(gemv_f16_rows4_f16c, gemv_f16_row_f16c, a, b, ldb, k, w, c, p);
}

/* int8 on VNNI: vpdpbusd multiplies unsigned bytes by signed bytes, four k at a time,
 * and adds the four products to an int32 lane without saturating (modulo 2^32, like the
 * other paths). B is packed as b + 128 (unsigned), so each sum over-counts
 * 128 · sum_p a[p]; the packed A strip ends with that amount negated per row (its
 * "tail"), which starts the accumulators. Packed A: per group of four k, MR5 int32 words
 * of four bytes of a row; packed B: per group, NR5 columns of four bytes. K is padded
 * with zero bytes of A, which cancel whatever B holds there. */
__attribute__((target(AVX512 ",avx512vnni"))) static void kernel_i8_vnni(int64_t kc, const void *a,
									 const void *b, void *c,
									 int64_t ldc, int mr,
									 int nr, int accumulate)
{
	int64_t groups = DIV_UP(kc, 4);
	const int32_t *pa = a, *tail = pa + groups * MR5;
	const __m512i *pb = b;
	__m512i acc[MR5][2];
	__mmask16 m[2];

#pragma GCC unroll 12
	for (int r = 0; r < MR5; r++)
		acc[r][0] = acc[r][1] = _mm512_set1_epi32(tail[r]);
	for (int64_t g = 0; g < groups; g++, pa += MR5, pb += 2) {
		__m512i b0 = _mm512_loadu_si512(pb), b1 = _mm512_loadu_si512(pb + 1);

		/* As in kernel_f32_avx512: 8 groups ahead, about 6% faster. */
		_mm_prefetch((const char *)(pb + 16), _MM_HINT_T0);
		_mm_prefetch((const char *)(pb + 17), _MM_HINT_T0);

#pragma GCC unroll 12
		for (int r = 0; r < MR5; r++) {
			__m512i av = _mm512_set1_epi32(pa[r]);

			acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, av);
			acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, av);
		}
	}
	row_masks(nr, m, 2);
#pragma GCC unroll 12
	for (int r = 0; r < MR5; r++) {
		int32_t *row = (int32_t *)c + r * ldc;

		if (r >= mr)
			break;
#pragma GCC unroll 2
		for (int h = 0; h < 2; h++) {
			__m512i v = acc[r][h];

			if (accumulate)
				v = _mm512_add_epi32(v,
						     _mm512_maskz_loadu_epi32(m[h], row + 16 * h));
			_mm512_mask_storeu_epi32(row + 16 * h, m[h], v);
		}
	}
}

/* Packed A for kernel_i8_vnni (see there): the words of each row, then its tail. */
static void pack_a_i8_vnni(const struct gemm_ops *o, void *dst, const void *src, int64_t lda,
			   int64_t mc, int64_t kc, float *row)
{
	int64_t groups = DIV_UP(kc, 4), rows = DIV_UP(mc, MR5) * MR5;
	size_t strip = strip_a_bytes(o, kc);

	(void)row;
	for (int64_t r = 0; r < rows; r++) {
		uint8_t *out = (uint8_t *)dst + (size_t)(r / MR5) * strip + (r % MR5) * 4;
		const int8_t *in = (const int8_t *)src + r * lda;
		int8_t word[4] = {0, 0, 0, 0};
		int64_t len = r < mc ? kc : 0, g = 0;
		int32_t sum = 0; /* |sum| <= 128 · KC5_I8: no overflow */

		for (int64_t p = 0; p < len; p++)
			sum += in[p];
		for (; 4 * g + 4 <= len; g++)
			memcpy(out + g * MR5 * 4, in + 4 * g, 4);
		for (; g < groups; g++) {
			for (int q = 0; q < 4; q++)
				word[q] = 4 * g + q < len ? in[4 * g + q] : 0;
			memcpy(out + g * MR5 * 4, word, 4);
		}
		sum *= -128;
		memcpy(out + groups * MR5 * 4, &sum, 4);
	}
}

/* Sixteen columns of four rows of B, interleaved by column and offset by 128. */
static inline void interleave4x16(uint8_t *out, const int8_t *in, int64_t ldb)
{
	const __m128i bias = _mm_set1_epi8((char)0x80);
	__m128i x0 = _mm_xor_si128(_mm_loadu_si128((const void *)in), bias);
	__m128i x1 = _mm_xor_si128(_mm_loadu_si128((const void *)(in + ldb)), bias);
	__m128i x2 = _mm_xor_si128(_mm_loadu_si128((const void *)(in + 2 * ldb)), bias);
	__m128i x3 = _mm_xor_si128(_mm_loadu_si128((const void *)(in + 3 * ldb)), bias);
	__m128i lo01 = _mm_unpacklo_epi8(x0, x1), hi01 = _mm_unpackhi_epi8(x0, x1);
	__m128i lo23 = _mm_unpacklo_epi8(x2, x3), hi23 = _mm_unpackhi_epi8(x2, x3);

	_mm_storeu_si128((void *)out, _mm_unpacklo_epi16(lo01, lo23));
	_mm_storeu_si128((void *)(out + 16), _mm_unpackhi_epi16(lo01, lo23));
	_mm_storeu_si128((void *)(out + 32), _mm_unpacklo_epi16(hi01, hi23));
	_mm_storeu_si128((void *)(out + 48), _mm_unpackhi_epi16(hi01, hi23));
}

/* The same for the ragged edges: rows past kc and columns past nc become zero. */
static void interleave_edge(uint8_t *out, const int8_t *in, int64_t ldb, int64_t rows, int64_t cols)
{
	for (int64_t j = 0; j < 16; j++)
		for (int64_t q = 0; q < 4; q++)
			out[j * 4 + q] =
			    q < rows && j < cols ? (uint8_t)(in[q * ldb + j] ^ 0x80) : 0;
}

static void pack_b_i8_vnni(const struct gemm_ops *o, void *dst, const void *src, int64_t ldb,
			   int64_t kc, int64_t nc, float *row)
{
	int64_t groups = DIV_UP(kc, 4);
	size_t strip = strip_b_bytes(o, kc);

	(void)row;
	for (int64_t g = 0; g < groups; g++) {
		const int8_t *in = (const int8_t *)src + 4 * g * ldb;
		int64_t rows = min64(4, kc - 4 * g);

		for (int64_t j = 0; j < DIV_UP(nc, NR5) * NR5; j += 16) {
			uint8_t *out = (uint8_t *)dst + (size_t)(j / NR5) * strip +
				       (size_t)g * NR5 * 4 + (size_t)(j % NR5) * 4;

			if (rows == 4 && j + 16 <= nc)
				interleave4x16(out, in + j, ldb);
			else
				interleave_edge(out, in + j, ldb, rows, nc - j);
		}
	}
}
/* Both AVX-512 kernels keep a strip of A (fp32 14×512, 28 KiB; int8 12×512 bytes) near
 * the core while they sweep a panel of B that fits L2 (512×256 fp32 or 512×1024 bytes,
 * 512 KiB each), and pack A's block once per KC step (MC covers most tasks' rows). The
 * deep KC cuts the passes over C (each reads and writes all of C) to a quarter of those
 * of KC = 128. On the 2-core AVX-512 VM of issue 15 (a busy machine: take the ratios,
 * not the times), one thread: 512x2048x8192 fp16 went from 150 ms with 12×32 tiles, KC
 * 192 and B's strip in L1 to about 90 ms with this layout (KC 384-512 and NC 128-512
 * within 10% of each other, 512×256 best), int8 from 66 to 44 ms against A's block in L2
 * and B's strip in L1. */
enum {
	KC5_F32 = 512,
	MC5_F32 = 64 * MRF,
	NC5_F32 = 256,
	KC5_I8 = 512,
	MC5_I8 = 85 * MR5,
	NC5_I8 = 1024,
};

static const struct gemm_ops vnni_ops = {.in_size = sizeof(int8_t),
					 .mr = MR5,
					 .nr = NR5,
					 .kc = KC5_I8,
					 .mc = MC5_I8,
					 .nc = NC5_I8,
					 .kgrain = 4,
					 .pel = 1,
					 .a_tail = 4,
					 .a_in_l1 = 1,
					 .pack_a = pack_a_i8_vnni,
					 .pack_b = pack_b_i8_vnni,
					 .kernel = kernel_i8_vnni,
					 .gemv = gemv_i8_avx2};

void rb_ref_x86_f16_ops(struct gemm_ops *ops, bool avx2, bool avx512, bool f16c)
{
	if (avx2)
		ops->kernel = kernel_f32_avx2;
	if (avx512) {
		ops->mr = MRF;
		ops->nr = NRF;
		ops->kc = KC5_F32;
		ops->mc = MC5_F32;
		ops->kernel = kernel_f32_avx512;
		ops->pack_b = pack_b_f16_avx512;
		ops->nc = NC5_F32;
		ops->a_in_l1 = 1;
	}
	if (avx2 && f16c)
		ops->gemv = avx512 ? gemv_f16_avx512 : gemv_f16_f16c;
}

void rb_ref_x86_i8_ops(struct gemm_ops *ops, bool avx2, bool vnni)
{
	if (avx2) {
		ops->kernel = kernel_i32_avx2;
		ops->gemv = gemv_i8_avx2;
	}
	if (vnni)
		*ops = vnni_ops;
}
#endif
