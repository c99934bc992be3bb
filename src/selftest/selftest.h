/* rknn-bench selftest: first light on a board, a ladder of rungs from the system to a
 * soak, each proving one thing, run in order and stopped at the first failure.
 *
 *   0 system     kernel, driver name and version, node and permissions, IOMMU, DMA/CMA
 *                memory, clocks and governors (info's checks), other holders of the NPU
 *   1 buffers    create, map, sync, destroy, patterns written and read back
 *   2 submit     the smallest job: one task, through the driver ops alone (no job
 *                runner), interrupt and fence or wait path
 *   3 golden     the one-task programs of the golden set (tests/golden, word for word
 *                what the encoder makes at their addresses: test_selftest checks), run
 *   4 single     single-core plans across the tiling regimes, on each core alone
 *   5 multi      every launch mode on all three cores
 *   6 features   each feature unproven on silicon alone, against the same plan without
 *   7 timing     the calibration runs (docs/boards.md section 6): measured over modeled,
 *                flagged outside [RB_SELFTEST_BAND_LO, RB_SELFTEST_BAND_HI]
 *   8 soak       random shapes and configs for a while, every result verified
 *
 * A failing case of rungs 4-8 is bisected to the smallest shape and simplest config
 * that still fails the same way. The failure (struct rb_selftest_failure) names its
 * cause (a short class and a sentence), the programs of the failing case (as `dump`
 * reads them), the interrupt status read back, what the kernel said, and what to try.
 *
 * The report is a `run` report (rknn-bench/1) whose results are the timing runs of
 * rung 7, so `rknn-bench calibrate report.json` fits a profile from it as from run
 * reports; the ladder is in its "selftest" object (readers ignore unknown keys).
 *
 * Library code: silent. rb_selftest_run fills a caller-owned struct rb_selftest (release
 * with rb_selftest_release) and calls `progress` as each rung starts and ends. */
#ifndef RB_SELFTEST_SELFTEST_H
#define RB_SELFTEST_SELFTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "host/context.h"
#include "results/report.h"
#include "dev/info.h"
#include "run/engine.h"

#define RB_SELFTEST_RUNGS 9
/* Measured over modeled outside this band is flagged (rung 7): twice either way is
 * more than a calibration moves the model (bench/calibration.md), so a clock or a
 * setting is off. */
#define RB_SELFTEST_BAND_LO 0.5
#define RB_SELFTEST_BAND_HI 2.0
#define RB_SELFTEST_SOAK_S  60.0
#define RB_SELFTEST_TEXT    1024
#define RB_SELFTEST_LOG     8192
#define RB_SELFTEST_NOTES   16

struct rb_selftest_opts {
	const char *device;           /* sim, sim:rocket, rknpu[:PATH], rocket[:PATH], auto */
	struct rb_engine_opts engine; /* path, emulator settings (soc), threads */
	double soak_s;                /* rung 8's length (RB_SELFTEST_SOAK_S by default) */
	uint64_t seed;                /* inputs and the soak's choices */
	int iters;                    /* samples per timing run on a board (rung 7) */
	bool allow_shared;            /* another holder of the NPU is a note, not a failure */
	/* rung 0: "/sys" and "/proc" (tests give fixtures) */
	const char *sysfs_root, *proc_root;
};

void rb_selftest_opts_init(struct rb_selftest_opts *o);

/* One case a rung ran (kept for the report). */
struct rb_selftest_case {
	char what[96]; /* "one task", "N tiles", "weight reuse", ... */
	struct rb_shape shape;
	char plan[256]; /* the compact config string (npu/plan.h) */
	enum rb_npu_launch launch;
	int err;         /* 0, or the -errno it failed with */
	bool wrong;      /* ran, verification failed */
	double us;       /* median (modeled on the emulator) */
	double model_us; /* rung 7: the model's time of the same plan (built-in profile) */
	bool flagged;    /* rung 7: measured/modeled outside the band */
};

struct rb_selftest_rung {
	const char *name, *proves;
	bool ran, passed;
	double seconds; /* host wall time */
	struct rb_selftest_case *cases;
	size_t n_cases;
	char notes[RB_SELFTEST_NOTES][256];
	size_t n_notes;
};

/* What broke, for people and for the bug report. */
struct rb_selftest_failure {
	int rung; /* -1: none */
	int err;  /* -errno; -EBADMSG: a wrong result */
	/* A short class: permission, no-device, driver-version, busy, dma-memory,
	 * iommu-fault, hang, no-interrupt, wrong-result, device-error, feature */
	char cause[32];
	char message[RB_SELFTEST_TEXT];   /* the diagnosis */
	char hint[RB_SELFTEST_TEXT];      /* what to try next */
	struct rb_selftest_case failing;  /* as found */
	struct rb_selftest_case smallest; /* after bisecting (== failing when not bisected) */
	int bisect_steps;
	/* The programs of `smallest`, one per core that runs (text `dump` reads: one 16-digit
	 * hex word a line, '#' comments), and the interrupt status each task's descriptor
	 * got back (rknpu; rungs 2-3 only). */
	char *programs[RB_HW_MAX_CORES];
	unsigned program_core[RB_HW_MAX_CORES];
	size_t n_programs;
	uint32_t int_status;
	bool int_status_read;
	bool output_written;              /* rungs 2-3 after a timeout: the NPU wrote C */
	char kernel_log[RB_SELFTEST_LOG]; /* lines since the ladder started, or why none */
};

struct rb_selftest {
	struct rb_selftest_opts opts;
	const struct rb_engine_ops *ops; /* the engine of opts.device */
	struct rb_npu_info npu;
	struct rb_host_info host;
	struct rb_info_warnings warnings;
	bool npu_read;
	char driver[32]; /* rknpu or rocket */
	char node[256];  /* the device node, or "(emulator)" */
	char mode[32];   /* "emulator" or "board" */
	int64_t cma_total_kb, cma_free_kb, mem_available_kb;
	char holders[512]; /* other processes holding the node: "1234 (name), ..." */
	struct rb_selftest_rung rungs[RB_SELFTEST_RUNGS];
	struct rb_selftest_failure failure;
	struct rb_result *results; /* rung 7's runs: the report's results */
	size_t n_results;
	char **result_names; /* names the results point at */
	double seconds;
	/* the kernel log reader (dev/kmsg), opened as the ladder starts */
	int kmsg_fd;
	char kmsg_note[160];
	uint64_t kmod_log_start; /* bytes of the emulated kernel's log before */
};

/* Progress: called as rung `i` starts (done false) and ends (done true). */
typedef void (*rb_selftest_progress_fn)(void *ctx, const struct rb_selftest *st, int rung,
					bool done);

/* Runs the ladder. 0 when every rung passed; -EBADMSG when a result was wrong; else the
 * -errno of the failure (st->failure says which rung and why). -EINVAL: bad options. */
int rb_selftest_run(struct rb_selftest *st, const struct rb_selftest_opts *o,
		    rb_selftest_progress_fn progress, void *ctx);
void rb_selftest_release(struct rb_selftest *st);

/* The report: rb_report_json of the timing results with a "selftest" object (rungs,
 * cases, failure, system). NULL when out of memory. */
cJSON *rb_selftest_json(const struct rb_selftest *st, const struct rb_context *ctx);

/* The one-task programs of rung 3: the golden set's shapes (tests/golden), i 0 or 1;
 * *name "fp16_4x64x16" etc. Encoded at `addr` (A, B, C) they are the golden words. */
#define RB_SELFTEST_GOLDEN 2
int rb_selftest_golden_task(size_t i, const uint32_t addr[3], bool mainline,
			    struct rb_npu_task *task, struct rb_shape *shape, const char **name);

/* ---- internal, between the files of src/selftest ---- */

struct rb_selftest_env;
void rb_selftest_note(struct rb_selftest_rung *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
int rb_selftest_fail(struct rb_selftest *st, int rung, int err, const char *cause, const char *hint,
		     const char *fmt, ...) __attribute__((format(printf, 6, 7)));
int rb_selftest_add_case(struct rb_selftest_rung *r, const struct rb_selftest_case *c);

int rb_selftest_system(struct rb_selftest *st);          /* rung 0 (system.c) */
int rb_selftest_buffers(struct rb_selftest *st);         /* rung 1 (onetask.c) */
int rb_selftest_submit(struct rb_selftest *st);          /* rung 2 */
int rb_selftest_golden(struct rb_selftest *st);          /* rung 3 */
int rb_selftest_plans(struct rb_selftest *st, int rung); /* rungs 4-8 (plans.c) */
/* The kernel log since the ladder started into st->failure.kernel_log (system.c). */
void rb_selftest_kernel_log(struct rb_selftest *st, const char *emulated);
void rb_selftest_kmsg_open(struct rb_selftest *st);
/* The programs of a plan config and shape, as dump text per core (plans.c). */
int rb_selftest_programs(struct rb_selftest *st, const struct rb_selftest_case *c);
/* Opens the device of st->opts (for rungs 1-3). */
int rb_selftest_open_device(struct rb_selftest *st, struct rb_npu_device *dev);
/* Classifies err and the message into cause and hint (diagnose in plans.c). */
void rb_selftest_classify(int err, const char *text, const char **cause, const char **hint);

#endif
