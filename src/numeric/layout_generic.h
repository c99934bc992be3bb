/* The layouts' kernels without vectors (layout_isa.h): scalar transposes and copies,
 * for other CPUs and for RB_LAYOUT_PORTABLE builds that test them on machines with
 * vectors. Private to numeric/. */
#ifndef RB_NUMERIC_LAYOUT_GENERIC_H
#define RB_NUMERIC_LAYOUT_GENERIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define LAYOUT_BASE_NAME "scalar"
#define LAYOUT_LINES     0 /* unpacks go through the staged tiles */
#define LAYOUT_STREAMS   0

static inline void tr8x8_u16(uint8_t *d, size_t dp, const uint8_t *s, size_t sp)
{
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 8; c++)
			memcpy(d + c * dp + 2 * r, s + r * sp + 2 * c, 2);
}

static inline void tr16x16_u8(uint8_t *d, size_t dp, const uint8_t *s, size_t sp)
{
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++)
			d[c * dp + r] = s[r * sp + c];
}

static inline void quad_base(uint8_t *d, size_t surf, const uint8_t *s, size_t pitch)
{
	for (int g = 0; g < 4; g++)
		for (int i = 0; i < 4; i++)
			memcpy(d + g * surf + i * ATOM, s + i * pitch + g * ATOM, ATOM);
}

static inline void store_atoms4(uint8_t *d, const uint8_t *s, size_t surf, bool stream)
{
	(void)stream;
	for (int i = 0; i < 4; i++)
		memcpy(d + i * ATOM, s + i * surf, ATOM);
}

#endif
