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

/* A buffer object of either driver: the runner's seam to the two drivers is
 * bo_create/bo_destroy/bo_to_device/bo_from_device below and the launch functions. */
struct job_bo {
	void *map;
	uint32_t dma_addr;
	uint64_t size;
	struct rb_rknpu_bo rknpu;
	struct rb_rocket_bo rocket;
};

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
	struct job_bo a, b, c, regcmd, tasks; /* rocket: no task BO (tasks go in SUBMIT) */
	struct drm_rocket_task *rocket_tasks; /* rocket: every task, in submit order */
	struct job_submit *submits;
	size_t n_submits;
	float *partial; /* fp16 output with K-slices: one slice unpacked before adding */
	bool launched;  /* for fault_hang_once */
};

/* ---- devices ---- */

static int device_init(struct rb_npu_device *dev, struct rb_transport *tr, const char *name,
		       enum rb_npu_driver driver)
{
	memset(dev, 0, sizeof(*dev));
	dev->name = name;
	dev->driver = driver;
	dev->modeled = strcmp(tr->ops->name, "sim") == 0;
	dev->timeout_ms = DEFAULT_TIMEOUT_MS;
	if (driver == RB_DRIVER_ROCKET)
		return rb_rocket_open(&dev->rocket, tr);
	return rb_rknpu_open(&dev->drv, tr);
}

int rb_npu_device_open_sim(struct rb_npu_device *dev, const struct rb_sim_config *cfg)
{
	struct rb_transport tr;
	int ret = rb_transport_open_sim_rknpu(&tr, cfg);
	bool model_only = tr.model_only; /* device_init takes tr over */

	if (ret == 0)
		ret = device_init(dev, &tr, "sim", RB_DRIVER_RKNPU);
	if (ret == 0)
		dev->model_only = model_only;
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
	if (ret == 0)
		ret = device_init(dev, &tr, "rknpu", RB_DRIVER_RKNPU);
	return ret;
}

int rb_npu_device_open_sim_rocket(struct rb_npu_device *dev, const struct rb_sim_config *cfg)
{
	struct rb_transport tr;
	int ret = rb_transport_open_sim_rocket(&tr, cfg);
	bool model_only = tr.model_only; /* device_init takes tr over */

	if (ret == 0)
		ret = device_init(dev, &tr, "sim:rocket", RB_DRIVER_ROCKET);
	if (ret == 0)
		dev->model_only = model_only;
	return ret;
}

int rb_npu_device_open_rocket(struct rb_npu_device *dev, const char *path)
{
	struct rb_npu_node node;
	struct rb_transport tr;
	int ret =
	    path ? rb_discover_check(path, "rocket", &node) : rb_discover_driver("rocket", &node);

	if (ret == 0)
		ret = rb_transport_open_host(&tr, node.path);
	if (ret == 0)
		ret = device_init(dev, &tr, "rocket", RB_DRIVER_ROCKET);
	return ret;
}

void rb_npu_device_close(struct rb_npu_device *dev)
{
	if (dev->driver == RB_DRIVER_ROCKET)
		rb_rocket_close(&dev->rocket);
	else
		rb_rknpu_close(&dev->drv);
	memset(dev, 0, sizeof(*dev));
}

struct rb_transport *rb_npu_device_transport(struct rb_npu_device *dev)
{
	return dev->driver == RB_DRIVER_ROCKET ? &dev->rocket.tr : &dev->drv.tr;
}

/* ---- buffers of either driver ---- */

static bool is_rocket(const struct rb_npu_job *job)
{
	return job->dev->driver == RB_DRIVER_ROCKET;
}

static int bo_create(struct rb_npu_device *dev, uint64_t size, uint32_t rknpu_flags,
		     struct job_bo *bo)
{
	int ret;

	memset(bo, 0, sizeof(*bo));
	if (dev->driver == RB_DRIVER_RKNPU) {
		ret = rb_rknpu_bo_create(&dev->drv, size, rknpu_flags, &bo->rknpu);
		bo->map = bo->rknpu.map;
		bo->dma_addr = bo->rknpu.dma_addr;
		bo->size = bo->rknpu.size;
		return ret;
	}
	if (size > UINT32_MAX)
		return rb_set_error(-ENOMEM, "a %llu-byte buffer is more than rocket's 4 GiB limit",
				    (unsigned long long)size);
	ret = rb_rocket_bo_create(&dev->rocket, (uint32_t)size, &bo->rocket);
	bo->map = bo->rocket.map;
	bo->dma_addr = bo->rocket.dma_addr;
	bo->size = bo->rocket.size;
	return ret;
}

static void bo_destroy(struct rb_npu_device *dev, struct job_bo *bo)
{
	if (dev->driver == RB_DRIVER_RKNPU)
		rb_rknpu_bo_destroy(&dev->drv, &bo->rknpu);
	else
		rb_rocket_bo_destroy(&dev->rocket, &bo->rocket);
	memset(bo, 0, sizeof(*bo));
}

/* CPU writes done: rknpu MEM_SYNC to the device, rocket FINI_BO. */
static int bo_to_device(struct rb_npu_device *dev, const struct job_bo *bo)
{
	if (dev->driver == RB_DRIVER_RKNPU)
		return rb_rknpu_bo_sync(&dev->drv, &bo->rknpu, RKNPU_MEM_SYNC_TO_DEVICE, 0,
					bo->size);
	return rb_rocket_bo_fini(&dev->rocket, &bo->rocket);
}

/* Device writes done: rknpu MEM_SYNC from the device, rocket PREP_BO (which also waits
 * for the jobs writing it). */
static int bo_from_device(struct rb_npu_device *dev, const struct job_bo *bo)
{
	if (dev->driver == RB_DRIVER_RKNPU)
		return rb_rknpu_bo_sync(&dev->drv, &bo->rknpu, RKNPU_MEM_SYNC_FROM_DEVICE, 0,
					bo->size);
	return rb_rocket_bo_prep(&dev->rocket, &bo->rocket, dev->timeout_ms);
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

/* The kernel's description of task `index`: an rknpu_task in the task BO, or rocket's
 * {regcmd, regcmd_count} for the SUBMIT. */
static void fill_task(struct rb_npu_job *job, uint32_t index, const struct rb_npu_task *npu,
		      const struct rb_regcmd_layout *lay)
{
	struct rknpu_task *desc;

	if (is_rocket(job)) {
		job->rocket_tasks[index].regcmd = lay->addr;
		job->rocket_tasks[index].regcmd_count = lay->words;
		return;
	}
	desc = (struct rknpu_task *)job->tasks.map + index;
	memset(desc, 0, sizeof(*desc));
	desc->enable_mask = rb_regcmd_op_enable(npu);
	desc->int_mask = rb_regcmd_int_mask();
	desc->int_clear = RKNPU_INT_CLEAR;
	desc->regcfg_amount = lay->regcfg_amount;
	desc->regcmd_addr = lay->addr;
}

/* Encodes one submit's chain at `word` in the regcmd buffer and fills its task
 * descriptors; returns the words used or a negative errno. */
static long encode_submit(struct rb_npu_job *job, const struct job_submit *s, size_t word,
			  struct rb_regcmd *rc)
{
	struct rb_plan_bases bases = {job->a.dma_addr, job->b.dma_addr, job->c.dma_addr};
	struct rb_npu_task *npu = calloc(s->task_number, sizeof(*npu));
	struct rb_regcmd_layout *lay = calloc(s->task_number, sizeof(*lay));
	int ret = npu && lay ? 0 : -ENOMEM;

	for (uint32_t i = 0; ret == 0 && i < s->task_number; i++)
		ret = rb_plan_task_resolve(job->plan, task_at(job->plan, s->task_start + i), &bases,
					   &npu[i]);
	if (ret == 0)
		ret = rb_regcmd_build_chain(rc, npu, s->task_number,
					    job->regcmd.dma_addr + (uint32_t)(word * 8), lay);
	for (uint32_t i = 0; ret == 0 && i < s->task_number; i++)
		fill_task(job, s->task_start + i, &npu[i], &lay[i]);
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
	struct rb_npu_device *dev = job->dev;
	const struct rb_plan *plan = job->plan;
	int ret;

	ret = bo_create(dev, plan->a_bytes, DATA_BO_FLAGS, &job->a);
	if (ret == 0)
		ret = bo_create(dev, plan->b_bytes, DATA_BO_FLAGS, &job->b);
	if (ret == 0)
		ret = bo_create(dev, plan->c_bytes, DATA_BO_FLAGS, &job->c);
	if (ret == 0)
		ret = bo_create(dev, words * 8, DATA_BO_FLAGS, &job->regcmd);
	if (ret == 0 && is_rocket(job)) {
		job->rocket_tasks = calloc(plan->n_tasks, sizeof(*job->rocket_tasks));
		return job->rocket_tasks ? 0 : rb_set_error(-ENOMEM, "out of memory for tasks");
	}
	/* The kernel reads the descriptors through its own mapping of this BO (§d.1). */
	if (ret == 0)
		ret = bo_create(dev, plan->n_tasks * sizeof(struct rknpu_task),
				RKNPU_MEM_KERNEL_MAPPING, &job->tasks);
	return ret;
}

/* Every program is checked before anything is submitted (npu/validate.h), on every
 * device, so what the tests run is what a board runs. */
/* Where task i's program lies, as the kernel is told: the rknpu task descriptor, or
 * rocket's {regcmd, regcmd_count} (body and tail). */
static struct rb_validate_task task_program(const struct rb_npu_job *job, size_t i)
{
	const struct rknpu_task *desc = job->tasks.map;

	if (is_rocket(job))
		return (struct rb_validate_task){job->rocket_tasks[i].regcmd,
						 job->rocket_tasks[i].regcmd_count -
						     RB_REGCMD_TAIL_WORDS};
	return (struct rb_validate_task){desc[i].regcmd_addr, desc[i].regcfg_amount};
}

static int validate_programs(const struct rb_npu_job *job)
{
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
				    RB_NPU_CBUF_BANKS,
				    is_rocket(job)};
	struct rb_validate_task *tasks = calloc(job->plan->n_tasks, sizeof(*tasks));
	struct rb_validate_chain *chains = calloc(job->n_submits, sizeof(*chains));
	int ret = tasks && chains ? 0 : rb_set_error(-ENOMEM, "out of memory for validation");

	for (size_t i = 0; ret == 0 && i < job->plan->n_tasks; i++)
		tasks[i] = task_program(job, i);
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
		ret = bo_to_device(job->dev, &job->b);
	if (ret == 0)
		ret = bo_to_device(job->dev, &job->regcmd);
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
	ret = 0;
	if (dev->driver == RB_DRIVER_ROCKET && launch == RB_LAUNCH_MULTICORE)
		ret = rb_set_error(-EINVAL,
				   "launch mode 'multicore' is the vendor driver's core-mask "
				   "submit; rocket has none: use fences or threads");
	if (ret == 0)
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
	if (!job)
		return;
	bo_destroy(job->dev, &job->tasks);
	bo_destroy(job->dev, &job->regcmd);
	bo_destroy(job->dev, &job->c);
	bo_destroy(job->dev, &job->b);
	bo_destroy(job->dev, &job->a);
	free(job->rocket_tasks);
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
	sub->task_obj_addr = job->tasks.rknpu.obj_addr;
	sub->core_mask = rb_fault_core_mask(1u << s->core);
	sub->fence_fd = -1;
	/* A single-core job takes its range from subcore_task[core index] (§d.1). */
	sub->subcore_task[s->core].task_start = s->task_start;
	sub->subcore_task[s->core].task_number = s->task_number;
}

/* Names the failing submit and, under emulation, what the emulated kernel logged. */
static int submit_error(const struct rb_npu_job *job, const struct job_submit *s, int err)
{
	const char *fault = rb_transport_fault_text(rb_npu_device_transport(job->dev));
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
		if (!*first) {
			*first = s;
			sub->task_start = s->task_start;
		}
		sub->subcore_task[idx].task_start = s->task_start;
		sub->subcore_task[idx].task_number = s->task_number;
		sub->task_number += s->task_number;
	}
	sub->flags = RKNPU_JOB_PC | RKNPU_JOB_PINGPONG | RKNPU_JOB_NONBLOCK | RKNPU_JOB_FENCE_OUT;
	sub->timeout = (uint32_t)job->dev->timeout_ms;
	sub->task_obj_addr = job->tasks.rknpu.obj_addr;
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
	const struct rb_transport *tr = rb_npu_device_transport(job->dev);

	return tr->ops->now_ns(tr->priv);
}

/* ---- rocket ---- */

/* Rocket signals the fences of a job its scheduler timed out like those of a finished
 * one (the core is reset, the outputs stay as they were, §d.2), so C is filled with this
 * before each launch: a job whose last task's output still holds it never finished. An
 * all-ones word is a NaN payload no fp16/fp32 result has; an int32 result of exactly -1
 * in that place would be taken for a dropped job (and retried). */
#define ROCKET_CANARY 0xffu

/* The tasks of plan core i, in the rocket_tasks array (core after core). */
static uint32_t core_first_task(const struct rb_plan *plan, unsigned i)
{
	uint32_t start = 0;

	for (unsigned j = 0; j < i; j++)
		start += (uint32_t)plan->cores[j].n_tasks;
	return start;
}

/* Plan cores [first, first + n) as rocket jobs, one per core: its tasks in order,
 * reading A, B and the programs, writing C; one SUBMIT. */
static int rocket_submit(struct rb_npu_job *job, unsigned first, unsigned n)
{
	struct rb_rocket_job rj[RB_PLAN_MAX_CORES];
	uint32_t handles[4] = {job->a.rocket.handle, job->b.rocket.handle,
			       job->regcmd.rocket.handle, job->c.rocket.handle};
	unsigned used = 0;

	for (unsigned i = first; i < first + n; i++) {
		if (!job->plan->cores[i].n_tasks)
			continue;
		rj[used].tasks = &job->rocket_tasks[core_first_task(job->plan, i)];
		rj[used].n_tasks = (uint32_t)job->plan->cores[i].n_tasks;
		rj[used].in_handles = handles;
		rj[used].n_in = 3;
		rj[used].out_handles = &handles[3];
		rj[used].n_out = 1;
		used++;
	}
	return used ? rb_rocket_submit(&job->dev->rocket, rj, used) : 0;
}

struct rocket_thread {
	struct rb_npu_job *job;
	unsigned index; /* plan core */
	int ret;
	char error[512];
};

static void *rocket_thread_main(void *arg)
{
	struct rocket_thread *rt = arg;

	rt->ret = rocket_submit(rt->job, rt->index, 1);
	if (rt->ret < 0)
		snprintf(rt->error, sizeof(rt->error), "%s", rb_last_error());
	return NULL;
}

/* One SUBMIT per core, each from its own thread. */
static int rocket_submit_threads(struct rb_npu_job *job)
{
	struct rocket_thread rt[RB_PLAN_MAX_CORES] = {0};
	pthread_t tid[RB_PLAN_MAX_CORES];
	bool started[RB_PLAN_MAX_CORES] = {false};
	int ret = 0;

	for (unsigned i = 0; i < job->plan->n_cores; i++) {
		rt[i].job = job;
		rt[i].index = i;
		started[i] = pthread_create(&tid[i], NULL, rocket_thread_main, &rt[i]) == 0;
		if (!started[i])
			rocket_thread_main(&rt[i]);
	}
	for (unsigned i = 0; i < job->plan->n_cores; i++) {
		if (started[i])
			pthread_join(tid[i], NULL);
		if (rt[i].ret < 0 && ret == 0)
			ret = rb_set_error(rt[i].ret, "%s", rt[i].error);
	}
	return ret;
}

/* The kernel log under emulation ("" on a board), for messages. */
static const char *emulator_log(const struct rb_npu_job *job)
{
	return rb_transport_fault_text(rb_npu_device_transport(job->dev));
}

/* The end of the emulated kernel's log ("" on a board): it changes when a job fails,
 * as every line is stamped with the virtual time. */
static void log_tail(const struct rb_npu_job *job, char *buf, size_t size)
{
	const char *log = rb_transport_kernel_log(rb_npu_device_transport(job->dev));
	size_t n = strlen(log);

	snprintf(buf, size, "%s", log + (n >= size ? n - size + 1 : 0));
}

/* A job the kernel dropped (see ROCKET_CANARY). Under model_only C is never written:
 * then only the emulated kernel's log can tell. */
static int rocket_check_done(struct rb_npu_job *job, const char *log_before)
{
	const struct rb_plan *plan = job->plan;
	const char *log = emulator_log(job);
	char tail[512];

	log_tail(job, tail, sizeof(tail));

	for (unsigned i = 0; i < plan->n_cores; i++) {
		const struct rb_plan_core *core = &plan->cores[i];
		const unsigned char *out;
		bool untouched = !job->dev->model_only;

		if (!core->n_tasks)
			continue;
		out = (const unsigned char *)job->c.map + core->tasks[core->n_tasks - 1].npu.c_addr;
		for (int b = 0; b < 4; b++)
			untouched = untouched && out[b] == ROCKET_CANARY;
		if (job->dev->model_only)
			untouched = strcmp(tail, log_before) != 0;
		if (untouched)
			return rb_set_error(
			    -ETIMEDOUT,
			    "the rocket job of core %u's share (%zu tasks) never "
			    "wrote its output: the kernel timed it out and reset the "
			    "core%s%s",
			    core->core, core->n_tasks, *log ? "; emulator: " : "", log);
	}
	return 0;
}

/* Jobs of every core, then PREP_BO on C: rocket's completion is the fence on the BOs
 * a job writes (§d.2). */
static int launch_rocket(struct rb_npu_job *job)
{
	char log_before[512];
	int ret;

	log_tail(job, log_before, sizeof(log_before));
	if (job->launch == RB_LAUNCH_THREADS)
		ret = rocket_submit_threads(job);
	else
		ret = rocket_submit(job, 0, job->plan->n_cores);
	if (ret == 0)
		ret = bo_from_device(job->dev, &job->c);
	if (ret == 0)
		ret = rocket_check_done(job, log_before);
	return ret;
}

/* Fills C with the canary for the next launch and hands it to the device. */
static int rocket_arm_output(struct rb_npu_job *job)
{
	if (!is_rocket(job))
		return 0;
	if (!job->dev->model_only)
		memset(job->c.map, ROCKET_CANARY, job->c.size);
	return bo_to_device(job->dev, &job->c);
}

/* ---- launching, with one retry after a timeout ---- */

static int launch_once(struct rb_npu_job *job, struct rb_npu_job_times *times)
{
	if (is_rocket(job))
		return launch_rocket(job);
	switch (job->launch) {
	case RB_LAUNCH_THREADS:
		return launch_threads(job, times);
	case RB_LAUNCH_MULTICORE:
		return launch_multicore(job);
	default:
		return launch_fences(job);
	}
}

/* fault_hang_once: the job's first launch runs a broken program 0 (restored after). */
static int launch(struct rb_npu_job *job, struct rb_npu_job_times *times)
{
	uint64_t *word = (uint64_t *)job->regcmd.map + 1;
	uint64_t saved = *word;
	int hang = !job->launched && rb_fault_hang_once(word), ret;

	job->launched = true;
	if (hang)
		bo_to_device(job->dev, &job->regcmd);
	ret = launch_once(job, times);
	if (hang) {
		*word = saved;
		bo_to_device(job->dev, &job->regcmd);
	}
	return ret;
}

/* After a timeout: the vendor driver's ACT_RESET; rocket has no reset ioctl, its
 * scheduler already reset the core that hung (§a.3). */
static int reset_device(struct rb_npu_job *job)
{
	if (is_rocket(job))
		return rocket_arm_output(job);
	return rb_rknpu_action(&job->dev->drv, RKNPU_ACT_RESET, NULL);
}

/* A timed-out launch is retried once after a reset; the device time is that of the
 * launch that counts (from *d0). */
static int launch_retry(struct rb_npu_job *job, struct rb_npu_job_times *times, uint64_t *d0)
{
	char first[768];
	int ret = launch(job, times);

	if (ret != -ETIMEDOUT)
		return ret;
	snprintf(first, sizeof(first), "%s", rb_last_error());
	ret = reset_device(job);
	if (ret < 0)
		return rb_set_error(ret, "%s; then the reset failed: %s", first, rb_last_error());
	*d0 = device_ns(job);
	ret = launch(job, times);
	if (ret < 0) {
		/* rb_set_error writes the buffer rb_last_error() returns: copy it first. */
		snprintf(first, sizeof(first), "%s", rb_last_error());
		return rb_set_error(ret, "%s (it failed again after a reset and one retry)", first);
	}
	return 0;
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
	if (ret == 0)
		ret = bo_to_device(job->dev, &job->a);
	return ret < 0 ? ret : rocket_arm_output(job);
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
		ret = launch_retry(job, times, &d0);
	times->device_us = (double)(device_ns(job) - d0) / 1000.0;
	times->submit_us = host_us() - t0;
	run = phase(job, RB_NPU_PHASE_UNPACK);
	t0 = host_us();
	if (ret == 0 && run)
		ret = bo_from_device(job->dev, &job->c);
	if (ret == 0 && run && !job->dev->model_only)
		ret = unpack_output(job, c);
	times->unpack_us = host_us() - t0;
	phase(job, RB_NPU_PHASE_DONE);
	return ret;
}
