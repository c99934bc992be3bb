/* The 16-byte vector kernels of the layouts, written once for SSE2 (layout_x86.h) and
 * NEON (layout_neon.h), which define `vec`, VLOAD, VSTORE and the ZIP_* interleaves
 * before including this. Private to numeric/. */
#ifndef RB_NUMERIC_LAYOUT_VEC_H
#define RB_NUMERIC_LAYOUT_VEC_H

/* --- 16-byte transposes ---------------------------------------------------------------
 * A perfect-shuffle round interleaves vector i with vector i + n/2 into vectors 2i and
 * 2i + 1. Seen as bits (vector index, lane), one round rotates them left by one, so
 * log2(n) rounds turn element (row r, lane c) into (row c, lane r): a transpose of n
 * rows of n lanes. */

#define ZIP2(y, x, i, h, LO, HI)                                                                   \
	do {                                                                                       \
		(y)[2 * (i)] = LO((x)[i], (x)[(i) + (h)]);                                         \
		(y)[2 * (i) + 1] = HI((x)[i], (x)[(i) + (h)]);                                     \
	} while (0)

static inline void round8x16(vec *y, const vec *x)
{
	ZIP2(y, x, 0, 4, ZIP_LO16, ZIP_HI16);
	ZIP2(y, x, 1, 4, ZIP_LO16, ZIP_HI16);
	ZIP2(y, x, 2, 4, ZIP_LO16, ZIP_HI16);
	ZIP2(y, x, 3, 4, ZIP_LO16, ZIP_HI16);
}

#define LOAD4(a, i, s, sp)                                                                         \
	do {                                                                                       \
		(a)[i] = VLOAD((s) + (i) * (sp));                                                  \
		(a)[(i) + 1] = VLOAD((s) + ((i) + 1) * (sp));                                      \
		(a)[(i) + 2] = VLOAD((s) + ((i) + 2) * (sp));                                      \
		(a)[(i) + 3] = VLOAD((s) + ((i) + 3) * (sp));                                      \
	} while (0)
#define STORE4(d, dp, a, i)                                                                        \
	do {                                                                                       \
		VSTORE((d) + (i) * (dp), (a)[i]);                                                  \
		VSTORE((d) + ((i) + 1) * (dp), (a)[(i) + 1]);                                      \
		VSTORE((d) + ((i) + 2) * (dp), (a)[(i) + 2]);                                      \
		VSTORE((d) + ((i) + 3) * (dp), (a)[(i) + 3]);                                      \
	} while (0)

/* 8 rows of 8 uint16_t at s (pitch sp bytes) -> 8 rows at d (pitch dp bytes). Written
 * out so that the vectors stay in registers at -O2. */
static inline void tr8x8_u16(uint8_t *d, size_t dp, const uint8_t *s, size_t sp)
{
	vec a[8], b[8];

	LOAD4(a, 0, s, sp);
	LOAD4(a, 4, s, sp);
	round8x16(b, a);
	round8x16(a, b);
	round8x16(b, a);
	STORE4(d, dp, b, 0);
	STORE4(d, dp, b, 4);
}

static inline void round16x8(vec *y, const vec *x)
{
	ZIP2(y, x, 0, 8, ZIP_LO8, ZIP_HI8);
	ZIP2(y, x, 1, 8, ZIP_LO8, ZIP_HI8);
	ZIP2(y, x, 2, 8, ZIP_LO8, ZIP_HI8);
	ZIP2(y, x, 3, 8, ZIP_LO8, ZIP_HI8);
	ZIP2(y, x, 4, 8, ZIP_LO8, ZIP_HI8);
	ZIP2(y, x, 5, 8, ZIP_LO8, ZIP_HI8);
	ZIP2(y, x, 6, 8, ZIP_LO8, ZIP_HI8);
	ZIP2(y, x, 7, 8, ZIP_LO8, ZIP_HI8);
}

/* 16 rows of 16 bytes at s (pitch sp) -> 16 rows at d (pitch dp). */
static inline void tr16x16_u8(uint8_t *d, size_t dp, const uint8_t *s, size_t sp)
{
	vec a[16], b[16];

	LOAD4(a, 0, s, sp);
	LOAD4(a, 4, s, sp);
	LOAD4(a, 8, s, sp);
	LOAD4(a, 12, s, sp);
	round16x8(b, a);
	round16x8(a, b);
	round16x8(b, a);
	round16x8(a, b);
	STORE4(d, dp, a, 0);
	STORE4(d, dp, a, 4);
	STORE4(d, dp, a, 8);
	STORE4(d, dp, a, 12);
}

/* One line of 4 channel groups (4 atoms) from each of 4 rows at s (pitch bytes apart)
 * -> the 4 rows' atoms of each group, 64 consecutive bytes of each surface at d. */
static inline void quad_base(uint8_t *d, size_t surf, const uint8_t *s, size_t pitch)
{
	for (int g = 0; g < 4; g++) {
		vec a0 = VLOAD(s + g * ATOM), a1 = VLOAD(s + pitch + g * ATOM);
		vec a2 = VLOAD(s + 2 * pitch + g * ATOM), a3 = VLOAD(s + 3 * pitch + g * ATOM);

		VSTORE(d + g * surf, a0);
		VSTORE(d + g * surf + ATOM, a1);
		VSTORE(d + g * surf + 2 * ATOM, a2);
		VSTORE(d + g * surf + 3 * ATOM, a3);
	}
}

/* One row's atoms of 4 channel groups, one from each of the 4 surfaces at s: a 64-byte
 * line of the matrix at d. */
static inline void load_atoms4(vec *a, const uint8_t *s, size_t surf)
{
	a[0] = VLOAD(s);
	a[1] = VLOAD(s + surf);
	a[2] = VLOAD(s + 2 * surf);
	a[3] = VLOAD(s + 3 * surf);
}

static inline void store_atoms4_cached(uint8_t *d, const vec *a)
{
	VSTORE(d, a[0]);
	VSTORE(d + ATOM, a[1]);
	VSTORE(d + 2 * ATOM, a[2]);
	VSTORE(d + 3 * ATOM, a[3]);
}

#endif
