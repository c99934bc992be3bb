#include "numeric/inputs.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fp16.h"
#include "host/limits.h"
#include "core/rng.h"
#include "core/util.h"

/* Exact data: A in {-4..4}, B in {-8/8..8/8} (see inputs.h for why). */
#define EXACT_A_MAX   4
#define EXACT_B_STEPS 8
/* Floats converted to fp16 per batch in the uniform fill (64 KiB on the stack). */
#define UNIFORM_BATCH 16384

static const char *const kind_names[] = {
    [RB_DATA_EXACT] = "exact",
    [RB_DATA_UNIFORM] = "uniform",
};

static int check_shape(const struct rb_shape *s)
{
	if (s->m < 1 || s->k < 1 || s->n < 1 || s->m > RB_SHAPE_DIM_MAX ||
	    s->k > RB_SHAPE_DIM_MAX || s->n > RB_SHAPE_DIM_MAX)
		return rb_set_error(-EINVAL,
				    "invalid shape %" PRId64 "x%" PRId64 "x%" PRId64
				    ": every dimension must be between 1 and 2^31",
				    s->m, s->k, s->n);
	if (s->dtype != RB_DTYPE_FP16 && s->dtype != RB_DTYPE_INT8)
		return rb_set_error(-EINVAL, "invalid dtype %d", (int)s->dtype);
	return 0;
}

/* Bytes of a rows×cols matrix, refusing sizes the address space (plus alignment
 * padding) cannot hold: on 32-bit machines even modest shapes overflow size_t. */
static int matrix_bytes(const char *what, int64_t rows, int64_t cols, size_t elem, size_t *bytes)
{
	/* Dimensions are <= 2^31, so the count fits in 62 bits. */
	uint64_t count = (uint64_t)rows * (uint64_t)cols;

	if (count > (SIZE_MAX - (RB_INPUTS_ALIGN - 1)) / elem)
		return rb_set_error(-EOVERFLOW,
				    "matrix %s (%" PRId64 "x%" PRId64 ", %zu-byte elements) is too "
				    "large for this machine's address space",
				    what, rows, cols, elem);
	*bytes = (size_t)count * elem;
	return 0;
}

/* The host copies of a matmul: A and B here, and the reference C and the device's C
 * that run and tune allocate next; refused now if the machine cannot hold them. */
static int check_memory(const struct rb_shape *s, size_t a, size_t b, size_t c)
{
	/* b is 0 when B is streamed: it is never held whole. */
	uint64_t need = rb_add_sat(rb_add_sat(a, b), rb_mul_sat(2, c));
	char what[160], na[32], nb[32], nc[32];

	snprintf(what, sizeof(what),
		 "shape %" PRId64 "x%" PRId64 "x%" PRId64 " %s (A %s, B %s, reference and output C "
		 "2 x %s)",
		 s->m, s->k, s->n, rb_dtype_name(s->dtype), rb_limits_bytes(a, na, sizeof(na)),
		 b ? rb_limits_bytes(b, nb, sizeof(nb)) : "streamed",
		 rb_limits_bytes(c, nc, sizeof(nc)));
	return rb_limits_check_memory(what, "host memory", need);
}

/* Big buffers on 2 MiB pages where the kernel gives them on request (transparent huge
 * pages set to "madvise", as on Debian). Packing B into the NPU layout reads 32 rows of
 * B at once, each in its own 4 KiB page: on huge pages it took 1.27x memcpy's time
 * instead of 1.51x (2048x8192) and 1.34x instead of 1.61x (2048x128256). */
#define HUGE_PAGE_BYTES ((size_t)2 << 20)

void *rb_inputs_alloc(size_t bytes)
{
	size_t align = bytes >= HUGE_PAGE_BYTES ? HUGE_PAGE_BYTES : RB_INPUTS_ALIGN;
	size_t rounded;
	void *p;

	if (bytes > SIZE_MAX - align)
		return NULL;
	/* aligned_alloc wants a size that is a multiple of the alignment */
	rounded = (bytes + align - 1) & ~(align - 1);
	p = aligned_alloc(align, rounded ? rounded : align);
#ifdef MADV_HUGEPAGE
	if (p && align == HUGE_PAGE_BYTES)
		madvise(p, rounded, MADV_HUGEPAGE); /* advice only: no error */
#endif
	return p;
}

/* Uniform index in [0, n) from the top 32 bits (bias below n / 2^32). */
static inline uint32_t pick(uint64_t r, uint32_t n)
{
	return (uint32_t)(((r >> 32) * n) >> 32);
}

/* dst[i] = lut[uniform index]; the splitmix stream is inlined rather than calling
 * rb_rng_next per element (same values), and the table replaces a float conversion. */
static void fill_lut16(uint16_t *dst, size_t count, uint64_t seed, const uint16_t *lut,
		       uint32_t n_lut)
{
	uint64_t state = seed;
	size_t i;

	for (i = 0; i < count; i++) {
		state += RB_RNG_GAMMA;
		dst[i] = lut[pick(rb_rng_mix(state), n_lut)];
	}
}

/* A: small integers; B: multiples of 1/EXACT_B_STEPS in [-1, 1] (see the top). */
static void exact_luts(uint16_t *lut_a, uint16_t *lut_b)
{
	for (int v = -EXACT_A_MAX; v <= EXACT_A_MAX; v++)
		lut_a[v + EXACT_A_MAX] = rb_fp16_from_f32((float)v);
	for (int v = -EXACT_B_STEPS; v <= EXACT_B_STEPS; v++)
		lut_b[v + EXACT_B_STEPS] = rb_fp16_from_f32((float)v / EXACT_B_STEPS);
}

/* Uniform in [-1, 1]: a 24-bit fraction is exact in fp32, then rounded to fp16 in
 * batches so the array conversion can use the CPU's instructions. */
static void fill_uniform_f16(uint16_t *dst, size_t count, uint64_t seed)
{
	float batch[UNIFORM_BATCH];
	uint64_t state = seed;
	size_t done, len, i;

	for (done = 0; done < count; done += len) {
		len = count - done < UNIFORM_BATCH ? count - done : UNIFORM_BATCH;
		for (i = 0; i < len; i++) {
			state += RB_RNG_GAMMA;
			batch[i] = (float)(rb_rng_mix(state) >> 40) * 0x1p-23f - 1.0f;
		}
		rb_fp16_from_f32_array(dst + done, batch, len);
	}
}

/* Uniform in [-128, 127] from the top byte. */
static void fill_i8(int8_t *dst, size_t count, uint64_t seed)
{
	uint64_t state = seed;
	size_t i;

	for (i = 0; i < count; i++) {
		state += RB_RNG_GAMMA;
		dst[i] = (int8_t)((int)(rb_rng_mix(state) >> 56) - 128);
	}
}

/* A block of a matrix to fill: rows×cols elements, row-major at dst, whose row r is
 * stream elements [first + r·stride, + cols). Element i of a stream comes from the
 * state seed + (i + 1)·GAMMA alone, so any block can be filled on its own with the same
 * values as the whole matrix (a whole matrix is one row of all its elements). */
struct fill_job {
	enum { FILL_I8, FILL_UNIFORM, FILL_LUT } how;
	uint64_t seed;
	const uint16_t *lut;
	uint32_t n_lut;
	void *dst;
	size_t first, stride, rows, cols;
};

static size_t fill_elem_size(const struct fill_job *j)
{
	return j->how == FILL_I8 ? 1 : 2;
}

/* Stream elements [lo, lo + len) into dst. */
static void fill_range(const struct fill_job *j, size_t lo, size_t len, void *dst)
{
	uint64_t seed = j->seed + (uint64_t)lo * RB_RNG_GAMMA;

	if (j->how == FILL_I8)
		fill_i8(dst, len, seed);
	else if (j->how == FILL_UNIFORM)
		fill_uniform_f16(dst, len, seed);
	else
		fill_lut16(dst, len, seed, j->lut, j->n_lut);
}

/* Large blocks (a 2048x128256 B is 263 M elements, seconds on one core) are filled on
 * every CPU, with at least FILL_PER_THREAD elements per thread (a thread costs tens of
 * microseconds; a million elements, about a millisecond): a block of several rows is
 * cut into runs of rows, a single row into ranges cut at multiples of 64 elements. */
#define FILL_PER_THREAD  (UINT64_C(1) << 20)
#define FILL_THREADS_MAX 16

/* Rows [r0, r1), columns [c0, c1) of a block. */
struct fill_part {
	const struct fill_job *job;
	size_t r0, r1, c0, c1;
	pthread_t tid;
};

static void fill_part(const struct fill_part *p)
{
	const struct fill_job *j = p->job;
	size_t es = fill_elem_size(j);

	for (size_t r = p->r0; r < p->r1; r++)
		fill_range(j, j->first + r * j->stride + p->c0, p->c1 - p->c0,
			   (char *)j->dst + (r * j->cols + p->c0) * es);
}

static void *fill_part_main(void *arg)
{
	fill_part(arg);
	return NULL;
}

static size_t min_size(size_t a, size_t b)
{
	return a < b ? a : b;
}

/* Part i of n: a run of rows, or (a single row) a range of columns. */
static struct fill_part part_of(const struct fill_job *j, size_t i, size_t n)
{
	size_t step;

	if (j->rows > 1) {
		step = (j->rows + n - 1) / n;
		return (struct fill_part){
		    j, min_size(i * step, j->rows), min_size((i + 1) * step, j->rows), 0, j->cols,
		    0};
	}
	step = ((j->cols + n - 1) / n + 63) & ~(size_t)63;
	return (struct fill_part){
	    j, 0, j->rows, min_size(i * step, j->cols), min_size((i + 1) * step, j->cols), 0};
}

static size_t fill_threads(const struct fill_job *j, int threads)
{
	long cpus = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t most = (uint64_t)j->rows * j->cols / FILL_PER_THREAD;
	size_t n = cpus < 1 ? 1 : cpus > FILL_THREADS_MAX ? FILL_THREADS_MAX : (size_t)cpus;

	n = most < n ? (size_t)most : n;
	n = j->rows > 1 && n > j->rows ? j->rows : n;
	return n ? n : 1;
}

/* The calling thread fills part 0 and any part no thread could be started for. */
static void fill_block(const struct fill_job *j, int threads)
{
	struct fill_part parts[FILL_THREADS_MAX];
	size_t n = fill_threads(j, threads), started = 0;

	for (size_t i = 1; i < n; i++) {
		parts[i] = part_of(j, i, n);
		if (pthread_create(&parts[i].tid, NULL, fill_part_main, &parts[i]) != 0)
			break;
		started = i;
	}
	parts[0] = part_of(j, 0, n);
	fill_part(&parts[0]);
	for (size_t i = started + 1; i < n; i++) {
		parts[i] = part_of(j, i, n);
		fill_part(&parts[i]);
	}
	for (size_t i = 1; i <= started; i++)
		pthread_join(parts[i].tid, NULL);
}

/* The two streams of `seed`: A's and B's (B does not depend on M). */
static void stream_seeds(uint64_t seed, uint64_t *a, uint64_t *b)
{
	struct rb_rng rng;

	rb_rng_init(&rng, seed);
	*a = rb_rng_next(&rng);
	*b = rb_rng_next(&rng);
}

/* How a matrix (A, or B with is_b) of the shape's dtype and `kind` is made from the
 * stream of `seed`; exact data takes its values from lut, filled here. */
static struct fill_job matrix_job(enum rb_dtype dtype, enum rb_data_kind kind, uint64_t seed,
				  bool is_b, uint16_t lut[2 * EXACT_B_STEPS + 1])
{
	struct fill_job j = {FILL_LUT, seed, lut, 0, NULL, 0, 0, 1, 0};
	uint16_t lut_a[2 * EXACT_A_MAX + 1], lut_b[2 * EXACT_B_STEPS + 1];

	if (dtype == RB_DTYPE_INT8) {
		j.how = FILL_I8;
	} else if (kind == RB_DATA_UNIFORM) {
		j.how = FILL_UNIFORM;
	} else {
		exact_luts(lut_a, lut_b);
		j.n_lut = is_b ? ARRAY_SIZE(lut_b) : ARRAY_SIZE(lut_a);
		memcpy(lut, is_b ? lut_b : lut_a, j.n_lut * sizeof(*lut));
	}
	return j;
}

/* count elements of the stream, in order, into dst. */
static void fill_whole(struct fill_job j, void *dst, size_t count)
{
	j.dst = dst;
	j.cols = count;
	fill_block(&j, 0);
}

static atomic_uint_fast64_t next_serial;

/* A is made now; B too unless streamed (then only its stream is kept). */
static int inputs_init(struct rb_inputs *in, const struct rb_shape *shape, uint64_t seed,
		       enum rb_data_kind kind, bool streamed)
{
	size_t elem, bytes_a = 0, bytes_b = 0, bytes_c = 0;
	uint16_t lut[2 * EXACT_B_STEPS + 1];
	uint64_t seed_a, seed_b;
	int err;

	memset(in, 0, sizeof(*in));
	err = check_shape(shape);
	if (err)
		return err;
	elem = rb_dtype_in_size(shape->dtype);
	err = matrix_bytes("A", shape->m, shape->k, elem, &bytes_a);
	if (!err)
		err = matrix_bytes("B", shape->k, shape->n, elem, &bytes_b);
	/* Refuse now a C that can never be allocated, before filling A and B. */
	if (!err)
		err = matrix_bytes("C", shape->m, shape->n, rb_dtype_out_size(shape->dtype),
				   &bytes_c);
	if (!err)
		err = check_memory(shape, bytes_a, streamed ? 0 : bytes_b, bytes_c);
	if (err)
		return err;
	in->a = rb_inputs_alloc(bytes_a);
	in->b = streamed ? NULL : rb_inputs_alloc(bytes_b);
	if (!in->a || (!streamed && !in->b)) {
		rb_inputs_release(in);
		return rb_set_error(-ENOMEM, "out of memory for A (%zu bytes) and B (%zu bytes)",
				    bytes_a, streamed ? 0 : bytes_b);
	}
	in->shape = *shape;
	in->serial = atomic_fetch_add(&next_serial, 1) + 1;
	stream_seeds(seed, &seed_a, &seed_b);
	in->b_seed = seed_b;
	in->kind = kind;
	in->b_streamed = streamed;
	fill_whole(matrix_job(shape->dtype, kind, seed_a, false, lut), in->a, bytes_a / elem);
	if (!streamed)
		fill_whole(matrix_job(shape->dtype, kind, seed_b, true, lut), in->b,
			   bytes_b / elem);
	return 0;
}

int rb_inputs_init(struct rb_inputs *in, const struct rb_shape *shape, uint64_t seed,
		   enum rb_data_kind kind)
{
	return inputs_init(in, shape, seed, kind, false);
}

int rb_inputs_init_streamed(struct rb_inputs *in, const struct rb_shape *shape, uint64_t seed,
			    enum rb_data_kind kind)
{
	return inputs_init(in, shape, seed, kind, true);
}

bool rb_inputs_has_b(const struct rb_inputs *in)
{
	return in && (in->b || in->b_streamed);
}

/* Copies a block of a held B, row by row. */
static void copy_b_block(const struct rb_inputs *in, int64_t k0, int64_t rows, int64_t n0,
			 int64_t cols, void *dst)
{
	size_t es = rb_dtype_in_size(in->shape.dtype), n = (size_t)in->shape.n;

	for (size_t r = 0; r < (size_t)rows; r++)
		memcpy((char *)dst + r * (size_t)cols * es,
		       (const char *)in->b + (((size_t)k0 + r) * n + (size_t)n0) * es,
		       (size_t)cols * es);
}

void rb_inputs_b_block(const struct rb_inputs *in, int64_t k0, int64_t rows, int64_t n0,
		       int64_t cols, void *dst, int threads)
{
	uint16_t lut[2 * EXACT_B_STEPS + 1];
	struct fill_job j;

	if (!in->b_streamed) {
		copy_b_block(in, k0, rows, n0, cols, dst);
		return;
	}
	j = matrix_job(in->shape.dtype, in->kind, in->b_seed, true, lut);
	j.dst = dst;
	j.first = (size_t)k0 * (size_t)in->shape.n + (size_t)n0;
	j.stride = (size_t)in->shape.n;
	j.rows = (size_t)rows;
	j.cols = (size_t)cols;
	fill_block(&j, threads);
}

void rb_inputs_release(struct rb_inputs *in)
{
	free(in->a);
	free(in->b);
	memset(in, 0, sizeof(*in));
}

void *rb_output_alloc(const struct rb_shape *shape)
{
	size_t bytes = 0;
	void *c;
	int err;

	err = check_shape(shape);
	if (!err)
		err =
		    matrix_bytes("C", shape->m, shape->n, rb_dtype_out_size(shape->dtype), &bytes);
	if (err) {
		errno = -err;
		return NULL;
	}
	c = rb_inputs_alloc(bytes);
	if (!c) {
		rb_set_error(-ENOMEM, "out of memory for output C (%zu bytes)", bytes);
		errno = ENOMEM;
		return NULL;
	}
	memset(c, RB_OUTPUT_POISON, bytes);
	return c;
}

int rb_data_kind_parse(const char *text, enum rb_data_kind *out)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(kind_names); i++) {
		if (strcmp(text, kind_names[i]) == 0) {
			*out = (enum rb_data_kind)i;
			return 0;
		}
	}
	return rb_set_error(-EINVAL, "unknown data kind '%s'; use exact or uniform", text);
}

const char *rb_data_kind_name(enum rb_data_kind kind)
{
	if ((unsigned)kind >= ARRAY_SIZE(kind_names))
		return "unknown";
	return kind_names[kind];
}

/* ---- B by blocks of columns, on every CPU ---- */

#define COLUMN_THREADS_MAX 64

struct column_walk {
	const struct rb_inputs *in;
	int64_t width;
	rb_inputs_block_fn fn;
	void *ctx;
	atomic_int_fast64_t next; /* the next block to take */
	pthread_mutex_t lock;     /* orders the first failure's err and reason */
	atomic_int err;
	char reason[256];
};

/* The first error wins; its message goes back to the calling thread. */
static void column_walk_fail(struct column_walk *w, int err)
{
	pthread_mutex_lock(&w->lock);
	if (!atomic_load(&w->err)) {
		atomic_store(&w->err, err);
		snprintf(w->reason, sizeof(w->reason), "%s", rb_last_error());
	}
	pthread_mutex_unlock(&w->lock);
}

/* Takes blocks in turn until none is left or one failed; each worker has its own. */
static void *column_worker(void *arg)
{
	struct column_walk *w = arg;
	const struct rb_shape *s = &w->in->shape;
	void *block = malloc((size_t)(s->k * w->width) * rb_dtype_in_size(s->dtype));
	int64_t n0, cols;
	int err;

	if (!block) {
		column_walk_fail(w, rb_set_error(-ENOMEM, "out of memory for a block of B"));
		return NULL;
	}
	while (!atomic_load(&w->err) && (n0 = atomic_fetch_add(&w->next, 1) * w->width) < s->n) {
		cols = s->n - n0 < w->width ? s->n - n0 : w->width;
		rb_inputs_b_block(w->in, 0, s->k, n0, cols, block, 1);
		err = w->fn(w->ctx, block, n0, cols);
		if (err)
			column_walk_fail(w, err);
	}
	free(block);
	return NULL;
}

int rb_inputs_b_columns(const struct rb_inputs *in, int64_t width, int threads,
			rb_inputs_block_fn fn, void *ctx)
{
	struct column_walk w = {.in = in, .width = width, .fn = fn, .ctx = ctx};
	pthread_t tids[COLUMN_THREADS_MAX];
	long cpus = threads > 0 ? threads : sysconf(_SC_NPROCESSORS_ONLN);
	int64_t blocks = (in->shape.n + width - 1) / width;
	int n = cpus < 1 ? 1 : cpus > COLUMN_THREADS_MAX ? COLUMN_THREADS_MAX : (int)cpus;
	int started = 0;

	n = blocks < n ? (int)blocks : n;
	atomic_init(&w.next, 0);
	atomic_init(&w.err, 0);
	pthread_mutex_init(&w.lock, NULL);
	/* A worker that cannot be started leaves its blocks to the others. */
	while (started + 1 < n && pthread_create(&tids[started], NULL, column_worker, &w) == 0)
		started++;
	column_worker(&w);
	for (int i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	pthread_mutex_destroy(&w.lock);
	return atomic_load(&w.err) ? rb_set_error(atomic_load(&w.err), "%s", w.reason) : 0;
}
