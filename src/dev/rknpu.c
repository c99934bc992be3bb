/* The userspace driver of the vendor rknpu kernel driver (npu-facts §d.1), written once
 * over the transport so the same code runs on a board and on the emulator.
 *
 * Every wrapper has the libdrm shape: zero the struct, fill it, call, check, copy out,
 * return 0 or -errno with a message naming the ioctl. Ownership: rb_rknpu_open takes
 * the transport over whether it succeeds or not (on failure it is closed), so a caller
 * never closes a transport it handed in. */
#include "dev/rknpu.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "core/error.h"

static const char *const action_names[] = {
    [RKNPU_GET_HW_VERSION] = "GET_HW_VERSION",
    [RKNPU_GET_DRV_VERSION] = "GET_DRV_VERSION",
    [RKNPU_GET_FREQ] = "GET_FREQ",
    [RKNPU_SET_FREQ] = "SET_FREQ",
    [RKNPU_GET_VOLT] = "GET_VOLT",
    [RKNPU_SET_VOLT] = "SET_VOLT",
    [RKNPU_ACT_RESET] = "ACT_RESET",
    [RKNPU_GET_BW_PRIORITY] = "GET_BW_PRIORITY",
    [RKNPU_SET_BW_PRIORITY] = "SET_BW_PRIORITY",
    [RKNPU_GET_BW_EXPECT] = "GET_BW_EXPECT",
    [RKNPU_SET_BW_EXPECT] = "SET_BW_EXPECT",
    [RKNPU_GET_BW_TW] = "GET_BW_TW",
    [RKNPU_SET_BW_TW] = "SET_BW_TW",
    [RKNPU_ACT_CLR_TOTAL_RW_AMOUNT] = "ACT_CLR_TOTAL_RW_AMOUNT",
    [RKNPU_GET_DT_WR_AMOUNT] = "GET_DT_WR_AMOUNT",
    [RKNPU_GET_DT_RD_AMOUNT] = "GET_DT_RD_AMOUNT",
    [RKNPU_GET_WT_RD_AMOUNT] = "GET_WT_RD_AMOUNT",
    [RKNPU_GET_TOTAL_RW_AMOUNT] = "GET_TOTAL_RW_AMOUNT",
    [RKNPU_GET_IOMMU_EN] = "GET_IOMMU_EN",
    [RKNPU_SET_PROC_NICE] = "SET_PROC_NICE",
    [RKNPU_POWER_ON] = "POWER_ON",
    [RKNPU_POWER_OFF] = "POWER_OFF",
    [RKNPU_GET_TOTAL_SRAM_SIZE] = "GET_TOTAL_SRAM_SIZE",
    [RKNPU_GET_FREE_SRAM_SIZE] = "GET_FREE_SRAM_SIZE",
    [RKNPU_GET_IOMMU_DOMAIN_ID] = "GET_IOMMU_DOMAIN_ID",
    [RKNPU_SET_IOMMU_DOMAIN_ID] = "SET_IOMMU_DOMAIN_ID",
};

static const char *action_name(enum rknpu_action_code code)
{
	if ((unsigned)code < sizeof(action_names) / sizeof(action_names[0]) && action_names[code])
		return action_names[code];
	return "(unknown code)";
}

static int drv_ioctl(struct rb_rknpu *dev, unsigned long request, void *arg)
{
	return rb_transport_ioctl(&dev->tr, request, arg);
}

int rb_rknpu_action(struct rb_rknpu *dev, enum rknpu_action_code code, uint32_t *value)
{
	struct rknpu_action act;
	int err;

	memset(&act, 0, sizeof(act));
	act.flags = (uint32_t)code;
	act.value = value ? *value : 0;
	err = drv_ioctl(dev, DRM_IOCTL_RKNPU_ACTION, &act);
	if (err)
		return rb_set_error(err, "RKNPU_ACTION %s failed: %s", action_name(code),
				    strerror(-err));
	if (value)
		*value = act.value;
	return 0;
}

/* DRM_IOCTL_VERSION (the name check) is device discovery's business; here the node is
 * already taken to be rknpu and the two versions are read through ACTION. */
int rb_rknpu_open(struct rb_rknpu *dev, struct rb_transport *tr)
{
	int err;

	memset(dev, 0, sizeof(*dev));
	dev->tr = *tr;
	memset(tr, 0, sizeof(*tr));
	err = rb_rknpu_action(dev, RKNPU_GET_DRV_VERSION, &dev->drv_version);
	if (err)
		goto err_close;
	err = rb_rknpu_action(dev, RKNPU_GET_HW_VERSION, &dev->hw_version);
	if (err)
		goto err_close;
	return 0;

err_close:
	rb_transport_close(&dev->tr);
	return err;
}

void rb_rknpu_close(struct rb_rknpu *dev)
{
	rb_transport_close(&dev->tr);
	memset(dev, 0, sizeof(*dev));
}

/* Undoes what bo_create got done; leaves the recorded error message alone. */
static void bo_teardown(struct rb_rknpu *dev, struct rb_rknpu_bo *bo)
{
	struct rknpu_mem_destroy destroy;

	if (bo->map)
		dev->tr.ops->munmap(dev->tr.priv, bo->map, bo->size);
	if (bo->handle) {
		memset(&destroy, 0, sizeof(destroy));
		destroy.handle = bo->handle;
		destroy.obj_addr = bo->obj_addr;
		drv_ioctl(dev, DRM_IOCTL_RKNPU_MEM_DESTROY, &destroy);
	}
	memset(bo, 0, sizeof(*bo));
}

static int bo_alloc(struct rb_rknpu *dev, uint64_t size, uint32_t flags, struct rb_rknpu_bo *bo)
{
	struct rknpu_mem_create create;
	int err;

	/* handle stays 0: a non-zero handle naming an object returns that object (§d.1). */
	memset(&create, 0, sizeof(create));
	create.flags = flags;
	create.size = size;
	err = drv_ioctl(dev, DRM_IOCTL_RKNPU_MEM_CREATE, &create);
	if (err)
		return rb_set_error(err, "RKNPU_MEM_CREATE of %" PRIu64 " bytes failed: %s", size,
				    strerror(-err));
	bo->handle = create.handle;
	bo->flags = flags;
	bo->size = create.size;
	bo->obj_addr = create.obj_addr;
	if (create.dma_addr > UINT32_MAX)
		return rb_set_error(-ERANGE,
				    "RKNPU_MEM_CREATE of %" PRIu64 " bytes returned NPU address "
				    "0x%" PRIx64 ", above the 4 GiB the NPU can address",
				    size, create.dma_addr);
	bo->dma_addr = (uint32_t)create.dma_addr;
	return 0;
}

static int bo_map(struct rb_rknpu *dev, struct rb_rknpu_bo *bo)
{
	struct rknpu_mem_map map;
	int err;

	memset(&map, 0, sizeof(map));
	map.handle = bo->handle;
	err = drv_ioctl(dev, DRM_IOCTL_RKNPU_MEM_MAP, &map);
	if (err)
		return rb_set_error(err, "RKNPU_MEM_MAP of handle %u failed: %s", bo->handle,
				    strerror(-err));
	err = dev->tr.ops->mmap(dev->tr.priv, bo->size, map.offset, &bo->map);
	if (err) {
		bo->map = NULL;
		return rb_set_error(err,
				    "mmap of %" PRIu64 " bytes at offset 0x%" PRIx64 " failed: %s",
				    bo->size, map.offset, strerror(-err));
	}
	return 0;
}

int rb_rknpu_bo_create(struct rb_rknpu *dev, uint64_t size, uint32_t flags, struct rb_rknpu_bo *bo)
{
	int err;

	memset(bo, 0, sizeof(*bo));
	err = bo_alloc(dev, size, flags, bo);
	if (err)
		goto err_destroy;
	err = bo_map(dev, bo);
	if (err)
		goto err_destroy;
	return 0;

err_destroy:
	bo_teardown(dev, bo);
	return err;
}

void rb_rknpu_bo_destroy(struct rb_rknpu *dev, struct rb_rknpu_bo *bo)
{
	bo_teardown(dev, bo);
}

int rb_rknpu_bo_sync(struct rb_rknpu *dev, const struct rb_rknpu_bo *bo, uint32_t flags,
		     uint64_t offset, uint64_t size)
{
	struct rknpu_mem_sync sync;
	int err;

	memset(&sync, 0, sizeof(sync));
	sync.flags = flags;
	sync.obj_addr = bo->obj_addr;
	sync.offset = offset;
	sync.size = size;
	err = drv_ioctl(dev, DRM_IOCTL_RKNPU_MEM_SYNC, &sync);
	if (err)
		return rb_set_error(err,
				    "RKNPU_MEM_SYNC of %" PRIu64 " bytes at offset %" PRIu64
				    " of handle %u failed: %s",
				    size, offset, bo->handle, strerror(-err));
	return 0;
}

/* The caller fills the whole struct (it is in/out); the kernel copies it back even on
 * failure, so task_counter tells how far a timed-out job got. */
int rb_rknpu_submit(struct rb_rknpu *dev, struct rknpu_submit *submit)
{
	int err = drv_ioctl(dev, DRM_IOCTL_RKNPU_SUBMIT, submit);

	if (!err)
		return 0;
	if (err == -ETIMEDOUT)
		return rb_set_error(err,
				    "RKNPU_SUBMIT of %u tasks on core mask 0x%x failed: %s "
				    "(the NPU did not finish within %u ms; %u tasks done)",
				    submit->task_number, submit->core_mask, strerror(-err),
				    submit->timeout, submit->task_counter);
	return rb_set_error(err, "RKNPU_SUBMIT of %u tasks on core mask 0x%x failed: %s",
			    submit->task_number, submit->core_mask, strerror(-err));
}

int rb_rknpu_fence_wait(struct rb_rknpu *dev, int fence_fd, int timeout_ms)
{
	int err = dev->tr.ops->wait(dev->tr.priv, fence_fd, timeout_ms);
	int cerr = dev->tr.ops->close_fd(dev->tr.priv, fence_fd);

	if (err)
		return rb_set_error(err, "waiting for NPU fence %d failed: %s", fence_fd,
				    strerror(-err));
	if (cerr)
		return rb_set_error(cerr, "closing NPU fence %d failed: %s", fence_fd,
				    strerror(-cerr));
	return 0;
}
