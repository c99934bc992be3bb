/* The CPU reference as a device: the row every NPU result is compared against. */
#include <errno.h>

#include "run/engine.h"
#include "numeric/ref.h"
#include "core/stats.h"

/* The reference runs on row-major data: there is nothing to prepare. */
static int cpu_prepare(struct rb_engine *engine, const struct rb_inputs *in)
{
	engine->in = in;
	return 0;
}

static int cpu_run(struct rb_engine *engine, void *c, double *elapsed_us)
{
	const struct rb_inputs *in = engine->in;
	double t0;
	int ret;

	rb_perfctr_enter(engine->perf, RB_PHASE_COMPUTE);
	t0 = rb_now_us();
	ret = rb_ref_gemm(&in->shape, in->a, in->b, c, engine->opts.threads);
	*elapsed_us = rb_now_us() - t0;
	rb_perfctr_enter(engine->perf, RB_PHASE_NONE);
	return ret;
}

static cJSON *cpu_config(const struct rb_engine *engine)
{
	cJSON *config = cJSON_CreateObject();

	if (config &&
	    !cJSON_AddNumberToObject(config, "threads", rb_ref_threads(engine->opts.threads))) {
		cJSON_Delete(config);
		return NULL;
	}
	return config;
}

const struct rb_engine_ops rb_engine_cpu = {
    .name = "cpu",
    .description = "CPU reference GEMM (blocked, multi-threaded), wall-clock time",
    .is_reference = true,
    .prepare = cpu_prepare,
    .run = cpu_run,
    .config = cpu_config,
};
