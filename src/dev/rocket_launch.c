/* The mainline rocket driver behind the device ops (npu_device.h): its buffer objects
 * and its two launch modes. A job is one core's tasks (program address and length each)
 * with the BOs it reads and writes, submitted on that core's own fd (dev/rocket.h: the
 * kernel runs one fd's jobs one after another); completion is the fence on the BOs a job
 * writes, waited for with PREP_BO on C (§d.2). Rocket has no core masks, so no
 * multicore. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dev/npu_device.h"

/* A run of a core's tasks as rocket's {regcmd, regcmd_count}; NULL when out of memory. */
static struct drm_rocket_task *rocket_tasks(const struct rb_dev_task *tasks, uint32_t n)
{
	struct drm_rocket_task *t = calloc(n ? n : 1, sizeof(*t));

	for (uint32_t i = 0; t && i < n; i++)
		t[i] = (struct drm_rocket_task){tasks[i].regcmd_addr, tasks[i].regcmd_words};
	return t;
}

/* The file core i of the plan submits on: its own when there are enough. Its programs
 * hold the addresses of that file's copies (bo_addr). */
static unsigned core_file(const struct rb_npu_device *dev, unsigned i)
{
	return i % dev->rocket.n_files;
}

/* The files the plan's first n cores submit on: 0 .. files_of(n) − 1. */
static unsigned files_of(const struct rb_npu_device *dev, unsigned n_cores)
{
	return n_cores < dev->rocket.n_files ? n_cores : dev->rocket.n_files;
}

/* The job's input BOs that live in file f, by their handles there, then C's: a BO of
 * another job's parts (B shared by a plan of more cores) may have none in f, and the
 * cores of f then read nothing of it (their programs were checked against the buffers
 * their file holds). Returns the number of inputs. */
static unsigned file_handles(const struct rb_dev_job *job, unsigned f, uint32_t *handles)
{
	unsigned n_in = 0;

	for (unsigned b = 0; b < sizeof(job->in) / sizeof(job->in[0]); b++)
		if (job->in[b] && rb_rocket_bo_handle(&job->in[b]->rocket, f))
			handles[n_in++] = rb_rocket_bo_handle(&job->in[b]->rocket, f);
	handles[n_in] = rb_rocket_bo_handle(&job->out->rocket, f);
	return n_in;
}

/* The index of the first task of plan core i in the submits' numbering (core after
 * core). */
static uint32_t core_first_task(const struct rb_dev_job *job, unsigned i)
{
	uint32_t first = 0;

	for (unsigned c = 0; c < i; c++)
		first += job->cores[c].n_tasks;
	return first;
}

/* The submits of the job's cores [first, first + n) that go through file f. */
static size_t file_submits(const struct rb_npu_device *dev, const struct rb_dev_job *job,
			   unsigned f, unsigned first, unsigned n)
{
	size_t count = 0;

	for (size_t s = 0; s < job->n_submits; s++) {
		unsigned i = job->submits[s].plan_core;

		count +=
		    i >= first && i < first + n && core_file(dev, i) == f && job->cores[i].n_tasks;
	}
	return count;
}

/* Cores [first, first + n) of the job that go through file f, as rocket jobs in one
 * SUBMIT on f: a job per submit of the plan (one per core, unless the planner cut a
 * core's tasks to keep each job inside the kernel's 500 ms, rb_plan_fit_timeout). The
 * fd's jobs run one after another on one core, each with its own timeout. */
static int submit_file(struct rb_npu_device *dev, const struct rb_dev_job *job, unsigned f,
		       unsigned first, unsigned n)
{
	size_t max = file_submits(dev, job, f, first, n), used = 0;
	struct rb_rocket_job *rj = calloc(max ? max : 1, sizeof(*rj));
	struct drm_rocket_task **tasks = calloc(max ? max : 1, sizeof(*tasks));
	uint32_t handles[sizeof(job->in) / sizeof(job->in[0]) + 1];
	unsigned n_in = file_handles(job, f, handles);
	int ret = rj && tasks ? 0 : rb_set_error(-ENOMEM, "out of memory for rocket jobs");

	for (size_t s = 0; ret == 0 && s < job->n_submits; s++) {
		const struct rb_dev_submit *sub = &job->submits[s];
		unsigned i = sub->plan_core;
		const struct rb_dev_task *t;

		if (i < first || i >= first + n || core_file(dev, i) != f || !job->cores[i].n_tasks)
			continue;
		t = job->cores[i].tasks + (sub->task_start - core_first_task(job, i));
		tasks[used] = rocket_tasks(t, sub->task_number);
		if (!tasks[used])
			ret = rb_set_error(-ENOMEM, "out of memory for a rocket job");
		rj[used] = (struct rb_rocket_job){.tasks = tasks[used],
						  .n_tasks = sub->task_number,
						  .in_handles = handles,
						  .n_in = n_in,
						  .out_handles = &handles[n_in],
						  .n_out = 1};
		used++;
	}
	if (ret == 0 && used)
		ret = rb_rocket_submit(&dev->rocket, f, rj, (uint32_t)used);
	for (size_t i = 0; tasks && i < used; i++)
		free(tasks[i]);
	free(tasks);
	free(rj);
	return ret;
}

/* Cores [first, first + n) of the job: a SUBMIT per file they use. */
static int submit_cores(struct rb_npu_device *dev, const struct rb_dev_job *job, unsigned first,
			unsigned n)
{
	int ret = 0;

	for (unsigned f = 0; ret == 0 && f < dev->rocket.n_files; f++)
		ret = submit_file(dev, job, f, first, n);
	return ret;
}

struct core_thread {
	struct rb_npu_device *dev;
	const struct rb_dev_job *job;
	unsigned index; /* the job's core */
	bool grouped;   /* a member of the transport's thread group */
	int ret;
	char error[512];
};

static void *core_thread_main(void *arg)
{
	struct core_thread *ct = arg;

	ct->ret = submit_cores(ct->dev, ct->job, ct->index, 1);
	if (ct->ret < 0)
		snprintf(ct->error, sizeof(ct->error), "%s", rb_last_error());
	if (ct->grouped)
		rb_transport_group_leave(rb_npu_device_transport(ct->dev));
	return NULL;
}

/* One SUBMIT per core, each from its own thread. The threads are one group of the
 * transport, as in rknpu_launch.c: the emulated kernel then queues their jobs in the
 * same order whatever the host's thread timing (a no-op on a board). A thread that
 * cannot be created leaves the group at once; its core submits after the others. */
static int submit_threads(struct rb_npu_device *dev, const struct rb_dev_job *job)
{
	struct rb_transport *tr = rb_npu_device_transport(dev);
	struct core_thread ct[RB_HW_MAX_CORES] = {0};
	pthread_t tid[RB_HW_MAX_CORES];
	bool started[RB_HW_MAX_CORES] = {false};
	bool grouped = rb_transport_group_begin(tr, job->n_cores) == 0;
	int ret = 0;

	for (unsigned i = 0; i < job->n_cores; i++) {
		ct[i] =
		    (struct core_thread){.dev = dev, .job = job, .index = i, .grouped = grouped};
		started[i] = pthread_create(&tid[i], NULL, core_thread_main, &ct[i]) == 0;
		if (!started[i] && grouped)
			rb_transport_group_leave(tr);
	}
	for (unsigned i = 0; i < job->n_cores; i++)
		if (started[i])
			pthread_join(tid[i], NULL);
	if (grouped)
		rb_transport_group_end(tr);
	for (unsigned i = 0; i < job->n_cores; i++) {
		if (!started[i]) {
			ct[i].grouped = false;
			core_thread_main(&ct[i]);
		}
		if (ct[i].ret < 0 && ret == 0)
			ret = rb_set_error(ct[i].ret, "%s", ct[i].error);
	}
	return ret;
}

/* ---- the ops ---- */

static int bo_create(struct rb_npu_device *dev, uint64_t size, enum rb_dev_bo_kind kind,
		     struct rb_dev_bo *bo)
{
	int ret;

	(void)kind; /* rocket has one kind of BO */
	memset(bo, 0, sizeof(*bo));
	if (size > UINT32_MAX)
		return rb_set_error(-ENOMEM, "a %llu-byte buffer is more than rocket's 4 GiB limit",
				    (unsigned long long)size);
	ret = rb_rocket_bo_create_in(&dev->rocket, (uint32_t)size, 1, &bo->rocket);
	bo->map = bo->rocket.map;
	bo->dma_addr = bo->rocket.dma_addr;
	bo->size = bo->rocket.size;
	return ret;
}

/* Part i in file i: the plan's i-th core submits there while the plan has at most a
 * core per file (core_file). */
static int bo_create_parts(struct rb_npu_device *dev, const uint64_t *sizes, unsigned n,
			   struct rb_dev_bo *bo)
{
	uint32_t bytes[RB_ROCKET_MAX_FILES];
	int ret;

	memset(bo, 0, sizeof(*bo));
	if (n < 1 || n > dev->rocket.n_files)
		return rb_set_error(-EINVAL, "rocket: a buffer of %u parts on %u files", n,
				    dev->rocket.n_files);
	for (unsigned i = 0; i < n; i++) {
		if (sizes[i] > UINT32_MAX || sizes[i] == 0)
			return rb_set_error(-ENOMEM, "a %llu-byte part is not a rocket buffer",
					    (unsigned long long)sizes[i]);
		bytes[i] = (uint32_t)sizes[i];
	}
	ret = rb_rocket_bo_create_parts(&dev->rocket, bytes, n, &bo->rocket);
	bo->parts = true;
	bo->map = bo->rocket.map;
	bo->dma_addr = bo->rocket.dma_addr;
	bo->size = bo->rocket.size;
	return ret;
}

static void *bo_part_map(const struct rb_dev_bo *bo, unsigned i)
{
	return rb_rocket_bo_map(&bo->rocket, i);
}

static void bo_destroy(struct rb_npu_device *dev, struct rb_dev_bo *bo)
{
	rb_rocket_bo_destroy(&dev->rocket, &bo->rocket);
	memset(bo, 0, sizeof(*bo));
}

static uint32_t bo_addr(const struct rb_npu_device *dev, const struct rb_dev_bo *bo,
			unsigned plan_core)
{
	return rb_rocket_bo_addr(&bo->rocket, core_file(dev, plan_core));
}

static int bo_reach(struct rb_npu_device *dev, struct rb_dev_bo *bo, unsigned n_cores)
{
	return rb_rocket_bo_extend(&dev->rocket, &bo->rocket, files_of(dev, n_cores));
}

static int bo_to_device(struct rb_npu_device *dev, const struct rb_dev_bo *bo)
{
	return rb_rocket_bo_fini(&dev->rocket, &bo->rocket);
}

/* PREP_BO in every file of bo (the jobs writing it are done, the CPU's cache
 * invalidated), then what the other files' jobs wrote gathered into file 0's view: the
 * runner fills C, the one buffer the NPU writes, with RB_DEV_OUT_FILL before (arm_output
 * in npu/job.c), except under model_only where nothing writes it. The gather comes after
 * every PREP_BO: a later one invalidates file 0's cache lines, dropping what the CPU
 * wrote into them (the emulated CPU cache, rb_sim_config.cpu_cache, showed it). */
static int bo_from_device(struct rb_npu_device *dev, const struct rb_dev_bo *bo)
{
	int ret = rb_rocket_bo_prep(&dev->rocket, &bo->rocket, dev->timeout_ms);

	if (ret == 0 && !dev->model_only && !bo->parts)
		rb_rocket_bo_gather(&dev->rocket, &bo->rocket, RB_DEV_OUT_FILL);
	return ret;
}

static int check_launch(enum rb_npu_launch launch)
{
	if (launch == RB_LAUNCH_MULTICORE)
		return rb_set_error(-EINVAL,
				    "launch mode 'multicore' is the vendor driver's core-mask "
				    "submit; rocket has none: use fences or threads");
	return 0;
}

/* The jobs of every core, then C from the device (bo_from_device: the end of every job
 * that writes it, and the other files' shares gathered). */
static int launch(struct rb_npu_device *dev, enum rb_npu_launch mode, struct rb_dev_job *job)
{
	int ret = mode == RB_LAUNCH_THREADS ? submit_threads(dev, job)
					    : submit_cores(dev, job, 0, job->n_cores);

	if (ret == 0)
		ret = bo_from_device(dev, job->out);
	return ret;
}

/* Rocket has no reset ioctl: its scheduler already reset the core that hung (§a.3). */
static int reset(struct rb_npu_device *dev)
{
	(void)dev;
	return 0;
}

const struct rb_dev_ops rb_rocket_ops = {
    .name = "rocket",
    .tasks_in_bo = false,
    .mainline_programs = true,
    .drops_timed_out_jobs = true,
    .job_timeout_ms = RB_ROCKET_JOB_TIMEOUT_MS,
    .bo_create = bo_create,
    .bo_destroy = bo_destroy,
    .bo_to_device = bo_to_device,
    .bo_from_device = bo_from_device,
    .check_launch = check_launch,
    .launch = launch,
    .bo_addr = bo_addr,
    .bo_reach = bo_reach,
    .bo_create_parts = bo_create_parts,
    .bo_part_map = bo_part_map,
    .reset = reset,
};
