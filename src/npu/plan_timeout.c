/* Submits that stay well inside the kernel's job timeout (plan.h, rb_plan_fit_timeout).
 *
 * A kernel gives a job a fixed time: rocket 500 ms from its first kick, then it resets
 * the core and drops the rest (npu-facts §a.3); the vendor driver the submit's timeout
 * (rknn-bench asks 6000 ms). On a mainline board the NPU runs at 200 MHz (§1, §e), so a
 * job that the 1 GHz profile models at 150 ms takes up to 5x longer there. The planner
 * models each task on the profile the device runs at (sim/timing.h, the emulator's own
 * model), with the DDR bandwidth the plan's cores share when all of them stream, and
 * cuts a core's submits so that none models above half the timeout: the other half is
 * the margin for what the model does not know.
 *
 * A task that starts a new submit cannot count on weights the previous one left in the
 * CBUF (a new job resets it, §c): its WEIGHT_REUSE goes and its weights are read again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "npu/job.h"
#include "npu/plan.h"
#include "npu/regcmd.h"
#include "sim/timing.h"

#define MS_NS UINT64_C(1000000)

/* The profile with the DDR share of one core when every core of the plan streams. */
static struct rb_soc_profile shared_profile(const struct rb_soc_profile *soc, unsigned n_cores)
{
	struct rb_soc_profile p = *soc;
	double share = soc->ddr_total_gbps / (n_cores ? n_cores : 1);

	if (p.ddr_core_gbps > share)
		p.ddr_core_gbps = share;
	p.ddr_total_gbps = p.ddr_core_gbps;
	return p;
}

/* Regcmd words the PC fetches for a task (its body and tail). */
static uint64_t task_words(const struct rb_npu_task *t)
{
	struct rb_regcmd rc;
	uint64_t n = 128; /* a 108-word program plus DPU_RDMA's, if encoding fails */

	rb_regcmd_init(&rc);
	if (rb_regcmd_emit_task(&rc, t) == 0)
		n = rc.count;
	rb_regcmd_release(&rc);
	return n;
}

struct estimate {
	const struct rb_soc_profile *soc;
	uint64_t words;   /* per task */
	uint64_t kick_ns; /* fixed costs of a kick (commit and interrupt) */
	bool per_task;    /* the kernel kicks every task alone (rocket) */
	struct rb_timing_task last;
	uint64_t last_ns;
};

static bool same_task(const struct rb_timing_task *a, const struct rb_timing_task *b)
{
	return a->feature_bytes == b->feature_bytes && a->weight_bytes == b->weight_bytes &&
	       a->output_bytes == b->output_bytes && a->cycles == b->cycles &&
	       a->fetch_words == b->fetch_words;
}

/* Modeled ns of one task run alone on its core (no overlap with its neighbours: an
 * upper bound for chained tasks), with its kick's fixed costs when it has its own. */
static uint64_t task_ns(struct estimate *e, const struct rb_plan_task *t)
{
	struct rb_timing_task tt = {
	    .fetch_words = e->words,
	    .feature_bytes = t->npu.data_reuse ? 0 : t->feature_bytes,
	    .weight_bytes = t->weight_bytes,
	    .output_bytes = t->output_bytes,
	    .cycles = rb_timing_cycles(e->soc, t->npu.dtype == RB_DTYPE_INT8, t->npu.m, t->npu.k,
				       t->npu.n),
	};
	struct rb_timing_core core = {.tasks = &tt, .n_tasks = 1};

	if (!e->last_ns || !same_task(&tt, &e->last)) {
		rb_timing_run(e->soc, &core, 1);
		e->last = tt;
		e->last_ns = core.elapsed_ns;
	}
	return e->last_ns + (e->per_task ? e->kick_ns : 0);
}

/* The task starts a submit: it reads its weights again. */
static void drop_reuse(const struct rb_plan *p, struct rb_plan_core *c, struct rb_plan_task *t)
{
	if (!t->npu.weight_reuse)
		return;
	t->npu.weight_reuse = false;
	t->weight_bytes = (uint64_t)t->npu.n * t->npu.k * p->bpe;
	c->weight_bytes += t->weight_bytes;
}

/* Where a core's tasks are cut anyway: without chain before every task; with chain
 * every TASKS_PER_SUBMIT tasks, the vendor kernel's TASK_NUMBER limit (rocket kicks
 * each task alone and takes a job of any length). */
static bool plan_cut(const struct rb_plan *p, const struct estimate *e, size_t t)
{
	return !p->config.chain || (!e->per_task && t % RB_PLAN_TASKS_PER_SUBMIT == 0);
}

/* Cuts core c's tasks; returns the number of submits, or 0 when out of memory. */
static size_t cut_core(struct rb_plan *p, struct rb_plan_core *c, struct estimate *e,
		       uint64_t limit_ns, struct rb_plan_timeout_fit *fit)
{
	uint32_t *ends = calloc(c->n_tasks + 1, sizeof(*ends));
	uint64_t run_ns = 0, plan_run_ns = 0;
	size_t n = 0;

	if (!ends)
		return 0;
	for (size_t t = 0; t < c->n_tasks; t++) {
		uint64_t ns;
		bool cut = t > 0 && plan_cut(p, e, t);

		if (t > 0 && !cut && run_ns + task_ns(e, &c->tasks[t]) > limit_ns) {
			drop_reuse(p, c, &c->tasks[t]);
			cut = true;
		}
		if (cut)
			ends[n++] = (uint32_t)t;
		if (t > 0 && plan_cut(p, e, t)) {
			plan_run_ns = 0;
			fit->submits_before++;
		}
		ns =
		    task_ns(e, &c->tasks[t]) + (cut || t == 0 ? (e->per_task ? 0 : e->kick_ns) : 0);
		run_ns = cut ? ns : run_ns + ns;
		plan_run_ns += ns;
		if (run_ns > fit->longest_ns)
			fit->longest_ns = run_ns;
		if (plan_run_ns > fit->unsplit_ns)
			fit->unsplit_ns = plan_run_ns;
	}
	if (c->n_tasks) {
		ends[n++] = (uint32_t)c->n_tasks;
		fit->submits_before++;
	}
	free(c->submit_ends);
	c->submit_ends = ends;
	return n;
}

static void recount(struct rb_plan *p)
{
	p->n_submits = 0;
	p->weight_bytes = 0;
	p->max_core_bytes = 0;
	for (unsigned i = 0; i < p->n_cores; i++) {
		const struct rb_plan_core *c = &p->cores[i];
		uint64_t bytes = c->feature_bytes + c->weight_bytes + c->output_bytes;

		p->n_submits += c->n_submits;
		p->weight_bytes += c->weight_bytes;
		if (bytes > p->max_core_bytes)
			p->max_core_bytes = bytes;
	}
}

int rb_plan_fit_timeout(struct rb_plan *p, const struct rb_soc_profile *soc, unsigned timeout_ms,
			bool kick_per_task)
{
	struct rb_soc_profile shared = shared_profile(soc, p->n_cores);
	struct rb_plan_timeout_fit fit = {
	    .clock_mhz = soc->clock_mhz,
	    .timeout_ms = timeout_ms,
	    .limit_ns = (uint64_t)timeout_ms * MS_NS / 2,
	};
	struct estimate e = {
	    .soc = &shared,
	    .kick_ns = (uint64_t)(soc->submit_commit_ns + soc->submit_irq_ns),
	    .per_task = kick_per_task,
	};

	if (!timeout_ms)
		return rb_set_error(-EINVAL, "a job timeout of 0 ms leaves no time for a submit");
	for (unsigned i = 0; i < p->n_cores; i++) {
		struct rb_plan_core *c = &p->cores[i];
		size_t n;

		if (!c->n_tasks)
			continue;
		e.words = task_words(&c->tasks[0].npu);
		e.last_ns = 0;
		n = cut_core(p, c, &e, fit.limit_ns, &fit);
		if (!n)
			return rb_set_error(-ENOMEM, "out of memory for %zu submits", c->n_tasks);
		c->n_submits = n;
	}
	recount(p);
	fit.submits_after = p->n_submits;
	p->timeout_fit = fit;
	return 0;
}

int rb_plan_timeout_note(const struct rb_plan *p, const char *driver, char *buf, size_t size)
{
	const struct rb_plan_timeout_fit *f = &p->timeout_fit;

	if (!f->timeout_ms)
		return snprintf(buf, size, "%s", "");
	if (f->submits_after == f->submits_before)
		return snprintf(buf, size,
				"the longest submit models %.1f ms at %.0f MHz, within half of "
				"%s's %u ms job timeout",
				(double)f->longest_ns / 1e6, f->clock_mhz, driver, f->timeout_ms);
	return snprintf(buf, size,
			"split into %zu submits (from %zu) for %s's %u ms job timeout: unsplit, "
			"a submit models %.1f ms at %.0f MHz, over half of it; now each at most "
			"%.1f ms",
			f->submits_after, f->submits_before, driver, f->timeout_ms,
			(double)f->unsplit_ns / 1e6, f->clock_mhz, (double)f->longest_ns / 1e6);
}

int rb_npu_fit_plan(struct rb_plan *plan, const struct rb_npu_device *dev)
{
	return rb_plan_fit_timeout(plan, &dev->soc, rb_npu_device_job_timeout_ms(dev),
				   dev->driver == RB_DRIVER_ROCKET);
}

int rb_plan_fit_driver(struct rb_plan *plan, const struct rb_soc_profile *soc)
{
	bool rocket = plan->config.mainline;

	return rb_plan_fit_timeout(
	    plan, soc, rocket ? RB_ROCKET_JOB_TIMEOUT_MS : RB_NPU_DEFAULT_TIMEOUT_MS, rocket);
}
