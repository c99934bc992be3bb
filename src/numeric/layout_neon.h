/* The layouts' kernels on aarch64 (layout_isa.h): the 16-byte vector kernels on NEON
 * (the base ISA). No streaming stores. Private to numeric/. */
#ifndef RB_NUMERIC_LAYOUT_NEON_H
#define RB_NUMERIC_LAYOUT_NEON_H

#include <arm_neon.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LAYOUT_BASE_NAME "neon"
#define LAYOUT_LINES     1
#define LAYOUT_STREAMS   0

typedef uint8x16_t vec;
#define VLOAD(p)      vld1q_u8((const uint8_t *)(p))
#define VSTORE(p, v)  vst1q_u8((uint8_t *)(p), (v))
#define ZIP_LO8(a, b) vzip1q_u8((a), (b))
#define ZIP_HI8(a, b) vzip2q_u8((a), (b))
#define ZIP_LO16(a, b)                                                                             \
	vreinterpretq_u8_u16(vzip1q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b)))
#define ZIP_HI16(a, b)                                                                             \
	vreinterpretq_u8_u16(vzip2q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b)))

#include "numeric/layout_vec.h"

static inline void store_atoms4(uint8_t *d, const uint8_t *s, size_t surf, bool stream)
{
	vec a[4];

	(void)stream;
	load_atoms4(a, s, surf);
	store_atoms4_cached(d, a);
}

#endif
