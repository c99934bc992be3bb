/* The vendor rknpu driver behind the device ops (npu_device.h): its buffer objects
 * and its three launch modes, all through DRM_IOCTL_RKNPU_SUBMIT (§d.1). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dev/npu_device.h"

/* One launch: the device and what it runs. */
struct launch {
	struct rb_npu_device *dev;
	struct rb_dev_job *job;
};

static uint32_t core_mask(const struct launch *l, uint32_t mask)
{
	return l->job->force_core_mask ? l->job->force_core_mask : mask;
}

static int submit_error(const struct launch *l, const struct rb_dev_submit *s, int err)
{
	return rb_dev_submit_error(l->dev, s->core, s->task_start, s->task_number, err);
}

static void fill_submit(const struct launch *l, const struct rb_dev_submit *s, bool nonblock,
			struct rknpu_submit *sub)
{
	memset(sub, 0, sizeof(*sub));
	sub->flags = RKNPU_JOB_PC | RKNPU_JOB_PINGPONG;
	if (nonblock)
		sub->flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	sub->timeout = (uint32_t)l->dev->timeout_ms;
	sub->task_start = s->task_start;
	sub->task_number = s->task_number;
	sub->task_obj_addr = l->job->tasks->rknpu.obj_addr;
	sub->core_mask = core_mask(l, 1u << s->core);
	sub->fence_fd = -1;
	/* A single-core job takes its range from subcore_task[core index] (§d.1). */
	sub->subcore_task[s->core].task_start = s->task_start;
	sub->subcore_task[s->core].task_number = s->task_number;
}

/* Non-blocking submits with out-fences for every core, then one wait per fence. */
static int launch_fences(struct launch *l)
{
	int *fences = malloc(l->job->n_submits * sizeof(*fences));
	int ret = fences ? 0 : -ENOMEM, err;
	char first_error[768] = "";
	size_t n = 0;

	for (size_t i = 0; ret == 0 && i < l->job->n_submits; i++) {
		struct rknpu_submit sub;

		fill_submit(l, &l->job->submits[i], true, &sub);
		ret = rb_rknpu_submit(&l->dev->drv, &sub);
		if (ret < 0)
			ret = submit_error(l, &l->job->submits[i], ret);
		else
			fences[n++] = sub.fence_fd;
	}
	if (ret < 0)
		snprintf(first_error, sizeof(first_error), "%s", rb_last_error());
	/* Wait for everything that was submitted, even after an error; the first error is
	 * the one reported (later calls overwrite rb_last_error). */
	for (size_t i = 0; i < n; i++) {
		err = rb_rknpu_fence_wait(&l->dev->drv, fences[i], l->dev->timeout_ms);
		if (err < 0 && ret == 0) {
			ret = submit_error(l, &l->job->submits[i], err);
			snprintf(first_error, sizeof(first_error), "%s", rb_last_error());
		}
	}
	free(fences);
	return ret < 0 ? rb_set_error(ret, "%s", first_error) : 0;
}

/* The subcore_task entry of core `core` in a submit for `mask` (§d.1): entry i for one
 * or two cores, entry i + 2 for three. */
static unsigned subcore_index(uint32_t mask, unsigned core)
{
	return __builtin_popcount(mask) == 3 ? core + 2 : core;
}

/* The cores that have a round-th submit (chain). */
static uint32_t round_mask(const struct launch *l, size_t round)
{
	size_t seen[RB_HW_MAX_CORES] = {0};
	uint32_t mask = 0;

	for (size_t i = 0; i < l->job->n_submits; i++)
		if (seen[l->job->submits[i].core]++ == round)
			mask |= 1u << l->job->submits[i].core;
	return mask;
}

/* One SUBMIT for the round-th chain of every core in `mask`. */
static void fill_multicore(const struct launch *l, size_t round, uint32_t mask,
			   struct rknpu_submit *sub, const struct rb_dev_submit **first)
{
	size_t seen[RB_HW_MAX_CORES] = {0};

	memset(sub, 0, sizeof(*sub));
	*first = NULL;
	for (size_t i = 0; i < l->job->n_submits; i++) {
		const struct rb_dev_submit *s = &l->job->submits[i];
		unsigned idx = subcore_index(mask, s->core);

		if (seen[s->core]++ != round || !(mask & (1u << s->core)))
			continue;
		if (!*first) {
			*first = s;
			sub->task_start = s->task_start;
		}
		sub->subcore_task[idx].task_start = s->task_start;
		sub->subcore_task[idx].task_number = s->task_number;
		sub->task_number += s->task_number;
	}
	sub->flags = RKNPU_JOB_PC | RKNPU_JOB_PINGPONG | RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	sub->timeout = (uint32_t)l->dev->timeout_ms;
	sub->task_obj_addr = l->job->tasks->rknpu.obj_addr;
	sub->core_mask = core_mask(l, mask);
	sub->fence_fd = -1;
}

/* The submits of one round: all its cores together, unless uneven task counts leave
 * cores 0+2 or 1+2 (masks the vendor driver never runs) for a plan that did not ask
 * for them: those go one core at a time. */
static size_t round_masks(const struct launch *l, size_t round, uint32_t masks[3])
{
	uint32_t mask = round_mask(l, round);
	size_t n = 0;

	if ((mask == 0x5 || mask == 0x6) && mask != l->job->plan_core_mask) {
		for (unsigned c = 0; c < RB_HW_MAX_CORES; c++)
			if (mask & (1u << c))
				masks[n++] = 1u << c;
		return n;
	}
	masks[0] = mask;
	return mask ? 1 : 0;
}

/* One multi-core submit per round, then a wait for each. */
static int launch_multicore(struct launch *l)
{
	size_t cap = l->job->n_submits + 1, n = 0, n_masks;
	int *fences = malloc(cap * sizeof(*fences));
	const struct rb_dev_submit **owner = malloc(cap * sizeof(*owner));
	char first_error[768] = "";
	int ret = fences && owner ? 0 : -ENOMEM, err;
	uint32_t masks[RB_HW_MAX_CORES];

	for (size_t round = 0; ret == 0 && (n_masks = round_masks(l, round, masks)); round++) {
		for (size_t m = 0; ret == 0 && m < n_masks; m++) {
			struct rknpu_submit sub;

			fill_multicore(l, round, masks[m], &sub, &owner[n]);
			ret = rb_rknpu_submit(&l->dev->drv, &sub);
			if (ret < 0)
				ret = submit_error(l, owner[n], ret);
			fences[n] = sub.fence_fd;
			n += ret == 0;
		}
	}
	if (ret < 0)
		snprintf(first_error, sizeof(first_error), "%s", rb_last_error());
	for (size_t i = 0; i < n; i++) {
		err = rb_rknpu_fence_wait(&l->dev->drv, fences[i], l->dev->timeout_ms);
		if (err < 0 && ret == 0) {
			ret = submit_error(l, owner[i], err);
			snprintf(first_error, sizeof(first_error), "%s", rb_last_error());
		}
	}
	free(fences);
	free(owner);
	return ret < 0 ? rb_set_error(ret, "%s", first_error) : 0;
}

struct core_thread {
	struct launch *l;
	unsigned core;
	bool grouped; /* a member of the transport's thread group */
	double hw_us;
	int ret;
	char error[512];
};

/* The seed backend's way: each core's submits, blocking, from a thread of its own. */
static void *core_thread_main(void *arg)
{
	struct core_thread *ct = arg;
	struct launch *l = ct->l;

	for (size_t i = 0; ct->ret == 0 && i < l->job->n_submits; i++) {
		struct rknpu_submit sub;

		if (l->job->submits[i].core != ct->core)
			continue;
		fill_submit(l, &l->job->submits[i], false, &sub);
		ct->ret = rb_rknpu_submit(&l->dev->drv, &sub);
		if (ct->ret < 0) {
			ct->ret = submit_error(l, &l->job->submits[i], ct->ret);
			snprintf(ct->error, sizeof(ct->error), "%s", rb_last_error());
		}
		ct->hw_us += (double)sub.hw_elapse_time / 1000.0;
	}
	if (ct->grouped)
		rb_transport_group_leave(rb_npu_device_transport(l->dev));
	return NULL;
}

/* The threads start as one group of the transport (the emulator needs it to run their
 * jobs together in virtual time, transport.h). A thread that cannot be created leaves
 * the group at once; its core's submits then run on this thread after the others. */
static int launch_threads(struct launch *l)
{
	struct rb_transport *tr = rb_npu_device_transport(l->dev);
	struct core_thread ct[RB_HW_MAX_CORES] = {0};
	pthread_t tid[RB_HW_MAX_CORES];
	bool started[RB_HW_MAX_CORES] = {false};
	bool grouped = rb_transport_group_begin(tr, l->job->n_cores) == 0;
	int ret = 0;

	for (unsigned i = 0; i < l->job->n_cores; i++) {
		ct[i].l = l;
		ct[i].core = l->job->cores[i].core;
		ct[i].grouped = grouped;
		started[i] = pthread_create(&tid[i], NULL, core_thread_main, &ct[i]) == 0;
		if (!started[i] && grouped)
			rb_transport_group_leave(tr);
	}
	for (unsigned i = 0; i < l->job->n_cores; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	if (grouped)
		rb_transport_group_end(tr);
	for (unsigned i = 0; i < l->job->n_cores; i++) {
		if (!started[i]) {
			ct[i].grouped = false;
			core_thread_main(&ct[i]);
		}
		l->job->hw_us[ct[i].core] = ct[i].hw_us;
		if (ct[i].ret < 0 && ret == 0)
			ret = rb_set_error(ct[i].ret, "%s", ct[i].error);
	}
	return ret;
}

/* ---- the ops ---- */

/* Data buffers: scattered pages behind the IOMMU (the big weight buffers would not fit
 * the CMA pool contiguously), cached and synced explicitly (§d.1 memory flags); the
 * task descriptors are read by the kernel through its own mapping. */
static int bo_create(struct rb_npu_device *dev, uint64_t size, enum rb_dev_bo_kind kind,
		     struct rb_dev_bo *bo)
{
	uint32_t flags = kind == RB_BO_TASKS
			     ? RKNPU_MEM_KERNEL_MAPPING
			     : RKNPU_MEM_NON_CONTIGUOUS | RKNPU_MEM_CACHEABLE | RKNPU_MEM_IOMMU;
	int ret;

	memset(bo, 0, sizeof(*bo));
	ret = rb_rknpu_bo_create(&dev->drv, size, flags, &bo->rknpu);
	bo->map = bo->rknpu.map;
	bo->dma_addr = bo->rknpu.dma_addr;
	bo->size = bo->rknpu.size;
	return ret;
}

static void bo_destroy(struct rb_npu_device *dev, struct rb_dev_bo *bo)
{
	rb_rknpu_bo_destroy(&dev->drv, &bo->rknpu);
	memset(bo, 0, sizeof(*bo));
}

static int bo_to_device(struct rb_npu_device *dev, const struct rb_dev_bo *bo)
{
	return rb_rknpu_bo_sync(&dev->drv, &bo->rknpu, RKNPU_MEM_SYNC_TO_DEVICE, 0, bo->size);
}

static int bo_from_device(struct rb_npu_device *dev, const struct rb_dev_bo *bo)
{
	return rb_rknpu_bo_sync(&dev->drv, &bo->rknpu, RKNPU_MEM_SYNC_FROM_DEVICE, 0, bo->size);
}

static int write_tasks(struct rb_npu_device *dev, const struct rb_dev_task *tasks, size_t n,
		       struct rb_dev_bo *bo)
{
	struct rknpu_task *desc = bo->map;

	for (size_t i = 0; i < n; i++) {
		memset(&desc[i], 0, sizeof(desc[i]));
		desc[i].enable_mask = tasks[i].enable_mask;
		desc[i].int_mask = tasks[i].int_mask;
		desc[i].int_clear = RKNPU_INT_CLEAR;
		desc[i].regcfg_amount = tasks[i].regcfg_amount;
		desc[i].regcmd_addr = tasks[i].regcmd_addr;
	}
	return bo_to_device(dev, bo);
}

static int check_launch(enum rb_npu_launch launch)
{
	(void)launch; /* every mode */
	return 0;
}

static int launch(struct rb_npu_device *dev, enum rb_npu_launch mode, struct rb_dev_job *job)
{
	struct launch l = {dev, job};

	switch (mode) {
	case RB_LAUNCH_THREADS:
		return launch_threads(&l);
	case RB_LAUNCH_MULTICORE:
		return launch_multicore(&l);
	default:
		return launch_fences(&l);
	}
}

static int reset(struct rb_npu_device *dev)
{
	return rb_rknpu_action(&dev->drv, RKNPU_ACT_RESET, NULL);
}

const struct rb_dev_ops rb_rknpu_ops = {
    .name = "rknpu",
    .tasks_in_bo = true,
    .task_bytes = sizeof(struct rknpu_task),
    .mainline_programs = false,
    .drops_timed_out_jobs = false,
    .write_tasks = write_tasks,
    .bo_create = bo_create,
    .bo_destroy = bo_destroy,
    .bo_to_device = bo_to_device,
    .bo_from_device = bo_from_device,
    .check_launch = check_launch,
    .launch = launch,
    .reset = reset,
};
