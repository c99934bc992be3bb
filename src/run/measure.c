/* Verify, then measure, one shape on one engine (measure.h): run and tune measure
 * every config exactly the same way. */
#include "run/measure.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/debug.h"
#include "core/error.h"
#include "numeric/ref.h"

/* Bytes after C that must be left alone by the device: catches overruns. */
#define GUARD_BYTES 256
#define GUARD_BYTE  0xa5

/* Records why the measurement failed (m->reason and rb_last_error()); returns err. */
static int fail(struct rb_shape_measure *m, int err, const char *fmt, ...) RB_PRINTF(3, 4);

static int fail(struct rb_shape_measure *m, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m->reason, sizeof(m->reason), fmt, ap);
	va_end(ap);
	return rb_set_error(err, "%s", m->reason);
}

/* C with GUARD_BYTES of a known pattern behind it. */
static void *guarded_output(const struct rb_shape *s, size_t *bytes)
{
	unsigned char *c;

	*bytes = (size_t)s->m * (size_t)s->n * rb_dtype_out_size(s->dtype);
	c = malloc(*bytes + GUARD_BYTES);
	if (c)
		memset(c + *bytes, GUARD_BYTE, GUARD_BYTES);
	return c;
}

static bool guard_intact(const void *c, size_t bytes)
{
	const unsigned char *g = (const unsigned char *)c + bytes;

	for (size_t i = 0; i < GUARD_BYTES; i++)
		if (g[i] != GUARD_BYTE)
			return false;
	return true;
}

/* The reference C of streamed inputs (no B held), a block of B's columns at a time on
 * every reference thread: each block is made again from B's stream, never read back
 * from the device's packed copy, and multiplied by the reference GEMM. Each element of
 * C adds its K products as in one GEMM of the whole B (ref.c: the order follows K
 * alone), so the bits are the same; tests/unit/test_stream.c compares them. */
#define REF_BLOCK_BYTES (INT64_C(1) << 20)
#define REF_BLOCK_ALIGN 256 /* columns: a multiple of every kernel's width */

struct ref_blocks {
	const struct rb_inputs *in;
	void *expected;
};

static int reference_block(void *ctx, const void *block, int64_t n0, int64_t cols)
{
	const struct ref_blocks *r = ctx;
	const struct rb_shape *s = &r->in->shape;
	struct rb_shape part = {s->m, s->k, cols, s->dtype};
	size_t eo = rb_dtype_out_size(s->dtype);
	char *c =
	    s->m == 1 ? (char *)r->expected + (size_t)n0 * eo : malloc((size_t)(s->m * cols) * eo);
	int ret = c ? rb_ref_gemm(&part, r->in->a, block, c, 1)
		    : rb_set_error(-ENOMEM, "out of memory for a block of the reference C");

	for (int64_t i = 0; ret == 0 && s->m > 1 && i < s->m; i++)
		memcpy((char *)r->expected + (size_t)(i * s->n + n0) * eo,
		       c + (size_t)(i * cols) * eo, (size_t)cols * eo);
	if (s->m > 1)
		free(c);
	return ret;
}

/* Columns of B per reference block: about REF_BLOCK_BYTES of B, REF_BLOCK_ALIGN-aligned. */
static int64_t ref_block_width(const struct rb_shape *s)
{
	int64_t width = REF_BLOCK_BYTES / (s->k * (int64_t)rb_dtype_in_size(s->dtype));

	width = width / REF_BLOCK_ALIGN * REF_BLOCK_ALIGN;
	return width > REF_BLOCK_ALIGN ? width : REF_BLOCK_ALIGN;
}

static int reference_streamed(const struct rb_inputs *in, void *expected, int threads)
{
	struct ref_blocks r = {in, expected};

	return rb_inputs_b_columns(in, ref_block_width(&in->shape), threads, reference_block, &r);
}

/* RKNN_BENCH_DEBUG=corrupt_c: one wrong element in the middle of C, changed in the
 * block of C (rows [m0, m0 + rows), columns [n0, n0 + cols), row-major) that holds it. */
static void corrupt_block(const struct rb_shape *s, int64_t m0, int64_t rows, int64_t n0,
			  int64_t cols, void *c)
{
	int64_t i = s->m / 2 - m0, j = s->n / 2 - n0;
	size_t at = (size_t)(i * cols + j);

	if (i < 0 || i >= rows || j < 0 || j >= cols)
		return;
	if (s->dtype == RB_DTYPE_FP16)
		((float *)c)[at] += 1.0f;
	else
		((int32_t *)c)[at] += 1;
}

/* ---- C left on the device ----
 *
 * The modeled time of a run is its only sample (modeled_once), so after the checked
 * run nothing needs a host C: a large C stays in the device's output cube and is read
 * a block at a time, as it is checked (engine read_c: the same unpacking, the same
 * values). The process then holds C once, in the device's layout, instead of that and
 * a host copy. Every block read gets the guard and corrupt_c of a host C. Below
 * DEVICE_C_MIN_BYTES a host copy costs little and one whole unpack is the simplest. */
#define DEVICE_C_MIN_BYTES (INT64_C(16) << 20)

struct device_c {
	const struct rb_engine *engine;
	const struct rb_shape *shape;
};

/* A block of C into buf, followed by GUARD_BYTES that the read must leave alone. */
static int read_guarded(const struct device_c *d, int64_t m0, int64_t rows, int64_t n0,
			int64_t cols, void *buf)
{
	size_t bytes = (size_t)(rows * cols) * rb_dtype_out_size(d->shape->dtype);
	int ret;

	memset((char *)buf + bytes, GUARD_BYTE, GUARD_BYTES);
	ret = d->engine->ops->read_c(d->engine, m0, rows, n0, cols, buf);
	if (ret < 0) /* the device's fault, like a failed run (exit 3), unless memory ran out */
		return rb_set_error(ret == -ENOMEM ? ret : -EIO,
				    "reading C from device '%s' failed: %s", d->engine->ops->name,
				    rb_last_error());
	if (!guard_intact(buf, bytes))
		return rb_set_error(-EFAULT, "device '%s' wrote past the end of C",
				    d->engine->ops->name);
	if (rb_debug("corrupt_c"))
		corrupt_block(d->shape, m0, rows, n0, cols, buf);
	return 0;
}

/* rb_matmul_io.read_c of sample mode: a few elements at a time. */
static int read_few(void *ctx, int64_t m0, int64_t rows, int64_t n0, int64_t cols, void *dst)
{
	const struct device_c *d = ctx;
	size_t bytes = (size_t)(rows * cols) * rb_dtype_out_size(d->shape->dtype);
	_Alignas(64) unsigned char buf[64 * sizeof(float) + GUARD_BYTES];
	int ret;

	if (bytes > sizeof(buf) - GUARD_BYTES)
		return rb_set_error(-EINVAL, "a read of %zu bytes of C is not a few elements",
				    bytes);
	ret = read_guarded(d, m0, rows, n0, cols, buf);
	if (ret == 0)
		memcpy(dst, buf, bytes);
	return ret;
}

/* Full verification of the C on the device: per block of B's columns (made from B's
 * stream, or copied from the held B), the reference GEMM gives that block of the
 * expected C, the same block of C is read, and the two are compared at once
 * (rb_verify_full_block: the same verdict and numbers as one comparison of the whole).
 * The reference never reads the device's packed copy of B. */
struct device_blocks {
	struct device_c c;
	const struct rb_inputs *in;
	const struct rb_verify_opts *opts;
	struct rb_verify_result *res;
	pthread_mutex_t lock; /* res: blocks are compared on every reference thread */
};

static int compare_block(void *ctx, const void *block, int64_t n0, int64_t cols)
{
	struct device_blocks *d = ctx;
	const struct rb_shape *s = &d->in->shape;
	struct rb_shape part = {s->m, s->k, cols, s->dtype};
	size_t bytes = (size_t)(s->m * cols) * rb_dtype_out_size(s->dtype);
	void *expected = malloc(bytes), *got = malloc(bytes + GUARD_BYTES);
	struct rb_verify_block vb = {s->dtype, 0, n0, s->m, cols, got, expected};
	int ret = expected && got ? rb_ref_gemm(&part, d->in->a, block, expected, 1)
				  : rb_set_error(-ENOMEM, "out of memory for a block of C");

	if (ret == 0)
		ret = read_guarded(&d->c, 0, s->m, n0, cols, got);
	if (ret == 0) {
		pthread_mutex_lock(&d->lock);
		rb_verify_full_block(&vb, d->opts, d->res);
		pthread_mutex_unlock(&d->lock);
	}
	free(expected);
	free(got);
	return ret;
}

static int verify_device_full(const struct device_c *c, const struct rb_inputs *in,
			      const struct rb_verify_opts *opts, int threads,
			      struct rb_verify_result *res)
{
	struct device_blocks d = {.c = *c, .in = in, .opts = opts, .res = res};
	int ret;

	rb_verify_full_begin(res);
	pthread_mutex_init(&d.lock, NULL);
	ret = rb_inputs_b_columns(in, ref_block_width(&in->shape), threads, compare_block, &d);
	pthread_mutex_destroy(&d.lock);
	return ret;
}

/* Checks C from one run. The expected values never come from the code under test: the
 * CPU reference is checked against the naive loop, every other device against the
 * fast reference. */
static int verify_output(struct rb_shape_measure *m, const struct rb_engine *e,
			 const struct rb_inputs *in, const void *c, struct rb_verify_result *res)
{
	struct device_c dc = {e, &in->shape};
	struct rb_matmul_io io = {.shape = in->shape,
				  .a = in->a,
				  .b = in->b,
				  .c = c,
				  .b_stream = in,
				  .read_c = read_few,
				  .read_ctx = &dc};
	struct rb_verify_opts vo = *m->verify;
	const struct rb_shape *s = &in->shape;
	void *expected;
	int ret = 0;

	if (!e->ops->is_reference)
		vo.full_limit = RB_VERIFY_FULL_LIMIT_FAST;
	vo.mode = rb_verify_resolve_mode(&vo, s);
	if (vo.mode == RB_VERIFY_NONE) {
		rb_verify_skipped(res);
		return 0;
	}
	if (vo.mode == RB_VERIFY_SAMPLE) {
		ret = rb_verify_sample(&io, &vo, res);
		return ret < 0 ? fail(m, ret, "sampled verification failed: %s", rb_last_error())
			       : 0;
	}
	if (!c) {
		ret = verify_device_full(&dc, in, &vo, m->ref_threads, res);
		return ret < 0 ? fail(m, ret, "full verification failed: %s", rb_last_error()) : 0;
	}
	/* Only the blocked GEMM's result is kept: the CPU engine checks itself against the
	 * independent naive loop, every time. */
	bool keep = m->expected && !e->ops->is_reference;

	if (keep && *m->expected) {
		rb_verify_full(&io, *m->expected, &vo, res);
		return 0;
	}
	expected = rb_output_alloc(s);
	if (!expected)
		return fail(m, -ENOMEM, "out of memory for the reference C of %lldx%lldx%lld",
			    (long long)s->m, (long long)s->k, (long long)s->n);
	if (e->ops->is_reference && s->dtype == RB_DTYPE_FP16)
		rb_ref_naive_f16(in->a, in->b, expected, s->m, s->k, s->n);
	else if (e->ops->is_reference)
		rb_ref_naive_i8(in->a, in->b, expected, s->m, s->k, s->n);
	else if (in->b_streamed)
		ret = reference_streamed(in, expected, m->ref_threads);
	else
		ret = rb_ref_gemm(s, in->a, in->b, expected, m->ref_threads);
	if (ret == 0)
		rb_verify_full(&io, expected, &vo, res);
	if (ret == 0 && keep)
		*m->expected = expected;
	else
		free(expected);
	return ret < 0 ? fail(m, ret, "reference GEMM failed: %s", rb_last_error()) : 0;
}

/* A measured sample should last at least this long: shorter runs are batched (clock
 * resolution and per-call jitter would dominate). Modeled times need no batching. */
#define MIN_SAMPLE_US 1000.0
#define MAX_BATCH     100000

struct timed_run {
	struct rb_engine *engine;
	void *c;
	int batch; /* runs per sample */
	const volatile sig_atomic_t *stop;
};

/* One sample: `batch` runs back to back; the sample is their mean. */
static int timed_run(void *ctx, double *elapsed_us)
{
	struct timed_run *t = ctx;
	double sum = 0, us;
	int ret = 0;

	if (t->stop && *t->stop)
		return rb_set_error(-EINTR, "interrupted");
	for (int i = 0; ret == 0 && i < t->batch; i++) {
		ret = t->engine->ops->run(t->engine, t->c, &us);
		sum += us;
	}
	*elapsed_us = sum / t->batch;
	return ret;
}

/* Runs per sample so that a measured sample lasts >= MIN_SAMPLE_US. */
static int choose_batch(struct timed_run *t)
{
	double us;
	int ret;

	t->batch = 1;
	if (t->engine->ops->modeled)
		return 0;
	ret = timed_run(t, &us);
	if (ret == 0 && us < MIN_SAMPLE_US)
		t->batch =
		    us <= MIN_SAMPLE_US / MAX_BATCH ? MAX_BATCH : (int)(MIN_SAMPLE_US / us) + 1;
	return ret;
}

/* The first run of a shape: device errors, overruns and wrong results are caught
 * here, before anything is timed. *elapsed_us gets its time. Returns 0 or an exit code. */
static int checked_run(struct rb_shape_measure *m, struct rb_engine *e, const struct rb_inputs *in,
		       void *c, size_t bytes, struct rb_result *r, double *elapsed_us)
{
	struct rb_perfctr *perf = e->perf;
	int ret;

	e->perf = NULL; /* cold: not counted (measure.h) */
	ret = e->ops->run(e, c, elapsed_us);
	e->perf = perf;
	if (ret < 0) /* a timeout stays one: a tune does not cache it as the config's fault */
		return fail(m, ret == -ETIMEDOUT ? ret : -EIO, "device '%s' failed: %s",
			    e->ops->name, rb_last_error());
	if (c && !guard_intact(c, bytes))
		return fail(m, -EFAULT, "device '%s' wrote past the end of C", e->ops->name);
	if (c && rb_debug("corrupt_c"))
		corrupt_block(&in->shape, 0, in->shape.m, 0, in->shape.n, c);
	if (m->verify->mode != RB_VERIFY_NONE) /* else nothing to count */
		rb_perfctr_enter(e->perf, RB_PHASE_VERIFY);
	ret = verify_output(m, e, in, c, &r->verify);
	rb_perfctr_enter(e->perf, RB_PHASE_NONE);
	return ret;
}

static bool stopped(const struct rb_shape_measure *m)
{
	return m->stop && *m->stop;
}

/* A modeled time is a function of the program alone: every run of the same job gives
 * the same time (tests/unit/test_measure.c), so the checked run's time is
 * the one sample, and repeating it (--iters, --min-time) would only cost host time.
 * Host counters (--perf) and one phase alone (--phase) measure the host: they sample. */
static bool modeled_once(const struct rb_shape_measure *m, const struct rb_engine *e)
{
	return e->ops->modeled && !e->perf && m->phase_only == RB_PHASE_NONE;
}

/* The samples: whole runs (batched when short), or one phase alone (measure.h). */
static int sample(struct rb_shape_measure *m, struct timed_run *t, double checked_us,
		  struct rb_result *r)
{
	struct rb_measure_opts alone = {.iters = m->measure->iters, .max_iters = m->measure->iters};
	struct rb_engine *e = t->engine;
	int ret;

	if (modeled_once(m, e))
		return rb_stats_compute(&r->stats, &checked_us, 1);
	if (m->phase_only == RB_PHASE_NONE) {
		ret = choose_batch(t);
		return ret < 0 ? ret : rb_measure(m->measure, timed_run, t, &r->stats);
	}
	e->phase_only = m->phase_only;
	ret = rb_measure(&alone, timed_run, t, &r->stats);
	e->phase_only = RB_PHASE_NONE;
	r->phase = rb_phase_name(m->phase_only);
	r->modeled = false;
	return ret;
}

static int prepare(struct rb_shape_measure *m, struct rb_engine *e, const struct rb_inputs *in)
{
	const struct rb_shape *s = &in->shape;
	int ret = e->ops->prepare(e, in);

	if (ret == -EINVAL)
		return fail(m, -EINVAL, "cannot plan %lldx%lldx%lld %s: %s", (long long)s->m,
			    (long long)s->k, (long long)s->n, rb_dtype_name(s->dtype),
			    rb_last_error());
	if (ret == -ENOMEM)
		return fail(m, -ENOMEM, "%lldx%lldx%lld %s: %s", (long long)s->m, (long long)s->k,
			    (long long)s->n, rb_dtype_name(s->dtype), rb_last_error());
	if (ret < 0)
		return fail(m, -EIO, "device '%s' cannot prepare: %s", e->ops->name,
			    rb_last_error());
	return 0;
}

/* Whether the checked run leaves C on the device (see DEVICE_C_MIN_BYTES):
 * RKNN_BENCH_DEBUG=device_c for any size (the tests). Not for a tune, which keeps one
 * expected C for all the configs of a shape. */
static bool c_on_device(const struct rb_shape_measure *m, const struct rb_engine *e,
			const struct rb_shape *s)
{
	double bytes = (double)s->m * (double)s->n * (double)rb_dtype_out_size(s->dtype);

	return e->ops->read_c && modeled_once(m, e) && !m->expected &&
	       (rb_debug("device_c") || bytes >= (double)DEVICE_C_MIN_BYTES);
}

int rb_measure_shape(struct rb_shape_measure *m, struct rb_engine *e, const struct rb_inputs *in,
		     struct rb_result *r)
{
	size_t bytes = 0;
	bool on_device = c_on_device(m, e, &in->shape);
	struct timed_run t = {.engine = e,
			      .c = on_device ? NULL : guarded_output(&in->shape, &bytes),
			      .batch = 1,
			      .stop = m->stop};
	double t0 = rb_now_us(), checked_us = 0;
	int ret;

	m->reason[0] = '\0';
	if (!t.c && !on_device)
		return fail(m, -ENOMEM, "out of memory for C (%zu bytes)", bytes);
	ret = prepare(m, e, in);
	r->setup_us = rb_now_us() - t0;
	if (ret == 0)
		ret = checked_run(m, e, in, t.c, bytes, r, &checked_us);
	if (ret == 0 && !stopped(m) && sample(m, &t, checked_us, r) < 0 && !stopped(m))
		ret = fail(m, -EIO, "device '%s' failed while timing: %s", e->ops->name,
			   rb_last_error());
	if (ret == 0 && stopped(m))
		ret = fail(m, -EINTR, "interrupted by %s: nothing is reported or written",
			   *m->stop == SIGTERM ? "SIGTERM" : "SIGINT");
	r->batch = t.batch;
	free(t.c);
	return ret;
}

/* ---- one entry of a shapes file ---- */

static int copy_perf(const struct rb_perfctr *pc, struct rb_result *r)
{
	r->perf = malloc(sizeof(*r->perf));
	if (!r->perf)
		return rb_set_error(-ENOMEM, "out of memory for the counters");
	*r->perf = pc->perf;
	return 0;
}

/* B is streamed when it is large and a device packs it (not the CPU reference, which
 * reads B itself): B then exists once, in the device's buffer, rather than twice. Below
 * the threshold a second copy costs little, and the full reference reads B once instead
 * of making it again. RKNN_BENCH_DEBUG=stream_b streams any B (the tests). */
static int make_inputs(const struct rb_shape_measure *m, const struct rb_engine *e,
		       struct rb_inputs *in, const struct rb_shape *s, uint64_t seed,
		       enum rb_data_kind data)
{
	int64_t min = rb_debug("stream_b") ? 0
		      : m->stream_b_min    ? m->stream_b_min
					   : RB_INPUTS_STREAM_MIN_B_BYTES;
	double b_bytes = (double)s->k * (double)s->n * (double)rb_dtype_in_size(s->dtype);

	if (e->ops->is_reference || min < 0 || b_bytes < (double)min)
		return rb_inputs_init(in, s, seed, data);
	return rb_inputs_init_streamed(in, s, seed, data);
}

int rb_measure_entry(struct rb_shape_measure *m, struct rb_engine *e,
		     const struct rb_shape_entry *entry, uint64_t seed, enum rb_data_kind data,
		     struct rb_result *r)
{
	struct rb_inputs in;
	int ret;

	r->shape = entry->shape;
	r->names = entry->names;
	r->n_names = entry->n_names;
	r->device = e->ops->name;
	r->modeled = e->ops->modeled;
	if (e->ops->check && (ret = e->ops->check(e, &entry->shape)) < 0)
		return fail(m, ret, "%s: %s", entry->names[0], rb_last_error());
	if ((ret = make_inputs(m, e, &in, &entry->shape, seed, data)) < 0)
		return fail(m, ret, "%s: %s", entry->names[0], rb_last_error());
	rb_perfctr_reset(e->perf);
	ret = rb_measure_shape(m, e, &in, r);
	if (ret == 0 && e->perf)
		ret = copy_perf(e->perf, r);
	r->config = e->ops->config(e);
	rb_engine_reproducer(e, r, seed, data, m->verify->mode, r->reproducer,
			     sizeof(r->reproducer));
	if (m->phase_only != RB_PHASE_NONE) { /* run --phase: the same phase alone */
		size_t len = strlen(r->reproducer);

		snprintf(r->reproducer + len, sizeof(r->reproducer) - len, " --phase %s --iters %d",
			 m->phase_only == RB_PHASE_PACK_A ? "pack" : "submit", m->measure->iters);
	}
	rb_inputs_release(&in);
	return ret;
}
