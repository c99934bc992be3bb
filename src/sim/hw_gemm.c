/* The arithmetic of a task: the 1×1 convolution C = A·B read and written in the NPU's
 * own layouts (npu-facts §b.2-§b.4), blocked and multi-threaded like a GEMM.
 *
 * Accumulation order, fixed per output element whatever the threads, the blocking, the
 * kernel variant or the split of a matmul into tasks along M or N (the silicon's order
 * is unknown, open question 1):
 *   fp16: channel k goes to lane k mod 8; each lane sums its products in increasing k,
 *   in fp32, from +0. The element is ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7))
 *   in fp32, rounded to fp16 (nearest, ties to even) for fp16 output. A product of two
 *   fp16 (or int8) values is exact in fp32, so fused and unfused multiply-adds agree and
 *   every kernel variant gives the same bits.
 *   int8: exact, int32 modulo 2^32. Within a pass of KC channels the lane sums are exact
 *   in fp32 (|sum| <= 32·2^14 < 2^24); they are added to int32 lanes after each pass.
 *
 * Blocking: work items of ROWS pixels × KERNELS kernels are handed to threads by an
 * atomic counter; an item runs over the channels in passes of KC. Each pass converts
 * the item's feature rows and weight blocks to fp32 tiles that keep the NPU's order
 * (A: planes of 8 channels × rows, straight from the NC1HWC2 surfaces, or the whole row
 * panel at once when several kernel panels share it; B: blocks of kg kernels × 32
 * channels, straight from the weight layout, or in pairs of kernels for AVX-512), then
 * an MR×NR register-blocked kernel adds into per-element lane accumulators. Kernel
 * families, picked at run time (rb_sim_gemm_force_impl picks one for tests): portable
 * (GCC vector extensions, 8-lane multiply-adds), avx2 (the same built for AVX2+FMA),
 * avx512 (two kernels' 8 lanes per register, see kern_avx512). The item's results go
 * to memory through the DPU address model when its last pass ends. Items of one row
 * panel (M <= 3: decode) would use a B tile once; on x86 they skip it: a direct kernel
 * converts B's vectors from the weights in registers (AVX2/F16C: strips of 4 kernels;
 * AVX-512: strips of 16, each weight block read once from start to end, see d512_body).
 *
 * From task to task a core keeps (struct rb_sim_gemm_mem) its workers' scratch and the
 * weights its last task converted, which a task with WEIGHT_REUSE computes from, as
 * the silicon computes from its CBUF (see plan_wcache). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/fp16.h"
#include "core/util.h"
#include "hw/task.h"
#include "numeric/layout.h"
#include "sim/hw_gemm_kern.h"
#include "sim/npu_internal.h"

#define ATOM 16 /* bytes of a cube atom (§b.1) */

/* The most a thread's scratch holds of A converted (a row panel, every channel). */
#define A_WHOLE_BYTES ((size_t)2 << 20)

/* Below this many multiply-adds per thread, starting a thread costs more than it saves. */
#define MIN_MACS_PER_THREAD (INT64_C(1) << 20)
#define MAX_THREADS         256

/* ---- driver --------------------------------------------------------------------- */

struct ctx {
	const struct rb_sim_gemm *g;
	struct kern_ops ops;
	int64_t pixels, kernel_items, items;
	int64_t kg, bpe;
	bool dense; /* a surface's pixels are 16 bytes apart */
	/* The weights' tiles for every kernel panel and pass, converted (see plan_wcache):
	 * read from (wcache_use) or, by the items of the first row panel, written to
	 * (wcache_fill); NULL if neither. */
	float *wcache;
	bool wcache_use, wcache_fill;
	int64_t passes;
	atomic_llong next, done;
	atomic_int workers; /* started: each takes the next index */
};

/* A worker's buffers; kept in the core's rb_sim_gemm_mem from task to task. */
struct rb_sim_scratch {
	float *a, *b;
	void *acc;
	size_t a_cap;   /* floats */
	bool a_whole;   /* a holds every channel of a row panel, not one pass */
	int64_t a_rows; /* the first row of the panel a holds, or -1 */
};

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* Pixel p of a feature surface (§b.2): line p / W, pixel p % W of it. */
static const uint8_t *pixel(const struct ctx *x, const uint8_t *surf, int64_t p)
{
	const struct rb_sim_gemm *g = x->g;

	return surf + (p / g->width) * g->a_line + (p % g->width) * ATOM;
}

/* convert_a pixel by pixel: int8 (two planes a surface) or surfaces with gaps. */
static void convert_a_pixels(const struct ctx *x, float *a, int64_t r0, int64_t rn, int64_t k0,
			     int64_t planes)
{
	const struct rb_sim_gemm *g = x->g;

	for (int64_t p = 0; p < planes; p++) {
		/* channel c's byte in the C2 channels of a surface's atom: a shift, where
		 * dividing by C2 (a variable) was most of convert_a's time on decode tasks */
		int64_t byte = (k0 + p * LANES) * x->bpe;
		const uint8_t *surf = g->a_surf[byte / ATOM];
		size_t off = (size_t)(byte % ATOM);

		for (int64_t i = 0; i < rn; i++) {
			const uint8_t *src = pixel(x, surf, r0 + i) + off;
			float *dst = a + p * A_PLANE + i * LANES;

			if (g->int8)
				x->ops.i8_to_f32(dst, src, LANES);
			else
				x->ops.f16_to_f32(dst, src, LANES);
		}
	}
}

/* Channels [k0, k0 + kc) of pixels [r0, r0 + rn) into planes of 8 channels × ROWS. */
static void convert_a(const struct ctx *x, float *a, int64_t r0, int64_t rn, int64_t k0, int64_t kc)
{
	const struct rb_sim_gemm *g = x->g;
	int64_t planes = DIV_UP(kc, LANES), tail = kc % LANES;

	/* fp16: C2 is 8 channels, a plane; a pass starts on a plane (k0 % 8 == 0) */
	if (!g->int8 && x->dense)
		x->ops.f16_planes(a, g->a_surf + k0 / LANES, (size_t)(r0 * ATOM), planes,
				  (size_t)(rn * LANES));
	else
		convert_a_pixels(x, a, r0, rn, k0, planes);
	/* channels past DATAIN_CHANNEL in the last plane take no part */
	for (int64_t i = 0; tail && i < rn; i++)
		memset(a + (planes - 1) * A_PLANE + i * LANES + tail, 0,
		       (size_t)(LANES - tail) * sizeof(float));
}

/* Where kernel r's 8 channels of plane s of block bl are in a converted kernel group:
 * in the weights' order (kernel by kernel, 32 channels each), or in pairs of kernels
 * (plane by plane, the pair's two vectors side by side). */
static int64_t b_vector(bool pairs, int64_t kg, int64_t bl, int64_t r, int64_t s)
{
	if (pairs)
		return (bl * kg + r / 2 * 2) * K_BLOCK + s * 2 * LANES + r % 2 * LANES;
	return (bl * kg + r) * K_BLOCK + s * LANES;
}

/* Channels [k0, k0 + kc) of kernels [n0, n0 + nn): per kernel group, its blocks. */
static void convert_b(const struct ctx *x, float *b, int64_t n0, int64_t nn, int64_t k0, int64_t kc)
{
	const struct rb_sim_gemm *g = x->g;
	int64_t kg = x->kg, blocks = DIV_UP(kc, K_BLOCK), tail = kc % LANES;
	int64_t last = (kc - 1) / K_BLOCK, plane = (kc - 1) % K_BLOCK / LANES;
	size_t count = (size_t)(blocks * kg * K_BLOCK);
	pairs_fn pairs = g->int8 ? x->ops.pairs_i8 : x->ops.pairs_f16;

	for (int64_t q = 0; q < DIV_UP(nn, kg); q++) {
		const uint8_t *src = g->b + (n0 / kg + q) * kg * g->kernel_bytes +
				     k0 / K_BLOCK * kg * K_BLOCK * x->bpe;
		float *dst = b + q * KC * kg;

		if (pairs)
			pairs(dst, src, kg, blocks);
		else if (g->int8)
			x->ops.i8_to_f32(dst, src, count);
		else
			x->ops.f16_to_f32(dst, src, count);
		for (int64_t r = 0; tail && r < kg; r++)
			memset(dst + b_vector(pairs != NULL, kg, last, r, plane) + tail, 0,
			       (size_t)(LANES - tail) * sizeof(float));
	}
}

/* The direct kernel of this item, or NULL: it needs whole planes of channels (the
 * tile path zeroes the lanes past DATAIN_CHANNEL) and a single panel of rows. */
static kern_fn direct_kernel(const struct ctx *x, int64_t rn)
{
	const struct rb_sim_gemm *g = x->g;

	if (rn > x->ops.dmr || g->channels % LANES)
		return NULL;
	return g->int8 ? x->ops.direct_i8 : x->ops.direct_f16;
}

/* Where kernel n0 + j's block of channel k0 is in the weights (§b.3). */
static const uint8_t *weights_at(const struct ctx *x, int64_t n, int64_t k0)
{
	return x->g->b + n / x->kg * x->kg * x->g->kernel_bytes +
	       (k0 / K_BLOCK * x->kg + n % x->kg) * K_BLOCK * x->bpe;
}

/* a, b: the pass's first plane of A, its tile of B (NULL for the direct kernels). */
static void multiply(const struct ctx *x, const struct rb_sim_scratch *s, const float *a,
		     const float *b, int64_t rn, int64_t n0, int64_t nn, int64_t k0, int64_t kc)
{
	const struct kern_ops *o = &x->ops;
	kern_fn direct = direct_kernel(x, rn), fn = direct ? direct : o->fn;
	int64_t mr = direct ? o->dmr : o->mr, nr = direct ? o->dnr : o->nr;
	struct kargs k = {
	    .steps = DIV_UP(kc, LANES),
	    .b_block = x->kg * K_BLOCK,
	    .w_block = x->kg * K_BLOCK * x->bpe,
	    .acc_row = KERNELS * LANES,
	};

	/* j is a multiple of nr, even: the pairs layout's kernel j is at the same place */
	for (int64_t j = 0; j < nn; j += nr) {
		k.b = b ? b + j / x->kg * KC * x->kg + j % x->kg * K_BLOCK : NULL;
		k.w = weights_at(x, n0 + j, k0);
		for (int64_t i = 0; i < rn; i += mr) {
			k.a = a + i * LANES;
			k.acc = (float *)s->acc + (i * KERNELS + j) * LANES;
			fn(&k, (int)min64(mr, rn - i), (int)min64(nr, nn - j), x->g->int8);
		}
	}
}

/* cnt channels of one pixel, their sums' bits in sums: one atom of the output (§b.4). */
static void store_atom(const struct rb_sim_gemm *g, uint8_t *dst, const uint32_t *sums, int64_t cnt)
{
	float v;
	uint16_t h;

	if (g->out_prec != RB_PREC_FP16) {
		/* a whole atom in one 16-byte move, not a library call of a variable size */
		if (cnt * 4 == ATOM)
			memcpy(dst, sums, ATOM);
		else
			memcpy(dst, sums, (size_t)cnt * 4);
		return;
	}
	for (int64_t t = 0; t < cnt; t++) {
		memcpy(&v, &sums[t], 4);
		h = rb_fp16_from_f32(v);
		memcpy(dst + t * 2, &h, 2);
	}
}

/* The DPU's write (§b.4): SIZE_E of the pixel's line (first, middle, last) says which
 * sub-surfaces of each KB-channel group are written. */
static void write_out(const struct ctx *x, const struct rb_sim_scratch *s, int64_t r0, int64_t rn,
		      int64_t n0, int64_t nn)
{
	const struct rb_sim_gemm *g = x->g;
	int64_t c2 = g->c2_out, atoms = DIV_UP(nn, c2);
	uint8_t *surf[KERNELS];
	unsigned sub[KERNELS];
	uint32_t sums[KERNELS];

	/* each atom of channels: its surface and sub-surface, the same for every pixel */
	for (int64_t t = 0; t < atoms; t++) {
		int64_t n = n0 + t * c2;

		surf[t] = g->c_surf[n / c2];
		sub[t] = (unsigned)(n % g->kb / c2);
	}
	for (int64_t i = 0; i < rn; i++) {
		int64_t p = r0 + i, h = p / g->width, w = p % g->width;
		unsigned e = g->size_e[h == 0 ? 0 : h == g->height - 1 ? 2 : 1];
		size_t off = (size_t)((h * (g->width + g->notch) + w) * ATOM);

		x->ops.reduce(sums, (const float *)s->acc + i * KERNELS * LANES, nn,
			      g->out_prec == RB_PREC_INT32);
		for (int64_t t = 0; t < atoms; t++)
			if (surf[t] && sub[t] <= e)
				store_atom(g, surf[t] + off, sums + t * c2, min64(c2, nn - t * c2));
	}
}

/* The pass's tile of B for the item at rows r0, kernels n0: from the cache of the
 * weights, converted into it, or converted into the scratch; NULL for the direct
 * kernels, which read the weights. */
static const float *b_tile(const struct ctx *x, struct rb_sim_scratch *s, int64_t r0, int64_t rn,
			   int64_t n0, int64_t k0, int64_t kc)
{
	int64_t nn = min64(KERNELS, x->g->kernels - n0);
	float *cached = NULL;

	if (direct_kernel(x, rn))
		return NULL;
	if (x->wcache)
		cached = x->wcache + (n0 / KERNELS * x->passes + k0 / KC) * KC * KERNELS;
	if (x->wcache_use)
		return cached;
	if (x->wcache_fill && r0 == 0) {
		convert_b(x, cached, n0, nn, k0, kc);
		return cached;
	}
	convert_b(x, s->b, n0, nn, k0, kc);
	return s->b;
}

/* Items are handed out kernel panel by kernel panel: a thread's next item often has
 * the same rows, whose A it then converts once for every channel, if that fits. */
static void run_item(const struct ctx *x, struct rb_sim_scratch *s, int64_t item)
{
	const struct rb_sim_gemm *g = x->g;
	int64_t r0 = item / x->kernel_items * ROWS, n0 = item % x->kernel_items * KERNELS;
	int64_t rn = min64(ROWS, x->pixels - r0), nn = min64(KERNELS, g->kernels - n0);

	if (s->a_whole && s->a_rows != r0) {
		convert_a(x, s->a, r0, rn, 0, g->channels);
		s->a_rows = r0;
	}
	/* The direct kernels need no tile of B: with A whole, fp16 takes one pass of every
	 * channel (int8 keeps passes of KC, within which lane sums are exact, see the top). */
	int64_t pass = s->a_whole && !g->int8 && direct_kernel(x, rn) ? g->channels : KC;

	memset(s->acc, 0, (size_t)(rn * KERNELS * LANES) * sizeof(float));
	for (int64_t k0 = 0; k0 < g->channels; k0 += pass) {
		int64_t kc = min64(pass, g->channels - k0);
		const float *a = s->a;

		if (s->a_whole)
			a += k0 / LANES * A_PLANE;
		else
			convert_a(x, s->a, r0, rn, k0, kc);
		const float *b = b_tile(x, s, r0, rn, n0, k0, kc);

		multiply(x, s, a, b, rn, n0, nn, k0, kc);
	}
	write_out(x, s, r0, rn, n0, nn);
}

static void *alloc_floats(size_t n)
{
	return aligned_alloc(64, (n * sizeof(float) + 63) & ~(size_t)63);
}

/* A row panel of A for every channel, when several kernel panels may use it and it
 * takes at most A_WHOLE_BYTES (K <= 5461); else one pass of it, which stays in cache. A
 * scratch kept from an earlier task is reused if big enough. */
static int scratch_alloc(const struct ctx *x, struct rb_sim_scratch *s)
{
	size_t whole = (size_t)DIV_UP(x->g->channels, LANES) * LANES * ROWS;
	size_t a = x->kernel_items > 1 && whole * sizeof(float) <= A_WHOLE_BYTES
		       ? whole
		       : (size_t)KC * ROWS;

	s->a_whole = a == whole;
	s->a_rows = -1;
	if (s->a && s->a_cap < a) {
		free(s->a);
		s->a = NULL;
	}
	if (!s->a) {
		s->a = alloc_floats(a);
		s->a_cap = s->a ? a : 0;
	}
	if (!s->b)
		s->b = alloc_floats((size_t)KC * KERNELS);
	if (!s->acc)
		s->acc = alloc_floats((size_t)ROWS * KERNELS * LANES);
	return s->a && s->b && s->acc ? 0 : -ENOMEM;
}

static void scratch_free(struct rb_sim_scratch *s)
{
	if (!s)
		return;
	free(s->a);
	free(s->b);
	free(s->acc);
}

/* Worker i's scratch: the core's i-th, made on first use, or (no room to keep it) a
 * fresh one the worker frees. */
static struct rb_sim_scratch *scratch_of(struct ctx *x, int i, struct rb_sim_scratch *own)
{
	struct rb_sim_gemm_mem *m = x->g->mem;

	if (!m || i >= m->scratch_n)
		return own;
	if (!m->scratch[i])
		m->scratch[i] = calloc(1, sizeof(*m->scratch[i]));
	return m->scratch[i] ? m->scratch[i] : own;
}

static void *worker(void *arg)
{
	struct ctx *x = arg;
	struct rb_sim_scratch own = {0}, *s = scratch_of(x, atomic_fetch_add(&x->workers, 1), &own);
	long long item;

	if (scratch_alloc(x, s) == 0) {
		while ((item = atomic_fetch_add(&x->next, 1)) < x->items) {
			run_item(x, s, item);
			atomic_fetch_add(&x->done, 1);
		}
	}
	if (s == &own)
		scratch_free(&own);
	return NULL;
}

/* Room for n workers' scratch in the core's memory (as many as fit if it cannot grow). */
static void scratch_pool(const struct ctx *x, int n)
{
	struct rb_sim_gemm_mem *m = x->g->mem;
	struct rb_sim_scratch **v;

	if (!m || n <= m->scratch_n)
		return;
	v = realloc(m->scratch, (size_t)n * sizeof(*v));
	if (!v)
		return;
	for (int i = m->scratch_n; i < n; i++)
		v[i] = NULL;
	m->scratch = v;
	m->scratch_n = n;
}

static int thread_count(const struct ctx *x)
{
	const struct rb_sim_gemm *g = x->g;
	double macs = (double)x->pixels * (double)g->channels * (double)g->kernels;
	int64_t n = g->threads < 1 ? 1 : g->threads;

	n = min64(n, min64(x->items, MAX_THREADS));
	if (macs / MIN_MACS_PER_THREAD < (double)n)
		n = (int64_t)(macs / MIN_MACS_PER_THREAD);
	return n < 1 ? 1 : (int)n;
}

/* WEIGHT_REUSE (§c): the task computes with what the CBUF holds, the weights the last
 * task on the core loaded. Their tiles as that task converted them are kept: a task
 * that claims reuse of the same weights (the same host pointer, shape and kernel
 * family) takes them as they are. Any other task empties the cache, and refills it
 * when its weights are resident (they fit the banks, so the next task may reuse them)
 * and its first row panel runs the tile kernels. The first row panel's items write
 * each tile once: no two threads write the same tile. */
static void plan_wcache(struct ctx *x)
{
	const struct rb_sim_gemm *g = x->g;
	struct rb_sim_gemm_mem *c = g->mem;
	size_t need = (size_t)(x->kernel_items * x->passes) * KC * KERNELS;

	if (!c)
		return;
	if (g->weight_reuse && c->valid && c->b == g->b && c->channels == g->channels &&
	    c->kernels == g->kernels && c->int8 == g->int8 && c->impl == x->ops.name) {
		x->wcache = c->f;
		x->wcache_use = true;
		return;
	}
	c->valid = false;
	if (!g->weights_resident || direct_kernel(x, min64(ROWS, x->pixels)))
		return;
	if (need > c->cap) {
		float *f = alloc_floats(need);

		if (!f)
			return; /* the scratch converts them, as without a cache */
		free(c->f);
		c->f = f;
		c->cap = need;
	}
	x->wcache = c->f;
	x->wcache_fill = true;
}

/* After the task: a cache it filled is the CBUF's weights for the next one. */
static void keep_wcache(const struct ctx *x)
{
	const struct rb_sim_gemm *g = x->g;
	struct rb_sim_gemm_mem *c = g->mem;

	if (!x->wcache_fill || atomic_load(&x->done) != x->items)
		return;
	c->valid = true;
	c->b = g->b;
	c->channels = g->channels;
	c->kernels = g->kernels;
	c->int8 = g->int8;
	c->impl = x->ops.name;
}

void rb_sim_gemm_mem_init(struct rb_sim_gemm_mem *m)
{
	memset(m, 0, sizeof(*m));
	rb_sim_pool_init(&m->pool);
}

void rb_sim_gemm_mem_free(struct rb_sim_gemm_mem *m)
{
	rb_sim_pool_release(&m->pool);
	free(m->f);
	for (int i = 0; i < m->scratch_n; i++) {
		scratch_free(m->scratch[i]);
		free(m->scratch[i]);
	}
	free(m->scratch);
	memset(m, 0, sizeof(*m));
}

static void worker_job(void *x, int job)
{
	(void)job; /* workers take the next item, whoever they are */
	worker(x);
}

/* Workers 1..n-1 run on the core's kept threads, this thread is worker 0. A thread that
 * cannot be started leaves its items to the others: slower, the same result. */
int rb_sim_gemm_run(const struct rb_sim_gemm *g)
{
	struct ctx x = {.g = g, .ops = rb_sim_gemm_kernels()};
	int n;

	x.pixels = g->width * g->height;
	x.kernel_items = DIV_UP(g->kernels, KERNELS);
	x.items = DIV_UP(x.pixels, ROWS) * x.kernel_items;
	x.kg = rb_layout_kernel_group(g->int8 ? RB_DTYPE_INT8 : RB_DTYPE_FP16);
	x.bpe = g->int8 ? 1 : 2;
	x.dense = g->a_line == ATOM * g->width;
	x.passes = DIV_UP(g->channels, KC);
	plan_wcache(&x);
	atomic_init(&x.next, 0);
	atomic_init(&x.done, 0);
	atomic_init(&x.workers, 0);
	n = thread_count(&x);
	scratch_pool(&x, n);
	if (g->mem)
		rb_sim_pool_run(&g->mem->pool, n, worker_job, &x);
	else
		worker(&x); /* no core to keep threads in: this thread takes every item */
	keep_wcache(&x);
	return atomic_load(&x.done) == x.items ? 0 : -ENOMEM;
}
