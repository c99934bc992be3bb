/* Data layouts of the NPU matmul and of the rknn matmul API (see layout.h).
 *
 * Everything here is bandwidth-bound, so the loops are arranged for the caches:
 *  - matrices are packed into cubes (A, the rknn C) by columns of 8 channel groups down
 *    the rows (pack_column; 4×4 transposes of 16-byte lanes on CPUs with AVX-512): each
 *    surface receives whole 64-byte lines in order, and the lines 16 rows on are
 *    prefetched so that the stores do not wait for them;
 *  - other cube conversions (unpacks that convert or add, or into unaligned rows, and
 *    the edges of packs) go in tiles of ROW_BLOCK rows × GROUP_BLOCK channel groups
 *    staged in an L1-sized buffer, so surfaces are read or written in 256-byte runs and
 *    matrix rows in 512-byte runs (writing 16-byte atoms straight into rows whose pitch
 *    is a power of two thrashes the cache sets and measured 2-3× slower);
 *  - B is packed two 1 KiB weight blocks (32 channels × 2·KG kernels, whole 64-byte
 *    lines of each row of B) at a time, transposed with 16-byte vectors (SSE2 on
 *    x86-64, NEON on aarch64, both in the base ISA so no -march is needed) into a
 *    staging buffer and written out as whole sequential lines (streaming stores on
 *    x86); a strip of up to B_STRIP_BYTES columns is packed for every K before the
 *    next, with each of the 32 rows of B prefetched PREFETCH_AHEAD bytes ahead.
 *    Measured on x86-64 against the first straightforward version: explicit unrolling
 *    2×, block pairs +10-20%, staging with streaming stores +30-50%. On CPUs with
 *    AVX-512 F and BW (chosen at run time; rb_layout_force_impl overrides), fp16 blocks
 *    go through 32×32 register transposes that store each 64-byte line whole
 *    (tile32_f16_avx512), without staging;
 *  - C is unpacked without staging where its rows are aligned: whole 64-byte lines of C
 *    rows are written straight from 4 surfaces (copy_by_lines), with streaming stores
 *    when C is large (x86).
 * Measured with bench-summary on a 2-core Xeon (Cascade Lake, AVX-512) shared with other
 * jobs (load 7-10), time / memcpy of the same bytes on 2 threads, medians of 3 runs
 * alternating with the previous code: pack A fp16 512×2048 1.12 (was 2.11), pack B fp16
 * 2048×8192 1.54 (1.84), 2048×128256 1.73 (1.92). B stays above memcpy because it waits
 * on memory: it reads 32 rows at once (with 8 KiB strips a read-only pass in this order
 * measured 1.3× a sequential read), and its streaming writes do not overlap those reads
 * as memcpy's do. Later, quiet and on huge pages, wider strips prefetched further ahead
 * took 2048×128256 to about 1.2 (prefetch_rows has the figures); prefetches to L2,
 * staging rows in L1/L2, prefetching the next band, two or four bands per strip,
 * ordinary stores with the lines prefetched all measured the same or slower. Where the
 * rest goes (a harness of the same loops, 2 threads): the reads alone in this order
 * took 0.99-1.04 of a sequential read's time and the scattered 1 KiB streaming writes
 * alone 0.98-1.01 of sequential ones, but both together, with no transpose at all (rows
 * stored as they were read), 1.09-1.24 of memcpy's time: the order itself costs that. A
 * transpose with fewer shuffles (rows gathered into lanes by the loads) measured no
 * faster, strips of 1-2 KiB 1.9-2.2, non-temporal prefetches 3.0 (all of these with
 * the AVX-512 transposes not yet unrolled). On an Emerald Rapids VM (2 CPUs, L2 2 MiB
 * each) the AVX-512 transposes, once unrolled (see tile32_f16_avx512), take pack B to
 * 0.86-0.94 (2048×8192) and 1.04-1.24 (2048×128256) of memcpy's time, the order with
 * no transpose to 0.78-1.04; staging the 32 rows of a band in L2 first took 1.9-2.0
 * there, a transpose gathering lanes by masked broadcast loads 1.32-1.37.
 * Work is split across threads in chunks of disjoint output ranges taken as threads
 * finish (run_parallel), so results cannot depend on the thread count. */
#include "numeric/layout.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fp16.h"

#if defined(RB_LAYOUT_PORTABLE)
/* scalar transposes only (to test them on machines with vectors) */
#elif defined(__SSE2__)
#include <immintrin.h>
#define RB_LAYOUT_SSE2   1
/* AVX-512 kernels are built with a target attribute and chosen at run time
 * (use_avx512), so the build needs no -march and runs on any x86-64. */
#define RB_LAYOUT_AVX512 1
#define AVX512           __attribute__((target("avx512f,avx512bw")))
#elif defined(__aarch64__) && defined(__ARM_NEON)
#include <arm_neon.h>
#define RB_LAYOUT_NEON 1
#endif

#define ATOM        RB_LAYOUT_ATOM_BYTES
#define KBLOCK      RB_LAYOUT_K_ALIGN
#define MAX_THREADS 64
/* Below this many bytes per thread, starting a thread costs more than it saves: a
 * create + join measured 25-45 µs (x86-64 VM), the time to convert about 1 MB, and
 * a job that fits in L2 runs at 20+ GB/s on one core. */
#define MIN_BYTES_PER_THREAD ((size_t)2 << 20)
/* Cube tiles: 16 rows (256 contiguous bytes of a surface) × 32 channel groups (512
 * contiguous bytes of a matrix row), an 8 KiB staging buffer. */
#define ROW_BLOCK   16
#define GROUP_BLOCK 32
/* Widest column strip of B packed for all K before the next strip (narrower when a
 * thread's share of a row is: see b_strip_groups). */
#define B_STRIP_BYTES 16384

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

int64_t rb_layout_c2(size_t esize)
{
	return esize == 1 || esize == 2 || esize == 4 ? (int64_t)(ATOM / esize) : 0;
}

int64_t rb_layout_kernel_group(enum rb_dtype dtype)
{
	switch (dtype) {
	case RB_DTYPE_FP16:
		return 16;
	case RB_DTYPE_INT8:
		return 32;
	}
	return 0;
}

int64_t rb_layout_round_up(int64_t x, int64_t align)
{
	if (align <= 0)
		return x;
	return (x + align - 1) / align * align;
}

static size_t in_esize(enum rb_dtype dtype)
{
	return dtype == RB_DTYPE_INT8 ? 1 : 2;
}

/* a·b·c as a size_t, or 0 when an operand is negative or the product overflows. */
static size_t mul3(int64_t a, int64_t b, int64_t c)
{
	uint64_t ab, abc;

	if (a < 0 || b < 0 || c < 0)
		return 0;
	if (__builtin_mul_overflow((uint64_t)a, (uint64_t)b, &ab) ||
	    __builtin_mul_overflow(ab, (uint64_t)c, &abc) || abc > SIZE_MAX ||
	    abc > (uint64_t)INT64_MAX)
		return 0;
	return (size_t)abc;
}

/* --- argument checks ---------------------------------------------------------------- */

static int check_dtype(enum rb_dtype dtype)
{
	if (dtype == RB_DTYPE_FP16 || dtype == RB_DTYPE_INT8)
		return 0;
	return rb_set_error(-EINVAL, "invalid dtype %d: use fp16 or int8", (int)dtype);
}

static int check_dim(const char *name, int64_t v)
{
	if (v >= 1 && v <= RB_SHAPE_DIM_MAX)
		return 0;
	return rb_set_error(-EINVAL, "invalid %s %" PRId64 ": must be between 1 and %" PRId64, name,
			    v, RB_SHAPE_DIM_MAX);
}

static int check_pad(const char *name, int64_t pad, const char *dim, int64_t v, int64_t align)
{
	if (pad >= v && pad % align == 0 && pad <= RB_SHAPE_DIM_MAX)
		return 0;
	return rb_set_error(-EINVAL,
			    "invalid %s %" PRId64 " for %s %" PRId64 ": use a multiple of %" PRId64
			    " that is at least %s",
			    name, pad, dim, v, align, dim);
}

static int check_buffers(const void *dst, const void *src, const char *func)
{
	if (dst && src)
		return 0;
	return rb_set_error(-EINVAL, "null buffer passed to '%s'", func);
}

static int check_size(size_t bytes, const char *what)
{
	if (bytes)
		return 0;
	return rb_set_error(-EINVAL, "%s too large for this machine's address space", what);
}

/* --- threads ------------------------------------------------------------------------ */

typedef void (*range_fn)(const void *ctx, int64_t begin, int64_t end);

/* The work of run_parallel: [0, items) handed out `chunk` items at a time. */
struct pool {
	range_fn fn;
	const void *ctx;
	int64_t items, chunk;
	atomic_llong next;
};

/* Takes chunks until none is left. */
static void *pool_work(void *arg)
{
	struct pool *p = arg;
	int64_t begin;

	while ((begin = (int64_t)atomic_fetch_add(&p->next, p->chunk)) < p->items)
		p->fn(p->ctx, begin, min64(begin + p->chunk, p->items));
	return NULL;
}

/* sysconf reads /sys on every call (microseconds, as long as a small pack), so the
 * count is read once; CPUs brought online later are not used. */
static int online_cpus(void)
{
	static atomic_int cached;
	int n = atomic_load_explicit(&cached, memory_order_relaxed);

	if (n <= 0) {
		long v = sysconf(_SC_NPROCESSORS_ONLN);

		n = v < 1 ? 1 : (int)min64(v, MAX_THREADS);
		atomic_store_explicit(&cached, n, memory_order_relaxed);
	}
	return n;
}

/* Threads for a job of `bytes` bytes made of `items` indivisible pieces. */
static int resolve_threads(int threads, size_t bytes, int64_t items)
{
	int64_t n = min64((int64_t)(bytes / MIN_BYTES_PER_THREAD), items);

	if (n <= 1)
		return 1;
	n = min64(n, threads > 0 ? threads : online_cpus());
	return (int)min64(n, MAX_THREADS);
}

/* Runs fn over [0, items) on `threads` threads, the calling one included, which take
 * chunks of about items / (8·threads) items (a multiple of `grain`) as they finish the
 * previous one. On a shared machine one thread is often slowed by other jobs; with
 * fixed halves the whole call waited for it (a 2-thread pack of 525 MB of B measured
 * 1.5x slower than one thread). Outputs of chunks are disjoint, so results do not
 * depend on who does what. A thread that cannot be started costs time, never work:
 * the calling thread takes whatever is left. */
static void run_parallel(range_fn fn, const void *ctx, int64_t items, int threads, int64_t grain)
{
	pthread_t tid[MAX_THREADS];
	bool started[MAX_THREADS];
	struct pool p = {.fn = fn, .ctx = ctx, .items = items};
	int i;

	p.chunk = threads > 1 ? items / (8 * (int64_t)threads) : items;
	p.chunk = max64(grain, p.chunk / grain * grain);
	atomic_init(&p.next, 0);
	for (i = 1; i < threads; i++)
		started[i] = pthread_create(&tid[i], NULL, pool_work, &p) == 0;
	pool_work(&p);
	for (i = 1; i < threads; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
}

/* --- kernels chosen at run time ------------------------------------------------------ */

enum impl { IMPL_AUTO, IMPL_BASE, IMPL_AVX512 };

static atomic_int forced_impl; /* IMPL_AUTO: the best this CPU has */

static enum impl best_impl(void)
{
#if defined(RB_LAYOUT_AVX512)
	if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
		return IMPL_AVX512;
#endif
	return IMPL_BASE;
}

static bool use_avx512(void)
{
	int forced = atomic_load_explicit(&forced_impl, memory_order_relaxed);

	return (forced != IMPL_AUTO ? (enum impl)forced : best_impl()) == IMPL_AVX512;
}

/* The kernels of the base ISA: SSE2 on x86-64, NEON on aarch64, else scalar loops. */
static const char *base_name(void)
{
#if defined(RB_LAYOUT_SSE2)
	return "sse2";
#elif defined(RB_LAYOUT_NEON)
	return "neon";
#else
	return "scalar";
#endif
}

const char *rb_layout_impl(void)
{
	return use_avx512() ? "avx512" : base_name();
}

int rb_layout_force_impl(const char *name)
{
	if (!name) {
		atomic_store(&forced_impl, IMPL_AUTO);
		return 0;
	}
	if (strcmp(name, base_name()) == 0) {
		atomic_store(&forced_impl, IMPL_BASE);
		return 0;
	}
	if (strcmp(name, "avx512") != 0)
		return -EINVAL;
	if (best_impl() != IMPL_AVX512)
		return -ENOTSUP;
	atomic_store(&forced_impl, IMPL_AVX512);
	return 0;
}

/* --- 16-byte transposes ---------------------------------------------------------------
 * A perfect-shuffle round interleaves vector i with vector i + n/2 into vectors 2i and
 * 2i + 1. Seen as bits (vector index, lane), one round rotates them left by one, so
 * log2(n) rounds turn element (row r, lane c) into (row c, lane r): a transpose of n
 * rows of n lanes. */

#if defined(RB_LAYOUT_SSE2) || defined(RB_LAYOUT_NEON)
#if defined(RB_LAYOUT_SSE2)
typedef __m128i vec;
#define VLOAD(p)       _mm_loadu_si128((const __m128i *)(const void *)(p))
#define VSTORE(p, v)   _mm_storeu_si128((__m128i *)(void *)(p), (v))
#define ZIP_LO8(a, b)  _mm_unpacklo_epi8((a), (b))
#define ZIP_HI8(a, b)  _mm_unpackhi_epi8((a), (b))
#define ZIP_LO16(a, b) _mm_unpacklo_epi16((a), (b))
#define ZIP_HI16(a, b) _mm_unpackhi_epi16((a), (b))
#else
typedef uint8x16_t vec;
#define VLOAD(p)      vld1q_u8((const uint8_t *)(p))
#define VSTORE(p, v)  vst1q_u8((uint8_t *)(p), (v))
#define ZIP_LO8(a, b) vzip1q_u8((a), (b))
#define ZIP_HI8(a, b) vzip2q_u8((a), (b))
#define ZIP_LO16(a, b)                                                                             \
	vreinterpretq_u8_u16(vzip1q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b)))
#define ZIP_HI16(a, b)                                                                             \
	vreinterpretq_u8_u16(vzip2q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b)))
#endif

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
#else
static void tr8x8_u16(uint8_t *d, size_t dp, const uint8_t *s, size_t sp)
{
	for (int r = 0; r < 8; r++)
		for (int c = 0; c < 8; c++)
			memcpy(d + c * dp + 2 * r, s + r * sp + 2 * c, 2);
}

static void tr16x16_u8(uint8_t *d, size_t dp, const uint8_t *s, size_t sp)
{
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 16; c++)
			d[c * dp + r] = s[r * sp + c];
}
#endif

/* Weight blocks are 1 KiB for both dtypes: 16 kernels × 32 fp16, 32 × 32 int8. */
#define BLOCK_BYTES 1024

/* `count` (1 or 2) adjacent fp16 weight blocks: 32 channels (rows of B, pitch sp bytes)
 * × 16·count kernels -> [count][16][32] at d. Doing two blocks per pass consumes whole
 * 64-byte lines of each row of B while they are in L1. */
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

/* Copies one staged block to its place in the packed weights. On x86 with non-temporal
 * stores: the weights are written once and next read by the NPU's DMA, so caching them
 * would only evict B, and streaming skips the read-for-ownership of every line. */
static void write_block(uint8_t *d, const uint8_t *s, bool stream)
{
#if defined(RB_LAYOUT_SSE2)
	if (stream) {
		for (size_t o = 0; o < BLOCK_BYTES; o += 16)
			_mm_stream_si128((__m128i *)(void *)(d + o),
					 _mm_load_si128((const __m128i *)(const void *)(s + o)));
		return;
	}
#endif
	(void)stream;
	memcpy(d, s, BLOCK_BYTES);
}

/* Orders the streaming stores of this thread before it reports completion. */
static void stream_fence(void)
{
#if defined(RB_LAYOUT_SSE2)
	_mm_sfence();
#endif
}

#if defined(RB_LAYOUT_AVX512)
/* The loops over arrays of vectors below are unrolled (#pragma GCC unroll, as in ref.c
 * and hw_gemm.c): at -O2 GCC kept them as loops, with the arrays on the stack, and
 * unrolled the B pack of 2048x128256 went from 1.40-1.49 to 1.07 × memcpy's time on an
 * Emerald Rapids VM (medians of 12 alternations in a harness), as fast as the same
 * loads and stores with no transpose at all (1.00-1.04). The base kernels are written
 * out by hand for the same reason. */

/* y[2i], y[2i + 1] = x[i] and x[i + 4] interleaved as 16-bit words within each 128-bit
 * lane: round8x16 of the 16-byte transposes, on 4 lanes at once. */
AVX512 static inline void zip_round_x4(__m512i *y, const __m512i *x)
{
#pragma GCC unroll 4
	for (int i = 0; i < 4; i++) {
		y[2 * i] = _mm512_unpacklo_epi16(x[i], x[i + 4]);
		y[2 * i + 1] = _mm512_unpackhi_epi16(x[i], x[i + 4]);
	}
}

/* 32 rows of 32 fp16 at s (pitch sp bytes) -> 32 lines of 64 bytes: line c (column c
 * of the tile, 32 channels) goes to d + (c / 16)·gap + (c % 16)·64, that is row c % 16
 * of the weight block of kernel group c / 16. Three rounds of in-lane word interleaves
 * transpose the 8×8 word squares of each 128-bit lane of each group of 8 rows; two
 * rounds of 128-bit lane shuffles then gather, for each column, its 4 squares of 8
 * rows. Every line leaves as one whole 64-byte store. */
AVX512 static void tile32_f16_avx512(uint8_t *d, size_t gap, const uint8_t *s, size_t sp,
				     bool stream)
{
	__m512i t[4][8], x[8], y[8];

#pragma GCC unroll 4
	for (int g = 0; g < 4; g++) {
#pragma GCC unroll 8
		for (int i = 0; i < 8; i++)
			x[i] = _mm512_loadu_si512(s + (size_t)(8 * g + i) * sp);
		zip_round_x4(y, x);
		zip_round_x4(x, y);
		zip_round_x4(t[g], x);
	}
#pragma GCC unroll 8
	for (int w = 0; w < 8; w++) {
		/* lanes: t[g][w] lane L holds rows 8g..8g+7 of column 8L + w */
		__m512i a0 = _mm512_shuffle_i64x2(t[0][w], t[1][w], 0x88); /* 0,2 | 0,2 */
		__m512i a1 = _mm512_shuffle_i64x2(t[0][w], t[1][w], 0xdd); /* 1,3 | 1,3 */
		__m512i a2 = _mm512_shuffle_i64x2(t[2][w], t[3][w], 0x88);
		__m512i a3 = _mm512_shuffle_i64x2(t[2][w], t[3][w], 0xdd);
		__m512i o[4];

		o[0] = _mm512_shuffle_i64x2(a0, a2, 0x88);
		o[1] = _mm512_shuffle_i64x2(a1, a3, 0x88);
		o[2] = _mm512_shuffle_i64x2(a0, a2, 0xdd);
		o[3] = _mm512_shuffle_i64x2(a1, a3, 0xdd);
#pragma GCC unroll 4
		for (int l = 0; l < 4; l++) {
			int c = 8 * l + w;
			uint8_t *line = d + (size_t)(c / 16) * gap + (size_t)(c % 16) * 64;

			if (stream)
				_mm512_stream_si512((void *)line, o[l]);
			else
				_mm512_storeu_si512(line, o[l]);
		}
	}
}
#endif

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
#if defined(RB_LAYOUT_SSE2) || defined(RB_LAYOUT_NEON)
	const uint8_t *s = cube_at(j, q, r0);
	size_t surf = (size_t)j->cube_rows * ATOM, pitch = (size_t)j->ld * j->esize;
	uint8_t *d = matrix_at(j, r0, q);

	for (int64_t r = r0; r < r1; r++, s += ATOM, d += pitch) {
		vec a0 = VLOAD(s), a1 = VLOAD(s + surf), a2 = VLOAD(s + 2 * surf);
		vec a3 = VLOAD(s + 3 * surf);

#if defined(RB_LAYOUT_SSE2)
		if (j->stream) {
			_mm_stream_si128((__m128i *)(void *)d, a0);
			_mm_stream_si128((__m128i *)(void *)(d + ATOM), a1);
			_mm_stream_si128((__m128i *)(void *)(d + 2 * ATOM), a2);
			_mm_stream_si128((__m128i *)(void *)(d + 3 * ATOM), a3);
			continue;
		}
#endif
		VSTORE(d, a0);
		VSTORE(d + ATOM, a1);
		VSTORE(d + 2 * ATOM, a2);
		VSTORE(d + 3 * ATOM, a3);
	}
#else
	(void)j, (void)r0, (void)r1, (void)q; /* use_lines is false without vectors */
#endif
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

#if defined(RB_LAYOUT_AVX512)
/* One line of 4 channel groups (64 bytes) from each of 4 rows at s -> the 4 rows' atoms
 * of each group, one whole line per surface (4×4 transpose of 16-byte lanes). */
AVX512 static void quad_avx512(uint8_t *d, size_t surf, const uint8_t *s, size_t pitch)
{
	__m512i r0 = _mm512_loadu_si512(s), r1 = _mm512_loadu_si512(s + pitch);
	__m512i r2 = _mm512_loadu_si512(s + 2 * pitch), r3 = _mm512_loadu_si512(s + 3 * pitch);
	/* lanes (row.group): lo01 = 0.0 0.1 1.0 1.1, hi01 = 0.2 0.3 1.2 1.3, ... */
	__m512i lo01 = _mm512_shuffle_i64x2(r0, r1, 0x44),
		hi01 = _mm512_shuffle_i64x2(r0, r1, 0xee);
	__m512i lo23 = _mm512_shuffle_i64x2(r2, r3, 0x44),
		hi23 = _mm512_shuffle_i64x2(r2, r3, 0xee);

	_mm512_storeu_si512(d, _mm512_shuffle_i64x2(lo01, lo23, 0x88));
	_mm512_storeu_si512(d + surf, _mm512_shuffle_i64x2(lo01, lo23, 0xdd));
	_mm512_storeu_si512(d + 2 * surf, _mm512_shuffle_i64x2(hi01, hi23, 0x88));
	_mm512_storeu_si512(d + 3 * surf, _mm512_shuffle_i64x2(hi01, hi23, 0xdd));
}
#endif

/* The same with 16-byte vectors (or bytes). */
static void quad_base(uint8_t *d, size_t surf, const uint8_t *s, size_t pitch)
{
	for (int g = 0; g < 4; g++) {
#if defined(RB_LAYOUT_SSE2) || defined(RB_LAYOUT_NEON)
		vec a0 = VLOAD(s + g * ATOM), a1 = VLOAD(s + pitch + g * ATOM);
		vec a2 = VLOAD(s + 2 * pitch + g * ATOM), a3 = VLOAD(s + 3 * pitch + g * ATOM);

		VSTORE(d + g * surf, a0);
		VSTORE(d + g * surf + ATOM, a1);
		VSTORE(d + g * surf + 2 * ATOM, a2);
		VSTORE(d + g * surf + 3 * ATOM, a3);
#else
		for (int i = 0; i < 4; i++)
			memcpy(d + g * surf + i * ATOM, s + i * pitch + g * ATOM, ATOM);
#endif
	}
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
#if defined(RB_LAYOUT_SSE2) || defined(RB_LAYOUT_NEON)
	uintptr_t first = (uintptr_t)j->dst + (uintptr_t)(j->col0 * (int64_t)j->esize);

	return j->op == OP_COPY && first % ATOM == 0 && (j->ld * (int64_t)j->esize) % 64 == 0;
#else
	(void)j;
	return false;
#endif
}

/* ... and with streaming stores: x86, a large matrix. */
static bool use_streams(const struct cube_job *j)
{
#if defined(RB_LAYOUT_SSE2)
	return use_lines(j) &&
	       (size_t)(j->r1 - j->r0) * (size_t)j->cols * j->esize >= STREAM_MIN_BYTES;
#else
	(void)j;
	return false;
#endif
}

static void run_cube(struct cube_job *j, int threads)
{
	int64_t rows = j->r1 - j->r0;
	int n = resolve_threads(threads, (size_t)rows * j->groups * ATOM, max64(rows, j->groups));
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
	run_parallel(cube_range, j, items, (int)min64(n, items),
		     j->split_rows ? ROW_BLOCK : GROUP_BLOCK);
}

/* Row-major rows×cols (esize-byte elements) -> cube with groups_pad·C2 channels. */
static void cube_pack(void *dst, const void *src, size_t esize, int64_t rows, int64_t cols,
		      int64_t channels_pad, int threads)
{
	struct cube_job j = {.op = OP_PACK, .esize = esize, .dst = dst, .src = src};

	j.avx512 = use_avx512();
	j.c2 = rb_layout_c2(esize);
	j.ld = cols;
	j.cube_rows = rows;
	j.r1 = rows;
	j.cols = cols;
	j.groups = channels_pad / j.c2;
	run_cube(&j, threads);
}

/* Cube of `rows` rows -> row-major rows×cols, all of it. */
static void cube_unpack(void *dst, const void *src, size_t esize, int64_t rows, int64_t cols,
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

/* --- A --------------------------------------------------------------------------------- */

size_t rb_layout_a_bytes(enum rb_dtype dtype, int64_t m, int64_t k_pad)
{
	if (check_dtype(dtype) || k_pad < 0)
		return 0;
	return mul3(m, rb_layout_round_up(k_pad, rb_layout_c2(in_esize(dtype))),
		    (int64_t)in_esize(dtype));
}

static int check_a(const void *dst, const void *src, enum rb_dtype dtype, int64_t m, int64_t k,
		   int64_t k_pad, const char *func)
{
	int err;

	if ((err = check_buffers(dst, src, func)) || (err = check_dtype(dtype)) ||
	    (err = check_dim("m", m)) || (err = check_dim("k", k)) ||
	    (err = check_pad("k_pad", k_pad, "k", k, KBLOCK)))
		return err;
	return check_size(rb_layout_a_bytes(dtype, m, k_pad), "feature cube");
}

int rb_layout_pack_a(void *dst, const void *a, enum rb_dtype dtype, int64_t m, int64_t k,
		     int64_t k_pad, int threads)
{
	int err = check_a(dst, a, dtype, m, k, k_pad, __func__);

	if (err)
		return err;
	cube_pack(dst, a, in_esize(dtype), m, k, k_pad, threads);
	return 0;
}

int rb_layout_unpack_a(void *a, const void *src, enum rb_dtype dtype, int64_t m, int64_t k,
		       int64_t k_pad, int threads)
{
	int err = check_a(a, src, dtype, m, k, k_pad, __func__);

	if (err)
		return err;
	cube_unpack(a, src, in_esize(dtype), m, k, threads);
	return 0;
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
	if (check_dtype(dtype))
		return 0;
	return mul3(k_pad, n_pad, (int64_t)in_esize(dtype));
}

static int check_b_pads(enum rb_dtype dtype, int64_t k, int64_t n, int64_t k_pad, int64_t n_pad,
			int64_t k_slice)
{
	int err;

	if ((err = check_dtype(dtype)) || (err = check_dim("k", k)) || (err = check_dim("n", n)) ||
	    (err = check_pad("k_pad", k_pad, "k", k, KBLOCK)) ||
	    (err = check_pad("n_pad", n_pad, "n", n, rb_layout_kernel_group(dtype))))
		return err;
	if (k_slice < KBLOCK || k_slice % KBLOCK)
		return rb_set_error(-EINVAL, "invalid k_slice %" PRId64 ": use a multiple of 32",
				    k_slice);
	return check_size(rb_layout_b_bytes(dtype, k_pad, n_pad), "weight buffer");
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
	b.es = in_esize(dtype);
	b.kg = rb_layout_kernel_group(dtype);
	b.k_pad = k_pad;
	b.n_pad = n_pad;
	b.k_slice = min64(k_slice, k_pad);
	b.stream = (uintptr_t)dst % 16 == 0;
	b.stream64 = (uintptr_t)dst % 64 == 0;
	/* Streams whole lines, else whole 16-byte vectors: a dst aligned to 16 bytes but not
	 * to 64 keeps the SSE2 blocks, whose stores stream. */
	b.avx512 = use_avx512() && (b.stream64 || !b.stream);
	groups = n_pad / b.kg;
	nthreads = resolve_threads(threads, rb_layout_b_bytes(dtype, k_pad, n_pad), groups);
	b.strip = b_strip_groups(&b, nthreads);
	run_parallel(fn, &b, groups, nthreads, b.strip);
	return 0;
}

int rb_layout_pack_b_sliced(void *dst, const void *b, enum rb_dtype dtype, int64_t k, int64_t n,
			    int64_t k_pad, int64_t n_pad, int64_t k_slice, int threads)
{
	int err = check_buffers(dst, b, __func__);

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
	int err = check_buffers(b, src, __func__);

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
			  in_esize(dtype);
	if (slice_k)
		*slice_k = min64(k_slice, k_pad - k0);
	return 0;
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
	return mul3((channels + c2 - 1) / c2, rows, ATOM);
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
	if (rb_layout_c_bytes(esize, t->cube_rows, t->n1 - t->n0) && mul3(t->m1, ldc, 4))
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
	if ((err = check_buffers(c, cube, func)) || (err = check_tile(t, ldc)))
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

/* --- rknn matmul API (perf-anchors §1.4, §1.5) ----------------------------------------- */

/* §1.5: RK3588 needs K % 32 == 0, and N % 16 (fp16) / N % 32 (int8) == 0. */
static int check_rknn_k(enum rb_dtype dtype, int64_t k)
{
	int err;

	if ((err = check_dtype(dtype)) || (err = check_dim("k", k)))
		return err;
	if (k % KBLOCK)
		return rb_set_error(-EINVAL,
				    "invalid k %" PRId64 " for the rknn matmul API: "
				    "use a multiple of 32 (pad with zeros)",
				    k);
	return 0;
}

static int check_rknn_kn(enum rb_dtype dtype, int64_t k, int64_t n)
{
	int64_t kg = rb_layout_kernel_group(dtype);
	int err;

	if ((err = check_rknn_k(dtype, k)) || (err = check_dim("n", n)))
		return err;
	if (n % kg)
		return rb_set_error(-EINVAL,
				    "invalid n %" PRId64 " for the rknn matmul API: "
				    "use a multiple of %" PRId64 " for %s",
				    n, kg, dtype == RB_DTYPE_INT8 ? "int8" : "fp16");
	return 0;
}

int rb_layout_rknn_pack_a(void *dst, const void *a, enum rb_dtype dtype, int64_t m, int64_t k,
			  int threads)
{
	int err = check_rknn_k(dtype, k);

	return err ? err : rb_layout_pack_a(dst, a, dtype, m, k, k, threads);
}

int rb_layout_rknn_unpack_a(void *a, const void *src, enum rb_dtype dtype, int64_t m, int64_t k,
			    int threads)
{
	int err = check_rknn_k(dtype, k);

	return err ? err : rb_layout_unpack_a(a, src, dtype, m, k, k, threads);
}

int rb_layout_rknn_pack_b(void *dst, const void *b, enum rb_dtype dtype, int64_t k, int64_t n,
			  int threads)
{
	int err = check_rknn_kn(dtype, k, n);

	return err ? err
		   : rb_layout_pack_b_sliced(dst, b, dtype, k, n, k, n, RB_LAYOUT_RKNN_K_SEGMENT,
					     threads);
}

int rb_layout_rknn_unpack_b(void *b, const void *src, enum rb_dtype dtype, int64_t k, int64_t n,
			    int threads)
{
	int err = check_rknn_kn(dtype, k, n);

	return err ? err
		   : rb_layout_unpack_b_sliced(b, src, dtype, k, n, k, n, RB_LAYOUT_RKNN_K_SEGMENT,
					       threads);
}

static int check_rknn_c(const void *dst, const void *src, size_t esize, int64_t m, int64_t n,
			const char *func)
{
	int err;

	if ((err = check_buffers(dst, src, func)) || (err = check_dim("m", m)) ||
	    (err = check_dim("n", n)))
		return err;
	if (esize != 2 && esize != 4)
		return rb_set_error(-EINVAL, "invalid C element size %zu: use 4 or 2", esize);
	if (n % rb_layout_c2(esize))
		return rb_set_error(-EINVAL,
				    "invalid n %" PRId64 " for the rknn native C: use a "
				    "multiple of %" PRId64,
				    n, rb_layout_c2(esize));
	return check_size(rb_layout_c_bytes(esize, m, n), "output cube");
}

int rb_layout_rknn_pack_c(void *dst, const void *c, size_t esize, int64_t m, int64_t n, int threads)
{
	int err = check_rknn_c(dst, c, esize, m, n, __func__);

	if (err)
		return err;
	cube_pack(dst, c, esize, m, n, n, threads);
	return 0;
}

int rb_layout_rknn_unpack_c(void *c, const void *src, size_t esize, int64_t m, int64_t n,
			    int threads)
{
	int err = check_rknn_c(c, src, esize, m, n, __func__);

	if (err)
		return err;
	cube_unpack(c, src, esize, m, n, threads);
	return 0;
}
