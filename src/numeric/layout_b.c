/* B's weight blocks (see layout.c and layout.h): packing and unpacking B, K-sliced. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "numeric/layout_internal.h"

static void blocks_f16(uint8_t *d, const uint8_t *s, size_t sp, int count)
{
	for (int kb = 0; kb < 4; kb++, s += 8 * sp)
		for (int h = 0; h < 2 * count; h++) /* 8-kernel halves */
			tr8x8_u16(d + (h / 2) * BLOCK_BYTES + (h % 2) * 8 * 64 + kb * 16, 64,
				  s + h * 16, sp);
}

/* The same for int8: 32 channels × 32·count kernels -> [count][32][32]. */
static void blocks_i8(uint8_t *d, const uint8_t *s, size_t sp, int count)
{
	for (int kb = 0; kb < 2; kb++, s += 16 * sp)
		for (int h = 0; h < 2 * count; h++) /* 16-kernel halves */
			tr16x16_u8(d + (h / 2) * BLOCK_BYTES + (h % 2) * 16 * 32 + kb * 16, 32,
				   s + h * 16, sp);
}

/* --- B --------------------------------------------------------------------------------- */

/* Packing (or unpacking) row-major K×N B against the K-sliced weight blocks. */
struct b_job {
	void *dst;
	const void *src;
	size_t es;
	int64_t kg;
	int64_t k, n, k_pad, n_pad, k_slice;
	bool stream;   /* dst is 16-byte aligned: whole blocks may use streaming stores */
	bool stream64; /* dst is 64-byte aligned: whole lines may use streaming stores */
	bool avx512;   /* the AVX-512 kernels may run */
	int64_t strip; /* kernel groups per strip (b_strip_groups) */
};

/* A block at the edges of B, element by element: zeros where k >= K or n >= N. */
static void pack_block_edge(const struct b_job *b, uint8_t *d, int64_t kb, int64_t nb)
{
	const uint8_t *src = b->src;

	if (kb >= b->k || nb >= b->n) {
		memset(d, 0, BLOCK_BYTES);
		return;
	}

	for (int64_t nn = 0; nn < b->kg; nn++) {
		for (int64_t kk = 0; kk < KBLOCK; kk++, d += b->es) {
			int64_t k = kb + kk, n = nb + nn;

			if (k < b->k && n < b->n)
				memcpy(d, src + ((size_t)k * b->n + n) * b->es, b->es);
			else
				memset(d, 0, b->es);
		}
	}
}

/* Byte offset of kernel group j, channel block g of the slice starting at channel k0. */
static size_t b_block_offset(const struct b_job *b, int64_t k0, int64_t j, int64_t g)
{
	int64_t ks = min64(b->k_slice, b->k_pad - k0);

	return ((size_t)k0 * b->n_pad + (size_t)j * b->kg * ks + (size_t)g * b->kg * KBLOCK) *
	       b->es;
}

/* How many of kernel groups j, j + 1 (< je) are whole blocks of B at channel kb, that
 * is with no padding (0 means j is an edge block). */
static int full_blocks(const struct b_job *b, int64_t kb, int64_t j, int64_t je)
{
	int64_t whole = b->n / b->kg;

	if (kb + KBLOCK > b->k || j >= whole)
		return 0;
	return j + 1 < je && j + 1 < whole ? 2 : 1;
}

/* Prefetches, in each of the 32 rows of B at s, the line PREFETCH_AHEAD bytes on if it
 * is before `left` bytes (the end of the strip). The 32 rows are pitches apart, in 32
 * pages, more streams than the hardware prefetcher follows well. On 2048x128256 (2
 * threads, huge pages, quiet Xeon) 512 bytes ahead with 16 KiB strips measured 1.20-1.25
 * of memcpy's time against 1.43-1.51 with 128 bytes and 8 KiB strips; 256 bytes ahead
 * measured 1.47, 1024 1.27-1.33. On 2048x8192 both measured 1.13-1.26. Measured on
 * x86-64 only; aarch64 takes the same values, unmeasured (no board here). */
#define PREFETCH_AHEAD 512
static void prefetch_rows(const uint8_t *s, size_t sp, int64_t left)
{
	if (left <= PREFETCH_AHEAD)
		return;
	for (int r = 0; r < KBLOCK; r++)
		__builtin_prefetch(s + r * sp + PREFETCH_AHEAD, 0, 3);
}

/* Channel block g of the slice at k0, kernel groups [js, je): transposed through a
 * staging buffer so that each block leaves as 1 KiB of sequential whole lines. */
static void pack_b_band(const struct b_job *b, int64_t k0, int64_t g, int64_t js, int64_t je)
{
	_Alignas(64) uint8_t stage[2 * BLOCK_BYTES];
	uint8_t *dst = b->dst;
	int64_t kb = k0 + g * KBLOCK;
	size_t sp = (size_t)b->n * b->es;

	for (int64_t j = js; j < je;) {
		int count = full_blocks(b, kb, j, je);
		const uint8_t *s =
		    (const uint8_t *)b->src + ((size_t)kb * b->n + j * b->kg) * b->es;

		if (!count) {
			pack_block_edge(b, dst + b_block_offset(b, k0, j, g), kb, j * b->kg);
			j++;
			continue;
		}
		prefetch_rows(s, sp, (je - j) * b->kg * (int64_t)b->es);
#if defined(RB_LAYOUT_AVX512)
		if (b->es == 2 && count == 2 && b->avx512) {
			uint8_t *d = dst + b_block_offset(b, k0, j, g);

			tile32_f16_avx512(
			    d, b_block_offset(b, k0, j + 1, g) - b_block_offset(b, k0, j, g), s, sp,
			    b->stream64);
			j += 2;
			continue;
		}
#endif
		if (b->es == 2)
			blocks_f16(stage, s, sp, count);
		else
			blocks_i8(stage, s, sp, count);
		for (int i = 0; i < count; i++, j++)
			write_block(dst + b_block_offset(b, k0, j, g), stage + i * BLOCK_BYTES,
				    b->stream);
	}
}

/* Kernel groups in a strip: B_STRIP_BYTES of columns, or a thread's share of a row if
 * that is less (so that every thread gets a strip), an even number (blocks go in pairs)
 * and at least 2. */
static int64_t b_strip_groups(const struct b_job *b, int threads)
{
	int64_t group_bytes = b->kg * (int64_t)b->es;
	int64_t share = b->n_pad / b->kg / threads;

	return max64(2, min64(B_STRIP_BYTES / group_bytes, share) / 2 * 2);
}

/* Strips of b->strip kernel groups, each packed for every K before the next: the rows of
 * a strip are read once, and each kernel group's blocks are written in address order. */
static void pack_b_range(const void *ctx, int64_t j0, int64_t j1)
{
	const struct b_job *b = ctx;
	int64_t strip = b->strip;

	for (int64_t js = j0; js < j1; js += strip) {
		int64_t je = min64(js + strip, j1);

		for (int64_t k0 = 0; k0 < b->k_pad; k0 += b->k_slice) {
			int64_t blocks = min64(b->k_slice, b->k_pad - k0) / KBLOCK;

			for (int64_t g = 0; g < blocks; g++)
				pack_b_band(b, k0, g, js, je);
		}
	}
	stream_fence();
}

/* A block back into B, element by element (edges: only the part inside B). */
static void unpack_block_edge(const struct b_job *b, const uint8_t *s, int64_t kb, int64_t nb)
{
	uint8_t *dst = b->dst;

	for (int64_t nn = 0; nn < b->kg && nb + nn < b->n; nn++) {
		for (int64_t kk = 0; kk < KBLOCK && kb + kk < b->k; kk++) {
			size_t at = (size_t)(kb + kk) * b->n + nb + nn;

			memcpy(dst + at * b->es, s + (size_t)(nn * KBLOCK + kk) * b->es, b->es);
		}
	}
}

/* The inverse of the pack: a transpose is its own inverse, so whole blocks go back
 * through the same 16-byte transposes with source and destination swapped. */
static void unpack_block(const struct b_job *b, const uint8_t *s, int64_t kb, int64_t nb)
{
	size_t sp = (size_t)b->n * b->es;
	uint8_t *d = (uint8_t *)b->dst + ((size_t)kb * b->n + nb) * b->es;

	if (kb + KBLOCK > b->k || nb + b->kg > b->n) {
		unpack_block_edge(b, s, kb, nb);
		return;
	}
	for (int h = 0; h < 2; h++) {
		if (b->es == 2) {
			for (int kb8 = 0; kb8 < 4; kb8++)
				tr8x8_u16(d + kb8 * 8 * sp + h * 16, sp, s + h * 8 * 64 + kb8 * 16,
					  64);
		} else {
			for (int kb16 = 0; kb16 < 2; kb16++)
				tr16x16_u8(d + kb16 * 16 * sp + h * 16, sp,
					   s + h * 16 * 32 + kb16 * 16, 32);
		}
	}
}

static void unpack_b_range(const void *ctx, int64_t j0, int64_t j1)
{
	const struct b_job *b = ctx;
	const uint8_t *src = b->src;

	for (int64_t j = j0; j < j1; j++) {
		for (int64_t k0 = 0; k0 < b->k_pad; k0 += b->k_slice) {
			int64_t blocks = min64(b->k_slice, b->k_pad - k0) / KBLOCK;

			for (int64_t g = 0; g < blocks; g++)
				unpack_block(b, src + b_block_offset(b, k0, j, g), k0 + g * KBLOCK,
					     j * b->kg);
		}
	}
}

size_t rb_layout_b_bytes(enum rb_dtype dtype, int64_t k_pad, int64_t n_pad)
{
	if (rb_layout_check_dtype(dtype))
		return 0;
	return rb_layout_mul3(k_pad, n_pad, (int64_t)rb_layout_in_esize(dtype));
}

static int check_b_pads(enum rb_dtype dtype, int64_t k, int64_t n, int64_t k_pad, int64_t n_pad,
			int64_t k_slice)
{
	int err;

	if ((err = rb_layout_check_dtype(dtype)) || (err = rb_layout_check_dim("k", k)) ||
	    (err = rb_layout_check_dim("n", n)) ||
	    (err = rb_layout_check_pad("k_pad", k_pad, "k", k, KBLOCK)) ||
	    (err = rb_layout_check_pad("n_pad", n_pad, "n", n, rb_layout_kernel_group(dtype))))
		return err;
	if (k_slice < KBLOCK || k_slice % KBLOCK)
		return rb_set_error(-EINVAL, "invalid k_slice %" PRId64 ": use a multiple of 32",
				    k_slice);
	return rb_layout_check_size(rb_layout_b_bytes(dtype, k_pad, n_pad), "weight buffer");
}

static int run_b(range_fn fn, void *dst, const void *src, enum rb_dtype dtype, int64_t k, int64_t n,
		 int64_t k_pad, int64_t n_pad, int64_t k_slice, int threads)
{
	struct b_job b = {.dst = dst, .src = src, .k = k, .n = n};
	int64_t groups;
	int nthreads;
	int err = check_b_pads(dtype, k, n, k_pad, n_pad, k_slice);

	if (err)
		return err;
	b.es = rb_layout_in_esize(dtype);
	b.kg = rb_layout_kernel_group(dtype);
	b.k_pad = k_pad;
	b.n_pad = n_pad;
	b.k_slice = min64(k_slice, k_pad);
	b.stream = (uintptr_t)dst % 16 == 0;
	b.stream64 = (uintptr_t)dst % 64 == 0;
	/* Streams whole lines, else whole 16-byte vectors: a dst aligned to 16 bytes but not
	 * to 64 keeps the SSE2 blocks, whose stores stream. */
	b.avx512 = rb_layout_use_avx512() && (b.stream64 || !b.stream);
	groups = n_pad / b.kg;
	nthreads =
	    rb_layout_resolve_threads(threads, rb_layout_b_bytes(dtype, k_pad, n_pad), groups);
	b.strip = b_strip_groups(&b, nthreads);
	rb_layout_run_parallel(fn, &b, groups, nthreads, b.strip);
	return 0;
}

int rb_layout_pack_b_sliced(void *dst, const void *b, enum rb_dtype dtype, int64_t k, int64_t n,
			    int64_t k_pad, int64_t n_pad, int64_t k_slice, int threads)
{
	int err = rb_layout_check_buffers(dst, b, __func__);

	return err ? err : run_b(pack_b_range, dst, b, dtype, k, n, k_pad, n_pad, k_slice, threads);
}

int rb_layout_pack_b(void *dst, const void *b, enum rb_dtype dtype, int64_t k, int64_t n,
		     int64_t k_pad, int64_t n_pad, int threads)
{
	return rb_layout_pack_b_sliced(dst, b, dtype, k, n, k_pad, n_pad, k_pad, threads);
}

int rb_layout_unpack_b_sliced(void *b, const void *src, enum rb_dtype dtype, int64_t k, int64_t n,
			      int64_t k_pad, int64_t n_pad, int64_t k_slice, int threads)
{
	int err = rb_layout_check_buffers(b, src, __func__);

	return err ? err
		   : run_b(unpack_b_range, b, src, dtype, k, n, k_pad, n_pad, k_slice, threads);
}

int rb_layout_b_locate(enum rb_dtype dtype, int64_t k_pad, int64_t n_pad, int64_t k_slice,
		       int64_t slice, int64_t n0, size_t *offset, int64_t *slice_k)
{
	int err = check_b_pads(dtype, k_pad, n_pad, k_pad, n_pad, k_slice);
	int64_t kg = rb_layout_kernel_group(dtype), k0, slices;

	if (err)
		return err;
	k_slice = min64(k_slice, k_pad);
	slices = (k_pad + k_slice - 1) / k_slice;
	if (slice < 0 || slice >= slices)
		return rb_set_error(-EINVAL,
				    "invalid slice %" PRId64 ": k_pad %" PRId64 " has %" PRId64
				    " slices of %" PRId64 " channels",
				    slice, k_pad, slices, k_slice);
	k0 = slice * k_slice;
	if (n0 < 0 || n0 >= n_pad || n0 % kg)
		return rb_set_error(-EINVAL,
				    "invalid kernel %" PRId64 ": use a multiple of %" PRId64
				    " below n_pad %" PRId64,
				    n0, kg, n_pad);
	if (offset)
		*offset = ((size_t)k0 * n_pad + (size_t)n0 * min64(k_slice, k_pad - k0)) *
			  rb_layout_in_esize(dtype);
	if (slice_k)
		*slice_k = min64(k_slice, k_pad - k0);
	return 0;
}
