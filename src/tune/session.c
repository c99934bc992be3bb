/* What is open while tuning (search.h): the device, the CPU reference, the timing
 * model, and the cache with the header of everything its numbers depend on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "numeric/ref.h"
#include "results/report.h"
#include "core/version.h"
#include "tune/search.h"

/* ---- engines ---- */

static int open_engine(struct rb_engine *e, const struct rb_engine_ops *ops,
		       const struct rb_engine_opts *opts, const char *what)
{
	char why[512];

	if (rb_engine_open(e, ops, opts) == 0)
		return 0;
	snprintf(why, sizeof(why), "%s", rb_last_error()); /* the buffer is reused */
	return rb_set_error(-ENODEV, "cannot open %s '%s': %s", what, ops->name, why);
}

static int open_engines(struct rb_tune_run *t)
{
	const struct rb_tune_opts *o = t->o;
	struct rb_engine_opts mo = o->engine, scratch = o->engine;
	/* The model of the kernel the device runs under: rocket serializes an fd's jobs. */
	const struct rb_engine_ops *sim =
	    rb_engine_find(strstr(o->device->name, "rocket") ? "sim:rocket" : "sim", &scratch);
	const struct rb_engine_ops *cpu = rb_engine_find("cpu", &scratch);
	int want;

	if (open_engine(&t->device, o->device, &o->engine, "device") < 0)
		return -ENODEV;
	t->device_open = true;
	if (open_engine(&t->cpu, cpu, &o->engine, "the CPU reference") < 0)
		return -ENODEV;
	t->cpu_open = true;
	/* the model strategy, and the rknn_matmul_api side pass of target rknn-bench */
	if (o->strategy != RB_TUNE_STRATEGY_MODEL && o->target != RB_TUNE_TARGET_RKNN_BENCH)
		return 0;
	mo.sim.model_only = true;
	mo.sim.threads = 1; /* a model-only run does no arithmetic to share out */
	want = rb_ref_threads(o->engine.threads);
	if (want > RB_TUNE_MODEL_THREADS)
		want = RB_TUNE_MODEL_THREADS;
	for (t->n_model = 0; t->n_model < (unsigned)want; t->n_model++)
		if (open_engine(&t->model[t->n_model], sim, &mo, "the timing model") < 0)
			return -ENODEV;
	return 0;
}

static void close_engines(struct rb_tune_run *t)
{
	while (t->n_model > 0)
		rb_engine_close(&t->model[--t->n_model]);
	if (t->cpu_open)
		rb_engine_close(&t->cpu);
	if (t->device_open)
		rb_engine_close(&t->device);
}

/* ---- the cache header: what the numbers depend on ---- */

/* Driver version and, on the emulator, the hardware profile its times come from (the
 * engine's "timing_model"); on a board, the SoC. */
static void device_facts(struct rb_engine *e, struct rb_tune_header *h)
{
	cJSON *cfg = e->ops->config(e);
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, "driver_version");
	const cJSON *model = cJSON_GetObjectItemCaseSensitive(cfg, "timing_model");
	unsigned code = cJSON_IsNumber(v) ? (unsigned)v->valuedouble : 0;

	snprintf(h->driver, sizeof(h->driver), "%u.%u.%u", code / 10000, code / 100 % 100,
		 code % 100);
	if (e->ops->modeled)
		snprintf(h->soc, sizeof(h->soc), "%s",
			 cJSON_IsString(model) ? model->valuestring : "unknown");
	else
		rb_cpu_model_read(h->soc, sizeof(h->soc), "/proc/cpuinfo",
				  "/proc/device-tree/compatible");
	cJSON_Delete(cfg);
}

static void fill_header(struct rb_tune_run *t, struct rb_tune_header *h)
{
	const struct rb_tune_opts *o = t->o;

	memset(h, 0, sizeof(*h));
	snprintf(h->tool_version, sizeof(h->tool_version), "%s", RB_VERSION);
	snprintf(h->device, sizeof(h->device), "%s%s%s", o->device->name, o->engine.path ? ":" : "",
		 o->engine.path ? o->engine.path : "");
	device_facts(&t->device, h);
	snprintf(h->space, sizeof(h->space), "%016llx",
		 (unsigned long long)rb_tune_space_hash(&o->space));
	rb_tune_space_describe(&o->space, h->space_desc, sizeof(h->space_desc));
	if (rb_tune_shard_active(&o->shard))
		snprintf(h->shard, sizeof(h->shard), "%u/%u", o->shard.index, o->shard.count);
	snprintf(h->measure, sizeof(h->measure),
		 "seed=%llu data=%s verify=%s samples=%lld atol=%g rtol=%g warmup=%d iters=%d "
		 "cpu_threads=%d rank=device+host(%s)",
		 (unsigned long long)o->seed, rb_data_kind_name(o->data),
		 rb_verify_mode_name(o->verify.mode), (long long)o->verify.samples, o->verify.atol,
		 o->verify.rtol, o->measure.warmup, o->measure.iters,
		 rb_ref_threads(o->engine.threads), RB_TUNE_HOST_MODEL);
}

/* --shard I/N: this shard's part of the plan every shard makes alike (tune/shard.h). */
static int split_shards(struct rb_tune_run *t)
{
	struct rb_tune_shard_plan plan;
	int ret;

	t->work = calloc(t->o->shapes.count ? t->o->shapes.count : 1, sizeof(*t->work));
	if (!t->work)
		return rb_set_error(-ENOMEM, "out of memory");
	ret = rb_tune_shard_plan_init(&plan, &t->o->shapes, &t->o->space, t->o->shard.count);
	if (ret == 0)
		rb_tune_shard_split(&plan, &t->o->shapes, &t->o->shard, t->work);
	rb_tune_shard_plan_release(&plan);
	return ret;
}

int rb_tune_open(struct rb_tune_run *t)
{
	int ret = open_engines(t);

	if (ret < 0)
		return ret;
	fill_header(t, &t->header);
	if (rb_tune_shard_active(&t->o->shard)) {
		ret = split_shards(t);
		if (ret < 0)
			return ret;
	}
	ret = rb_tune_cache_open(&t->cache, t->o->cache_path, &t->header);
	t->cache_open = ret == 0;
	return ret;
}

void rb_tune_close(struct rb_tune_run *t)
{
	if (t->cache_open)
		rb_tune_cache_close(&t->cache);
	t->cache_open = false;
	free(t->work);
	t->work = NULL;
	rb_tune_enumerated_release(t);
	close_engines(t);
}
