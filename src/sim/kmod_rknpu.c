/* The emulated vendor rknpu kernel driver, ABI 0.9.8 (npu-facts §d.1), driving the
 * emulated NPU (sim.h). Written from the documented behaviour; the vendor driver is
 * GPL-2.0 and none of its code is used.
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
 * then every core's reset lines, §d.1 "Reset"). An IOMMU page fault is reported the same
 * way: the rockchip IOMMU stalls the NPU's DMA and the driver only sees a job that never
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
 *  - MEM_SYNC is a range check only: emulated memory is coherent;
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
#include "sim/sim.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "core/error.h"
#include "dev/rknpu_uapi.h"
#include "npu/regs.h"
#include "sim/soc.h"

/* Identity (§d.1); the date is the 0.9.8 release's DRIVER_DATE. */
#define DRV_DESC         "RKNPU driver"
#define DRV_DATE         "20240828"
#define DRV_MAJOR        0
#define DRV_MINOR        9
#define DRV_PATCH        8
#define DRV_VERSION_CODE (DRV_MAJOR * 10000 + DRV_MINOR * 100 + DRV_PATCH) /* 908 */

#define NPU_VOLT_UV 825000u /* GET_VOLT on a Rock 5B */

/* The NPU address space: 4 KiB pages below 4 GiB (§e: 32-bit NPU addresses). Page 0 is
 * never handed out, so 0 is never a buffer's address. Ranges are taken top-down like
 * Linux's IOVA allocator; MTX printed addresses just below 4 GiB (Appendix A). */
#define PAGE_BYTES     4096u
#define IOVA_FIRST     ((uint64_t)PAGE_BYTES)
#define IOVA_END       (UINT64_C(1) << 32)
#define DEFAULT_BUDGET (UINT64_C(1) << 32)

/* DRM's fake mmap offsets start above 4 GiB on 64-bit kernels; obj_addr is a kernel
 * address in stock drivers, so the tokens look like one (and are never reused). */
#define MMAP_OFFSET_START (UINT64_C(1) << 32)
#define OBJ_TOKEN_START   UINT64_C(0xffffff8000100000)
#define OBJ_TOKEN_STEP    0x400u

#define FENCE_FD_BASE 1000

/* The RK3588 configuration of the driver (§a.3). */
#define PC_DATA_EXTRA_AMOUNT 4
#define PC_DATA_AMOUNT_SCALE 2
#define MAX_SUBMIT_TASKS     4095u

/* The driver's soft reset sleeps 100 ms (§d.1): the driver's number, not the SoC's.
 * The other fixed costs come from the hardware profile (struct costs). */
#define COST_RESET_NS 100000000u

#define MS_NS UINT64_C(1000000)

struct kbo {
	uint32_t handle;
	uint32_t flags;
	uint32_t iova;
	unsigned maps; /* live user mappings */
	uint64_t size; /* page-aligned */
	uint64_t obj_addr;
	uint64_t mmap_offset; /* 0 until MEM_MAP */
	void *mem;
};

struct bo_list {
	struct kbo **v;
	size_t n, cap;
};

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
};

/* Per-submit costs in ns, from the hardware profile's submit.* (soc.h). */
struct costs {
	uint64_t submit, commit, irq, wake;
};

struct rb_sim_kmod {
	pthread_mutex_t lock;
	struct costs cost;
	uint64_t freq_hz; /* GET_FREQ: the profile's clock (1 GHz on a Rock 5B, §1, §d.1) */
	struct rb_sim_npu *npu;
	struct rb_sim_iommu iommu;
	int cores;
	struct bo_list live;    /* sorted by iova */
	struct bo_list zombies; /* destroyed, still mmapped */
	uint64_t mem_used, mem_budget;
	uint64_t next_token, next_offset;
	struct kjob *queue, *queue_tail;
	struct kjob **fences;
	size_t nfences;
	uint64_t core_free[RB_SIM_MAX_CORES]; /* when each core can take a commit */
	_Atomic uint64_t now;
	char last_fault[512];
	rb_sim_mmio_trace_fn *trace;
	void *trace_ctx;
};

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static void advance_to(struct rb_sim_kmod *k, uint64_t t)
{
	if (t > atomic_load(&k->now))
		atomic_store(&k->now, t);
}

static void fault(struct rb_sim_kmod *k, const char *fmt, ...) RB_PRINTF(2, 3);

static void fault(struct rb_sim_kmod *k, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(k->last_fault, sizeof(k->last_fault), fmt, ap);
	va_end(ap);
}

/* ---- MMIO ---- */

static void wr(struct rb_sim_kmod *k, int core, enum rb_reg_id reg, uint32_t value)
{
	uint32_t offset = rb_reg(reg)->offset;

	rb_sim_npu_mmio_write(k->npu, core, offset, value);
	if (k->trace)
		k->trace(k->trace_ctx, core, offset, value);
}

static uint32_t rd(struct rb_sim_kmod *k, int core, enum rb_reg_id reg)
{
	return rb_sim_npu_mmio_read(k->npu, core, rb_reg(reg)->offset);
}

/* The driver's hardware version: VERSION + low 16 bits of VERSION_NUM (§1). */
static uint32_t hw_version(struct rb_sim_kmod *k)
{
	return rd(k, 0, RB_REG_PC_VERSION) + (rd(k, 0, RB_REG_PC_VERSION_NUM) & 0xffffu);
}

/* ---- buffer objects and the IOMMU ---- */

static int list_insert(struct bo_list *l, size_t at, struct kbo *bo)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		struct kbo **v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	memmove(&l->v[at + 1], &l->v[at], (l->n - at) * sizeof(*l->v));
	l->v[at] = bo;
	l->n++;
	return 0;
}

static void list_remove(struct bo_list *l, size_t at)
{
	memmove(&l->v[at], &l->v[at + 1], (l->n - at - 1) * sizeof(*l->v));
	l->n--;
}

static struct kbo *bo_by_handle(const struct rb_sim_kmod *k, uint32_t handle, size_t *at)
{
	for (size_t i = 0; handle && i < k->live.n; i++)
		if (k->live.v[i]->handle == handle) {
			if (at)
				*at = i;
			return k->live.v[i];
		}
	return NULL;
}

static struct kbo *bo_by_token(const struct rb_sim_kmod *k, uint64_t obj_addr)
{
	for (size_t i = 0; i < k->live.n; i++)
		if (k->live.v[i]->obj_addr == obj_addr)
			return k->live.v[i];
	return NULL;
}

/* NPU address range -> host memory, if it lies inside one live buffer object. */
static void *iommu_map(void *ctx, uint32_t iova, uint64_t len)
{
	const struct rb_sim_kmod *k = ctx;
	size_t lo = 0, hi = k->live.n;
	const struct kbo *bo;
	uint64_t off;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->live.v[mid]->iova <= iova)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	bo = k->live.v[lo - 1];
	off = iova - bo->iova;
	if (off >= bo->size || len > bo->size - off)
		return NULL;
	return (char *)bo->mem + off;
}

/* Top-down first fit: the highest gap that holds `size`; *at is where the new object
 * goes in the sorted list. */
static int iova_alloc(const struct rb_sim_kmod *k, uint64_t size, uint32_t *iova, size_t *at)
{
	for (size_t i = k->live.n + 1; i-- > 0;) {
		uint64_t end = i == k->live.n ? IOVA_END : k->live.v[i]->iova;
		uint64_t start = IOVA_FIRST;

		if (i > 0)
			start = k->live.v[i - 1]->iova + k->live.v[i - 1]->size;
		if (end - start >= size) {
			*iova = (uint32_t)(end - size);
			*at = i;
			return 0;
		}
	}
	return -ENOMEM;
}

/* GEM handles: the lowest free one, from 1. */
static uint32_t handle_alloc(const struct rb_sim_kmod *k)
{
	uint32_t h = 1;

	while (bo_by_handle(k, h, NULL))
		h++;
	return h;
}

static void bo_free(struct rb_sim_kmod *k, struct kbo *bo)
{
	munmap(bo->mem, bo->size);
	k->mem_used -= bo->size;
	free(bo);
}

static struct kbo *bo_new(struct rb_sim_kmod *k, uint64_t size, uint32_t flags)
{
	struct kbo *bo = calloc(1, sizeof(*bo));

	if (!bo)
		return NULL;
	/* Anonymous memory: zeroed (as with RKNPU_MEM_ZEROING) and committed lazily. */
	bo->mem = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (bo->mem == MAP_FAILED) {
		free(bo);
		return NULL;
	}
	bo->size = size;
	bo->flags = flags;
	bo->handle = handle_alloc(k);
	bo->obj_addr = k->next_token;
	k->next_token += OBJ_TOKEN_STEP;
	k->mem_used += size;
	return bo;
}

static void create_out(struct rknpu_mem_create *a, const struct kbo *bo)
{
	a->handle = bo->handle;
	a->size = bo->size;
	a->obj_addr = bo->obj_addr;
	a->dma_addr = bo->iova;
	a->sram_size = 0;
}

static int ioctl_mem_create(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_mem_create *a = arg;
	struct kbo *bo = bo_by_handle(k, a->handle, NULL);
	uint64_t size;
	uint32_t iova;
	size_t at;

	if (bo) { /* a non-zero handle naming an object returns it (§d.1) */
		create_out(a, bo);
		return 0;
	}
	if (!a->size || a->iommu_domain_id != 0)
		return -EINVAL;
	if (a->size > IOVA_END)
		return -ENOMEM;
	size = (a->size + PAGE_BYTES - 1) & ~(uint64_t)(PAGE_BYTES - 1);
	if (size > k->mem_budget - k->mem_used || iova_alloc(k, size, &iova, &at))
		return -ENOMEM;
	bo = bo_new(k, size, a->flags);
	if (!bo)
		return -ENOMEM;
	bo->iova = iova;
	if (list_insert(&k->live, at, bo)) {
		bo_free(k, bo);
		return -ENOMEM;
	}
	create_out(a, bo);
	return 0;
}

static int ioctl_mem_map(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_mem_map *a = arg;
	struct kbo *bo = bo_by_handle(k, a->handle, NULL);

	if (!bo)
		return -EINVAL;
	if (!bo->mmap_offset) {
		bo->mmap_offset = k->next_offset;
		k->next_offset += bo->size;
	}
	a->offset = bo->mmap_offset;
	return 0;
}

/* The handle and the NPU range go at once; the memory stays while it is mmapped. */
static int ioctl_mem_destroy(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_mem_destroy *a = arg;
	size_t at;
	struct kbo *bo = bo_by_handle(k, a->handle, &at);

	if (!bo)
		return -EINVAL;
	list_remove(&k->live, at);
	bo->handle = 0;
	if (!bo->maps) {
		bo_free(k, bo);
		return 0;
	}
	/* Without room to remember it, the memory stays for good rather than being
	 * pulled from under the user's mapping. */
	(void)list_insert(&k->zombies, k->zombies.n, bo);
	return 0;
}

static int ioctl_mem_sync(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_mem_sync *a = arg;
	const struct kbo *bo = bo_by_token(k, a->obj_addr);

	if (!bo || a->offset > bo->size || a->size > bo->size - a->offset)
		return -EINVAL;
	return 0; /* emulated memory is coherent: nothing to flush or invalidate */
}

int rb_sim_kmod_mmap(struct rb_sim_kmod *k, size_t len, uint64_t offset, void **addr)
{
	int ret = -EINVAL;

	pthread_mutex_lock(&k->lock);
	for (size_t i = 0; i < k->live.n; i++) {
		struct kbo *bo = k->live.v[i];

		if (!bo->mmap_offset || bo->mmap_offset != offset)
			continue;
		if (len && len <= bo->size) { /* DRM refuses a mapping larger than the object */
			bo->maps++;
			*addr = bo->mem;
			ret = 0;
		}
		break;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

static struct kbo *mapped_bo(struct bo_list *l, void *addr, size_t *at)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i]->mem == addr && l->v[i]->maps) {
			*at = i;
			return l->v[i];
		}
	return NULL;
}

int rb_sim_kmod_munmap(struct rb_sim_kmod *k, void *addr, size_t len)
{
	struct kbo *bo;
	size_t at;
	int ret = 0;

	pthread_mutex_lock(&k->lock);
	if (!len) {
		ret = -EINVAL;
	} else if ((bo = mapped_bo(&k->live, addr, &at))) {
		bo->maps--;
	} else if ((bo = mapped_bo(&k->zombies, addr, &at))) {
		if (--bo->maps == 0) {
			list_remove(&k->zombies, at);
			bo_free(k, bo);
		}
	} else {
		ret = -EINVAL;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
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

	for (i = 0; i < k->nfences && k->fences[i]; i++)
		;
	if (i == k->nfences) {
		struct kjob **v = realloc(k->fences, (k->nfences + 8) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		memset(v + k->nfences, 0, 8 * sizeof(*v));
		k->fences = v;
		k->nfences += 8;
	}
	k->fences[i] = job;
	job->refs++;
	return FENCE_FD_BASE + (int)i;
}

static struct kjob *fence_job(const struct rb_sim_kmod *k, int fd)
{
	if (fd < FENCE_FD_BASE || (size_t)(fd - FENCE_FD_BASE) >= k->nfences)
		return NULL;
	return k->fences[fd - FENCE_FD_BASE];
}

static void enqueue(struct rb_sim_kmod *k, struct kjob *job)
{
	job->refs++;
	if (k->queue_tail)
		k->queue_tail->next = job;
	else
		k->queue = job;
	k->queue_tail = job;
}

static void dequeue_done(struct rb_sim_kmod *k)
{
	struct kjob **pp = &k->queue, *job;

	k->queue_tail = NULL;
	while ((job = *pp)) {
		if (job->done) {
			*pp = job->next;
			job_put(k, job);
		} else {
			k->queue_tail = job;
			pp = &job->next;
		}
	}
}

/* ---- the commit (§a.3) ---- */

static int read_task(const struct rb_sim_kmod *k, const struct kjob *job, uint32_t index,
		     struct rknpu_task *t)
{
	const struct kbo *bo = bo_by_token(k, job->task_obj_addr);
	uint64_t off = (uint64_t)index * sizeof(*t);

	if (!bo || off + sizeof(*t) > bo->size)
		return -EFAULT;
	memcpy(t, (const char *)bo->mem + off, sizeof(*t));
	return 0;
}

static void write_int_status(struct rb_sim_kmod *k, const struct kjob *job, uint32_t index,
			     uint32_t status)
{
	const struct kbo *bo = bo_by_token(k, job->task_obj_addr);
	uint64_t off = (uint64_t)index * sizeof(struct rknpu_task);

	if (bo && off + sizeof(struct rknpu_task) <= bo->size)
		memcpy((char *)bo->mem + off + offsetof(struct rknpu_task, int_status), &status,
		       sizeof(status));
}

/* CNA/CORE S_POINTER: both ping-pong enables, pointer mode, and the core index in the
 * bits the TRM calls reserved: 0xE + core·0x10000000. */
static uint32_t s_pointer(int core)
{
	uint32_t v = 0;

	rb_field_pack(RB_FIELD_CNA_S_POINTER_POINTER_PP_EN, 1, &v);
	rb_field_pack(RB_FIELD_CNA_S_POINTER_EXECUTER_PP_EN, 1, &v);
	rb_field_pack(RB_FIELD_CNA_S_POINTER_POINTER_PP_MODE, 1, &v);
	rb_field_pack(RB_FIELD_CNA_S_POINTER_RESERVED_28, (uint64_t)core, &v);
	return v;
}

/* ((0x6 | pingpong) << 12) | tasks: bits 14 and 13 always, bit 12 = PINGPONG. */
static uint32_t task_con(bool pingpong, uint32_t tasks)
{
	uint32_t v = 0;

	rb_field_pack(RB_FIELD_PC_TASK_CON_RESERVED_14, 1, &v);
	rb_field_pack(RB_FIELD_PC_TASK_CON_TASK_COUNT_CLEAR, 1, &v);
	rb_field_pack(RB_FIELD_PC_TASK_CON_TASK_PP_EN, pingpong, &v);
	rb_field_pack(RB_FIELD_PC_TASK_CON_TASK_NUMBER, tasks, &v);
	return v;
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
	wr(k, c, RB_REG_PC_BASE_ADDRESS, slave);
	wr(k, c, RB_REG_CNA_S_POINTER, s_pointer(c));
	wr(k, c, RB_REG_CORE_S_POINTER, s_pointer(c));
	wr(k, c, RB_REG_PC_BASE_ADDRESS, (uint32_t)first->regcmd_addr);
	wr(k, c, RB_REG_PC_REGISTER_AMOUNTS, pc_amount(first->regcfg_amount));
	wr(k, c, RB_REG_PC_INTERRUPT_MASK, last->int_mask);
	wr(k, c, RB_REG_PC_INTERRUPT_CLEAR, first->int_mask);
	wr(k, c, RB_REG_PC_TASK_CON, task_con(job->flags & RKNPU_JOB_PINGPONG, n));
	wr(k, c, RB_REG_PC_TASK_DMA_BASE_ADDR, (uint32_t)job->task_base_addr);
	wr(k, c, RB_REG_PC_OPERATION_ENABLE, 1);
	wr(k, c, RB_REG_PC_OPERATION_ENABLE, 0);
}

static uint64_t job_ready_ns(const struct kjob *job)
{
	return job->dep ? max_u64(job->submit_ns, job->dep->done_ns) : job->submit_ns;
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
			k->core_free[c] = max_u64(k->core_free[c], end);
	else
		end = max_u64(k->core_free[p->core], p->commit_ns);
	job->status = err;
	for (int i = 0; i < job->nparts; i++) {
		struct kpart *q = &job->part[i];

		if (!q->finished) {
			q->finished = true;
			q->done_ns = end;
		}
	}
}

/* Commits the next chunk (at most 4095 tasks) of part p; false if the job failed. */
static bool commit_chunk(struct rb_sim_kmod *k, struct kjob *job, struct kpart *p,
			 uint64_t *kick_ns)
{
	uint32_t n = p->number - p->done_tasks;
	uint32_t first_index = p->start + p->done_tasks;
	uint64_t start = max_u64(job_ready_ns(job), k->core_free[p->core]);
	struct rknpu_task first, last;

	if (n > MAX_SUBMIT_TASKS)
		n = MAX_SUBMIT_TASKS;
	if (!p->done_tasks)
		p->commit_ns = start;
	if (read_task(k, job, first_index, &first) ||
	    read_task(k, job, first_index + n - 1, &last)) {
		fault(k, "core %d: task BO destroyed while its job was in flight", p->core);
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
	uint32_t status = rd(k, p->core, RB_REG_PC_INTERRUPT_STATUS);

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
		uint32_t st = rd(k, p->core, RB_REG_PC_TASK_STATUS);

		p->done_tasks += rb_field_unpack(RB_FIELD_PC_TASK_STATUS_TASK_COUNTER, st);
		fault(k, "core %d: %s; the job timed out after %u ms and the NPU was reset",
		      p->core, why, job->timeout_ms);
		job_fail(k, job, p, -ETIMEDOUT);
		return true;
	}
	write_int_status(k, job, p->chunk_last, rd(k, p->core, RB_REG_PC_INTERRUPT_STATUS));
	wr(k, p->core, RB_REG_PC_INTERRUPT_CLEAR, RKNPU_INT_CLEAR);
	p->done_tasks += p->chunk;
	k->core_free[p->core] = irq_ns;
	if (p->done_tasks == p->number) {
		p->finished = true;
		p->done_ns = irq_ns;
	}
	return false;
}

static void reset_all(struct rb_sim_kmod *k)
{
	for (int c = 0; c < k->cores; c++)
		rb_sim_npu_reset(k->npu, c);
}

static void finish_job(struct kjob *job)
{
	uint64_t first = UINT64_MAX;

	job->done = true;
	job->done_ns = job->submit_ns;
	job->task_counter = 0;
	for (int i = 0; i < job->nparts; i++) {
		job->done_ns = max_u64(job->done_ns, job->part[i].done_ns);
		job->task_counter += job->part[i].done_tasks;
		if (job->part[i].commit_ns < first)
			first = job->part[i].commit_ns;
	}
	if (!job->status && job->nparts)
		job->hw_elapse_ns = job->done_ns - first;
}

static void finish_jobs(struct rb_sim_kmod *k)
{
	for (struct kjob *job = k->queue; job; job = job->next) {
		bool all = true;

		for (int i = 0; i < job->nparts; i++)
			all = all && job->part[i].finished;
		if (all)
			finish_job(job);
	}
	dequeue_done(k);
}

/* ---- the scheduler: rounds of cores running together ---- */

struct inflight {
	struct kjob *job;
	struct kpart *part;
	uint64_t kick_ns;
};

/* The next unfinished part on `core` in submit order, if its job may start (the core
 * is a FIFO: a job waiting for its in-fence holds back the jobs behind it). */
static struct kpart *head_part(struct rb_sim_kmod *k, int core, struct kjob **jobp)
{
	for (struct kjob *job = k->queue; job; job = job->next)
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

static uint32_t commit_round(struct rb_sim_kmod *k, struct inflight fl[], bool *progress)
{
	uint32_t mask = 0;

	for (int c = 0; c < k->cores; c++) {
		struct kjob *job;
		struct kpart *p = head_part(k, c, &job);

		if (!p)
			continue;
		*progress = true;
		if (!commit_chunk(k, job, p, &fl[c].kick_ns))
			continue;
		fl[c].job = job;
		fl[c].part = p;
		mask |= 1u << c;
	}
	return mask;
}

static bool run_round(struct rb_sim_kmod *k)
{
	struct inflight fl[RB_SIM_MAX_CORES];
	struct rb_sim_core_result res[RB_SIM_MAX_CORES];
	uint64_t kick[RB_SIM_MAX_CORES];
	bool progress = false, reset = false;
	uint32_t mask;
	int err = 0;

	memset(fl, 0, sizeof(fl));
	memset(res, 0, sizeof(res));
	mask = commit_round(k, fl, &progress);
	for (int c = 0; c < RB_SIM_MAX_CORES; c++)
		kick[c] = fl[c].kick_ns;
	if (mask)
		err = rb_sim_npu_run_at(k->npu, mask, kick, res);
	for (int c = 0; c < k->cores; c++) {
		if (!(mask & (1u << c)))
			continue;
		if (err) {
			res[c].status = RB_SIM_HANG;
			snprintf(res[c].reason, sizeof(res[c].reason),
				 "the emulated NPU failed: %s", strerror(-err));
		}
		reset |= complete_chunk(k, fl[c].job, fl[c].part, &res[c], fl[c].kick_ns);
	}
	if (reset)
		reset_all(k);
	finish_jobs(k);
	return progress;
}

/* Runs every job in flight to its end. */
static void run_pending(struct rb_sim_kmod *k)
{
	while (k->queue && run_round(k))
		;
	/* Cannot happen (a job's in-fence is an earlier job), but never spin or leak. */
	for (struct kjob *job = k->queue; job; job = job->next)
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

	for (const struct kjob *job = k->queue; job; job = job->next)
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
	const struct kbo *tasks = bo_by_token(k, a->task_obj_addr);

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
	fault(k, "unknown core mask 0x%x: the job was never committed and timed out after %u ms",
	      job->core_mask, job->timeout_ms);
	job->status = -ETIMEDOUT;
	job->done = true;
	job->done_ns = job->submit_ns + timeout_ns(job);
}

static int ioctl_submit(struct rb_sim_kmod *k, void *arg)
{
	struct rknpu_submit *a = arg;
	struct kjob *job;
	int err = new_job(k, a, &job);

	if (err)
		return err;
	advance_to(k, atomic_load(&k->now) + k->cost.submit);
	job->submit_ns = atomic_load(&k->now);
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
		run_pending(k);
		advance_to(k, job->done_ns + k->cost.wake);
		a->task_counter = job->task_counter;
		if (!job->status)
			a->hw_elapse_time = (int64_t)job->hw_elapse_ns;
		err = job->status;
	}
	job_put(k, job);
	return err;
}

int rb_sim_kmod_wait(struct rb_sim_kmod *k, int fence_fd, int timeout_ms)
{
	struct kjob *job;
	uint64_t ready;
	int ret;

	pthread_mutex_lock(&k->lock);
	job = fence_job(k, fence_fd);
	if (!job) {
		pthread_mutex_unlock(&k->lock);
		return -EBADF;
	}
	run_pending(k);
	ready = job->done_ns + k->cost.wake;
	if (timeout_ms >= 0 && ready > atomic_load(&k->now) + (uint64_t)timeout_ms * MS_NS) {
		advance_to(k, atomic_load(&k->now) + (uint64_t)timeout_ms * MS_NS);
		ret = -ETIMEDOUT;
	} else {
		advance_to(k, ready);
		ret = job->status;
	}
	pthread_mutex_unlock(&k->lock);
	return ret;
}

int rb_sim_kmod_close_fd(struct rb_sim_kmod *k, int fd)
{
	struct kjob *job;

	pthread_mutex_lock(&k->lock);
	job = fence_job(k, fd);
	if (job) {
		k->fences[fd - FENCE_FD_BASE] = NULL;
		job_put(k, job);
	}
	pthread_mutex_unlock(&k->lock);
	return job ? 0 : -EBADF;
}

/* ---- ACTION and VERSION ---- */

/* The soft reset (§d.1): a 100 ms sleep, then every core's reset lines. */
static void soft_reset(struct rb_sim_kmod *k)
{
	uint64_t end;

	run_pending(k);
	end = atomic_load(&k->now) + COST_RESET_NS;
	reset_all(k);
	for (int c = 0; c < k->cores; c++)
		k->core_free[c] = max_u64(k->core_free[c], end);
	advance_to(k, end);
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

/* As the DRM core does: copy what fits the user's buffer (no terminating NUL) and
 * report the full length, so a caller can ask again with a bigger buffer. */
static void copy_field(char *buf, __kernel_size_t *len, const char *value)
{
	size_t n = strlen(value);
	size_t copy = n < *len ? n : *len;

	if (copy && buf)
		memcpy(buf, value, copy);
	*len = n;
}

static int ioctl_version(struct rb_sim_kmod *k, void *arg)
{
	struct drm_version *v = arg;

	(void)k;
	v->version_major = DRV_MAJOR;
	v->version_minor = DRV_MINOR;
	v->version_patchlevel = DRV_PATCH;
	copy_field(v->name, &v->name_len, RKNPU_DRIVER_NAME);
	copy_field(v->date, &v->date_len, DRV_DATE);
	copy_field(v->desc, &v->desc_len, DRV_DESC);
	return 0;
}

/* ---- dispatch ---- */

typedef int kmod_ioctl_fn(struct rb_sim_kmod *k, void *arg);

struct kmod_ioctl {
	unsigned long cmd;
	kmod_ioctl_fn *fn;
};

static const struct kmod_ioctl version_ioctl = {DRM_IOCTL_VERSION, ioctl_version};

static const struct kmod_ioctl drv_ioctls[] = {
    [RKNPU_NR_ACTION] = {DRM_IOCTL_RKNPU_ACTION, ioctl_action},
    [RKNPU_NR_SUBMIT] = {DRM_IOCTL_RKNPU_SUBMIT, ioctl_submit},
    [RKNPU_NR_MEM_CREATE] = {DRM_IOCTL_RKNPU_MEM_CREATE, ioctl_mem_create},
    [RKNPU_NR_MEM_MAP] = {DRM_IOCTL_RKNPU_MEM_MAP, ioctl_mem_map},
    [RKNPU_NR_MEM_DESTROY] = {DRM_IOCTL_RKNPU_MEM_DESTROY, ioctl_mem_destroy},
    [RKNPU_NR_MEM_SYNC] = {DRM_IOCTL_RKNPU_MEM_SYNC, ioctl_mem_sync},
};

/* The DRM core looks at the number only (not the type or size); unknown: -EINVAL. Of
 * the DRM core's own ioctls only VERSION is emulated. */
static const struct kmod_ioctl *find_ioctl(unsigned long request)
{
	unsigned nr = _IOC_NR(request);

	if (nr == _IOC_NR(DRM_IOCTL_VERSION))
		return &version_ioctl;
	if (nr >= DRM_COMMAND_BASE &&
	    nr - DRM_COMMAND_BASE < sizeof(drv_ioctls) / sizeof(drv_ioctls[0]))
		return &drv_ioctls[nr - DRM_COMMAND_BASE];
	return NULL;
}

/* Copies in the bytes the caller's size gives when both sides say "in", out likewise,
 * through a zeroed kernel buffer as large as the larger of the two structs. */
int rb_sim_kmod_ioctl(struct rb_sim_kmod *k, unsigned long request, void *arg)
{
	const struct kmod_ioctl *io = find_ioctl(request);
	unsigned char stack[128];
	size_t in, out, ksize;
	void *kbuf = stack;
	int ret;

	if (!io)
		return -EINVAL;
	in = out = _IOC_SIZE(request);
	if (!(request & io->cmd & IOC_IN))
		in = 0;
	if (!(request & io->cmd & IOC_OUT))
		out = 0;
	ksize = max_u64(max_u64(in, out), _IOC_SIZE(io->cmd));
	if ((in || out) && !arg)
		return -EFAULT;
	if (ksize > sizeof(stack) && !(kbuf = malloc(ksize)))
		return -ENOMEM;
	memset(kbuf, 0, ksize);
	if (in)
		memcpy(kbuf, arg, in);
	pthread_mutex_lock(&k->lock);
	ret = io->fn(k, kbuf);
	pthread_mutex_unlock(&k->lock);
	if (out)
		memcpy(arg, kbuf, out);
	if (kbuf != stack)
		free(kbuf);
	return ret;
}

/* ---- lifecycle ---- */

static uint64_t ns(double v)
{
	return (uint64_t)llround(v);
}

/* The NPU accepted the profile (rb_sim_npu_new), so it is there. */
static void set_costs(struct rb_sim_kmod *k, const struct rb_soc_profile *soc)
{
	k->cost.submit = ns(soc->submit_ioctl_ns);
	k->cost.commit = ns(soc->submit_commit_ns);
	k->cost.irq = ns(soc->submit_irq_ns);
	k->cost.wake = ns(soc->submit_wake_ns);
	k->freq_hz = (uint64_t)llround(soc->clock_mhz * 1e6);
}

struct rb_sim_kmod *rb_sim_kmod_rknpu_new(const struct rb_sim_config *cfg)
{
	struct rb_sim_kmod *k;

	if (cfg->cores < 1 || cfg->cores > RB_SIM_MAX_CORES) {
		rb_set_error(-EINVAL, "emulator: %d NPU cores asked for; RK3588 has 3 (1 to 3)",
			     cfg->cores);
		errno = EINVAL;
		return NULL;
	}
	k = calloc(1, sizeof(*k));
	if (!k) {
		rb_set_error(-ENOMEM, "cannot create the emulated rknpu kernel: out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&k->lock, NULL);
	k->mem_budget = cfg->mem_budget ? cfg->mem_budget : DEFAULT_BUDGET;
	k->next_token = OBJ_TOKEN_START;
	k->next_offset = MMAP_OFFSET_START;
	k->iommu.map = iommu_map;
	k->iommu.ctx = k;
	rb_set_error(0, "%s", "");
	k->npu = rb_sim_npu_new(cfg, &k->iommu);
	if (!k->npu) {
		int err = errno ? errno : ENOMEM;
		char why[256];

		/* the NPU says what is wrong with the configuration, if it was that */
		snprintf(why, sizeof(why), "%s",
			 *rb_last_error() ? rb_last_error() : strerror(err));
		pthread_mutex_destroy(&k->lock);
		free(k);
		rb_set_error(-err, "cannot create the emulated NPU: %s", why);
		errno = err;
		return NULL;
	}
	k->cores = rb_sim_npu_cores(k->npu);
	set_costs(k, cfg->soc ? cfg->soc : rb_soc_default());
	return k;
}

static void free_bos(struct rb_sim_kmod *k, struct bo_list *l)
{
	while (l->n)
		bo_free(k, l->v[--l->n]);
	free(l->v);
}

void rb_sim_kmod_free(struct rb_sim_kmod *k)
{
	struct kjob *job, *next;

	if (!k)
		return;
	for (job = k->queue; job; job = next) {
		next = job->next;
		job_put(k, job);
	}
	for (size_t i = 0; i < k->nfences; i++)
		job_put(k, k->fences[i]);
	free(k->fences);
	free_bos(k, &k->live);
	free_bos(k, &k->zombies);
	rb_sim_npu_free(k->npu);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

uint64_t rb_sim_kmod_now_ns(const struct rb_sim_kmod *k)
{
	return atomic_load(&k->now);
}

const char *rb_sim_kmod_last_fault(const struct rb_sim_kmod *k)
{
	return k->last_fault;
}

void rb_sim_kmod_set_mmio_trace(struct rb_sim_kmod *k, rb_sim_mmio_trace_fn *fn, void *ctx)
{
	pthread_mutex_lock(&k->lock);
	k->trace = fn;
	k->trace_ctx = ctx;
	pthread_mutex_unlock(&k->lock);
}
