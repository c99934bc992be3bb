/* The emulated mainline rocket kernel driver (drivers/accel/rocket, npu-facts §d.2 and
 * §a.3) on the emulated NPU (sim.h). Written from the documented behaviour; the driver
 * is GPL-2.0 and none of its code is used. What it shares with the emulated vendor
 * kernel (buffer objects, IOMMU, mmap, clock, scheduler rounds) is in kmod_common.c.
 *
 * What it reproduces:
 *  - CREATE_BO (handle, NPU address, mmap offset), DRM_IOCTL_GEM_CLOSE, PREP_BO (wait
 *    for the jobs using the BO until an absolute deadline on the clock: -ETIMEDOUT, or
 *    -EBUSY when the deadline has already passed), then the CPU cache's sync for the
 *    CPU, and FINI_BO (the sync for the device; rb_sim_config.cpu_cache); both check
 *    the reserved field before the handle, as upstream; DRM_IOCTL_VERSION with the
 *    name "rocket";
 *  - SUBMIT of jobs, each a list of tasks {regcmd address, regcmd_count with the tail}
 *    and in/out BO handles, with upstream's checks (ioctl_submit): no jobs is success,
 *    and a bad job is dropped while SUBMIT returns 0; a job's tasks run in order on one
 *    core, one task per kick: the commit of §a.3 (PC_REGISTER_AMOUNTS = (count + 1)/2 − 1,
 *    INTERRUPT_MASK 0x300, TASK_CON 0x7001: one task) is written for every task, and the
 *    interrupt handler (DPU_0/DPU_1 in RAW_STATUS) commits the next;
 *  - files (kmod_common.c): every open is an fd with its own handles and its own NPU
 *    address space (an IOMMU domain per fd, rocket_open), attached to a core while one
 *    of its jobs runs there (rocket_job_run); a BO shared through PRIME has an address
 *    only in the fd that created it;
 *  - the drm_sched entity of each fd (rocket_job_open): a job goes to the least busy
 *    core only when every earlier job of its fd has finished, else to the core of the
 *    previous one — so the jobs of one fd run one after another on one core, and jobs
 *    of different fds on different cores at once, as RUS measured ("1 fd serializes, N
 *    fds parallelize");
 *  - the NPU under this kernel needs DPU_RDMA programmed (rdma_required, §a.6);
 *  - a job that does not finish within 500 ms (a hang, an IOMMU fault, which stalls
 *    the DMA) is timed out at its first kick + 500 ms, its core reset (10 µs) and its
 *    remaining tasks dropped. Its BOs' fences signal anyway, so PREP_BO still succeeds
 *    (dma_resv waits for a signal, not for success): userspace only sees outputs left
 *    untouched. The kernel log (rb_sim_kmod_log, rb_sim_kmod_last_fault) says what
 *    happened. There is no reset ioctl.
 *
 * Time is virtual as in the vendor kernel: jobs queue at SUBMIT and run when someone
 * waits (PREP_BO), in rounds where the cores that have a task run together. Choices
 * where the driver's behaviour is unknown: BOs are placed bottom-up from address 0, as
 * upstream's drm_mm allocator does from the aperture start (RUS: "IOVA bump-starts at
 * 0 — dma_address==0 is valid"), so userspace must not take 0 for "no buffer". */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hw/drivers.h"
#include "uapi/drm/rocket_accel.h"
#include "sim/kmod_internal.h"

/* Mainline's drm_driver sets name "rocket" and desc "rocket DRM" but no version (its
 * comment says "1.0 - initial interface"), so DRM_IOCTL_VERSION reports 0.0.0 [ROCKET
 * drivers/accel/rocket/rocket_drv.c]; drivers have no date any more and the DRM core
 * answers "0" (libdrm's drmGetVersion needs a non-empty one). */
#define DRV_MAJOR 0
#define DRV_MINOR 0
#define DRV_PATCH 0
#define DRV_DATE  "0"
#define DRV_DESC  "rocket DRM"

#define JOB_TIMEOUT_NS (500 * KMOD_MS_NS) /* §a.3 */
#define CORE_RESET_NS  10000u             /* reset lines held 10 µs (§a.3) */
#define INT_DPU        0x300u             /* DPU_0 | DPU_1 */
#define INT_CLEAR_ALL  0x1ffffu

struct rjob {
	struct rjob *next; /* the core's FIFO */
	int core;
	int file; /* whose entity it came through; its address space runs it */
	struct drm_rocket_task *tasks;
	uint32_t n_tasks, done;
	struct kbo **bos; /* in, then out; each held (rb_kmod_bo_get) */
	uint32_t n_bos, n_in;
	uint64_t submit_ns, first_kick_ns;
	bool finished;
	bool *queued; /* staged in a thread group: set when it reaches its core's queue */
};

/* The driver's own state (k->drv). */
struct rocket {
	struct rjob *head[RB_SIM_MAX_CORES], *tail[RB_SIM_MAX_CORES];
	uint64_t core_free[RB_SIM_MAX_CORES]; /* when each core can take a kick */
	int entity_core[KMOD_MAX_FILES];      /* where each fd's jobs go while some run */
	struct rjob *staged;                  /* a thread group's submits, by file (see stage) */
};

static struct rocket *rt(const struct rb_sim_kmod *k)
{
	return k->drv;
}

static uint64_t now(const struct rb_sim_kmod *k)
{
	return atomic_load(&k->now);
}

/* ---- buffer objects ---- */

static int ioctl_create_bo(struct rb_sim_kmod *k, void *arg)
{
	struct drm_rocket_create_bo *a = arg;
	struct kbo *bo;
	int err = rb_kmod_bo_create(k, a->size, 0, &bo);

	if (err)
		return err;
	a->handle = bo->handles[k->cur_file];
	a->dma_address = bo->iova;
	a->offset = rb_kmod_bo_mmap_offset(k, bo);
	return 0;
}

static int ioctl_gem_close(struct rb_sim_kmod *k, void *arg)
{
	return rb_kmod_bo_destroy(k, ((struct drm_gem_close *)arg)->handle);
}

static int ioctl_fini_bo(struct rb_sim_kmod *k, void *arg)
{
	struct drm_rocket_fini_bo *a = arg;

	struct kbo *bo;

	if (a->reserved)
		return -EINVAL;
	bo = rb_kmod_bo_by_handle(k, a->handle);
	if (!bo)
		return -ENOENT;
	rb_kmod_bo_sync(bo, 0, bo->size, true); /* dma_sync for the device */
	return 0;
}

static void run_pending(struct rb_sim_kmod *k);

/* Waits for the fences of every job that uses the BO, until the absolute deadline. */
static int ioctl_prep_bo(struct rb_sim_kmod *k, void *arg)
{
	struct drm_rocket_prep_bo *a = arg;
	struct kbo *bo;
	uint64_t ready, deadline;

	if (a->reserved) /* upstream checks it before the handle */
		return -EINVAL;
	bo = rb_kmod_bo_by_handle(k, a->handle);
	if (!bo)
		return -ENOENT;
	run_pending(k);
	ready = bo->fence_ns ? bo->fence_ns + k->cost.wake : 0;
	if (ready <= now(k)) {
		rb_kmod_bo_sync(bo, 0, bo->size, false); /* dma_sync for the CPU */
		return 0;
	}
	deadline = a->timeout_ns > 0 ? (uint64_t)a->timeout_ns : 0;
	if (deadline <= now(k))
		return -EBUSY;
	if (ready > deadline) {
		rb_kmod_advance_to(k, deadline);
		return -ETIMEDOUT;
	}
	rb_kmod_advance_to(k, ready);
	rb_kmod_bo_sync(bo, 0, bo->size, false); /* dma_sync for the CPU */
	return 0;
}

/* ---- jobs ---- */

static void job_free(struct rb_sim_kmod *k, struct rjob *job)
{
	if (!job)
		return;
	for (uint32_t i = 0; i < job->n_bos; i++)
		rb_kmod_bo_put(k, job->bos[i]);
	free(job->tasks);
	free(job->bos);
	free(job);
}

/* Whether the file's entity has a job queued or running. */
static bool fd_busy(const struct rb_sim_kmod *k, int file)
{
	for (int c = 0; c < k->cores; c++)
		for (const struct rjob *j = rt(k)->head[c]; j; j = j->next)
			if (j->file == file && !j->finished)
				return true;
	return false;
}

/* drm_sched_entity_select_rq, per fd (one entity each, rocket_job_open): stay on the
 * entity's core while the fd has jobs running, else the core with the fewest tasks
 * queued (the lowest on a tie). So one fd's jobs run one after another and the jobs
 * of different fds spread over the cores. */
static int pick_core(const struct rb_sim_kmod *k, int file)
{
	uint64_t load[RB_SIM_MAX_CORES] = {0};
	int best = 0;

	if (fd_busy(k, file))
		return rt(k)->entity_core[file];
	for (int c = 0; c < k->cores; c++)
		for (const struct rjob *j = rt(k)->head[c]; j; j = j->next)
			load[c] += j->n_tasks - j->done;
	for (int c = 1; c < k->cores; c++)
		if (load[c] < load[best])
			best = c;
	return best;
}

static void enqueue(struct rb_sim_kmod *k, struct rjob *job)
{
	struct rocket *r = rt(k);

	job->core = pick_core(k, job->file);
	r->entity_core[job->file] = job->core;
	if (r->tail[job->core])
		r->tail[job->core]->next = job;
	else
		r->head[job->core] = job;
	r->tail[job->core] = job;
}

/* rocket_copy_tasks: task_struct_size too small or a task without words: -EINVAL;
 * an unreadable array: -EFAULT. (task_count 0 is refused before, in submit_job.) */
static int copy_tasks(const struct drm_rocket_job *uj, struct rjob *job)
{
	const char *src = (const char *)(uintptr_t)uj->tasks;

	if (uj->task_struct_size < sizeof(struct drm_rocket_task))
		return -EINVAL;
	if (!src)
		return -EFAULT;
	job->tasks = calloc(uj->task_count, sizeof(*job->tasks));
	if (!job->tasks)
		return -ENOMEM;
	for (uint32_t i = 0; i < uj->task_count; i++) {
		memcpy(&job->tasks[i], src + (size_t)i * uj->task_struct_size,
		       sizeof(job->tasks[i]));
		if (!job->tasks[i].regcmd_count)
			return -EINVAL;
	}
	job->n_tasks = uj->task_count;
	return 0;
}

/* drm_gem_objects_lookup: no handles is fine, an unreadable array -EFAULT, a handle
 * that names no BO of the fd -ENOENT. */
static int copy_bos(const struct rb_sim_kmod *k, const struct drm_rocket_job *uj, struct rjob *job)
{
	const uint32_t *in = (const uint32_t *)(uintptr_t)uj->in_bo_handles;
	const uint32_t *out = (const uint32_t *)(uintptr_t)uj->out_bo_handles;
	uint64_t n = (uint64_t)uj->in_bo_handle_count + uj->out_bo_handle_count;

	if ((uj->in_bo_handle_count && !in) || (uj->out_bo_handle_count && !out))
		return -EFAULT;
	job->bos = calloc(n ? n : 1, sizeof(*job->bos));
	if (!job->bos)
		return -ENOMEM;
	for (uint64_t i = 0; i < n; i++) {
		uint32_t h = i < uj->in_bo_handle_count ? in[i] : out[i - uj->in_bo_handle_count];

		job->bos[i] = rb_kmod_bo_by_handle(k, h);
		if (!job->bos[i])
			return -ENOENT;
	}
	for (uint64_t i = 0; i < n; i++)
		rb_kmod_bo_get(job->bos[i]);
	job->n_bos = (uint32_t)n;
	job->n_in = uj->in_bo_handle_count;
	return 0;
}

/* rocket_ioctl_submit_job's checks, in its order; 0 with *out set, or why the job is
 * dropped. */
static int new_job(struct rb_sim_kmod *k, const struct drm_rocket_job *uj, struct rjob **out)
{
	struct rjob *job;
	int err;

	if (!uj->task_count)
		return -EINVAL;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	err = copy_tasks(uj, job);
	if (!err)
		err = copy_bos(k, uj, job);
	if (err) {
		job_free(k, job);
		return err;
	}
	*out = job;
	return 0;
}

/* Threads that submit at once (the `threads` launch, one fd per core) reach the
 * scheduler in an order the host's thread timing decides, and the order picks the cores
 * (pick_core) and the submit times. In a thread group (kmod_internal.h) the emulated
 * kernel stages each submit on the thread's own clock and queues the group's jobs in
 * file order once every member has submitted or left, so modeled times repeat exactly. */
static void stage(struct rb_sim_kmod *k, struct rjob *job, bool *queued)
{
	struct rjob **at = &rt(k)->staged;

	while (*at && (*at)->file <= job->file)
		at = &(*at)->next;
	job->queued = queued;
	job->next = *at;
	*at = job;
}

static void queue_staged(struct rb_sim_kmod *k)
{
	struct rocket *r = rt(k);

	while (r->staged) {
		struct rjob *job = r->staged;

		r->staged = job->next;
		job->next = NULL;
		*job->queued = true;
		job->queued = NULL;
		enqueue(k, job);
	}
}

/* SUBMIT as upstream's rocket_ioctl_submit (drivers/accel/rocket/rocket_job.c): no
 * jobs is success before any other check; a job_struct_size below the struct's or a
 * non-zero reserved is -EINVAL and an unreadable job array -EFAULT, with nothing
 * queued. Then every job is pushed on its own and the result of each push is ignored:
 * a job that fails its checks (no tasks, a task without words, a too small
 * task_struct_size, a handle naming no BO, an unreadable array) is dropped, the jobs
 * around it still run, and SUBMIT returns 0. Upstream says nothing of a drop (a
 * drm_dbg line for some); the emulated kernel logs each one, its dmesg under
 * drm.debug, so that a run that never writes C (model_only) can tell. */
static int ioctl_submit(struct rb_sim_kmod *k, void *arg)
{
	struct drm_rocket_submit *a = arg;
	const char *src = (const char *)(uintptr_t)a->jobs;

	if (!a->job_count)
		return 0;
	if (a->job_struct_size < sizeof(struct drm_rocket_job) || a->reserved)
		return -EINVAL;
	if (!src)
		return -EFAULT;
	bool grouped = rb_kmod_in_group(k), queued = false;
	uint64_t submit_ns = rb_kmod_thread_now(k) + k->cost.submit;

	rb_kmod_thread_advance(k, submit_ns);
	for (uint32_t i = 0; i < a->job_count; i++) {
		struct drm_rocket_job uj;
		struct rjob *job = NULL;
		int err;

		memcpy(&uj, src + (size_t)i * a->job_struct_size, sizeof(uj));
		err = new_job(k, &uj, &job);
		if (err) {
			rb_kmod_log(k, "rocket: SUBMIT: job %u of %u dropped: %s", i + 1,
				    a->job_count, strerror(-err));
			continue;
		}
		job->submit_ns = submit_ns;
		job->file = k->cur_file;
		if (grouped)
			stage(k, job, &queued);
		else
			enqueue(k, job);
	}
	if (grouped) /* until every member has submitted or left */
		rb_kmod_block_until(k, &queued);
	return 0;
}

/* ---- the commit, one task per kick (§a.3) ---- */

static void write_commit(struct rb_sim_kmod *k, int c, const struct drm_rocket_task *t)
{
	uint32_t slave = 0;

	rb_field_pack(RB_FIELD_PC_BASE_ADDRESS_PC_SEL, 1, &slave);
	rb_kmod_wr(k, c, RB_REG_PC_BASE_ADDRESS, slave);
	rb_kmod_wr(k, c, RB_REG_CNA_S_POINTER, rb_kmod_s_pointer(c));
	rb_kmod_wr(k, c, RB_REG_CORE_S_POINTER, rb_kmod_s_pointer(c));
	rb_kmod_wr(k, c, RB_REG_PC_BASE_ADDRESS, t->regcmd);
	rb_kmod_wr(k, c, RB_REG_PC_REGISTER_AMOUNTS, (t->regcmd_count + 1) / 2 - 1);
	rb_kmod_wr(k, c, RB_REG_PC_INTERRUPT_MASK, INT_DPU);
	rb_kmod_wr(k, c, RB_REG_PC_INTERRUPT_CLEAR, INT_DPU);
	rb_kmod_wr(k, c, RB_REG_PC_TASK_CON, rb_kmod_task_con(true, 1));
	rb_kmod_wr(k, c, RB_REG_PC_TASK_DMA_BASE_ADDR, 0);
	rb_kmod_wr(k, c, RB_REG_PC_OPERATION_ENABLE, 1);
}

static int op_commit(struct rb_sim_kmod *k, int core, uint64_t *kick_ns)
{
	struct rocket *r = rt(k);
	struct rjob *job = r->head[core];
	uint64_t start;

	if (!job)
		return -1;
	start = kmod_max(job->submit_ns, r->core_free[core]);
	k->core_domain[core] = job->file; /* rocket_job_run: iommu_attach_group */
	if (!job->done)
		job->first_kick_ns = start + k->cost.commit;
	write_commit(k, core, &job->tasks[job->done]);
	*kick_ns = start + k->cost.commit;
	return 1;
}

/* The job's end: the fences of the BOs it writes signal (successful or not). Upstream
 * adds a job's fence to its output BOs only (as a write fence) and PREP_BO waits for
 * write fences, so a BO a job only reads is never waited for: a program that waits on
 * A before rewriting it races the NPU on a board, and here too. */
static void job_end(struct rb_sim_kmod *k, struct rjob *job, uint64_t end_ns)
{
	job->finished = true;
	rt(k)->core_free[job->core] = end_ns;
	if (job->first_kick_ns && end_ns - job->first_kick_ns > k->longest_job_ns)
		k->longest_job_ns = end_ns - job->first_kick_ns;
	for (uint32_t i = job->n_in; i < job->n_bos; i++)
		job->bos[i]->fence_ns = kmod_max(job->bos[i]->fence_ns, end_ns);
}

/* Why a kicked task did not complete, or "" if it did. */
static void check_task(struct rb_sim_kmod *k, int core, const struct rjob *job,
		       const struct rb_sim_core_result *res, uint64_t irq_ns, char *why,
		       size_t size)
{
	uint32_t raw = rb_kmod_rd(k, core, RB_REG_PC_INTERRUPT_RAW_STATUS);

	why[0] = '\0';
	if (res->status == RB_SIM_HANG)
		snprintf(why, size, "hang: %s", res->reason);
	else if (res->status == RB_SIM_IOMMU_FAULT)
		snprintf(why, size, "iommu fault: %s", res->reason);
	else if (res->status != RB_SIM_DONE)
		snprintf(why, size, "the core did not start");
	else if (!(raw & INT_DPU))
		snprintf(why, size, "no DPU interrupt (raw status 0x%x)", raw);
	else if (irq_ns - job->first_kick_ns > JOB_TIMEOUT_NS)
		snprintf(why, size, "the job needs %" PRIu64 " us, more than 500 ms",
			 (irq_ns - job->first_kick_ns) / 1000);
}

/* The interrupt handler, or the scheduler's timeout with a reset of the core. */
static bool op_complete(struct rb_sim_kmod *k, int core, const struct rb_sim_core_result *res,
			uint64_t kick_ns)
{
	struct rjob *job = rt(k)->head[core];
	uint64_t irq_ns = kick_ns + res->elapsed_ns + k->cost.irq;
	char why[320];

	check_task(k, core, job, res, irq_ns, why, sizeof(why));
	if (why[0]) {
		uint64_t end = job->first_kick_ns + JOB_TIMEOUT_NS;

		rb_kmod_fault(
		    k,
		    "rocket: core %d, task %u of %u: %s; job timed out after 500 ms, core "
		    "reset",
		    core, job->done + 1, job->n_tasks, why);
		rb_sim_npu_reset(k->npu, core);
		job_end(k, job, end + CORE_RESET_NS);
		return false;
	}
	rb_kmod_wr(k, core, RB_REG_PC_INTERRUPT_MASK, 0);
	rb_kmod_wr(k, core, RB_REG_PC_OPERATION_ENABLE, 0);
	rb_kmod_wr(k, core, RB_REG_PC_INTERRUPT_CLEAR, INT_CLEAR_ALL);
	rt(k)->core_free[core] = irq_ns;
	if (++job->done == job->n_tasks)
		job_end(k, job, irq_ns);
	return false;
}

static void op_retire(struct rb_sim_kmod *k)
{
	struct rocket *r = rt(k);

	for (int c = 0; c < k->cores; c++)
		while (r->head[c] && r->head[c]->finished) {
			struct rjob *job = r->head[c];

			r->head[c] = job->next;
			if (!r->head[c])
				r->tail[c] = NULL;
			job_free(k, job);
		}
}

static void run_pending(struct rb_sim_kmod *k)
{
	while (rb_kmod_run_round(k))
		;
}

/* ---- dispatch, lifecycle ---- */

static const struct kmod_ioctl drv_ioctls[] = {
    [DRM_ROCKET_CREATE_BO] = {DRM_IOCTL_ROCKET_CREATE_BO, ioctl_create_bo},
    [DRM_ROCKET_SUBMIT] = {DRM_IOCTL_ROCKET_SUBMIT, ioctl_submit},
    [DRM_ROCKET_PREP_BO] = {DRM_IOCTL_ROCKET_PREP_BO, ioctl_prep_bo},
    [DRM_ROCKET_FINI_BO] = {DRM_IOCTL_ROCKET_FINI_BO, ioctl_fini_bo},
};

static const struct kmod_ioctl gem_close_ioctl = {DRM_IOCTL_GEM_CLOSE, ioctl_gem_close};

static const struct kmod_ioctl *op_find_ioctl(unsigned nr)
{
	if (nr == _IOC_NR(DRM_IOCTL_GEM_CLOSE))
		return &gem_close_ioctl;
	if (nr >= DRM_COMMAND_BASE &&
	    nr - DRM_COMMAND_BASE < sizeof(drv_ioctls) / sizeof(drv_ioctls[0]))
		return &drv_ioctls[nr - DRM_COMMAND_BASE];
	return NULL;
}

static void op_release(struct rb_sim_kmod *k)
{
	struct rocket *r = rt(k);

	if (!r)
		return;
	while (r->staged) { /* none once every group has ended; nothing waits on them */
		struct rjob *job = r->staged;

		r->staged = job->next;
		job_free(k, job);
	}
	for (int c = 0; c < RB_SIM_MAX_CORES; c++)
		while (r->head[c]) {
			struct rjob *job = r->head[c];

			r->head[c] = job->next;
			job_free(k, job);
		}
	free(r);
}

static const struct kmod_ops rocket_ops = {
    .name = "rocket kernel",
    .find_ioctl = op_find_ioctl,
    .version = {DRV_MAJOR, DRV_MINOR, DRV_PATCH, ROCKET_DRIVER_NAME, DRV_DATE, DRV_DESC},
    .space_per_file = true, /* rocket_open: an IOMMU domain per fd */
    .iova_from_zero = true, /* drm_mm from the aperture start (RUS: 0 is valid) */
    .commit = op_commit,
    .complete = op_complete,
    .retire = op_retire,
    .run_all = queue_staged, /* SUBMIT does not wait for the job: PREP_BO runs it */
    .release = op_release,
};

struct rb_sim_kmod *rb_sim_kmod_rocket_new(const struct rb_sim_config *cfg)
{
	struct rb_sim_config mainline = *cfg;
	struct rb_sim_kmod *k;

	mainline.rdma_required = true;
	k = rb_kmod_new(&mainline, &rocket_ops);
	if (!k)
		return NULL;
	k->drv = calloc(1, sizeof(struct rocket));
	if (!k->drv) {
		rb_sim_kmod_free(k);
		rb_set_error(-ENOMEM, "cannot create the emulated rocket kernel: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	return k;
}
