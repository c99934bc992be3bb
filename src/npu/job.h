/* The job runner: one matmul on an NPU device, through the vendor driver ABI.
 *
 * prepare (once per shape and plan, like a backend at model load): allocate buffer
 * objects (A cube, packed B, C cubes, one regcmd and one task array per core), pack B
 * (and its K-slices), encode every core's program (npu/regcmd) and task descriptors.
 * run (timed): pack A, submit one job per core of the plan (non-blocking submits with
 * out-fences, one blocking submit per core from its own thread like the seed backend,
 * or one multi-core submit), wait for all, unpack C (adding K-slices on the host).
 *
 * Device time is measured on the transport's clock from the first submit to the last
 * completion: CLOCK_MONOTONIC on a board, the virtual clock on the emulator (then the
 * device is `modeled`). Host time per phase is reported apart.
 *
 * Ownership: rb_npu_device_open_* fill a caller-owned struct, rb_npu_device_close
 * releases it; rb_npu_job_new/_free pair. A job keeps a pointer to its device and plan,
 * which must outlive it. */
#ifndef RB_NPU_JOB_H
#define RB_NPU_JOB_H

#include <stdbool.h>

#include "core/inputs.h"
#include "dev/discover.h"
#include "dev/rknpu.h"
#include "dev/rocket.h"
#include "npu/plan.h"
struct rb_sim_config; /* sim/sim.h: the emulator behind a sim device */

/* The host phases of rb_npu_job_run. When a device has an on_phase hook, the job calls
 * it as each phase begins, outside the timed windows (and with DONE at the end); a
 * phase the hook returns false for is skipped. Profilers count per phase with it (run
 * --perf), run --phase repeats one phase alone (the inputs packed and C unpacked by an
 * earlier full run). */
enum rb_npu_phase {
	RB_NPU_PHASE_PACK_A, /* pack A, sync it to the device */
	RB_NPU_PHASE_SUBMIT, /* submit the jobs, wait for them */
	RB_NPU_PHASE_UNPACK, /* sync C from the device, unpack it, add K-slices */
	RB_NPU_PHASE_DONE,
};
typedef bool (*rb_npu_phase_fn)(void *ctx, enum rb_npu_phase phase);

struct rb_npu_device {
	enum rb_npu_driver driver; /* the kernel driver under it (dev/discover.h) */
	struct rb_rknpu drv;       /* driver RB_DRIVER_RKNPU */
	struct rb_rocket rocket;   /* driver RB_DRIVER_ROCKET */
	const char *name;          /* "sim", "rknpu", "sim:rocket", "rocket" */
	bool modeled;              /* times come from the emulator's model */
	bool model_only;           /* emulator timing only: C is never written, so no data is
				      packed or unpacked (inputs may hold no matrices) */
	int timeout_ms;            /* per submit */
	/* Optional (NULL: every phase runs): see enum rb_npu_phase. */
	rb_npu_phase_fn on_phase;
	void *phase_ctx;
	/* --unsafe-skip-validation: programs reach the device unchecked (npu/validate.h),
	 * for reverse-engineering work; the emulator still enforces its rules */
	bool unsafe_skip_validation;
};

int rb_npu_device_open_sim(struct rb_npu_device *dev, const struct rb_sim_config *cfg);
/* path NULL: the first rknpu node discovery finds (dev/discover.h, which also checks an
 * explicit path is an rknpu node). */
int rb_npu_device_open_rknpu(struct rb_npu_device *dev, const char *path);
int rb_npu_device_open_sim_rocket(struct rb_npu_device *dev, const struct rb_sim_config *cfg);
int rb_npu_device_open_rocket(struct rb_npu_device *dev, const char *path);
/* The transport under the device's driver. */
struct rb_transport *rb_npu_device_transport(struct rb_npu_device *dev);
void rb_npu_device_close(struct rb_npu_device *dev);

/* On rocket: fences = one SUBMIT with one job per core, then PREP_BO on the output
 * (rocket's fences are on the BOs); threads = one SUBMIT per core from its own thread;
 * multicore does not exist (no core masks) and is refused. */
enum rb_npu_launch {
	RB_LAUNCH_FENCES = 0, /* non-blocking submits with out-fences, then wait all */
	RB_LAUNCH_THREADS,    /* one blocking submit per core from its own thread */
	RB_LAUNCH_MULTICORE,  /* one submit for all cores of the plan (core_mask 0x3/0x7,
				 subcore_task ranges); masks 0x5/0x6 never run on the
				 vendor driver, which such a submit shows (§d.1) */
};

struct rb_npu_job_times {
	double device_us;                /* first submit to last completion, on the device clock */
	double hw_us[RB_PLAN_MAX_CORES]; /* per-core job hw_elapse_time (0 if unknown) */
	double pack_us;                  /* host: packing A */
	double submit_us;                /* host: submit + wait */
	double unpack_us;                /* host: unpacking C and adding K-slices */
};

struct rb_npu_job;

int rb_npu_job_new(struct rb_npu_job **job, struct rb_npu_device *dev, const struct rb_plan *plan,
		   const struct rb_inputs *in, enum rb_npu_launch launch);
/* Runs the matmul; C is M×N row-major of the shape's output type. A launch that times
 * out is retried once after a reset (rknpu: ACT_RESET; rocket: the kernel reset the
 * core itself); a second timeout fails with -ETIMEDOUT. */
int rb_npu_job_run(struct rb_npu_job *job, void *c, struct rb_npu_job_times *times);
void rb_npu_job_free(struct rb_npu_job *job);

/* Words of all the programs of a job of `plan` (the regcmd buffer). */
int rb_npu_job_program_words(const struct rb_plan *plan, size_t *words);

/* The buffer objects a job of `plan` allocates, in bytes, each rounded up to 4 KiB pages
 * like the kernel does (job_limits.c). */
struct rb_npu_job_bytes {
	uint64_t a, b, c, regcmd, tasks, total;
};

int rb_npu_job_bytes(const struct rb_plan *plan, struct rb_npu_job_bytes *bytes);
/* Fills bytes; -E2BIG (rb_last_error() gives the number and the limit) if they exceed
 * the 4 GiB NPU address space (whose first page is never handed out) or `budget`
 * bytes (the emulator's mem_budget; 0: none). Checked before anything is allocated. */
int rb_npu_job_check_limits(const struct rb_plan *plan, uint64_t budget,
			    struct rb_npu_job_bytes *bytes);

const char *rb_npu_launch_name(enum rb_npu_launch launch);
int rb_npu_launch_parse(const char *text, enum rb_npu_launch *out);

#endif
