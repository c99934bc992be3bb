/* The job runner (see job.h): buffers, packing, programs, submits, unpacking. */
#include "npu/job.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "core/layout.h"
#include "dev/discover.h"
#include "npu/fault.h"
#include "npu/regcmd.h"
#include "npu/validate.h"

#define DEFAULT_TIMEOUT_MS 6000
/* Data buffers: scattered pages behind the IOMMU (the big weight buffers would not fit
 * the CMA pool contiguously), cached and synced explicitly (§d.1 memory flags). */
#define DATA_BO_FLAGS (RKNPU_MEM_NON_CONTIGUOUS | RKNPU_MEM_CACHEABLE | RKNPU_MEM_IOMMU)

/* One SUBMIT: a run of consecutive tasks of one core. */
struct job_submit {
	unsigned core;
	uint32_t task_start, task_number;
};

struct rb_npu_job {
	struct rb_npu_device *dev;
	const struct rb_plan *plan;
	const struct rb_inputs *in;
	enum rb_npu_launch launch;
	struct rb_rknpu_bo a, b, c, regcmd, tasks;
	struct job_submit *submits;
	size_t n_submits;
	float *partial; /* fp16 output with K-slices: one slice unpacked before adding */
};

/* ---- devices ---- */

static int device_init(struct rb_npu_device *dev, struct rb_transport *tr, const char *name,
		       bool modeled)
{
	memset(dev, 0, sizeof(*dev));
	dev->name = name;
	dev->modeled = modeled;
	dev->timeout_ms = DEFAULT_TIMEOUT_MS;
	return rb_rknpu_open(&dev->drv, tr);
}

int rb_npu_device_open_sim(struct rb_npu_device *dev, const struct rb_sim_config *cfg)
{
	struct rb_transport tr;
	int ret = rb_transport_open_sim_rknpu(&tr, cfg);

	if (ret == 0)
		ret = device_init(dev, &tr, "sim", true);
	if (ret == 0)
		dev->model_only = cfg && cfg->model_only;
	return ret;
}

int rb_npu_device_open_rknpu(struct rb_npu_device *dev, const char *path)
{
	struct rb_npu_node node;
	struct rb_transport tr;
	int ret =
	    path ? rb_discover_check(path, "rknpu", &node) : rb_discover_driver("rknpu", &node);

	if (ret == 0)
		ret = rb_transport_open_host(&tr, node.path);
	return ret < 0 ? ret : device_init(dev, &tr, "rknpu", false);
}

void rb_npu_device_close(struct rb_npu_device *dev)
{
	rb_rknpu_close(&dev->drv);
	memset(dev, 0, sizeof(*dev));
}

/* ---- launch modes ---- */

static const char *const launch_names[] = {
    [RB_LAUNCH_FENCES] = "fences",
    [RB_LAUNCH_THREADS] = "threads",
    [RB_LAUNCH_MULTICORE] = "multicore",
};

const char *rb_npu_launch_name(enum rb_npu_launch launch)
{
	return launch <= RB_LAUNCH_MULTICORE ? launch_names[launch] : "unknown";
}

int rb_npu_launch_parse(const char *text, enum rb_npu_launch *out)
{
	for (int i = 0; i <= RB_LAUNCH_MULTICORE; i++) {
		if (strcmp(text, launch_names[i]) == 0) {
			*out = (enum rb_npu_launch)i;
			return 0;
		}
	}
	return rb_set_error(-EINVAL, "launch mode '%s' must be fences, threads or multicore", text);
}

/* ---- preparing: buffers, programs, weights ---- */

static uint32_t submit_size(const struct rb_plan *plan)
{
	return plan->config.chain ? RB_PLAN_TASKS_PER_SUBMIT : 1;
}

/* Cuts every core's task list into submits; tasks are numbered core after core. */
static int plan_submits(struct rb_npu_job *job)
{
	const struct rb_plan *plan = job->plan;
	uint32_t per = submit_size(plan), start = 0;
	size_t n = 0;

	job->submits = calloc(plan->n_tasks + 1, sizeof(*job->submits));
	if (!job->submits)
		return rb_set_error(-ENOMEM, "out of memory for %zu submits", plan->n_tasks);
	for (unsigned i = 0; i < plan->n_cores; i++) {
		const struct rb_plan_core *core = &plan->cores[i];

		for (size_t t = 0; t < core->n_tasks; t += per) {
			struct job_submit *s = &job->submits[n++];

			s->core = core->core;
			s->task_start = start + (uint32_t)t;
			s->task_number =
			    (uint32_t)(core->n_tasks - t < per ? core->n_tasks - t : per);
		}
		start += (uint32_t)core->n_tasks;
	}
	job->n_submits = n;
	return 0;
}

/* The plan's tasks in submit order (core after core). */
static const struct rb_plan_task *task_at(const struct rb_plan *plan, uint32_t index)
{
	for (unsigned i = 0; i < plan->n_cores; i++) {
		if (index < plan->cores[i].n_tasks)
			return &plan->cores[i].tasks[index];
		index -= (uint32_t)plan->cores[i].n_tasks;
	}
	return NULL;
}

/* Encodes one submit's chain at `word` in the regcmd buffer and fills its task
 * descriptors; returns the words used or a negative errno. */
static long encode_submit(struct rb_npu_job *job, const struct job_submit *s, size_t word,
			  struct rb_regcmd *rc)
{
	struct rb_plan_bases bases = {job->a.dma_addr, job->b.dma_addr, job->c.dma_addr};
	struct rb_npu_task *npu = calloc(s->task_number, sizeof(*npu));
	struct rb_regcmd_layout *lay = calloc(s->task_number, sizeof(*lay));
	struct rknpu_task *desc = (struct rknpu_task *)job->tasks.map + s->task_start;
	int ret = npu && lay ? 0 : -ENOMEM;

	for (uint32_t i = 0; ret == 0 && i < s->task_number; i++)
		ret = rb_plan_task_resolve(job->plan, task_at(job->plan, s->task_start + i), &bases,
					   &npu[i]);
	if (ret == 0)
		ret = rb_regcmd_build_chain(rc, npu, s->task_number,
					    job->regcmd.dma_addr + (uint32_t)(word * 8), lay);
	for (uint32_t i = 0; ret == 0 && i < s->task_number; i++) {
		memset(&desc[i], 0, sizeof(desc[i]));
		desc[i].enable_mask = rb_regcmd_op_enable(&npu[i]);
		desc[i].int_mask = rb_regcmd_int_mask();
		desc[i].int_clear = RKNPU_INT_CLEAR;
		desc[i].regcfg_amount = lay[i].regcfg_amount;
		desc[i].regcmd_addr = lay[i].addr;
	}
	if (ret == 0 && word == 0)
		rb_fault_inject_program(rc->words, rc->count);
	if (ret == 0)
		memcpy((uint64_t *)job->regcmd.map + word, rc->words, rc->count * 8);
	free(npu);
	free(lay);
	return ret < 0 ? ret : (long)rc->count;
}

/* Every task is body + tail whatever the addresses, so the size is known before the
 * buffer (and hence the addresses) exists. */
int rb_npu_job_program_words(const struct rb_plan *plan, size_t *words)
{
	struct rb_regcmd rc;
	int ret = 0;

	*words = 0;
	rb_regcmd_init(&rc);
	for (unsigned i = 0; ret == 0 && i < plan->n_cores; i++) {
		for (size_t t = 0; ret == 0 && t < plan->cores[i].n_tasks; t++) {
			rc.count = 0;
			ret = rb_regcmd_emit_task(&rc, &plan->cores[i].tasks[t].npu);
			*words += rc.count;
		}
	}
	rb_regcmd_release(&rc);
	return ret;
}

static int encode_programs(struct rb_npu_job *job)
{
	struct rb_regcmd rc;
	size_t word = 0;
	long used = 0;

	rb_regcmd_init(&rc);
	for (size_t i = 0; used >= 0 && i < job->n_submits; i++) {
		used = encode_submit(job, &job->submits[i], word, &rc);
		word += used > 0 ? (size_t)used : 0;
	}
	rb_regcmd_release(&rc);
	return used < 0 ? (int)used : 0;
}

static int create_buffers(struct rb_npu_job *job, size_t words)
{
	struct rb_rknpu *drv = &job->dev->drv;
	const struct rb_plan *plan = job->plan;
	int ret;

	ret = rb_rknpu_bo_create(drv, plan->a_bytes, DATA_BO_FLAGS, &job->a);
	if (ret == 0)
		ret = rb_rknpu_bo_create(drv, plan->b_bytes, DATA_BO_FLAGS, &job->b);
	if (ret == 0)
		ret = rb_rknpu_bo_create(drv, plan->c_bytes, DATA_BO_FLAGS, &job->c);
	if (ret == 0)
		ret = rb_rknpu_bo_create(drv, words * 8, DATA_BO_FLAGS, &job->regcmd);
	/* The kernel reads the descriptors through its own mapping of this BO (§d.1). */
	if (ret == 0)
		ret = rb_rknpu_bo_create(drv, plan->n_tasks * sizeof(struct rknpu_task),
					 RKNPU_MEM_KERNEL_MAPPING, &job->tasks);
	return ret;
}

/* Every program is checked before anything is submitted (npu/validate.h), on every
 * device, so what the tests run is what a board runs. */
static int validate_programs(const struct rb_npu_job *job)
{
	const struct rknpu_task *desc = job->tasks.map;
	const struct rb_validate_buf bufs[] = {{"A", job->a.dma_addr, job->a.size},
					       {"B", job->b.dma_addr, job->b.size},
					       {"C", job->c.dma_addr, job->c.size}};
	struct rb_validate_job v = {job->regcmd.map,
				    job->regcmd.dma_addr,
				    job->regcmd.size,
				    NULL,
				    NULL,
				    job->n_submits,
				    bufs,
				    3,
				    RB_NPU_CBUF_BANKS};
	struct rb_validate_task *tasks = calloc(job->plan->n_tasks, sizeof(*tasks));
	struct rb_validate_chain *chains = calloc(job->n_submits, sizeof(*chains));
	int ret = tasks && chains ? 0 : rb_set_error(-ENOMEM, "out of memory for validation");

	for (size_t i = 0; ret == 0 && i < job->plan->n_tasks; i++)
		tasks[i] = (struct rb_validate_task){desc[i].regcmd_addr, desc[i].regcfg_amount};
	for (size_t i = 0; ret == 0 && i < job->n_submits; i++)
		chains[i] = (struct rb_validate_chain){
		    job->submits[i].core, job->submits[i].task_start, job->submits[i].task_number};
	v.tasks = tasks;
	v.chains = chains;
	if (ret == 0)
		ret = rb_validate_job(&v);
	free(tasks);
	free(chains);
	return ret;
}

/* Weights are packed once per shape, like a backend does at model load. */
static int pack_weights(struct rb_npu_job *job)
{
	const struct rb_plan *p = job->plan;
	const struct rb_shape *s = &p->shape;
	int ret = 0;

	if (!job->dev->model_only)
		ret = rb_layout_pack_b_sliced(job->b.map, job->in->b, s->dtype, s->k, s->n,
					      p->k_pad, p->n_pad, p->k_slice, 0);

	if (ret == 0)
		ret = rb_rknpu_bo_sync(&job->dev->drv, &job->b, RKNPU_MEM_SYNC_TO_DEVICE, 0,
				       job->b.size);
	if (ret == 0)
		ret = rb_rknpu_bo_sync(&job->dev->drv, &job->regcmd, RKNPU_MEM_SYNC_TO_DEVICE, 0,
				       job->regcmd.size);
	return ret;
}

int rb_npu_job_new(struct rb_npu_job **out, struct rb_npu_device *dev, const struct rb_plan *plan,
		   const struct rb_inputs *in, enum rb_npu_launch launch)
{
	struct rb_npu_job *job = calloc(1, sizeof(*job));
	size_t words = 0;
	int ret;

	*out = NULL;
	if (!job)
		return rb_set_error(-ENOMEM, "out of memory for a job");
	job->dev = dev;
	job->plan = plan;
	job->in = in;
	job->launch = launch;
	ret = plan_submits(job);
	if (ret == 0)
		ret = rb_npu_job_program_words(plan, &words);
	if (ret == 0)
		ret = create_buffers(job, words);
	if (ret == 0)
		ret = encode_programs(job);
	if (ret == 0 && !dev->unsafe_skip_validation)
		ret = validate_programs(job);
	if (ret == 0)
		ret = pack_weights(job);
	if (ret == 0 && plan->out == RB_PREC_FP16 && plan->n_kslices > 1) {
		job->partial =
		    malloc((size_t)plan->shape.m * (size_t)plan->shape.n * sizeof(float));
		ret = job->partial ? 0 : rb_set_error(-ENOMEM, "out of memory for K-slice sums");
	}
	if (ret < 0) {
		rb_npu_job_free(job);
		return ret;
	}
	*out = job;
	return 0;
}

void rb_npu_job_free(struct rb_npu_job *job)
{
	struct rb_rknpu *drv;

	if (!job)
		return;
	drv = &job->dev->drv;
	rb_rknpu_bo_destroy(drv, &job->tasks);
	rb_rknpu_bo_destroy(drv, &job->regcmd);
	rb_rknpu_bo_destroy(drv, &job->c);
	rb_rknpu_bo_destroy(drv, &job->b);
	rb_rknpu_bo_destroy(drv, &job->a);
	free(job->submits);
	free(job->partial);
	free(job);
}

/* ---- running ---- */

static void fill_submit(const struct rb_npu_job *job, const struct job_submit *s, bool nonblock,
			struct rknpu_submit *sub)
{
	memset(sub, 0, sizeof(*sub));
	sub->flags = RKNPU_JOB_PC | RKNPU_JOB_PINGPONG;
	if (nonblock)
		sub->flags |= RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	sub->timeout = (uint32_t)job->dev->timeout_ms;
	sub->task_start = s->task_start;
	sub->task_number = s->task_number;
	sub->task_obj_addr = job->tasks.obj_addr;
	sub->core_mask = rb_fault_core_mask(1u << s->core);
	sub->fence_fd = -1;
	/* A single-core job takes its range from subcore_task[core index] (§d.1). */
	sub->subcore_task[s->core].task_start = s->task_start;
	sub->subcore_task[s->core].task_number = s->task_number;
}

/* Names the failing submit and, under emulation, what the emulated kernel logged. */
static int submit_error(const struct rb_npu_job *job, const struct job_submit *s, int err)
{
	struct rb_sim_kmod *kmod = rb_transport_sim_kmod(&job->dev->drv.tr);
	const char *fault = kmod ? rb_sim_kmod_last_fault(kmod) : "";
	char cause[512];

	/* rb_set_error writes the buffer rb_last_error() returns: copy it first. */
	snprintf(cause, sizeof(cause), "%s", rb_last_error());
	return rb_set_error(err, "core %u, tasks %u..%u: %s%s%s", s->core, s->task_start,
			    s->task_start + s->task_number - 1, cause, *fault ? "; emulator: " : "",
			    fault);
}

/* Non-blocking submits with out-fences for every core, then one wait per fence. */
static int launch_fences(struct rb_npu_job *job)
{
	int *fences = malloc(job->n_submits * sizeof(*fences));
	int ret = fences ? 0 : -ENOMEM, err;
	char first_error[768] = "";
	size_t n = 0;

	for (size_t i = 0; ret == 0 && i < job->n_submits; i++) {
		struct rknpu_submit sub;

		fill_submit(job, &job->submits[i], true, &sub);
		ret = rb_rknpu_submit(&job->dev->drv, &sub);
		if (ret < 0)
			ret = submit_error(job, &job->submits[i], ret);
		else
			fences[n++] = sub.fence_fd;
	}
	if (ret < 0)
		snprintf(first_error, sizeof(first_error), "%s", rb_last_error());
	/* Wait for everything that was submitted, even after an error; the first error is
	 * the one reported (later calls overwrite rb_last_error). */
	for (size_t i = 0; i < n; i++) {
		err = rb_rknpu_fence_wait(&job->dev->drv, fences[i], job->dev->timeout_ms);
		if (err < 0 && ret == 0) {
			ret = submit_error(job, &job->submits[i], err);
			snprintf(first_error, sizeof(first_error), "%s", rb_last_error());
		}
	}
	free(fences);
	return ret < 0 ? rb_set_error(ret, "%s", first_error) : 0;
}

/* The subcore_task entry of core `core` in a submit for `mask` (§d.1): entry i for one
 * or two cores, entry i + 2 for three. */
static unsigned subcore_index(uint32_t mask, unsigned core)
{
	return __builtin_popcount(mask) == 3 ? core + 2 : core;
}

/* The cores that have a round-th submit (chain). */
static uint32_t round_mask(const struct rb_npu_job *job, size_t round)
{
	size_t seen[RB_PLAN_MAX_CORES] = {0};
	uint32_t mask = 0;

	for (size_t i = 0; i < job->n_submits; i++)
		if (seen[job->submits[i].core]++ == round)
			mask |= 1u << job->submits[i].core;
	return mask;
}

/* One SUBMIT for the round-th chain of every core in `mask`. */
static void fill_multicore(const struct rb_npu_job *job, size_t round, uint32_t mask,
			   struct rknpu_submit *sub, const struct job_submit **first)
{
	size_t seen[RB_PLAN_MAX_CORES] = {0};

	memset(sub, 0, sizeof(*sub));
	*first = NULL;
	for (size_t i = 0; i < job->n_submits; i++) {
		const struct job_submit *s = &job->submits[i];
		unsigned idx = subcore_index(mask, s->core);

		if (seen[s->core]++ != round || !(mask & (1u << s->core)))
			continue;
		if (!*first)
			*first = s;
		sub->subcore_task[idx].task_start = s->task_start;
		sub->subcore_task[idx].task_number = s->task_number;
		sub->task_number += s->task_number;
	}
	sub->flags = RKNPU_JOB_PC | RKNPU_JOB_PINGPONG | RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	sub->timeout = (uint32_t)job->dev->timeout_ms;
	sub->task_start = (*first)->task_start;
	sub->task_obj_addr = job->tasks.obj_addr;
	sub->core_mask = rb_fault_core_mask(mask);
	sub->fence_fd = -1;
}

/* The submits of one round: all its cores together, unless uneven task counts leave
 * cores 0+2 or 1+2 (masks the vendor driver never runs) for a plan that did not ask
 * for them: those go one core at a time. */
static size_t round_masks(const struct rb_npu_job *job, size_t round, uint32_t masks[3])
{
	uint32_t mask = round_mask(job, round);
	size_t n = 0;

	if ((mask == 0x5 || mask == 0x6) && mask != job->plan->config.core_mask) {
		for (unsigned c = 0; c < RB_PLAN_MAX_CORES; c++)
			if (mask & (1u << c))
				masks[n++] = 1u << c;
		return n;
	}
	masks[0] = mask;
	return mask ? 1 : 0;
}

/* One multi-core submit per round, then a wait for each. */
static int launch_multicore(struct rb_npu_job *job)
{
	size_t cap = job->n_submits + 1, n = 0, n_masks;
	int *fences = malloc(cap * sizeof(*fences));
	const struct job_submit **owner = malloc(cap * sizeof(*owner));
	char first_error[768] = "";
	int ret = fences && owner ? 0 : -ENOMEM, err;
	uint32_t masks[RB_PLAN_MAX_CORES];

	for (size_t round = 0; ret == 0 && (n_masks = round_masks(job, round, masks)); round++) {
		for (size_t m = 0; ret == 0 && m < n_masks; m++) {
			struct rknpu_submit sub;

			fill_multicore(job, round, masks[m], &sub, &owner[n]);
			ret = rb_rknpu_submit(&job->dev->drv, &sub);
			if (ret < 0)
				ret = submit_error(job, owner[n], ret);
			fences[n] = sub.fence_fd;
			n += ret == 0;
		}
	}
	if (ret < 0)
		snprintf(first_error, sizeof(first_error), "%s", rb_last_error());
	for (size_t i = 0; i < n; i++) {
		err = rb_rknpu_fence_wait(&job->dev->drv, fences[i], job->dev->timeout_ms);
		if (err < 0 && ret == 0) {
			ret = submit_error(job, owner[i], err);
			snprintf(first_error, sizeof(first_error), "%s", rb_last_error());
		}
	}
	free(fences);
	free(owner);
	return ret < 0 ? rb_set_error(ret, "%s", first_error) : 0;
}

struct core_thread {
	struct rb_npu_job *job;
	unsigned core;
	double hw_us;
	int ret;
	char error[512];
};

/* The seed backend's way: each core's submits, blocking, from a thread of its own. */
static void *core_thread_main(void *arg)
{
	struct core_thread *ct = arg;
	struct rb_npu_job *job = ct->job;

	for (size_t i = 0; ct->ret == 0 && i < job->n_submits; i++) {
		struct rknpu_submit sub;

		if (job->submits[i].core != ct->core)
			continue;
		fill_submit(job, &job->submits[i], false, &sub);
		ct->ret = rb_rknpu_submit(&job->dev->drv, &sub);
		if (ct->ret < 0) {
			ct->ret = submit_error(job, &job->submits[i], ct->ret);
			snprintf(ct->error, sizeof(ct->error), "%s", rb_last_error());
		}
		ct->hw_us += (double)sub.hw_elapse_time / 1000.0;
	}
	return NULL;
}

static int launch_threads(struct rb_npu_job *job, struct rb_npu_job_times *times)
{
	struct core_thread ct[RB_PLAN_MAX_CORES] = {0};
	pthread_t tid[RB_PLAN_MAX_CORES];
	bool started[RB_PLAN_MAX_CORES] = {false};
	int ret = 0;

	for (unsigned i = 0; i < job->plan->n_cores; i++) {
		ct[i].job = job;
		ct[i].core = job->plan->cores[i].core;
		started[i] = pthread_create(&tid[i], NULL, core_thread_main, &ct[i]) == 0;
		if (!started[i])
			core_thread_main(&ct[i]);
	}
	for (unsigned i = 0; i < job->plan->n_cores; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		times->hw_us[ct[i].core] = ct[i].hw_us;
		if (ct[i].ret < 0 && ret == 0)
			ret = rb_set_error(ct[i].ret, "%s", ct[i].error);
	}
	return ret;
}

/* C (row-major) from the C cubes, adding K-slices on the host. */
static int unpack_output(struct rb_npu_job *job, void *c)
{
	const struct rb_plan *p = job->plan;
	struct rb_layout_c_tile tile;
	int ret = 0;

	rb_layout_c_tile_full(&tile, p->shape.m, p->shape.n);
	for (uint32_t s = 0; ret == 0 && s < p->n_kslices; s++) {
		const void *cube = (const char *)job->c.map + (size_t)s * p->c_cube_bytes;
		float *dst = s && p->out == RB_PREC_FP16 ? job->partial : c;

		if (p->out == RB_PREC_FP16)
			ret = rb_layout_unpack_c_f16_f32(dst, p->shape.n, cube, &tile, 0);
		else if (s == 0)
			ret = rb_layout_unpack_c(c, p->shape.n, cube, 4, &tile, 0);
		else if (p->out == RB_PREC_INT32)
			ret = rb_layout_accumulate_c_i32(c, p->shape.n, cube, &tile, 0);
		else
			ret = rb_layout_accumulate_c_f32(c, p->shape.n, cube, &tile, 0);
		if (ret == 0 && dst == job->partial) {
			size_t n = (size_t)p->shape.m * (size_t)p->shape.n;

			for (size_t i = 0; i < n; i++)
				((float *)c)[i] += job->partial[i];
		}
	}
	return ret;
}

/* Integer nanoseconds: the difference of two clock readings is exact, so modeled
 * times are identical run after run. */
static uint64_t device_ns(const struct rb_npu_job *job)
{
	const struct rb_transport *tr = &job->dev->drv.tr;

	return tr->ops->now_ns(tr->priv);
}

static int launch(struct rb_npu_job *job, struct rb_npu_job_times *times)
{
	switch (job->launch) {
	case RB_LAUNCH_THREADS:
		return launch_threads(job, times);
	case RB_LAUNCH_MULTICORE:
		return launch_multicore(job);
	default:
		return launch_fences(job);
	}
}

static double host_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int pack_features(struct rb_npu_job *job)
{
	const struct rb_plan *p = job->plan;
	const struct rb_shape *s = &p->shape;
	int ret = 0;

	if (!job->dev->model_only)
		ret = rb_layout_pack_a(job->a.map, job->in->a, s->dtype, s->m, s->k, p->k_pad, 0);
	return ret < 0 ? ret
		       : rb_rknpu_bo_sync(&job->dev->drv, &job->a, RKNPU_MEM_SYNC_TO_DEVICE, 0,
					  job->a.size);
}

/* True when the phase is to run (see enum rb_npu_phase). Called outside the timed
 * windows, so that a profiler's own work is not in the times. */
static bool phase(const struct rb_npu_job *job, enum rb_npu_phase p)
{
	return !job->dev->on_phase || job->dev->on_phase(job->dev->phase_ctx, p);
}

int rb_npu_job_run(struct rb_npu_job *job, void *c, struct rb_npu_job_times *times)
{
	double t0;
	uint64_t d0;
	bool run;
	int ret = 0;

	memset(times, 0, sizeof(*times));
	run = phase(job, RB_NPU_PHASE_PACK_A);
	t0 = host_us();
	if (run)
		ret = pack_features(job);
	times->pack_us = host_us() - t0;
	run = phase(job, RB_NPU_PHASE_SUBMIT);
	t0 = host_us();
	d0 = device_ns(job);
	if (ret == 0 && run)
		ret = launch(job, times);
	times->device_us = (double)(device_ns(job) - d0) / 1000.0;
	times->submit_us = host_us() - t0;
	run = phase(job, RB_NPU_PHASE_UNPACK);
	t0 = host_us();
	if (ret == 0 && run)
		ret = rb_rknpu_bo_sync(&job->dev->drv, &job->c, RKNPU_MEM_SYNC_FROM_DEVICE, 0,
				       job->c.size);
	if (ret == 0 && run && !job->dev->model_only)
		ret = unpack_output(job, c);
	times->unpack_us = host_us() - t0;
	phase(job, RB_NPU_PHASE_DONE);
	return ret;
}
