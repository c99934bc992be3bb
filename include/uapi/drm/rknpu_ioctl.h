/* The vendor rknpu driver's ioctl ABI (driver 0.9.x), written from the documented
 * layout in npu-facts.md §d.1 (the vendor header itself is GPL-2.0 and not used).
 * Shared by the userspace driver (src/dev/rknpu.c) and the emulated kernel
 * (src/sim/kmod_rknpu.c), so both sides agree by construction and the static asserts
 * below pin every size and offset to the documented ABI. */
#ifndef RB_UAPI_DRM_RKNPU_IOCTL_H
#define RB_UAPI_DRM_RKNPU_IOCTL_H

#include <stddef.h>
#include <stdint.h>

#include <drm.h>

#define RKNPU_DRIVER_NAME "rknpu"

/* ioctl numbers: DRM_COMMAND_BASE + nr, type 'd', all _IOWR. */
#define RKNPU_NR_ACTION      0x00
#define RKNPU_NR_SUBMIT      0x01
#define RKNPU_NR_MEM_CREATE  0x02
#define RKNPU_NR_MEM_MAP     0x03
#define RKNPU_NR_MEM_DESTROY 0x04
#define RKNPU_NR_MEM_SYNC    0x05

/* Memory flags (e_rknpu_mem_type). */
#define RKNPU_MEM_NON_CONTIGUOUS (1u << 0)
#define RKNPU_MEM_CACHEABLE      (1u << 1)
#define RKNPU_MEM_WRITE_COMBINE  (1u << 2)
#define RKNPU_MEM_KERNEL_MAPPING (1u << 3)
#define RKNPU_MEM_IOMMU          (1u << 4)
#define RKNPU_MEM_ZEROING        (1u << 5)
#define RKNPU_MEM_SECURE         (1u << 6)
#define RKNPU_MEM_DMA32          (1u << 7) /* 0.9.x meaning; older headers: NON_DMA32 */
#define RKNPU_MEM_TRY_ALLOC_SRAM (1u << 8)

/* Memory sync directions. */
#define RKNPU_MEM_SYNC_TO_DEVICE   (1u << 0)
#define RKNPU_MEM_SYNC_FROM_DEVICE (1u << 1)

/* Job flags (e_rknpu_job_mode). */
#define RKNPU_JOB_PC        (1u << 0)
#define RKNPU_JOB_NONBLOCK  (1u << 1)
#define RKNPU_JOB_PINGPONG  (1u << 2)
#define RKNPU_JOB_FENCE_IN  (1u << 3)
#define RKNPU_JOB_FENCE_OUT (1u << 4)

/* The interrupt bits the driver clears (RKNPU_INT_CLEAR, §a.2). */
#define RKNPU_INT_CLEAR 0x1ffffu

/* Action codes. */
enum rknpu_action_code {
	RKNPU_GET_HW_VERSION = 0,
	RKNPU_GET_DRV_VERSION = 1,
	RKNPU_GET_FREQ = 2,
	RKNPU_SET_FREQ = 3,
	RKNPU_GET_VOLT = 4,
	RKNPU_SET_VOLT = 5,
	RKNPU_ACT_RESET = 6,
	RKNPU_GET_BW_PRIORITY = 7,
	RKNPU_SET_BW_PRIORITY = 8,
	RKNPU_GET_BW_EXPECT = 9,
	RKNPU_SET_BW_EXPECT = 10,
	RKNPU_GET_BW_TW = 11,
	RKNPU_SET_BW_TW = 12,
	RKNPU_ACT_CLR_TOTAL_RW_AMOUNT = 13,
	RKNPU_GET_DT_WR_AMOUNT = 14,
	RKNPU_GET_DT_RD_AMOUNT = 15,
	RKNPU_GET_WT_RD_AMOUNT = 16,
	RKNPU_GET_TOTAL_RW_AMOUNT = 17,
	RKNPU_GET_IOMMU_EN = 18,
	RKNPU_SET_PROC_NICE = 19,
	RKNPU_POWER_ON = 20,
	RKNPU_POWER_OFF = 21,
	RKNPU_GET_TOTAL_SRAM_SIZE = 22,
	RKNPU_GET_FREE_SRAM_SIZE = 23,
	RKNPU_GET_IOMMU_DOMAIN_ID = 24,
	RKNPU_SET_IOMMU_DOMAIN_ID = 25,
};

struct rknpu_action {
	uint32_t flags; /* action code */
	uint32_t value; /* in/out */
};

struct rknpu_mem_create {
	uint32_t handle; /* out; zero it: a non-zero handle returns that object */
	uint32_t flags;
	uint64_t size;     /* in; page-aligned on return */
	uint64_t obj_addr; /* out; opaque kernel object token */
	uint64_t dma_addr; /* out; NPU address (IOVA) */
	uint64_t sram_size;
	int32_t iommu_domain_id;
	uint32_t reserved;
};

struct rknpu_mem_map {
	uint32_t handle;
	uint32_t reserved;
	uint64_t offset; /* out; fake mmap offset */
};

struct rknpu_mem_destroy {
	uint32_t handle;
	uint32_t reserved;
	uint64_t obj_addr;
};

struct rknpu_mem_sync {
	uint32_t flags;
	uint32_t reserved;
	uint64_t obj_addr;
	uint64_t offset;
	uint64_t size;
};

/* One task descriptor in the task BO; packed, 40 bytes. */
struct rknpu_task {
	uint32_t flags;
	uint32_t op_idx;
	uint32_t enable_mask;
	uint32_t int_mask;
	uint32_t int_clear;
	uint32_t int_status; /* written back: status of the last task */
	uint32_t regcfg_amount;
	uint32_t regcfg_offset;
	uint64_t regcmd_addr;
} __attribute__((packed));

struct rknpu_subcore_task {
	uint32_t task_start;
	uint32_t task_number;
};

#define RKNPU_MAX_SUBCORE_TASKS 5

struct rknpu_submit {
	uint32_t flags;
	uint32_t timeout; /* ms */
	uint32_t task_start;
	uint32_t task_number;
	uint32_t task_counter; /* out */
	int32_t priority;
	uint64_t task_obj_addr;
	uint32_t iommu_domain_id;
	uint32_t reserved;
	uint64_t task_base_addr;
	int64_t hw_elapse_time; /* out, ns */
	uint32_t core_mask;
	int32_t fence_fd;
	struct rknpu_subcore_task subcore_task[RKNPU_MAX_SUBCORE_TASKS];
};

#define DRM_IOCTL_RKNPU_ACTION DRM_IOWR(DRM_COMMAND_BASE + RKNPU_NR_ACTION, struct rknpu_action)
#define DRM_IOCTL_RKNPU_SUBMIT DRM_IOWR(DRM_COMMAND_BASE + RKNPU_NR_SUBMIT, struct rknpu_submit)
#define DRM_IOCTL_RKNPU_MEM_CREATE                                                                 \
	DRM_IOWR(DRM_COMMAND_BASE + RKNPU_NR_MEM_CREATE, struct rknpu_mem_create)
#define DRM_IOCTL_RKNPU_MEM_MAP DRM_IOWR(DRM_COMMAND_BASE + RKNPU_NR_MEM_MAP, struct rknpu_mem_map)
#define DRM_IOCTL_RKNPU_MEM_DESTROY                                                                \
	DRM_IOWR(DRM_COMMAND_BASE + RKNPU_NR_MEM_DESTROY, struct rknpu_mem_destroy)
#define DRM_IOCTL_RKNPU_MEM_SYNC                                                                   \
	DRM_IOWR(DRM_COMMAND_BASE + RKNPU_NR_MEM_SYNC, struct rknpu_mem_sync)

/* The documented ABI (§d.1): sizes, offsets and the ioctl numbers strace shows. */
_Static_assert(sizeof(struct rknpu_action) == 8, "rknpu_action size");
_Static_assert(sizeof(struct rknpu_mem_create) == 48, "rknpu_mem_create size");
_Static_assert(offsetof(struct rknpu_mem_create, size) == 8, "mem_create.size");
_Static_assert(offsetof(struct rknpu_mem_create, obj_addr) == 16, "mem_create.obj_addr");
_Static_assert(offsetof(struct rknpu_mem_create, dma_addr) == 24, "mem_create.dma_addr");
_Static_assert(offsetof(struct rknpu_mem_create, sram_size) == 32, "mem_create.sram_size");
_Static_assert(offsetof(struct rknpu_mem_create, iommu_domain_id) == 40, "mem_create.domain");
_Static_assert(sizeof(struct rknpu_mem_map) == 16, "rknpu_mem_map size");
_Static_assert(offsetof(struct rknpu_mem_map, offset) == 8, "mem_map.offset");
_Static_assert(sizeof(struct rknpu_mem_destroy) == 16, "rknpu_mem_destroy size");
_Static_assert(offsetof(struct rknpu_mem_destroy, obj_addr) == 8, "mem_destroy.obj_addr");
_Static_assert(sizeof(struct rknpu_mem_sync) == 32, "rknpu_mem_sync size");
_Static_assert(offsetof(struct rknpu_mem_sync, obj_addr) == 8, "mem_sync.obj_addr");
_Static_assert(offsetof(struct rknpu_mem_sync, offset) == 16, "mem_sync.offset");
_Static_assert(offsetof(struct rknpu_mem_sync, size) == 24, "mem_sync.size");
_Static_assert(sizeof(struct rknpu_task) == 40, "rknpu_task size");
_Static_assert(offsetof(struct rknpu_task, int_status) == 20, "task.int_status");
_Static_assert(offsetof(struct rknpu_task, regcfg_amount) == 24, "task.regcfg_amount");
_Static_assert(offsetof(struct rknpu_task, regcmd_addr) == 32, "task.regcmd_addr");
_Static_assert(sizeof(struct rknpu_subcore_task) == 8, "rknpu_subcore_task size");
_Static_assert(sizeof(struct rknpu_submit) == 104, "rknpu_submit size");
_Static_assert(offsetof(struct rknpu_submit, task_counter) == 16, "submit.task_counter");
_Static_assert(offsetof(struct rknpu_submit, priority) == 20, "submit.priority");
_Static_assert(offsetof(struct rknpu_submit, task_obj_addr) == 24, "submit.task_obj_addr");
_Static_assert(offsetof(struct rknpu_submit, iommu_domain_id) == 32, "submit.domain");
_Static_assert(offsetof(struct rknpu_submit, task_base_addr) == 40, "submit.task_base_addr");
_Static_assert(offsetof(struct rknpu_submit, hw_elapse_time) == 48, "submit.hw_elapse_time");
_Static_assert(offsetof(struct rknpu_submit, core_mask) == 56, "submit.core_mask");
_Static_assert(offsetof(struct rknpu_submit, fence_fd) == 60, "submit.fence_fd");
_Static_assert(offsetof(struct rknpu_submit, subcore_task) == 64, "submit.subcore_task");
_Static_assert(DRM_IOCTL_RKNPU_ACTION == 0xC0086440u, "ACTION number");
_Static_assert(DRM_IOCTL_RKNPU_SUBMIT == 0xC0686441u, "SUBMIT number");
_Static_assert(DRM_IOCTL_RKNPU_MEM_CREATE == 0xC0306442u, "MEM_CREATE number");
_Static_assert(DRM_IOCTL_RKNPU_MEM_MAP == 0xC0106443u, "MEM_MAP number");
_Static_assert(DRM_IOCTL_RKNPU_MEM_DESTROY == 0xC0106444u, "MEM_DESTROY number");
_Static_assert(DRM_IOCTL_RKNPU_MEM_SYNC == 0xC0206445u, "MEM_SYNC number");

#endif
