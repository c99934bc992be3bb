/* What the emulated kernels (kmod_rknpu.c: vendor rknpu; kmod_rocket.c: mainline rocket)
 * share, in kmod_common.c: one piece of code per idea.
 *  - the DRM core's side: ioctl dispatch with the copy in and out of the bytes both
 *    sides know, DRM_IOCTL_VERSION's string fields, GEM-like buffer objects with handles
 *    and fake mmap offsets in a 32-bit NPU address space, mmap and munmap, the IOMMU
 *    the NPU reaches them through, a memory budget;
 *  - the virtual clock, the fault log ("dmesg"), traced MMIO, the profile's fixed costs;
 *  - the scheduler's rounds: every core that has work commits its next kick, the cores
 *    run together in one rb_sim_npu_run_at (sharing DDR bandwidth), then each core's
 *    completion is handled and jobs that ended are retired.
 * Each kernel fills a struct kmod_ops with what differs (its ioctls, commit sequence,
 * completion check, fences) and keeps its own state behind `drv`.
 * Locking: every entry point in sim.h takes `lock`; ops run with it held. */
#ifndef RB_SIM_KMOD_INTERNAL_H
#define RB_SIM_KMOD_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <drm.h>

#include "core/error.h"
#include "hw/regs.h"
#include "sim/sim.h"

#define KMOD_PAGE_BYTES 4096u
#define KMOD_IOVA_END   (UINT64_C(1) << 32)
#define KMOD_MS_NS      UINT64_C(1000000)

/* Each open of the device node is a file (the DRM core's struct drm_file): its own GEM
 * handles and, on rocket, its own NPU address space (an IOMMU domain per fd, upstream's
 * rocket_open) and its own scheduler entity. File 0 is open from the start. */
#define KMOD_MAX_FILES 8

/* A GEM object. It lives while a file has a handle to it, a dma-buf of it is open or a
 * job uses it. Its NPU range is in one address space (`space`): on rocket the one of
 * the file that created it, so a file that imported it (PRIME) has a handle but no NPU
 * address; on rknpu the device's one (file 0's), shared by every file. */
struct kbo {
	uint32_t handles[KMOD_MAX_FILES]; /* its handle in each file, 0: none */
	int space;
	unsigned exports; /* open dma-bufs */
	unsigned jobs;    /* queued or running jobs that use it */
	uint32_t flags;
	uint32_t iova;
	unsigned maps; /* live user mappings */
	uint64_t size; /* page-aligned */
	uint64_t obj_addr;
	uint64_t mmap_offset; /* 0 until mapped */
	uint64_t fence_ns;    /* rocket: when the last job using it ends */
	void *mem;            /* what the NPU reaches (DRAM) */
	void *cpu;            /* the CPU's view when cached (rb_sim_config.cpu_cache), else NULL */
};

struct bo_list {
	struct kbo **v;
	size_t n, cap;
};

struct kmod_file {
	bool open;
	struct bo_list domain; /* the objects its NPU address space maps, sorted by iova */
};

/* An open dma-buf (PRIME export): the number handed out stands for its fd. */
struct kmod_dmabuf {
	int fd;
	struct kbo *bo;
};

/* Per-submit costs in ns, from the hardware profile's submit.* (soc.h). */
struct kmod_costs {
	uint64_t submit, commit, irq, wake;
};

typedef int kmod_ioctl_fn(struct rb_sim_kmod *k, void *arg);

struct kmod_ioctl {
	unsigned long cmd;
	kmod_ioctl_fn *fn;
};

/* What DRM_IOCTL_VERSION answers. */
struct kmod_version {
	int major, minor, patch;
	const char *name, *date, *desc;
};

struct kmod_ops {
	const char *name; /* "rknpu", "rocket": for messages */
	/* The driver's ioctl with number DRM_COMMAND_BASE + nr, NULL if none. */
	const struct kmod_ioctl *(*find_ioctl)(unsigned nr);
	struct kmod_version version; /* DRM_IOCTL_VERSION, served by the DRM core */
	bool space_per_file;         /* an NPU address space per fd (rocket), else one per device */
	/* BOs placed bottom-up from address 0 (rocket: drm_mm from the aperture start, where
	 * 0 is a valid address); else top-down below 4 GiB, page 0 never handed out */
	bool iova_from_zero;
	/* The BO flag that makes a BO cached (rknpu RKNPU_MEM_CACHEABLE); 0: every BO is
	 * (rocket's shmem pages) */
	uint32_t cached_flag;
	int (*wait)(struct rb_sim_kmod *k, int fence_fd, int timeout_ms);
	int (*close_fd)(struct rb_sim_kmod *k, int fd);
	/* A round: commit the next kick on `core` (1 kicked, 0 there was work but it
	 * failed before the kick, -1 nothing to do); handle its end (true: reset the NPU);
	 * retire the jobs that ended. */
	int (*commit)(struct rb_sim_kmod *k, int core, uint64_t *kick_ns);
	bool (*complete)(struct rb_sim_kmod *k, int core, const struct rb_sim_core_result *r,
			 uint64_t kick_ns);
	void (*retire)(struct rb_sim_kmod *k);
	/* A thread group's round (struct kmod_group): runs every queued job to its end
	 * (rknpu's blocking submits) or queues the group's staged submits (rocket, whose
	 * SUBMIT returns before the job runs). NULL: no thread groups. */
	void (*run_all)(struct rb_sim_kmod *k);
	void (*release)(struct rb_sim_kmod *k); /* frees `drv` */
};

/* A thread group (rb_sim_kmod_group_begin): on a board, threads blocked in SUBMIT on
 * different cores run at once. The emulator runs a job on the thread that submitted it,
 * so a blocking submit of a group member waits (on `cond`) until every member still in
 * the group is blocked too; then all queued jobs run together, sharing DDR bandwidth,
 * and each member wakes at its own job's end on its own virtual clock (starting at
 * start_ns). The set of jobs each run gets is therefore the same run after run. */
struct kmod_group {
	unsigned expected, blocked, left;
	uint64_t start_ns;
	uint64_t serial; /* tells a member's clock from a stale one of an earlier group */
	pthread_cond_t cond;
};

struct rb_sim_kmod {
	const struct kmod_ops *ops;
	void *drv; /* the driver's own state */
	pthread_mutex_t lock;
	struct kmod_costs cost;
	uint64_t freq_hz; /* the profile's clock */
	struct rb_sim_npu *npu;
	struct rb_sim_iommu iommu;
	int cores;
	struct bo_list live;    /* every live object */
	struct bo_list zombies; /* released, still mmapped */
	struct kmod_file files[KMOD_MAX_FILES];
	int cur_file;                      /* the file whose ioctl is running */
	int core_domain[RB_SIM_MAX_CORES]; /* the address space each core's IOMMU has
					      attached: a file (rocket: its job's) */
	struct kmod_dmabuf dmabufs[16];
	int next_dmabuf;
	uint64_t mem_used, mem_budget;
	bool cpu_cache;      /* rb_sim_config.cpu_cache, and not model_only */
	bool vendor_cleanup; /* rb_sim_config.vendor_cleanup */
	uint64_t next_token, next_offset;
	_Atomic uint64_t now; /* the latest time any thread reached */
	struct kmod_group group;
	uint64_t longest_job_ns; /* the longest job from its first kick to its end */
	char last_fault[512];
	char log[8192]; /* every fault and reset, a line each (oldest dropped) */
	size_t log_len;
	rb_sim_mmio_trace_fn *trace;
	void *trace_ctx;
};

struct rb_sim_kmod *rb_kmod_new(const struct rb_sim_config *cfg, const struct kmod_ops *ops);

static inline uint64_t kmod_max(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

void rb_kmod_advance_to(struct rb_sim_kmod *k, uint64_t t);
/* Whether a thread group (rb_sim_kmod_group_begin) is open. */
bool rb_kmod_in_group(const struct rb_sim_kmod *k);
/* The calling thread's virtual clock: its own inside a thread group, else `now`. */
uint64_t rb_kmod_thread_now(const struct rb_sim_kmod *k);
/* Moves the calling thread's clock (and `now`) to t if that is later. */
void rb_kmod_thread_advance(struct rb_sim_kmod *k, uint64_t t);
/* A blocking submit's wait until *done: in a thread group, as described at struct
 * kmod_group; outside one, runs every queued job at once. */
void rb_kmod_block_until(struct rb_sim_kmod *k, const bool *done);
/* Records why a job failed (rb_sim_kmod_last_fault) and logs it. */
void rb_kmod_fault(struct rb_sim_kmod *k, const char *fmt, ...) RB_PRINTF(2, 3);
/* Appends a line to the kernel log, stamped with the virtual time like dmesg. */
void rb_kmod_log(struct rb_sim_kmod *k, const char *fmt, ...) RB_PRINTF(2, 3);
void rb_kmod_wr(struct rb_sim_kmod *k, int core, enum rb_reg_id reg, uint32_t value);
uint32_t rb_kmod_rd(struct rb_sim_kmod *k, int core, enum rb_reg_id reg);
/* CNA/CORE S_POINTER: both ping-pong enables, pointer mode, the core index in bit 28+. */
uint32_t rb_kmod_s_pointer(int core);
/* PC TASK_CON: ((0x6 | pingpong) << 12) | tasks (§a.3). */
uint32_t rb_kmod_task_con(bool pingpong, uint32_t tasks);

/* Buffer objects of the file whose ioctl runs (cur_file): a page-aligned object placed
 * in the file's NPU address space (kmod_ops.iova_from_zero), with the file's lowest
 * free handle; -EINVAL/-ENOMEM. */
int rb_kmod_bo_create(struct rb_sim_kmod *k, uint64_t size, uint32_t flags, struct kbo **out);
/* The CPU's view of the object: what mmap gives and the kernel's own mapping reads. */
void *rb_kmod_bo_cpu(const struct kbo *bo);
/* The CPU cache's sync of [offset, offset + len) (in range): to_device writes the CPU's
 * view back to memory, else the CPU's view is read again from memory. Nothing for an
 * object that is not cached. */
void rb_kmod_bo_sync(struct kbo *bo, uint64_t offset, uint64_t len, bool to_device);
/* The object a handle of cur_file names, NULL if none. */
struct kbo *rb_kmod_bo_by_handle(const struct rb_sim_kmod *k, uint32_t handle);
struct kbo *rb_kmod_bo_by_token(const struct rb_sim_kmod *k, uint64_t obj_addr);
/* The BO's fake mmap offset, made on first use. */
uint64_t rb_kmod_bo_mmap_offset(struct rb_sim_kmod *k, struct kbo *bo);
/* GEM_CLOSE of a handle of cur_file. When no handle, dma-buf or job holds the object
 * any more, its NPU range goes; its memory stays while it is mmapped. */
int rb_kmod_bo_destroy(struct rb_sim_kmod *k, uint32_t handle);
/* A job holds (get) and lets go of (put) an object, as upstream's jobs hold references. */
void rb_kmod_bo_get(struct kbo *bo);
void rb_kmod_bo_put(struct rb_sim_kmod *k, struct kbo *bo);

/* Runs one round (see the top); false if no core had anything to do. */
bool rb_kmod_run_round(struct rb_sim_kmod *k);
void rb_kmod_reset_all(struct rb_sim_kmod *k);

#endif
