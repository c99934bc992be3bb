/* The emulated vendor rknpu kernel driver, ABI 0.9.8 (npu-facts §d.1), driving the
 * emulated NPU (sim.h). Written from the documented behaviour; the vendor driver is
 * GPL-2.0 and none of its code is used. What it shares with the emulated rocket kernel
 * (the DRM core's dispatch, buffer objects, IOMMU, mmap, clock, log, scheduler rounds)
 * lives in kmod_common.c (kmod_internal.h).
 *
 * What it reproduces:
 *  - the DRM core's ioctl dispatch: match on the ioctl number, copy in and out the bytes
 *    both sides know (the user's size where the direction bits agree), zero the rest —
 *    so the old 40-byte MEM_CREATE still works; DRM_IOCTL_VERSION with its user buffers;
 *  - ACTION with every code's documented result; buffer objects in a 32-bit NPU address
 *    space with GEM-like handles, an opaque obj_addr token and fake mmap offsets, and
 *    the IOMMU the NPU reaches them through (an access outside every live buffer is a
 *    fault);
 *  - SUBMIT: the checks, core_mask handling with the subcore_task indexing, the PC commit
 *    sequence of §a.3 written into the emulated MMIO (in chunks of at most 4095 tasks),
 *    the interrupt check with its "fuzz", the int_status write-back, task_counter,
 *    hw_elapse_time, timeouts with a soft reset, and out-fences (fds >= 1000, a
 *    namespace of the emulator's own).
 *
 * Time is virtual (`now`, rb_sim_kmod_now_ns). A submit costs the hardware profile's
 * submit.ioctl_ns (soc.h; the other fixed costs are its commit_ns, irq_ns, wake_ns);
 * jobs are queued per core in submit order and nothing executes until someone waits (a
 * blocking submit, a fence wait, ACT_RESET). Then every job in flight runs, in rounds:
 * each round commits the next chunk of every core that has one and runs those cores
 * together in one rb_sim_npu_run_at, from their own kick times, so jobs in flight
 * together share the NPU's modeled DDR bandwidth (timing.h) and the result depends only
 * on the order of the calls, never on host timing. Each core keeps its own timeline (a
 * commit starts when both the job and the core are ready); a waiter returns at its
 * job's completion plus the wake-up cost. A round does not see the tail of an earlier
 * round on another core, which only matters when cores run several jobs each that
 * drift apart.
 *
 * Failures. Like on a board, a job whose core hangs, faults in the IOMMU, raises an
 * interrupt that does not match its int_mask, or runs longer than its `timeout`, ends
 * in -ETIMEDOUT at commit + timeout, followed by the driver's soft reset (a 100 ms sleep,
 * then every core's reset lines, §d.1 "Reset"; logged in rb_sim_kmod_log). An IOMMU
 * page fault is reported the same way: the rockchip IOMMU stalls the NPU's DMA and the
 * driver only sees a job that never
 * finishes, so -ETIMEDOUT is what a caller gets on a board too; rb_sim_kmod_last_fault()
 * says what really happened (the emulator's dmesg). Jobs with core mask 5 or 6 are never
 * committed ("Unknown core mask") and time out the same way, without a reset.
 *
 * Choices where the driver's behaviour is unknown or undefined (documented, not hidden):
 *  - a task_obj_addr that names no live object, a task BO without KERNEL_MAPPING, a task
 *    range outside the task BO, an empty subcore range, or core-mask bits of cores the
 *    emulator does not have: -EINVAL (the driver trusts some of these and would read
 *    out of bounds);
 *  - only IOMMU domain 0 exists: a non-zero domain id is -EINVAL;
 *  - MEM_SYNC cleans and invalidates the emulated CPU cache of a CACHEABLE object
 *    (rb_sim_config.cpu_cache): without it the NPU reads what the CPU wrote before the
 *    last sync, and the CPU what it read before the NPU wrote;
 *  - destroying a BO that a job in flight uses is the caller's bug: DMA to it then
 *    faults, and a task BO destroyed before its job ran fails that job with -EFAULT;
 *    a destroyed BO's memory stays valid while it is still mmapped, as with GEM;
 *  - jobs run when someone waits, so a job longer than its timeout has already written
 *    its outputs when it is declared timed out (a board would stop it part-way);
 *  - ACT_RESET first runs the jobs in flight (a board would kill them);
 *  - blocking submits from several threads are serialized (the kernel lock is held while
 *    a job runs), so each starts when the previous one is done in virtual time; to model
 *    cores working in parallel, submit non-blocking with fences.
 * Thread safety: every entry point takes the kernel's lock; the IOMMU callback runs
 * only inside rb_sim_npu_run, while the lock is held and no buffer object changes. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "uapi/drm/rknpu_ioctl.h"
#include "sim/kmod_internal.h"

/* Identity (§d.1); the date is the 0.9.8 release's DRIVER_DATE. */
#define DRV_DESC         "RKNPU driver"
#define DRV_DATE         "20240828"
#define DRV_MAJOR        0
#define DRV_MINOR        9
#define DRV_PATCH        8
#define DRV_VERSION_CODE (DRV_MAJOR * 10000 + DRV_MINOR * 100 + DRV_PATCH) /* 908 */

#define NPU_VOLT_UV 825000u /* GET_VOLT on a Rock 5B */

#define FENCE_FD_BASE 1000

/* The RK3588 configuration of the driver (§a.3). */
#define PC_DATA_EXTRA_AMOUNT 4
#define PC_DATA_AMOUNT_SCALE 2
#define MAX_SUBMIT_TASKS     4095u

/* The driver's soft reset sleeps 100 ms (§d.1): the driver's number, not the SoC's.
 * The other fixed costs come from the hardware profile (struct costs). */
#define COST_RESET_NS 100000000u

#define MS_NS KMOD_MS_NS

struct inflight {
	struct kjob *job;
	struct kpart *part;
};

/* The driver's own state (k->drv). */
struct rknpu {
	struct kjob *queue;
	struct kjob **fences;
	size_t nfences;
	uint64_t core_free[RB_SIM_MAX_CORES]; /* when each core can take a commit */
	struct inflight fl[RB_SIM_MAX_CORES]; /* the round's commit on each core */
};

static struct rknpu *rk(const struct rb_sim_kmod *k)
{
	return k->drv;
}

/* The tasks of one job on one core. */
struct kpart {
	int core;
	uint32_t start, number; /* descriptor range */
	uint32_t done_tasks;    /* tasks of the commits that completed */
	uint32_t chunk;         /* tasks of the commit in flight */
	uint32_t chunk_mask;    /* its last task's int_mask */
	uint32_t chunk_last;    /* its last task's index */
	uint64_t commit_ns;     /* the first commit: the driver's hw_commit_time */
	uint64_t done_ns;
	bool finished;
};

struct kjob {
	struct kjob *next; /* the queue of jobs not done, in submit order */
	int refs;          /* queue + fences + dependents + a blocking submitter */
	uint32_t flags, timeout_ms, core_mask;
	uint64_t task_obj_addr, task_base_addr;
	struct kjob *dep; /* the FENCE_IN job */
	struct kpart part[RB_SIM_MAX_CORES];
	int nparts;
	uint64_t submit_ns;
	bool done;
	int status;
	uint64_t done_ns;
	uint64_t hw_elapse_ns;
	uint32_t task_counter;
	bool dropped; /* by the timeout cleanup: its fence never signals */
};

/* The driver's hardware version: VERSION + low 16 bits of VERSION_NUM (§1). */
static uint32_t hw_version(struct rb_sim_kmod *k)
{
	return rb_kmod_rd(k, 0, RB_REG_PC_VERSION) +
	       (rb_kmod_rd(k, 0, RB_REG_PC_VERSION_NUM) & 0xffffu);
}

/* ---- buffer objects and the IOMMU ---- */

static void create_out(const struct rb_sim_kmod *k, struct rknpu_mem_create *a,
		       const struct kbo *bo)
{
	a->handle = bo->handles[k->cur_file];
	a->size = bo->size;
	a->obj_addr = bo->obj_addr;
	a->dma_addr = bo->iova;
	a->sram_size = 0;
}

static int ioctl_mem_create(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_mem_create *a = arg;
	struct kbo *bo = rb_kmod_bo_by_handle(k, a->handle);
	int err;

	if (bo) { /* a non-zero handle naming an object returns it (§d.1) */
		create_out(k, a, bo);
		return 0;
	}
	if (a->iommu_domain_id != 0)
		return -EINVAL;
	err = rb_kmod_bo_create(k, a->size, a->flags, &bo);
	if (err)
		return err;
	create_out(k, a, bo);
	return 0;
}

static int ioctl_mem_map(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_mem_map *a = arg;
	struct kbo *bo = rb_kmod_bo_by_handle(k, a->handle);

	if (!bo)
		return -EINVAL;
	a->offset = rb_kmod_bo_mmap_offset(k, bo);
	return 0;
}

static int ioctl_mem_destroy(struct rb_sim_kmod *k, void *arg)
{
	return rb_kmod_bo_destroy(k, ((struct rknpu_mem_destroy *)arg)->handle);
}

static int ioctl_mem_sync(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_mem_sync *a = arg;
	struct kbo *bo = rb_kmod_bo_by_token(k, a->obj_addr);

	if (!bo || a->offset > bo->size || a->size > bo->size - a->offset)
		return -EINVAL;
	/* the CPU cache (rb_sim_config.cpu_cache): clean, then invalidate */
	if (a->flags & RKNPU_MEM_SYNC_TO_DEVICE)
		rb_kmod_bo_sync(bo, a->offset, a->size, true);
	if (a->flags & RKNPU_MEM_SYNC_FROM_DEVICE)
		rb_kmod_bo_sync(bo, a->offset, a->size, false);
	return 0;
}

/* ---- jobs: lifetime and fences ---- */

static void job_put(struct rb_sim_kmod *k, struct kjob *job)
{
	while (job && --job->refs == 0) {
		struct kjob *dep = job->dep;

		free(job);
		job = dep;
	}
	(void)k;
}

static int fence_alloc(struct rb_sim_kmod *k, struct kjob *job)
{
	size_t i;

	for (i = 0; i < rk(k)->nfences && rk(k)->fences[i]; i++)
		;
	if (i == rk(k)->nfences) {
		struct kjob **v = realloc(rk(k)->fences, (rk(k)->nfences + 8) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + rk(k)->nfences, 0, 8 * sizeof(*v));
		rk(k)->fences = v;
		rk(k)->nfences += 8;
	}
	rk(k)->fences[i] = job;
	job->refs++;
	return FENCE_FD_BASE + (int)i;
}

static struct kjob *fence_job(const struct rb_sim_kmod *k, int fd)
{
	if (fd < FENCE_FD_BASE || (size_t)(fd - FENCE_FD_BASE) >= rk(k)->nfences)
		return NULL;
	return rk(k)->fences[fd - FENCE_FD_BASE];
}

/* The queue is in the order of the submits in virtual time: one thread's clock is the
 * global one, so that is the order of the calls; in a thread group (kmod_internal.h),
 * a member may call later than another while its clock is earlier, and the job it
 * submitted first in virtual time must run first on a core they share. */
static void enqueue(struct rb_sim_kmod *k, struct kjob *job)
{
	struct kjob **pp = &rk(k)->queue;

	job->refs++;
	while (*pp && (*pp)->submit_ns <= job->submit_ns)
		pp = &(*pp)->next;
	job->next = *pp;
	*pp = job;
}

static void dequeue_done(struct rb_sim_kmod *k)
{
	struct kjob **pp = &rk(k)->queue, *job;

	while ((job = *pp)) {
		if (job->done) {
			*pp = job->next;
			job_put(k, job);
		} else {
			pp = &job->next;
		}
	}
}

/* ---- the commit (§a.3) ---- */

static int read_task(const struct rb_sim_kmod *k, const struct kjob *job, uint32_t index,
		     struct rknpu_task *t)
{
	const struct kbo *bo = rb_kmod_bo_by_token(k, job->task_obj_addr);
	uint64_t off = (uint64_t)index * sizeof(*t);

	if (!bo || off + sizeof(*t) > bo->size)
		return -EFAULT;
	memcpy(t, (const char *)rb_kmod_bo_cpu(bo) + off, sizeof(*t));
	return 0;
}

static void write_int_status(struct rb_sim_kmod *k, const struct kjob *job, uint32_t index,
			     uint32_t status)
{
	const struct kbo *bo = rb_kmod_bo_by_token(k, job->task_obj_addr);
	uint64_t off = (uint64_t)index * sizeof(struct rknpu_task);

	if (bo && off + sizeof(struct rknpu_task) <= bo->size)
		memcpy((char *)rb_kmod_bo_cpu(bo) + off + offsetof(struct rknpu_task, int_status),
		       &status, sizeof(status));
}

/* ceil((regcfg_amount + 4) / 2) − 1: the PC fetches (amount + 1)·2 words. */
static uint32_t pc_amount(uint32_t regcfg_amount)
{
	uint64_t a = (uint64_t)regcfg_amount + PC_DATA_EXTRA_AMOUNT + PC_DATA_AMOUNT_SCALE - 1;

	return (uint32_t)(a / PC_DATA_AMOUNT_SCALE - 1);
}

static void write_commit(struct rb_sim_kmod *k, const struct kjob *job, int c,
			 const struct rknpu_task *first, const struct rknpu_task *last, uint32_t n)
{
	uint32_t slave = 0;

	rb_field_pack(RB_FIELD_PC_BASE_ADDRESS_PC_SEL, 1, &slave);
	rb_kmod_wr(k, c, RB_REG_PC_BASE_ADDRESS, slave);
	rb_kmod_wr(k, c, RB_REG_CNA_S_POINTER, rb_kmod_s_pointer(c));
	rb_kmod_wr(k, c, RB_REG_CORE_S_POINTER, rb_kmod_s_pointer(c));
	rb_kmod_wr(k, c, RB_REG_PC_BASE_ADDRESS, (uint32_t)first->regcmd_addr);
	rb_kmod_wr(k, c, RB_REG_PC_REGISTER_AMOUNTS, pc_amount(first->regcfg_amount));
	rb_kmod_wr(k, c, RB_REG_PC_INTERRUPT_MASK, last->int_mask);
	rb_kmod_wr(k, c, RB_REG_PC_INTERRUPT_CLEAR, first->int_mask);
	rb_kmod_wr(k, c, RB_REG_PC_TASK_CON, rb_kmod_task_con(job->flags & RKNPU_JOB_PINGPONG, n));
	rb_kmod_wr(k, c, RB_REG_PC_TASK_DMA_BASE_ADDR, (uint32_t)job->task_base_addr);
	rb_kmod_wr(k, c, RB_REG_PC_OPERATION_ENABLE, 1);
	rb_kmod_wr(k, c, RB_REG_PC_OPERATION_ENABLE, 0);
}

static uint64_t job_ready_ns(const struct kjob *job)
{
	return job->dep ? kmod_max(job->submit_ns, job->dep->done_ns) : job->submit_ns;
}

/* ---- completion ---- */

/* The driver's "fuzz": any bit of a group-0/group-1 pair counts as both (§a.3). */
static uint32_t fuzz_status(uint32_t status)
{
	static const uint32_t pairs[] = {0x3, 0xc, 0x30, 0xc0, 0x300, 0xc00};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if (status & pairs[i])
			status |= pairs[i];
	return status;
}

static uint64_t timeout_ns(const struct kjob *job)
{
	return job->timeout_ms * MS_NS;
}

/* A job the driver gave up on: -ETIMEDOUT at commit + timeout, then the soft reset. */
static void job_fail(struct rb_sim_kmod *k, struct kjob *job, const struct kpart *p, int err)
{
	uint64_t end = p->commit_ns + timeout_ns(job) + COST_RESET_NS;

	if (err == -ETIMEDOUT)
		for (int c = 0; c < k->cores; c++)
			rk(k)->core_free[c] = kmod_max(rk(k)->core_free[c], end);
	else
		end = kmod_max(rk(k)->core_free[p->core], p->commit_ns);
	job->status = err;
	for (int i = 0; i < job->nparts; i++) {
		struct kpart *q = &job->part[i];

		if (!q->finished) {
			q->finished = true;
			q->done_ns = end;
		}
	}
}

static uint64_t first_commit_ns(const struct rb_sim_kmod *k, const struct kjob *job);

/* Commits the next chunk (at most 4095 tasks) of part p; false if the job failed. */
static bool commit_chunk(struct rb_sim_kmod *k, struct kjob *job, struct kpart *p,
			 uint64_t *kick_ns)
{
	uint32_t n = p->number - p->done_tasks;
	uint32_t first_index = p->start + p->done_tasks;
	uint64_t start = kmod_max(job_ready_ns(job), rk(k)->core_free[p->core]);
	struct rknpu_task first, last;

	if (!p->done_tasks && job->nparts > 1)
		start = first_commit_ns(k, job); /* all its cores together */

	if (n > MAX_SUBMIT_TASKS)
		n = MAX_SUBMIT_TASKS;
	if (!p->done_tasks)
		p->commit_ns = start;
	if (read_task(k, job, first_index, &first) ||
	    read_task(k, job, first_index + n - 1, &last)) {
		rb_kmod_fault(k, "core %d: task BO destroyed while its job was in flight", p->core);
		job_fail(k, job, p, -EFAULT);
		return false;
	}
	write_commit(k, job, p->core, &first, &last, n);
	p->chunk = n;
	p->chunk_mask = last.int_mask;
	p->chunk_last = first_index + n - 1;
	*kick_ns = start + k->cost.commit;
	return true;
}

/* Why a chunk that ran did not complete, or "" if it did. */
static void check_chunk(struct rb_sim_kmod *k, const struct kjob *job, const struct kpart *p,
			const struct rb_sim_core_result *r, uint64_t irq_ns, char *why, size_t size)
{
	uint32_t status = rb_kmod_rd(k, p->core, RB_REG_PC_INTERRUPT_STATUS);

	why[0] = '\0';
	if (r->status == RB_SIM_HANG)
		snprintf(why, size, "hang: %s", r->reason);
	else if (r->status == RB_SIM_IOMMU_FAULT)
		snprintf(why, size, "iommu fault: %s", r->reason);
	else if (r->status != RB_SIM_DONE)
		snprintf(why, size, "the core did not start");
	else if (!status)
		snprintf(why, size, "no interrupt: INTERRUPT_MASK 0x%x masks every bit raised",
			 p->chunk_mask);
	else if (fuzz_status(status) != p->chunk_mask)
		snprintf(why, size, "interrupt status 0x%x does not match int_mask 0x%x", status,
			 p->chunk_mask);
	else if (irq_ns - p->commit_ns > timeout_ns(job))
		snprintf(why, size, "the job needs %" PRIu64 " us, longer than its timeout",
			 (irq_ns - p->commit_ns) / 1000);
}

/* The interrupt handler's work for one core of a round; true if the NPU must be reset. */
static bool complete_chunk(struct rb_sim_kmod *k, struct kjob *job, struct kpart *p,
			   const struct rb_sim_core_result *r, uint64_t kick_ns)
{
	uint64_t irq_ns = kick_ns + r->elapsed_ns + k->cost.irq;
	char why[320];

	if (p->finished) /* another core of the job failed in this round */
		return false;
	check_chunk(k, job, p, r, irq_ns, why, sizeof(why));
	if (why[0]) {
		uint32_t st = rb_kmod_rd(k, p->core, RB_REG_PC_TASK_STATUS);

		p->done_tasks += rb_field_unpack(RB_FIELD_PC_TASK_STATUS_TASK_COUNTER, st);
		rb_kmod_fault(k, "core %d: %s; the job timed out after %u ms and the NPU was reset",
			      p->core, why, job->timeout_ms);
		job_fail(k, job, p, -ETIMEDOUT);
		return true;
	}
	write_int_status(k, job, p->chunk_last, rb_kmod_rd(k, p->core, RB_REG_PC_INTERRUPT_STATUS));
	rb_kmod_wr(k, p->core, RB_REG_PC_INTERRUPT_CLEAR, RKNPU_INT_CLEAR);
	p->done_tasks += p->chunk;
	rk(k)->core_free[p->core] = irq_ns;
	if (p->done_tasks == p->number) {
		p->finished = true;
		p->done_ns = irq_ns;
	}
	return false;
}

static void finish_job(struct rb_sim_kmod *k, struct kjob *job)
{
	uint64_t first = UINT64_MAX;

	job->done = true;
	job->done_ns = job->submit_ns;
	job->task_counter = 0;
	for (int i = 0; i < job->nparts; i++) {
		job->done_ns = kmod_max(job->done_ns, job->part[i].done_ns);
		job->task_counter += job->part[i].done_tasks;
		if (job->part[i].commit_ns < first)
			first = job->part[i].commit_ns;
	}
	if (!job->status && job->nparts)
		job->hw_elapse_ns = job->done_ns - first;
	if (job->nparts && job->done_ns - first > k->longest_job_ns)
		k->longest_job_ns = job->done_ns - first;
}

static void finish_jobs(struct rb_sim_kmod *k)
{
	for (struct kjob *job = rk(k)->queue; job; job = job->next) {
		bool all = true;

		for (int i = 0; i < job->nparts; i++)
			all = all && job->part[i].finished;
		if (all)
			finish_job(k, job);
	}
	dequeue_done(k);
}

/* ---- the scheduler's rounds (kmod_common.c) ---- */

/* The next unfinished part on `core` in submit order, if its job may start (the core
 * is a FIFO: a job waiting for its in-fence holds back the jobs behind it). */
static struct kpart *head_part(struct rb_sim_kmod *k, int core, struct kjob **jobp)
{
	for (struct kjob *job = rk(k)->queue; job; job = job->next)
		for (int i = 0; i < job->nparts; i++) {
			struct kpart *p = &job->part[i];

			if (p->core != core || p->finished)
				continue;
			if (job->dep && !job->dep->done)
				return NULL;
			*jobp = job;
			return p;
		}
	return NULL;
}

/* A multi-core job is committed as the driver does it: only once every core of its
 * mask has taken it (each core's queue has reached it), then kicked on all of them
 * together; so its first commit waits for the busiest of its cores. */
static bool all_cores_ready(struct rb_sim_kmod *k, const struct kjob *job)
{
	for (int i = 0; i < job->nparts; i++) {
		const struct kpart *q = &job->part[i];
		struct kjob *head = NULL;

		if (!q->done_tasks && !q->finished &&
		    (!head_part(k, q->core, &head) || head != job))
			return false;
	}
	return true;
}

/* When the job's first commit can start: when it and its cores are ready. */
static uint64_t first_commit_ns(const struct rb_sim_kmod *k, const struct kjob *job)
{
	uint64_t t = job_ready_ns(job);

	for (int i = 0; i < job->nparts; i++)
		t = kmod_max(t, rk(k)->core_free[job->part[i].core]);
	return t;
}

static int op_commit(struct rb_sim_kmod *k, int core, uint64_t *kick_ns)
{
	struct inflight *fl = &rk(k)->fl[core];
	struct kjob *job;
	struct kpart *p = head_part(k, core, &job);

	memset(fl, 0, sizeof(*fl));
	if (!p)
		return -1;
	if (job->nparts > 1 && !p->done_tasks && !all_cores_ready(k, job))
		return -1; /* its other cores are still busy with earlier jobs */
	if (!commit_chunk(k, job, p, kick_ns))
		return 0;
	fl->job = job;
	fl->part = p;
	return 1;
}

static bool op_complete(struct rb_sim_kmod *k, int core, const struct rb_sim_core_result *r,
			uint64_t kick_ns)
{
	struct inflight *fl = &rk(k)->fl[core];

	return complete_chunk(k, fl->job, fl->part, r, kick_ns);
}

/* Runs every job in flight to its end. */
static void run_pending(struct rb_sim_kmod *k)
{
	while (rk(k)->queue && rb_kmod_run_round(k))
		;
	/* Cannot happen (a job's in-fence is an earlier job), but never spin or leak. */
	for (struct kjob *job = rk(k)->queue; job; job = job->next)
		if (job->nparts)
			job_fail(k, job, &job->part[0], -EDEADLK);
	finish_jobs(k);
}

/* ---- SUBMIT ---- */

/* mask 0 ("auto"): the core with the fewest tasks queued, the lowest on a tie. */
static int least_loaded_core(const struct rb_sim_kmod *k)
{
	uint64_t load[RB_SIM_MAX_CORES] = {0};
	int best = 0;

	for (const struct kjob *job = rk(k)->queue; job; job = job->next)
		for (int i = 0; i < job->nparts; i++)
			if (!job->part[i].finished)
				load[job->part[i].core] +=
				    job->part[i].number - job->part[i].done_tasks;
	for (int c = 1; c < k->cores; c++)
		if (load[c] < load[best])
			best = c;
	return best;
}

static int add_part(struct kjob *job, int core, const struct rknpu_subcore_task *st, uint64_t ndesc)
{
	struct kpart *p = &job->part[job->nparts];

	if (!st->task_number || (uint64_t)st->task_start + st->task_number > ndesc)
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	p->core = core;
	p->start = st->task_start;
	p->number = st->task_number;
	job->nparts++;
	return 0;
}

/* core_mask as the driver reads it (§d.1): one core takes subcore_task[core], cores
 * 0+1 take [0] and [1], all three take [2], [3], [4]; 5 and 6 are not handled by the
 * commit ("Unknown core mask") and get no part. */
static int build_parts(struct rb_sim_kmod *k, const struct rknpu_submit *a, struct kjob *job,
		       uint64_t ndesc)
{
	int err = 0;

	switch (a->core_mask) {
	case 0: {
		int c = least_loaded_core(k);

		return add_part(job, c, &a->subcore_task[c], ndesc);
	}
	case 1:
	case 2:
	case 4: {
		int c = __builtin_ctz(a->core_mask);

		return add_part(job, c, &a->subcore_task[c], ndesc);
	}
	case 3:
		for (int c = 0; c < 2 && !err; c++)
			err = add_part(job, c, &a->subcore_task[c], ndesc);
		return err;
	case 7:
		for (int c = 0; c < 3 && !err; c++)
			err = add_part(job, c, &a->subcore_task[c + 2], ndesc);
		return err;
	default:
		return 0;
	}
}

static int check_submit(const struct rb_sim_kmod *k, const struct rknpu_submit *a, uint64_t *ndesc)
{
	const struct kbo *tasks = rb_kmod_bo_by_token(k, a->task_obj_addr);

	if (!(a->flags & RKNPU_JOB_PC) || !a->task_number || a->iommu_domain_id != 0)
		return -EINVAL;
	if (!tasks || !(tasks->flags & RKNPU_MEM_KERNEL_MAPPING))
		return -EINVAL;
	*ndesc = tasks->size / sizeof(struct rknpu_task);
	if ((uint64_t)a->task_start + a->task_number > *ndesc)
		return -EINVAL;
	if (a->core_mask & ~((1u << k->cores) - 1))
		return -EINVAL;
	if ((a->flags & RKNPU_JOB_FENCE_IN) && !fence_job(k, a->fence_fd))
		return -EINVAL;
	return 0;
}

static int new_job(struct rb_sim_kmod *k, const struct rknpu_submit *a, struct kjob **out)
{
	struct kjob *job;
	uint64_t ndesc;
	int err = check_submit(k, a, &ndesc);

	if (err)
		return err;
	job = calloc(1, sizeof(*job));
	if (!job)
		return -ENOMEM;
	job->refs = 1;
	job->flags = a->flags;
	job->timeout_ms = a->timeout;
	job->core_mask = a->core_mask;
	job->task_obj_addr = a->task_obj_addr;
	job->task_base_addr = a->task_base_addr;
	err = build_parts(k, a, job, ndesc);
	if (err) {
		free(job);
		return err;
	}
	if (a->flags & RKNPU_JOB_FENCE_IN) {
		job->dep = fence_job(k, a->fence_fd);
		job->dep->refs++;
	}
	*out = job;
	return 0;
}

/* A job with core mask 5 or 6: never committed, it times out from the submit. */
static void unknown_mask_job(struct rb_sim_kmod *k, struct kjob *job)
{
	rb_kmod_fault(
	    k, "unknown core mask 0x%x: the job was never committed and timed out after %u ms",
	    job->core_mask, job->timeout_ms);
	job->status = -ETIMEDOUT;
	job->done = true;
	job->done_ns = job->submit_ns + timeout_ns(job);
}

/* The cores a job runs on. */
static uint32_t job_cores(const struct kjob *job)
{
	uint32_t mask = 0;

	for (int i = 0; i < job->nparts; i++)
		mask |= 1u << job->part[i].core;
	return mask;
}

/* Whether the cleanup at time t looks at the job: it is on one of `cores` and its age
 * in µs has reached its timeout in ms. */
static bool cleanup_sees(const struct kjob *job, uint32_t cores, uint64_t t)
{
	uint64_t age_us = t > job->submit_ns ? (t - job->submit_ns) / 1000 : 0;

	return (job_cores(job) & cores) && age_us >= job->timeout_ms;
}

/* The vendor driver's cleanup on every non-blocking submit (rknpu_job_timeout_clean,
 * issue 32): a job queued or running on the new job's cores whose age in microseconds
 * has reached its timeout in milliseconds is dropped, its fence never signalled, and the
 * NPU soft-reset. With the usual 6000 ms that is any job older than 6 ms: another
 * user's long job dies when a non-blocking submit comes in. Jobs run when someone
 * waits, so the jobs in flight are run first when one is old enough to be at risk (not
 * otherwise: the modeled times of submits close together stay as they were); a job
 * that had ended by t is safe. */
static void timeout_clean(struct rb_sim_kmod *k, uint32_t cores, uint64_t t)
{
	bool at_risk = false, reset = false;

	for (struct kjob *job = rk(k)->queue; job; job = job->next)
		at_risk |= cleanup_sees(job, cores, t);
	if (!at_risk)
		return;
	run_pending(k);
	for (size_t i = 0; i < rk(k)->nfences; i++) {
		struct kjob *job = rk(k)->fences[i];

		/* a job that had ended by t is safe */
		if (!job || job->dropped || job->done_ns <= t || !cleanup_sees(job, cores, t))
			continue;
		job->dropped = true;
		job->status = -ETIMEDOUT;
		reset = true;
		rb_kmod_fault(k,
			      "rknpu: a non-blocking submit at %" PRIu64 " us dropped the job "
			      "submitted at %" PRIu64 " us (fence %zu): its age in us passed its "
			      "timeout of %u taken as us (ms meant); soft reset, its fence never "
			      "signals",
			      t / 1000, job->submit_ns / 1000, FENCE_FD_BASE + i, job->timeout_ms);
	}
	if (reset)
		for (int c = 0; c < k->cores; c++)
			rk(k)->core_free[c] = kmod_max(rk(k)->core_free[c], t + COST_RESET_NS);
}

static int ioctl_submit(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_submit *a = arg;
	struct kjob *job;
	int err = new_job(k, a, &job);

	if (err)
		return err;
	job->submit_ns = rb_kmod_thread_now(k) + k->cost.submit;
	rb_kmod_thread_advance(k, job->submit_ns);
	if ((a->flags & RKNPU_JOB_NONBLOCK) && k->vendor_cleanup)
		timeout_clean(k, job->nparts ? job_cores(job) : a->core_mask, job->submit_ns);
	if (a->flags & RKNPU_JOB_FENCE_OUT) {
		a->fence_fd = fence_alloc(k, job);
		if (a->fence_fd < 0) {
			err = a->fence_fd;
			job_put(k, job);
			return err;
		}
	}
	if (job->nparts)
		enqueue(k, job);
	else
		unknown_mask_job(k, job);
	if (!(a->flags & RKNPU_JOB_NONBLOCK)) {
		rb_kmod_block_until(k, &job->done);
		rb_kmod_thread_advance(k, job->done_ns + k->cost.wake);
		a->task_counter = job->task_counter;
		if (!job->status)
			a->hw_elapse_time = (int64_t)job->hw_elapse_ns;
		err = job->status;
	}
	job_put(k, job);
	return err;
}

static int op_wait(struct rb_sim_kmod *k, int fence_fd, int timeout_ms)
{
	struct kjob *job;
	uint64_t ready;
	int ret;

	job = fence_job(k, fence_fd);
	if (!job)
		return -EBADF;
	run_pending(k);
	ready = job->dropped ? UINT64_MAX : job->done_ns + k->cost.wake;
	if (job->dropped && timeout_ms < 0) /* would wait for ever */
		return -ETIMEDOUT;
	if (timeout_ms >= 0 && ready > atomic_load(&k->now) + (uint64_t)timeout_ms * MS_NS) {
		rb_kmod_advance_to(k, atomic_load(&k->now) + (uint64_t)timeout_ms * MS_NS);
		ret = -ETIMEDOUT;
	} else {
		rb_kmod_advance_to(k, ready);
		ret = job->status;
	}
	return ret;
}

static int op_close_fd(struct rb_sim_kmod *k, int fd)
{
	struct kjob *job;

	job = fence_job(k, fd);
	if (job) {
		rk(k)->fences[fd - FENCE_FD_BASE] = NULL;
		job_put(k, job);
	}
	return job ? 0 : -EBADF;
}

/* ---- ACTION and VERSION ---- */

/* The soft reset (§d.1): a 100 ms sleep, then every core's reset lines. */
static void soft_reset(struct rb_sim_kmod *k)
{
	uint64_t end;

	run_pending(k);
	rb_kmod_log(k, "rknpu: ACT_RESET: soft reset of every core");
	end = atomic_load(&k->now) + COST_RESET_NS;
	rb_kmod_reset_all(k);
	for (int c = 0; c < k->cores; c++)
		rk(k)->core_free[c] = kmod_max(rk(k)->core_free[c], end);
	rb_kmod_advance_to(k, end);
}

static int ioctl_action(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_action *a = arg;

	switch (a->flags) {
	case RKNPU_GET_HW_VERSION:
		a->value = hw_version(k);
		return 0;
	case RKNPU_GET_DRV_VERSION:
		a->value = DRV_VERSION_CODE;
		return 0;
	case RKNPU_GET_FREQ:
		a->value = k->freq_hz;
		return 0;
	case RKNPU_GET_VOLT:
		a->value = NPU_VOLT_UV;
		return 0;
	case RKNPU_ACT_RESET:
		soft_reset(k);
		return 0;
	case RKNPU_GET_IOMMU_EN:
		a->value = 1;
		return 0;
	case RKNPU_ACT_CLR_TOTAL_RW_AMOUNT: /* no byte counters on RK3588 (amount_top) */
	case RKNPU_SET_PROC_NICE:
		return 0;
	case RKNPU_GET_DT_WR_AMOUNT:
	case RKNPU_GET_DT_RD_AMOUNT:
	case RKNPU_GET_WT_RD_AMOUNT:
	case RKNPU_GET_TOTAL_RW_AMOUNT:
	case RKNPU_GET_TOTAL_SRAM_SIZE: /* no SRAM in the device tree */
	case RKNPU_GET_FREE_SRAM_SIZE:
	case RKNPU_GET_IOMMU_DOMAIN_ID:
		a->value = 0;
		return 0;
	case RKNPU_SET_IOMMU_DOMAIN_ID: /* one domain only (see the top) */
		return a->value == 0 ? 0 : -EINVAL;
	default: /* SET_FREQ, SET_VOLT, bandwidth 7–12, POWER_ON/OFF, unknown codes */
		return -EINVAL;
	}
}

/* ---- dispatch ---- */

static const struct kmod_ioctl drv_ioctls[] = {
    [RKNPU_NR_ACTION] = {DRM_IOCTL_RKNPU_ACTION, ioctl_action},
    [RKNPU_NR_SUBMIT] = {DRM_IOCTL_RKNPU_SUBMIT, ioctl_submit},
    [RKNPU_NR_MEM_CREATE] = {DRM_IOCTL_RKNPU_MEM_CREATE, ioctl_mem_create},
    [RKNPU_NR_MEM_MAP] = {DRM_IOCTL_RKNPU_MEM_MAP, ioctl_mem_map},
    [RKNPU_NR_MEM_DESTROY] = {DRM_IOCTL_RKNPU_MEM_DESTROY, ioctl_mem_destroy},
    [RKNPU_NR_MEM_SYNC] = {DRM_IOCTL_RKNPU_MEM_SYNC, ioctl_mem_sync},
};

static const struct kmod_ioctl *op_find_ioctl(unsigned nr)
{
	if (nr >= DRM_COMMAND_BASE &&
	    nr - DRM_COMMAND_BASE < sizeof(drv_ioctls) / sizeof(drv_ioctls[0]))
		return &drv_ioctls[nr - DRM_COMMAND_BASE];
	return NULL;
}

/* ---- lifecycle ---- */

static void op_release(struct rb_sim_kmod *k)
{
	struct rknpu *r = rk(k);
	struct kjob *job, *next;

	if (!r)
		return;
	for (job = r->queue; job; job = next) {
		next = job->next;
		job_put(k, job);
	}
	for (size_t i = 0; i < r->nfences; i++)
		job_put(k, r->fences[i]);
	free(r->fences);
	free(r);
}

static const struct kmod_ops rknpu_ops = {
    .name = "rknpu kernel",
    .find_ioctl = op_find_ioctl,
    .cached_flag = RKNPU_MEM_CACHEABLE,
    .version = {DRV_MAJOR, DRV_MINOR, DRV_PATCH, RKNPU_DRIVER_NAME, DRV_DATE, DRV_DESC},
    .wait = op_wait,
    .close_fd = op_close_fd,
    .commit = op_commit,
    .complete = op_complete,
    .retire = finish_jobs,
    .run_all = run_pending,
    .release = op_release,
};

struct rb_sim_kmod *rb_sim_kmod_rknpu_new(const struct rb_sim_config *cfg)
{
	struct rb_sim_kmod *k = rb_kmod_new(cfg, &rknpu_ops);

	if (!k)
		return NULL;
	k->drv = calloc(1, sizeof(struct rknpu));
	if (!k->drv) {
		rb_sim_kmod_free(k);
		rb_set_error(-ENOMEM, "cannot create the emulated rknpu kernel: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	return k;
}
