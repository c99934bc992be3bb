/* Userspace driver for the mainline accel/rocket kernel driver (npu-facts §d.2), over a
 * transport (so the same code runs against /dev/accel/accel0 and the emulated kernel).
 *
 * Every wrapper has the libdrm shape: zero the struct, fill it, call, check, copy out,
 * return 0 or -errno (with rb_set_error naming the ioctl). Ownership: rb_rocket_open
 * takes over the transport; rb_rocket_close releases it. Every bo_create is paired with
 * a bo_destroy.
 *
 * Rocket has no fences for userspace and no hardware-time field: a job's completion is
 * the fence on its output BOs, waited for by PREP_BO (which also hands the BO to the
 * CPU); FINI_BO hands it back to the device. Each job's tasks run one after the other on
 * one core; separate jobs of one SUBMIT spread over the cores. */
#ifndef RB_DEV_ROCKET_H
#define RB_DEV_ROCKET_H

#include <stdint.h>

#include "dev/transport.h"
#include "hw/drivers.h"
#include "uapi/drm/rocket_accel.h"

struct rb_rocket {
	struct rb_transport tr;
	uint32_t drv_version; /* DRM version: major·10000 + minor·100 + patch */
};

struct rb_rocket_bo {
	uint32_t handle;
	uint32_t size;
	uint32_t dma_addr; /* NPU address (private to the fd; 0 is a valid one) */
	void *map;         /* CPU mapping */
};

/* One job of a SUBMIT: its tasks run in order on one core. */
struct rb_rocket_job {
	const struct drm_rocket_task *tasks;
	uint32_t n_tasks;
	const uint32_t *in_handles; /* BOs the job reads */
	uint32_t n_in;
	const uint32_t *out_handles; /* BOs it writes: their fences signal its end */
	uint32_t n_out;
};

int rb_rocket_open(struct rb_rocket *dev, struct rb_transport *tr);
void rb_rocket_close(struct rb_rocket *dev);

/* CREATE_BO + mmap. */
int rb_rocket_bo_create(struct rb_rocket *dev, uint32_t size, struct rb_rocket_bo *bo);
/* munmap + GEM_CLOSE; safe on a zeroed bo. */
void rb_rocket_bo_destroy(struct rb_rocket *dev, struct rb_rocket_bo *bo);
/* PREP_BO: waits until the jobs writing the BO are done, at most timeout_ms (0: only
 * ask; -EBUSY if busy), then syncs it for the CPU. -ETIMEDOUT past the deadline. */
int rb_rocket_bo_prep(struct rb_rocket *dev, const struct rb_rocket_bo *bo, int timeout_ms);
/* FINI_BO: syncs the BO for the device after CPU writes. */
int rb_rocket_bo_fini(struct rb_rocket *dev, const struct rb_rocket_bo *bo);

/* SUBMIT of n jobs (the kernel spreads them over the cores; one per core for
 * parallelism). Returns when they are queued, not when they are done. */
int rb_rocket_submit(struct rb_rocket *dev, const struct rb_rocket_job *jobs, uint32_t n);

#endif
