/* The emulator of the RK3588 NPU and of its kernel drivers.
 *
 * Layers, each talking only to the next:
 *   emulated kernel (kmod_rknpu.c)  implements the vendor ioctl ABI: buffer objects in a
 *                                   32-bit NPU address space, the commit sequence of
 *                                   npu-facts §a.3 written into MMIO, interrupts, fences
 *   emulated NPU (npu.c, hw*.c)     per-core MMIO and register groups, the PC fetching
 *                                   regcmd words, CNA/CORE/DPU execution, faults
 *   IOMMU (a callback)              NPU address -> host memory of a buffer object; an
 *                                   access outside every mapped buffer is a fault
 * Time is virtual and deterministic: jobs in flight together run together at the next
 * wait, sharing DDR bandwidth, timed by the model of timing.h on the numbers of a
 * hardware profile (soc.h). Every time it reports is modeled, never measured. */
#ifndef RB_SIM_SIM_H
#define RB_SIM_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/soc.h"

#define RB_SIM_MAX_CORES RB_HW_MAX_CORES

struct rb_soc_profile;

struct rb_sim_config {
	int cores;           /* 1..3, at most the profile's; RK3588 has 3 */
	int threads;         /* host threads for execution; <= 0: online CPUs */
	uint64_t mem_budget; /* most bytes of buffer objects at once; 0: 4 GiB */
	bool model_only;     /* run programs for their timing only: every check and
				fault as usual, but no arithmetic (C is not written) */
	/* The NPU as seen under the mainline rocket kernel (set by its constructor): a
	 * task that does not run DPU_RDMA hangs, as RUS reports ("MRDMA trap", §a.6;
	 * why is open question 6, so this models the report, not a cause). */
	bool rdma_required;
	/* The CPU's cache (on by default; off under model_only, where no data moves): a
	 * cached buffer object has a CPU view, which mmap gives, apart from the memory the
	 * NPU reaches. CPU writes reach the NPU only through the sync the driver asks for
	 * (rknpu MEM_SYNC to the device, rocket FINI_BO) and NPU writes reach the CPU only
	 * through the matching one (MEM_SYNC from the device, PREP_BO), so a program that
	 * misses one reads stale data, as on a board. Objects of 16 MiB or more stay
	 * coherent (a second copy of them would double the emulator's memory; the
	 * runner's syncs do not depend on the size). The kernels' own reads of a buffer
	 * (rknpu's task descriptors) go through the CPU's view, as a kernel mapping shares
	 * the CPU's caches. */
	bool cpu_cache;
	/* The vendor driver's cleanup on non-blocking submits (on by default): a job whose
	 * age in µs has reached its timeout in ms is dropped (kmod_rknpu.c). Off only where
	 * the emulator predicts the time of runs that completed on a board (calibrate). */
	bool vendor_cleanup;
	/* The hardware profile the timing model and the kernel's fixed costs come from
	 * (soc.h); NULL: the embedded configs/soc/rk3588.json. Copied at creation. */
	const struct rb_soc_profile *soc;
};

void rb_sim_config_init(struct rb_sim_config *cfg);

/* ---- IOMMU: how the NPU reaches memory ---- */

struct rb_sim_iommu {
	/* Host address of [iova, iova + len) if it lies inside one mapped buffer, else
	 * NULL (the NPU reports an IOMMU fault). */
	void *(*map)(void *ctx, int core, uint32_t iova, uint64_t len);
	void *ctx;
};

/* ---- the emulated NPU ---- */

enum rb_sim_status {
	RB_SIM_IDLE = 0,    /* not started */
	RB_SIM_DONE,        /* every task completed, DPU interrupt raised */
	RB_SIM_HANG,        /* the core stopped without an interrupt: the kernel times out */
	RB_SIM_IOMMU_FAULT, /* a DMA outside every mapped buffer */
};

struct rb_sim_core_result {
	enum rb_sim_status status;
	uint32_t tasks_done;
	uint64_t elapsed_ns; /* modeled time from the op-enable kick to the interrupt */
	char reason[256];    /* why it hung or faulted, naming the task and register */
};

struct rb_sim_npu;

struct rb_sim_npu *rb_sim_npu_new(const struct rb_sim_config *cfg,
				  const struct rb_sim_iommu *iommu);
void rb_sim_npu_free(struct rb_sim_npu *npu);
int rb_sim_npu_cores(const struct rb_sim_npu *npu);

/* MMIO of one core: offsets within the core's 64 KiB register space (PC 0x0000,
 * CNA 0x1000, ... GLOBAL 0xF000). Writing PC OPERATION_ENABLE = 1 latches a start. */
void rb_sim_npu_mmio_write(struct rb_sim_npu *npu, int core, uint32_t offset, uint32_t value);
uint32_t rb_sim_npu_mmio_read(struct rb_sim_npu *npu, int core, uint32_t offset);

/* Runs every core of `core_mask` that was started, together in virtual time, until
 * each completes, hangs or faults; results per core index. The cores' tasks share
 * DDR bandwidth (timing.h); start_ns gives each core's kick on one virtual clock
 * (NULL: all at once), elapsed_ns is counted from it. */
int rb_sim_npu_run_at(struct rb_sim_npu *npu, uint32_t core_mask,
		      const uint64_t start_ns[RB_SIM_MAX_CORES],
		      struct rb_sim_core_result results[RB_SIM_MAX_CORES]);
int rb_sim_npu_run(struct rb_sim_npu *npu, uint32_t core_mask,
		   struct rb_sim_core_result results[RB_SIM_MAX_CORES]);
/* Soft reset of one core (registers to reset values, state idle). */
void rb_sim_npu_reset(struct rb_sim_npu *npu, int core);

/* ---- the emulated kernels: vendor rknpu 0.9.8 and mainline rocket ---- */

struct rb_sim_kmod;

struct rb_sim_kmod *rb_sim_kmod_rknpu_new(const struct rb_sim_config *cfg);
/* The emulated mainline rocket kernel (kmod_rocket.c): the same generic functions below
 * serve both kernels. Its wait and close_fd answer -EBADF (rocket hands out no fds). */
struct rb_sim_kmod *rb_sim_kmod_rocket_new(const struct rb_sim_config *cfg);
void rb_sim_kmod_free(struct rb_sim_kmod *kmod);
int rb_sim_kmod_ioctl(struct rb_sim_kmod *kmod, unsigned long request, void *arg);
int rb_sim_kmod_mmap(struct rb_sim_kmod *kmod, size_t len, uint64_t offset, void **addr);
int rb_sim_kmod_munmap(struct rb_sim_kmod *kmod, void *addr, size_t len);
int rb_sim_kmod_wait(struct rb_sim_kmod *kmod, int fence_fd, int timeout_ms);
/* Closes a number the kernel handed out for an fd: a fence (rknpu) or a dma-buf (PRIME,
 * both kernels). */
int rb_sim_kmod_close_fd(struct rb_sim_kmod *kmod, int fd);
/* Files: every open of the device node is a file of its own (the DRM core's
 * struct drm_file): its own GEM handles and, on rocket, its own NPU address space and
 * scheduler entity, so jobs of different files run on different cores at once. File 0
 * is open from the start, and the calls above without a file act on it; the kernel
 * lives until rb_sim_kmod_free, whichever files are open. file_open: the new file's
 * number or -EMFILE; file_close: its handles go (GEM_CLOSE each) and its queued jobs
 * still run; file_mmap: -EACCES for an object the file has no handle to. Buffers move
 * between files through PRIME (DRM_IOCTL_PRIME_HANDLE_TO_FD / FD_TO_HANDLE, the fd a
 * number of the kernel's): an import is a handle to the same object, with no NPU
 * address in the importer (upstream maps nothing there). */
int rb_sim_kmod_file_open(struct rb_sim_kmod *kmod);
void rb_sim_kmod_file_close(struct rb_sim_kmod *kmod, int file);
int rb_sim_kmod_file_ioctl(struct rb_sim_kmod *kmod, int file, unsigned long request, void *arg);
int rb_sim_kmod_file_mmap(struct rb_sim_kmod *kmod, int file, size_t len, uint64_t offset,
			  void **addr);
/* The virtual clock: advanced by the modeled time of the jobs run (timing.h) and of
 * the kernel's fixed costs (submit, commit, interrupt, wake-up: the profile's
 * submit.* numbers). */
uint64_t rb_sim_kmod_now_ns(const struct rb_sim_kmod *kmod);
/* A thread group: `threads` threads are about to block in SUBMIT at once (one per core,
 * as the seed backend does); the kernel runs their jobs together in virtual time (see
 * struct kmod_group in kmod_internal.h). Each member calls leave when it will submit no
 * more; end closes the group. -EBUSY while a group is open, -EOPNOTSUPP for a kernel
 * without blocking submits (rocket). A board needs none of this: its cores run
 * concurrently by themselves. */
int rb_sim_kmod_group_begin(struct rb_sim_kmod *kmod, unsigned threads);
void rb_sim_kmod_group_leave(struct rb_sim_kmod *kmod);
void rb_sim_kmod_group_end(struct rb_sim_kmod *kmod);
/* A user of the kernel spends ns of host time between its calls (packing data, another
 * process's work): the clock moves on while the jobs in flight keep their own times,
 * as on a board. For tests of what happens to a job while time passes. */
void rb_sim_kmod_spend(struct rb_sim_kmod *kmod, uint64_t ns);
/* The longest any job of this kernel ran, from its first kick (commit) to its end,
 * modeled: what the kernel's job timeout is measured against. */
uint64_t rb_sim_kmod_longest_job_ns(const struct rb_sim_kmod *kmod);
/* Why the last job of this kernel failed (hang, IOMMU fault): "" if none. Like the
 * kernel log (dmesg) on a board. */
const char *rb_sim_kmod_last_fault(const struct rb_sim_kmod *kmod);
/* The kernel log: every fault and reset, one line each, stamped with the virtual clock
 * like dmesg; the oldest lines go when it is full. */
const char *rb_sim_kmod_log(const struct rb_sim_kmod *kmod);
/* Debug and test hook: called with every MMIO write the kernel makes, after the NPU got
 * it (like tracing writel() on a board); fn NULL turns it off. */
typedef void rb_sim_mmio_trace_fn(void *ctx, int core, uint32_t offset, uint32_t value);
void rb_sim_kmod_set_mmio_trace(struct rb_sim_kmod *kmod, rb_sim_mmio_trace_fn *fn, void *ctx);

#endif
