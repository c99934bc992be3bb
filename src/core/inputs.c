#include "core/inputs.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fp16.h"
#include "core/limits.h"
#include "core/rng.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

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
	uint64_t need = rb_add_sat(rb_add_sat(a, b), rb_mul_sat(2, c));
	char what[160], na[32], nb[32], nc[32];

	snprintf(what, sizeof(what),
		 "shape %" PRId64 "x%" PRId64 "x%" PRId64 " %s (A %s, B %s, reference and output C "
		 "2 x %s)",
		 s->m, s->k, s->n, rb_dtype_name(s->dtype), rb_limits_bytes(a, na, sizeof(na)),
		 rb_limits_bytes(b, nb, sizeof(nb)), rb_limits_bytes(c, nc, sizeof(nc)));
	return rb_limits_check_memory(what, "host memory", need);
}

/* aligned_alloc wants a size that is a multiple of the alignment. */
static void *alloc_aligned(size_t bytes)
{
	size_t rounded = (bytes + RB_INPUTS_ALIGN - 1) & ~(size_t)(RB_INPUTS_ALIGN - 1);

	return aligned_alloc(RB_INPUTS_ALIGN, rounded ? rounded : RB_INPUTS_ALIGN);
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

/* One matrix to fill: element i comes from the stream's state seed + (i + 1)·GAMMA
 * alone, so any range of it can be filled on its own, with the same values. */
struct fill_job {
	enum { FILL_I8, FILL_UNIFORM, FILL_LUT } how;
	void *dst;
	size_t count;
	uint64_t seed;
	const uint16_t *lut;
	uint32_t n_lut;
};

static void fill_range(const struct fill_job *j, size_t lo, size_t len)
{
	uint64_t seed = j->seed + (uint64_t)lo * RB_RNG_GAMMA;

	if (j->how == FILL_I8)
		fill_i8((int8_t *)j->dst + lo, len, seed);
	else if (j->how == FILL_UNIFORM)
		fill_uniform_f16((uint16_t *)j->dst + lo, len, seed);
	else
		fill_lut16((uint16_t *)j->dst + lo, len, seed, j->lut, j->n_lut);
}

/* Large matrices (a 2048x128256 B is 263 M elements, seconds on one core) are filled
 * on every CPU; the ranges are cut at multiples of 64 elements. */
#define FILL_PARALLEL_MIN (UINT64_C(1) << 22)
#define FILL_THREADS_MAX  16

struct fill_part {
	const struct fill_job *job;
	size_t lo, len;
	pthread_t tid;
};

static void *fill_part_main(void *arg)
{
	const struct fill_part *p = arg;

	fill_range(p->job, p->lo, p->len);
	return NULL;
}

static size_t part_len(const struct fill_job *j, size_t lo, size_t step)
{
	return j->count - lo < step ? j->count - lo : step;
}

/* Part i of n is [i·step, (i + 1)·step); the calling thread fills part 0 and any part
 * no thread could be started for. */
static void fill_matrix(const struct fill_job *j)
{
	struct fill_part parts[FILL_THREADS_MAX];
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = j->count < FILL_PARALLEL_MIN || cpus < 2 ? 1
		   : cpus > FILL_THREADS_MAX                ? FILL_THREADS_MAX
							    : (size_t)cpus;
	size_t step = ((j->count + n - 1) / n + 63) & ~(size_t)63, started = 0;

	for (size_t i = 1; i < n && i * step < j->count; i++) {
		parts[i] = (struct fill_part){j, i * step, part_len(j, i * step, step), 0};
		if (pthread_create(&parts[i].tid, NULL, fill_part_main, &parts[i]) != 0)
			break;
		started = i;
	}
	fill_range(j, 0, part_len(j, 0, step));
	for (size_t i = started + 1; i < n && i * step < j->count; i++)
		fill_range(j, i * step, part_len(j, i * step, step));
	for (size_t i = 1; i <= started; i++)
		pthread_join(parts[i].tid, NULL);
}

static void fill(struct rb_inputs *in, uint64_t seed, enum rb_data_kind kind)
{
	size_t na = (size_t)(in->shape.m * in->shape.k);
	size_t nb = (size_t)(in->shape.k * in->shape.n);
	uint16_t lut_a[2 * EXACT_A_MAX + 1], lut_b[2 * EXACT_B_STEPS + 1];
	struct fill_job a = {FILL_LUT, in->a, na, 0, lut_a, ARRAY_SIZE(lut_a)};
	struct fill_job b = {FILL_LUT, in->b, nb, 0, lut_b, ARRAY_SIZE(lut_b)};
	struct rb_rng rng;

	/* Separate streams: B does not depend on M. */
	rb_rng_init(&rng, seed);
	a.seed = rb_rng_next(&rng);
	b.seed = rb_rng_next(&rng);
	if (in->shape.dtype == RB_DTYPE_INT8)
		a.how = b.how = FILL_I8;
	else if (kind == RB_DATA_UNIFORM)
		a.how = b.how = FILL_UNIFORM;
	else
		exact_luts(lut_a, lut_b);
	fill_matrix(&a);
	fill_matrix(&b);
}

static atomic_uint_fast64_t next_serial;

int rb_inputs_init(struct rb_inputs *in, const struct rb_shape *shape, uint64_t seed,
		   enum rb_data_kind kind)
{
	size_t elem, bytes_a = 0, bytes_b = 0, bytes_c = 0;
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
		err = check_memory(shape, bytes_a, bytes_b, bytes_c);
	if (err)
		return err;
	in->a = alloc_aligned(bytes_a);
	in->b = alloc_aligned(bytes_b);
	if (!in->a || !in->b) {
		rb_inputs_release(in);
		return rb_set_error(-ENOMEM, "out of memory for A (%zu bytes) and B (%zu bytes)",
				    bytes_a, bytes_b);
	}
	in->shape = *shape;
	in->serial = atomic_fetch_add(&next_serial, 1) + 1;
	fill(in, seed, kind);
	return 0;
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
	c = alloc_aligned(bytes);
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
