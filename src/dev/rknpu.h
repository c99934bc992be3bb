/* Userspace driver for the vendor rknpu kernel driver, over a transport (so the same
 * code runs against the /dev/dri nodes and against the emulated kernel).
 *
 * Every wrapper has the libdrm shape: zero the struct, fill it, call, check, copy out,
 * return 0 or -errno (with rb_set_error naming the ioctl). Ownership: rb_rknpu_open takes
 * over the transport; rb_rknpu_close releases it. Every bo_create is paired with a
 * bo_destroy. */
#ifndef RB_DEV_RKNPU_H
#define RB_DEV_RKNPU_H

#include <stdint.h>

#include "uapi/drm/rknpu_ioctl.h"
#include "dev/transport.h"

struct rb_rknpu {
	struct rb_transport tr;
	uint32_t drv_version; /* major·10000 + minor·100 + patch */
	uint32_t hw_version;
};

struct rb_rknpu_bo {
	uint32_t handle;
	uint32_t flags;
	uint64_t size;
	uint64_t obj_addr;
	uint32_t dma_addr; /* NPU address */
	void *map;         /* CPU mapping */
};

int rb_rknpu_open(struct rb_rknpu *dev, struct rb_transport *tr);
void rb_rknpu_close(struct rb_rknpu *dev);

int rb_rknpu_action(struct rb_rknpu *dev, enum rknpu_action_code code, uint32_t *value);

/* MEM_CREATE + MEM_MAP + mmap. */
int rb_rknpu_bo_create(struct rb_rknpu *dev, uint64_t size, uint32_t flags, struct rb_rknpu_bo *bo);
/* munmap + MEM_DESTROY; safe on a zeroed bo. */
void rb_rknpu_bo_destroy(struct rb_rknpu *dev, struct rb_rknpu_bo *bo);
int rb_rknpu_bo_sync(struct rb_rknpu *dev, const struct rb_rknpu_bo *bo, uint32_t flags,
		     uint64_t offset, uint64_t size);

/* SUBMIT. The caller fills `submit`; it is updated in place (task_counter,
 * hw_elapse_time, fence_fd). A blocking submit returns when the job is done;
 * with RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT it returns at once with a fence. */
int rb_rknpu_submit(struct rb_rknpu *dev, struct rknpu_submit *submit);
/* Waits for a fence from a non-blocking submit and closes it. */
int rb_rknpu_fence_wait(struct rb_rknpu *dev, int fence_fd, int timeout_ms);

#endif
