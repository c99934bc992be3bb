/* An NPU device behind one ops table, whichever kernel driver runs it.
 *
 * The job runner (npu/job.c) works only through this: it creates buffer objects,
 * syncs them, and hands a launch (struct rb_dev_job: the submits in order, the task
 * descriptors, the buffers) to the driver's ops, which know how their kernel takes it.
 * Each driver's ops and launch modes live in a file of their own: rknpu_launch.c (the
 * vendor driver: fences, threads, multicore) and rocket_launch.c (mainline: one SUBMIT
 * of per-core jobs, or a SUBMIT per core from its own thread). Adding a driver is one
 * such file and one open function here.
 *
 * Ownership: rb_npu_device_open_* fill a caller-owned struct; rb_npu_device_close
 * releases it. */
#ifndef RB_DEV_NPU_DEVICE_H
#define RB_DEV_NPU_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dev/discover.h"
#include "dev/rknpu.h"
#include "dev/rocket.h"
#include "hw/soc.h"

struct rb_sim_config; /* sim/sim.h: the emulator behind a sim device */

/* The timeout rknn-bench asks of the vendor kernel per submit (rknpu's `timeout`):
 * generous for the largest plans on a board; the planner keeps every submit's modeled
 * time under half of it (rb_npu_fit_plan). */
#define RB_NPU_DEFAULT_TIMEOUT_MS 6000

/* How the per-core work of a job reaches the kernel. On rocket: fences = one SUBMIT
 * with one job per core, then PREP_BO on the output (rocket's fences are on the BOs);
 * threads = one SUBMIT per core from its own thread; multicore does not exist. */
enum rb_npu_launch {
	RB_LAUNCH_FENCES = 0, /* non-blocking submits with out-fences, then wait all */
	RB_LAUNCH_THREADS,    /* one blocking submit per core from its own thread */
	RB_LAUNCH_MULTICORE,  /* one submit for all cores of the plan (core_mask 0x3/0x7,
				 subcore_task ranges); masks 0x5/0x6 never run on the
				 vendor driver, which such a submit shows (§d.1) */
};

const char *rb_npu_launch_name(enum rb_npu_launch launch);
int rb_npu_launch_parse(const char *text, enum rb_npu_launch *out);

/* A buffer object of either driver. Under rocket each core's file has its own copy at
 * its own address (dev/rocket.h): a buffer is made for the plan's first core and
 * rb_dev_bo_reach makes it reachable by more; rb_dev_bo_addr is the address the i-th
 * core's programs use. */
struct rb_dev_bo {
	void *map;
	uint32_t dma_addr; /* as the plan's first core sees it */
	uint64_t size;     /* parts: of the first part */
	bool parts;        /* made by bo_create_parts */
	struct rb_rknpu_bo rknpu;
	struct rb_rocket_bo rocket;
};

enum rb_dev_bo_kind {
	RB_BO_DATA,  /* A, B, C and programs: scattered pages behind the IOMMU, cached */
	RB_BO_TASKS, /* rknpu task descriptors, read by the kernel through its mapping */
};

/* One SUBMIT: a run of consecutive tasks of one core. */
struct rb_dev_submit {
	unsigned core;
	unsigned plan_core; /* the core's index in the plan (rb_dev_bo_addr) */
	uint32_t task_start, task_number;
};

/* What the kernel is told of one task; each driver turns it into its descriptor. */
struct rb_dev_task {
	uint32_t regcmd_addr;   /* NPU address of its program */
	uint32_t regcfg_amount; /* register writes the kernel is told of (rknpu) */
	uint32_t regcmd_words;  /* every word the PC fetches, tail included (rocket) */
	uint32_t enable_mask;   /* the blocks it runs */
	uint32_t int_mask;      /* the interrupt that ends it */
};

/* One core's share, for drivers that take a job per core. */
struct rb_dev_core {
	unsigned core;
	const struct rb_dev_task *tasks; /* its tasks in order */
	uint32_t n_tasks;
};

/* What a launch hands the driver. */
struct rb_dev_job {
	const struct rb_dev_submit *submits; /* in order; task ranges index the task BO */
	size_t n_submits;
	const struct rb_dev_core *cores; /* the plan's cores in plan order */
	unsigned n_cores;
	uint32_t plan_core_mask;       /* the mask the plan asked for */
	uint32_t force_core_mask;      /* 0, or a mask every submit uses (fault injection) */
	const struct rb_dev_bo *tasks; /* drivers with tasks_in_bo: the descriptors */
	const struct rb_dev_bo *in[4]; /* A, B, programs, and NULL or more of B */
	const struct rb_dev_bo *out;   /* C */
	double hw_us[RB_HW_MAX_CORES]; /* out: per-core hw_elapse_time where reported */
};

/* The host phases of a job's run (npu/job.h). When a device has an on_phase hook, the
 * job calls it as each phase begins, outside the timed windows (and with DONE at the
 * end); a phase the hook returns false for is skipped. Profilers count per phase with
 * it (run --perf), run --phase repeats one phase alone (the inputs packed and C
 * unpacked by an earlier full run). */
enum rb_npu_phase {
	RB_NPU_PHASE_PACK_A, /* pack A, sync it to the device */
	RB_NPU_PHASE_SUBMIT, /* submit the jobs, wait for them */
	RB_NPU_PHASE_UNPACK, /* sync C from the device, unpack it, add K-slices */
	RB_NPU_PHASE_DONE,
};
typedef bool (*rb_npu_phase_fn)(void *ctx, enum rb_npu_phase phase);

struct rb_npu_device;

/* See drops_timed_out_jobs: an all-ones byte, so the word it makes is a NaN payload no
 * fp16/fp32 result has. */
#define RB_DEV_OUT_FILL 0xffu

struct rb_dev_ops {
	const char *name;  /* the kernel driver: "rknpu", "rocket" */
	bool tasks_in_bo;  /* task descriptors in a BO (rknpu); else in the SUBMIT */
	size_t task_bytes; /* tasks_in_bo: bytes of one descriptor */
	/* The kernel needs the mainline program variant (DPU_RDMA programmed, §a.6). */
	bool mainline_programs;
	/* The kernel times out a hung job and signals it like a finished one, the core
	 * reset and the outputs untouched, and drops a bad job at SUBMIT without a word
	 * (rocket, §d.2): the runner fills C with RB_DEV_OUT_FILL bytes before each launch
	 * (unless model_only) and checks what is left of it after. */
	bool drops_timed_out_jobs;
	/* The kernel's own job timeout in ms (rocket: 500, from a job's first kick, §a.3);
	 * 0: the timeout the submit asks for (rknpu: rb_npu_device.timeout_ms). */
	unsigned job_timeout_ms;
	int (*bo_create)(struct rb_npu_device *dev, uint64_t size, enum rb_dev_bo_kind kind,
			 struct rb_dev_bo *bo);
	void (*bo_destroy)(struct rb_npu_device *dev, struct rb_dev_bo *bo);
	/* CPU writes done (rknpu MEM_SYNC to the device, rocket FINI_BO). */
	int (*bo_to_device)(struct rb_npu_device *dev, const struct rb_dev_bo *bo);
	/* Device writes done (rknpu MEM_SYNC from the device; rocket PREP_BO, which also
	 * waits for the jobs writing it). */
	int (*bo_from_device)(struct rb_npu_device *dev, const struct rb_dev_bo *bo);
	/* tasks_in_bo: writes the descriptors of n tasks into bo (made with RB_BO_TASKS,
	 * task_bytes each) and syncs it. */
	int (*write_tasks)(struct rb_npu_device *dev, const struct rb_dev_task *tasks, size_t n,
			   struct rb_dev_bo *bo);
	/* 0, or -EINVAL with a message when this driver has no such launch mode. */
	int (*check_launch)(enum rb_npu_launch launch);
	/* Submits the job and waits for it: 0 or -errno naming the failing core and tasks
	 * (and, under emulation, what the emulated kernel said). */
	int (*launch)(struct rb_npu_device *dev, enum rb_npu_launch launch, struct rb_dev_job *job);
	/* Optional (NULL: one address for every core, which reaches every buffer): the
	 * address of bo for the plan's i-th core, and making bo reachable by the plan's
	 * first n_cores cores. */
	uint32_t (*bo_addr)(const struct rb_npu_device *dev, const struct rb_dev_bo *bo,
			    unsigned plan_core);
	int (*bo_reach)(struct rb_npu_device *dev, struct rb_dev_bo *bo, unsigned n_cores);
	/* Optional (NULL: none): a buffer of n parts, the i-th (sizes[i] bytes, at
	 * bo_addr(i)) reached by the plan's i-th core alone and written by the CPU through
	 * bo_part_map (rocket: data each core reads a share of, held once in all). */
	int (*bo_create_parts)(struct rb_npu_device *dev, const uint64_t *sizes, unsigned n,
			       struct rb_dev_bo *bo);
	void *(*bo_part_map)(const struct rb_dev_bo *bo, unsigned i);
	/* After a timeout: bring the cores back (rknpu ACT_RESET; rocket: nothing, its
	 * scheduler already reset the core that hung). */
	int (*reset)(struct rb_npu_device *dev);
};

struct rb_npu_device {
	const struct rb_dev_ops *ops;
	enum rb_npu_driver driver; /* the kernel driver under it (dev/discover.h) */
	struct rb_rknpu drv;       /* driver RB_DRIVER_RKNPU */
	struct rb_rocket rocket;   /* driver RB_DRIVER_ROCKET */
	const char *name;          /* "sim", "rknpu", "sim:rocket", "rocket" */
	bool modeled;              /* times come from the emulator's model */
	bool model_only;           /* emulator timing only: C is never written, so no data is
				      packed or unpacked (inputs may hold no matrices) */
	int timeout_ms;            /* per submit */
	/* The hardware profile the device runs at: the emulator's, or on a board the
	 * default with the NPU clock the kernel set (rb_soc_for_driver); the planner cuts
	 * submits to the kernel's timeout at its clock (rb_npu_fit_plan). */
	struct rb_soc_profile soc;
	/* The advisory lock on the device node (flock): rknn-bench runs alone on an NPU */
	bool locked;
	int lock_fd;
	/* Optional (NULL: every phase runs): see enum rb_npu_phase. */
	rb_npu_phase_fn on_phase;
	void *phase_ctx;
	/* --unsafe-skip-validation: programs reach the device unchecked (npu/validate.h),
	 * for reverse-engineering work; the emulator still enforces its rules */
	bool unsafe_skip_validation;
};

/* Every open of an NPU device takes an exclusive advisory lock (flock) on its node, so
 * that no two rknn-bench processes (tunes, shards, the shim under llama.cpp) use one
 * NPU at once: the vendor driver drops the jobs of another user whose age in µs
 * passed their timeout in ms on every non-blocking submit (issue 32), and any two
 * users share the cores and DDR, which spoils both measurements. An emulated device has
 * a node of its own in each process, so it locks only when $RKNN_BENCH_SIM_NODE names a
 * file standing for the emulated node (processes given the same file see each other).
 * A device in use fails with -EBUSY and a message saying so, unless
 * rb_npu_device_set_wait(true) (--wait-device) made the open wait for it. */
void rb_npu_device_set_wait(bool wait);

int rb_npu_device_open_sim(struct rb_npu_device *dev, const struct rb_sim_config *cfg);
/* path NULL: the first rknpu node discovery finds (dev/discover.h, which also checks an
 * explicit path is an rknpu node). */
int rb_npu_device_open_rknpu(struct rb_npu_device *dev, const char *path);
int rb_npu_device_open_sim_rocket(struct rb_npu_device *dev, const struct rb_sim_config *cfg);
int rb_npu_device_open_rocket(struct rb_npu_device *dev, const char *path);
/* The job timeout of the device's kernel in ms (job_timeout_ms, else timeout_ms). */
unsigned rb_npu_device_job_timeout_ms(const struct rb_npu_device *dev);
/* bo's NPU address for the plan's i-th core (the ops' bo_addr, else bo->dma_addr). */
uint32_t rb_dev_bo_addr(const struct rb_npu_device *dev, const struct rb_dev_bo *bo,
			unsigned plan_core);
/* Makes bo reachable by the plan's first n_cores cores (rocket: copies in their files,
 * filled from the first; elsewhere nothing). Callers that share bo between threads hold
 * their lock around it, as around bo_create. */
int rb_dev_bo_reach(struct rb_npu_device *dev, struct rb_dev_bo *bo, unsigned n_cores);
/* The transport under the device's driver. */
struct rb_transport *rb_npu_device_transport(struct rb_npu_device *dev);
void rb_npu_device_close(struct rb_npu_device *dev);

/* The drivers' ops (rknpu_launch.c, rocket_launch.c). */
extern const struct rb_dev_ops rb_rknpu_ops;
extern const struct rb_dev_ops rb_rocket_ops;

/* For the launch files: names the failing submit and, under emulation, what the
 * emulated kernel logged; returns err. */
int rb_dev_submit_error(struct rb_npu_device *dev, unsigned core, uint32_t task_start,
			uint32_t task_number, int err);

#endif
