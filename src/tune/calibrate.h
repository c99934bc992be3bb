/* Calibration from boards (rknn-bench calibrate): fits the free numbers of a hardware
 * profile (soc.h) to the times of `run` reports, so the emulator's timing model
 * (sim/timing.h and the emulated kernels' fixed costs) reproduces a board.
 *
 * Every result of the reports becomes a row: its shape, the plan it ran
 * (config.plan), its launch mode and kernel (config.launch, config.driver) and its
 * median time. The model of a row is that same plan and launch run through the
 * emulator (plan → job → emulated kernel → emulated NPU, model_only) on a candidate
 * profile; Levenberg-Marquardt (core/lsq.h) fits the parameters below in log space
 * to the log of the times, so every row weighs by its relative error.
 *
 * The fitted parameters are what the model really has and run times can tell apart:
 *   ddr.gbps_per_stream, ddr.gbps_per_core, ddr.gbps_total  (DDR bandwidth)
 *   mac.fp16_efficiency, mac.int8_efficiency  the share of the TRM MAC rate the
 *                      array reaches per dtype (the clock is a fact, pinned to 1 GHz on
 *                      boards, and the MACs per cycle are TRM integers that also set the
 *                      kernel group: what a board's MAC-bound runs tell is the rate)
 *   task.fetch_ns, task.pipeline_ns                         (per task)
 *   submit.ioctl_ns (per submit, host side), submit.commit_ns + irq_ns as one sum
 *   (per kick of a core), submit.wake_ns (per wait)
 * Held at the base profile: task.ns_per_word (every program has about the same
 * number of words, so it cannot be told from task.fetch_ns), the split of commit and
 * irq (every kick pays both once), and the facts (cores, MACs per cycle, CBUF). A
 * fitted parameter no row moves at the solution is held too (rb_calib.held).
 *
 * Reports must agree: all measured or all modeled (the emulator's, allowed for tests,
 * and the profile says so), all from one kernel driver (rknpu or rocket: their fixed
 * costs differ) and one host (a profile describes one board). Anything else is
 * refused with -EINVAL naming the report and field.
 *
 * Ownership: struct rb_calib is caller-owned: rb_calib_init, then rb_calib_add_report
 * per file, rb_calib_fit, and rb_calib_release frees what it holds. */
#ifndef RB_TUNE_CALIBRATE_H
#define RB_TUNE_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "dev/npu_device.h"
#include "hw/soc.h"
#include "rknn_bench/shape.h"

enum rb_calib_param {
	RB_CALIB_DDR_STREAM,
	RB_CALIB_DDR_CORE,
	RB_CALIB_DDR_TOTAL,
	RB_CALIB_MAC_FP16,
	RB_CALIB_MAC_INT8,
	RB_CALIB_TASK_FETCH,
	RB_CALIB_TASK_PIPELINE,
	RB_CALIB_SUBMIT_IOCTL,
	RB_CALIB_SUBMIT_KICK, /* commit_ns + irq_ns, split as in the base */
	RB_CALIB_SUBMIT_WAKE,
	RB_CALIB_PARAMS
};

/* The profile key of a parameter ("ddr.gbps_total"; the sum's keys joined by '+'). */
const char *rb_calib_param_key(enum rb_calib_param p);
/* Its value in a profile (the sum for RB_CALIB_SUBMIT_KICK). */
double rb_calib_param_get(const struct rb_soc_profile *soc, enum rb_calib_param p);
/* The profile fields a parameter stands for (at most RB_CALIB_MAX_FIELDS): their
 * dotted paths in a profile document and their values in soc; returns how many. */
#define RB_CALIB_MAX_FIELDS 2
size_t rb_calib_param_fields(const struct rb_soc_profile *soc, enum rb_calib_param p,
			     const char **paths, double *values);
/* Sets it; the sum's costs are scaled by one factor (a 0 sum: split evenly). */
void rb_calib_param_set(struct rb_soc_profile *soc, enum rb_calib_param p, double v);

struct rb_calib_row {
	struct rb_shape shape;
	char name[64];
	char plan[256]; /* the compact config string it ran */
	enum rb_npu_launch launch;
	size_t report;      /* index into rb_calib.reports */
	double measured_us; /* the result's median */
	double fitted_us;   /* the model on the fitted profile (after rb_calib_fit) */
};

#define RB_CALIB_MAX_NOTES 16
#define RB_CALIB_LOOSE     0.10
/* The largest rms error (relative) of a fit calibrate writes: the per-anchor tolerances
 * of bench/calibration.md are 20-30 %; a fit off by more than half cannot stand for
 * the board (docs/reliability.md). */
#define RB_CALIB_MAX_RMS_ERROR 0.50

struct rb_calib {
	struct rb_soc_profile base;   /* where the fit starts, and what it holds */
	struct rb_soc_profile fitted; /* after rb_calib_fit */
	struct rb_calib_row *rows;
	size_t n_rows;
	char **reports;         /* the paths */
	uint64_t *fingerprints; /* of each report's evidence (rb_compare_report) */
	size_t n_reports;
	bool modeled; /* the reports' times are the emulator's */
	bool rocket;  /* driver rocket (else rknpu) */
	char host[128];
	char device[64];
	bool held[RB_CALIB_PARAMS]; /* not constrained by any row: kept at the base */
	/* How much each fitted parameter moves (relative) if the times are off by 1 %:
	 * above RB_CALIB_LOOSE the results barely tell it apart from the others. */
	double spread[RB_CALIB_PARAMS];
	int iterations;
	double rms_error, max_error; /* of fitted vs measured, relative */
	/* warnings for the user (clocks not pinned when a report was taken, ...) */
	char notes[RB_CALIB_MAX_NOTES][256];
	size_t n_notes;
};

void rb_calib_init(struct rb_calib *c, const struct rb_soc_profile *base);
void rb_calib_release(struct rb_calib *c);

/* Reads one `run` report (rknn-bench/1) and adds its results as rows. 0, or -EINVAL
 * (a message naming the file, result and field; or the same evidence as a report
 * added before: same context and results), -ENOENT etc. for a file that cannot
 * be read, -ENOMEM. */
int rb_calib_add_report(struct rb_calib *c, const char *path);

/* Fits the parameters; fills fitted, held, every row's fitted_us and the errors.
 * -EINVAL when there are fewer rows than parameters the rows constrain, or when the
 * fit's rms error is above RB_CALIB_MAX_RMS_ERROR (the message names the worst row); -ENODEV or
 * the emulator's error when a row cannot be run. */
int rb_calib_fit(struct rb_calib *c);

/* The fitted profile as a document of the schema of configs/soc/rk3588.json: the base
 * profile's JSON text (base_json) with every fitted number and its source replaced,
 * name (NULL: the base's) and status set, and a "calibration" object with the reports
 * and every row. NULL with a message on error. */
cJSON *rb_calib_profile_json(const struct rb_calib *c, const char *base_json, size_t len,
			     const char *name);

#endif
