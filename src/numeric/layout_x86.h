/* The layouts' kernels on x86-64 (layout_isa.h): the 16-byte vector kernels on SSE2 (the
 * base ISA, so no -march is needed), streaming stores, and AVX-512 F/BW kernels built
 * with a target attribute and chosen at run time (rb_layout_force_impl overrides).
 * Private to numeric/. */
#ifndef RB_NUMERIC_LAYOUT_X86_H
#define RB_NUMERIC_LAYOUT_X86_H

#include <immintrin.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LAYOUT_BASE_NAME "sse2"
#define LAYOUT_LINES     1 /* 16-byte vectors: unpacks by whole lines (use_lines) */
#define LAYOUT_STREAMS   1 /* streaming stores (use_streams, write_block) */
#define RB_LAYOUT_AVX512 1
#define AVX512           __attribute__((target("avx512f,avx512bw")))

typedef __m128i vec;
#define VLOAD(p)       _mm_loadu_si128((const __m128i *)(const void *)(p))
#define VSTORE(p, v)   _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define ZIP_LO8(a, b)  _mm_unpacklo_epi8((a), (b))
#define ZIP_HI8(a, b)  _mm_unpackhi_epi8((a), (b))
#define ZIP_LO16(a, b) _mm_unpacklo_epi16((a), (b))
#define ZIP_HI16(a, b) _mm_unpackhi_epi16((a), (b))

#include "numeric/layout_vec.h"

static inline bool layout_avx512_supported(void)
{
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
}

/* Copies one staged block to its place in the packed weights. With non-temporal
 * stores: the weights are written once and next read by the NPU's DMA, so caching them
 * would only evict B, and streaming skips the read-for-ownership of every line. */
static inline void write_block(uint8_t *d, const uint8_t *s, bool stream)
{
	if (!stream) {
		memcpy(d, s, BLOCK_BYTES);
		return;
	}
	for (size_t o = 0; o < BLOCK_BYTES; o += 16)
		_mm_stream_si128((__m128i *)(void *)(d + o),
				 _mm_load_si128((const __m128i *)(const void *)(s + o)));
}

/* Orders the streaming stores of this thread before it reports completion. */
static inline void stream_fence(void)
{
	_mm_sfence();
}

/* One row of 4 channel groups from the 4 surfaces at s -> the 64-byte line at d. */
static inline void store_atoms4(uint8_t *d, const uint8_t *s, size_t surf, bool stream)
{
	vec a[4];

	load_atoms4(a, s, surf);
	if (!stream) {
		store_atoms4_cached(d, a);
		return;
	}
	for (int i = 0; i < 4; i++)
		_mm_stream_si128((__m128i *)(void *)(d + i * ATOM), a[i]);
}

/* The loops over arrays of vectors below are unrolled (#pragma GCC unroll, as in ref.c
 * and hw_gemm.c): at -O2 GCC kept them as loops, with the arrays on the stack, and
 * unrolled the B pack of 2048x128256 went from 1.40-1.49 to 1.07 × memcpy's time on an
 * Emerald Rapids VM (medians of 12 alternations in a harness), as fast as the same
 * loads and stores with no transpose at all (1.00-1.04). The base kernels are written
 * out by hand for the same reason. */

/* y[2i], y[2i + 1] = x[i] and x[i + 4] interleaved as 16-bit words within each 128-bit
 * lane: round8x16 of the 16-byte transposes, on 4 lanes at once. */
AVX512 static inline void zip_round_x4(__m512i *y, const __m512i *x)
{
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		y[2 * i] = _mm512_unpacklo_epi16(x[i], x[i + 4]);
		y[2 * i + 1] = _mm512_unpackhi_epi16(x[i], x[i + 4]);
	}
}

/* 32 rows of 32 fp16 at s (pitch sp bytes) -> 32 lines of 64 bytes: line c (column c
 * of the tile, 32 channels) goes to d + (c / 16)·gap + (c % 16)·64, that is row c % 16
 * of the weight block of kernel group c / 16. Three rounds of in-lane word interleaves
 * transpose the 8×8 word squares of each 128-bit lane of each group of 8 rows; two
 * rounds of 128-bit lane shuffles then gather, for each column, its 4 squares of 8
 * rows. Every line leaves as one whole 64-byte store. */
AVX512 static inline void tile32_f16_avx512(uint8_t *d, size_t gap, const uint8_t *s, size_t sp,
					    bool stream)
{
	__m512i t[4][8], x[8], y[8];

#pragma GCC unroll 4
	for (int g = 0; g < 4; g++) {
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
			x[i] = _mm512_loadu_si512(s + (size_t)(8 * g + i) * sp);
		zip_round_x4(y, x);
		zip_round_x4(x, y);
		zip_round_x4(t[g], x);
	}
#pragma GCC unroll 8
	for (int w = 0; w < 8; w++) {
		/* lanes: t[g][w] lane L holds rows 8g..8g+7 of column 8L + w */
		__m512i a0 = _mm512_shuffle_i64x2(t[0][w], t[1][w], 0x88); /* 0,2 | 0,2 */
		__m512i a1 = _mm512_shuffle_i64x2(t[0][w], t[1][w], 0xdd); /* 1,3 | 1,3 */
		__m512i a2 = _mm512_shuffle_i64x2(t[2][w], t[3][w], 0x88);
		__m512i a3 = _mm512_shuffle_i64x2(t[2][w], t[3][w], 0xdd);
		__m512i o[4];

		o[0] = _mm512_shuffle_i64x2(a0, a2, 0x88);
		o[1] = _mm512_shuffle_i64x2(a1, a3, 0x88);
		o[2] = _mm512_shuffle_i64x2(a0, a2, 0xdd);
		o[3] = _mm512_shuffle_i64x2(a1, a3, 0xdd);
#pragma GCC unroll 4
		for (int l = 0; l < 4; l++) {
			int c = 8 * l + w;
			uint8_t *line = d + (size_t)(c / 16) * gap + (size_t)(c % 16) * 64;

			if (stream)
				_mm512_stream_si512((void *)line, o[l]);
			else
				_mm512_storeu_si512(line, o[l]);
		}
	}
}

/* One line of 4 channel groups (64 bytes) from each of 4 rows at s -> the 4 rows' atoms
 * of each group, one whole line per surface (4×4 transpose of 16-byte lanes). */
AVX512 static inline void quad_avx512(uint8_t *d, size_t surf, const uint8_t *s, size_t pitch)
{
	__m512i r0 = _mm512_loadu_si512(s), r1 = _mm512_loadu_si512(s + pitch);
	__m512i r2 = _mm512_loadu_si512(s + 2 * pitch), r3 = _mm512_loadu_si512(s + 3 * pitch);
	/* lanes (row.group): lo01 = 0.0 0.1 1.0 1.1, hi01 = 0.2 0.3 1.2 1.3, ... */
	__m512i lo01 = _mm512_shuffle_i64x2(r0, r1, 0x44),
		hi01 = _mm512_shuffle_i64x2(r0, r1, 0xee);
	__m512i lo23 = _mm512_shuffle_i64x2(r2, r3, 0x44),
		hi23 = _mm512_shuffle_i64x2(r2, r3, 0xee);

	_mm512_storeu_si512(d, _mm512_shuffle_i64x2(lo01, lo23, 0x88));
	_mm512_storeu_si512(d + surf, _mm512_shuffle_i64x2(lo01, lo23, 0xdd));
	_mm512_storeu_si512(d + 2 * surf, _mm512_shuffle_i64x2(hi01, hi23, 0x88));
	_mm512_storeu_si512(d + 3 * surf, _mm512_shuffle_i64x2(hi01, hi23, 0xdd));
}

#endif
