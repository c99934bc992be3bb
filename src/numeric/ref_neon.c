/* The reference GEMM's aarch64 kernels (ref_kernels.h): the NEON GEMVs of the M = 1
 * path; the blocked path runs the generic micro-kernel, which GCC vectorises for NEON. */
#include "numeric/ref_kernels.h"

#if defined(RB_REF_NEON)
#include <arm_neon.h>
#include <stdint.h>
#include <string.h>

#include "core/fp16.h"

/* Eight columns of one row: widen to int16, then widening multiply-add into int32. */
static inline void mla_i8_neon(int32x4_t *lo, int32x4_t *hi, int16_t a, const int8_t *b)
{
	int16x8_t x = vmovl_s8(vld1_s8(b));

	*lo = vmlal_n_s16(*lo, vget_low_s16(x), a);
	*hi = vmlal_high_n_s16(*hi, x, a);
}

static void gemv_i8_rows4_neon(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb,
			       int64_t w)
{
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		int32x4_t lo = vld1q_s32(acc + j), hi = vld1q_s32(acc + j + 4);

		mla_i8_neon(&lo, &hi, a[0], b + j);
		mla_i8_neon(&lo, &hi, a[1], b + ldb + j);
		mla_i8_neon(&lo, &hi, a[2], b + 2 * ldb + j);
		mla_i8_neon(&lo, &hi, a[3], b + 3 * ldb + j);
		vst1q_s32(acc + j, lo);
		vst1q_s32(acc + j + 4, hi);
	}
	rb_ref_axpy_i8_tail(acc, a, b, ldb, 4, j, w);
}

static void gemv_i8_row_neon(int32_t *acc, int8_t a, const int8_t *b, int64_t w)
{
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		int32x4_t lo = vld1q_s32(acc + j), hi = vld1q_s32(acc + j + 4);

		mla_i8_neon(&lo, &hi, a, b + j);
		vst1q_s32(acc + j, lo);
		vst1q_s32(acc + j + 4, hi);
	}
	rb_ref_axpy_i8_tail(acc, &a, b, 0, 1, j, w);
}

static void gemv_i8_neon(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			 float *scratch)
{
	(void)scratch;
	rb_ref_gemv_i8_rows(gemv_i8_rows4_neon, gemv_i8_row_neon, a, b, ldb, k, w, c);
}

static inline float32x4_t fma_row_neon(float32x4_t s, float32x4_t av, const uint16_t *b)
{
	return vfmaq_f32(s, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(b))), av);
}

static void gemv_f16_rows4_neon(float *restrict acc, const float *af, const uint16_t *b,
				int64_t ldb, int64_t w)
{
	float32x4_t a0 = vdupq_n_f32(af[0]), a1 = vdupq_n_f32(af[1]);
	float32x4_t a2 = vdupq_n_f32(af[2]), a3 = vdupq_n_f32(af[3]);
	const uint16_t *b0 = b, *b1 = b + ldb, *b2 = b + 2 * ldb, *b3 = b + 3 * ldb;
	int64_t j = 0;

	for (; j + 4 <= w; j += 4) {
		float32x4_t s = vld1q_f32(acc + j);

		s = fma_row_neon(s, a0, b0 + j);
		s = fma_row_neon(s, a1, b1 + j);
		s = fma_row_neon(s, a2, b2 + j);
		s = fma_row_neon(s, a3, b3 + j);
		vst1q_f32(acc + j, s);
	}
	rb_ref_fma_f16_tail(acc, af, b, ldb, 4, j, w);
}

static void gemv_f16_row_neon(float *restrict acc, float s, const uint16_t *b, int64_t w)
{
	float32x4_t sv = vdupq_n_f32(s);
	int64_t j = 0;

	for (; j + 4 <= w; j += 4)
		vst1q_f32(acc + j, fma_row_neon(vld1q_f32(acc + j), sv, b + j));
	rb_ref_fma_f16_tail(acc, &s, b, 0, 1, j, w);
}

static void gemv_f16_neon(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			  float *scratch)
{
	(void)scratch;
	memset(c, 0, (size_t)w * sizeof(float));
	rb_ref_gemv_f16_rows(gemv_f16_rows4_neon, gemv_f16_row_neon, a, b, ldb, k, w, c, 0);
}

void rb_ref_neon_f16_ops(struct gemm_ops *ops)
{
	ops->gemv = gemv_f16_neon;
}

void rb_ref_neon_i8_ops(struct gemm_ops *ops)
{
	ops->gemv = gemv_i8_neon;
}
#endif
