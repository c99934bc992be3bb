/* Tests of the mainline rocket userspace driver (src/dev/rocket.c) through the sim
 * transport, of the emulated rocket kernel behind it (src/sim/kmod_rocket.c) and of the
 * job runner on rocket: the ioctl numbers of npu-facts §d.2, the BO lifecycle, PREP_BO's
 * deadline, one task per kick, the fd's jobs on one core, the MRDMA trap, the 500 ms
 * job timeout with its core reset, and the runner's retry after a timeout. */
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
#include "core/inputs.h"
#include "core/ref.h"
#include "dev/rocket.h"
#include "npu/job.h"
#include "npu/regcmd.h"
#include "hw/regs.h"
#include "sim/sim.h"

#define MS_NS INT64_C(1000000)

/* ---- the ABI ---- */

static void expect_ioctl(unsigned long cmd, unsigned nr, size_t size, unsigned dir,
			 unsigned long number)
{
	assert_int_equal(cmd, number);
	assert_int_equal(_IOC_TYPE(cmd), 'd');
	assert_int_equal(_IOC_NR(cmd), DRM_COMMAND_BASE + nr);
	assert_int_equal(_IOC_SIZE(cmd), size);
	assert_int_equal(_IOC_DIR(cmd), dir);
}

static void test_ioctl_numbers(void **state)
{
	(void)state;
	expect_ioctl(DRM_IOCTL_ROCKET_CREATE_BO, 0x00, 24, _IOC_READ | _IOC_WRITE, 0xC0186440u);
	expect_ioctl(DRM_IOCTL_ROCKET_SUBMIT, 0x01, 24, _IOC_WRITE, 0x40186441u);
	expect_ioctl(DRM_IOCTL_ROCKET_PREP_BO, 0x02, 16, _IOC_WRITE, 0x40106442u);
	expect_ioctl(DRM_IOCTL_ROCKET_FINI_BO, 0x03, 8, _IOC_WRITE, 0x40086443u);
	assert_int_equal(sizeof(struct drm_rocket_task), 8);
	assert_int_equal(sizeof(struct drm_rocket_job), 40);
	assert_int_equal(offsetof(struct drm_rocket_job, out_bo_handle_count), 36);
	assert_int_equal(offsetof(struct drm_rocket_create_bo, offset), 16);
	assert_int_equal(offsetof(struct drm_rocket_prep_bo, timeout_ns), 8);
}

/* ---- a driver on the emulated rocket kernel ---- */

struct fx {
	struct rb_rocket dev;
	struct rb_sim_kmod *kmod;
	unsigned kicks[RB_SIM_MAX_CORES]; /* OPERATION_ENABLE = 1 writes per core */
	unsigned task_cons;               /* TASK_CON writes of 0x7001 (one task) */
	uint32_t amounts[8];              /* PC_REGISTER_AMOUNTS written */
	unsigned n_amounts;
};

static void trace(void *ctx, int core, uint32_t offset, uint32_t value)
{
	struct fx *f = ctx;

	if (offset == rb_reg(RB_REG_PC_OPERATION_ENABLE)->offset && value == 1)
		f->kicks[core]++;
	if (offset == rb_reg(RB_REG_PC_TASK_CON)->offset && value == 0x7001)
		f->task_cons++;
	if (offset == rb_reg(RB_REG_PC_REGISTER_AMOUNTS)->offset && f->n_amounts < 8)
		f->amounts[f->n_amounts++] = value;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct rb_transport tr;

	assert_non_null(f);
	assert_int_equal(rb_transport_open_sim_rocket(&tr, NULL), 0);
	f->kmod = rb_transport_sim_kmod(&tr);
	assert_non_null(f->kmod);
	assert_int_equal(rb_rocket_open(&f->dev, &tr), 0);
	rb_sim_kmod_set_mmio_trace(f->kmod, trace, f);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	rb_rocket_close(&f->dev);
	free(f);
	return 0;
}

static void test_open_checks_name(void **state)
{
	struct fx *f = *state;
	struct rb_transport tr;
	struct rb_rocket dev;

	assert_int_equal(f->dev.drv_version, 0); /* DRM_IOCTL_VERSION 0.0.0, as mainline */
	assert_int_equal(rb_transport_open_sim_rknpu(&tr, NULL), 0);
	assert_int_equal(rb_rocket_open(&dev, &tr), -ENODEV);
	assert_null(tr.ops); /* taken over and closed */
	assert_non_null(strstr(rb_last_error(), "driver is 'rknpu', not 'rocket'"));
}

static void test_bo_lifecycle(void **state)
{
	struct fx *f = *state;
	struct rb_rocket_bo a, b;
	struct drm_gem_close close;

	assert_int_equal(rb_rocket_bo_create(&f->dev, 5000, &a), 0);
	assert_int_equal(rb_rocket_bo_create(&f->dev, 4096, &b), 0);
	assert_int_equal(a.handle, 1);
	assert_int_equal(b.handle, 2);
	assert_true(a.dma_addr != b.dma_addr);
	memset(a.map, 0x5a, a.size);
	assert_int_equal(rb_rocket_bo_fini(&f->dev, &a), 0);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &a, 0), 0); /* idle: ready at once */
	rb_rocket_bo_destroy(&f->dev, &a);
	assert_int_equal(a.handle, 0);
	/* the handle is gone: every ioctl naming it says so */
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &(struct rb_rocket_bo){.handle = 1}, 0),
			 -ENOENT);
	assert_non_null(strstr(rb_last_error(), "ROCKET_PREP_BO of handle 1 failed"));
	memset(&close, 0, sizeof(close));
	close.handle = 1;
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_GEM_CLOSE, &close), -EINVAL);
	assert_int_equal(rb_rocket_bo_create(&f->dev, 64, &a), 0);
	assert_int_equal(a.handle, 1); /* the lowest free handle again */
	rb_rocket_bo_destroy(&f->dev, &a);
	rb_rocket_bo_destroy(&f->dev, &b);
	assert_int_equal(rb_rocket_bo_create(&f->dev, 0, &a), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "ROCKET_CREATE_BO of 0 bytes failed"));
}

/* A one-task int8 matmul (M = 4, K = 32, N = 32) in its own BOs. */
struct mm {
	struct rb_rocket_bo a, b, c, prog;
	struct drm_rocket_task task;
	uint32_t in[3], out[1];
};

static void mm_build(struct fx *f, struct mm *m, bool mainline)
{
	struct rb_npu_task t = {.dtype = RB_DTYPE_INT8,
				.out = RB_PREC_INT32,
				.m = 4,
				.k = 32,
				.n = 32,
				.a_height = 4,
				.c_height = 4,
				.data_banks = 1,
				.weight_banks = 11,
				.mainline = mainline};
	struct rb_regcmd rc;
	struct rb_regcmd_layout lay;

	assert_int_equal(rb_rocket_bo_create(&f->dev, 4096, &m->a), 0);
	assert_int_equal(rb_rocket_bo_create(&f->dev, 4096, &m->b), 0);
	assert_int_equal(rb_rocket_bo_create(&f->dev, 4096, &m->c), 0);
	assert_int_equal(rb_rocket_bo_create(&f->dev, 4096, &m->prog), 0);
	t.a_addr = m->a.dma_addr;
	t.b_addr = m->b.dma_addr;
	t.c_addr = m->c.dma_addr;
	rb_regcmd_init(&rc);
	assert_int_equal(rb_regcmd_build_chain(&rc, &t, 1, m->prog.dma_addr, &lay), 0);
	memcpy(m->prog.map, rc.words, rc.count * 8);
	rb_regcmd_release(&rc);
	memset(m->c.map, 0xff, m->c.size);
	m->task.regcmd = lay.addr;
	m->task.regcmd_count = lay.words;
	m->in[0] = m->a.handle;
	m->in[1] = m->b.handle;
	m->in[2] = m->prog.handle;
	m->out[0] = m->c.handle;
}

static struct rb_rocket_job mm_job(const struct mm *m)
{
	return (struct rb_rocket_job){.tasks = &m->task,
				      .n_tasks = 1,
				      .in_handles = m->in,
				      .n_in = 3,
				      .out_handles = m->out,
				      .n_out = 1};
}

static void mm_free(struct fx *f, struct mm *m)
{
	rb_rocket_bo_destroy(&f->dev, &m->a);
	rb_rocket_bo_destroy(&f->dev, &m->b);
	rb_rocket_bo_destroy(&f->dev, &m->c);
	rb_rocket_bo_destroy(&f->dev, &m->prog);
}

/* One task per kick with TASK_CON = 0x7001 and amount = (count + 1)/2 − 1; the three
 * jobs of one SUBMIT on one fd all run on one core, one after another (§d.2). */
static void test_submit_one_task_per_kick(void **state)
{
	struct fx *f = *state;
	struct mm m;
	struct rb_rocket_job jobs[3];
	uint64_t t0;

	mm_build(f, &m, true);
	for (int i = 0; i < 3; i++)
		jobs[i] = mm_job(&m);
	t0 = rb_sim_kmod_now_ns(f->kmod);
	assert_int_equal(rb_rocket_submit(&f->dev, jobs, 3), 0);
	assert_int_equal(f->kicks[0] + f->kicks[1] + f->kicks[2], 0); /* queued, not run */
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	assert_true(rb_sim_kmod_now_ns(f->kmod) > t0);
	assert_int_equal(f->kicks[0], 3);
	assert_int_equal(f->kicks[1] + f->kicks[2], 0);
	assert_int_equal(f->task_cons, 3);
	assert_int_equal(f->amounts[0], (m.task.regcmd_count + 1) / 2 - 1);
	/* C[0][0] = Σ a·b: no longer the canary */
	assert_int_not_equal(*(uint32_t *)m.c.map, 0xffffffffu);
	assert_string_equal(rb_sim_kmod_last_fault(f->kmod), "");
	mm_free(f, &m);
}

static void test_submit_checks(void **state)
{
	struct fx *f = *state;
	struct mm m;
	struct rb_rocket_job job;

	mm_build(f, &m, true);
	job = mm_job(&m);
	job.n_tasks = 0;
	assert_int_equal(rb_rocket_submit(&f->dev, &job, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "ROCKET_SUBMIT of 1 jobs failed"));
	job = mm_job(&m);
	m.out[0] = 77; /* no such BO */
	assert_int_equal(rb_rocket_submit(&f->dev, &job, 1), -ENOENT);
	assert_int_equal(f->kicks[0] + f->kicks[1] + f->kicks[2], 0);
	mm_free(f, &m);
}

/* The vendor variant hangs under rocket (§a.6): the job times out at 500 ms and its
 * core is reset; its fence signals anyway, so PREP_BO succeeds with C untouched. A
 * deadline before that is -ETIMEDOUT, one already passed -EBUSY. */
static void test_mrdma_trap_timeout(void **state)
{
	struct fx *f = *state;
	struct mm m;
	struct rb_rocket_job job;
	struct drm_rocket_prep_bo prep;
	uint64_t t0;

	mm_build(f, &m, false);
	job = mm_job(&m);
	assert_int_equal(rb_rocket_submit(&f->dev, &job, 1), 0);
	memset(&prep, 0, sizeof(prep));
	prep.handle = m.c.handle;
	prep.timeout_ns = (int64_t)rb_sim_kmod_now_ns(f->kmod);
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_ROCKET_PREP_BO, &prep), -EBUSY);
	t0 = rb_sim_kmod_now_ns(f->kmod);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 100), -ETIMEDOUT);
	assert_int_equal(rb_sim_kmod_now_ns(f->kmod) - t0, 100 * MS_NS);
	assert_non_null(strstr(rb_last_error(), "did not finish within 100 ms"));
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	assert_true(rb_sim_kmod_now_ns(f->kmod) - t0 >= 500 * MS_NS);
	assert_int_equal(*(uint32_t *)m.c.map, 0xffffffffu);
	assert_non_null(strstr(rb_sim_kmod_last_fault(f->kmod), "does not run DPU_RDMA"));
	assert_non_null(strstr(rb_sim_kmod_log(f->kmod), "job timed out after 500 ms, core reset"));
	mm_free(f, &m);
	/* the core works again after its reset */
	mm_build(f, &m, true);
	job = mm_job(&m);
	assert_int_equal(rb_rocket_submit(&f->dev, &job, 1), 0);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	assert_int_not_equal(*(uint32_t *)m.c.map, 0xffffffffu);
	mm_free(f, &m);
}

/* ---- the job runner on both drivers ---- */

static void run_matmul(struct rb_npu_device *dev, enum rb_npu_launch launch, int expect)
{
	struct rb_shape s = {96, 256, 64, RB_DTYPE_INT8};
	struct rb_plan_config cfg;
	struct rb_plan plan;
	struct rb_inputs in;
	struct rb_npu_job *job;
	struct rb_npu_job_times t;
	void *c = rb_output_alloc(&s), *ref = rb_output_alloc(&s);

	assert_non_null(c);
	assert_non_null(ref);
	rb_plan_config_default(&cfg, &s, 0x7);
	cfg.mainline = dev->driver == RB_DRIVER_ROCKET;
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_EXACT), 0);
	assert_int_equal(rb_ref_gemm(&s, in.a, in.b, ref, 1), 0);
	assert_int_equal(rb_npu_job_new(&job, dev, &plan, &in, launch), 0);
	assert_int_equal(rb_npu_job_run(job, c, &t), expect);
	if (expect == 0) {
		assert_memory_equal(c, ref, (size_t)s.m * (size_t)s.n * 4);
		assert_true(t.device_us > 0);
	}
	rb_npu_job_free(job);
	rb_plan_release(&plan);
	rb_inputs_release(&in);
	free(c);
	free(ref);
}

static void test_runner_rocket(void **state)
{
	struct rb_npu_device dev;
	struct rb_npu_job *job = NULL;
	struct rb_plan_config cfg;
	struct rb_shape s = {8, 64, 64, RB_DTYPE_INT8};
	struct rb_plan plan;

	(void)state;
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, NULL), 0);
	assert_int_equal(dev.driver, RB_DRIVER_ROCKET);
	run_matmul(&dev, RB_LAUNCH_FENCES, 0);
	run_matmul(&dev, RB_LAUNCH_THREADS, 0);
	rb_plan_config_default(&cfg, &s, 0x7);
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	assert_int_equal(rb_npu_job_new(&job, &dev, &plan, NULL, RB_LAUNCH_MULTICORE), -EINVAL);
	assert_null(job);
	assert_non_null(strstr(rb_last_error(), "rocket has none: use fences or threads"));
	rb_plan_release(&plan);
	rb_npu_device_close(&dev);
}

/* fault_hang_once: each job's first launch hangs; the runner resets and retries once,
 * and the emulated kernel's log shows the timeout and the reset. */
static void test_runner_retry(void **state)
{
	struct rb_npu_device dev;
	struct rb_sim_config cfg;
	const char *log;

	(void)state;
	rb_debug_set("fault_hang_once");
	assert_int_equal(rb_npu_device_open_sim(&dev, NULL), 0);
	run_matmul(&dev, RB_LAUNCH_FENCES, 0);
	log = rb_sim_kmod_log(rb_transport_sim_kmod(rb_npu_device_transport(&dev)));
	assert_non_null(strstr(log, "unknown target 0x0003"));
	assert_non_null(strstr(log, "rknpu: ACT_RESET: soft reset of every core"));
	assert_true(strstr(log, "unknown target") < strstr(log, "ACT_RESET"));
	rb_npu_device_close(&dev);

	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, NULL), 0);
	run_matmul(&dev, RB_LAUNCH_FENCES, 0);
	log = rb_sim_kmod_log(rb_transport_sim_kmod(rb_npu_device_transport(&dev)));
	assert_non_null(strstr(log, "job timed out after 500 ms, core reset"));
	rb_npu_device_close(&dev);

	/* a fault that stays: the retry fails too, and the message says so (the corrupted
	 * program passes the validator only when told to skip it) */
	rb_debug_set("fault_word");
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, NULL), 0);
	dev.unsafe_skip_validation = true;
	run_matmul(&dev, RB_LAUNCH_FENCES, -ETIMEDOUT);
	assert_non_null(strstr(rb_last_error(), "after a reset and one retry"));
	assert_non_null(strstr(rb_last_error(), "never wrote its output"));
	rb_npu_device_close(&dev);
	/* timing only (C is never written): the kernel's log tells a dropped job */
	rb_sim_config_init(&cfg);
	cfg.model_only = true;
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, &cfg), 0);
	dev.unsafe_skip_validation = true;
	run_matmul(&dev, RB_LAUNCH_FENCES, -ETIMEDOUT);
	assert_non_null(strstr(rb_last_error(), "after a reset and one retry"));
	rb_npu_device_close(&dev);
	rb_debug_set(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ioctl_numbers),
	    cmocka_unit_test_setup_teardown(test_open_checks_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_bo_lifecycle, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_one_task_per_kick, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_checks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_mrdma_trap_timeout, setup, teardown),
	    cmocka_unit_test(test_runner_rocket),
	    cmocka_unit_test(test_runner_retry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
