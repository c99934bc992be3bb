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
 * one core.
 *
 * One fd per core. The kernel runs the jobs of one fd one after another (one scheduler
 * entity per fd, rocket_job_open), so parallel cores need an fd each. And an fd's NPU
 * addresses are its own (an IOMMU domain per fd, rocket_open; "private to the DRM fd",
 * rocket_accel.h): a buffer shared through PRIME gets a handle in the importing fd but
 * no NPU address there (rocket maps only at CREATE_BO, which pins the pages). So a
 * buffer lives in the files of the cores that use it, files 0 .. n_files − 1 (the
 * plan's i-th core submits on file i), each copy at its own NPU address (programs are
 * encoded per core with their file's addresses): a buffer of a one-core plan is held
 * once. The copies of files 1 .. are filled from file 0's at FINI_BO (copy_changed) and
 * gathered back into it after the jobs (rb_rocket_bo_gather). A BO of parts
 * (rb_rocket_bo_create_parts) instead holds different bytes in each file, written there
 * by the CPU: the weights of an N-split plan, each core's file holding only the kernels
 * that core reads (npu/job.c), so B is held once in all. */
#ifndef RB_DEV_ROCKET_H
#define RB_DEV_ROCKET_H

#include <stdint.h>

#include "dev/transport.h"
#include "hw/drivers.h"
#include "uapi/drm/rocket_accel.h"

#define RB_ROCKET_MAX_FILES 3 /* one per NPU core */

struct rb_rocket {
	struct rb_transport tr;                            /* file 0 */
	struct rb_transport more[RB_ROCKET_MAX_FILES - 1]; /* files 1 .. n_files − 1 */
	unsigned n_files;
	uint32_t drv_version; /* DRM version: major·10000 + minor·100 + patch */
};

/* A buffer in files 0 .. n_files − 1: file 0's copy is the one the CPU reads and
 * writes. */
struct rb_rocket_bo {
	uint32_t handle;
	uint32_t size;
	uint32_t dma_addr; /* NPU address in file 0 (0 is a valid one) */
	void *map;         /* CPU mapping */
	unsigned n_files;  /* the files it lives in: 0 .. n_files − 1 */
	uint32_t copy_handle[RB_ROCKET_MAX_FILES - 1]; /* in files 1 .. */
	uint32_t copy_addr[RB_ROCKET_MAX_FILES - 1];   /* their NPU addresses */
	uint32_t copy_size[RB_ROCKET_MAX_FILES - 1];   /* their sizes */
	void *copy_map[RB_ROCKET_MAX_FILES - 1];
	/* Parts, not copies: each file's BO holds bytes of its own (its core's share of the
	 * data, written there by the CPU), so FINI_BO copies nothing between them. */
	bool parts;
};

/* One job of a SUBMIT: its tasks run in order on one core. */
/* The kernel's job timeout: a job still running 500 ms after its first kick is stopped,
 * its core reset (drivers/accel/rocket, npu-facts §a.3). */
#define RB_ROCKET_JOB_TIMEOUT_MS 500

struct rb_rocket_job {
	const struct drm_rocket_task *tasks;
	uint32_t n_tasks;
	const uint32_t *in_handles; /* BOs the job reads */
	uint32_t n_in;
	const uint32_t *out_handles; /* BOs it writes: their fences signal its end */
	uint32_t n_out;
};

/* Opens n_files files (1 to RB_ROCKET_MAX_FILES) on the device of tr: tr itself and
 * n_files − 1 more opens of its node. */
int rb_rocket_open(struct rb_rocket *dev, struct rb_transport *tr, unsigned n_files);
void rb_rocket_close(struct rb_rocket *dev);
/* The transport of file f. */
struct rb_transport *rb_rocket_file(struct rb_rocket *dev, unsigned f);
/* The BO's handle in file f (f < bo->n_files). */
uint32_t rb_rocket_bo_handle(const struct rb_rocket_bo *bo, unsigned f);
/* The BO's NPU address in file f (f < bo->n_files). */
uint32_t rb_rocket_bo_addr(const struct rb_rocket_bo *bo, unsigned f);

/* CREATE_BO + mmap in files 0 .. n_files − 1 (1 to the device's n_files). */
int rb_rocket_bo_create_in(struct rb_rocket *dev, uint32_t size, unsigned n_files,
			   struct rb_rocket_bo *bo);
/* A BO of parts: file f (0 .. n_files − 1) gets one of sizes[f] bytes, filled by the
 * CPU through rb_rocket_bo_map (bo->map is file 0's part). */
int rb_rocket_bo_create_parts(struct rb_rocket *dev, const uint32_t *sizes, unsigned n_files,
			      struct rb_rocket_bo *bo);
/* File f's mapping of the BO. */
void *rb_rocket_bo_map(const struct rb_rocket_bo *bo, unsigned f);
/* rb_rocket_bo_create_in every file of the device. */
int rb_rocket_bo_create(struct rb_rocket *dev, uint32_t size, struct rb_rocket_bo *bo);
/* Makes the BO live in files 0 .. n_files − 1 too (nothing if it does already): the new
 * copies get file 0's contents and are handed to the device (FINI_BO). -EINVAL for a BO
 * of parts that lacks them. */
int rb_rocket_bo_extend(struct rb_rocket *dev, struct rb_rocket_bo *bo, unsigned n_files);
/* munmap + GEM_CLOSE; safe on a zeroed bo. */
void rb_rocket_bo_destroy(struct rb_rocket *dev, struct rb_rocket_bo *bo);
/* PREP_BO in every file of the BO: waits until the jobs writing the BO are done, at most
 * timeout_ms (0: only ask; -EBUSY if busy), then syncs it for the CPU. -ETIMEDOUT past
 * the deadline. */
int rb_rocket_bo_prep(struct rb_rocket *dev, const struct rb_rocket_bo *bo, int timeout_ms);
/* FINI_BO: copies file 0's contents into the other files' copies (the pages that
 * differ; not for a BO of parts) and syncs every copy for the device. */
int rb_rocket_bo_fini(struct rb_rocket *dev, const struct rb_rocket_bo *bo);
/* After prep: the BO was filled with `fill` bytes before the jobs; the bytes the jobs of
 * the other files wrote (those no longer `fill`) go into file 0's copy. */
void rb_rocket_bo_gather(struct rb_rocket *dev, const struct rb_rocket_bo *bo, uint8_t fill);

/* SUBMIT of n jobs on file f; their handles are file f's (their BOs live there). The kernel runs
 * them one after another (one entity per fd). Returns when they are queued, not when they are done.
 * Jobs the kernel would drop without a word are refused first (-EINVAL). */
int rb_rocket_submit(struct rb_rocket *dev, unsigned f, const struct rb_rocket_job *jobs,
		     uint32_t n);

#endif
