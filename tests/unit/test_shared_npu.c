/* Two users of one vendor NPU (issue 32, item 3). On every non-blocking submit the
 * vendor driver's timeout cleanup compares a job's age in microseconds with its timeout
 * in milliseconds: with the usual 6000 ms, another user's job on that core older than
 * 6 ms is dropped, the NPU soft-reset, its fence never signalled. Two files of the
 * emulated rknpu kernel (two processes' fds on a board) show it; rknn-bench's own lock on
 * the device (dev/npu_device.h) keeps a second rknn-bench off an NPU in use. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "dev/npu_device.h"
#include "dev/rknpu.h"
#include "dev/rocket.h"
#include "npu/regcmd.h"
#include "sim/sim.h"

#define MS_NS      UINT64_C(1000000)
#define LONG_TASKS 400 /* ~22.5 us each (modeled): a job of ~9 ms */

/* One user: a file of the kernel with a long chained job on it. */
struct user {
	struct rb_rknpu dev;
	struct rb_rknpu_bo regcmd, tasks, a, b, c;
	uint32_t n;
};

/* n chained tasks of 64x1024x128 fp16 (4 data banks, 8 weight banks), all on the same
 * buffers. */
static void make_job(struct user *u, uint32_t n)
{
	struct rb_shape s = {64, 1024, 128, RB_DTYPE_FP16};
	struct rb_npu_task *t = calloc(n, sizeof(*t));
	struct rb_regcmd_layout *lay = calloc(n, sizeof(*lay));
	struct rb_regcmd rc;
	uint32_t addr[3];

	assert_non_null(t);
	assert_non_null(lay);
	assert_int_equal(rb_rknpu_bo_create(&u->dev, 64 * 1024 * 2, 0, &u->a), 0);
	assert_int_equal(rb_rknpu_bo_create(&u->dev, 1024 * 128 * 2, 0, &u->b), 0);
	assert_int_equal(rb_rknpu_bo_create(&u->dev, 64 * 128 * 4, 0, &u->c), 0);
	addr[0] = u->a.dma_addr;
	addr[1] = u->b.dma_addr;
	addr[2] = u->c.dma_addr;
	assert_int_equal(rb_regcmd_one_task(&s, NULL, addr, false, &t[0]), 0);
	for (uint32_t i = 1; i < n; i++)
		t[i] = t[0];
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, t, n, 0, lay), 0);
	assert_int_equal(rb_rknpu_bo_create(&u->dev, rc.count * 8, 0, &u->regcmd), 0);
	rb_regcmd_release(&rc);
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, t, n, u->regcmd.dma_addr, lay), 0);
	memcpy(u->regcmd.map, rc.words, rc.count * 8);
	rb_regcmd_release(&rc);
	assert_int_equal(rb_rknpu_bo_create(&u->dev, n * sizeof(struct rknpu_task),
					    RKNPU_MEM_KERNEL_MAPPING, &u->tasks),
			 0);
	for (uint32_t i = 0; i < n; i++)
		((struct rknpu_task *)u->tasks.map)[i] = (struct rknpu_task){
		    .enable_mask = 0xd,
		    .int_mask = 0x300,
		    .int_clear = 0x1ffff,
		    .regcfg_amount = lay[i].regcfg_amount,
		    .regcmd_addr = lay[i].addr,
		};
	u->n = n;
	free(t);
	free(lay);
}

static struct rknpu_submit submit_of(const struct user *u, uint32_t core, bool nonblock)
{
	struct rknpu_submit s;

	memset(&s, 0, sizeof(s));
	s.flags = RKNPU_JOB_PC | RKNPU_JOB_PINGPONG;
	if (nonblock)
		s.flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	s.timeout = 6000; /* ms: what rknn-bench and MTX ask */
	s.task_number = u->n;
	s.task_obj_addr = u->tasks.obj_addr;
	s.core_mask = 1u << core;
	s.subcore_task[core] = (struct rknpu_subcore_task){0, u->n};
	s.fence_fd = -1;
	return s;
}

static void user_free(struct user *u)
{
	rb_rknpu_bo_destroy(&u->dev, &u->regcmd);
	rb_rknpu_bo_destroy(&u->dev, &u->tasks);
	rb_rknpu_bo_destroy(&u->dev, &u->a);
	rb_rknpu_bo_destroy(&u->dev, &u->b);
	rb_rknpu_bo_destroy(&u->dev, &u->c);
	rb_rknpu_close(&u->dev);
}

/* User B starts its ~9 ms job on core 0 (non-blocking); user A, 7 ms of host work later,
 * submits a short job on core `a_core`, non-blocking or not. Returns B's fence wait. */
static int scenario(uint32_t a_core, bool a_nonblock, char *log, size_t size)
{
	struct rb_sim_config cfg;
	struct rb_transport tr, tr2;
	struct user b = {0}, a = {0};
	struct rknpu_submit sb, sa;
	struct rb_sim_kmod *k;
	int ret;

	rb_sim_config_init(&cfg);
	cfg.model_only = true; /* timing only: no arithmetic */
	assert_int_equal(rb_transport_open_sim_rknpu(&tr, &cfg), 0);
	assert_int_equal(rb_rknpu_open(&b.dev, &tr), 0);
	k = rb_transport_sim_kmod(&b.dev.tr);
	assert_int_equal(rb_transport_open_file(&b.dev.tr, &tr2), 0);
	assert_int_equal(rb_rknpu_open(&a.dev, &tr2), 0);
	make_job(&b, LONG_TASKS);
	make_job(&a, 1);
	sb = submit_of(&b, 0, true);
	assert_int_equal(rb_rknpu_submit(&b.dev, &sb), 0);
	rb_sim_kmod_spend(k, 7 * MS_NS);
	sa = submit_of(&a, a_core, a_nonblock);
	assert_int_equal(rb_rknpu_submit(&a.dev, &sa), 0);
	if (a_nonblock)
		assert_int_equal(rb_rknpu_fence_wait(&a.dev, sa.fence_fd, 6000), 0);
	ret = rb_rknpu_fence_wait(&b.dev, sb.fence_fd, 6000);
	snprintf(log, size, "%s", rb_sim_kmod_log(k));
	user_free(&a); /* the second file first */
	user_free(&b);
	return ret;
}

static void test_cleanup_drops_other_users_job(void **state)
{
	char log[2048];

	(void)state;
	/* A's non-blocking submit on B's core 7 ms after B's: B is 7000 us old, at least
	 * its timeout of 6000 (ms, read as us), and still running: dropped, its fence
	 * never signals (the wait gives up after its 6000 ms) */
	assert_int_equal(scenario(0, true, log, sizeof(log)), -ETIMEDOUT);
	assert_non_null(strstr(log, "dropped the job"));
	assert_non_null(strstr(log, "timeout of 6000 taken as us"));
	/* a blocking submit does not clean up; another core is not looked at */
	assert_int_equal(scenario(0, false, log, sizeof(log)), 0);
	assert_null(strstr(log, "dropped the job"));
	assert_int_equal(scenario(1, true, log, sizeof(log)), 0);
	assert_null(strstr(log, "dropped the job"));
}

/* A vendor multi-core job is committed once every core of its mask has taken it, and
 * kicked on all together: behind a ~9 ms job on core 1, a job for cores 0+1 starts on
 * neither core before that job ends, so its hardware time (commit to done) is its own
 * (~22 us), not the wait for core 1. */
static void test_multicore_commits_together(void **state)
{
	struct rb_sim_config cfg;
	struct rb_transport tr;
	struct user u = {0}, two = {0};
	struct rknpu_submit busy, both;

	(void)state;
	rb_sim_config_init(&cfg);
	cfg.model_only = true;
	assert_int_equal(rb_transport_open_sim_rknpu(&tr, &cfg), 0);
	assert_int_equal(rb_rknpu_open(&u.dev, &tr), 0);
	make_job(&u, LONG_TASKS);
	busy = submit_of(&u, 1, true);
	assert_int_equal(rb_rknpu_submit(&u.dev, &busy), 0);
	two.dev = u.dev; /* the same file: a one-task job for cores 0 and 1 */
	make_job(&two, 1);
	both = submit_of(&two, 0, false);
	both.core_mask = 0x3;
	both.subcore_task[0] = both.subcore_task[1] = (struct rknpu_subcore_task){0, 1};
	assert_int_equal(rb_rknpu_submit(&u.dev, &both), 0);
	print_message("multicore job behind a %.1f ms job on one of its cores: hw time %.1f us "
		      "(modeled)\n",
		      (double)rb_sim_kmod_longest_job_ns(rb_transport_sim_kmod(&u.dev.tr)) / 1e6,
		      (double)both.hw_elapse_time / 1e3);
	assert_true(both.hw_elapse_time > 0 && both.hw_elapse_time < 1000000);
	assert_int_equal(rb_rknpu_fence_wait(&u.dev, busy.fence_fd, 6000), 0);
	rb_rknpu_bo_destroy(&u.dev, &two.regcmd);
	rb_rknpu_bo_destroy(&u.dev, &two.tasks);
	rb_rknpu_bo_destroy(&u.dev, &two.a);
	rb_rknpu_bo_destroy(&u.dev, &two.b);
	rb_rknpu_bo_destroy(&u.dev, &two.c);
	user_free(&u);
}

/* Rocket as upstream: BOs placed bottom-up from address 0; a job's fence on its output
 * BOs only, so PREP_BO of a BO it only reads does not wait for it (a program that waits
 * on A before rewriting it races the NPU), while PREP_BO of C does. */
static void test_rocket_fences_and_addresses(void **state)
{
	struct rb_shape s = {64, 256, 64, RB_DTYPE_FP16};
	struct rb_sim_config cfg;
	struct rb_transport tr;
	struct rb_rocket dev;
	struct rb_rocket_bo a, b, c, prog;
	struct rb_npu_task t;
	struct rb_regcmd rc;
	struct rb_regcmd_layout lay;
	struct drm_rocket_task task;
	uint32_t in[3], out[1], addr[3];
	struct rb_rocket_job job;
	struct drm_rocket_prep_bo prep;

	(void)state;
	rb_sim_config_init(&cfg);
	assert_int_equal(rb_transport_open_sim_rocket(&tr, &cfg), 0);
	assert_int_equal(rb_rocket_open(&dev, &tr, 1), 0);
	assert_int_equal(rb_rocket_bo_create(&dev, 65536, &a), 0);
	assert_int_equal(rb_rocket_bo_create(&dev, 65536, &b), 0);
	assert_int_equal(rb_rocket_bo_create(&dev, 65536, &c), 0);
	assert_int_equal(rb_rocket_bo_create(&dev, 4096, &prog), 0);
	assert_int_equal(a.dma_addr, 0); /* 0 is a valid NPU address */
	assert_int_equal(b.dma_addr, 65536);
	addr[0] = a.dma_addr;
	addr[1] = b.dma_addr;
	addr[2] = c.dma_addr;
	assert_int_equal(rb_regcmd_one_task(&s, NULL, addr, true, &t), 0);
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, &t, 1, prog.dma_addr, &lay), 0);
	memcpy(prog.map, rc.words, rc.count * 8);
	rb_regcmd_release(&rc);
	assert_int_equal(rb_rocket_bo_fini(&dev, &prog), 0);
	task = (struct drm_rocket_task){lay.addr, lay.words};
	in[0] = a.handle;
	in[1] = b.handle;
	in[2] = prog.handle;
	out[0] = c.handle;
	job = (struct rb_rocket_job){.tasks = &task,
				     .n_tasks = 1,
				     .in_handles = in,
				     .n_in = 3,
				     .out_handles = out,
				     .n_out = 1};
	assert_int_equal(rb_rocket_submit(&dev, 0, &job, 1), 0);
	memset(&prep, 0, sizeof(prep));
	prep.timeout_ns = (int64_t)rb_sim_kmod_now_ns(rb_transport_sim_kmod(&dev.tr)) + 1;
	prep.handle = a.handle; /* read only: no fence to wait for */
	assert_int_equal(rb_transport_ioctl(&dev.tr, DRM_IOCTL_ROCKET_PREP_BO, &prep), 0);
	prep.handle = c.handle; /* written: the job's fence, not done by the deadline */
	assert_int_equal(rb_transport_ioctl(&dev.tr, DRM_IOCTL_ROCKET_PREP_BO, &prep), -ETIMEDOUT);
	assert_int_equal(rb_rocket_bo_prep(&dev, &c, 1000), 0);
	/* the reserved field is checked before the handle, as upstream */
	prep.handle = 999;
	prep.reserved = 1;
	assert_int_equal(rb_transport_ioctl(&dev.tr, DRM_IOCTL_ROCKET_PREP_BO, &prep), -EINVAL);
	rb_rocket_bo_destroy(&dev, &a);
	rb_rocket_bo_destroy(&dev, &b);
	rb_rocket_bo_destroy(&dev, &c);
	rb_rocket_bo_destroy(&dev, &prog);
	rb_rocket_close(&dev);
}

/* rknn-bench takes the node's lock: a second device on the same (emulated) node fails
 * with -EBUSY and a message, and gets it once the first is closed. */
static void test_lock_keeps_second_user_off(void **state)
{
	char node[] = "/tmp/rb-node-XXXXXX";
	struct rb_npu_device one, two;
	int fd;

	(void)state;
	fd = mkstemp(node);
	assert_true(fd >= 0);
	close(fd);
	setenv("RKNN_BENCH_SIM_NODE", node, 1);
	assert_int_equal(rb_npu_device_open_sim(&one, NULL), 0);
	assert_int_equal(rb_npu_device_open_sim(&two, NULL), -EBUSY);
	assert_non_null(strstr(rb_last_error(), "is in use by another rknn-bench process"));
	assert_non_null(strstr(rb_last_error(), "--wait-device"));
	assert_int_equal(rb_npu_device_open_sim_rocket(&two, NULL), -EBUSY);
	rb_npu_device_close(&one);
	assert_int_equal(rb_npu_device_open_sim(&two, NULL), 0);
	rb_npu_device_close(&two);
	unsetenv("RKNN_BENCH_SIM_NODE");
	/* without a node named, each emulated device is its own NPU */
	assert_int_equal(rb_npu_device_open_sim(&one, NULL), 0);
	assert_int_equal(rb_npu_device_open_sim(&two, NULL), 0);
	rb_npu_device_close(&two);
	rb_npu_device_close(&one);
	unlink(node);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cleanup_drops_other_users_job),
	    cmocka_unit_test(test_lock_keeps_second_user_off),
	    cmocka_unit_test(test_multicore_commits_together),
	    cmocka_unit_test(test_rocket_fences_and_addresses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
