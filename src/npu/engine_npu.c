/* NPU devices as engines: the vendor driver (rknpu) and mainline rocket, each on a
 * board or emulated (sim, sim:rocket). All run the same code — plan, layouts, regcmd,
 * the userspace driver — and differ only in the transport under the driver. On
 * rocket the planner always emits the mainline program variant (§a.6). */
#include <errno.h>
#include <stdlib.h>

#include "core/error.h"
#include "npu/engine.h"
#include "npu/fault.h"
#include "npu/job.h"
#include "sim/soc.h"

struct npu_engine {
	struct rb_npu_device dev;
	struct rb_plan plan;
	bool planned;
	struct rb_npu_job *job;
};

/* The node mainline kernels give the rocket accel device (§d.2). */
#define ROCKET_DEFAULT_NODE "/dev/accel/accel0"

enum npu_kind { NPU_SIM, NPU_RKNPU, NPU_SIM_ROCKET, NPU_ROCKET };

static int npu_open(struct rb_engine *e, enum npu_kind kind)
{
	struct npu_engine *ne = calloc(1, sizeof(*ne));
	int ret;

	if (!ne)
		return rb_set_error(-ENOMEM, "out of memory");
	if (kind == NPU_SIM)
		ret = rb_npu_device_open_sim(&ne->dev, &e->opts.sim);
	else if (kind == NPU_SIM_ROCKET)
		ret = rb_npu_device_open_sim_rocket(&ne->dev, &e->opts.sim);
	else if (kind == NPU_ROCKET)
		ret = rb_npu_device_open_rocket(&ne->dev,
						e->opts.path ? e->opts.path : ROCKET_DEFAULT_NODE);
	else if (e->opts.path)
		ret = rb_npu_device_open_rknpu(&ne->dev, e->opts.path);
	else
		ret = rb_set_error(-ENOENT, "no rknpu device node found under /dev/dri: is the "
					    "rknpu kernel module loaded? (or give rknpu:PATH)");
	if (ret < 0) {
		free(ne);
		return ret;
	}
	e->priv = ne;
	return 0;
}

static int sim_open(struct rb_engine *e)
{
	return npu_open(e, NPU_SIM);
}

static int rknpu_open(struct rb_engine *e)
{
	return npu_open(e, NPU_RKNPU);
}

static int sim_rocket_open(struct rb_engine *e)
{
	return npu_open(e, NPU_SIM_ROCKET);
}

static int rocket_open(struct rb_engine *e)
{
	return npu_open(e, NPU_ROCKET);
}

static void npu_unprepare(struct npu_engine *ne)
{
	rb_npu_job_free(ne->job);
	ne->job = NULL;
	if (ne->planned)
		rb_plan_release(&ne->plan);
	ne->planned = false;
}

static int npu_prepare(struct rb_engine *e, const struct rb_inputs *in)
{
	struct npu_engine *ne = e->priv;
	int ret;

	npu_unprepare(ne);
	e->in = in;
	if (ne->dev.driver == RB_NPU_ROCKET && !rb_fault_no_rdma())
		e->opts.plan.mainline = true; /* the only variant that runs on rocket */
	ret = rb_plan_init(&ne->plan, &in->shape, &e->opts.plan);
	if (ret < 0)
		return -EINVAL;
	ne->planned = true;
	ret = rb_npu_job_new(&ne->job, &ne->dev, &ne->plan, in, e->opts.launch);
	/* A config error found while building the programs is still the input's fault. */
	return ret == -EINVAL || ret == -ERANGE ? -EINVAL : (ret < 0 ? -EIO : 0);
}

static int npu_run(struct rb_engine *e, void *c, double *elapsed_us)
{
	struct npu_engine *ne = e->priv;
	struct rb_npu_job_times t;
	int ret = rb_npu_job_run(ne->job, c, &t);

	*elapsed_us = t.device_us;
	return ret;
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
		cJSON_AddBoolToObject(config, "unproven_on_silicon", ne->plan.streamed);
	}
	cJSON_AddStringToObject(config, "launch", rb_npu_launch_name(e->opts.launch));
	cJSON_AddStringToObject(config, "driver",
				ne->dev.driver == RB_NPU_ROCKET ? "rocket" : "rknpu");
	cJSON_AddNumberToObject(config, "driver_version",
				ne->dev.driver == RB_NPU_ROCKET ? ne->dev.rocket.drv_version
								: ne->dev.drv.drv_version);
	if (ne->planned)
		add_limits(config, e, &ne->plan);
	if (ne->dev.modeled)
		cJSON_AddStringToObject(config, "timing_model", timing_model(e));
	return config;
}

static void npu_close(struct rb_engine *e)
{
	struct npu_engine *ne = e->priv;

	if (!ne)
		return;
	npu_unprepare(ne);
	rb_npu_device_close(&ne->dev);
	free(ne);
	e->priv = NULL;
}

const struct rb_engine_ops rb_engine_sim = {
    .name = "sim",
    .description = "emulated RK3588 NPU behind the emulated rknpu kernel driver; "
		   "times are modeled (timing model of a hardware profile calibrated to "
		   "published measurements)",
    .modeled = true,
    .open = sim_open,
    .prepare = npu_prepare,
    .run = npu_run,
    .config = npu_config,
    .close = npu_close,
};

const struct rb_engine_ops rb_engine_rknpu = {
    .name = "rknpu",
    .description = "RK3588 NPU through the vendor rknpu DRM driver; device wall-clock time",
    .open = rknpu_open,
    .prepare = npu_prepare,
    .run = npu_run,
    .config = npu_config,
    .close = npu_close,
};

const struct rb_engine_ops rb_engine_sim_rocket = {
    .name = "sim:rocket",
    .description = "emulated RK3588 NPU behind the emulated mainline rocket kernel driver; "
		   "times are modeled",
    .modeled = true,
    .open = sim_rocket_open,
    .prepare = npu_prepare,
    .run = npu_run,
    .config = npu_config,
    .close = npu_close,
};

const struct rb_engine_ops rb_engine_rocket = {
    .name = "rocket",
    .description = "RK3588 NPU through the mainline rocket accel driver "
		   "(default node " ROCKET_DEFAULT_NODE "); device wall-clock time",
    .open = rocket_open,
    .prepare = npu_prepare,
    .run = npu_run,
    .config = npu_config,
    .close = npu_close,
};
