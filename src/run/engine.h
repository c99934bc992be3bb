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
#ifndef RB_RUN_ENGINE_H
#define RB_RUN_ENGINE_H

#include <stdbool.h>

#include <cJSON.h>

#include "host/perfctr.h"
#include "numeric/inputs.h"
#include "numeric/verify.h"
#include "results/report.h"
#include "npu/job.h"
#include "npu/plan.h"
#include "sim/sim.h"

struct rb_engine_opts {
	int threads;                /* CPU threads; <= 0: one per online CPU */
	const char *path;           /* device node (rknpu:PATH, rocket:PATH); NULL: discover */
	const char *note;           /* why auto chose the emulator, for the user; or NULL */
	struct rb_plan_config plan; /* NPU devices: the user's config over all-auto */
	enum rb_npu_launch launch;  /* NPU devices: how the per-core jobs are launched */
	struct rb_sim_config sim;   /* the emulator */
	/* NPU devices: submit programs unchecked (job.h) */
	bool unsafe_skip_validation;
	/* a plan flag or a launch was given: run's model-guided default stays off */
	bool config_given;
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
	/* Optional: -EINVAL (a message giving the number and the limit) for a shape whose
	 * buffers would not fit, or -ENOMEM when the host's free memory is short now (it
	 * may not be later), called before its inputs are allocated. prepare checks again,
	 * so a caller that skips this never allocates unchecked either. */
	int (*check)(struct rb_engine *engine, const struct rb_shape *shape);
	/* Takes the inputs of one shape; they stay valid until the next prepare or close.
	 * -EINVAL: the shape or config cannot be planned (an input error); -ENOMEM: the
	 * host is short of memory now; other errors are the device's. */
	int (*prepare)(struct rb_engine *engine, const struct rb_inputs *in);
	/* Computes C (M×N of the dtype's output type) and its elapsed time. With read_c,
	 * c may be NULL: C then stays on the device, for read_c. */
	int (*run)(struct rb_engine *engine, void *c, double *elapsed_us);
	/* Optional: rows [m0, m0 + rows) and columns [n0, n0 + cols) of the C of the last
	 * run into c (rows×cols row-major; n0 a multiple of 16), the values run would have
	 * written: a large C can be checked a block at a time instead of held whole next
	 * to the device's copy. */
	int (*read_c)(const struct rb_engine *engine, int64_t m0, int64_t rows, int64_t n0,
		      int64_t cols, void *c);
	/* The configuration this engine runs with, as a new JSON object. */
	cJSON *(*config)(const struct rb_engine *engine);
	void (*close)(struct rb_engine *engine);
};

/* Profiling (run --perf, --phase), set by the caller between calls: NPU engines count
 * prepare as RB_PHASE_PACK_B and each run's PACK_A, SUBMIT and UNPACK on `perf`, the
 * CPU engine its run as COMPUTE. With `phase_only` PACK_A or SUBMIT (NPU engines), a
 * run does that phase alone and reports its host time (the other phases' work comes
 * from an earlier full run); RB_PHASE_NONE (the default): whole runs. */
struct rb_engine {
	const struct rb_engine_ops *ops;
	struct rb_engine_opts opts;
	const struct rb_inputs *in;
	void *priv;
	struct rb_perfctr *perf; /* NULL: not counting */
	enum rb_phase phase_only;
};

/* The engine of a --device value: "cpu", "sim" (also "sim:rknpu"), "sim:rocket",
 * "rknpu" or "rknpu:PATH", "rocket" or "rocket:PATH" (the path goes to opts->path),
 * "auto" (the engine of the first NPU node discover.h finds, else sim with opts->note
 * saying why). NULL and -EINVAL with a message for anything else. */
const struct rb_engine_ops *rb_engine_find(const char *device, struct rb_engine_opts *opts);
/* The engines (engine_cpu.c, engine_npu.c). */
extern const struct rb_engine_ops rb_engine_cpu, rb_engine_sim, rb_engine_rknpu,
    rb_engine_sim_rocket, rb_engine_rocket;
/* Engines in table order, NULL-terminated. */
const struct rb_engine_ops *const *rb_engine_list(void);

/* The NPU device an engine of `ops` runs on (sim, sim:rocket, rknpu, rocket), opened
 * with opts' path and emulator settings: shared by the engines and the matmul executor
 * (matmul.c). -EINVAL for an engine that is not an NPU (cpu). */
struct rb_npu_device;
int rb_engine_open_npu_device(struct rb_npu_device *dev, const struct rb_engine_ops *ops,
			      const struct rb_engine_opts *opts);
/* What a device needs of every plan config: the mainline program variant on rocket. */
void rb_engine_plan_for_device(struct rb_plan_config *cfg, const struct rb_npu_device *dev);

/* Sets e's plan config from its text and its launch mode, for the next prepare: 0 or
 * the plan parser's -EINVAL. */
int rb_engine_configure(struct rb_engine *e, const char *plan, enum rb_npu_launch launch);
/* The time of one run of plan on shape, prepared from the shape alone (no data): what a
 * model-only emulator engine (sim_opts.model_only) gives as the modeled time. */
int rb_engine_model_us(struct rb_engine *e, const struct rb_shape *shape, const char *plan,
		       enum rb_npu_launch launch, double *us);

int rb_engine_open(struct rb_engine *engine, const struct rb_engine_ops *ops,
		   const struct rb_engine_opts *opts);
void rb_engine_close(struct rb_engine *engine);

/* The command line that measures result r alone with the same settings; for an NPU
 * device it carries the config as planned (r->config "plan"), so it replays the
 * identical plan. */
struct rb_result;
void rb_engine_reproducer(const struct rb_engine *e, const struct rb_result *r, uint64_t seed,
			  enum rb_data_kind data, enum rb_verify_mode verify, char *buf,
			  size_t size);

#endif
