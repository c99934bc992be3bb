/* Fuzz target: the emulated mainline rocket kernel (src/sim/kmod_rocket.c) and the
 * emulated NPU under it, fed arbitrary jobs and programs through its ioctls, as a
 * userspace driver would.
 *
 * Input: an 8-byte header, job descriptions, then the regcmd program:
 *   [0]   bit 0 model_only, bit 1 a second SUBMIT of the same jobs before anyone waits,
 *         bit 2 the data buffer closed (GEM_CLOSE) while the jobs are in flight,
 *         bit 3 PREP_BO with a deadline already past (-EBUSY), bit 4 a bad
 *         job_struct_size, bit 5 a bad task_struct_size, bit 6 FINI_BO before PREP_BO
 *   [1]   jobs (% 4)        [2] PREP_BO timeout, 1 + x % 16 ms
 *   [3]   input handles per job (% 4: regcmd, data, 0 or a stale handle)
 *   [4..7] tasks of jobs 0..3 (% (MAX_TASKS + 1))
 *   then  8 bytes per task: {regcmd, regcmd_count} (struct drm_rocket_task); a regcmd
 *         below REGCMD_BYTES is an offset into the program buffer, any other value is
 *         used as it is
 *   rest  the program: little-endian 64-bit words copied into the program buffer
 * Missing bytes read as zero. Every exec gets a fresh kernel, so buffer addresses are
 * the same every time, and sizes stay small (16 KiB of data). Time is virtual: the
 * 500 ms job timeout of a hang costs nothing. */
#include <errno.h>
#include <string.h>

#include "core/error.h"
#include "uapi/drm/rknpu_ioctl.h"
#include "fuzz.h"
#include "sim/sim.h"
#include "uapi/drm/rocket_accel.h"

#define HEADER_BYTES 8
#define MAX_JOBS     3
#define MAX_TASKS    8
#define REGCMD_BYTES (16u << 10)
#define DATA_BYTES   (16u << 10)
#define MS_NS        1000000LL

struct bo {
	uint32_t handle, size;
	uint64_t dma_addr;
	void *map;
};

static int bo_create(struct rb_sim_kmod *k, uint32_t size, struct bo *bo)
{
	struct drm_rocket_create_bo c = {.size = size};
	int ret = rb_sim_kmod_ioctl(k, DRM_IOCTL_ROCKET_CREATE_BO, &c);

	if (ret)
		return ret;
	*bo = (struct bo){c.handle, size, c.dma_address, NULL};
	return rb_sim_kmod_mmap(k, size, c.offset, &bo->map);
}

static void bo_close(struct rb_sim_kmod *k, struct bo *bo)
{
	struct drm_gem_close c = {.handle = bo->handle};

	if (bo->map)
		rb_sim_kmod_munmap(k, bo->map, bo->size);
	if (bo->handle)
		FUZZ_CHECK(rb_sim_kmod_ioctl(k, DRM_IOCTL_GEM_CLOSE, &c) == 0);
	memset(bo, 0, sizeof(*bo));
}

struct jobs {
	struct drm_rocket_job job[MAX_JOBS];
	struct drm_rocket_task task[MAX_JOBS][MAX_TASKS];
	uint32_t in[4], out[1];
};

/* The jobs of the header, their tasks from the input; every job writes the data BO. */
static void build_jobs(struct fuzz_input *in, const uint8_t h[HEADER_BYTES],
		       const struct bo *regcmd, const struct bo *data, struct jobs *j)
{
	uint32_t handles[4] = {regcmd->handle, data->handle, 0, data->handle + 7};

	memset(j, 0, sizeof(*j));
	for (unsigned i = 0; i < 4; i++)
		j->in[i] = handles[i];
	j->out[0] = data->handle;
	for (unsigned n = 0; n < MAX_JOBS; n++) {
		struct drm_rocket_job *job = &j->job[n];

		job->task_count = h[4 + n] % (MAX_TASKS + 1);
		for (unsigned t = 0; t < job->task_count; t++) {
			fuzz_take(in, &j->task[n][t], sizeof(j->task[n][t]));
			if (j->task[n][t].regcmd < REGCMD_BYTES)
				j->task[n][t].regcmd += (uint32_t)regcmd->dma_addr;
		}
		job->tasks = (uintptr_t)j->task[n];
		job->task_struct_size = h[0] & 0x20 ? 4 : sizeof(struct drm_rocket_task);
		job->in_bo_handles = (uintptr_t)j->in;
		job->in_bo_handle_count = h[3] % 4;
		job->out_bo_handles = (uintptr_t)j->out;
		job->out_bo_handle_count = 1;
	}
}

static void submit(struct rb_sim_kmod *k, const uint8_t h[HEADER_BYTES], struct jobs *j)
{
	struct drm_rocket_submit s = {
	    .jobs = (uintptr_t)j->job,
	    .job_count = h[1] % (MAX_JOBS + 1),
	    .job_struct_size = h[0] & 0x10 ? 8 : sizeof(struct drm_rocket_job),
	};
	int ret = rb_sim_kmod_ioctl(k, DRM_IOCTL_ROCKET_SUBMIT, &s);

	/* A refused submit says why in its return value only: it must be an errno. */
	FUZZ_CHECK(ret <= 0 && ret > -4096);
}

/* Waits for the data BO like a driver before reading C, as the header says. */
static void wait_data(struct rb_sim_kmod *k, const uint8_t h[HEADER_BYTES], const struct bo *data)
{
	struct drm_rocket_prep_bo prep = {.handle = data->handle};
	struct drm_rocket_fini_bo fini = {.handle = data->handle};
	int64_t now = (int64_t)rb_sim_kmod_now_ns(k);
	int ret;

	if (h[0] & 0x40)
		FUZZ_CHECK(rb_sim_kmod_ioctl(k, DRM_IOCTL_ROCKET_FINI_BO, &fini) <= 0);
	prep.timeout_ns = h[0] & 8 ? now : now + (1 + h[2] % 16) * MS_NS;
	ret = rb_sim_kmod_ioctl(k, DRM_IOCTL_ROCKET_PREP_BO, &prep);
	FUZZ_CHECK(ret == 0 || ret == -ETIMEDOUT || ret == -EBUSY || ret == -ENOENT ||
		   ret == -EINVAL);
	/* The jobs of one fd run one after another, each ending at the latest at the
	 * kernel's 500 ms job timeout: two submits of MAX_JOBS jobs end within 3 s. */
	prep.timeout_ns = (int64_t)rb_sim_kmod_now_ns(k) + 2 * MAX_JOBS * 500 * MS_NS + MS_NS;
	ret = rb_sim_kmod_ioctl(k, DRM_IOCTL_ROCKET_PREP_BO, &prep);
	FUZZ_CHECK(ret == 0 || ret == -ENOENT || ret == -EINVAL);
	rb_sim_kmod_ioctl(k, DRM_IOCTL_ROCKET_FINI_BO, &fini);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	static struct jobs j;
	struct fuzz_input in = {bytes, size};
	struct rb_sim_config cfg;
	struct rb_sim_kmod *k;
	struct bo regcmd = {0}, data = {0};
	uint8_t h[HEADER_BYTES];
	uint64_t t0;

	fuzz_take(&in, h, sizeof(h));
	rb_sim_config_init(&cfg);
	cfg.threads = 1;
	cfg.mem_budget = 1u << 20;
	cfg.model_only = h[0] & 1;
	k = rb_sim_kmod_rocket_new(&cfg);
	FUZZ_CHECK(k != NULL);
	FUZZ_CHECK(bo_create(k, REGCMD_BYTES, &regcmd) == 0);
	FUZZ_CHECK(bo_create(k, DATA_BYTES, &data) == 0);
	build_jobs(&in, h, &regcmd, &data, &j);
	fuzz_take(&in, regcmd.map, in.left < REGCMD_BYTES ? in.left : REGCMD_BYTES);
	t0 = rb_sim_kmod_now_ns(k);
	submit(k, h, &j);
	if (h[0] & 2)
		submit(k, h, &j);
	if (h[0] & 4)
		bo_close(k, &data);
	else
		wait_data(k, h, &data);
	FUZZ_CHECK(rb_sim_kmod_now_ns(k) >= t0);
	FUZZ_CHECK(strlen(rb_sim_kmod_last_fault(k)) < 512);
	bo_close(k, &data);
	bo_close(k, &regcmd);
	rb_sim_kmod_free(k);
	return 0;
}
