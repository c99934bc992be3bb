/* IEEE 754 binary16 <-> binary32 conversion.
 *
 * Scalar conversions are exact bit manipulations: float->half rounds to nearest, ties
 * to even, produces subnormals, overflows to ±inf and keeps NaN a NaN (quiet, sign and
 * top payload bits kept). The array conversions use the CPU's instructions where the
 * machine has them (x86 F16C, aarch64 NEON) and the portable code otherwise; every path
 * gives bit-identical results. */
#ifndef RB_CORE_FP16_H
#define RB_CORE_FP16_H

#include <stddef.h>
#include <stdint.h>

float rb_fp16_to_f32(uint16_t h);
uint16_t rb_fp16_from_f32(float f);

void rb_fp16_to_f32_array(float *dst, const uint16_t *src, size_t n);
void rb_fp16_from_f32_array(uint16_t *dst, const float *src, size_t n);

/* The portable array paths, exported so tests can compare them with the fast ones. */
void rb_fp16_to_f32_array_portable(float *dst, const uint16_t *src, size_t n);
void rb_fp16_from_f32_array_portable(uint16_t *dst, const float *src, size_t n);

/* Which array path this machine uses: "f16c", "neon" or "portable". */
const char *rb_fp16_impl(void);

#endif
