/* IEEE 754 binary16 <-> binary32 conversion (see fp16.h).
 *
 * The scalar code works on bit patterns only, so it does not depend on the FPU's
 * rounding mode or on flush-to-zero settings. Its NaN handling copies what the
 * hardware converters do (x86 VCVTPS2PH/VCVTPH2PS and aarch64 FCVT with the default
 * FPCR, checked on the real instructions by tests/unit/test_fp16.c):
 *
 *   half -> float: quiet bit set, payload moved to the top of the float mantissa
 *   float -> half: quiet bit set, payload truncated to its top 9 bits
 *
 * so every array path gives the same bits for every input. */
#include "core/fp16.h"

#include <stdatomic.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#define RB_FP16_X86 1
#elif defined(__aarch64__)
#include <arm_neon.h>
#define RB_FP16_NEON 1
#endif

#define F32_SIGN  0x80000000u
#define F32_EXP   0x7f800000u
#define F32_QUIET 0x00400000u
#define F16_EXP   0x7c00u
#define F16_QUIET 0x0200u

static uint32_t f32_bits(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	return u;
}

static float f32_from_bits(uint32_t u)
{
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* A half subnormal is mant·2^-24; shift the leading one up to the implicit bit. */
static uint32_t f16_subnormal_to_f32(uint32_t sign, uint32_t mant)
{
	uint32_t exp = 113; /* float exponent field of 2^-14, the half normal minimum */

	while (!(mant & 0x400u)) {
		mant <<= 1;
		exp--;
	}
	return sign | exp << 23 | (mant & 0x3ffu) << 13;
}

float rb_fp16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = (h >> 10) & 0x1fu;
	uint32_t mant = h & 0x3ffu;

	if (exp == 0x1f) {
		if (mant == 0)
			return f32_from_bits(sign | F32_EXP);
		return f32_from_bits(sign | F32_EXP | F32_QUIET | mant << 13);
	}
	if (exp == 0) {
		if (mant == 0)
			return f32_from_bits(sign);
		return f32_from_bits(f16_subnormal_to_f32(sign, mant));
	}
	/* Rebias the exponent: 127 - 15 = 112. */
	return f32_from_bits(sign | (exp + 112) << 23 | mant << 13);
}

/* Drops the low `shift` bits of v, rounding to nearest with ties to even. A carry
 * out of the mantissa correctly bumps the exponent (up to infinity). */
static uint32_t shift_round_even(uint32_t v, unsigned int shift)
{
	uint32_t kept = v >> shift;
	uint32_t rest = v & ((1u << shift) - 1);
	uint32_t half = 1u << (shift - 1);

	if (rest > half || (rest == half && (kept & 1)))
		kept++;
	return kept;
}

uint16_t rb_fp16_from_f32(float f)
{
	uint32_t x = f32_bits(f);
	uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
	uint32_t ax = x & ~F32_SIGN;

	if (ax > F32_EXP) /* NaN: never let a payload in the low bits turn it into inf */
		return sign | F16_EXP | F16_QUIET | (uint16_t)((ax >> 13) & 0x3ffu);
	if (ax >= 0x47800000u) /* >= 65536 (and inf): beyond any rounding to 65504 */
		return sign | F16_EXP;
	if (ax >= 0x38800000u) /* >= 2^-14: normal half, rebias exponent by -112 */
		return sign | (uint16_t)shift_round_even(ax - 0x38000000u, 13);
	if (ax < 0x33000000u) /* < 2^-25: less than half the smallest subnormal */
		return sign;
	/* Subnormal half: value in units of 2^-24 is m·2^(e-126) with e in 102..112. */
	uint32_t e = ax >> 23;
	uint32_t m = (ax & 0x7fffffu) | 0x800000u;

	return sign | (uint16_t)shift_round_even(m, 126 - e);
}

void rb_fp16_to_f32_array_portable(float *dst, const uint16_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = rb_fp16_to_f32(src[i]);
}

void rb_fp16_from_f32_array_portable(uint16_t *dst, const float *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = rb_fp16_from_f32(src[i]);
}

#if defined(RB_FP16_X86)
/* clang 14 does not know "f16c" in __builtin_cpu_supports: read CPUID directly. The
 * "avx" check also tells that the OS saves the YMM registers. */
static int probe_f16c(void)
{
	unsigned int eax, ebx, ecx, edx;

	if (!__builtin_cpu_supports("avx"))
		return 0;
	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx))
		return 0;
	return (ecx & bit_F16C) != 0;
}

/* CPUID traps to the hypervisor in a VM (microseconds), so probe once. Racing threads
 * all store the same answer. */
static int have_f16c(void)
{
	static _Atomic int cached = -1;
	int v = atomic_load_explicit(&cached, memory_order_relaxed);

	if (v < 0) {
		v = probe_f16c();
		atomic_store_explicit(&cached, v, memory_order_relaxed);
	}
	return v;
}

/* The tails go through the same instruction via a padded buffer, so no element of the
 * array depends on the scalar code. */
__attribute__((target("f16c,avx"))) static void to_f32_f16c(float *dst, const uint16_t *src,
							    size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m128i h = _mm_loadu_si128((const __m128i *)(src + i));

		_mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
	}
	if (i < n) {
		uint16_t hbuf[8] = {0};
		float fbuf[8];

		memcpy(hbuf, src + i, (n - i) * sizeof(*src));
		_mm256_storeu_ps(fbuf, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)hbuf)));
		memcpy(dst + i, fbuf, (n - i) * sizeof(*dst));
	}
}

__attribute__((target("f16c,avx"))) static void from_f32_f16c(uint16_t *dst, const float *src,
							      size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		__m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);

		_mm_storeu_si128((__m128i *)(dst + i), h);
	}
	if (i < n) {
		float fbuf[8] = {0};
		uint16_t hbuf[8];

		memcpy(fbuf, src + i, (n - i) * sizeof(*src));
		_mm_storeu_si128((__m128i *)hbuf,
				 _mm256_cvtps_ph(_mm256_loadu_ps(fbuf), _MM_FROUND_TO_NEAREST_INT));
		memcpy(dst + i, hbuf, (n - i) * sizeof(*dst));
	}
}
#endif

#if defined(RB_FP16_NEON)
static void to_f32_neon(float *dst, const uint16_t *src, size_t n)
{
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		vst1q_f32(dst + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + i))));
	if (i < n) {
		uint16_t hbuf[4] = {0};
		float fbuf[4];

		memcpy(hbuf, src + i, (n - i) * sizeof(*src));
		vst1q_f32(fbuf, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(hbuf))));
		memcpy(dst + i, fbuf, (n - i) * sizeof(*dst));
	}
}

static void from_f32_neon(uint16_t *dst, const float *src, size_t n)
{
	size_t i = 0;

	for (; i + 4 <= n; i += 4)
		vst1_u16(dst + i, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + i))));
	if (i < n) {
		float fbuf[4] = {0};
		uint16_t hbuf[4];

		memcpy(fbuf, src + i, (n - i) * sizeof(*src));
		vst1_u16(hbuf, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(fbuf))));
		memcpy(dst + i, hbuf, (n - i) * sizeof(*dst));
	}
}
#endif

void rb_fp16_to_f32_array(float *dst, const uint16_t *src, size_t n)
{
#if defined(RB_FP16_X86)
	if (have_f16c()) {
		to_f32_f16c(dst, src, n);
		return;
	}
#elif defined(RB_FP16_NEON)
	to_f32_neon(dst, src, n);
	return;
#endif
	rb_fp16_to_f32_array_portable(dst, src, n);
}

void rb_fp16_from_f32_array(uint16_t *dst, const float *src, size_t n)
{
#if defined(RB_FP16_X86)
	if (have_f16c()) {
		from_f32_f16c(dst, src, n);
		return;
	}
#elif defined(RB_FP16_NEON)
	from_f32_neon(dst, src, n);
	return;
#endif
	rb_fp16_from_f32_array_portable(dst, src, n);
}

const char *rb_fp16_impl(void)
{
#if defined(RB_FP16_X86)
	if (have_f16c())
		return "f16c";
#elif defined(RB_FP16_NEON)
	return "neon";
#endif
	return "portable";
}
