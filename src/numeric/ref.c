/* CPU reference GEMM (see ref.h).
 *
 * The blocked path follows the usual three-level scheme: a KC×NC panel of B and an
 * MC×KC block of A are packed (converted to fp32, for int8 too) into buffers laid
 * out in the order the MR×NR micro-kernel reads them, so the kernel
 * streams both with unit stride from L1/L2. The generic micro-kernels use GCC vector
 * extensions; on x86 an AVX2/FMA build of the same source, or AVX-512 kernels with their
 * own blocking (fp32 FMA for fp16, VNNI for int8, packed as bytes), are picked at run
 * time, so no -march flag is needed. Each thread owns a rectangle of C and its own
 * buffers: no locks, no barriers.
 *
 * M = 1 is a matrix-vector product limited by reading B once; it gets its own path
 * that converts B's rows on the fly and gives each thread a slice of N.
 *
 * int8: sums are accumulated in 32-bit unsigned arithmetic, i.e. modulo 2^32 like a
 * hardware int32 accumulator, and without C's signed-overflow undefined behaviour.
 * |a·b| <= 2^14, so the result is the exact sum for K <= 2^17 = 131072; beyond that
 * it wraps as int32 hardware does. (The generic blocked kernel computes KC-deep partial
 * sums in fp32, exactly: see kernel_i32_body; the VNNI one adds in int32 lanes modulo
 * 2^32: see kernel_i8_vnni.) */
#include "numeric/ref.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fp16.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define RB_REF_X86 1
#elif defined(__aarch64__)
#include <arm_neon.h>
#define RB_REF_NEON 1
#endif

/* Vector width: 32 bytes on x86 (one AVX register; the portable x86 build splits it
 * into two SSE registers), 16 bytes on aarch64 where GCC handles wider generic vectors
 * badly (it spills them to the stack). */
#if defined(RB_REF_NEON)
#define VBYTES 16
#else
#define VBYTES 32
#endif
#define VLEN (VBYTES / 4)

typedef float vf __attribute__((vector_size(VBYTES)));
typedef uint32_t vu __attribute__((vector_size(VBYTES)));
typedef int32_t vi __attribute__((vector_size(VBYTES)));

/* Every lane s, as an initializer: GCC makes that one broadcast, while `vec + s` would
 * add a zero vector first (x + 0 is not x when x is -0). */
/* clang-format off */
#if VLEN == 8
#define SPLAT(s) {(s), (s), (s), (s), (s), (s), (s), (s)}
#else
#define SPLAT(s) {(s), (s), (s), (s)}
#endif
/* clang-format on */

/* Blocking. The MR×NR accumulators take 12 of the 16 AVX registers, or 21 of the 32
 * NEON ones (with 6×16 or 8×12 there, GCC spills accumulators in the loop). A KC×NR
 * strip of B (12-16 KiB) sits in L1, the MC×KC block of A (96-112 KiB) in L2. */
enum {
#if defined(RB_REF_NEON)
	MR = 7,
	NR = 12,
#else
	MR = 6,
	NR = 16,
#endif
	NV = NR / VLEN,
	KC = 256,
	MC = 16 * MR,
	NC = 2048,
};

#define RB_REF_MAX_THREADS 256
/* Below this many multiply-adds per thread, starting a thread costs more than it saves. */
#define MIN_MACS_PER_THREAD (INT64_C(1) << 15)
/* Columns handled per pass of the M = 1 path. Each row of B is read as one run of
 * 2 * GEMV_CHUNK bytes (64 KiB for fp16): long enough for the hardware prefetcher to
 * stream it, while the chunk's fp32 sums (128 KiB) stay in L2. 2048 columns (sums in L1,
 * 4 KiB runs of B) was about half as fast on a Zen 4 VM (issue 15's measurement; bench/ref.c
 * times GEMV against memcpy). The chunk only
 * cuts columns: each sum still adds its K products in order, so results do not change. */
#define GEMV_CHUNK 32768
/* GEMV slices are multiples of this many columns, so threads never share a line of B. */
#define GEMV_ALIGN 64

typedef void (*kernel_fn)(int64_t kc, const void *a, const void *b, void *c, int64_t ldc, int mr,
			  int nr, int accumulate);

/* Each of these computes c[0..w) = sum_p a[p] · B[p][0..w) for one column chunk of B
 * (row stride ldb), in the order p = 0, 1, ... for every column. */
typedef void (*gemv_fn)(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			float *scratch);

struct gemm_ops;
typedef void (*pack_fn)(const struct gemm_ops *o, void *dst, const void *src, int64_t ld,
			int64_t rows, int64_t cols, float *row);

/* One set of kernels with the blocking and packed layout they read. A packed strip of
 * A holds mr rows, one of B nr columns; K is padded to a multiple of kgrain, each packed
 * element takes pel bytes, and an A strip ends with a_tail bytes per row. */
struct gemm_ops {
	size_t in_size; /* bytes of one element of A and B */
	int mr, nr, kc, mc, nc;
	int kgrain, pel, a_tail;
	/* Loop order of the macro-kernel. 0: a strip of B stays in L1 while the kernel sweeps
	 * the block of A; 1: a strip of A stays in L1 while it sweeps the panel of B (L2). */
	int a_in_l1;
	pack_fn pack_a; /* rows = mc, cols = kc */
	pack_fn pack_b; /* rows = kc, cols = nc */
	kernel_fn kernel;
	gemv_fn gemv;
};

/* Kernel families, best last. On aarch64 only IMPL_PORTABLE and IMPL_NEON apply. */
enum impl { IMPL_AUTO, IMPL_PORTABLE, IMPL_AVX2, IMPL_AVX512, IMPL_NEON };

static atomic_int forced_impl; /* IMPL_AUTO: the best this CPU has */

static enum impl best_impl(void)
{
#if defined(RB_REF_X86)
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma"))
		return IMPL_AVX512;
	if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
		return IMPL_AVX2;
	return IMPL_PORTABLE;
#elif defined(RB_REF_NEON)
	return IMPL_NEON;
#else
	return IMPL_PORTABLE;
#endif
}

static enum impl use_impl(void)
{
	int forced = atomic_load_explicit(&forced_impl, memory_order_relaxed);

	return forced != IMPL_AUTO ? (enum impl)forced : best_impl();
}

/* The int8 AVX-512 kernel needs VNNI on top; without it int8 uses the AVX2 kernels. */
static int use_vnni(void)
{
#if defined(RB_REF_X86)
	return use_impl() == IMPL_AVX512 && __builtin_cpu_supports("avx512vnni");
#else
	return 0;
#endif
}

static int use_avx2(void)
{
	return use_impl() == IMPL_AVX2 || use_impl() == IMPL_AVX512;
}

static const char *const impl_names[] = {[IMPL_PORTABLE] = "portable",
					 [IMPL_AVX2] = "avx2+fma",
					 [IMPL_AVX512] = "avx512",
					 [IMPL_NEON] = "neon"};

const char *rb_ref_impl(void)
{
	if (use_vnni())
		return "avx512+vnni";
	return impl_names[use_impl()];
}

void rb_ref_force_portable(int on)
{
	atomic_store(&forced_impl, on ? IMPL_PORTABLE : IMPL_AUTO);
}

int rb_ref_force_impl(const char *name)
{
	if (!name) {
		atomic_store(&forced_impl, IMPL_AUTO);
		return 0;
	}
	for (int i = IMPL_PORTABLE; i <= IMPL_NEON; i++) {
		if (strcmp(name, impl_names[i]) != 0)
			continue;
		/* A family this CPU lacks, or one that is not built here. */
		if (i != IMPL_PORTABLE && i != (int)best_impl() &&
		    !(i == IMPL_AVX2 && best_impl() == IMPL_AVX512))
			return -ENOTSUP;
		atomic_store(&forced_impl, i);
		return 0;
	}
	return -EINVAL;
}

int rb_ref_threads(int threads)
{
	long n = threads;

	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	if (n > RB_REF_MAX_THREADS)
		n = RB_REF_MAX_THREADS;
	return (int)n;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t div_up(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

/* ---- naive oracle and single elements ---------------------------------------- */

/* Every fp16 value as float, made once by the scalar conversion: the naive loop looks
 * its B elements up (one load instead of a branchy conversion per element; the same
 * values, so the same bits). */
static float naive_f16[1 << 16];
static pthread_once_t naive_f16_once = PTHREAD_ONCE_INIT;

static void naive_f16_init(void)
{
	for (uint32_t h = 0; h < 1u << 16; h++)
		naive_f16[h] = rb_fp16_to_f32((uint16_t)h);
}

void rb_ref_naive_f16(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t k,
		      int64_t n)
{
	pthread_once(&naive_f16_once, naive_f16_init);
	for (int64_t i = 0; i < m; i++) {
		float *ci = c + i * n;

		for (int64_t j = 0; j < n; j++)
			ci[j] = 0.0f;
		for (int64_t p = 0; p < k; p++) {
			float av = naive_f16[a[i * k + p]];
			const uint16_t *bp = b + p * n;

			for (int64_t j = 0; j < n; j++)
				ci[j] += av * naive_f16[bp[j]];
		}
	}
}

void rb_ref_naive_i8(const int8_t *a, const int8_t *b, int32_t *c, int64_t m, int64_t k, int64_t n)
{
	for (int64_t i = 0; i < m; i++) {
		int32_t *ci = c + i * n;

		for (int64_t j = 0; j < n; j++)
			ci[j] = 0;
		for (int64_t p = 0; p < k; p++) {
			uint32_t av = (uint32_t)a[i * k + p];
			const int8_t *bp = b + p * n;

			for (int64_t j = 0; j < n; j++)
				ci[j] = (int32_t)((uint32_t)ci[j] + av * (uint32_t)bp[j]);
		}
	}
}

/* Same operations in the same order as rb_ref_naive_f16, so the same bits. */
float rb_ref_dot_f16(const uint16_t *a, const uint16_t *b, int64_t k, int64_t n, int64_t i,
		     int64_t j)
{
	float acc = 0.0f;

	for (int64_t p = 0; p < k; p++)
		acc += rb_fp16_to_f32(a[i * k + p]) * rb_fp16_to_f32(b[p * n + j]);
	return acc;
}

int32_t rb_ref_dot_i8(const int8_t *a, const int8_t *b, int64_t k, int64_t n, int64_t i, int64_t j)
{
	uint32_t acc = 0;

	for (int64_t p = 0; p < k; p++)
		acc += (uint32_t)a[i * k + p] * (uint32_t)b[p * n + j];
	return (int32_t)acc;
}

/* Bytes of one packed strip of A or B, kc deep. */
static size_t strip_a_bytes(const struct gemm_ops *o, int64_t kc)
{
	return (size_t)(o->mr * (div_up(kc, o->kgrain) * o->kgrain * o->pel + o->a_tail));
}

static size_t strip_b_bytes(const struct gemm_ops *o, int64_t kc)
{
	return (size_t)(o->nr * div_up(kc, o->kgrain) * o->kgrain * o->pel);
}

/* ---- packing ------------------------------------------------------------------ */

/* Packed A: strips of MR rows; within a strip, column p holds its MR values together.
 * Packed B: strips of NR columns; within a strip, row p holds its NR values together.
 * Both are zero-padded to whole strips, so kernels always compute full tiles. The
 * fp16 variants convert a whole row of the source first, with the F16C/NEON array
 * converter, then scatter it. */
static void pack_a_f16(const struct gemm_ops *o, void *dst, const void *src, int64_t lda,
		       int64_t mc, int64_t kc, float *row)
{
	float *out = dst;
	int64_t mr = o->mr, rows = div_up(mc, mr) * mr;

	for (int64_t r = 0; r < rows; r++) {
		float *strip = out + (r / mr) * kc * mr + r % mr;

		if (r < mc)
			rb_fp16_to_f32_array(row, (const uint16_t *)src + r * lda, (size_t)kc);
		else
			memset(row, 0, (size_t)kc * sizeof(*row));
		for (int64_t p = 0; p < kc; p++)
			strip[p * mr] = row[p];
	}
}

/* int8 is packed as fp32 too: the int8 kernel runs on the FMA units (see there). */
static void pack_a_i8(const struct gemm_ops *o, void *dst, const void *src, int64_t lda, int64_t mc,
		      int64_t kc, float *row)
{
	float *out = dst;
	int64_t mr = o->mr, rows = div_up(mc, mr) * mr;

	(void)row;
	for (int64_t r = 0; r < rows; r++) {
		float *strip = out + (r / mr) * kc * mr + r % mr;
		const int8_t *in = (const int8_t *)src + r * lda;

		for (int64_t p = 0; p < kc; p++)
			strip[p * mr] = r < mc ? (float)in[p] : 0.0f;
	}
}

/* Row p of a packed B panel: whole strips are fixed-size copies the compiler inlines. */
static inline __attribute__((always_inline)) void
scatter_b_row_nr(float *dst, const float *row, int64_t kc, int64_t p, int64_t nc, int64_t nr)
{
	int64_t j = 0;

	for (; j + nr <= nc; j += nr)
		memcpy(dst + (j / nr) * kc * nr + p * nr, row + j, (size_t)nr * sizeof(*row));
	if (j < nc) {
		float *at = dst + (j / nr) * kc * nr + p * nr;

		memcpy(at, row + j, (size_t)(nc - j) * sizeof(*row));
		memset(at + (nc - j), 0, (size_t)(nr - (nc - j)) * sizeof(*row));
	}
}

/* Specialised on the strip widths in use, so the strip copies stay inlined. */
static void scatter_b_row(float *dst, const float *row, int64_t kc, int64_t p, int64_t nc,
			  int64_t nr)
{
	if (nr == NR)
		scatter_b_row_nr(dst, row, kc, p, nc, NR);
	else if (nr == 32)
		scatter_b_row_nr(dst, row, kc, p, nc, 32);
	else
		scatter_b_row_nr(dst, row, kc, p, nc, nr);
}

static void pack_b_f16(const struct gemm_ops *o, void *dst, const void *src, int64_t ldb,
		       int64_t kc, int64_t nc, float *row)
{
	for (int64_t p = 0; p < kc; p++) {
		rb_fp16_to_f32_array(row, (const uint16_t *)src + p * ldb, (size_t)nc);
		scatter_b_row(dst, row, kc, p, nc, o->nr);
	}
}

static void pack_b_i8(const struct gemm_ops *o, void *dst, const void *src, int64_t ldb, int64_t kc,
		      int64_t nc, float *row)
{
	for (int64_t p = 0; p < kc; p++) {
		const int8_t *in = (const int8_t *)src + p * ldb;

		for (int64_t j = 0; j < nc; j++)
			row[j] = (float)in[j];
		scatter_b_row(dst, row, kc, p, nc, o->nr);
	}
}

/* ---- micro-kernels ------------------------------------------------------------- */

/* GCC turns off FMA contraction in ISO C mode (-std=c11); the kernels want it, as
 * `acc += a * b` is meant as a fused multiply-add. clang contracts by default. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC push_options
#pragma GCC optimize("fp-contract=fast")
#endif

/* Writes (or adds, when `accumulate`) the mr×nr valid part of a tile held as MR rows
 * of NR 4-byte lanes. */
static inline __attribute__((always_inline)) void
store_tile_f32(float *c, int64_t ldc, vf acc[MR][NV], int mr, int nr, int accumulate)
{
	if (mr == MR && nr == NR) {
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++) {
				vf cv = acc[r][v];
				float *at = c + r * ldc + v * VLEN;

				if (accumulate) {
					vf old;

					memcpy(&old, at, sizeof(old));
					cv += old;
				}
				memcpy(at, &cv, sizeof(cv));
			}
		}
		return;
	}
	float tile[MR][NR];

#pragma GCC unroll 8
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			memcpy(&tile[r][v * VLEN], &acc[r][v], sizeof(acc[r][v]));
	for (int r = 0; r < mr; r++)
		for (int j = 0; j < nr; j++)
			c[r * ldc + j] = accumulate ? c[r * ldc + j] + tile[r][j] : tile[r][j];
}

/* acc = the MR×NR product of a packed strip of A and one of B, kc deep. */
static inline __attribute__((always_inline)) void tile_f32(int64_t kc, const float *restrict a,
							   const float *restrict b, vf acc[MR][NV])
{
	memset(acc, 0, sizeof(vf) * MR * NV);
	for (int64_t p = 0; p < kc; p++, a += MR, b += NR) {
		vf bv[NV];

#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			memcpy(&bv[v], b + v * VLEN, sizeof(bv[v]));
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
			vf av = SPLAT(a[r]);

#pragma GCC unroll 4
			for (int v = 0; v < NV; v++)
				acc[r][v] += av * bv[v];
		}
	}
}

static inline __attribute__((always_inline)) void kernel_f32_body(int64_t kc, const float *a,
								  const float *b, float *c,
								  int64_t ldc, int mr, int nr,
								  int accumulate)
{
	vf acc[MR][NV];

	tile_f32(kc, a, b, acc);
	store_tile_f32(c, ldc, acc, mr, nr, accumulate);
}

static inline __attribute__((always_inline)) void
store_tile_i32(int32_t *c, int64_t ldc, vu acc[MR][NV], int mr, int nr, int accumulate)
{
	if (mr == MR && nr == NR) {
#pragma GCC unroll 8
		for (int r = 0; r < MR; r++) {
#pragma GCC unroll 4
			for (int v = 0; v < NV; v++) {
				vu cv = acc[r][v];
				int32_t *at = c + r * ldc + v * VLEN;

				if (accumulate) {
					vu old;

					memcpy(&old, at, sizeof(old));
					cv += old;
				}
				memcpy(at, &cv, sizeof(cv));
			}
		}
		return;
	}
	uint32_t tile[MR][NR];

#pragma GCC unroll 8
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			memcpy(&tile[r][v * VLEN], &acc[r][v], sizeof(acc[r][v]));
	for (int r = 0; r < mr; r++)
		for (int j = 0; j < nr; j++)
			c[r * ldc + j] =
			    (int32_t)(accumulate ? (uint32_t)c[r * ldc + j] + tile[r][j]
						 : tile[r][j]);
}

/* int8 on the fp32 FMA units, which have twice the throughput of int32 multiply-adds on
 * the Cortex-A76 and are no slower on x86: every product is an integer of magnitude
 * <= 2^14, so every partial sum of a KC-deep block is an integer below 2^22, which fp32
 * holds exactly whatever the rounding or fusing. The block's exact sums are converted
 * to int32 and added to C in uint32 arithmetic (wrapping, see top). */
_Static_assert(KC * 128 * 128 <= (1 << 24), "int8 blocks must sum exactly in fp32");

static inline __attribute__((always_inline)) void kernel_i32_body(int64_t kc, const float *a,
								  const float *b, int32_t *c,
								  int64_t ldc, int mr, int nr,
								  int accumulate)
{
	vf acc[MR][NV];
	vu iacc[MR][NV];

	tile_f32(kc, a, b, acc);
#pragma GCC unroll 8
	for (int r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (int v = 0; v < NV; v++)
			iacc[r][v] = (vu) __builtin_convertvector(acc[r][v], vi);
	store_tile_i32(c, ldc, iacc, mr, nr, accumulate);
}

static void kernel_f32_portable(int64_t kc, const void *a, const void *b, void *c, int64_t ldc,
				int mr, int nr, int accumulate)
{
	kernel_f32_body(kc, a, b, c, ldc, mr, nr, accumulate);
}

static void kernel_i32_portable(int64_t kc, const void *a, const void *b, void *c, int64_t ldc,
				int mr, int nr, int accumulate)
{
	kernel_i32_body(kc, a, b, c, ldc, mr, nr, accumulate);
}

#if defined(RB_REF_X86)
__attribute__((target("avx2,fma"))) static void kernel_f32_avx2(int64_t kc, const void *a,
								const void *b, void *c, int64_t ldc,
								int mr, int nr, int accumulate)
{
	kernel_f32_body(kc, a, b, c, ldc, mr, nr, accumulate);
}

__attribute__((target("avx2,fma"))) static void kernel_i32_avx2(int64_t kc, const void *a,
								const void *b, void *c, int64_t ldc,
								int mr, int nr, int accumulate)
{
	kernel_i32_body(kc, a, b, c, ldc, mr, nr, accumulate);
}
#endif

/* ---- M = 1: stream B once ---------------------------------------------------------- */

static inline __attribute__((always_inline)) void axpy_f32_body(float *restrict acc, float s,
								const float *restrict x, int64_t w)
{
	vf sv = SPLAT(s);
	int64_t j = 0;

	for (; j + VLEN <= w; j += VLEN) {
		vf av, xv;

		memcpy(&av, acc + j, sizeof(av));
		memcpy(&xv, x + j, sizeof(xv));
		av += sv * xv;
		memcpy(acc + j, &av, sizeof(av));
	}
	for (; j < w; j++)
		acc[j] += s * x[j];
}

/* Portable: convert one row of the chunk, then accumulate it. */
static void gemv_f16_portable(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w,
			      void *c, float *scratch)
{
	const float *af = a;
	float *acc = c;

	memset(acc, 0, (size_t)w * sizeof(*acc));
	for (int64_t p = 0; p < k; p++) {
		rb_fp16_to_f32_array(scratch, (const uint16_t *)b + p * ldb, (size_t)w);
		axpy_f32_body(acc, af[p], scratch, w);
	}
}

/* Portable int8: GCC lowers a widening __builtin_convertvector of int8 lanes to one
 * scalar extract per lane, so this is a plain loop; the x86 and aarch64 builds use
 * their widening instructions below. */
static void gemv_i8_portable(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w,
			     void *c, float *scratch)
{
	const int8_t *ai = a;
	uint32_t *acc = c;

	(void)scratch;
	memset(acc, 0, (size_t)w * sizeof(*acc));
	for (int64_t p = 0; p < k; p++) {
		const int8_t *x = (const int8_t *)b + p * ldb;
		uint32_t s = (uint32_t)ai[p];

		for (int64_t j = 0; j < w; j++)
			acc[j] += s * (uint32_t)x[j];
	}
}

typedef void (*rows4_i8_fn)(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb, int64_t w);
typedef void (*row_i8_fn)(int32_t *acc, int8_t a, const int8_t *b, int64_t w);

/* Folds groups of four rows of B into the sums with rows4, then the rest with row1. */
static void gemv_i8_rows(rows4_i8_fn rows4, row_i8_fn row1, const int8_t *a, const int8_t *b,
			 int64_t ldb, int64_t k, int64_t w, int32_t *c)
{
	int64_t p = 0;

	memset(c, 0, (size_t)w * sizeof(*c));
	for (; p + 4 <= k; p += 4)
		rows4(c, a + p, b + p * ldb, ldb, w);
	for (; p < k; p++)
		row1(c, a[p], b + p * ldb, w);
}

static void axpy_i8_tail(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb, int rows,
			 int64_t j0, int64_t w)
{
	for (int64_t j = j0; j < w; j++) {
		uint32_t s = (uint32_t)acc[j];

		for (int r = 0; r < rows; r++)
			s += (uint32_t)a[r] * (uint32_t)b[r * ldb + j];
		acc[j] = (int32_t)s;
	}
}

#if defined(RB_REF_X86)
/* |a·b| <= 2^14, so the low 32 bits of each product are the product; the adds wrap. */
__attribute__((target("avx2"))) static inline __m256i mla_i8_avx2(__m256i s, __m256i a,
								  const int8_t *b)
{
	__m256i x = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const void *)b));

	return _mm256_add_epi32(s, _mm256_mullo_epi32(a, x));
}

__attribute__((target("avx2"))) static void
gemv_i8_rows4_avx2(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb, int64_t w)
{
	__m256i a0 = _mm256_set1_epi32(a[0]), a1 = _mm256_set1_epi32(a[1]);
	__m256i a2 = _mm256_set1_epi32(a[2]), a3 = _mm256_set1_epi32(a[3]);
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		__m256i s = _mm256_loadu_si256((const void *)(acc + j));

		s = mla_i8_avx2(s, a0, b + j);
		s = mla_i8_avx2(s, a1, b + ldb + j);
		s = mla_i8_avx2(s, a2, b + 2 * ldb + j);
		s = mla_i8_avx2(s, a3, b + 3 * ldb + j);
		_mm256_storeu_si256((void *)(acc + j), s);
	}
	axpy_i8_tail(acc, a, b, ldb, 4, j, w);
}

__attribute__((target("avx2"))) static void gemv_i8_row_avx2(int32_t *acc, int8_t a,
							     const int8_t *b, int64_t w)
{
	__m256i av = _mm256_set1_epi32(a);
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		__m256i s = _mm256_loadu_si256((const void *)(acc + j));

		_mm256_storeu_si256((void *)(acc + j), mla_i8_avx2(s, av, b + j));
	}
	axpy_i8_tail(acc, &a, b, 0, 1, j, w);
}

static void gemv_i8_avx2(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			 float *scratch)
{
	(void)scratch;
	gemv_i8_rows(gemv_i8_rows4_avx2, gemv_i8_row_avx2, a, b, ldb, k, w, c);
}
#endif

#if defined(RB_REF_NEON)
/* Eight columns of one row: widen to int16, then widening multiply-add into int32. */
static inline void mla_i8_neon(int32x4_t *lo, int32x4_t *hi, int16_t a, const int8_t *b)
{
	int16x8_t x = vmovl_s8(vld1_s8(b));

	*lo = vmlal_n_s16(*lo, vget_low_s16(x), a);
	*hi = vmlal_high_n_s16(*hi, x, a);
}

static void gemv_i8_rows4_neon(int32_t *acc, const int8_t *a, const int8_t *b, int64_t ldb,
			       int64_t w)
{
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		int32x4_t lo = vld1q_s32(acc + j), hi = vld1q_s32(acc + j + 4);

		mla_i8_neon(&lo, &hi, a[0], b + j);
		mla_i8_neon(&lo, &hi, a[1], b + ldb + j);
		mla_i8_neon(&lo, &hi, a[2], b + 2 * ldb + j);
		mla_i8_neon(&lo, &hi, a[3], b + 3 * ldb + j);
		vst1q_s32(acc + j, lo);
		vst1q_s32(acc + j + 4, hi);
	}
	axpy_i8_tail(acc, a, b, ldb, 4, j, w);
}

static void gemv_i8_row_neon(int32_t *acc, int8_t a, const int8_t *b, int64_t w)
{
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		int32x4_t lo = vld1q_s32(acc + j), hi = vld1q_s32(acc + j + 4);

		mla_i8_neon(&lo, &hi, a, b + j);
		vst1q_s32(acc + j, lo);
		vst1q_s32(acc + j + 4, hi);
	}
	axpy_i8_tail(acc, &a, b, 0, 1, j, w);
}

static void gemv_i8_neon(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			 float *scratch)
{
	(void)scratch;
	gemv_i8_rows(gemv_i8_rows4_neon, gemv_i8_row_neon, a, b, ldb, k, w, c);
}
#endif

#if defined(RB_REF_X86)
/* One pass folds four rows of B into the sums: a quarter of the L1 traffic on acc. */
__attribute__((target("avx2,fma,f16c"))) static void
gemv_f16_rows4_f16c(float *restrict acc, const float *af, const uint16_t *b, int64_t ldb, int64_t w)
{
	__m256 a0 = _mm256_set1_ps(af[0]), a1 = _mm256_set1_ps(af[1]);
	__m256 a2 = _mm256_set1_ps(af[2]), a3 = _mm256_set1_ps(af[3]);
	const uint16_t *b0 = b, *b1 = b + ldb, *b2 = b + 2 * ldb, *b3 = b + 3 * ldb;
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		__m256 s = _mm256_loadu_ps(acc + j);

		s = _mm256_fmadd_ps(a0, _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b0 + j))),
				    s);
		s = _mm256_fmadd_ps(a1, _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b1 + j))),
				    s);
		s = _mm256_fmadd_ps(a2, _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b2 + j))),
				    s);
		s = _mm256_fmadd_ps(a3, _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b3 + j))),
				    s);
		_mm256_storeu_ps(acc + j, s);
	}
	for (; j < w; j++) {
		float s = acc[j];

		s = __builtin_fmaf(af[0], rb_fp16_to_f32(b0[j]), s);
		s = __builtin_fmaf(af[1], rb_fp16_to_f32(b1[j]), s);
		s = __builtin_fmaf(af[2], rb_fp16_to_f32(b2[j]), s);
		acc[j] = __builtin_fmaf(af[3], rb_fp16_to_f32(b3[j]), s);
	}
}

__attribute__((target("avx2,fma,f16c"))) static void gemv_f16_row_f16c(float *restrict acc, float s,
								       const uint16_t *b, int64_t w)
{
	__m256 sv = _mm256_set1_ps(s);
	int64_t j = 0;

	for (; j + 8 <= w; j += 8) {
		__m256 x = _mm256_cvtph_ps(_mm_loadu_si128((const void *)(b + j)));

		_mm256_storeu_ps(acc + j, _mm256_fmadd_ps(sv, x, _mm256_loadu_ps(acc + j)));
	}
	for (; j < w; j++)
		acc[j] = __builtin_fmaf(s, rb_fp16_to_f32(b[j]), acc[j]);
}

static void gemv_f16_f16c(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			  float *scratch)
{
	const float *af = a;
	const uint16_t *bh = b;
	float *acc = c;
	int64_t p = 0;

	(void)scratch;
	memset(acc, 0, (size_t)w * sizeof(*acc));
	for (; p + 4 <= k; p += 4)
		gemv_f16_rows4_f16c(acc, af + p, bh + p * ldb, ldb, w);
	for (; p < k; p++)
		gemv_f16_row_f16c(acc, af[p], bh + p * ldb, w);
}
#endif

#if defined(RB_REF_NEON)
static inline float32x4_t fma_row_neon(float32x4_t s, float32x4_t av, const uint16_t *b)
{
	return vfmaq_f32(s, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(b))), av);
}

static void gemv_f16_rows4_neon(float *restrict acc, const float *af, const uint16_t *b,
				int64_t ldb, int64_t w)
{
	float32x4_t a0 = vdupq_n_f32(af[0]), a1 = vdupq_n_f32(af[1]);
	float32x4_t a2 = vdupq_n_f32(af[2]), a3 = vdupq_n_f32(af[3]);
	const uint16_t *b0 = b, *b1 = b + ldb, *b2 = b + 2 * ldb, *b3 = b + 3 * ldb;
	int64_t j = 0;

	for (; j + 4 <= w; j += 4) {
		float32x4_t s = vld1q_f32(acc + j);

		s = fma_row_neon(s, a0, b0 + j);
		s = fma_row_neon(s, a1, b1 + j);
		s = fma_row_neon(s, a2, b2 + j);
		s = fma_row_neon(s, a3, b3 + j);
		vst1q_f32(acc + j, s);
	}
	for (; j < w; j++) {
		float s = acc[j];

		s = __builtin_fmaf(af[0], rb_fp16_to_f32(b0[j]), s);
		s = __builtin_fmaf(af[1], rb_fp16_to_f32(b1[j]), s);
		s = __builtin_fmaf(af[2], rb_fp16_to_f32(b2[j]), s);
		acc[j] = __builtin_fmaf(af[3], rb_fp16_to_f32(b3[j]), s);
	}
}

static void gemv_f16_row_neon(float *restrict acc, float s, const uint16_t *b, int64_t w)
{
	float32x4_t sv = vdupq_n_f32(s);
	int64_t j = 0;

	for (; j + 4 <= w; j += 4)
		vst1q_f32(acc + j, fma_row_neon(vld1q_f32(acc + j), sv, b + j));
	for (; j < w; j++)
		acc[j] = __builtin_fmaf(s, rb_fp16_to_f32(b[j]), acc[j]);
}

static void gemv_f16_neon(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w, void *c,
			  float *scratch)
{
	const float *af = a;
	const uint16_t *bh = b;
	float *acc = c;
	int64_t p = 0;

	(void)scratch;
	memset(acc, 0, (size_t)w * sizeof(*acc));
	for (; p + 4 <= k; p += 4)
		gemv_f16_rows4_neon(acc, af + p, bh + p * ldb, ldb, w);
	for (; p < k; p++)
		gemv_f16_row_neon(acc, af[p], bh + p * ldb, w);
}
#endif

#if defined(RB_REF_X86)
/* ---- AVX-512 ---------------------------------------------------------------------------
 *
 * MR×32 tiles: MR rows of two zmm registers hold C (12 rows for int8, 14 for fp32), two
 * more hold a k-step of the B strip, and each A value is broadcast from memory. Edges are
 * handled with lane masks when C is stored, so the kernels always run full tiles over the
 * zero-padded packed strips. */
enum { MR5 = 12, NR5 = 32 };
/* fp32 tiles are 14×32 (28 accumulators): 12×32, 8×48 and 6×64 were 3-10% slower on
 * the VM of issue 15 (two threads, 512x2048x8192). */
enum { MRF = 14, NVF = 2, NRF = 16 * NVF };

#define AVX512 "avx512f,avx512bw,avx512vl,avx2,fma,f16c"

/* Lanes of each 16-lane part of a row that hold one of the first nr columns. */
__attribute__((target(AVX512))) static inline void row_masks(int nr, __mmask16 *m, int parts)
{
	for (int h = 0; h < parts; h++) {
		int lanes = nr - 16 * h;

		m[h] = lanes >= 16 ? (__mmask16)0xffff
		       : lanes > 0 ? (__mmask16)((1u << lanes) - 1)
				   : (__mmask16)0;
	}
}

__attribute__((target(AVX512))) static void kernel_f32_avx512(int64_t kc, const void *a,
							      const void *b, void *c, int64_t ldc,
							      int mr, int nr, int accumulate)
{
	const float *pa = a, *pb = b;
	__m512 acc[MRF][NVF];
	__mmask16 m[NVF];

#pragma GCC unroll 16
	for (int r = 0; r < MRF; r++)
#pragma GCC unroll 4
		for (int h = 0; h < NVF; h++)
			acc[r][h] = _mm512_setzero_ps();
	for (int64_t p = 0; p < kc; p++, pa += MRF, pb += NRF) {
		__m512 bv[NVF];

#pragma GCC unroll 4
		for (int h = 0; h < NVF; h++)
			bv[h] = _mm512_loadu_ps(pb + 16 * h);
		/* B comes from L2: asking 8 steps ahead was 5-8% faster than the hardware
		 * prefetchers alone (16 ahead about the same; issue 15's VM). Past the end of
		 * the strip this touches the next one, which is read next anyway. */
		_mm_prefetch((const char *)(pb + 8 * NRF), _MM_HINT_T0);
		_mm_prefetch((const char *)(pb + 8 * NRF + 16), _MM_HINT_T0);
#pragma GCC unroll 16
		for (int r = 0; r < MRF; r++) {
			__m512 av = _mm512_set1_ps(pa[r]);

#pragma GCC unroll 4
			for (int h = 0; h < NVF; h++)
				acc[r][h] = _mm512_fmadd_ps(av, bv[h], acc[r][h]);
		}
	}
	row_masks(nr, m, NVF);
#pragma GCC unroll 16
	for (int r = 0; r < MRF; r++) {
		float *row = (float *)c + r * ldc;

		if (r >= mr)
			break;
#pragma GCC unroll 4
		for (int h = 0; h < NVF; h++) {
			__m512 v = acc[r][h];

			if (accumulate)
				v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(m[h], row + 16 * h));
			_mm512_mask_storeu_ps(row + 16 * h, m[h], v);
		}
	}
}

/* Packed B for kernel_f32_avx512: whole strips converted straight into place. */
__attribute__((target(AVX512))) static void pack_b_f16_avx512(const struct gemm_ops *o, void *dst,
							      const void *src, int64_t ldb,
							      int64_t kc, int64_t nc, float *row)
{
	float *out = dst;
	int64_t full = nc / NRF * NRF;

	for (int64_t p = 0; p < kc; p++) {
		const uint16_t *in = (const uint16_t *)src + p * ldb;

		for (int64_t j = 0; j < full; j += NRF) {
			float *at = out + (j / NRF) * kc * NRF + p * NRF;

#pragma GCC unroll 4
			for (int h = 0; h < NVF; h++)
				_mm512_storeu_ps(at + 16 * h, _mm512_cvtph_ps(_mm256_loadu_si256((
								  const void *)(in + j + 16 * h))));
		}
		if (full < nc) {
			rb_fp16_to_f32_array(row, in + full, (size_t)(nc - full));
			scatter_b_row(out + (full / NRF) * kc * NRF, row, kc, p, nc - full, o->nr);
		}
	}
}

/* GEMV on AVX-512: eight rows of B per pass over the sums (half the L2 traffic on them of
 * four), one cache line of each row per step, and each row asked for GEMV_PF columns
 * ahead. Every column still adds its products in the order p = 0, 1, ..., with fused
 * multiply-adds like gemv_f16_f16c, so both give the same bits. */
#define GEMV_PF 512

__attribute__((target(AVX512))) static void gemv_f16_rows8_avx512(float *restrict acc,
								  const float *af,
								  const uint16_t *b, int64_t ldb,
								  int64_t w)
{
	__m512 av[8];
	int64_t j = 0;

#pragma GCC unroll 8
	for (int r = 0; r < 8; r++)
		av[r] = _mm512_set1_ps(af[r]);
	for (; j + 32 <= w; j += 32) {
		__m512 s0 = _mm512_loadu_ps(acc + j), s1 = _mm512_loadu_ps(acc + j + 16);

#pragma GCC unroll 8
		for (int r = 0; r < 8; r++) {
			const uint16_t *row = b + r * ldb + j;

			_mm_prefetch((const char *)(row + GEMV_PF), _MM_HINT_T0);
			s0 = _mm512_fmadd_ps(
			    av[r], _mm512_cvtph_ps(_mm256_loadu_si256((const void *)row)), s0);
			s1 = _mm512_fmadd_ps(
			    av[r], _mm512_cvtph_ps(_mm256_loadu_si256((const void *)(row + 16))),
			    s1);
		}
		_mm512_storeu_ps(acc + j, s0);
		_mm512_storeu_ps(acc + j + 16, s1);
	}
	for (; j < w; j++) {
		float s = acc[j];

		for (int r = 0; r < 8; r++)
			s = __builtin_fmaf(af[r], rb_fp16_to_f32(b[r * ldb + j]), s);
		acc[j] = s;
	}
}

static void gemv_f16_avx512(const void *a, const void *b, int64_t ldb, int64_t k, int64_t w,
			    void *c, float *scratch)
{
	const float *af = a;
	const uint16_t *bh = b;
	float *acc = c;
	int64_t p = 0;

	(void)scratch;
	memset(acc, 0, (size_t)w * sizeof(*acc));
	for (; p + 8 <= k; p += 8)
		gemv_f16_rows8_avx512(acc, af + p, bh + p * ldb, ldb, w);
	for (; p + 4 <= k; p += 4)
		gemv_f16_rows4_f16c(acc, af + p, bh + p * ldb, ldb, w);
	for (; p < k; p++)
		gemv_f16_row_f16c(acc, af[p], bh + p * ldb, w);
}

/* int8 on VNNI: vpdpbusd multiplies unsigned bytes by signed bytes, four k at a time,
 * and adds the four products to an int32 lane without saturating (modulo 2^32, like the
 * other paths). B is packed as b + 128 (unsigned), so each sum over-counts
 * 128 · sum_p a[p]; the packed A strip ends with that amount negated per row (its
 * "tail"), which starts the accumulators. Packed A: per group of four k, MR5 int32 words
 * of four bytes of a row; packed B: per group, NR5 columns of four bytes. K is padded
 * with zero bytes of A, which cancel whatever B holds there. */
__attribute__((target(AVX512 ",avx512vnni"))) static void kernel_i8_vnni(int64_t kc, const void *a,
									 const void *b, void *c,
									 int64_t ldc, int mr,
									 int nr, int accumulate)
{
	int64_t groups = div_up(kc, 4);
	const int32_t *pa = a, *tail = pa + groups * MR5;
	const __m512i *pb = b;
	__m512i acc[MR5][2];
	__mmask16 m[2];

#pragma GCC unroll 12
	for (int r = 0; r < MR5; r++)
		acc[r][0] = acc[r][1] = _mm512_set1_epi32(tail[r]);
	for (int64_t g = 0; g < groups; g++, pa += MR5, pb += 2) {
		__m512i b0 = _mm512_loadu_si512(pb), b1 = _mm512_loadu_si512(pb + 1);

		/* As in kernel_f32_avx512: 8 groups ahead, about 6% faster. */
		_mm_prefetch((const char *)(pb + 16), _MM_HINT_T0);
		_mm_prefetch((const char *)(pb + 17), _MM_HINT_T0);

#pragma GCC unroll 12
		for (int r = 0; r < MR5; r++) {
			__m512i av = _mm512_set1_epi32(pa[r]);

			acc[r][0] = _mm512_dpbusd_epi32(acc[r][0], b0, av);
			acc[r][1] = _mm512_dpbusd_epi32(acc[r][1], b1, av);
		}
	}
	row_masks(nr, m, 2);
#pragma GCC unroll 12
	for (int r = 0; r < MR5; r++) {
		int32_t *row = (int32_t *)c + r * ldc;

		if (r >= mr)
			break;
#pragma GCC unroll 2
		for (int h = 0; h < 2; h++) {
			__m512i v = acc[r][h];

			if (accumulate)
				v = _mm512_add_epi32(v,
						     _mm512_maskz_loadu_epi32(m[h], row + 16 * h));
			_mm512_mask_storeu_epi32(row + 16 * h, m[h], v);
		}
	}
}

/* Packed A for kernel_i8_vnni (see there): the words of each row, then its tail. */
static void pack_a_i8_vnni(const struct gemm_ops *o, void *dst, const void *src, int64_t lda,
			   int64_t mc, int64_t kc, float *row)
{
	int64_t groups = div_up(kc, 4), rows = div_up(mc, MR5) * MR5;
	size_t strip = strip_a_bytes(o, kc);

	(void)row;
	for (int64_t r = 0; r < rows; r++) {
		uint8_t *out = (uint8_t *)dst + (size_t)(r / MR5) * strip + (r % MR5) * 4;
		const int8_t *in = (const int8_t *)src + r * lda;
		int8_t word[4] = {0, 0, 0, 0};
		int64_t len = r < mc ? kc : 0, g = 0;
		int32_t sum = 0; /* |sum| <= 128 · KC5_I8: no overflow */

		for (int64_t p = 0; p < len; p++)
			sum += in[p];
		for (; 4 * g + 4 <= len; g++)
			memcpy(out + g * MR5 * 4, in + 4 * g, 4);
		for (; g < groups; g++) {
			for (int q = 0; q < 4; q++)
				word[q] = 4 * g + q < len ? in[4 * g + q] : 0;
			memcpy(out + g * MR5 * 4, word, 4);
		}
		sum *= -128;
		memcpy(out + groups * MR5 * 4, &sum, 4);
	}
}

/* Sixteen columns of four rows of B, interleaved by column and offset by 128. */
static inline void interleave4x16(uint8_t *out, const int8_t *in, int64_t ldb)
{
	const __m128i bias = _mm_set1_epi8((char)0x80);
	__m128i x0 = _mm_xor_si128(_mm_loadu_si128((const void *)in), bias);
	__m128i x1 = _mm_xor_si128(_mm_loadu_si128((const void *)(in + ldb)), bias);
	__m128i x2 = _mm_xor_si128(_mm_loadu_si128((const void *)(in + 2 * ldb)), bias);
	__m128i x3 = _mm_xor_si128(_mm_loadu_si128((const void *)(in + 3 * ldb)), bias);
	__m128i lo01 = _mm_unpacklo_epi8(x0, x1), hi01 = _mm_unpackhi_epi8(x0, x1);
	__m128i lo23 = _mm_unpacklo_epi8(x2, x3), hi23 = _mm_unpackhi_epi8(x2, x3);

	_mm_storeu_si128((void *)out, _mm_unpacklo_epi16(lo01, lo23));
	_mm_storeu_si128((void *)(out + 16), _mm_unpackhi_epi16(lo01, lo23));
	_mm_storeu_si128((void *)(out + 32), _mm_unpacklo_epi16(hi01, hi23));
	_mm_storeu_si128((void *)(out + 48), _mm_unpackhi_epi16(hi01, hi23));
}

/* The same for the ragged edges: rows past kc and columns past nc become zero. */
static void interleave_edge(uint8_t *out, const int8_t *in, int64_t ldb, int64_t rows, int64_t cols)
{
	for (int64_t j = 0; j < 16; j++)
		for (int64_t q = 0; q < 4; q++)
			out[j * 4 + q] =
			    q < rows && j < cols ? (uint8_t)(in[q * ldb + j] ^ 0x80) : 0;
}

static void pack_b_i8_vnni(const struct gemm_ops *o, void *dst, const void *src, int64_t ldb,
			   int64_t kc, int64_t nc, float *row)
{
	int64_t groups = div_up(kc, 4);
	size_t strip = strip_b_bytes(o, kc);

	(void)row;
	for (int64_t g = 0; g < groups; g++) {
		const int8_t *in = (const int8_t *)src + 4 * g * ldb;
		int64_t rows = min64(4, kc - 4 * g);

		for (int64_t j = 0; j < div_up(nc, NR5) * NR5; j += 16) {
			uint8_t *out = (uint8_t *)dst + (size_t)(j / NR5) * strip +
				       (size_t)g * NR5 * 4 + (size_t)(j % NR5) * 4;

			if (rows == 4 && j + 16 <= nc)
				interleave4x16(out, in + j, ldb);
			else
				interleave_edge(out, in + j, ldb, rows, nc - j);
		}
	}
}
#endif

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC pop_options
#endif

/* ---- blocked driver ------------------------------------------------------------------ */

struct gemm_args {
	const struct gemm_ops *ops;
	const void *a, *b;
	void *c; /* 4-byte elements (float or int32) */
	int64_t m, k, n;
};

/* One thread's share: C[m0..m1) × [n0..n1), with its own buffers. */
struct gemm_task {
	const struct gemm_args *args;
	int64_t m0, m1, n0, n1;
	void *buf;
	void *pa, *pb;
	float *row;
	pthread_t tid;
	int started;
};

static const char *elem_at(const void *base, int64_t index, size_t size)
{
	return (const char *)base + (size_t)index * size;
}

static void macro_kernel(const struct gemm_args *g, const struct gemm_task *t, int64_t ic,
			 int64_t mc, int64_t pc, int64_t kc, int64_t jc, int64_t nc)
{
	const struct gemm_ops *o = g->ops;
	const char *pa = t->pa, *pb = t->pb;
	char *c = (char *)g->c + (size_t)(ic * g->n + jc) * 4;
	size_t sa = strip_a_bytes(o, kc), sb = strip_b_bytes(o, kc);

	if (o->a_in_l1) {
		for (int64_t ir = 0; ir < mc; ir += o->mr)
			for (int64_t jr = 0; jr < nc; jr += o->nr)
				o->kernel(kc, pa + (size_t)(ir / o->mr) * sa,
					  pb + (size_t)(jr / o->nr) * sb,
					  c + (size_t)(ir * g->n + jr) * 4, g->n,
					  (int)min64(o->mr, mc - ir), (int)min64(o->nr, nc - jr),
					  pc > 0);
		return;
	}
	for (int64_t jr = 0; jr < nc; jr += o->nr)
		for (int64_t ir = 0; ir < mc; ir += o->mr)
			o->kernel(kc, pa + (size_t)(ir / o->mr) * sa,
				  pb + (size_t)(jr / o->nr) * sb, c + (size_t)(ir * g->n + jr) * 4,
				  g->n, (int)min64(o->mr, mc - ir), (int)min64(o->nr, nc - jr),
				  pc > 0);
}

/* For kernels with A's strip in L1: A's block is packed once per KC step and every
 * panel of B swept past it, so with MC >= the task's rows each operand is packed once. */
static void run_blocked_a_outer(struct gemm_task *t)
{
	const struct gemm_args *g = t->args;
	const struct gemm_ops *o = g->ops;
	size_t es = o->in_size;

	for (int64_t pc = 0; pc < g->k; pc += o->kc) {
		int64_t kc = min64(o->kc, g->k - pc);

		for (int64_t ic = t->m0; ic < t->m1; ic += o->mc) {
			int64_t mc = min64(o->mc, t->m1 - ic);

			o->pack_a(o, t->pa, elem_at(g->a, ic * g->k + pc, es), g->k, mc, kc,
				  t->row);
			for (int64_t jc = t->n0; jc < t->n1; jc += o->nc) {
				int64_t nc = min64(o->nc, t->n1 - jc);

				o->pack_b(o, t->pb, elem_at(g->b, pc * g->n + jc, es), g->n, kc, nc,
					  t->row);
				macro_kernel(g, t, ic, mc, pc, kc, jc, nc);
			}
		}
	}
}

static void *run_blocked(void *arg)
{
	struct gemm_task *t = arg;
	const struct gemm_args *g = t->args;
	const struct gemm_ops *o = g->ops;
	size_t es = o->in_size;

	if (o->a_in_l1) {
		run_blocked_a_outer(t);
		return NULL;
	}
	for (int64_t jc = t->n0; jc < t->n1; jc += o->nc) {
		int64_t nc = min64(o->nc, t->n1 - jc);

		for (int64_t pc = 0; pc < g->k; pc += o->kc) {
			int64_t kc = min64(o->kc, g->k - pc);

			o->pack_b(o, t->pb, elem_at(g->b, pc * g->n + jc, es), g->n, kc, nc,
				  t->row);
			for (int64_t ic = t->m0; ic < t->m1; ic += o->mc) {
				int64_t mc = min64(o->mc, t->m1 - ic);

				o->pack_a(o, t->pa, elem_at(g->a, ic * g->k + pc, es), g->k, mc, kc,
					  t->row);
				macro_kernel(g, t, ic, mc, pc, kc, jc, nc);
			}
		}
	}
	return NULL;
}

static void *run_gemv(void *arg)
{
	struct gemm_task *t = arg;
	const struct gemm_args *g = t->args;
	size_t es = g->ops->in_size;

	for (int64_t j = t->n0; j < t->n1; j += GEMV_CHUNK) {
		int64_t w = min64(GEMV_CHUNK, t->n1 - j);
		char *c = (char *)g->c + (size_t)j * 4;

		g->ops->gemv(g->a, elem_at(g->b, j, es), g->n, g->k, w, c, t->row);
	}
	return NULL;
}

/* Runs tasks 1..count-1 on new threads and task 0 on this one. A thread that cannot be
 * created has its task run here instead: slower, same result. */
static void run_tasks(struct gemm_task *tasks, int count, void *(*fn)(void *))
{
	for (int i = 1; i < count; i++)
		tasks[i].started = pthread_create(&tasks[i].tid, NULL, fn, &tasks[i]) == 0;
	fn(&tasks[0]);
	for (int i = 1; i < count; i++) {
		if (tasks[i].started)
			pthread_join(tasks[i].tid, NULL);
		else
			fn(&tasks[i]);
	}
}

static void *alloc_aligned(size_t size)
{
	size = (size + 63) & ~(size_t)63;
	return aligned_alloc(64, size ? size : 64);
}

static int alloc_task(struct gemm_task *t, const struct gemm_ops *o, int64_t k, int gemv)
{
	int64_t rows = min64(o->mc, t->m1 - t->m0), cols = min64(o->nc, t->n1 - t->n0);
	int64_t kc = min64(o->kc, k);
	size_t pa = gemv ? 0 : (size_t)div_up(rows, o->mr) * strip_a_bytes(o, kc);
	size_t pb = gemv ? 0 : (size_t)div_up(cols, o->nr) * strip_b_bytes(o, kc);
	/* One converted row: of a GEMV chunk, of B's panel or of A's block. */
	int64_t row_len = gemv ? min64(GEMV_CHUNK, t->n1 - t->n0) : cols > kc ? cols : kc;
	size_t row = (size_t)row_len * 4;

	pa = (pa + 63) & ~(size_t)63;
	pb = (pb + 63) & ~(size_t)63;
	t->buf = alloc_aligned(pa + pb + row);
	if (!t->buf)
		return -ENOMEM;
	t->pa = t->buf;
	t->pb = (char *)t->buf + pa;
	t->row = (float *)(void *)((char *)t->buf + pa + pb);
	return 0;
}

static void free_tasks(struct gemm_task *tasks, int count)
{
	for (int i = 0; i < count; i++)
		free(tasks[i].buf);
	free(tasks);
}

/* Cost of one thread's rectangle in multiply-add equivalents: the tiles it computes
 * (padding included) plus what it packs; a packed element costs about as much as 16
 * multiply-adds. Redundant packing is what a bad split pays for. */
static double split_cost(const struct gemm_args *g, int tm, int tn)
{
	const struct gemm_ops *o = g->ops;
	double rows = (double)(div_up(div_up(g->m, o->mr), tm) * o->mr);
	double cols = (double)(div_up(div_up(g->n, o->nr), tn) * o->nr);
	double k = (double)g->k;
	double packed = o->a_in_l1 ? rows * k + cols * k * (double)div_up((int64_t)rows, o->mc)
				   : rows * k * (double)div_up((int64_t)cols, o->nc) + cols * k;

	return rows * cols * k + 16 * packed;
}

/* Picks a tm×tn grid of at most `threads` rectangles with the lowest per-thread cost. */
static void choose_grid(const struct gemm_args *g, int threads, int *tm, int *tn)
{
	double best = -1;

	for (int rm = 1; rm <= threads; rm++) {
		int cn = threads / rm;
		double cost;

		if (rm > div_up(g->m, g->ops->mr) || cn > div_up(g->n, g->ops->nr))
			continue;
		cost = split_cost(g, rm, cn);
		if (best < 0 || cost < best) {
			best = cost;
			*tm = rm;
			*tn = cn;
		}
	}
	if (best < 0) {
		*tm = 1;
		*tn = 1;
	}
}

/* Range g of `parts` equal shares of `units` units of `unit` elements, clipped to len. */
static void share(int64_t len, int64_t unit, int parts, int g, int64_t *lo, int64_t *hi)
{
	int64_t units = div_up(len, unit);

	*lo = min64(len, units * g / parts * unit);
	*hi = min64(len, units * (g + 1) / parts * unit);
}

static int limit_threads(const struct gemm_args *g, int threads)
{
	double most = (double)g->m * (double)g->n * (double)g->k / MIN_MACS_PER_THREAD;

	if (most < 1)
		return 1;
	return most < threads ? (int)most : threads;
}

/* The tasks of a tm x tn grid, *count of them; NULL when out of memory. */
static struct gemm_task *plan_tasks(const struct gemm_args *g, int threads, int *count)
{
	int gemv = g->m == 1, tm = 1, tn = 1;
	struct gemm_task *tasks;

	if (gemv)
		tn = (int)min64(threads, div_up(g->n, GEMV_ALIGN));
	else
		choose_grid(g, threads, &tm, &tn);
	tasks = calloc((size_t)(tm * tn), sizeof(*tasks));
	if (!tasks)
		return NULL;
	for (int i = 0; i < tm * tn; i++) {
		tasks[i].args = g;
		share(g->m, g->ops->mr, tm, i / tn, &tasks[i].m0, &tasks[i].m1);
		share(g->n, gemv ? GEMV_ALIGN : g->ops->nr, tn, i % tn, &tasks[i].n0, &tasks[i].n1);
		if (alloc_task(&tasks[i], g->ops, g->k, gemv)) {
			free_tasks(tasks, i + 1);
			return NULL;
		}
	}
	*count = tm * tn;
	return tasks;
}

static int check_dims(int64_t m, int64_t k, int64_t n)
{
	if (m < 1 || k < 1 || n < 1)
		return rb_set_error(-EINVAL,
				    "invalid gemm shape %lldx%lldx%lld: every dimension must be "
				    "at least 1",
				    (long long)m, (long long)k, (long long)n);
	return 0;
}

static int run_gemm(const struct gemm_args *g, int threads)
{
	struct gemm_task *tasks;
	int count = check_dims(g->m, g->k, g->n);

	if (count)
		return count;
	tasks = plan_tasks(g, limit_threads(g, rb_ref_threads(threads)), &count);
	if (!tasks)
		return rb_set_error(-ENOMEM, "out of memory for the reference gemm %lldx%lldx%lld",
				    (long long)g->m, (long long)g->k, (long long)g->n);
	run_tasks(tasks, count, g->m == 1 ? run_gemv : run_blocked);
	free_tasks(tasks, count);
	return 0;
}

/* Blocking and layout of the generic kernels (filled in per dtype). */
static const struct gemm_ops generic_ops = {
    .mr = MR, .nr = NR, .kc = KC, .mc = MC, .nc = NC, .kgrain = 1, .pel = 4, .a_tail = 0};

#if defined(RB_REF_X86)
/* Both AVX-512 kernels keep a strip of A (fp32 14×512, 28 KiB; int8 12×512 bytes) near
 * the core while they sweep a panel of B that fits L2 (512×256 fp32 or 512×1024 bytes,
 * 512 KiB each), and pack A's block once per KC step (MC covers most tasks' rows). The
 * deep KC cuts the passes over C (each reads and writes all of C) to a quarter of those
 * of KC = 128. On the 2-core AVX-512 VM of issue 15 (a busy machine: take the ratios,
 * not the times), one thread: 512x2048x8192 fp16 went from 150 ms with 12×32 tiles, KC
 * 192 and B's strip in L1 to about 90 ms with this layout (KC 384-512 and NC 128-512
 * within 10% of each other, 512×256 best), int8 from 66 to 44 ms against A's block in L2
 * and B's strip in L1. */
enum {
	KC5_F32 = 512,
	MC5_F32 = 64 * MRF,
	NC5_F32 = 256,
	KC5_I8 = 512,
	MC5_I8 = 85 * MR5,
	NC5_I8 = 1024,
};

static const struct gemm_ops vnni_ops = {.in_size = sizeof(int8_t),
					 .mr = MR5,
					 .nr = NR5,
					 .kc = KC5_I8,
					 .mc = MC5_I8,
					 .nc = NC5_I8,
					 .kgrain = 4,
					 .pel = 1,
					 .a_tail = 4,
					 .a_in_l1 = 1,
					 .pack_a = pack_a_i8_vnni,
					 .pack_b = pack_b_i8_vnni,
					 .kernel = kernel_i8_vnni,
					 .gemv = gemv_i8_avx2};
#endif

static void pick_f16_ops(struct gemm_ops *ops)
{
	int avx2 = use_avx2();

	*ops = generic_ops;
	ops->in_size = sizeof(uint16_t);
	ops->pack_a = pack_a_f16;
	ops->pack_b = pack_b_f16;
	ops->kernel = kernel_f32_portable;
	ops->gemv = gemv_f16_portable;
#if defined(RB_REF_X86)
	if (avx2)
		ops->kernel = kernel_f32_avx2;
	if (use_impl() == IMPL_AVX512) {
		ops->mr = MRF;
		ops->nr = NRF;
		ops->kc = KC5_F32;
		ops->mc = MC5_F32;
		ops->kernel = kernel_f32_avx512;
		ops->pack_b = pack_b_f16_avx512;
		ops->nc = NC5_F32;
		ops->a_in_l1 = 1;
	}
	if (avx2 && strcmp(rb_fp16_impl(), "f16c") == 0)
		ops->gemv = use_impl() == IMPL_AVX512 ? gemv_f16_avx512 : gemv_f16_f16c;
#elif defined(RB_REF_NEON)
	if (use_impl() == IMPL_NEON)
		ops->gemv = gemv_f16_neon;
#endif
	(void)avx2;
}

int rb_ref_gemm_f16(const uint16_t *a, const uint16_t *b, float *c, int64_t m, int64_t k, int64_t n,
		    int threads)
{
	struct gemm_ops ops;
	struct gemm_args g = {&ops, a, b, c, m, k, n};
	float *af = NULL;
	int err;

	pick_f16_ops(&ops);
	if (m == 1 && k > 0) {
		/* The GEMV kernels take A already in fp32: convert it once for all threads. */
		af = malloc((size_t)k * sizeof(*af));
		if (!af)
			return rb_set_error(-ENOMEM,
					    "out of memory for the reference gemm "
					    "%lldx%lldx%lld",
					    (long long)m, (long long)k, (long long)n);
		rb_fp16_to_f32_array(af, a, (size_t)k);
		g.a = af;
	}
	err = run_gemm(&g, threads);
	free(af);
	return err;
}

int rb_ref_gemm_i8(const int8_t *a, const int8_t *b, int32_t *c, int64_t m, int64_t k, int64_t n,
		   int threads)
{
	struct gemm_ops ops = generic_ops;
	struct gemm_args g = {&ops, a, b, c, m, k, n};

	ops.in_size = sizeof(int8_t);
	ops.pack_a = pack_a_i8;
	ops.pack_b = pack_b_i8;
	ops.kernel = kernel_i32_portable;
	ops.gemv = gemv_i8_portable;

#if defined(RB_REF_X86)
	if (use_avx2()) {
		ops.kernel = kernel_i32_avx2;
		ops.gemv = gemv_i8_avx2;
	}
	if (use_vnni())
		ops = vnni_ops;
#elif defined(RB_REF_NEON)
	if (use_impl() == IMPL_NEON)
		ops.gemv = gemv_i8_neon;
#endif
	return run_gemm(&g, threads);
}

int rb_ref_gemm(const struct rb_shape *shape, const void *a, const void *b, void *c, int threads)
{
	switch (shape->dtype) {
	case RB_DTYPE_FP16:
		return rb_ref_gemm_f16(a, b, c, shape->m, shape->k, shape->n, threads);
	case RB_DTYPE_INT8:
		return rb_ref_gemm_i8(a, b, c, shape->m, shape->k, shape->n, threads);
	}
	return rb_set_error(-EINVAL, "unknown dtype %d for the reference gemm", (int)shape->dtype);
}
