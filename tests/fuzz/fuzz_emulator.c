/* Fuzz target: the emulated NPU (src/sim/npu.c, hw_*.c) fed arbitrary programs through
 * the emulated kernel's ioctls (src/sim/kmod_rknpu.c), as a userspace driver would.
 *
 * Input: a 16-byte header, task descriptors, then the regcmd program:
 *   [0]      bit 0 model_only, bit 1 non-blocking with an out-fence, bit 2 PINGPONG,
 *            bit 3 a second submit of the same tasks after the first (FENCE_IN when
 *            non-blocking); then, with the jobs in flight: bit 4 ACT_RESET, bit 5
 *            the data buffer destroyed, bit 6 the task buffer destroyed
 *   [1]      core_mask (bits 0-2; bits 3-5: of the second submit)
 *   [2]      task_start (% 8)         [3] task_number (% 9)
 *   [4]      timeout, 1 + x % 16 ms   [5] descriptors that follow (% 9)
 *   [6..15]  subcore_task[0..4]: start (% 8), number (% 9) byte pairs
 *   then     40-byte struct rknpu_task each; a regcmd_addr below REGCMD_BYTES is an
 *            offset into the program buffer, any other value is used as it is
 *   rest     the program: little-endian 64-bit words copied into the program buffer
 * Missing bytes read as zero. Every exec gets a fresh kernel, so buffer addresses are
 * the same every time (program 0xffffc000, data 0xffff7000: the seeds are programs
 * written for them, A at data + 0, B at + 0x1000, C at + 0x3000), and
 * sizes stay small: at most 8 tasks per part over a 16 KiB data buffer, so one exec
 * does at most a few million multiply-adds. Time is virtual: timeouts cost nothing. */
#include <string.h>

#include "core/error.h"
#include "uapi/drm/rknpu_ioctl.h"
#include "fuzz.h"
#include "sim/sim.h"

#define HEADER_BYTES 16
#define MAX_DESC     8
#define REGCMD_BYTES (16u << 10)
#define DATA_BYTES   (16u << 10)
#define TASK_BYTES   (MAX_DESC * sizeof(struct rknpu_task))

struct bo {
	uint32_t handle;
	uint64_t size, obj_addr, dma_addr;
	void *map;
};

static int bo_create(struct rb_sim_kmod *k, uint64_t size, uint32_t flags, struct bo *bo)
{
	struct rknpu_mem_create c = {.size = size, .flags = flags};
	struct rknpu_mem_map m = {0};
	int ret = rb_sim_kmod_ioctl(k, DRM_IOCTL_RKNPU_MEM_CREATE, &c);

	if (ret)
		return ret;
	*bo = (struct bo){c.handle, c.size, c.obj_addr, c.dma_addr, NULL};
	m.handle = c.handle;
	ret = rb_sim_kmod_ioctl(k, DRM_IOCTL_RKNPU_MEM_MAP, &m);
	return ret ? ret : rb_sim_kmod_mmap(k, bo->size, m.offset, &bo->map);
}

static void bo_destroy(struct rb_sim_kmod *k, struct bo *bo)
{
	struct rknpu_mem_destroy d = {.handle = bo->handle};

	if (bo->map)
		rb_sim_kmod_munmap(k, bo->map, bo->size);
	if (bo->handle)
		rb_sim_kmod_ioctl(k, DRM_IOCTL_RKNPU_MEM_DESTROY, &d);
	memset(bo, 0, sizeof(*bo));
}

/* Descriptors into the task buffer, the program into its buffer, a fixed pattern of
 * fp16/int8 values (NaN and infinities included) as data. */
static void fill(struct fuzz_input *in, struct bo *regcmd, struct bo *tasks, struct bo *data,
		 unsigned ndesc)
{
	struct rknpu_task *t = tasks->map;
	static uint8_t pattern[DATA_BYTES];

	if (!pattern[1]) /* computed once: the loop's coverage would slow every exec */
		for (uint32_t i = 0; i < DATA_BYTES; i++)
			pattern[i] = (uint8_t)(i * 0x9e3779b1u >> 24);
	for (unsigned i = 0; i < ndesc; i++) {
		fuzz_take(in, &t[i], sizeof(t[i]));
		if (t[i].regcmd_addr < REGCMD_BYTES)
			t[i].regcmd_addr += regcmd->dma_addr;
	}
	fuzz_take(in, regcmd->map, in->left < REGCMD_BYTES ? in->left : REGCMD_BYTES);
	memcpy(data->map, pattern, DATA_BYTES);
}

static int submit(struct rb_sim_kmod *k, const struct rknpu_submit *tmpl, int fence_in)
{
	struct rknpu_submit s = *tmpl;
	int ret;

	if (fence_in >= 0) {
		s.flags |= RKNPU_JOB_FENCE_IN;
		s.fence_fd = fence_in;
	}
	ret = rb_sim_kmod_ioctl(k, DRM_IOCTL_RKNPU_SUBMIT, &s);
	FUZZ_CHECK(ret <= 0);
	if (ret || !(s.flags & RKNPU_JOB_NONBLOCK))
		return -1;
	return s.fence_fd;
}

/* What a caller may do while its jobs are in flight (they run at the next wait). */
static void meddle(struct rb_sim_kmod *k, uint8_t flags, struct bo *tasks, struct bo *data)
{
	struct rknpu_action reset = {.flags = RKNPU_ACT_RESET};

	if (flags & 0x10)
		FUZZ_CHECK(rb_sim_kmod_ioctl(k, DRM_IOCTL_RKNPU_ACTION, &reset) <= 0);
	if (flags & 0x20)
		bo_destroy(k, data);
	if (flags & 0x40)
		bo_destroy(k, tasks);
}

static void run(struct rb_sim_kmod *k, const uint8_t h[HEADER_BYTES], struct bo *tasks,
		struct bo *data)
{
	struct rknpu_submit s = {
	    .flags = RKNPU_JOB_PC,
	    .timeout = 1u + h[4] % 16u,
	    .task_start = h[2] % MAX_DESC,
	    .task_number = h[3] % (MAX_DESC + 1),
	    .task_obj_addr = tasks->obj_addr,
	    .core_mask = h[1] & 7u,
	    .fence_fd = -1,
	};
	int fence, second = -1;
	uint64_t t0 = rb_sim_kmod_now_ns(k);

	if (h[0] & 2)
		s.flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	if (h[0] & 4)
		s.flags |= RKNPU_JOB_PINGPONG;
	for (int i = 0; i < RKNPU_MAX_SUBCORE_TASKS; i++)
		s.subcore_task[i] = (struct rknpu_subcore_task){h[6 + 2 * i] % MAX_DESC,
								h[7 + 2 * i] % (MAX_DESC + 1)};
	fence = submit(k, &s, -1);
	s.core_mask = (h[1] >> 3) & 7u;
	if (h[0] & 8)
		second = submit(k, &s, fence);
	meddle(k, h[0], tasks, data);
	if (second >= 0) {
		rb_sim_kmod_wait(k, second, 1000);
		rb_sim_kmod_close_fd(k, second);
	}
	if (fence >= 0) {
		rb_sim_kmod_wait(k, fence, 1000);
		rb_sim_kmod_close_fd(k, fence);
	}
	FUZZ_CHECK(rb_sim_kmod_now_ns(k) >= t0);
	FUZZ_CHECK(strlen(rb_sim_kmod_last_fault(k)) < 512);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input in = {data, size};
	struct rb_sim_config cfg;
	struct rb_sim_kmod *k;
	struct bo regcmd = {0}, tasks = {0}, buf = {0};
	uint8_t h[HEADER_BYTES];

	fuzz_take(&in, h, sizeof(h));
	rb_sim_config_init(&cfg);
	cfg.threads = 1;
	cfg.mem_budget = 1u << 20;
	cfg.model_only = h[0] & 1;
	k = rb_sim_kmod_rknpu_new(&cfg);
	FUZZ_CHECK(k != NULL);
	/* The order fixes the addresses the seed programs use. */
	FUZZ_CHECK(bo_create(k, REGCMD_BYTES, 0, &regcmd) == 0);
	FUZZ_CHECK(bo_create(k, TASK_BYTES, RKNPU_MEM_KERNEL_MAPPING, &tasks) == 0);
	FUZZ_CHECK(bo_create(k, DATA_BYTES, 0, &buf) == 0);
	fill(&in, &regcmd, &tasks, &buf, h[5] % (MAX_DESC + 1));
	run(k, h, &tasks, &buf);
	bo_destroy(k, &buf);
	bo_destroy(k, &tasks);
	bo_destroy(k, &regcmd);
	rb_sim_kmod_free(k);
	return 0;
}
