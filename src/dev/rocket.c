/* The userspace driver of the mainline rocket kernel driver (npu-facts §d.2), written
 * once over the transport so the same code runs on a board and on the emulator.
 *
 * Every wrapper has the libdrm shape: zero the struct, fill it, call, check, copy out,
 * return 0 or -errno with a message naming the ioctl. Ownership: rb_rocket_open takes
 * the transport over whether it succeeds or not (on failure it is closed), and closes
 * the files it opened itself in rb_rocket_close. */
#include "dev/rocket.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#define MS_NS      INT64_C(1000000)
#define PAGE_BYTES 4096u

struct rb_transport *rb_rocket_file(struct rb_rocket *dev, unsigned f)
{
	return f == 0 ? &dev->tr : &dev->more[f - 1];
}

uint32_t rb_rocket_bo_handle(const struct rb_rocket_bo *bo, unsigned f)
{
	return f == 0 ? bo->handle : bo->copy_handle[f - 1];
}

uint32_t rb_rocket_bo_addr(const struct rb_rocket_bo *bo, unsigned f)
{
	return f == 0 ? bo->dma_addr : bo->copy_addr[f - 1];
}

void *rb_rocket_bo_map(const struct rb_rocket_bo *bo, unsigned f)
{
	return f == 0 ? bo->map : bo->copy_map[f - 1];
}

static uint32_t copy_bytes(const struct rb_rocket_bo *bo, unsigned f)
{
	return f == 0 ? bo->size : bo->copy_size[f - 1];
}

static int file_ioctl(struct rb_rocket *dev, unsigned f, unsigned long request, void *arg)
{
	return rb_transport_ioctl(rb_rocket_file(dev, f), request, arg);
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
	err = file_ioctl(dev, 0, DRM_IOCTL_VERSION, &v);
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

/* Files 1 .. n − 1: more opens of the node, one per core. */
static int open_more(struct rb_rocket *dev, unsigned n)
{
	while (dev->n_files < n) {
		int err = rb_transport_open_file(&dev->tr, &dev->more[dev->n_files - 1]);

		if (err)
			return rb_set_error(err,
					    "cannot open the rocket node again for core %u: %s",
					    dev->n_files, rb_last_error());
		dev->n_files++;
	}
	return 0;
}

int rb_rocket_open(struct rb_rocket *dev, struct rb_transport *tr, unsigned n_files)
{
	int err;

	memset(dev, 0, sizeof(*dev));
	dev->tr = *tr;
	dev->n_files = 1;
	memset(tr, 0, sizeof(*tr));
	if (n_files < 1 || n_files > RB_ROCKET_MAX_FILES)
		err = rb_set_error(-EINVAL, "rocket: %u files asked for (1 to %d)", n_files,
				   RB_ROCKET_MAX_FILES);
	else
		err = check_name(dev);
	if (!err)
		err = open_more(dev, n_files);
	if (err)
		rb_rocket_close(dev);
	return err;
}

void rb_rocket_close(struct rb_rocket *dev)
{
	for (unsigned f = dev->n_files; f-- > 1;)
		rb_transport_close(&dev->more[f - 1]);
	rb_transport_close(&dev->tr);
	memset(dev, 0, sizeof(*dev));
}

/* Undoes what one file's part of bo_create got done; leaves the recorded error message
 * alone. */
static void copy_teardown(struct rb_rocket *dev, unsigned f, uint32_t *handle, void **map,
			  uint32_t size)
{
	struct rb_transport *tr = rb_rocket_file(dev, f);
	struct drm_gem_close close;

	if (*map)
		tr->ops->munmap(tr->priv, *map, size);
	if (*handle) {
		memset(&close, 0, sizeof(close));
		close.handle = *handle;
		rb_transport_ioctl(tr, DRM_IOCTL_GEM_CLOSE, &close);
	}
	*handle = 0;
	*map = NULL;
}

static void bo_teardown(struct rb_rocket *dev, struct rb_rocket_bo *bo)
{
	for (unsigned f = 1; f < RB_ROCKET_MAX_FILES; f++)
		copy_teardown(dev, f, &bo->copy_handle[f - 1], &bo->copy_map[f - 1],
			      copy_bytes(bo, f));
	copy_teardown(dev, 0, &bo->handle, &bo->map, bo->size);
	memset(bo, 0, sizeof(*bo));
}

/* CREATE_BO + mmap in file f. */
static int copy_create(struct rb_rocket *dev, unsigned f, uint32_t size, uint32_t *handle,
		       uint32_t *dma_addr, void **map)
{
	struct rb_transport *tr = rb_rocket_file(dev, f);
	struct drm_rocket_create_bo create;
	int err;

	memset(&create, 0, sizeof(create));
	create.size = size;
	err = rb_transport_ioctl(tr, DRM_IOCTL_ROCKET_CREATE_BO, &create);
	if (err)
		return rb_set_error(err, "ROCKET_CREATE_BO of %" PRIu32 " bytes failed: %s", size,
				    strerror(-err));
	*handle = create.handle;
	if (create.dma_address > UINT32_MAX)
		return rb_set_error(-ERANGE,
				    "ROCKET_CREATE_BO of %" PRIu32 " bytes returned NPU address "
				    "0x%" PRIx64 ", above the 4 GiB the NPU can address",
				    size, (uint64_t)create.dma_address);
	*dma_addr = (uint32_t)create.dma_address;
	err = tr->ops->mmap(tr->priv, size, create.offset, map);
	if (err) {
		*map = NULL;
		return rb_set_error(err,
				    "mmap of %" PRIu32 " bytes at offset 0x%" PRIx64 " failed: %s",
				    size, (uint64_t)create.offset, strerror(-err));
	}
	return 0;
}

static int check_files(const struct rb_rocket *dev, unsigned n_files)
{
	if (n_files < 1 || n_files > dev->n_files)
		return rb_set_error(-EINVAL, "rocket: a buffer in %u files asked for (1 to %u)",
				    n_files, dev->n_files);
	return 0;
}

/* Files bo->n_files .. n_files − 1, of sizes[f] bytes each (NULL: bo->size); a
 * failed one keeps what it got (a handle) for teardown. */
static int create_copies(struct rb_rocket *dev, struct rb_rocket_bo *bo, unsigned n_files,
			 const uint32_t *sizes)
{
	int err = 0;

	for (unsigned f = bo->n_files; !err && f < n_files; f++) {
		bo->copy_size[f - 1] = sizes ? sizes[f] : bo->size;
		err = copy_create(dev, f, bo->copy_size[f - 1], &bo->copy_handle[f - 1],
				  &bo->copy_addr[f - 1], &bo->copy_map[f - 1]);
		if (!err)
			bo->n_files = f + 1;
	}
	return err;
}

/* File 0's BO of sizes[0] bytes (NULL: size), then the others'. */
static int create_files(struct rb_rocket *dev, uint32_t size, const uint32_t *sizes,
			unsigned n_files, struct rb_rocket_bo *bo)
{
	int err;

	memset(bo, 0, sizeof(*bo));
	bo->size = sizes ? sizes[0] : size;
	bo->parts = sizes != NULL;
	err = check_files(dev, n_files);
	if (!err)
		err = copy_create(dev, 0, bo->size, &bo->handle, &bo->dma_addr, &bo->map);
	if (!err) {
		bo->n_files = 1;
		err = create_copies(dev, bo, n_files, sizes);
	}
	if (err)
		bo_teardown(dev, bo);
	return err;
}

int rb_rocket_bo_create_in(struct rb_rocket *dev, uint32_t size, unsigned n_files,
			   struct rb_rocket_bo *bo)
{
	return create_files(dev, size, NULL, n_files, bo);
}

int rb_rocket_bo_create_parts(struct rb_rocket *dev, const uint32_t *sizes, unsigned n_files,
			      struct rb_rocket_bo *bo)
{
	return create_files(dev, 0, sizes, n_files, bo);
}

int rb_rocket_bo_create(struct rb_rocket *dev, uint32_t size, struct rb_rocket_bo *bo)
{
	return rb_rocket_bo_create_in(dev, size, dev->n_files, bo);
}

static int fini_one(struct rb_rocket *dev, const struct rb_rocket_bo *bo, unsigned f);

/* The new copies are filled and handed over here: the owner may have handed file 0's
 * contents to the device before (weights written at load, used by a later plan). */
int rb_rocket_bo_extend(struct rb_rocket *dev, struct rb_rocket_bo *bo, unsigned n_files)
{
	unsigned had = bo->n_files;
	int err = check_files(dev, n_files);

	if (err || n_files <= had)
		return err;
	if (bo->parts)
		return rb_set_error(-EINVAL,
				    "rocket: a buffer of %u cores' parts cannot serve %u cores",
				    had, n_files);
	err = create_copies(dev, bo, n_files, NULL);
	for (unsigned f = had; !err && f < bo->n_files; f++)
		err = fini_one(dev, bo, f);
	return err;
}

void rb_rocket_bo_destroy(struct rb_rocket *dev, struct rb_rocket_bo *bo)
{
	bo_teardown(dev, bo);
}

/* The kernel takes an absolute CLOCK_MONOTONIC deadline (§d.2): the transport's clock,
 * which is the virtual clock under emulation. */
static int prep_one(struct rb_rocket *dev, unsigned f, uint32_t handle, int64_t deadline,
		    int timeout_ms)
{
	struct drm_rocket_prep_bo prep;
	int err;

	memset(&prep, 0, sizeof(prep));
	prep.handle = handle;
	prep.timeout_ns = deadline;
	err = file_ioctl(dev, f, DRM_IOCTL_ROCKET_PREP_BO, &prep);
	if (err == -ETIMEDOUT)
		return rb_set_error(err,
				    "ROCKET_PREP_BO of handle %u failed: %s (the NPU did not "
				    "finish within %d ms)",
				    handle, strerror(-err), timeout_ms);
	if (err)
		return rb_set_error(err, "ROCKET_PREP_BO of handle %u failed: %s", handle,
				    strerror(-err));
	return 0;
}

int rb_rocket_bo_prep(struct rb_rocket *dev, const struct rb_rocket_bo *bo, int timeout_ms)
{
	int64_t deadline = (int64_t)dev->tr.ops->now_ns(dev->tr.priv) + timeout_ms * MS_NS;
	int err = 0;

	for (unsigned f = 0; !err && f < bo->n_files; f++)
		err = prep_one(dev, f, rb_rocket_bo_handle(bo, f), deadline, timeout_ms);
	return err;
}

/* Copies the pages of src that differ from dst: a page nobody wrote stays unwritten
 * (and uncommitted) in every copy. */
static void copy_changed(unsigned char *dst, const unsigned char *src, size_t size)
{
	for (size_t at = 0; at < size; at += PAGE_BYTES) {
		size_t n = size - at < PAGE_BYTES ? size - at : PAGE_BYTES;

		if (memcmp(dst + at, src + at, n) != 0)
			memcpy(dst + at, src + at, n);
	}
}

/* File f's copy: file 0's changed pages copied in (f > 0), then FINI_BO. */
static int fini_one(struct rb_rocket *dev, const struct rb_rocket_bo *bo, unsigned f)
{
	struct drm_rocket_fini_bo fini;
	int err;

	if (f > 0 && !bo->parts)
		copy_changed(bo->copy_map[f - 1], bo->map, bo->size);
	memset(&fini, 0, sizeof(fini));
	fini.handle = rb_rocket_bo_handle(bo, f);
	err = file_ioctl(dev, f, DRM_IOCTL_ROCKET_FINI_BO, &fini);
	if (err)
		return rb_set_error(err, "ROCKET_FINI_BO of handle %u failed: %s", fini.handle,
				    strerror(-err));
	return 0;
}

int rb_rocket_bo_fini(struct rb_rocket *dev, const struct rb_rocket_bo *bo)
{
	int err = 0;

	for (unsigned f = 0; !err && f < bo->n_files; f++)
		err = fini_one(dev, bo, f);
	return err;
}

void rb_rocket_bo_gather(struct rb_rocket *dev, const struct rb_rocket_bo *bo, uint8_t fill)
{
	unsigned char *dst = bo->map;

	uint64_t fill8 = fill * UINT64_C(0x0101010101010101);

	(void)dev;
	for (unsigned f = 1; f < bo->n_files; f++) {
		const unsigned char *src = bo->copy_map[f - 1];

		for (uint32_t i = 0; i < bo->size; i += 8) {
			uint32_t end = bo->size - i < 8 ? bo->size : i + 8;
			uint64_t word = 0;

			if (end == i + 8)
				memcpy(&word, src + i, sizeof(word));
			if (word == fill8)
				continue; /* untouched: the fast way through */
			for (uint32_t b = i; b < end; b++)
				if (src[b] != fill)
					dst[b] = src[b];
		}
	}
}

/* What rocket's SUBMIT would drop without a word: upstream's rocket_ioctl_submit
 * ignores each job's error and returns 0 (drivers/accel/rocket/rocket_job.c), so a job
 * without tasks, a task without words or a handle that cannot name a BO (0) is refused
 * here, naming it, before the kernel could lose it. A job that writes no BO is refused
 * too: nothing could wait for its end. A handle the fd no longer has is dropped as
 * well; only the output can show that (the job runner's canary in C). */
static int check_job(const struct rb_rocket_job *j, uint32_t index)
{
	if (!j->n_tasks || !j->tasks)
		return rb_set_error(-EINVAL,
				    "ROCKET_SUBMIT: job %u has no tasks (the kernel would drop it "
				    "and report success)",
				    index);
	for (uint32_t t = 0; t < j->n_tasks; t++)
		if (!j->tasks[t].regcmd_count)
			return rb_set_error(-EINVAL,
					    "ROCKET_SUBMIT: task %u of job %u has regcmd_count 0 "
					    "(the kernel would drop the job and report success)",
					    t, index);
	if (!j->n_out || !j->out_handles || (j->n_in && !j->in_handles))
		return rb_set_error(-EINVAL,
				    "ROCKET_SUBMIT: job %u lists no output BO: nothing could wait "
				    "for its end",
				    index);
	for (uint32_t b = 0; b < j->n_in + j->n_out; b++)
		if (!(b < j->n_in ? j->in_handles[b] : j->out_handles[b - j->n_in]))
			return rb_set_error(
			    -EINVAL,
			    "ROCKET_SUBMIT: job %u lists BO handle 0, which names no "
			    "BO (the kernel would drop the job and report success)",
			    index);
	return 0;
}

int rb_rocket_submit(struct rb_rocket *dev, unsigned f, const struct rb_rocket_job *jobs,
		     uint32_t n)
{
	struct drm_rocket_job *kjobs = calloc(n ? n : 1, sizeof(*kjobs));
	struct drm_rocket_submit submit;
	int err;

	if (!kjobs)
		return rb_set_error(-ENOMEM, "out of memory for a ROCKET_SUBMIT of %u jobs", n);
	for (uint32_t i = 0; i < n; i++) {
		err = check_job(&jobs[i], i);
		if (err) {
			free(kjobs);
			return err;
		}
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
	err = file_ioctl(dev, f, DRM_IOCTL_ROCKET_SUBMIT, &submit);
	free(kjobs);
	if (err)
		return rb_set_error(err, "ROCKET_SUBMIT of %u jobs failed: %s", n, strerror(-err));
	return 0;
}
