/* What the job runner's files share (job.c: buffers, programs, weights; job_run.c:
 * packing A, launching, waiting, unpacking C): the job itself and its buffers through
 * the device's ops. Private to npu/. */
#ifndef RB_NPU_JOB_INTERNAL_H
#define RB_NPU_JOB_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "npu/job.h"

struct b_parts; /* job.c: B held as one part per core */

struct rb_npu_job {
	struct rb_npu_device *dev;
	const struct rb_plan *plan;
	const void *a_host; /* M×K row-major: what the next run packs */
	enum rb_npu_launch launch;
	struct rb_dev_bo a, b, c, regcmd, tasks; /* tasks: drivers with tasks_in_bo */
	struct rb_dev_task *descs;               /* every task's program, in submit order */
	struct rb_dev_core cores[RB_PLAN_MAX_CORES];
	struct rb_dev_submit *submits;
	size_t n_submits;
	float *partial;    /* fp16 output with K-slices: one slice unpacked before adding */
	uint64_t b_source; /* rb_inputs.serial of the B packed in `b`; 0: none */
	bool b_external;   /* `b` is the caller's (rb_npu_job_new_on_weights), B at b_offset */
	uint64_t b_offset;
	/* B held as one part per core (see b_parts below), or NULL: whole. The job that
	 * packed it owns the table; a job sharing its B (b_external) points to it. */
	struct b_parts *parts;
	/* A job sharing parts split otherwise: its tasks' ranges outside them, copied from
	 * them into parts of its own (b_extra). */
	struct b_parts *extra;
	struct rb_dev_bo b_extra;
	void *b_host;  /* where the CPU packs B: b.map, or a staging copy of the parts */
	bool launched; /* for fault_hang_once */
	bool failed;   /* a run failed: what the device wrote is not trusted */
};

/* ---- buffers, through the device's ops ---- */

static inline int bo_create(struct rb_npu_device *dev, uint64_t size, enum rb_dev_bo_kind kind,
			    struct rb_dev_bo *bo)
{
	return dev->ops->bo_create(dev, size, kind, bo);
}

static inline void bo_destroy(struct rb_npu_device *dev, struct rb_dev_bo *bo)
{
	if (bo->map || bo->size)
		dev->ops->bo_destroy(dev, bo);
}

static inline int bo_to_device(struct rb_npu_device *dev, const struct rb_dev_bo *bo)
{
	return dev->ops->bo_to_device(dev, bo);
}

static inline int bo_from_device(struct rb_npu_device *dev, const struct rb_dev_bo *bo)
{
	return dev->ops->bo_from_device(dev, bo);
}

#endif
