/* The kernels of the emulated NPU's arithmetic (hw_gemm.c drives them, hw_gemm_kern.c
 * holds them): the blocking both share, a kernel's arguments, and the set of kernels
 * picked for this CPU (struct kern_ops). Private to sim/. */
#ifndef RB_SIM_HW_GEMM_KERN_H
#define RB_SIM_HW_GEMM_KERN_H

#include <stddef.h>
#include <stdint.h>

/* The 8 lanes of the accumulation order (hw_gemm.c). */
#define LANES   8
#define K_BLOCK 32 /* channels of a weight block (§b.3) */

/* KC: channels per pass, a multiple of K_BLOCK. ROWS × KC fp32 of A (96 KiB), KERNELS ×
 * KC of B (64 KiB) and the ROWS × KERNELS lane accumulators (192 KiB) sit in L2; one
 * NR-kernel strip of B (4 KiB) in L1. KERNELS is a multiple of both kernel groups.
 * (ROWS 96 measured a little faster than 48 on 128×2048×2048 and 512×2048×8192, whose
 * default plans give tasks of 32 pixels: there ROWS only sets the planes' stride.)
 *
 * Where an emulated run's time goes (x86-64 with AVX-512, 2 CPUs, the default plan of
 * 512×2048×8192, measured 2026-11-27): tasks of 32 pixels × 64 kernels are one item
 * each, so each core runs its tasks on one thread and the cores run at once (npu.c).
 * The 6×4 AVX-512 kernel takes 70% of the CPU time; alone, with B's tile as laid out,
 * it does 105-110 GFLOP/s per CPU, 72% of the FMA peak (151), whether A is laid out by
 * planes or in blocks of 6 rows (126-134 with A and B in L1; B's tile strip by strip
 * measured no faster in a run). Converting A takes 9% of the profile: a task converts
 * its 32 rows, so A is converted once per 64 kernels. Skipping it (wrong results) made
 * runs 18% faster, but neither a cache of the converted rows, used in place or copied
 * into the scratch, nor prefetching the next pass's rows measured faster than
 * converting. KC 512 (half the accumulator loads and stores) measured the same within
 * 2%. */
enum {
	KC = 256,
	ROWS = 96,
	KERNELS = 64,
	MR_MAX = 3,
	NR_MAX = 4,
};

/* Floats from one plane of A to the next in the scratch (a constant: the kernels
 * address A with immediate offsets). */
#define A_PLANE (ROWS * LANES)

struct kargs {
	const float *a;   /* row 0 of the kernel's rows, plane 0 */
	const float *b;   /* kernel 0 of the kernel's kernels, block 0 */
	const uint8_t *w; /* the same in the weights themselves (direct kernels) */
	int64_t w_block;  /* bytes from one 32-channel block of w to the next */
	void *acc;        /* lanes of (row 0, kernel 0): fp32, or int32 for int8 */
	int64_t steps;    /* planes of 8 channels */
	int64_t b_block;  /* floats from one 32-channel block of B to the next */
	int64_t acc_row;  /* 4-byte lanes from one row of acc to the next */
};

typedef void (*kern_fn)(const struct kargs *k, int mr, int nr, int ints);

/* The sums of n output elements from their lanes (fp32, or int32 if ints), as bits. */
typedef void (*reduce_fn)(uint32_t *dst, const float *lanes, int64_t n, int ints);

/* Blocks [0, blocks) of one kernel group of the weights to fp32 in the pairs layout. */
typedef void (*pairs_fn)(float *dst, const uint8_t *src, int64_t kg, int64_t blocks);

struct kern_ops {
	const char *name;
	kern_fn fn;
	int mr, nr; /* nr divides every kernel group (16, 32) */
	/* int8 and fp16 (exact) -> fp32, n a multiple of 8 */
	void (*i8_to_f32)(float *dst, const uint8_t *src, size_t n);
	void (*f16_to_f32)(float *dst, const uint8_t *src, size_t n);
	void (*f16_planes)(float *dst, const uint8_t *const *surf, size_t off, int64_t planes,
			   size_t n);
	/* Kernels that convert B from the weights in registers, for items of at most dmr
	 * rows, where a converted tile of B would be used once; NULL if none. They take
	 * dmr × dnr tiles. */
	kern_fn direct_f16, direct_i8;
	int dmr, dnr;
	/* fn reads B's tile in the pairs layout made by these (NULL: the weights' own
	 * order of blocks) */
	pairs_fn pairs_f16, pairs_i8;
	reduce_fn reduce;
};

/* The kernels for this CPU, or the family rb_sim_gemm_force_impl chose. */
struct kern_ops rb_sim_gemm_kernels(void);

#endif
