/* The userspace driver of the mainline rocket kernel driver (npu-facts §d.2), written
 * once over the transport so the same code runs on a board and on the emulator.
 *
 * Every wrapper has the libdrm shape: zero the struct, fill it, call, check, copy out,
 * return 0 or -errno with a message naming the ioctl. Ownership: rb_rocket_open takes
 * the transport over whether it succeeds or not (on failure it is closed). */
#include "dev/rocket.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "core/error.h"

#define MS_NS INT64_C(1000000)

static int drv_ioctl(struct rb_rocket *dev, unsigned long request, void *arg)
{
	return rb_transport_ioctl(&dev->tr, request, arg);
}

/* DRM_IOCTL_VERSION's name: a node of another driver is refused here, before any of
 * the rocket ioctls (whose numbers other drivers use for other things) is sent. */
static int check_name(struct rb_rocket *dev)
{
	char name[32] = "";
	struct drm_version v;
	int err;

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name) - 1;
	err = drv_ioctl(dev, DRM_IOCTL_VERSION, &v);
	if (err)
		return rb_set_error(err, "DRM_IOCTL_VERSION failed: %s", strerror(-err));
	if (v.name_len >= sizeof(name))
		v.name_len = sizeof(name) - 1;
	name[v.name_len] = '\0';
	dev->drv_version =
	    (uint32_t)(v.version_major * 10000 + v.version_minor * 100 + v.version_patchlevel);
	if (strcmp(name, ROCKET_DRIVER_NAME) != 0)
		return rb_set_error(-ENODEV,
				    "the device's driver is '%s', not 'rocket': use the rocket "
				    "accel node (e.g. /dev/accel/accel0)",
				    name);
	return 0;
}

int rb_rocket_open(struct rb_rocket *dev, struct rb_transport *tr)
{
	int err;

	memset(dev, 0, sizeof(*dev));
	dev->tr = *tr;
	memset(tr, 0, sizeof(*tr));
	err = check_name(dev);
	if (err)
		rb_transport_close(&dev->tr);
	return err;
}

void rb_rocket_close(struct rb_rocket *dev)
{
	rb_transport_close(&dev->tr);
	memset(dev, 0, sizeof(*dev));
}

/* Undoes what bo_create got done; leaves the recorded error message alone. */
static void bo_teardown(struct rb_rocket *dev, struct rb_rocket_bo *bo)
{
	struct drm_gem_close close;

	if (bo->map)
		dev->tr.ops->munmap(dev->tr.priv, bo->map, bo->size);
	if (bo->handle) {
		memset(&close, 0, sizeof(close));
		close.handle = bo->handle;
		drv_ioctl(dev, DRM_IOCTL_GEM_CLOSE, &close);
	}
	memset(bo, 0, sizeof(*bo));
}

static int bo_alloc(struct rb_rocket *dev, uint32_t size, struct rb_rocket_bo *bo, uint64_t *offset)
{
	struct drm_rocket_create_bo create;
	int err;

	memset(&create, 0, sizeof(create));
	create.size = size;
	err = drv_ioctl(dev, DRM_IOCTL_ROCKET_CREATE_BO, &create);
	if (err)
		return rb_set_error(err, "ROCKET_CREATE_BO of %" PRIu32 " bytes failed: %s", size,
				    strerror(-err));
	bo->handle = create.handle;
	bo->size = size;
	*offset = create.offset;
	if (create.dma_address > UINT32_MAX)
		return rb_set_error(-ERANGE,
				    "ROCKET_CREATE_BO of %" PRIu32 " bytes returned NPU address "
				    "0x%" PRIx64 ", above the 4 GiB the NPU can address",
				    size, (uint64_t)create.dma_address);
	bo->dma_addr = (uint32_t)create.dma_address;
	return 0;
}

int rb_rocket_bo_create(struct rb_rocket *dev, uint32_t size, struct rb_rocket_bo *bo)
{
	uint64_t offset = 0;
	int err;

	memset(bo, 0, sizeof(*bo));
	err = bo_alloc(dev, size, bo, &offset);
	if (err)
		goto err_destroy;
	err = dev->tr.ops->mmap(dev->tr.priv, size, offset, &bo->map);
	if (err) {
		bo->map = NULL;
		rb_set_error(err, "mmap of %" PRIu32 " bytes at offset 0x%" PRIx64 " failed: %s",
			     size, offset, strerror(-err));
		goto err_destroy;
	}
	return 0;

err_destroy:
	bo_teardown(dev, bo);
	return err;
}

void rb_rocket_bo_destroy(struct rb_rocket *dev, struct rb_rocket_bo *bo)
{
	bo_teardown(dev, bo);
}

/* The kernel takes an absolute CLOCK_MONOTONIC deadline (§d.2): the transport's clock,
 * which is the virtual clock under emulation. */
int rb_rocket_bo_prep(struct rb_rocket *dev, const struct rb_rocket_bo *bo, int timeout_ms)
{
	struct drm_rocket_prep_bo prep;
	int err;

	memset(&prep, 0, sizeof(prep));
	prep.handle = bo->handle;
	prep.timeout_ns = (int64_t)dev->tr.ops->now_ns(dev->tr.priv) + timeout_ms * MS_NS;
	err = drv_ioctl(dev, DRM_IOCTL_ROCKET_PREP_BO, &prep);
	if (err == -ETIMEDOUT)
		return rb_set_error(err,
				    "ROCKET_PREP_BO of handle %u failed: %s (the NPU did not "
				    "finish within %d ms)",
				    bo->handle, strerror(-err), timeout_ms);
	if (err)
		return rb_set_error(err, "ROCKET_PREP_BO of handle %u failed: %s", bo->handle,
				    strerror(-err));
	return 0;
}

int rb_rocket_bo_fini(struct rb_rocket *dev, const struct rb_rocket_bo *bo)
{
	struct drm_rocket_fini_bo fini;
	int err;

	memset(&fini, 0, sizeof(fini));
	fini.handle = bo->handle;
	err = drv_ioctl(dev, DRM_IOCTL_ROCKET_FINI_BO, &fini);
	if (err)
		return rb_set_error(err, "ROCKET_FINI_BO of handle %u failed: %s", bo->handle,
				    strerror(-err));
	return 0;
}

int rb_rocket_submit(struct rb_rocket *dev, const struct rb_rocket_job *jobs, uint32_t n)
{
	struct drm_rocket_job kjobs[8];
	struct drm_rocket_submit submit;
	int err;

	if (n > sizeof(kjobs) / sizeof(kjobs[0]))
		return rb_set_error(-EINVAL, "ROCKET_SUBMIT of %u jobs: at most %zu at once", n,
				    sizeof(kjobs) / sizeof(kjobs[0]));
	memset(kjobs, 0, sizeof(kjobs));
	for (uint32_t i = 0; i < n; i++) {
		kjobs[i].tasks = (uintptr_t)jobs[i].tasks;
		kjobs[i].task_count = jobs[i].n_tasks;
		kjobs[i].task_struct_size = sizeof(struct drm_rocket_task);
		kjobs[i].in_bo_handles = (uintptr_t)jobs[i].in_handles;
		kjobs[i].in_bo_handle_count = jobs[i].n_in;
		kjobs[i].out_bo_handles = (uintptr_t)jobs[i].out_handles;
		kjobs[i].out_bo_handle_count = jobs[i].n_out;
	}
	memset(&submit, 0, sizeof(submit));
	submit.jobs = (uintptr_t)kjobs;
	submit.job_count = n;
	submit.job_struct_size = sizeof(struct drm_rocket_job);
	err = drv_ioctl(dev, DRM_IOCTL_ROCKET_SUBMIT, &submit);
	if (err)
		return rb_set_error(err, "ROCKET_SUBMIT of %u jobs failed: %s", n, strerror(-err));
	return 0;
}
