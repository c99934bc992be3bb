/* Cubes (see layout.c and layout.h): transfers between W = 1 NC1HWC2 cubes and
 * row-major matrices, for A, the rknn API's A and C, and the unpacking of C. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/fp16.h"
#include "numeric/layout_internal.h"

/* --- cubes ------------------------------------------------------------------------------
 * One transfer between a W = 1 NC1HWC2 cube and a row-major matrix. Matrix row r is
 * cube row r - cube_r0; matrix columns col0 + [0, cols) are cube channels [0, cols).
 * Matrix rows [r0, r1) and cube channel groups [0, groups) are visited; when packing,
 * groups may extend past cols and those channels are written as zeros. */

enum cube_op { OP_PACK, OP_COPY, OP_F16_F32, OP_ADD_F32, OP_ADD_I32 };

struct cube_job {
	enum cube_op op;
	size_t esize; /* bytes of a cube element */
	int64_t c2;
	void *dst;
	const void *src;
	int64_t ld; /* matrix row pitch in matrix elements */
	int64_t cube_rows, cube_r0;
	int64_t r0, r1;
	int64_t col0, cols, groups;
	bool split_rows; /* threads take row ranges, else channel-group ranges */
	bool lines;      /* OP_COPY into a 16-byte aligned matrix: see copy_by_lines */
	bool stream;     /* ... a large one, with streaming stores */
	bool avx512;     /* OP_PACK: the AVX-512 column kernel may run (pack_column) */
};

struct span {
	int64_t r0, r1, q0, q1;
};

static struct span job_span(const struct cube_job *j, int64_t begin, int64_t end)
{
	if (j->split_rows)
		return (struct span){j->r0 + begin, j->r0 + end, 0, j->groups};
	return (struct span){j->r0, j->r1, begin, end};
}

/* A tile of ROW_BLOCK rows × GROUP_BLOCK channel groups goes through this buffer, laid
 * out row-major ([rows][groups·16 bytes]). The cube side then moves whole 256-byte runs
 * of a surface and the matrix side whole row segments, so neither side writes 16 bytes
 * at a time into lines that a power-of-two pitch maps to the same cache set. The union
 * lets the row be read back as the element type it holds. */
union stage {
	uint8_t b[ROW_BLOCK * GROUP_BLOCK * ATOM];
	uint16_t h[ROW_BLOCK * GROUP_BLOCK * ATOM / 2];
	float f[ROW_BLOCK * GROUP_BLOCK * ATOM / 4];
	int32_t i[ROW_BLOCK * GROUP_BLOCK * ATOM / 4];
};

/* Elements of channel groups [q0, q1) that are matrix columns (the rest is padding). */
static int64_t valid_elems(const struct cube_job *j, int64_t q0, int64_t q1)
{
	return max64(0, min64(j->cols, q1 * j->c2) - q0 * j->c2);
}

static void add_f32(float *d, const float *s, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		d[i] += s[i];
}

/* Unsigned adds: int32 accumulators wrap like the hardware's instead of being UB. */
static void add_i32(int32_t *d, const int32_t *s, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		d[i] = (int32_t)((uint32_t)d[i] + (uint32_t)s[i]);
}

/* Matrix row r, columns of groups from q0 on, gets n elements from s (elements of the
 * cube's type). */
static void emit_row(const struct cube_job *j, int64_t r, int64_t q0, const void *s, int64_t n)
{
	size_t at = (size_t)r * j->ld + j->col0 + q0 * j->c2;

	switch (j->op) {
	case OP_COPY:
		memcpy((uint8_t *)j->dst + at * j->esize, s, (size_t)n * j->esize);
		break;
	case OP_F16_F32:
		rb_fp16_to_f32_array((float *)j->dst + at, s, (size_t)n);
		break;
	case OP_ADD_F32:
		add_f32((float *)j->dst + at, s, n);
		break;
	case OP_ADD_I32:
		add_i32((int32_t *)j->dst + at, s, n);
		break;
	case OP_PACK:
		break;
	}
}

static const uint8_t *cube_at(const struct cube_job *j, int64_t q, int64_t r)
{
	return (const uint8_t *)(j->op == OP_PACK ? j->dst : j->src) +
	       ((size_t)q * j->cube_rows + (r - j->cube_r0)) * ATOM;
}

/* The staged row at byte offset `at`, through the union member of the cube's type. */
static const void *stage_row(const struct cube_job *j, const union stage *st, size_t at)
{
	switch (j->op) {
	case OP_F16_F32:
		return &st->h[at / 2];
	case OP_ADD_F32:
		return &st->f[at / 4];
	case OP_ADD_I32:
		return &st->i[at / 4];
	default:
		return &st->b[at];
	}
}

/* Cube -> matrix for rows [r0, r1), groups [q0, q1). */
static void unpack_tile(const struct cube_job *j, union stage *st, int64_t r0, int64_t r1,
			int64_t q0, int64_t q1)
{
	size_t w = (size_t)(q1 - q0) * ATOM;
	int64_t n = valid_elems(j, q0, q1);

	for (int64_t q = q0; q < q1; q++) {
		const uint8_t *s = cube_at(j, q, r0);
		uint8_t *d = st->b + (q - q0) * ATOM;

		for (int64_t r = r0; r < r1; r++, s += ATOM, d += w)
			memcpy(d, s, ATOM);
	}
	for (int64_t r = r0; r < r1; r++)
		emit_row(j, r, q0, stage_row(j, st, (size_t)(r - r0) * w), n);
}

/* Matrix -> cube for rows [r0, r1), groups [q0, q1), zero-filling padding channels. */
static void pack_tile(const struct cube_job *j, union stage *st, int64_t r0, int64_t r1, int64_t q0,
		      int64_t q1)
{
	size_t w = (size_t)(q1 - q0) * ATOM;
	size_t valid = (size_t)valid_elems(j, q0, q1) * j->esize;
	const uint8_t *src = j->src;

	for (int64_t r = r0; r < r1; r++) {
		uint8_t *d = st->b + (size_t)(r - r0) * w;

		if (valid)
			memcpy(d, src + ((size_t)r * j->ld + j->col0 + q0 * j->c2) * j->esize,
			       valid);
		memset(d + valid, 0, w - valid);
	}
	for (int64_t q = q0; q < q1; q++) {
		uint8_t *d = (uint8_t *)cube_at(j, q, r0);
		const uint8_t *s = st->b + (q - q0) * ATOM;

		for (int64_t r = r0; r < r1; r++, s += w, d += ATOM)
			memcpy(d, s, ATOM);
	}
}

/* A one-row cube is the row itself, zero-padded to whole atoms: no reordering. */
static void row_range(const struct cube_job *j, int64_t q0, int64_t q1)
{
	int64_t n = valid_elems(j, q0, q1);
	uint8_t *cube = (uint8_t *)cube_at(j, q0, j->cube_r0);
	size_t valid = (size_t)n * j->esize;

	if (j->op != OP_PACK) {
		emit_row(j, j->r0, q0, cube, n);
		return;
	}
	if (valid)
		memcpy(cube, (const uint8_t *)j->src + (j->col0 + q0 * j->c2) * j->esize, valid);
	memset(cube + valid, 0, (size_t)(q1 - q0) * ATOM - valid);
}

/* Unpacking by lines (OP_COPY when j->lines): 4 surfaces are read down together, and
 * each matrix row receives their 4 atoms as one whole 64-byte line. The reads are 4
 * sequential streams and every written line is filled at once. A large C (j->stream,
 * x86) takes non-temporal stores, so no line of it is read for ownership or kept in
 * the caches; a smaller one ordinary stores, and stays in the caches for its reader.
 * The staged tiles took 1.4-1.8x as long on x86-64 (2 threads; 128x2048 fp32: 0.22-0.31
 * ms against 0.16-0.19 in the caches, 0.69-0.78 against 0.42-0.44 from memory;
 * 512x2048: 1.4-1.9 against 1.0-1.1 ms); aarch64 takes the same path with NEON,
 * unmeasured. The streamed lines must be whole: a line left partly written by one pass
 * of streaming stores and finished by another measured 3× slower than the staged tiles,
 * so the groups before the first line boundary and after the last whole line go
 * through copy_partial. */
#define LINE_GROUPS (64 / ATOM)

static uint8_t *matrix_at(const struct cube_job *j, int64_t r, int64_t q)
{
	return (uint8_t *)j->dst + ((size_t)r * j->ld + j->col0 + q * j->c2) * j->esize;
}

static void copy_lines(const struct cube_job *j, int64_t r0, int64_t r1, int64_t q)
{
	const uint8_t *s = cube_at(j, q, r0);
	size_t surf = (size_t)j->cube_rows * ATOM, pitch = (size_t)j->ld * j->esize;
	uint8_t *d = matrix_at(j, r0, q);

	for (int64_t r = r0; r < r1; r++, s += ATOM, d += pitch)
		store_atoms4(d, s, surf, j->stream);
}

/* The group at q of rows [r0, r1) with ordinary stores, only its columns inside C. */
static void copy_partial(const struct cube_job *j, int64_t r0, int64_t r1, int64_t q)
{
	int64_t n = valid_elems(j, q, q + 1);

	for (int64_t r = r0; r < r1; r++)
		emit_row(j, r, q, cube_at(j, q, r), n);
}

static void copy_by_lines(const struct cube_job *j, const struct span *sp)
{
	int64_t whole = min64(sp->q1, j->cols / j->c2);
	/* groups until the first line boundary (the same in every row: see use_lines) */
	int64_t head = (int64_t)((64 - (uintptr_t)matrix_at(j, sp->r0, sp->q0) % 64) % 64 / ATOM);
	int64_t q = sp->q0;

	for (; q < sp->q0 + head && q < sp->q1; q++)
		copy_partial(j, sp->r0, sp->r1, q);
	for (; q + LINE_GROUPS <= whole; q += LINE_GROUPS)
		copy_lines(j, sp->r0, sp->r1, q);
	for (; q < sp->q1; q++)
		copy_partial(j, sp->r0, sp->r1, q);
	if (j->stream)
		stream_fence();
}

/* Channel groups outside, rows inside: each tile continues the previous tile's surface
 * runs (this order measured up to 1.5× faster than rows outside). */
static void staged_tiles(const struct cube_job *j, const struct span *sp)
{
	union stage st;

	for (int64_t qb = sp->q0; qb < sp->q1; qb += GROUP_BLOCK) {
		int64_t qe = min64(qb + GROUP_BLOCK, sp->q1);

		for (int64_t rb = sp->r0; rb < sp->r1; rb += ROW_BLOCK) {
			int64_t re = min64(rb + ROW_BLOCK, sp->r1);

			if (j->op == OP_PACK)
				pack_tile(j, &st, rb, re, qb, qe);
			else
				unpack_tile(j, &st, rb, re, qb, qe);
		}
	}
}

static const uint8_t *matrix_at_src(const struct cube_job *j, int64_t r, int64_t q)
{
	return (const uint8_t *)j->src + ((size_t)r * j->ld + j->col0 + q * j->c2) * j->esize;
}

/* Rows ahead whose lines of the 4 surfaces pack_column prefetches (256 bytes). */
#define CUBE_AHEAD_ROWS 16

/* Prefetches, for writing, the lines CUBE_AHEAD_ROWS rows on in the 4 surfaces at d
 * (row r of rows up to r1), staying inside the column. Always inlined: GCC finds an
 * outlined function made of prefetches free of side effects and drops its calls. */
static inline __attribute__((always_inline)) void prefetch_surfaces(uint8_t *d, size_t surf,
								    int64_t r, int64_t r1)
{
	if (r + CUBE_AHEAD_ROWS < r1)
		for (int i = 0; i < 4; i++)
			__builtin_prefetch(d + i * surf + CUBE_AHEAD_ROWS * ATOM, 1, 3);
}

/* Packs rows [r0, r1) (a multiple of 4 of them) × channel groups [q, q + 4·lines), all
 * inside the matrix, down the rows: each group receives the atoms of 4 rows as 64
 * consecutive bytes of its surface (a whole line when the cube is 64-byte aligned), so
 * the surfaces are written in order, one line at a time, and their lines
 * CUBE_AHEAD_ROWS rows on are prefetched. A store that misses waits for its line:
 * fetching it ahead took pack A 512×2048 (one thread, in the LLC) from 1.50 to 1.11-1.2
 * × memcpy's time on a Cascade Lake VM; 8 to 32 rows ahead measured the same, and
 * prefetching the rows read did not help (on an Emerald Rapids VM either). Columns of
 * 2 lines (8 groups, 8 surfaces) measured better there: medians of 300 alternations
 * with memcpy, 512×2048 fp16 from 1.46-1.49 to 1.19-1.20 × memcpy's time with 16-byte
 * vectors and 1.07-1.09 with the AVX-512 transposes (128×2048: 1.34-1.40 to 1.13-1.16
 * with AVX-512); 4 lines measured 1.21-1.23. One line with AVX-512 measured no faster
 * than with 16-byte vectors on either machine. */
static void pack_column(const struct cube_job *j, int64_t r0, int64_t r1, int64_t q, int lines)
{
	size_t pitch = (size_t)j->ld * j->esize, surf = (size_t)j->cube_rows * ATOM;
	const uint8_t *s = matrix_at_src(j, r0, q);
	uint8_t *d = (uint8_t *)cube_at(j, q, r0);

	for (int64_t r = r0; r < r1; r += 4, s += 4 * pitch, d += 4 * ATOM) {
		for (int l = 0; l < lines; l++) {
			uint8_t *dl = d + (size_t)l * 4 * surf;

			prefetch_surfaces(dl, surf, r, r1);
#if defined(RB_LAYOUT_AVX512)
			if (j->avx512) {
				quad_avx512(dl, surf, s + l * 64, pitch);
				continue;
			}
#endif
			quad_base(dl, surf, s + l * 64, pitch);
		}
	}
}

/* OP_PACK: columns of 8, then 4 channel groups down all rows of the span (pack_column)
 * where the matrix has the whole groups and 4 rows left; the rest (the last rows and
 * groups, zero padding) through the staged tiles. Blocks of rows measured slower (the
 * rows' power-of-two pitches share cache sets), as did the staged tiles (2.1 ×
 * memcpy). */
static void pack_columns(const struct cube_job *j, const struct span *sp)
{
	int64_t rq = sp->r0 + (sp->r1 - sp->r0) / 4 * 4;
	int64_t whole = min64(sp->q1, j->cols / j->c2);
	int64_t qq = sp->q0 + max64(0, whole - sp->q0) / 4 * 4;
	struct span right = {sp->r0, sp->r1, qq, sp->q1}, below = {rq, sp->r1, sp->q0, qq};
	int64_t q = sp->q0;

	for (; q + 8 <= qq; q += 8)
		pack_column(j, sp->r0, rq, q, 2);
	if (q < qq)
		pack_column(j, sp->r0, rq, q, 1);
	if (right.q0 < right.q1)
		staged_tiles(j, &right);
	if (below.r0 < below.r1 && below.q0 < below.q1)
		staged_tiles(j, &below);
}

static void cube_range(const void *ctx, int64_t begin, int64_t end)
{
	const struct cube_job *j = ctx;
	struct span sp = job_span(j, begin, end);

	if (j->cube_rows == 1)
		row_range(j, sp.q0, sp.q1);
	else if (j->lines)
		copy_by_lines(j, &sp);
	else if (j->op == OP_PACK)
		pack_columns(j, &sp);
	else
		staged_tiles(j, &sp);
}

/* Below this many bytes of matrix, an unpacked C is left in the caches for its reader
 * (it fits in the LLC alongside its cube); above, streaming stores save the reads for
 * ownership. */
#define STREAM_MIN_BYTES ((size_t)8 << 20)

/* Whether an unpack may use copy_by_lines: a plain copy into a matrix whose atoms all
 * land on 16-byte boundaries and whose rows all start at the same offset in a 64-byte
 * line, on a CPU with 16-byte vectors. */
static bool use_lines(const struct cube_job *j)
{
	uintptr_t first = (uintptr_t)j->dst + (uintptr_t)(j->col0 * (int64_t)j->esize);

	return LAYOUT_LINES && j->op == OP_COPY && first % ATOM == 0 &&
	       (j->ld * (int64_t)j->esize) % 64 == 0;
}

/* ... and with streaming stores: x86, a large matrix. */
static bool use_streams(const struct cube_job *j)
{
	return LAYOUT_STREAMS && use_lines(j) &&
	       (size_t)(j->r1 - j->r0) * (size_t)j->cols * j->esize >= STREAM_MIN_BYTES;
}

static void run_cube(struct cube_job *j, int threads)
{
	int64_t rows = j->r1 - j->r0;
	int n = rb_layout_resolve_threads(threads, (size_t)rows * j->groups * ATOM,
					  max64(rows, j->groups));
	int64_t items;

	/* Row ranges keep each thread's writes together; use them unless there are too
	 * few rows to give every thread whole row blocks (decode, M = 1). Unpacks by
	 * lines prefer channel-group ranges: a chunk of rows would cut each surface into
	 * short runs (32-row chunks of a 512-row C measured 2-3× slower, streaming), a
	 * chunk of groups reads its surfaces whole. */
	j->lines = use_lines(j);
	j->stream = use_streams(j);
	if (j->lines)
		j->split_rows = j->groups < (int64_t)n * GROUP_BLOCK;
	else
		j->split_rows = rows >= (int64_t)n * ROW_BLOCK;
	items = j->split_rows ? rows : j->groups;
	rb_layout_run_parallel(cube_range, j, items, (int)min64(n, items),
			       j->split_rows ? ROW_BLOCK : GROUP_BLOCK);
}

/* Row-major rows×cols (esize-byte elements) -> cube with groups_pad·C2 channels. */
void rb_layout_cube_pack(void *dst, const void *src, size_t esize, int64_t rows, int64_t cols,
			 int64_t channels_pad, int threads)
{
	struct cube_job j = {.op = OP_PACK, .esize = esize, .dst = dst, .src = src};

	j.avx512 = rb_layout_use_avx512();
	j.c2 = rb_layout_c2(esize);
	j.ld = cols;
	j.cube_rows = rows;
	j.r1 = rows;
	j.cols = cols;
	j.groups = channels_pad / j.c2;
	run_cube(&j, threads);
}

/* Cube of `rows` rows -> row-major rows×cols, all of it. */
void rb_layout_cube_unpack(void *dst, const void *src, size_t esize, int64_t rows, int64_t cols,
			   int threads)
{
	struct cube_job j = {.op = OP_COPY, .esize = esize, .dst = dst, .src = src};

	j.c2 = rb_layout_c2(esize);
	j.ld = cols;
	j.cube_rows = rows;
	j.r1 = rows;
	j.cols = cols;
	j.groups = (cols + j.c2 - 1) / j.c2;
	run_cube(&j, threads);
}

/* --- C --------------------------------------------------------------------------------- */

void rb_layout_c_tile_full(struct rb_layout_c_tile *tile, int64_t m, int64_t n)
{
	*tile = (struct rb_layout_c_tile){.m1 = m, .n1 = n, .cube_rows = m};
}

size_t rb_layout_c_bytes(size_t esize, int64_t rows, int64_t channels)
{
	int64_t c2 = rb_layout_c2(esize);

	if (!c2 || channels < 0)
		return 0;
	return rb_layout_mul3((channels + c2 - 1) / c2, rows, ATOM);
}

static int check_tile(const struct rb_layout_c_tile *t, int64_t ldc)
{
	if (t->m0 < 0 || t->m1 < t->m0 || t->n0 < 0 || t->n1 < t->n0 || t->n1 > ldc ||
	    ldc > RB_SHAPE_DIM_MAX)
		return rb_set_error(-EINVAL,
				    "invalid C tile rows [%" PRId64 ", %" PRId64
				    ") columns [%" PRId64 ", %" PRId64 ") for row pitch %" PRId64,
				    t->m0, t->m1, t->n0, t->n1, ldc);
	if (t->cube_m0 < 0 || t->cube_rows < 1 || t->cube_rows > RB_SHAPE_DIM_MAX ||
	    t->m0 < t->cube_m0 || t->m1 - t->cube_m0 > t->cube_rows)
		return rb_set_error(-EINVAL,
				    "C tile rows [%" PRId64 ", %" PRId64
				    ") are not inside the cube's"
				    " rows [%" PRId64 ", %" PRId64 ")",
				    t->m0, t->m1, t->cube_m0, t->cube_m0 + t->cube_rows);
	return 0;
}

/* A non-empty tile's cube and C must be addressable. */
static int check_tile_size(const struct rb_layout_c_tile *t, int64_t ldc, size_t esize)
{
	if (rb_layout_c_bytes(esize, t->cube_rows, t->n1 - t->n0) && rb_layout_mul3(t->m1, ldc, 4))
		return 0;
	return rb_set_error(-EINVAL, "C tile too large for this machine's address space");
}

static int run_unpack_c(enum cube_op op, void *c, int64_t ldc, const void *cube, size_t esize,
			const struct rb_layout_c_tile *t, int threads, const char *func)
{
	struct cube_job j = {.op = op, .esize = esize, .dst = c, .src = cube, .ld = ldc};
	int err;

	if (!t)
		return rb_set_error(-EINVAL, "null tile passed to '%s'", func);
	if ((err = rb_layout_check_buffers(c, cube, func)) || (err = check_tile(t, ldc)))
		return err;
	if (t->m1 == t->m0 || t->n1 == t->n0)
		return 0;
	if ((err = check_tile_size(t, ldc, esize)))
		return err;
	j.c2 = rb_layout_c2(esize);
	j.cube_rows = t->cube_rows;
	j.cube_r0 = t->cube_m0;
	j.r0 = t->m0;
	j.r1 = t->m1;
	j.col0 = t->n0;
	j.cols = t->n1 - t->n0;
	j.groups = (j.cols + j.c2 - 1) / j.c2;
	run_cube(&j, threads);
	return 0;
}

int rb_layout_unpack_c(void *c, int64_t ldc, const void *cube, size_t esize,
		       const struct rb_layout_c_tile *tile, int threads)
{
	if (esize != 2 && esize != 4)
		return rb_set_error(-EINVAL, "invalid C element size %zu: use 4 or 2", esize);
	return run_unpack_c(OP_COPY, c, ldc, cube, esize, tile, threads, __func__);
}

int rb_layout_unpack_c_f16_f32(float *c, int64_t ldc, const uint16_t *cube,
			       const struct rb_layout_c_tile *tile, int threads)
{
	return run_unpack_c(OP_F16_F32, c, ldc, cube, 2, tile, threads, __func__);
}

int rb_layout_accumulate_c_f32(float *c, int64_t ldc, const float *cube,
			       const struct rb_layout_c_tile *tile, int threads)
{
	return run_unpack_c(OP_ADD_F32, c, ldc, cube, 4, tile, threads, __func__);
}

int rb_layout_accumulate_c_i32(int32_t *c, int64_t ldc, const int32_t *cube,
			       const struct rb_layout_c_tile *tile, int threads)
{
	return run_unpack_c(OP_ADD_I32, c, ldc, cube, 4, tile, threads, __func__);
}
