/* The emulated CPU cache (issue 32, item 2; rb_sim_config.cpu_cache): what the CPU
 * writes into a cached buffer object reaches the NPU only through the driver's sync to
 * the device (rknpu MEM_SYNC, rocket FINI_BO), and what the NPU writes reaches the CPU
 * only through the sync from it (MEM_SYNC, PREP_BO). The job runner syncs where the
 * drivers ask, so matmuls verify on both kernels; with one sync removed
 * (RKNN_BENCH_DEBUG=fault_no_sync: A is not synced after packing) the NPU reads stale A
 * and the result is wrong, while the coherent emulator of before (cpu_cache off) would
 * have passed it. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/debug.h"
#include "core/error.h"
#include "numeric/inputs.h"
#include "numeric/ref.h"
#include "dev/rknpu.h"
#include "dev/transport.h"
#include "npu/job.h"
#include "sim/sim.h"

static int open_dev(struct rb_npu_device *dev, bool rocket, bool cache)
{
	struct rb_sim_config cfg;

	rb_sim_config_init(&cfg);
	cfg.cpu_cache = cache;
	return rocket ? rb_npu_device_open_sim_rocket(dev, &cfg)
		      : rb_npu_device_open_sim(dev, &cfg);
}

/* Runs 64x256x128 fp16 on the cores of mask twice (the second run sees what the first
 * left) on a fresh device; true if both results equal the reference exactly. */
static bool matmul_ok(bool rocket, bool cache, unsigned mask)
{
	struct rb_shape s = {64, 256, 128, RB_DTYPE_FP16};
	struct rb_npu_device dev;
	struct rb_plan_config cfg;
	struct rb_plan plan;
	struct rb_inputs in;
	struct rb_npu_job *job;
	struct rb_npu_job_times t;
	void *c = rb_output_alloc(&s), *ref = rb_output_alloc(&s);
	bool ok = true;

	assert_non_null(c);
	assert_non_null(ref);
	assert_int_equal(open_dev(&dev, rocket, cache), 0);
	rb_plan_config_default(&cfg, &s, mask);
	cfg.mainline = rocket;
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	assert_int_equal(rb_inputs_init(&in, &s, 7, RB_DATA_EXACT), 0);
	assert_int_equal(rb_ref_gemm(&s, in.a, in.b, ref, 1), 0);
	assert_int_equal(rb_npu_job_new(&job, &dev, &plan, &in, RB_LAUNCH_FENCES), 0);
	for (int run = 0; run < 2; run++) {
		memset(c, 0, (size_t)s.m * (size_t)s.n * 4);
		assert_int_equal(rb_npu_job_run(job, c, &t), 0);
		ok = ok && memcmp(c, ref, (size_t)s.m * (size_t)s.n * 4) == 0;
	}
	rb_npu_job_free(job);
	rb_plan_release(&plan);
	rb_inputs_release(&in);
	rb_npu_device_close(&dev);
	free(c);
	free(ref);
	return ok;
}

static void test_syncs_verify(void **state)
{
	(void)state;
	rb_debug_set(NULL);
	assert_true(matmul_ok(false, true, 0x7));
	assert_true(matmul_ok(true, true, 0x7));
	assert_true(matmul_ok(true, true, 0x1));
}

/* One sync dropped: wrong under the cache, unnoticed without it. (On rocket with
 * several cores FINI_BO's call is also where the driver fills the other cores' copies
 * of A, so a one-core plan shows the cache alone.) */
static void test_missing_sync_fails(void **state)
{
	(void)state;
	rb_debug_set("fault_no_sync");
	assert_false(matmul_ok(false, true, 0x7));
	assert_false(matmul_ok(true, true, 0x1));
	assert_false(matmul_ok(true, true, 0x7));
	assert_true(matmul_ok(false, false, 0x7));
	assert_true(matmul_ok(true, false, 0x1));
	rb_debug_set(NULL);
}

/* The kernel level: a CPU write is not in memory before MEM_SYNC to the device, an NPU
 * (here: memory) write not in the CPU's view before MEM_SYNC from it; a BO made without
 * CACHEABLE has no cache. */
static void test_rknpu_sync_semantics(void **state)
{
	struct rb_transport tr;
	struct rb_sim_config cfg;
	struct rknpu_mem_create mc = {.size = 4096, .flags = RKNPU_MEM_CACHEABLE};
	struct rknpu_mem_map mm = {0};
	struct rknpu_mem_sync sync = {0};
	struct rknpu_mem_create plain = {.size = 4096};
	struct rknpu_mem_map pm = {0};
	uint32_t *cpu, *other;

	(void)state;
	rb_sim_config_init(&cfg);
	assert_true(cfg.cpu_cache);
	assert_int_equal(rb_transport_open_sim_rknpu(&tr, &cfg), 0);
	assert_int_equal(rb_transport_ioctl(&tr, DRM_IOCTL_RKNPU_MEM_CREATE, &mc), 0);
	mm.handle = mc.handle;
	assert_int_equal(rb_transport_ioctl(&tr, DRM_IOCTL_RKNPU_MEM_MAP, &mm), 0);
	assert_int_equal(tr.ops->mmap(tr.priv, 4096, mm.offset, (void **)&cpu), 0);
	/* a second mapping is the same CPU view (the same cache) */
	assert_int_equal(tr.ops->mmap(tr.priv, 4096, mm.offset, (void **)&other), 0);
	assert_ptr_equal(cpu, other);
	cpu[0] = 0x12345678;
	sync.obj_addr = mc.obj_addr;
	sync.size = 4096;
	sync.flags = RKNPU_MEM_SYNC_FROM_DEVICE; /* invalidate: the write is lost */
	assert_int_equal(rb_transport_ioctl(&tr, DRM_IOCTL_RKNPU_MEM_SYNC, &sync), 0);
	assert_int_equal(cpu[0], 0);
	cpu[0] = 0x12345678;
	sync.flags = RKNPU_MEM_SYNC_TO_DEVICE;
	assert_int_equal(rb_transport_ioctl(&tr, DRM_IOCTL_RKNPU_MEM_SYNC, &sync), 0);
	cpu[0] = 0; /* only in the cache now */
	sync.flags = RKNPU_MEM_SYNC_FROM_DEVICE;
	assert_int_equal(rb_transport_ioctl(&tr, DRM_IOCTL_RKNPU_MEM_SYNC, &sync), 0);
	assert_int_equal(cpu[0], 0x12345678); /* what reached memory */
	tr.ops->munmap(tr.priv, cpu, 4096);
	tr.ops->munmap(tr.priv, other, 4096);
	/* not cacheable: one memory, no sync needed */
	assert_int_equal(rb_transport_ioctl(&tr, DRM_IOCTL_RKNPU_MEM_CREATE, &plain), 0);
	pm.handle = plain.handle;
	assert_int_equal(rb_transport_ioctl(&tr, DRM_IOCTL_RKNPU_MEM_MAP, &pm), 0);
	assert_int_equal(tr.ops->mmap(tr.priv, 4096, pm.offset, (void **)&cpu), 0);
	cpu[0] = 7;
	sync.obj_addr = plain.obj_addr;
	sync.flags = RKNPU_MEM_SYNC_FROM_DEVICE;
	assert_int_equal(rb_transport_ioctl(&tr, DRM_IOCTL_RKNPU_MEM_SYNC, &sync), 0);
	assert_int_equal(cpu[0], 7);
	tr.ops->munmap(tr.priv, cpu, 4096);
	rb_transport_close(&tr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_syncs_verify),
	    cmocka_unit_test(test_missing_sync_fails),
	    cmocka_unit_test(test_rknpu_sync_semantics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
