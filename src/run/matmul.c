/* The matmul executor (include/rknn_bench/matmul.h) on the job runner: a device is the
 * engines' NPU device (engine_npu.c opens it), a matmul is a plan and a job on it. The
 * host conversions a backend needs (fp32 A to fp16, N×K weights to K×N, fp32 C to
 * fp16) happen here, in buffers of the matmul's own, so that matmuls share nothing
 * but the device (and weight buffers the caller hands them, which the NPU only reads):
 * the drivers and the emulated kernel are safe to call from several threads, and the
 * device makes its buffers one at a time (bo_lock). */
#include "rknn_bench/matmul.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/fp16.h"
#include "numeric/inputs.h"
#include "numeric/layout.h"
#include "core/stats.h"
#include "npu/job.h"
#include "run/engine.h"
#include "run/npu_time.h"
#include "run/plan_model.h"

#define NAME_MAX_LEN 512

struct rb_matmul_device {
	struct rb_npu_device dev;
	struct rb_engine_opts opts;
	char name[NAME_MAX_LEN];       /* as given: opts.path points into it */
	struct rb_npu_time time;       /* of this device's runs, on its clock */
	struct rb_matmul_device *next; /* the list of open devices (RKNN_BENCH_STATS) */
	/* Held while NPU buffers are made, extended or freed (jobs, rb_matmul_buffer): a
	 * job on a shared weight buffer may make it reach more cores (rocket: copies in
	 * more cores' files, rb_dev_bo_reach), which changes the buffer other threads'
	 * jobs read their handles and addresses from. */
	pthread_mutex_t bo_lock;
};

struct rb_matmul_buffer {
	struct rb_matmul_device *dev;
	struct rb_dev_bo bo;
};

/* The job is made when the weights come (rb_matmul_set_weights: a job with its own B;
 * rb_matmul_set_weights_buffer: a job on the caller's buffer), as the programs hold B's
 * address: a matmul that is never given weights allocates no NPU buffer. */
struct rb_matmul {
	struct rb_matmul_device *dev;
	struct rb_plan plan;
	struct rb_npu_job *job;
	enum rb_npu_launch launch;
	const struct rb_matmul_buffer *weights; /* the job's B, or NULL: its own */
	uint64_t weights_offset;
	const struct rb_matmul *weights_of; /* whose packed B the job reads, or NULL */
	char config[256];
	uint16_t *a16; /* fp32 A converted, M×K */
	float *c32;    /* fp16 C before conversion, M×N */
	bool planned, has_weights, tuned;
	struct rb_matmul_stats stats;
};

void rb_matmul_desc_tuned(struct rb_matmul_desc *desc, const struct rb_tuned_config *t)
{
	if (!t)
		return;
	desc->config = t->config;
	desc->launch = t->launch;
	desc->tuned = true;
}

/* ---- RKNN_BENCH_STATS: the NPU time of the process, printed at exit ----
 * The one place the library prints: a user asked for it, and a backend inside
 * llama.cpp has no other way to show what tuning did to a model. Each device has its
 * own clock (one emulated kernel each), so devices are summed, not merged. */

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rb_matmul_device *open_devices;
static struct {
	unsigned long runs, tuned_runs;
	uint64_t ns;
	bool modeled, measured;
} closed; /* devices closed so far */
static pthread_once_t stats_once = PTHREAD_ONCE_INIT;

static bool stats_wanted(void)
{
	const char *v = getenv("RKNN_BENCH_STATS");

	return v && *v && strcmp(v, "0") != 0;
}

/* With stats_lock held: adds d's runs to the closed devices' totals. */
static void stats_add(const struct rb_matmul_device *d, unsigned long *runs, unsigned long *tuned,
		      uint64_t *ns, bool *modeled, bool *measured)
{
	struct rb_matmul_device_stats st;

	rb_matmul_device_stats((struct rb_matmul_device *)d, &st);
	*runs += st.runs;
	*tuned += st.tuned_runs;
	*ns += (uint64_t)(st.npu_us * 1000.0 + 0.5);
	*modeled |= st.runs && st.modeled;
	*measured |= st.runs && !st.modeled;
}

static void stats_print(void)
{
	unsigned long runs, tuned;
	uint64_t ns;
	bool modeled, measured;

	pthread_mutex_lock(&stats_lock);
	runs = closed.runs, tuned = closed.tuned_runs, ns = closed.ns;
	modeled = closed.modeled, measured = closed.measured;
	for (const struct rb_matmul_device *d = open_devices; d; d = d->next)
		stats_add(d, &runs, &tuned, &ns, &modeled, &measured);
	pthread_mutex_unlock(&stats_lock);
	fprintf(stderr, "rknn-bench: %lu matmuls (%lu tuned, %lu default), NPU time %.3f us (%s)\n",
		runs, tuned, runs - tuned, (double)ns / 1000.0,
		modeled && measured ? "modeled and measured"
		: measured          ? "measured"
				    : "modeled");
}

static void stats_register(void)
{
	atexit(stats_print);
}

static void stats_open(struct rb_matmul_device *d)
{
	if (!stats_wanted())
		return;
	pthread_once(&stats_once, stats_register);
	pthread_mutex_lock(&stats_lock);
	d->next = open_devices;
	open_devices = d;
	pthread_mutex_unlock(&stats_lock);
}

static void stats_close(struct rb_matmul_device *d)
{
	struct rb_matmul_device **pp;

	pthread_mutex_lock(&stats_lock);
	for (pp = &open_devices; *pp && *pp != d; pp = &(*pp)->next)
		;
	if (*pp) {
		*pp = d->next;
		stats_add(d, &closed.runs, &closed.tuned_runs, &closed.ns, &closed.modeled,
			  &closed.measured);
	}
	pthread_mutex_unlock(&stats_lock);
}

void rb_matmul_device_stats(struct rb_matmul_device *d, struct rb_matmul_device_stats *st)
{
	unsigned long runs, tuned;

	st->npu_us = (double)rb_npu_time_ns(&d->time, &runs, &tuned) / 1000.0;
	st->runs = runs;
	st->tuned_runs = tuned;
	st->modeled = d->dev.modeled;
}

int rb_matmul_device_open(struct rb_matmul_device **out, const char *name)
{
	struct rb_matmul_device *d;
	const struct rb_engine_ops *ops;
	int ret;

	if (!out || !name)
		return rb_set_error(-EINVAL, "rb_matmul_device_open: NULL argument");
	*out = NULL;
	if (strlen(name) >= NAME_MAX_LEN)
		return rb_set_error(-EINVAL, "device name of %zu bytes is too long", strlen(name));
	d = calloc(1, sizeof(*d));
	if (!d)
		return rb_set_error(-ENOMEM, "out of memory for a device");
	memcpy(d->name, name, strlen(name) + 1);
	rb_engine_opts_init(&d->opts);
	ops = rb_engine_find(d->name, &d->opts);
	ret = ops ? rb_engine_open_npu_device(&d->dev, ops, &d->opts) : -EINVAL;
	if (ret < 0) {
		free(d);
		return ret;
	}
	rb_npu_time_init(&d->time);
	pthread_mutex_init(&d->bo_lock, NULL);
	stats_open(d);
	*out = d;
	return 0;
}

void rb_matmul_device_close(struct rb_matmul_device *d)
{
	if (!d)
		return;
	stats_close(d);
	rb_npu_device_close(&d->dev);
	rb_npu_time_release(&d->time);
	pthread_mutex_destroy(&d->bo_lock);
	free(d);
}

const char *rb_matmul_device_name(const struct rb_matmul_device *d)
{
	return d->dev.name;
}

bool rb_matmul_device_modeled(const struct rb_matmul_device *d)
{
	return d->dev.modeled;
}

/* The model's choice over base; on a refusal base stays (planning it says why). */
static void model_default(const struct rb_matmul_desc *desc, const struct rb_matmul_device *d,
			  struct rb_plan_config *cfg, enum rb_npu_launch *launch)
{
	struct rb_plan_config base = *cfg;
	enum rb_npu_launch chosen;

	/* B native: the caller's weights may be read in place (a buffer, the shim) */
	if (rb_plan_model_default(&desc->shape, &base, true, rb_plan_model_launches_of(d->dev.name),
				  d->opts.sim.soc, cfg, &chosen, NULL) < 0)
		*cfg = base;
	else if (!desc->launch)
		*launch = chosen;
}

/* The desc's config over the planner's default, with the core mask override. Without
 * a config (none given, none tuned for the shape) the model-guided default
 * (run/plan_model.h) chooses the knobs left auto and, without a launch, the launch. */
static int desc_config(const struct rb_matmul_desc *desc, const struct rb_matmul_device *d,
		       struct rb_plan_config *cfg, enum rb_npu_launch *launch)
{
	const struct rb_npu_device *dev = &d->dev;

	rb_plan_config_init(cfg);
	if (desc->config && rb_plan_config_parse(cfg, desc->config) < 0)
		return rb_set_error(-EINVAL, "config '%s': %s", desc->config, rb_last_error());
	if (desc->core_mask) {
		if (desc->core_mask > 0x7)
			return rb_set_error(-EINVAL,
					    "core mask 0x%x: the RK3588 has cores 0x1..0x7",
					    desc->core_mask);
		if (cfg->n_weights != (unsigned)__builtin_popcount(desc->core_mask))
			cfg->n_weights = 0;
		cfg->core_mask = desc->core_mask;
	}
	rb_engine_plan_for_device(cfg, dev);
	if (!desc->config)
		model_default(desc, d, cfg, launch);
	return 0;
}

static int plan_matmul(struct rb_matmul *mm, const struct rb_matmul_desc *desc)
{
	struct rb_plan_config cfg;
	struct rb_npu_job_bytes bytes;
	int ret = desc_config(desc, mm->dev, &cfg, &mm->launch);

	if (ret < 0)
		return ret;
	if (rb_plan_init(&mm->plan, &desc->shape, &cfg) < 0)
		return -EINVAL;
	mm->planned = true;
	ret = rb_npu_fit_plan(&mm->plan, &mm->dev->dev);
	if (ret < 0)
		return ret;
	rb_plan_config_format(&mm->plan.config, mm->config, sizeof(mm->config));
	return rb_npu_job_check_limits(&mm->plan, mm->dev->opts.sim.mem_budget, &bytes);
}

/* The launch mode and the host buffers; the job comes with the weights. */
static int prepare_run(struct rb_matmul *mm, const char *launch_name)
{
	const struct rb_shape *s = &mm->plan.shape;
	size_t mk = (size_t)s->m * (size_t)s->k, mn = (size_t)s->m * (size_t)s->n;
	int ret;

	if (launch_name && rb_npu_launch_parse(launch_name, &mm->launch) < 0)
		return rb_set_error(-EINVAL, "launch '%s': use fences, threads or multicore",
				    launch_name);
	ret = mm->dev->dev.ops->check_launch(mm->launch);
	if (ret < 0)
		return ret;
	if (s->dtype == RB_DTYPE_FP16) {
		mm->a16 = malloc(mk * sizeof(*mm->a16));
		mm->c32 = malloc(mn * sizeof(*mm->c32));
		if (!mm->a16 || !mm->c32)
			return rb_set_error(-ENOMEM, "out of memory for the host buffers");
	}
	return 0;
}

/* The device side of a caller's buffer, which a job may extend (more cores' copies,
 * under bo_lock): the caller's const promises its contents, which this leaves alone. */
static struct rb_dev_bo *device_copies(const struct rb_matmul_buffer *buf)
{
	return &((struct rb_matmul_buffer *)buf)->bo;
}

/* A new job for the weights: its own B buffer (weights NULL) or the caller's. */
static int replace_job(struct rb_matmul *mm, const struct rb_matmul_buffer *weights,
		       uint64_t offset)
{
	struct rb_inputs none = {.shape = mm->plan.shape}; /* A comes with each run */
	int ret;

	pthread_mutex_lock(&mm->dev->bo_lock);
	rb_npu_job_free(mm->job);
	mm->job = NULL;
	mm->has_weights = false;
	mm->weights = NULL;
	mm->weights_of = NULL;
	if (weights)
		ret = rb_npu_job_new_on_weights(&mm->job, &mm->dev->dev, &mm->plan, mm->launch,
						device_copies(weights), offset);
	else
		ret = rb_npu_job_new(&mm->job, &mm->dev->dev, &mm->plan, &none, mm->launch);
	pthread_mutex_unlock(&mm->dev->bo_lock);
	if (ret == 0) {
		mm->weights = weights;
		mm->weights_offset = offset;
	}
	return ret;
}

void rb_matmul_destroy(struct rb_matmul *mm)
{
	if (!mm)
		return;
	pthread_mutex_lock(&mm->dev->bo_lock);
	rb_npu_job_free(mm->job);
	pthread_mutex_unlock(&mm->dev->bo_lock);
	if (mm->planned)
		rb_plan_release(&mm->plan);
	free(mm->a16);
	free(mm->c32);
	free(mm);
}

int rb_matmul_create(struct rb_matmul **out, struct rb_matmul_device *dev,
		     const struct rb_matmul_desc *desc)
{
	struct rb_matmul *mm;
	int ret;

	if (!out || !dev || !desc)
		return rb_set_error(-EINVAL, "rb_matmul_create: NULL argument");
	*out = NULL;
	mm = calloc(1, sizeof(*mm));
	if (!mm)
		return rb_set_error(-ENOMEM, "out of memory for a matmul");
	mm->dev = dev;
	mm->tuned = desc->tuned;
	mm->stats.modeled = dev->dev.modeled;
	ret = plan_matmul(mm, desc);
	if (ret == 0)
		ret = prepare_run(mm, desc->launch);
	if (ret < 0) {
		rb_matmul_destroy(mm);
		return ret;
	}
	*out = mm;
	return 0;
}

static bool same_b_layout(const struct rb_plan *a, const struct rb_plan *b)
{
	return a->b_bytes == b->b_bytes && a->shape.k == b->shape.k && a->shape.n == b->shape.n &&
	       a->shape.dtype == b->shape.dtype && a->k_pad == b->k_pad && a->n_pad == b->n_pad &&
	       a->k_slice == b->k_slice;
}

/* The job of mm on the B that weights_of packed: a job on another's buffer, as on a
 * caller's (rb_npu_job_new_on_weights). */
static int share_weights(struct rb_matmul *mm, const struct rb_matmul *weights_of)
{
	struct rb_dev_bo *bo = weights_of->job && weights_of->has_weights
				   ? rb_npu_job_own_weights(weights_of->job)
				   : NULL;
	int ret;

	if (!bo || weights_of->dev != mm->dev)
		return rb_set_error(-EINVAL,
				    "the matmul to share weights with has no weights "
				    "packed on this device: rb_matmul_set_weights it first");
	if (!same_b_layout(&weights_of->plan, &mm->plan))
		return rb_set_error(-EINVAL,
				    "config '%s' lays the weights out otherwise than '%s': they "
				    "cannot be shared",
				    mm->config, weights_of->config);
	pthread_mutex_lock(&mm->dev->bo_lock);
	ret =
	    rb_npu_job_new_sharing(&mm->job, &mm->dev->dev, &mm->plan, mm->launch, weights_of->job);
	pthread_mutex_unlock(&mm->dev->bo_lock);
	mm->has_weights = ret == 0;
	mm->weights_of = ret == 0 ? weights_of : NULL;
	return ret;
}

int rb_matmul_create_sharing(struct rb_matmul **out, struct rb_matmul_device *dev,
			     const struct rb_matmul_desc *desc, const struct rb_matmul *weights_of)
{
	int ret;

	if (!weights_of)
		return rb_set_error(-EINVAL, "rb_matmul_create_sharing: NULL argument");
	ret = rb_matmul_create(out, dev, desc);
	if (ret == 0 && (ret = share_weights(*out, weights_of)) < 0) {
		rb_matmul_destroy(*out);
		*out = NULL;
	}
	return ret;
}

const char *rb_matmul_config(const struct rb_matmul *mm)
{
	return mm->config;
}

/* B as the job packs it, a block of columns at a time: columns [n0, n0 + cols) as a
 * K×cols block of the input type, converted and transposed as needed, so that B is
 * never held whole next to its packed copy. Transposes go in 64×64 tiles so that both
 * sides stay in cache. */
#define TILE 64

struct weights_src {
	const void *b;
	enum rb_matmul_type type;
	enum rb_matmul_b_layout layout; /* KN or NK */
	size_t k, n, es;                /* es: the element size of the job's input type */
};

static void weights_element(const struct weights_src *w, size_t from, void *block, size_t to)
{
	if (w->type == RB_MATMUL_FP32)
		((uint16_t *)block)[to] = rb_fp16_from_f32(((const float *)w->b)[from]);
	else if (w->es == 2)
		((uint16_t *)block)[to] = ((const uint16_t *)w->b)[from];
	else
		((int8_t *)block)[to] = ((const int8_t *)w->b)[from];
}

static int weights_block(void *ctx, void *block, int64_t n0, int64_t cols)
{
	const struct weights_src *w = ctx;
	size_t c0 = (size_t)n0, nc = (size_t)cols;

	if (w->layout == RB_MATMUL_B_KN) {
		for (size_t r = 0; r < w->k; r++)
			for (size_t c = 0; c < nc; c++)
				weights_element(w, r * w->n + c0 + c, block, r * nc + c);
		return 0;
	}
	for (size_t r0 = 0; r0 < w->k; r0 += TILE)
		for (size_t t0 = 0; t0 < nc; t0 += TILE)
			for (size_t c = t0; c < nc && c < t0 + TILE; c++)
				for (size_t r = r0; r < w->k && r < r0 + TILE; r++)
					weights_element(w, (c0 + c) * w->k + r, block, r * nc + c);
	return 0;
}

/* Native B (the rknn layout) is unpacked whole to K×N, then packed for the plan. */
static int set_native_weights(struct rb_matmul *mm, const void *b)
{
	const struct rb_shape *s = &mm->plan.shape;
	void *kn = malloc((size_t)s->k * (size_t)s->n * rb_dtype_in_size(s->dtype));
	int ret;

	if (!kn)
		return rb_set_error(-ENOMEM, "out of memory for the weights");
	ret = rb_layout_rknn_unpack_b(kn, b, s->dtype, s->k, s->n, 0);
	if (ret == 0)
		ret = rb_npu_job_set_weights(mm->job, kn);
	free(kn);
	return ret;
}

int rb_matmul_set_weights(struct rb_matmul *mm, const void *b, enum rb_matmul_type type,
			  enum rb_matmul_b_layout layout)
{
	const struct rb_shape *s;
	struct weights_src w;
	int ret;

	if (!mm || !b)
		return rb_set_error(-EINVAL, "rb_matmul_set_weights: NULL argument");
	s = &mm->plan.shape;
	if (s->dtype == RB_DTYPE_FP16 ? type != RB_MATMUL_FP16 && type != RB_MATMUL_FP32
				      : type != RB_MATMUL_INT8)
		return rb_set_error(-EINVAL, "weights of an %s matmul must be %s",
				    rb_dtype_name(s->dtype),
				    s->dtype == RB_DTYPE_FP16 ? "fp16 or fp32" : "int8");
	if (layout != RB_MATMUL_B_KN && layout != RB_MATMUL_B_NK && layout != RB_MATMUL_B_NATIVE)
		return rb_set_error(-EINVAL, "unknown weight layout %d", (int)layout);
	if (layout == RB_MATMUL_B_NATIVE && type == RB_MATMUL_FP32)
		return rb_set_error(-EINVAL, "native weights are fp16 or int8, not fp32");
	/* a job on a buffer not its own (the caller's, another matmul's) gets its own */
	if ((!mm->job || mm->weights || mm->weights_of) && (ret = replace_job(mm, NULL, 0)) < 0)
		return ret;
	w = (struct weights_src){
	    b, type, layout, (size_t)s->k, (size_t)s->n, rb_dtype_in_size(s->dtype)};
	ret = layout == RB_MATMUL_B_NATIVE
		  ? set_native_weights(mm, b)
		  : rb_npu_job_set_weights_by_columns(mm->job, weights_block, &w);
	mm->has_weights = ret == 0;
	return ret;
}

/* ---- weights in the caller's buffer ---- */

int rb_matmul_buffer_new(struct rb_matmul_buffer **out, struct rb_matmul_device *dev, uint64_t size)
{
	struct rb_matmul_buffer *buf;
	int ret;

	if (!out || !dev || !size)
		return rb_set_error(-EINVAL, "rb_matmul_buffer_new: NULL argument or size 0");
	*out = NULL;
	buf = calloc(1, sizeof(*buf));
	if (!buf)
		return rb_set_error(-ENOMEM, "out of memory for a buffer");
	buf->dev = dev;
	pthread_mutex_lock(&dev->bo_lock);
	ret = dev->dev.ops->bo_create(&dev->dev, size, RB_BO_DATA, &buf->bo);
	pthread_mutex_unlock(&dev->bo_lock);
	if (ret < 0) {
		free(buf);
		return ret;
	}
	*out = buf;
	return 0;
}

void *rb_matmul_buffer_map(const struct rb_matmul_buffer *buf)
{
	return buf->bo.map;
}

void rb_matmul_buffer_free(struct rb_matmul_buffer *buf)
{
	if (!buf)
		return;
	pthread_mutex_lock(&buf->dev->bo_lock);
	buf->dev->dev.ops->bo_destroy(&buf->dev->dev, &buf->bo);
	pthread_mutex_unlock(&buf->dev->bo_lock);
	free(buf);
}

/* The planned B is the rknn native layout: no padding, and one K-slice when K fits
 * one native segment, else slices of exactly one segment (numeric/layout.h). */
bool rb_matmul_native_weights(const struct rb_matmul *mm)
{
	return rb_plan_native_b(&mm->plan);
}

int rb_matmul_set_weights_buffer(struct rb_matmul *mm, const struct rb_matmul_buffer *buf,
				 uint64_t offset)
{
	int ret;

	if (!mm || !buf)
		return rb_set_error(-EINVAL, "rb_matmul_set_weights_buffer: NULL argument");
	if (buf->dev != mm->dev)
		return rb_set_error(-EINVAL, "the weights buffer is another device's");
	if (!rb_matmul_native_weights(mm))
		return rb_set_error(-EINVAL,
				    "config '%s' lays B out in K-slices of %u channels, not in the "
				    "native layout: give the weights with rb_matmul_set_weights",
				    mm->config, mm->plan.k_slice);
	if (!mm->job || mm->weights != buf || mm->weights_offset != offset) {
		ret = replace_job(mm, buf, offset);
		mm->has_weights = ret == 0;
		if (ret < 0)
			return ret;
	}
	/* The CPU's writes to the device now, not at each run: on a board the sync is a
	 * cache pass over B, and rocket also copies it to the other cores' files. */
	return mm->dev->dev.ops->bo_to_device(&mm->dev->dev, &buf->bo);
}

/* The A the job packs: the caller's, or fp32 converted to fp16. */
static int features(struct rb_matmul *mm, const void *a, enum rb_matmul_type a_type,
		    const void **out)
{
	const struct rb_shape *s = &mm->plan.shape;

	*out = a;
	if (s->dtype == RB_DTYPE_INT8)
		return a_type == RB_MATMUL_INT8
			   ? 0
			   : rb_set_error(-EINVAL, "A of an int8 matmul must be int8");
	if (a_type == RB_MATMUL_FP16)
		return 0;
	if (a_type != RB_MATMUL_FP32)
		return rb_set_error(-EINVAL, "A of an fp16 matmul must be fp16 or fp32");
	rb_fp16_from_f32_array(mm->a16, a, (size_t)s->m * (size_t)s->k);
	*out = mm->a16;
	return 0;
}

static int check_c_type(const struct rb_shape *s, enum rb_matmul_type c_type)
{
	if (s->dtype == RB_DTYPE_INT8 ? c_type == RB_MATMUL_INT32
				      : c_type == RB_MATMUL_FP32 || c_type == RB_MATMUL_FP16)
		return 0;
	return rb_set_error(-EINVAL, "C of an %s matmul must be %s", rb_dtype_name(s->dtype),
			    s->dtype == RB_DTYPE_FP16 ? "fp32 or fp16" : "int32");
}

int rb_matmul_run(struct rb_matmul *mm, const void *a, enum rb_matmul_type a_type, void *c,
		  enum rb_matmul_type c_type)
{
	const struct rb_shape *s;
	struct rb_npu_job_times t;
	const void *a_job = NULL;
	double t0, convert_us;
	int ret;

	if (!mm || !a || !c)
		return rb_set_error(-EINVAL, "rb_matmul_run: NULL argument");
	s = &mm->plan.shape;
	if (!mm->has_weights)
		return rb_set_error(-EINVAL,
				    "the %lldx%lldx%lld matmul has no weights: call "
				    "rb_matmul_set_weights first",
				    (long long)s->m, (long long)s->k, (long long)s->n);
	ret = check_c_type(s, c_type);
	t0 = rb_now_us();
	if (ret == 0)
		ret = features(mm, a, a_type, &a_job);
	if (ret < 0)
		return ret;
	convert_us = rb_now_us() - t0;
	rb_npu_job_set_features(mm->job, a_job);
	ret = rb_npu_job_run(mm->job, c_type == RB_MATMUL_FP16 ? (void *)mm->c32 : c, &t);
	if (ret < 0)
		return ret;
	t0 = rb_now_us();
	if (c_type == RB_MATMUL_FP16)
		rb_fp16_from_f32_array(c, mm->c32, (size_t)s->m * (size_t)s->n);
	mm->stats.convert_us = convert_us + (rb_now_us() - t0);
	mm->stats.pack_us = t.pack_us;
	mm->stats.submit_us = t.submit_us;
	mm->stats.unpack_us = t.unpack_us;
	mm->stats.device_us = t.device_us;
	mm->stats.runs++;
	rb_npu_time_add(&mm->dev->time, t.device_begin_ns, t.device_end_ns, mm->tuned);
	return 0;
}

void rb_matmul_stats(const struct rb_matmul *mm, struct rb_matmul_stats *stats)
{
	*stats = mm->stats;
}
