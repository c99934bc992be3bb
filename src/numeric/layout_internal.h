/* What the layout files share (layout.c: sizes, checks, threads, the kernels chosen at
 * run time, A and the rknn API; layout_cube.c: cubes and C; layout_b.c: B's weight
 * blocks). Private to numeric/. */
#ifndef RB_NUMERIC_LAYOUT_INTERNAL_H
#define RB_NUMERIC_LAYOUT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "numeric/layout_isa.h"

#define KBLOCK RB_LAYOUT_K_ALIGN
/* Cube tiles: 16 rows (256 contiguous bytes of a surface) × 32 channel groups (512
 * contiguous bytes of a matrix row), an 8 KiB staging buffer. */
#define ROW_BLOCK   16
#define GROUP_BLOCK 32
/* Widest column strip of B packed for all K before the next strip (narrower when a
 * thread's share of a row is: see b_strip_groups). */
#define B_STRIP_BYTES 16384

static inline int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* Bytes of an element of A or B. */
size_t rb_layout_in_esize(enum rb_dtype dtype);
/* a·b·c as a size_t, or 0 when an operand is negative or the product overflows. */
size_t rb_layout_mul3(int64_t a, int64_t b, int64_t c);

/* Argument checks: 0, or -EINVAL with a message naming the argument. */
int rb_layout_check_dtype(enum rb_dtype dtype);
int rb_layout_check_dim(const char *name, int64_t v);
int rb_layout_check_pad(const char *name, int64_t pad, const char *dim, int64_t v, int64_t align);
int rb_layout_check_buffers(const void *dst, const void *src, const char *func);
int rb_layout_check_size(size_t bytes, const char *what);

/* Threads for a job of `bytes` bytes made of `items` indivisible pieces, and fn run over
 * [0, items) on them in chunks of a multiple of `grain` (layout.c). */
typedef void (*range_fn)(const void *ctx, int64_t begin, int64_t end);
int rb_layout_resolve_threads(int threads, size_t bytes, int64_t items);
void rb_layout_run_parallel(range_fn fn, const void *ctx, int64_t items, int threads,
			    int64_t grain);

/* Whether the AVX-512 kernels run (the CPU has them, or rb_layout_force_impl chose). */
bool rb_layout_use_avx512(void);

/* Row-major rows×cols (esize-byte elements) -> a cube with channels_pad channels, and
 * a cube of cols channels -> row-major (layout_cube.c). */
void rb_layout_cube_pack(void *dst, const void *src, size_t esize, int64_t rows, int64_t cols,
			 int64_t channels_pad, int threads);
void rb_layout_cube_unpack(void *dst, const void *src, size_t esize, int64_t rows, int64_t cols,
			   int threads);

#endif
