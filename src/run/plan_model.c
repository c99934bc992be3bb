/* The model-guided default on the emulator's timing model (plan_model.h). */
#include "run/plan_model.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "npu/regcmd.h"
#include "sim/timing.h"

/* Words the PC fetches for a task's program: (REGISTER_AMOUNTS + 1)·2 (hw_pc.c), from
 * the body the encoder writes. Every task of a plan has the same registers, so one
 * encoding gives them all. */
static int fetch_words(const struct rb_plan_task *task, uint64_t *words)
{
	struct rb_regcmd rc;
	int ret;

	rb_regcmd_init(&rc);
	ret = rb_regcmd_emit_task(&rc, &task->npu);
	if (ret == 0)
		*words =
		    ((uint64_t)rb_regcmd_pc_amount((uint32_t)(rc.count - RB_REGCMD_TAIL_WORDS)) +
		     1) *
		    2;
	rb_regcmd_release(&rc);
	return ret;
}

/* A task as the emulated NPU describes it to the timing model (hw_conv.c
 * describe_timing): the cubes its DMAs move, the MAC cycles, and whether it overlaps
 * the previous task (ping-pong inside one submit of chained tasks). */
static void describe(const struct rb_soc_profile *soc, const struct rb_plan *p,
		     const struct rb_plan_task *t, size_t index, uint64_t words,
		     struct rb_timing_task *out)
{
	const struct rb_npu_task *n = &t->npu;
	size_t per_submit = p->config.chain ? RB_PLAN_TASKS_PER_SUBMIT : 1;

	out->fetch_words = words;
	out->feature_bytes = (uint64_t)(n->k + p->c2_in - 1) / p->c2_in * n->m * 16;
	out->weight_bytes = n->weight_reuse ? 0 : (uint64_t)n->n * n->k * p->bpe;
	out->output_bytes = (uint64_t)(n->n + p->c2_out - 1) / p->c2_out * n->m * 16;
	out->cycles = rb_timing_cycles(soc, p->shape.dtype == RB_DTYPE_INT8, n->m, n->k, n->n);
	out->overlap = index % per_submit != 0;
}

/* Kick of the i-th busy core after the call starts, in ns, per launch mode: fences
 * submit core after core from one thread, threads all at once, multicore once for all
 * cores, the kernel committing them in turn (kmod_rknpu.c). */
static uint64_t kick_ns(const struct rb_soc_profile *soc, int launch, unsigned i)
{
	double ioctl = soc->submit_ioctl_ns, commit = soc->submit_commit_ns;

	if (launch == RB_LAUNCH_FENCES)
		return (uint64_t)((i + 1) * ioctl + commit);
	if (launch == RB_LAUNCH_THREADS)
		return (uint64_t)(ioctl + commit);
	return (uint64_t)(ioctl + (i + 1) * commit);
}

struct cores {
	struct rb_timing_core tc[RB_PLAN_MAX_CORES];
	struct rb_timing_task *tasks[RB_PLAN_MAX_CORES];
	size_t submits[RB_PLAN_MAX_CORES];
	double scale[RB_PLAN_MAX_CORES]; /* all tasks over the tasks timed */
	unsigned n;
};

/* The same share of every core's tasks is timed (at most RB_PLAN_MODEL_TASKS of the
 * busiest core's): cores of a weighted split then finish in the same order, and the
 * busiest runs alone at the end for the same share of its time, as in the whole run. */
static size_t timed_tasks(const struct rb_plan *p, size_t n_tasks)
{
	size_t most = 0, n;

	for (unsigned i = 0; i < p->n_cores; i++)
		most = p->cores[i].n_tasks > most ? p->cores[i].n_tasks : most;
	if (most <= RB_PLAN_MODEL_TASKS || n_tasks == 0)
		return n_tasks;
	n = (size_t)((double)n_tasks * RB_PLAN_MODEL_TASKS / (double)most + 0.5);
	return n ? n : 1;
}

static int describe_cores(const struct rb_soc_profile *soc, const struct rb_plan *p,
			  struct cores *c)
{
	uint64_t words = 0;

	memset(c, 0, sizeof(*c));
	for (unsigned i = 0; i < p->n_cores; i++) {
		const struct rb_plan_core *core = &p->cores[i];
		size_t n = timed_tasks(p, core->n_tasks);
		struct rb_timing_task *t;

		if (!n)
			continue;
		if (!words && fetch_words(&core->tasks[0], &words) < 0)
			return -EINVAL;
		t = malloc(n * sizeof(*t));
		if (!t)
			return rb_set_error(-ENOMEM, "out of memory for %zu tasks", n);
		for (size_t k = 0; k < n; k++)
			describe(soc, p, &core->tasks[k], k, words, &t[k]);
		c->tasks[c->n] = t;
		c->tc[c->n] = (struct rb_timing_core){.tasks = t, .n_tasks = n};
		c->scale[c->n] = (double)core->n_tasks / (double)n;
		c->submits[c->n++] = core->n_submits;
	}
	return 0;
}

static void release_cores(struct cores *c)
{
	for (unsigned i = 0; i < c->n; i++)
		free(c->tasks[i]);
}

/* Masks 0x5 and 0x6 never run as one multicore submit on the vendor driver. */
static bool launch_runs(const struct rb_plan *p, int launch)
{
	unsigned mask = p->config.core_mask;

	return launch != RB_LAUNCH_MULTICORE || (mask != 0x5 && mask != 0x6);
}

/* From the call to the waiter's wake: each core's tasks from its kick, each further
 * submit of a core one interrupt and commit later, then the last interrupt and wake. */
static double launch_us(const struct rb_soc_profile *soc, struct cores *c, int launch)
{
	uint64_t end = 0;

	for (unsigned i = 0; i < c->n; i++)
		c->tc[i].start_ns = kick_ns(soc, launch, i);
	rb_timing_run(soc, c->tc, c->n);
	for (unsigned i = 0; i < c->n; i++) {
		uint64_t gaps = (uint64_t)((double)(c->submits[i] - 1) *
					   (soc->submit_irq_ns + soc->submit_commit_ns));
		uint64_t done = c->tc[i].start_ns +
				(uint64_t)((double)c->tc[i].elapsed_ns * c->scale[i]) + gaps;

		end = done > end ? done : end;
	}
	return ((double)end + soc->submit_irq_ns + soc->submit_wake_ns) / 1e3;
}

int rb_plan_model_launches(void *ctx, const struct rb_plan *plan, unsigned launches,
			   double device_us[RB_PLAN_RANK_LAUNCHES])
{
	const struct rb_soc_profile *soc = ctx ? ctx : rb_soc_default();
	struct cores c;
	int ret = describe_cores(soc, plan, &c);

	for (int l = 0; ret == 0 && l < RB_PLAN_RANK_LAUNCHES; l++)
		device_us[l] = (launches >> l & 1) && launch_runs(plan, l) && c.n
				   ? launch_us(soc, &c, l)
				   : NAN;
	release_cores(&c);
	return ret;
}

unsigned rb_plan_model_launches_of(const char *device_name)
{
	if (device_name && strstr(device_name, "rocket"))
		return 1u << RB_LAUNCH_FENCES | 1u << RB_LAUNCH_THREADS;
	return RB_PLAN_RANK_ALL_LAUNCHES;
}

int rb_plan_model_default(const struct rb_shape *shape, const struct rb_plan_config *base,
			  bool native_b, unsigned launches, const struct rb_soc_profile *soc,
			  struct rb_plan_config *cfg, enum rb_npu_launch *launch,
			  struct rb_plan_ranking *ranking)
{
	struct rb_plan_ranking own = {0};
	struct rb_plan_ranking *r = ranking ? ranking : &own;
	int ret =
	    rb_plan_rank(shape, base, native_b, launches, rb_plan_model_launches, (void *)soc, r);

	if (ret < 0)
		return ret;
	*cfg = r->items[r->best].config;
	*launch = r->items[r->best].launch;
	return 0;
}

int rb_engine_opts_model_default(struct rb_engine_opts *opts, const struct rb_engine_ops *ops,
				 const struct rb_shape *shape)
{
	struct rb_plan_config base = opts->plan;

	return rb_plan_model_default(shape, &base, false, rb_plan_model_launches_of(ops->name),
				     opts->sim.soc, &opts->plan, &opts->launch, NULL);
}
