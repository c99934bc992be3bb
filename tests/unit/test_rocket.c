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
#include "numeric/inputs.h"
#include "numeric/ref.h"
#include "numeric/verify.h"
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
	unsigned files; /* the driver's fds (setup: 1, setup_cores: one per core) */
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

static int setup_files(void **state, unsigned files)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct rb_transport tr;

	assert_non_null(f);
	f->files = files;
	assert_int_equal(rb_transport_open_sim_rocket(&tr, NULL), 0);
	f->kmod = rb_transport_sim_kmod(&tr);
	assert_non_null(f->kmod);
	assert_int_equal(rb_rocket_open(&f->dev, &tr, f->files), 0);
	rb_sim_kmod_set_mmio_trace(f->kmod, trace, f);
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_files(state, 1);
}

static int setup_cores(void **state)
{
	return setup_files(state, RB_ROCKET_MAX_FILES);
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
	assert_int_equal(rb_rocket_open(&dev, &tr, 1), -ENODEV);
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
	assert_int_equal(
	    rb_rocket_bo_prep(&f->dev, &(struct rb_rocket_bo){.handle = 1, .n_files = 1}, 0),
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

/* A buffer in file 0 alone, then in all three: the new copies get file 0's contents
 * (handed over at once) and each file's own address; no file past the device's. */
static void test_bo_in_some_files(void **state)
{
	struct fx *f = *state;
	struct rb_rocket_bo a, b;
	struct drm_rocket_prep_bo prep = {0};

	assert_int_equal(rb_rocket_bo_create_in(&f->dev, 8192, 1, &a), 0);
	assert_int_equal(a.n_files, 1);
	assert_int_equal(rb_rocket_bo_handle(&a, 1), 0);
	/* file 1 has no buffer at all */
	prep.handle = 1;
	assert_int_equal(
	    rb_transport_ioctl(rb_rocket_file(&f->dev, 1), DRM_IOCTL_ROCKET_PREP_BO, &prep),
	    -ENOENT);
	memset(a.map, 0x5a, a.size);
	assert_int_equal(rb_rocket_bo_fini(&f->dev, &a), 0);
	assert_int_equal(rb_rocket_bo_create_in(&f->dev, 4096, 3, &b), 0);
	assert_int_equal(rb_rocket_bo_extend(&f->dev, &a, 3), 0);
	assert_int_equal(a.n_files, 3);
	for (unsigned fl = 1; fl < 3; fl++) {
		assert_int_not_equal(rb_rocket_bo_handle(&a, fl), 0);
		assert_int_equal(((unsigned char *)a.copy_map[fl - 1])[a.size - 1], 0x5a);
		assert_int_equal(((unsigned char *)a.copy_map[fl - 1])[0], 0x5a);
	}
	/* b came first in files 1 and 2, after a in file 0: their addresses differ */
	assert_int_not_equal(rb_rocket_bo_addr(&a, 0), rb_rocket_bo_addr(&a, 1));
	assert_int_equal(rb_rocket_bo_addr(&a, 1), rb_rocket_bo_addr(&a, 2));
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &a, 0), 0);
	assert_int_equal(rb_rocket_bo_extend(&f->dev, &a, 2), 0); /* has them already */
	assert_int_equal(rb_rocket_bo_extend(&f->dev, &a, 4), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "in 4 files asked for (1 to 3)"));
	rb_rocket_bo_destroy(&f->dev, &a);
	rb_rocket_bo_destroy(&f->dev, &b);
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
	/* the CPU's writes reach the NPU through FINI_BO (the emulated CPU cache) */
	assert_int_equal(rb_rocket_bo_fini(&f->dev, &m->prog), 0);
	assert_int_equal(rb_rocket_bo_fini(&f->dev, &m->c), 0);
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
	assert_int_equal(rb_rocket_submit(&f->dev, 0, jobs, 3), 0);
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

/* A raw SUBMIT of the jobs on file 0, past the driver's own checks. */
static int raw_submit(struct fx *f, struct drm_rocket_job *jobs, uint32_t n)
{
	struct drm_rocket_submit submit = {
	    .jobs = (uintptr_t)jobs, .job_count = n, .job_struct_size = sizeof(*jobs)};

	return rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_ROCKET_SUBMIT, &submit);
}

static struct drm_rocket_job raw_job(const struct mm *m)
{
	return (struct drm_rocket_job){.tasks = (uintptr_t)&m->task,
				       .task_count = 1,
				       .task_struct_size = sizeof(m->task),
				       .in_bo_handles = (uintptr_t)m->in,
				       .in_bo_handle_count = 3,
				       .out_bo_handles = (uintptr_t)m->out,
				       .out_bo_handle_count = 1};
}

static unsigned kicks(const struct fx *f)
{
	return f->kicks[0] + f->kicks[1] + f->kicks[2];
}

/* The SUBMIT of upstream's rocket_ioctl_submit (drivers/accel/rocket/rocket_job.c):
 * no jobs is 0 before any check; a short job_struct_size or a reserved field -EINVAL and
 * an unreadable job array -EFAULT, nothing queued; every other fault is the job's own,
 * and the job is dropped while SUBMIT says 0 and the jobs around it run. */
static void test_submit_as_upstream(void **state)
{
	struct fx *f = *state;
	struct drm_rocket_submit submit = {.job_count = 0, .job_struct_size = 1, .reserved = 7};
	struct drm_rocket_job jobs[3];
	struct drm_rocket_task empty = {.regcmd = 0x1000, .regcmd_count = 0};
	uint32_t missing[1] = {77};
	struct mm m;

	mm_build(f, &m, true);
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_ROCKET_SUBMIT, &submit), 0);
	submit = (struct drm_rocket_submit){
	    .jobs = (uintptr_t)jobs, .job_count = 1, .job_struct_size = sizeof(jobs[0]) - 1};
	jobs[0] = raw_job(&m);
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_ROCKET_SUBMIT, &submit), -EINVAL);
	submit.job_struct_size = sizeof(jobs[0]);
	submit.reserved = 1;
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_ROCKET_SUBMIT, &submit), -EINVAL);
	submit.reserved = 0;
	submit.jobs = 0;
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_ROCKET_SUBMIT, &submit), -EFAULT);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	assert_int_equal(kicks(f), 0);
	assert_string_equal(rb_sim_kmod_log(f->kmod), "");

	/* one bad job among good ones: dropped, the others run, SUBMIT says 0 */
	for (int i = 0; i < 3; i++)
		jobs[i] = raw_job(&m);
	jobs[1].task_count = 0;
	assert_int_equal(raw_submit(f, jobs, 3), 0);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	assert_int_equal(kicks(f), 2);
	assert_non_null(strstr(rb_sim_kmod_log(f->kmod), "job 2 of 3 dropped: Invalid argument"));

	/* each job fault alone: dropped, 0, nothing runs, and PREP_BO finds nothing to
	 * wait for: C keeps the canary and nothing but the output tells */
	memset(m.c.map, 0xff, m.c.size);
	assert_int_equal(rb_rocket_bo_fini(&f->dev, &m.c), 0); /* past the CPU's cache */
	jobs[0] = raw_job(&m);
	jobs[0].out_bo_handles = (uintptr_t)missing; /* a handle of no BO: -ENOENT */
	jobs[1] = raw_job(&m);
	jobs[1].tasks = (uintptr_t)&empty; /* a task without words: -EINVAL */
	jobs[2] = raw_job(&m);
	jobs[2].task_struct_size = 4; /* -EINVAL */
	assert_int_equal(raw_submit(f, jobs, 3), 0);
	jobs[0] = raw_job(&m);
	jobs[0].in_bo_handles = 0; /* an unreadable handle array: -EFAULT */
	assert_int_equal(raw_submit(f, jobs, 1), 0);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 0), 0);
	assert_int_equal(kicks(f), 2);
	assert_int_equal(*(uint32_t *)m.c.map, 0xffffffffu);
	assert_non_null(strstr(rb_sim_kmod_log(f->kmod), "job 1 of 3 dropped: No such file"));
	assert_non_null(strstr(rb_sim_kmod_log(f->kmod), "job 3 of 3 dropped: Invalid argument"));
	assert_non_null(strstr(rb_sim_kmod_log(f->kmod), "job 1 of 1 dropped: Bad address"));
	mm_free(f, &m);
}

/* What the kernel would drop without a word, the driver refuses before the ioctl. */
static void test_submit_refuses_what_would_drop(void **state)
{
	struct fx *f = *state;
	struct drm_rocket_task empty = {.regcmd = 0x1000, .regcmd_count = 0};
	uint32_t zero[1] = {0};
	struct rb_rocket_job job;
	struct mm m;

	mm_build(f, &m, true);
	job = mm_job(&m);
	job.n_tasks = 0;
	assert_int_equal(rb_rocket_submit(&f->dev, 0, &job, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "job 0 has no tasks (the kernel would drop it"));
	job = mm_job(&m);
	job.tasks = &empty;
	assert_int_equal(rb_rocket_submit(&f->dev, 0, &job, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "task 0 of job 0 has regcmd_count 0"));
	job = mm_job(&m);
	job.out_handles = zero;
	assert_int_equal(rb_rocket_submit(&f->dev, 0, &job, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "BO handle 0, which names no BO"));
	job = mm_job(&m);
	job.n_out = 0;
	assert_int_equal(rb_rocket_submit(&f->dev, 0, &job, 1), -EINVAL);
	assert_non_null(strstr(rb_last_error(), "lists no output BO"));
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	assert_int_equal(kicks(f), 0);
	assert_string_equal(rb_sim_kmod_log(f->kmod), ""); /* nothing reached the kernel */
	mm_free(f, &m);
}

/* ---- one fd per core ---- */

/* A job of the matmul on file fl, with that file's handles. */
static void submit_on(struct fx *f, const struct mm *m, unsigned fl)
{
	uint32_t in[3], out[1];
	const struct rb_rocket_bo *bos[4] = {&m->a, &m->b, &m->prog, &m->c};
	struct rb_rocket_job job = mm_job(m);

	for (int b = 0; b < 3; b++)
		in[b] = rb_rocket_bo_handle(bos[b], fl);
	out[0] = rb_rocket_bo_handle(bos[3], fl);
	job.in_handles = in;
	job.out_handles = out;
	assert_int_equal(rb_rocket_submit(&f->dev, fl, &job, 1), 0);
}

/* Every buffer is in every fd; the jobs of three fds go to three cores (one entity per
 * fd), those of one fd one after another to one core. */
static void test_fds_run_in_parallel(void **state)
{
	struct fx *f = *state;
	uint64_t t0, one_fd, three_fds;
	struct mm m;

	mm_build(f, &m, true);
	for (unsigned fl = 1; fl < f->dev.n_files; fl++)
		assert_non_null(m.c.copy_map[fl - 1]);
	assert_int_equal(rb_rocket_bo_fini(&f->dev, &m.prog), 0); /* programs to every copy */
	assert_int_equal(rb_rocket_bo_fini(&f->dev, &m.a), 0);
	assert_int_equal(rb_rocket_bo_fini(&f->dev, &m.b), 0);
	t0 = rb_sim_kmod_now_ns(f->kmod);
	for (int i = 0; i < 3; i++)
		submit_on(f, &m, 0);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	one_fd = rb_sim_kmod_now_ns(f->kmod) - t0;
	assert_int_equal(f->kicks[0], 3);
	assert_int_equal(f->kicks[1] + f->kicks[2], 0);

	t0 = rb_sim_kmod_now_ns(f->kmod);
	for (unsigned fl = 0; fl < 3; fl++)
		submit_on(f, &m, fl);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	three_fds = rb_sim_kmod_now_ns(f->kmod) - t0;
	assert_int_equal(f->kicks[0], 4);
	assert_int_equal(f->kicks[1], 1);
	assert_int_equal(f->kicks[2], 1);
	/* this job is shorter than a SUBMIT's cost, so the times say little here (see
	 * test_runner_cores_in_parallel); they must not grow */
	assert_true(three_fds <= one_fd);
	/* each copy of C holds its own job's result; gathered into file 0's */
	assert_int_not_equal(*(uint32_t *)m.c.copy_map[0], 0xffffffffu);
	assert_string_equal(rb_sim_kmod_last_fault(f->kmod), "");
	mm_free(f, &m);
}

/* An fd's NPU addresses are its own (an IOMMU domain per fd, rocket_open): a program
 * only file 0 has is outside every buffer of file 1, so file 1's job faults. PRIME
 * gives file 1 a handle to file 0's buffer, and still no address: the fault stays. The
 * imported handle shares the object's fences, though: PREP_BO on it waits for file 0's
 * job. */
static void test_fds_have_own_addresses(void **state)
{
	struct fx *f = *state;
	struct drm_rocket_create_bo only0 = {.size = 4096};
	struct drm_prime_handle exp = {0}, imp = {0};
	struct drm_rocket_prep_bo prep = {0};
	struct rb_transport *f1 = rb_rocket_file(&f->dev, 1);
	struct rb_rocket_job job;
	uint32_t in[3], out[1];
	uint64_t t0;
	struct mm m;

	mm_build(f, &m, true);
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_ROCKET_CREATE_BO, &only0), 0);
	exp.handle = only0.handle;
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_PRIME_HANDLE_TO_FD, &exp), 0);
	imp.fd = exp.fd;
	assert_int_equal(rb_transport_ioctl(f1, DRM_IOCTL_PRIME_FD_TO_HANDLE, &imp), 0);
	assert_true(imp.handle > 0);
	/* the program goes into the buffer only file 0 maps, and file 1 runs it */
	void *map = NULL;
	assert_int_equal(f->dev.tr.ops->mmap(f->dev.tr.priv, 4096, only0.offset, &map), 0);
	memcpy(map, m.prog.map, (size_t)m.task.regcmd_count * 8);
	m.task.regcmd = (uint32_t)only0.dma_address + (m.task.regcmd - m.prog.dma_addr);
	job = mm_job(&m);
	in[0] = rb_rocket_bo_handle(&m.a, 1);
	in[1] = rb_rocket_bo_handle(&m.b, 1);
	in[2] = imp.handle;
	out[0] = rb_rocket_bo_handle(&m.c, 1);
	job.in_handles = in;
	job.out_handles = out;
	assert_int_equal(rb_rocket_submit(&f->dev, 1, &job, 1), 0);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	assert_non_null(strstr(rb_sim_kmod_last_fault(f->kmod), "iommu fault"));
	assert_non_null(strstr(rb_sim_kmod_last_fault(f->kmod), "outside every buffer"));
	/* the same program on file 0, whose address it is: it runs; file 1's imported
	 * handle waits for it */
	job.in_handles = (const uint32_t[]){m.a.handle, m.b.handle, only0.handle};
	job.out_handles = (const uint32_t[]){only0.handle};
	assert_int_equal(rb_rocket_submit(&f->dev, 0, &job, 1), 0);
	t0 = rb_sim_kmod_now_ns(f->kmod);
	prep.handle = imp.handle;
	prep.timeout_ns = (int64_t)(t0 + 1000 * MS_NS);
	assert_int_equal(rb_transport_ioctl(f1, DRM_IOCTL_ROCKET_PREP_BO, &prep), 0);
	assert_true(rb_sim_kmod_now_ns(f->kmod) > t0);
	/* the dma-buf and both handles go, and the object with them */
	assert_int_equal(rb_sim_kmod_close_fd(f->kmod, exp.fd), 0);
	assert_int_equal(rb_sim_kmod_close_fd(f->kmod, exp.fd), -EBADF);
	f->dev.tr.ops->munmap(f->dev.tr.priv, map, 4096);
	struct drm_gem_close close = {.handle = imp.handle};
	assert_int_equal(rb_transport_ioctl(f1, DRM_IOCTL_GEM_CLOSE, &close), 0);
	close.handle = only0.handle;
	assert_int_equal(rb_transport_ioctl(&f->dev.tr, DRM_IOCTL_GEM_CLOSE, &close), 0);
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
	assert_int_equal(rb_rocket_submit(&f->dev, 0, &job, 1), 0);
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
	assert_int_equal(rb_rocket_submit(&f->dev, 0, &job, 1), 0);
	assert_int_equal(rb_rocket_bo_prep(&f->dev, &m.c, 1000), 0);
	assert_int_not_equal(*(uint32_t *)m.c.map, 0xffffffffu);
	mm_free(f, &m);
}

/* ---- the job runner on both drivers ---- */

static void run_matmul_on(struct rb_npu_device *dev, uint32_t mask, enum rb_npu_launch launch,
			  int expect)
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
	rb_plan_config_default(&cfg, &s, mask);
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

static void run_matmul(struct rb_npu_device *dev, enum rb_npu_launch launch, int expect)
{
	run_matmul_on(dev, 0x7, launch, expect);
}

/* Whether file f of the device holds a BO of handle h. */
static bool file_has_bo(struct rb_npu_device *dev, unsigned f, uint32_t h)
{
	struct drm_rocket_prep_bo prep = {.handle = h};

	return rb_transport_ioctl(rb_rocket_file(&dev->rocket, f), DRM_IOCTL_ROCKET_PREP_BO,
				  &prep) == 0;
}

/* A one-core plan's buffers live in its core's file alone (the plan's first core
 * submits on file 0): nothing in files 1 and 2. Then buffers of file 0 alone move
 * files 1 and 2's allocators apart from file 0's, and a three-core plan still runs
 * bit-exact: each core's programs hold its own file's addresses. */
static void test_runner_buffers_where_used(void **state)
{
	struct rb_npu_device dev;
	struct rb_dev_bo only0, all;

	struct rb_shape s = {96, 256, 64, RB_DTYPE_INT8};
	struct rb_plan_config cfg;
	struct rb_plan plan;
	struct rb_inputs in;
	struct rb_npu_job *job;
	struct rb_npu_job_times t;
	void *c = rb_output_alloc(&s), *ref = rb_output_alloc(&s);

	(void)state;
	assert_non_null(c);
	assert_non_null(ref);
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, NULL), 0);
	rb_plan_config_default(&cfg, &s, 0x2);
	cfg.mainline = true;
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	assert_int_equal(plan.n_cores, 1);
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_EXACT), 0);
	assert_int_equal(rb_ref_gemm(&s, in.a, in.b, ref, 1), 0);
	assert_int_equal(rb_npu_job_new(&job, &dev, &plan, &in, RB_LAUNCH_FENCES), 0);
	assert_int_equal(rb_npu_job_run(job, c, &t), 0);
	assert_memory_equal(c, ref, (size_t)s.m * (size_t)s.n * 4);
	for (uint32_t h = 1; h <= 4; h++) /* A, B, C, the programs */
		assert_true(file_has_bo(&dev, 0, h));
	for (unsigned f = 1; f < 3; f++)
		for (uint32_t h = 1; h <= 4; h++)
			assert_false(file_has_bo(&dev, f, h));
	rb_npu_job_free(job);
	rb_plan_release(&plan);
	rb_inputs_release(&in);
	free(c);
	free(ref);
	assert_int_equal(dev.ops->bo_create(&dev, 1 << 16, RB_BO_DATA, &only0), 0);
	assert_int_equal(dev.ops->bo_create(&dev, 4096, RB_BO_DATA, &all), 0);
	assert_int_equal(rb_dev_bo_reach(&dev, &all, 3), 0);
	assert_int_not_equal(rb_dev_bo_addr(&dev, &all, 0), rb_dev_bo_addr(&dev, &all, 1));
	run_matmul_on(&dev, 0x7, RB_LAUNCH_FENCES, 0);
	run_matmul_on(&dev, 0x5, RB_LAUNCH_THREADS, 0);
	dev.ops->bo_destroy(&dev, &all);
	dev.ops->bo_destroy(&dev, &only0);
	rb_npu_device_close(&dev);
}

/* A job of shape s and config text on dev, with in's B, checked bit-exact against the
 * reference; *job keeps it (NULL: freed). */
static void parts_job(struct rb_npu_device *dev, const struct rb_shape *s, const char *config,
		      struct rb_plan *plan, const struct rb_inputs *in, struct rb_npu_job **job)
{
	struct rb_plan_config cfg;
	struct rb_npu_job_times t;
	void *c = rb_output_alloc(s), *ref = rb_output_alloc(s);

	assert_non_null(c);
	assert_non_null(ref);
	rb_plan_config_default(&cfg, s, 0x7);
	assert_int_equal(rb_plan_config_parse(&cfg, config), 0);
	cfg.mainline = true;
	assert_int_equal(rb_plan_init(plan, s, &cfg), 0);
	assert_int_equal(rb_ref_gemm(s, in->a, in->b, ref, 1), 0);
	assert_int_equal(rb_npu_job_new(job, dev, plan, in, RB_LAUNCH_FENCES), 0);
	assert_int_equal(rb_npu_job_run(*job, c, &t), 0);
	assert_memory_equal(c, ref, (size_t)s->m * (size_t)s->n * 4);
	free(c);
	free(ref);
}

/* A job of s2 sharing owner's B (in's), run on A of its own and checked bit-exact. */
static void run_sharing(struct rb_npu_device *dev, const struct rb_shape *s2, const char *config,
			const struct rb_inputs *in, struct rb_npu_job *owner)
{
	struct rb_plan_config cfg;
	struct rb_plan plan;
	struct rb_npu_job *job;
	struct rb_npu_job_times t;
	size_t a_bytes = (size_t)(s2->m * s2->k);
	int8_t *a = malloc(a_bytes);
	void *c = rb_output_alloc(s2), *ref = rb_output_alloc(s2);

	assert_non_null(a);
	assert_non_null(c);
	assert_non_null(ref);
	for (size_t i = 0; i < a_bytes; i++)
		a[i] = (int8_t)((i * 37 + 11) % 255 - 127);
	rb_plan_config_default(&cfg, s2, 0x7);
	assert_int_equal(rb_plan_config_parse(&cfg, config), 0);
	cfg.mainline = true;
	assert_int_equal(rb_plan_init(&plan, s2, &cfg), 0);
	assert_int_equal(rb_npu_job_new_sharing(&job, dev, &plan, RB_LAUNCH_THREADS, owner), 0);
	rb_npu_job_set_features(job, a);
	assert_int_equal(rb_npu_job_run(job, c, &t), 0);
	assert_int_equal(rb_ref_gemm(s2, a, in->b, ref, 1), 0);
	assert_memory_equal(c, ref, (size_t)s2->m * (size_t)s2->n * 4);
	rb_npu_job_free(job);
	rb_plan_release(&plan);
	free(a);
	free(c);
	free(ref);
}

/* Bytes B's buffer holds in all the files. */
static uint64_t b_held(struct rb_npu_job *job)
{
	const struct rb_rocket_bo *bo = &rb_npu_job_own_weights(job)->rocket;
	uint64_t bytes = bo->size;

	for (unsigned f = 1; f < bo->n_files; f++)
		bytes += bo->copy_size[f - 1];
	return bytes;
}

/* An N-split plan on three cores holds B once in all: each core's file only the
 * kernels it reads (with K slices too: a range per slice), bit-exact. An M-split plan,
 * whose cores each read all of B, holds a copy per core. A job of another M shares the
 * parts, bit-exact, with the same split or one otherwise, on as many cores or not (the
 * ranges it reads outside its cores' parts copied into parts of its own). */
static void test_runner_b_in_parts(void **state)
{
	struct rb_shape s = {8, 1024, 768, RB_DTYPE_INT8}, s2 = {24, 1024, 768, RB_DTYPE_INT8};
	struct rb_npu_device dev;
	struct rb_plan plan;
	struct rb_inputs in;
	struct rb_npu_job *job, *shared;

	(void)state;
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, NULL), 0);
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_EXACT), 0);
	parts_job(&dev, &s, "split=n:1,1,1 kslice=0", &plan, &in, &job);
	print_message("N-split, one K slice: B %llu bytes, held %llu\n",
		      (unsigned long long)plan.b_bytes, (unsigned long long)b_held(job));
	assert_true(b_held(job) < plan.b_bytes + 3 * 4096);
	/* parts are no whole B to read at an offset */
	assert_true(rb_npu_job_own_weights(job)->parts);
	assert_int_equal(rb_npu_job_new_on_weights(&shared, &dev, &plan, RB_LAUNCH_FENCES,
						   rb_npu_job_own_weights(job), 0),
			 -EINVAL);
	assert_null(shared);
	/* another M, the same split, then one otherwise: its programs read the parts */
	run_sharing(&dev, &s2, "split=n:1,1,1 kslice=0", &in, job);
	run_sharing(&dev, &s2, "split=n:2,1,1 kslice=0", &in, job);
	run_sharing(&dev, &s2, "split=n:1,1,1 align=32 kslice=0", &in, job);
	rb_npu_job_free(job);
	rb_plan_release(&plan);

	parts_job(&dev, &s, "split=n:1,1,1 kslice=256", &plan, &in, &job);
	print_message("N-split, 4 K slices: B %llu bytes, held %llu\n",
		      (unsigned long long)plan.b_bytes, (unsigned long long)b_held(job));
	assert_int_equal(plan.n_kslices, 4);
	assert_true(b_held(job) < plan.b_bytes + 12 * 4096);
	run_sharing(&dev, &s2, "split=n:1,2,1 kslice=256", &in, job);
	rb_npu_job_free(job);
	rb_plan_release(&plan);

	/* parts of two cores, read by plans of three and of one: the cores the owner
	 * lacks, or ranges outside theirs, read parts of their own */
	parts_job(&dev, &s, "mask=0x3 split=n:1,1 kslice=0", &plan, &in, &job);
	assert_true(b_held(job) < plan.b_bytes + 2 * 4096);
	run_sharing(&dev, &s2, "split=n:1,1,1 kslice=0", &in, job);
	run_sharing(&dev, &s2, "mask=0x2 kslice=0", &in, job);
	rb_npu_job_free(job);
	rb_plan_release(&plan);

	rb_inputs_release(&in);
	s.m = 96;
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_EXACT), 0);
	parts_job(&dev, &s, "split=m:1,1,1", &plan, &in, &job);
	assert_int_equal(b_held(job), 3 * rb_npu_job_own_weights(job)->size);
	rb_npu_job_free(job);
	rb_plan_release(&plan);
	rb_inputs_release(&in);
	rb_npu_device_close(&dev);
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

/* The modeled device time of 1x2048x8192 fp16 (the ffn_up decode matmul) on sim:rocket
 * with the plan on `mask`'s cores, verified against the reference. */
static double ffn_up_us(uint32_t mask)
{
	struct rb_shape s = {1, 2048, 8192, RB_DTYPE_FP16};
	struct rb_npu_device dev;
	struct rb_plan_config cfg;
	struct rb_plan plan;
	struct rb_inputs in;
	struct rb_npu_job *job;
	struct rb_npu_job_times t;
	struct rb_verify_opts vo;
	struct rb_verify_result vr;
	struct rb_matmul_io io;
	void *c = rb_output_alloc(&s);

	assert_non_null(c);
	assert_int_equal(rb_npu_device_open_sim_rocket(&dev, NULL), 0);
	rb_plan_config_default(&cfg, &s, mask);
	cfg.mainline = true;
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_EXACT), 0);
	assert_int_equal(rb_npu_job_new(&job, &dev, &plan, &in, RB_LAUNCH_FENCES), 0);
	assert_int_equal(rb_npu_job_run(job, c, &t), 0);
	rb_verify_opts_init(&vo, s.dtype);
	io = (struct rb_matmul_io){.shape = s, .a = in.a, .b = in.b, .c = c};
	rb_verify_sample(&io, &vo, &vr);
	assert_int_equal(vr.status, RB_VERIFY_VERIFIED);
	rb_npu_job_free(job);
	rb_plan_release(&plan);
	rb_inputs_release(&in);
	rb_npu_device_close(&dev);
	free(c);
	return t.device_us;
}

/* One fd per core: the plan's three cores run at once, more than twice as fast as one. */
static void test_runner_cores_in_parallel(void **state)
{
	double one = ffn_up_us(0x1), three = ffn_up_us(0x7);

	(void)state;
	print_message("1x2048x8192 fp16 on sim:rocket (modeled): %.1f us on one core, %.1f us "
		      "on three\n",
		      one, three);
	assert_true(three > 0);
	assert_true(one > 2 * three);
}

/* A job the kernel drops at SUBMIT (here: core 1's program copy is closed behind the
 * driver's back, so its handle names no BO and the job goes with -ENOENT while SUBMIT
 * says 0) does not pass for done: its share of C keeps the fill, and the runner says
 * so, after one retry. Timing only (C never written): the kernel's log tells. */
static void test_runner_detects_dropped_job(void **state)
{
	struct rb_shape s = {96, 256, 64, RB_DTYPE_INT8};
	struct rb_plan_config cfg;
	struct rb_plan plan;
	struct rb_inputs in;
	struct rb_npu_job *job;
	struct rb_npu_job_times t;
	struct rb_sim_config sc;
	void *c = rb_output_alloc(&s);

	(void)state;
	assert_non_null(c);
	rb_plan_config_default(&cfg, &s, 0x7);
	cfg.mainline = true;
	assert_int_equal(rb_plan_init(&plan, &s, &cfg), 0);
	assert_true(plan.n_cores == 3 && plan.cores[1].n_tasks > 0);
	assert_int_equal(rb_inputs_init(&in, &s, 1, RB_DATA_EXACT), 0);
	rb_sim_config_init(&sc);
	for (int model_only = 0; model_only < 2; model_only++) {
		struct rb_npu_device dev;
		struct drm_gem_close close = {.handle = 4}; /* A, B, C, then the programs */

		sc.model_only = model_only;
		assert_int_equal(rb_npu_device_open_sim_rocket(&dev, &sc), 0);
		assert_int_equal(rb_npu_job_new(&job, &dev, &plan, &in, RB_LAUNCH_FENCES), 0);
		assert_int_equal(
		    rb_transport_ioctl(rb_rocket_file(&dev.rocket, 1), DRM_IOCTL_GEM_CLOSE, &close),
		    0);
		assert_int_equal(rb_npu_job_run(job, c, &t), -ETIMEDOUT);
		if (!model_only)
			assert_non_null(strstr(rb_last_error(), "core 1's share"));
		assert_non_null(strstr(rb_last_error(), "the kernel dropped it at SUBMIT"));
		assert_non_null(strstr(rb_sim_kmod_log(rb_transport_sim_kmod(&dev.rocket.tr)),
				       "dropped: No such file or directory"));
		rb_npu_job_free(job);
		rb_npu_device_close(&dev);
	}
	rb_plan_release(&plan);
	rb_inputs_release(&in);
	free(c);
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
	    cmocka_unit_test_setup_teardown(test_bo_in_some_files, setup_cores, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_one_task_per_kick, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_as_upstream, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_submit_refuses_what_would_drop, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fds_run_in_parallel, setup_cores, teardown),
	    cmocka_unit_test_setup_teardown(test_fds_have_own_addresses, setup_cores, teardown),
	    cmocka_unit_test_setup_teardown(test_mrdma_trap_timeout, setup, teardown),
	    cmocka_unit_test(test_runner_rocket),
	    cmocka_unit_test(test_runner_buffers_where_used),
	    cmocka_unit_test(test_runner_b_in_parts),
	    cmocka_unit_test(test_runner_cores_in_parallel),
	    cmocka_unit_test(test_runner_detects_dropped_job),
	    cmocka_unit_test(test_runner_retry),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
