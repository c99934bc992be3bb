/* Data layouts of the NPU matmul and of the rknn matmul API (see layout.h): sizes,
 * checks, threads, A and the rknn API here, cubes and C in layout_cube.c, B in
 * layout_b.c, the kernels of each ISA family in layout_x86.h, layout_neon.h and
 * layout_generic.h (layout_isa.h picks one).
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
#include "numeric/layout_internal.h"

#define MAX_THREADS 64
/* Below this many bytes per thread, starting a thread costs more than it saves: a
 * create + join measured 25-45 µs (x86-64 VM), the time to convert about 1 MB, and
 * a job that fits in L2 runs at 20+ GB/s on one core. */
#define MIN_BYTES_PER_THREAD ((size_t)2 << 20)

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

size_t rb_layout_in_esize(enum rb_dtype dtype)
{
	return dtype == RB_DTYPE_INT8 ? 1 : 2;
}

size_t rb_layout_mul3(int64_t a, int64_t b, int64_t c)
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

int rb_layout_check_dtype(enum rb_dtype dtype)
{
	if (dtype == RB_DTYPE_FP16 || dtype == RB_DTYPE_INT8)
		return 0;
	return rb_set_error(-EINVAL, "invalid dtype %d: use fp16 or int8", (int)dtype);
}

int rb_layout_check_dim(const char *name, int64_t v)
{
	if (v >= 1 && v <= RB_SHAPE_DIM_MAX)
		return 0;
	return rb_set_error(-EINVAL, "invalid %s %" PRId64 ": must be between 1 and %" PRId64, name,
			    v, RB_SHAPE_DIM_MAX);
}

int rb_layout_check_pad(const char *name, int64_t pad, const char *dim, int64_t v, int64_t align)
{
	if (pad >= v && pad % align == 0 && pad <= RB_SHAPE_DIM_MAX)
		return 0;
	return rb_set_error(-EINVAL,
			    "invalid %s %" PRId64 " for %s %" PRId64 ": use a multiple of %" PRId64
			    " that is at least %s",
			    name, pad, dim, v, align, dim);
}

int rb_layout_check_buffers(const void *dst, const void *src, const char *func)
{
	if (dst && src)
		return 0;
	return rb_set_error(-EINVAL, "null buffer passed to '%s'", func);
}

int rb_layout_check_size(size_t bytes, const char *what)
{
	if (bytes)
		return 0;
	return rb_set_error(-EINVAL, "%s too large for this machine's address space", what);
}

/* --- threads ------------------------------------------------------------------------ */

typedef void (*range_fn)(const void *ctx, int64_t begin, int64_t end);

/* The work of rb_layout_run_parallel: [0, items) handed out `chunk` items at a time. */
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
int rb_layout_resolve_threads(int threads, size_t bytes, int64_t items)
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
void rb_layout_run_parallel(range_fn fn, const void *ctx, int64_t items, int threads, int64_t grain)
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
	return layout_avx512_supported() ? IMPL_AVX512 : IMPL_BASE;
}

bool rb_layout_use_avx512(void)
{
	int forced = atomic_load_explicit(&forced_impl, memory_order_relaxed);

	return (forced != IMPL_AUTO ? (enum impl)forced : best_impl()) == IMPL_AVX512;
}

/* The kernels of the base ISA: SSE2 on x86-64, NEON on aarch64, else scalar loops. */
static const char *base_name(void)
{
	return LAYOUT_BASE_NAME;
}

const char *rb_layout_impl(void)
{
	return rb_layout_use_avx512() ? "avx512" : base_name();
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

/* `count` (1 or 2) adjacent fp16 weight blocks: 32 channels (rows of B, pitch sp bytes)
 * × 16·count kernels -> [count][16][32] at d. Doing two blocks per pass consumes whole
 * 64-byte lines of each row of B while they are in L1. */

/* --- A --------------------------------------------------------------------------------- */

size_t rb_layout_a_bytes(enum rb_dtype dtype, int64_t m, int64_t k_pad)
{
	if (rb_layout_check_dtype(dtype) || k_pad < 0)
		return 0;
	return rb_layout_mul3(m, rb_layout_round_up(k_pad, rb_layout_c2(rb_layout_in_esize(dtype))),
			      (int64_t)rb_layout_in_esize(dtype));
}

static int check_a(const void *dst, const void *src, enum rb_dtype dtype, int64_t m, int64_t k,
		   int64_t k_pad, const char *func)
{
	int err;

	if ((err = rb_layout_check_buffers(dst, src, func)) ||
	    (err = rb_layout_check_dtype(dtype)) || (err = rb_layout_check_dim("m", m)) ||
	    (err = rb_layout_check_dim("k", k)) ||
	    (err = rb_layout_check_pad("k_pad", k_pad, "k", k, KBLOCK)))
		return err;
	return rb_layout_check_size(rb_layout_a_bytes(dtype, m, k_pad), "feature cube");
}

int rb_layout_pack_a(void *dst, const void *a, enum rb_dtype dtype, int64_t m, int64_t k,
		     int64_t k_pad, int threads)
{
	int err = check_a(dst, a, dtype, m, k, k_pad, __func__);

	if (err)
		return err;
	rb_layout_cube_pack(dst, a, rb_layout_in_esize(dtype), m, k, k_pad, threads);
	return 0;
}

int rb_layout_unpack_a(void *a, const void *src, enum rb_dtype dtype, int64_t m, int64_t k,
		       int64_t k_pad, int threads)
{
	int err = check_a(a, src, dtype, m, k, k_pad, __func__);

	if (err)
		return err;
	rb_layout_cube_unpack(a, src, rb_layout_in_esize(dtype), m, k, threads);
	return 0;
}

/* --- rknn matmul API (perf-anchors §1.4, §1.5) ----------------------------------------- */

/* §1.5: RK3588 needs K % 32 == 0, and N % 16 (fp16) / N % 32 (int8) == 0. */
static int check_rknn_k(enum rb_dtype dtype, int64_t k)
{
	int err;

	if ((err = rb_layout_check_dtype(dtype)) || (err = rb_layout_check_dim("k", k)))
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

	if ((err = check_rknn_k(dtype, k)) || (err = rb_layout_check_dim("n", n)))
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

	if ((err = rb_layout_check_buffers(dst, src, func)) ||
	    (err = rb_layout_check_dim("m", m)) || (err = rb_layout_check_dim("n", n)))
		return err;
	if (esize != 2 && esize != 4)
		return rb_set_error(-EINVAL, "invalid C element size %zu: use 4 or 2", esize);
	if (n % rb_layout_c2(esize))
		return rb_set_error(-EINVAL,
				    "invalid n %" PRId64 " for the rknn native C: use a "
				    "multiple of %" PRId64,
				    n, rb_layout_c2(esize));
	return rb_layout_check_size(rb_layout_c_bytes(esize, m, n), "output cube");
}

int rb_layout_rknn_pack_c(void *dst, const void *c, size_t esize, int64_t m, int64_t n, int threads)
{
	int err = check_rknn_c(dst, c, esize, m, n, __func__);

	if (err)
		return err;
	rb_layout_cube_pack(dst, c, esize, m, n, n, threads);
	return 0;
}

int rb_layout_rknn_unpack_c(void *c, const void *src, size_t esize, int64_t m, int64_t n,
			    int threads)
{
	int err = check_rknn_c(c, src, esize, m, n, __func__);

	if (err)
		return err;
	rb_layout_cube_unpack(c, src, esize, m, n, threads);
	return 0;
}
