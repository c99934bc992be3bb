/* The job runner (see job.h), running: packing A, launching with one retry after a
 * timeout, waiting, the jobs a kernel may drop, unpacking C. */
#include "npu/job_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "numeric/layout.h"
#include "dev/discover.h"
#include "npu/fault.h"
#include "npu/regcmd.h"
#include "npu/validate.h"

/* ---- running ---- */

/* Rows [m0, m0 + rows) and columns [n0, n0 + cols) of C into c (rows×cols, row-major)
 * from the C cubes, adding K-slices on the host in slice order (the same sums whatever
 * the block). n0 is a multiple of the cube's C2, so the block starts a channel group:
 * its cube begins (n0 / C2) surfaces and m0 rows into the whole one (layout.h). fp16
 * slices after the first go through `partial` (rows×cols floats) before adding. */
static int unpack_block(const struct rb_npu_job *job, int64_t m0, int64_t rows, int64_t n0,
			int64_t cols, void *c, float *partial)
{
	const struct rb_plan *p = job->plan;
	size_t esize = p->out == RB_PREC_FP16 ? 2 : 4;
	size_t skip =
	    ((size_t)(n0 / rb_layout_c2(esize)) * p->m + (size_t)m0) * RB_LAYOUT_ATOM_BYTES;
	struct rb_layout_c_tile tile;
	int ret = 0;

	rb_layout_c_tile_full(&tile, rows, cols);
	tile.cube_rows = p->m; /* the whole cube's rows (the mainline variant pads M < 4) */
	for (uint32_t s = 0; ret == 0 && s < p->n_kslices; s++) {
		const void *cube = (const char *)job->c.map + (size_t)s * p->c_cube_bytes + skip;
		float *dst = s && p->out == RB_PREC_FP16 ? partial : c;

		if (p->out == RB_PREC_FP16)
			ret = rb_layout_unpack_c_f16_f32(dst, cols, cube, &tile, 0);
		else if (s == 0)
			ret = rb_layout_unpack_c(c, cols, cube, 4, &tile, 0);
		else if (p->out == RB_PREC_INT32)
			ret = rb_layout_accumulate_c_i32(c, cols, cube, &tile, 0);
		else
			ret = rb_layout_accumulate_c_f32(c, cols, cube, &tile, 0);
		if (ret == 0 && dst == partial) {
			size_t n = (size_t)rows * (size_t)cols;

			for (size_t i = 0; i < n; i++)
				((float *)c)[i] += partial[i];
		}
	}
	return ret;
}

/* C (row-major) from the C cubes. */
static int unpack_output(struct rb_npu_job *job, void *c)
{
	return unpack_block(job, 0, job->plan->shape.m, 0, job->plan->shape.n, c, job->partial);
}

int rb_npu_job_read_c(const struct rb_npu_job *job, int64_t m0, int64_t rows, int64_t n0,
		      int64_t cols, void *c)
{
	const struct rb_plan *p = job->plan;
	int64_t c2 = rb_layout_c2(p->out == RB_PREC_FP16 ? 2 : 4);
	bool sliced16 = p->out == RB_PREC_FP16 && p->n_kslices > 1;
	float *partial;
	int ret;

	if (job->dev->model_only || !job->launched || job->failed)
		return rb_set_error(-EINVAL, "no C on the device to read: the job has not run");
	if (m0 < 0 || rows < 0 || m0 + rows > p->shape.m || n0 < 0 || cols < 0 ||
	    n0 + cols > p->shape.n || n0 % c2)
		return rb_set_error(-EINVAL,
				    "block %" PRId64 "+%" PRId64 " x %" PRId64 "+%" PRId64
				    " is not inside C %" PRId64 "x%" PRId64
				    " starting on a multiple of %" PRId64 " columns",
				    m0, rows, n0, cols, p->shape.m, p->shape.n, c2);
	partial = sliced16 ? malloc((size_t)rows * (size_t)cols * sizeof(float)) : NULL;
	if (sliced16 && !partial)
		return rb_set_error(-ENOMEM, "out of memory for a block of K-slice sums");
	ret = unpack_block(job, m0, rows, n0, cols, c, partial);
	free(partial);
	return ret;
}

/* Integer nanoseconds: the difference of two clock readings is exact, so modeled
 * times are identical run after run. */
static uint64_t device_ns(const struct rb_npu_job *job)
{
	const struct rb_transport *tr = rb_npu_device_transport(job->dev);

	return tr->ops->now_ns(tr->priv);
}

/* ---- jobs a kernel may drop (rocket) ---- */

/* Rocket signals the fences of a job its scheduler timed out like those of a finished
 * one (the core is reset, the outputs stay as they were, §d.2), and drops a bad job at
 * SUBMIT without a word: for a device whose ops say drops_timed_out_jobs, C is filled
 * with this before each launch, and a job whose last task's output still holds it never
 * finished. An int32 result of exactly -1 in that place would be taken for a dropped
 * job (and retried). */
#define DROP_CANARY RB_DEV_OUT_FILL

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

/* A job the kernel dropped (see DROP_CANARY). Under model_only C is never written:
 * then only the emulated kernel's log can tell. */
static int check_done(struct rb_npu_job *job, const char *log_before)
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
			untouched = untouched && out[b] == DROP_CANARY;
		if (job->dev->model_only)
			untouched = strcmp(tail, log_before) != 0;
		if (untouched)
			return rb_set_error(
			    -ETIMEDOUT,
			    "the %s job of core %u's share (%zu tasks) never wrote its "
			    "output: the kernel dropped it at SUBMIT or timed it out and reset "
			    "the core%s%s",
			    job->dev->ops->name, core->core, core->n_tasks,
			    *log ? "; emulator: " : "", log);
	}
	return 0;
}

/* Fills C with the canary for the next launch and hands it to the device. */
static int arm_output(struct rb_npu_job *job)
{
	if (!job->dev->ops->drops_timed_out_jobs)
		return 0;
	if (!job->dev->model_only)
		memset(job->c.map, DROP_CANARY, job->c.size);
	return bo_to_device(job->dev, &job->c);
}

/* ---- launching, with one retry after a timeout ---- */

static int launch_once(struct rb_npu_job *job, struct rb_npu_job_times *times)
{
	struct rb_dev_job dj = {
	    .submits = job->submits,
	    .n_submits = job->n_submits,
	    .cores = job->cores,
	    .n_cores = job->plan->n_cores,
	    .plan_core_mask = job->plan->config.core_mask,
	    .force_core_mask = rb_fault_core_mask(0),
	    .tasks = &job->tasks,
	    .in = {&job->a, &job->b, &job->regcmd, job->extra ? &job->b_extra : NULL},
	    .out = &job->c};
	char log_before[512];
	int ret;

	log_tail(job, log_before, sizeof(log_before));
	ret = job->dev->ops->launch(job->dev, job->launch, &dj);
	for (unsigned i = 0; i < RB_PLAN_MAX_CORES; i++)
		if (dj.hw_us[i] > 0)
			times->hw_us[i] = dj.hw_us[i];
	if (ret == 0 && job->dev->ops->drops_timed_out_jobs)
		ret = check_done(job, log_before);
	return ret;
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

/* After a timeout: the driver's reset, then C armed again for a kernel that drops jobs. */
static int reset_device(struct rb_npu_job *job)
{
	int ret = job->dev->ops->reset(job->dev);

	return ret < 0 ? ret : arm_output(job);
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

/* A into a cube of the plan's p->m rows: the mainline variant pads M < 4 to 4 rows
 * (plan.h), whose rows past M are zero. */
static int pack_a(const struct rb_npu_job *job)
{
	const struct rb_plan *p = job->plan;
	const struct rb_shape *s = &p->shape;
	size_t row = (size_t)s->k * rb_dtype_in_size(s->dtype);
	void *padded;
	int ret;

	if ((int64_t)p->m == s->m)
		return rb_layout_pack_a(job->a.map, job->a_host, s->dtype, s->m, s->k, p->k_pad, 0);
	padded = calloc(p->m, row);
	if (!padded)
		return rb_set_error(-ENOMEM, "out of memory for %u padded rows of A", p->m);
	memcpy(padded, job->a_host, (size_t)s->m * row);
	ret = rb_layout_pack_a(job->a.map, padded, s->dtype, p->m, s->k, p->k_pad, 0);
	free(padded);
	return ret;
}

static int pack_features(struct rb_npu_job *job)
{
	int ret = 0;

	if (!job->dev->model_only)
		ret = pack_a(job);
	if (ret == 0 && !rb_fault_no_sync())
		ret = bo_to_device(job->dev, &job->a);
	return ret < 0 ? ret : arm_output(job);
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
	times->device_begin_ns = d0;
	times->device_end_ns = device_ns(job);
	times->device_us = (double)(times->device_end_ns - d0) / 1000.0;
	times->submit_us = host_us() - t0;
	run = phase(job, RB_NPU_PHASE_UNPACK);
	t0 = host_us();
	if (ret == 0 && run)
		ret = bo_from_device(job->dev, &job->c);
	if (ret == 0 && run && !job->dev->model_only && c)
		ret = unpack_output(job, c);
	times->unpack_us = host_us() - t0;
	phase(job, RB_NPU_PHASE_DONE);
	job->failed |= ret != 0;
	return ret;
}
