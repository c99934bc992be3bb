/* Data layouts of the RK3588 NPU matmul: packing A and B into the layouts the NPU
 * reads, unpacking the C it writes (npu-facts.md §b), and the layouts of the rknn
 * matmul API (perf-anchors.md §1.4).
 *
 * Notation: A is M×K, B is K×N, C is M×N, all row-major on the host. Indices below are
 * in elements of the buffer's type, 0-based, "/" is integer division. bpe is the byte
 * size of an element: 2 for fp16 (handled as uint16_t bits, never converted), 1 for
 * int8; 4 for fp32/int32 output, 2 for fp16 output.
 *
 * Cubes (§b.1, §b.2, §b.4). Features and outputs are NC1HWC2 cubes with W = 1 and
 * H = rows, made of 16-byte atoms: C2 = 16 / bpe channels per atom (fp16 8, int8 16,
 * fp32/int32 4). Row h, channel c of a cube of H rows lives at
 *     (c / C2)·(H·C2) + h·C2 + c % C2
 * so one channel group is a "surface" of H atoms.
 *
 * A, the feature cube (§b.2, b.5). H = M, channels = K zero-padded to k_pad, a
 * multiple of 32 that the caller picks (>= K):
 *     index(m, k) = (k / C2)·(M·C2) + m·C2 + k % C2,   C2 = 8 fp16 / 16 int8
 * Size: k_pad·M·bpe bytes.
 *
 * B, the weights (§b.3, b.5). Kernel n holds column n of B. Blocks of KG kernels × 32
 * channels, KG = 16 for fp16, 32 for int8; K is zero-padded to k_pad (multiple of 32)
 * and N to n_pad (multiple of KG):
 *     index(n, k) = (n / KG)·(KG·k_pad) + (k / 32)·(KG·32) + (n % KG)·32 + k % 32
 * i.e. the array [n_pad/KG][k_pad/32][KG][32]. Size: k_pad·n_pad·bpe bytes. Kernel
 * group n0 (a multiple of KG) starts at byte n0·k_pad·bpe, so N-splitting is a base
 * address change.
 * K-split plans need each K range contiguous per kernel group (§b.3 "Sub-ranges"),
 * so B can be packed in K slices of k_slice channels (a multiple of 32): slice s holds
 * channels [s·k_slice, s·k_slice + ks) with ks = min(k_slice, k_pad - s·k_slice) (only
 * the last slice can be shorter), is packed as its own [n_pad/KG][ks/32][KG][32]
 * array with k_pad replaced by ks and k by k - s·k_slice, and starts at byte
 *     s·n_pad·k_slice·bpe
 * Kernel n0 of slice s is at s·n_pad·k_slice·bpe + n0·ks·bpe (rb_layout_b_locate).
 * The sliced buffer has the same size as the unsliced one, and k_slice >= k_pad gives
 * the unsliced layout.
 *
 * C, the DPU output cube (§b.4). H = Mc, the rows of the cube (M, or the rows of one
 * task's own cube), C2 = 4 for fp32/int32 and 8 for fp16:
 *     index(m, n) = (n / C2)·(Mc·C2) + m·C2 + n % C2
 * Size: ceil(N / C2)·Mc·16 bytes.
 *
 * rknn matmul API native layouts (perf-anchors §1.4, RK3588 rows), all without padding
 * (the API needs K % 32 == 0, N % 16 == 0 for fp16 and N % 32 == 0 for int8, §1.5):
 *     A fp16 (K/8, M, 8), A int8 (K/16, M, 16)        = the A cube with k_pad = K
 *     B fp16 (N/16, K/32, 16, 32), int8 (N/32, K/32, 32, 32)
 *                                                  = the B layout with k_pad = K, n_pad = N
 *     C fp32/int32 (N/4, M, 4), fp16 and int16 (N/8, M, 8)   = the C cube with Mc = M
 * On RK3588 a B with K > 8192 is split into ceil(K/8192) segments "each laid out as
 * its own native block" (§1.4), which is the K-sliced B with k_slice = 8192.
 * Ambiguities in §1.4, resolved as stated here:
 *  - segments are taken to be consecutive in K order, each (N/KG, Ks/32, KG, 32) with
 *    its own Ks, for int8 as well as fp16 (the doc does not say per dtype);
 *  - the doc's example "K=20488 → 8192+8192+4096" does not add up (20480) and 20488 is
 *    not a multiple of 32; we require K % 32 == 0 and give the last segment the
 *    remaining K - 2·8192 channels;
 *  - int4 layouts are not implemented.
 *
 * Threads: `threads` <= 0 means one per online CPU; small jobs run on the calling
 * thread. Results do not depend on the number of threads. Buffers must not overlap.
 * On x86-64 the B pack writes whole blocks with non-temporal stores when dst is 16-byte
 * aligned, so the packed weights are not left in the CPU caches; with AVX-512, fp16
 * weights are written as whole 64-byte lines, streamed when dst is 64-byte aligned.
 *
 * Errors: functions return 0 or -EINVAL (bad dtype, size, padding or range; NULL
 * buffer) with a message in rb_last_error(); nothing is printed. A failing call writes
 * nothing. The *_bytes helpers return 0 for invalid arguments or sizes that overflow. */
#ifndef RB_NUMERIC_LAYOUT_H
#define RB_NUMERIC_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "rknn_bench/shape.h"

#define RB_LAYOUT_ATOM_BYTES     16   /* §b.1: one pixel of a cube channel group */
#define RB_LAYOUT_K_ALIGN        32   /* §b.3, §b.5: channel block of the weights */
#define RB_LAYOUT_RKNN_K_SEGMENT 8192 /* perf-anchors §1.4: RK3588 native B segment */

/* Channels per atom for elements of `esize` bytes (1, 2 or 4): 16 / esize, else 0. */
int64_t rb_layout_c2(size_t esize);
/* Kernels per weight block (the kernel group): 16 (fp16) or 32 (int8), 0 for an unknown
 * dtype. The one answer to "16 or 32" for the planner, encoder, emulator and layouts:
 * it lives here, on the lowest floor, because the layouts need it too. */
int64_t rb_layout_kernel_group(enum rb_dtype dtype);
/* x rounded up to a multiple of align (align > 0). */
int64_t rb_layout_round_up(int64_t x, int64_t align);

/* Which kernels the layouts use: "avx512" (x86-64 with AVX-512 F and BW, chosen at run
 * time; the fp16 pack of B is the one layout with AVX-512 kernels), else the base ISA's:
 * "sse2" (x86-64), "neon" (aarch64) or "scalar". */
const char *rb_layout_impl(void);
/* For tests and benchmarks: makes the layouts use the family `name` ("avx512" or the base
 * one rb_layout_impl() names without it); NULL restores the automatic choice. Returns 0,
 * -ENOTSUP when this CPU or build lacks the family, or -EINVAL for an unknown name.
 * Every family gives the same bytes. */
int rb_layout_force_impl(const char *name);

/* --- A: row-major M×K -> feature cube ------------------------------------------- */

size_t rb_layout_a_bytes(enum rb_dtype dtype, int64_t m, int64_t k_pad);
/* a: m×k row-major; dst: rb_layout_a_bytes(dtype, m, k_pad) bytes, padding written 0. */
int rb_layout_pack_a(void *dst, const void *a, enum rb_dtype dtype, int64_t m, int64_t k,
		     int64_t k_pad, int threads);
/* The inverse: reads channels [0, k) of the cube into a row-major M×K matrix. */
int rb_layout_unpack_a(void *a, const void *src, enum rb_dtype dtype, int64_t m, int64_t k,
		       int64_t k_pad, int threads);

/* --- B: row-major K×N -> weight blocks -------------------------------------------- */

size_t rb_layout_b_bytes(enum rb_dtype dtype, int64_t k_pad, int64_t n_pad);
/* b: k×n row-major; dst: rb_layout_b_bytes(dtype, k_pad, n_pad) bytes, padding written
 * 0. The _sliced variant packs K slices of k_slice channels (see above). */
int rb_layout_pack_b(void *dst, const void *b, enum rb_dtype dtype, int64_t k, int64_t n,
		     int64_t k_pad, int64_t n_pad, int threads);
int rb_layout_pack_b_sliced(void *dst, const void *b, enum rb_dtype dtype, int64_t k, int64_t n,
			    int64_t k_pad, int64_t n_pad, int64_t k_slice, int threads);
/* The inverse of rb_layout_pack_b_sliced (k_slice >= k_pad: of rb_layout_pack_b). */
int rb_layout_unpack_b_sliced(void *b, const void *src, enum rb_dtype dtype, int64_t k, int64_t n,
			      int64_t k_pad, int64_t n_pad, int64_t k_slice, int threads);
/* Where a task on K slice `slice` and kernels starting at n0 (a multiple of KG, < n_pad)
 * finds its weights: *offset = byte offset in the sliced buffer, *slice_k = channels
 * of that slice (its ks). Either output may be NULL. */
int rb_layout_b_locate(enum rb_dtype dtype, int64_t k_pad, int64_t n_pad, int64_t k_slice,
		       int64_t slice, int64_t n0, size_t *offset, int64_t *slice_k);

/* --- C: output cube -> row-major M×N ------------------------------------------------ */

/* Which part of a row-major C a cube fills. The cube holds C rows [cube_m0,
 * cube_m0 + cube_rows) and columns starting at n0 (its channel 0 is column n0; for a
 * task writing columns [n0, n1) of one big cube, pass the big cube's base plus
 * (n0 / C2)·Mc·16 bytes with n0 a multiple of C2). Rows [m0, m1) and columns [n0, n1)
 * of C are written; they must lie inside the cube's rows, and n1 <= ldc. Typical uses:
 *   whole C:            m0 = 0, m1 = M, n0 = 0, n1 = N, cube_m0 = 0, cube_rows = M
 *   a core's own tile:  cube_m0 = m0, cube_rows = m1 - m0
 *   rows of a big cube: cube_m0 = 0, cube_rows = M (the cube strides use the full M) */
struct rb_layout_c_tile {
	int64_t m0, m1;
	int64_t n0, n1;
	int64_t cube_m0;
	int64_t cube_rows;
};

/* The tile covering all of an m×n C from one m-row cube. */
void rb_layout_c_tile_full(struct rb_layout_c_tile *tile, int64_t m, int64_t n);
/* Bytes of a cube of `rows` rows and `channels` channels of `esize`-byte elements. */
size_t rb_layout_c_bytes(size_t esize, int64_t rows, int64_t channels);

/* Copies (esize 4: fp32/int32, 2: fp16) the tile from the cube into C, whose rows are
 * ldc elements apart (ldc = N of the full C). Nothing outside the tile is written. The
 * cube is read up to rb_layout_c_bytes(esize, cube_rows, n1 - n0). An empty tile is a
 * no-op. */
int rb_layout_unpack_c(void *c, int64_t ldc, const void *cube, size_t esize,
		       const struct rb_layout_c_tile *tile, int threads);
/* fp16 cube -> float C (conversion by rb_fp16_to_f32_array). */
int rb_layout_unpack_c_f16_f32(float *c, int64_t ldc, const uint16_t *cube,
			       const struct rb_layout_c_tile *tile, int threads);
/* C += cube over the tile, for host-side accumulation of K slices. int32 sums wrap
 * modulo 2^32 like the NPU's accumulators would rather than being undefined. */
int rb_layout_accumulate_c_f32(float *c, int64_t ldc, const float *cube,
			       const struct rb_layout_c_tile *tile, int threads);
int rb_layout_accumulate_c_i32(int32_t *c, int64_t ldc, const int32_t *cube,
			       const struct rb_layout_c_tile *tile, int threads);

/* --- rknn matmul API native layouts (perf-anchors §1.4) ----------------------------- */

int rb_layout_rknn_pack_a(void *dst, const void *a, enum rb_dtype dtype, int64_t m, int64_t k,
			  int threads);
int rb_layout_rknn_unpack_a(void *a, const void *src, enum rb_dtype dtype, int64_t m, int64_t k,
			    int threads);
int rb_layout_rknn_pack_b(void *dst, const void *b, enum rb_dtype dtype, int64_t k, int64_t n,
			  int threads);
int rb_layout_rknn_unpack_b(void *b, const void *src, enum rb_dtype dtype, int64_t k, int64_t n,
			    int threads);
/* C: esize 4 (fp32, int32) or 2 (fp16, int16); n must be a multiple of C2. */
int rb_layout_rknn_pack_c(void *dst, const void *c, size_t esize, int64_t m, int64_t n,
			  int threads);
int rb_layout_rknn_unpack_c(void *c, const void *src, size_t esize, int64_t m, int64_t n,
			    int threads);

#endif
