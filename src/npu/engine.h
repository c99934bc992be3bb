/* Engines: what runs one matmul on one device.
 *
 * `run` drives every device through this table: the CPU reference today, the NPU
 * devices (emulated and real) as they arrive. An engine is opened once, prepared once
 * per shape (packing, buffer allocation: the setup time reported apart from run time),
 * then run repeatedly; each run reports the time it took: wall time on the CPU, device
 * time on an NPU, modeled time on the emulator (then `modeled` is true).
 *
 * Ownership: rb_engine_open fills a caller-owned struct rb_engine; rb_engine_close
 * releases what it holds. */
#ifndef RB_NPU_ENGINE_H
#define RB_NPU_ENGINE_H

#include <stdbool.h>

#include <cJSON.h>

#include "core/inputs.h"
#include "npu/job.h"
#include "npu/plan.h"
#include "sim/sim.h"

struct rb_engine_opts {
	int threads;                /* CPU threads; <= 0: one per online CPU */
	const char *path;           /* device node (rknpu:PATH, rocket:PATH); NULL: default */
	struct rb_plan_config plan; /* NPU devices: the user's config over all-auto */
	enum rb_npu_launch launch;  /* NPU devices: how the per-core jobs are launched */
	struct rb_sim_config sim;   /* the emulator */
};

/* Everything default: auto plan, fences, the RK3588 emulator. */
void rb_engine_opts_init(struct rb_engine_opts *opts);

struct rb_engine;

struct rb_engine_ops {
	const char *name;
	const char *description;
	bool modeled;      /* times come from a model */
	bool is_reference; /* this engine is the CPU reference itself */
	int (*open)(struct rb_engine *engine);
	/* Takes the inputs of one shape; they stay valid until the next prepare or close.
	 * -EINVAL: the shape or config cannot be planned (an input error); other errors
	 * are the device's. */
	int (*prepare)(struct rb_engine *engine, const struct rb_inputs *in);
	/* Computes C (M×N of the dtype's output type) and its elapsed time. */
	int (*run)(struct rb_engine *engine, void *c, double *elapsed_us);
	/* The configuration this engine runs with, as a new JSON object. */
	cJSON *(*config)(const struct rb_engine *engine);
	void (*close)(struct rb_engine *engine);
};

struct rb_engine {
	const struct rb_engine_ops *ops;
	struct rb_engine_opts opts;
	const struct rb_inputs *in;
	void *priv;
};

/* The engine of a --device value: "cpu", "sim" (also "sim:rknpu"), "sim:rocket",
 * "rknpu" or "rknpu:PATH", "rocket" or "rocket:PATH" (the path goes to opts->path),
 * "auto" (the vendor driver if a node named rknpu is found, else sim).
 * NULL and -EINVAL with a message for anything else. */
const struct rb_engine_ops *rb_engine_find(const char *device, struct rb_engine_opts *opts);
/* Engines in table order, NULL-terminated. */
const struct rb_engine_ops *const *rb_engine_list(void);

int rb_engine_open(struct rb_engine *engine, const struct rb_engine_ops *ops,
		   const struct rb_engine_opts *opts);
void rb_engine_close(struct rb_engine *engine);

#endif
