/* NPU devices as engines: the vendor driver (rknpu) and mainline rocket, each on a
 * board or emulated (sim, sim:rocket). All run the same code — plan, layouts, regcmd,
 * the userspace driver — and differ only in the transport under the driver. On
 * rocket the planner always emits the mainline program variant (§a.6). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/error.h"
#include "host/limits.h"
#include "run/engine.h"
#include "npu/fault.h"
#include "npu/job.h"
#include "hw/soc.h"

struct npu_engine {
	struct rb_npu_device dev;
	struct rb_plan plan;
	bool planned;
	struct rb_npu_job *job;
	struct rb_plan_config job_config; /* what `plan` and `job` were made from */
	struct rb_npu_packed_b kept_b;    /* the last job's packed B, for the next */
	bool b_streamed;                  /* B was made while packed: setup_us includes it */
};

void rb_engine_plan_for_device(struct rb_plan_config *cfg, const struct rb_npu_device *dev)
{
	if (dev->driver == RB_DRIVER_ROCKET && !rb_fault_no_rdma())
		cfg->mainline = true; /* the only variant that runs on rocket */
}

int rb_engine_open_npu_device(struct rb_npu_device *dev, const struct rb_engine_ops *ops,
			      const struct rb_engine_opts *opts)
{
	int ret;

	if (ops == &rb_engine_sim)
		ret = rb_npu_device_open_sim(dev, &opts->sim);
	else if (ops == &rb_engine_sim_rocket)
		ret = rb_npu_device_open_sim_rocket(dev, &opts->sim);
	else if (ops == &rb_engine_rocket)
		ret = rb_npu_device_open_rocket(dev, opts->path);
	else if (ops == &rb_engine_rknpu)
		ret = rb_npu_device_open_rknpu(dev, opts->path);
	else
		return rb_set_error(-EINVAL, "device '%s' is not an NPU", ops->name);
	if (ret == 0)
		dev->unsafe_skip_validation = opts->unsafe_skip_validation;
	if (ret == 0 && opts->sim.soc && !dev->modeled)
		dev->soc = *opts->sim.soc; /* a board's: the CLI chose it (--soc, its clock) */
	return ret;
}

static int npu_open(struct rb_engine *e)
{
	struct npu_engine *ne = calloc(1, sizeof(*ne));
	int ret;

	if (!ne)
		return rb_set_error(-ENOMEM, "out of memory");
	ret = rb_engine_open_npu_device(&ne->dev, e->ops, &e->opts);
	if (ret < 0) {
		free(ne);
		return ret;
	}
	e->priv = ne;
	return 0;
}

static void npu_unprepare(struct npu_engine *ne)
{
	if (ne->job) {
		rb_npu_packed_b_release(&ne->dev, &ne->kept_b);
		rb_npu_job_keep_weights(ne->job, &ne->kept_b);
	}
	rb_npu_job_free(ne->job);
	ne->job = NULL;
	if (ne->planned)
		rb_plan_release(&ne->plan);
	ne->planned = false;
}

/* Before anything is allocated: the buffers must fit the NPU address space, the
 * emulator's budget and the memory the machine has left (system memory on a board,
 * host memory under emulation), together with the reference and output C still to be
 * filled (A and B, filled already, are no longer available). */
static int check_limits(const struct rb_engine *e, const struct rb_plan *plan, bool inputs,
			size_t *words)
{
	const struct rb_shape *s = &plan->shape;
	uint64_t budget = e->ops->modeled ? e->opts.sim.mem_budget : 0;
	uint64_t elem = rb_dtype_in_size(s->dtype), c, host;
	uint64_t ab = rb_mul_sat(rb_add_sat(rb_mul_sat((uint64_t)s->m, (uint64_t)s->k),
					    rb_mul_sat((uint64_t)s->k, (uint64_t)s->n)),
				 elem);
	struct rb_npu_job_bytes b;
	char what[128];
	int ret = rb_npu_job_check_limits(plan, budget, &b);

	if (ret < 0)
		return ret;
	*words = b.words;
	snprintf(what, sizeof(what), "shape %" PRId64 "x%" PRId64 "x%" PRId64 " %s", s->m, s->k,
		 s->n, rb_dtype_name(s->dtype));
	c = rb_mul_sat(rb_mul_sat((uint64_t)s->m, (uint64_t)s->n), rb_dtype_out_size(s->dtype));
	host = rb_add_sat(rb_mul_sat(2, c), inputs ? 0 : ab);
	return rb_limits_check_memory(what,
				      inputs ? "memory for its NPU buffers and 2 host copies of C"
					     : "memory for its NPU buffers and host copies of A, "
					       "B and 2 of C",
				      rb_add_sat(b.total, host));
}

/* Before the inputs exist: their host copies of A and B count too. */
static int npu_check(struct rb_engine *e, const struct rb_shape *shape)
{
	struct rb_plan plan;
	size_t words;
	int ret = rb_plan_init(&plan, shape, &e->opts.plan);

	if (ret < 0)
		return -EINVAL;
	ret = check_limits(e, &plan, false, &words);
	rb_plan_release(&plan);
	return ret == -ENOMEM ? ret : ret < 0 ? -EINVAL : 0; /* host memory may come back */
}

/* The timing model is asked for every launch mode of a config in turn: without data,
 * the job of the last config serves the next one when only the launch mode differs,
 * which saves planning, encoding and validating the programs again. */
static bool reuse_model_job(struct rb_engine *e, const struct rb_inputs *in)
{
	struct npu_engine *ne = e->priv;

	if (!ne->job || !ne->dev.model_only || !rb_shape_equal(&ne->plan.shape, &in->shape) ||
	    !rb_plan_config_equal(&ne->job_config, &e->opts.plan))
		return false;
	e->in = in;
	return rb_npu_job_set_launch(ne->job, e->opts.launch) == 0;
}

static int npu_prepare(struct rb_engine *e, const struct rb_inputs *in)
{
	struct npu_engine *ne = e->priv;
	size_t words = 0;
	int ret;

	rb_engine_plan_for_device(&e->opts.plan, &ne->dev);
	ne->b_streamed = in->b_streamed;
	if (reuse_model_job(e, in))
		return 0;
	npu_unprepare(ne);
	e->in = in;
	ne->job_config = e->opts.plan;
	ret = rb_plan_init(&ne->plan, &in->shape, &e->opts.plan);
	if (ret < 0)
		return -EINVAL;
	ne->planned = true;
	ret = rb_npu_fit_plan(&ne->plan, &ne->dev);
	if (ret < 0)
		return ret;
	if (!rb_npu_packed_b_fits(&ne->kept_b, &ne->dev, &ne->plan, in))
		rb_npu_packed_b_release(&ne->dev, &ne->kept_b); /* before memory is counted */
	ret = check_limits(e, &ne->plan, true, &words);
	if (ret < 0)
		return ret == -ENOMEM ? ret : -EINVAL;
	rb_perfctr_enter(e->perf, RB_PHASE_PACK_B);
	ret = rb_npu_job_new_keeping(&ne->job, &ne->dev, &ne->plan, in, e->opts.launch, &ne->kept_b,
				     words);
	rb_perfctr_enter(e->perf, RB_PHASE_NONE);
	/* A config error found while building the programs is still the input's fault; host
	 * memory running out is neither the input's nor the device's. */
	if (ret == -EINVAL || ret == -ERANGE || ret == -ENOMEM)
		return ret == -ENOMEM ? ret : -EINVAL;
	return ret < 0 ? -EIO : 0;
}

/* The job's phase hook: counts the phase, runs it unless another runs alone. */
static bool npu_on_phase(void *ctx, enum rb_npu_phase phase)
{
	static const enum rb_phase counted[] = {[RB_NPU_PHASE_PACK_A] = RB_PHASE_PACK_A,
						[RB_NPU_PHASE_SUBMIT] = RB_PHASE_SUBMIT,
						[RB_NPU_PHASE_UNPACK] = RB_PHASE_UNPACK,
						[RB_NPU_PHASE_DONE] = RB_PHASE_NONE};
	const struct rb_engine *e = ctx;
	bool run = e->phase_only == RB_PHASE_NONE || e->phase_only == counted[phase];

	rb_perfctr_enter(e->perf, run ? counted[phase] : RB_PHASE_NONE);
	return run;
}

static int npu_run(struct rb_engine *e, void *c, double *elapsed_us)
{
	struct npu_engine *ne = e->priv;
	struct rb_npu_job_times t;
	int ret;

	ne->dev.on_phase = e->perf || e->phase_only != RB_PHASE_NONE ? npu_on_phase : NULL;
	ne->dev.phase_ctx = e;
	ret = rb_npu_job_run(ne->job, c, &t);
	if (e->phase_only == RB_PHASE_PACK_A)
		*elapsed_us = t.pack_us;
	else if (e->phase_only == RB_PHASE_SUBMIT)
		*elapsed_us = t.submit_us;
	else
		*elapsed_us = t.device_us;
	return ret;
}

static int npu_read_c(const struct rb_engine *e, int64_t m0, int64_t rows, int64_t n0, int64_t cols,
		      void *c)
{
	const struct npu_engine *ne = e->priv;

	if (!ne->job)
		return rb_set_error(-EINVAL, "no C on the device to read: nothing was prepared");
	return rb_npu_job_read_c(ne->job, m0, rows, n0, cols, c);
}

/* The hardware profile the emulator's times come from, e.g. "rk3588.json v1
 * (calibrated, see bench/calibration.md)". */
static const char *timing_model(const struct rb_engine *e)
{
	const struct rb_soc_profile *soc = e->opts.sim.soc ? e->opts.sim.soc : rb_soc_default();

	return soc ? soc->label : "unknown";
}

/* The ceilings of the cores the plan uses, from the hardware profile (the real RK3588's
 * published numbers on a board, the emulator's profile under emulation): the report
 * turns them into % of MAC peak, % of DDR bandwidth and a roofline position. */
static void add_limits(cJSON *config, const struct rb_engine *e, const struct rb_plan *plan)
{
	const struct rb_soc_profile *soc = e->opts.sim.soc ? e->opts.sim.soc : rb_soc_default();
	unsigned cores = (unsigned)__builtin_popcount(plan->config.core_mask);
	double macs, ddr;

	if (!soc)
		return;
	macs = (double)(plan->shape.dtype == RB_DTYPE_INT8 ? soc->int8_macs : soc->fp16_macs);
	ddr = cores * soc->ddr_core_gbps;
	cJSON_AddNumberToObject(config, "peak_gflops", 2.0 * macs * cores * soc->clock_mhz / 1e3);
	cJSON_AddNumberToObject(config, "ddr_gbps",
				ddr < soc->ddr_total_gbps ? ddr : soc->ddr_total_gbps);
}

/* "hw_profile": the profile behind the roofline (and, on sim, the times) and how it was
 * chosen (--soc, the board's memory type or the default). */
static void add_profile(cJSON *config, const struct rb_engine *e)
{
	const struct rb_soc_profile *soc = e->opts.sim.soc ? e->opts.sim.soc : rb_soc_default();
	cJSON *o = soc ? cJSON_AddObjectToObject(config, "hw_profile") : NULL;

	if (!o)
		return;
	cJSON_AddStringToObject(o, "label", soc->label);
	cJSON_AddStringToObject(o, "chosen_by",
				soc->chosen_by[0] ? soc->chosen_by : "built-in default");
}

static cJSON *npu_config(const struct rb_engine *e)
{
	const struct npu_engine *ne = e->priv;
	cJSON *config = cJSON_CreateObject();
	char text[256];

	if (!config)
		return NULL;
	if (ne->planned) {
		rb_plan_config_format(&ne->plan.config, text, sizeof(text));
		cJSON_AddStringToObject(config, "plan", text);
		cJSON_AddNumberToObject(config, "tasks", (double)ne->plan.n_tasks);
		cJSON_AddNumberToObject(config, "submits", (double)ne->plan.n_submits);
		/* the DDR traffic the plan moves (features, weights, outputs per task), which
		 * the minimum A + B + C of the GB/s column leaves out (issue 32) */
		cJSON_AddNumberToObject(config, "moved_bytes",
					(double)(ne->plan.feature_bytes + ne->plan.weight_bytes +
						 ne->plan.output_bytes));
		cJSON_AddBoolToObject(config, "unproven_on_silicon", rb_plan_unproven(&ne->plan));
	}
	cJSON_AddStringToObject(config, "launch", rb_npu_launch_name(e->opts.launch));
	cJSON_AddStringToObject(config, "driver",
				ne->dev.driver == RB_DRIVER_ROCKET ? "rocket" : "rknpu");
	cJSON_AddNumberToObject(config, "driver_version",
				ne->dev.driver == RB_DRIVER_ROCKET ? ne->dev.rocket.drv_version
								   : ne->dev.drv.drv_version);
	if (ne->b_streamed) /* its setup time includes making B (numeric/inputs.h) */
		cJSON_AddBoolToObject(config, "b_streamed", true);
	if (ne->planned)
		add_limits(config, e, &ne->plan);
	if (ne->dev.modeled)
		cJSON_AddStringToObject(config, "timing_model", timing_model(e));
	add_profile(config, e);
	return config;
}

static void npu_close(struct rb_engine *e)
{
	struct npu_engine *ne = e->priv;

	if (!ne)
		return;
	npu_unprepare(ne);
	rb_npu_packed_b_release(&ne->dev, &ne->kept_b);
	rb_npu_device_close(&ne->dev);
	free(ne);
	e->priv = NULL;
}

/* The four NPU engines differ only in name, description, whether times are modeled
 * and whether the vendor driver's check runs; the rest is one implementation. */
#define NPU_ENGINE_OPS                                                                             \
	.open = npu_open, .prepare = npu_prepare, .run = npu_run, .read_c = npu_read_c,            \
	.config = npu_config, .close = npu_close

const struct rb_engine_ops rb_engine_sim = {
    .name = "sim",
    .description = "emulated RK3588 NPU behind the emulated rknpu kernel driver; "
		   "times are modeled (timing model of a hardware profile calibrated to "
		   "published measurements)",
    .modeled = true,
    NPU_ENGINE_OPS,
    .check = npu_check,
};

const struct rb_engine_ops rb_engine_rknpu = {
    .name = "rknpu",
    .description = "RK3588 NPU through the vendor rknpu DRM driver; device wall-clock time",
    NPU_ENGINE_OPS,
    .check = npu_check,
};

const struct rb_engine_ops rb_engine_sim_rocket = {
    .name = "sim:rocket",
    .description = "emulated RK3588 NPU behind the emulated mainline rocket kernel driver; "
		   "times are modeled",
    .modeled = true,
    NPU_ENGINE_OPS,
};

const struct rb_engine_ops rb_engine_rocket = {
    .name = "rocket",
    .description = "RK3588 NPU through the mainline rocket accel driver "
		   "(default: the first accel node of driver rocket); device wall-clock time",
    NPU_ENGINE_OPS,
};
