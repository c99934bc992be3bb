/* The job runner (see job.h): buffers, programs, validation, packing the weights;
 * running and unpacking in job_run.c. */
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

		for (size_t t = 0, j = 0; t < core->n_tasks; j++) {
			struct rb_dev_submit *s = &job->submits[n++];
			/* rb_plan_fit_timeout's cuts, where it ran */
			size_t end = core->submit_ends
					 ? core->submit_ends[j]
					 : (core->n_tasks - t < per ? core->n_tasks : t + per);

			s->core = core->core;
			s->plan_core = i;
			s->task_start = start + (uint32_t)t;
			s->task_number = (uint32_t)(end - t);
			t = end;
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

/* What the kernel is told of task `index`: where its program is, how long, and which
 * blocks and interrupts it uses (the driver turns it into its own descriptor). */
static void fill_task(struct rb_npu_job *job, uint32_t index, const struct rb_npu_task *npu,
		      const struct rb_regcmd_layout *lay)
{
	job->descs[index] = (struct rb_dev_task){.regcmd_addr = lay->addr,
						 .regcfg_amount = lay->regcfg_amount,
						 .regcmd_words = lay->words,
						 .enable_mask = rb_regcmd_op_enable(npu),
						 .int_mask = rb_regcmd_int_mask()};
}

/* The plan's cores for the driver: each core's tasks in order (core after core in
 * the descriptor array). */
static void describe_cores(struct rb_npu_job *job)
{
	const struct rb_plan *plan = job->plan;
	uint32_t start = 0;

	for (unsigned i = 0; i < plan->n_cores; i++) {
		job->cores[i] = (struct rb_dev_core){.core = plan->cores[i].core,
						     .tasks = &job->descs[start],
						     .n_tasks = (uint32_t)plan->cores[i].n_tasks};
		start += (uint32_t)plan->cores[i].n_tasks;
	}
}

/* ---- B in parts: each core of an N-split plan holds only the weights it reads ----
 *
 * Under rocket each core's file holds what that core reads (dev/rocket.h). An N-split
 * core reads its own kernels, which are one contiguous range of each K slice of the
 * packed B (layout.h: N-splitting is a base address change), so B is made of parts
 * (bo_create_parts): part i, in the plan's i-th core's file, holds that core's ranges
 * one after another, each at the same offset within a page as in B, and the core's
 * programs address them there. The CPU packs B a run of columns at a time and writes
 * each run into the parts that hold it (a whole B given at once goes through a staging
 * copy, freed after): B is held once in all (plus a page per range), where copies
 * would hold it once per core. A plan whose cores read all of B (an M split) keeps
 * copies: parts would save nothing. */
struct b_range {
	unsigned core;   /* the plan's core that reads it */
	uint64_t lo, hi; /* bytes [lo, hi) of the packed B */
	uint64_t at;     /* where they start in the core's part */
};

struct b_parts {
	size_t n;
	uint64_t sizes[RB_PLAN_MAX_CORES]; /* of each core's part */
	struct b_range r[];
};

#define PART_PAGE UINT64_C(4096)

/* Bytes of B a task reads: its kernels' weights in its K slice. */
static uint64_t task_b_bytes(const struct rb_plan *p, const struct rb_plan_task *t)
{
	return (uint64_t)t->npu.n * t->npu.k * p->bpe;
}

static int range_cmp(const void *x, const void *y)
{
	const struct b_range *a = x, *b = y;

	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static uint64_t page_up(uint64_t bytes)
{
	return (bytes + PART_PAGE - 1) / PART_PAGE * PART_PAGE;
}

/* The core's range holding B bytes [off, off + len), or NULL. */
static const struct b_range *part_range(const struct b_parts *parts, unsigned core, uint64_t off,
					uint64_t len)
{
	for (size_t j = 0; j < parts->n; j++)
		if (parts->r[j].core == core && parts->r[j].lo <= off &&
		    off + len <= parts->r[j].hi)
			return &parts->r[j];
	return NULL;
}

/* Core i's ranges (every task's, merged; those `skip` holds for the core left out)
 * appended to parts, placed in its part. */
static void core_ranges(const struct rb_plan *p, unsigned i, struct b_parts *parts,
			const struct b_parts *skip)
{
	const struct rb_plan_core *core = &p->cores[i];
	size_t first = parts->n, kept = first;
	uint64_t end = 0;

	for (size_t t = 0; t < core->n_tasks; t++) {
		uint64_t lo = core->tasks[t].npu.b_addr, len = task_b_bytes(p, &core->tasks[t]);

		if (!skip || !part_range(skip, i, lo, len))
			parts->r[parts->n++] = (struct b_range){i, lo, lo + len, 0};
	}
	qsort(&parts->r[first], parts->n - first, sizeof(parts->r[0]), range_cmp);
	for (size_t j = first; j < parts->n; j++) {
		if (kept > first && parts->r[j].lo <= parts->r[kept - 1].hi) {
			if (parts->r[j].hi > parts->r[kept - 1].hi)
				parts->r[kept - 1].hi = parts->r[j].hi;
			continue;
		}
		parts->r[kept++] = parts->r[j];
	}
	parts->n = kept;
	for (size_t j = first; j < kept; j++) {
		struct b_range *r = &parts->r[j];

		r->at = page_up(end) + r->lo % PART_PAGE;
		end = r->at + (r->hi - r->lo);
	}
	parts->sizes[i] = page_up(end);
}

/* Every core's ranges of plan p (less those of `skip`); NULL when out of memory. */
static struct b_parts *ranges_of(const struct rb_plan *p, const struct b_parts *skip)
{
	size_t n_tasks = 0;
	struct b_parts *parts;

	for (unsigned i = 0; i < p->n_cores; i++)
		n_tasks += p->cores[i].n_tasks;
	parts = calloc(1, sizeof(*parts) + n_tasks * sizeof(parts->r[0]));
	for (unsigned i = 0; parts && i < p->n_cores; i++)
		core_ranges(p, i, parts, skip);
	return parts;
}

/* The parts of plan p when they hold less than a copy of B per core; else NULL. */
static struct b_parts *plan_parts(const struct rb_plan *p)
{
	uint64_t total = 0;
	bool empty = false;
	struct b_parts *parts = ranges_of(p, NULL);

	for (unsigned i = 0; parts && i < p->n_cores; i++) {
		total += parts->sizes[i];
		empty = empty || !parts->sizes[i]; /* a core without tasks */
	}
	if (parts && (empty || total >= (uint64_t)p->n_cores * p->b_bytes)) {
		free(parts);
		parts = NULL;
	}
	return parts;
}

/* Task t of the plan's core `core` reads B at *b_addr (an offset into B): its address
 * in the core's part instead. */
static int part_address(const struct rb_npu_job *job, unsigned core, const struct rb_plan_task *t,
			uint32_t *b_addr)
{
	uint64_t len = task_b_bytes(job->plan, t);
	const struct b_range *r = part_range(job->parts, core, *b_addr, len);
	const struct rb_dev_bo *bo = &job->b;

	if (!r && job->extra) {
		r = part_range(job->extra, core, *b_addr, len);
		bo = &job->b_extra;
	}
	if (!r)
		return rb_set_error(-EINVAL,
				    "weights at byte %" PRIu32 " + %" PRIu64 " of B are not in "
				    "core %u's part",
				    *b_addr, len, core);
	*b_addr = rb_dev_bo_addr(job->dev, bo, core) + (uint32_t)(r->at + (*b_addr - r->lo));
	return 0;
}

/* Where the submit's core reaches each buffer: its own copies under rocket (one file,
 * one address space, per core), the one address elsewhere. */
static uint32_t addr_of(const struct rb_npu_job *job, const struct rb_dev_bo *bo,
			const struct rb_dev_submit *s)
{
	return rb_dev_bo_addr(job->dev, bo, s->plan_core);
}

/* Encodes one submit's chain at `word` in the regcmd buffer and fills its task
 * descriptors; returns the words used or a negative errno. Each core's programs hold
 * the addresses its own file gives the buffers: the regcmd buffer's words are the same
 * in every copy, and a core fetches only its own programs. */
static long encode_submit(struct rb_npu_job *job, const struct rb_dev_submit *s, size_t word,
			  struct rb_regcmd *rc)
{
	struct rb_plan_bases bases = {
	    addr_of(job, &job->a, s),
	    job->parts ? 0 : addr_of(job, &job->b, s) + (uint32_t)job->b_offset,
	    addr_of(job, &job->c, s)};
	struct rb_npu_task *npu = calloc(s->task_number, sizeof(*npu));
	struct rb_regcmd_layout *lay = calloc(s->task_number, sizeof(*lay));
	int ret = npu && lay ? 0 : -ENOMEM;

	for (uint32_t i = 0; ret == 0 && i < s->task_number; i++) {
		const struct rb_plan_task *t = task_at(job->plan, s->task_start + i);

		ret = rb_plan_task_resolve(job->plan, t, &bases, &npu[i]);
		if (ret == 0 && job->parts)
			ret = part_address(job, s->plan_core, t, &npu[i].b_addr);
	}
	if (ret == 0)
		ret = rb_regcmd_build_chain(rc, npu, s->task_number,
					    addr_of(job, &job->regcmd, s) + (uint32_t)(word * 8),
					    lay);
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

bool rb_npu_packed_b_fits(const struct rb_npu_packed_b *keep, const struct rb_npu_device *dev,
			  const struct rb_plan *p, const struct rb_inputs *in)
{
	if (!keep || !keep->source || !rb_inputs_has_b(in) || keep->source != in->serial ||
	    dev->model_only)
		return false;
	return keep->bo.size == p->b_bytes && rb_shape_equal(&keep->shape, &p->shape) &&
	       keep->k_pad == p->k_pad && keep->n_pad == p->n_pad && keep->k_slice == p->k_slice;
}

/* A new buffer that every core of the job's plan reaches (and only those, under
 * rocket: a one-core plan's buffers live in one file). */
static int job_bo_create(struct rb_npu_job *job, uint64_t size, struct rb_dev_bo *bo)
{
	int ret = bo_create(job->dev, size, RB_BO_DATA, bo);

	if (ret == 0)
		ret = rb_dev_bo_reach(job->dev, bo, job->plan->n_cores);
	return ret;
}

/* B from *keep when it holds this layout of in's B (job->b_source says so), else new;
 * either way reached by the plan's cores (a kept B may come from a plan of fewer). */
static int weights_buffer(struct rb_npu_job *job, const struct rb_inputs *in,
			  struct rb_npu_packed_b *keep)
{
	if (job->b_external)
		return 0;
	if (!keep && job->dev->ops->bo_create_parts && job->plan->n_cores > 1)
		job->parts = plan_parts(job->plan);
	if (job->parts)
		return job->dev->ops->bo_create_parts(job->dev, job->parts->sizes,
						      job->plan->n_cores, &job->b);
	if (!rb_npu_packed_b_fits(keep, job->dev, job->plan, in))
		return job_bo_create(job, job->plan->b_bytes, &job->b);
	job->b = keep->bo;
	job->b_source = keep->source;
	memset(keep, 0, sizeof(*keep));
	return rb_dev_bo_reach(job->dev, &job->b, job->plan->n_cores);
}

static int create_buffers(struct rb_npu_job *job, size_t words, const struct rb_inputs *in,
			  struct rb_npu_packed_b *keep)
{
	struct rb_npu_device *dev = job->dev;
	const struct rb_plan *plan = job->plan;
	int ret;

	ret = job_bo_create(job, plan->a_bytes, &job->a);
	if (ret == 0)
		ret = weights_buffer(job, in, keep);
	if (ret == 0)
		ret = job_bo_create(job, plan->c_bytes, &job->c);
	if (ret == 0)
		ret = job_bo_create(job, words * 8, &job->regcmd);
	if (ret == 0) {
		job->descs = calloc(plan->n_tasks, sizeof(*job->descs));
		ret = job->descs ? 0 : rb_set_error(-ENOMEM, "out of memory for tasks");
	}
	if (ret == 0 && dev->ops->tasks_in_bo)
		ret =
		    bo_create(dev, dev->ops->task_bytes * plan->n_tasks, RB_BO_TASKS, &job->tasks);
	return ret;
}

/* Every program is checked before anything is submitted (npu/validate.h), on every
 * device, so what the tests run is what a board runs. */
/* Where task i's program lies, as the kernel is told: a descriptor's register count,
 * or (drivers that take {regcmd, regcmd_count}) every word less the tail. */
static struct rb_validate_task task_program(const struct rb_npu_job *job, size_t i)
{
	const struct rb_dev_task *d = &job->descs[i];

	if (job->dev->ops->tasks_in_bo)
		return (struct rb_validate_task){d->regcmd_addr, d->regcfg_amount};
	return (struct rb_validate_task){d->regcmd_addr, d->regcmd_words - RB_REGCMD_TAIL_WORDS};
}

/* The buffers the submit's core may reach: A, C, and B whole or the core's ranges in its
 * part; *n_bufs says how many. */
static struct rb_validate_buf *submit_bufs(const struct rb_npu_job *job,
					   const struct rb_dev_submit *s, size_t *n_bufs)
{
	size_t n = 0;
	struct rb_validate_buf *bufs = calloc(
	    2 + (job->parts ? job->parts->n : 1) + (job->extra ? job->extra->n : 0), sizeof(*bufs));

	if (!bufs)
		return NULL;
	bufs[n++] = (struct rb_validate_buf){"A", addr_of(job, &job->a, s), job->a.size};
	bufs[n++] = (struct rb_validate_buf){"C", addr_of(job, &job->c, s), job->c.size};
	if (!job->parts)
		bufs[n++] = (struct rb_validate_buf){
		    "B", addr_of(job, &job->b, s) + (uint32_t)job->b_offset,
		    job->b_external ? job->plan->b_bytes : job->b.size};
	for (size_t j = 0; job->parts && j < job->parts->n; j++) {
		const struct b_range *r = &job->parts->r[j];

		if (r->core == s->plan_core)
			bufs[n++] = (struct rb_validate_buf){
			    "B", addr_of(job, &job->b, s) + (uint32_t)r->at, r->hi - r->lo};
	}
	for (size_t j = 0; job->extra && j < job->extra->n; j++) {
		const struct b_range *r = &job->extra->r[j];

		if (r->core == s->plan_core)
			bufs[n++] = (struct rb_validate_buf){
			    "B", addr_of(job, &job->b_extra, s) + (uint32_t)r->at, r->hi - r->lo};
	}
	*n_bufs = n;
	return bufs;
}

/* One submit's chain against the buffers as its core reaches them. */
static int validate_submit(const struct rb_npu_job *job, const struct rb_validate_task *tasks,
			   const struct rb_dev_submit *s)
{
	const struct rb_validate_chain chain = {s->core, s->task_start, s->task_number};
	size_t n_bufs = 0;
	struct rb_validate_buf *bufs = submit_bufs(job, s, &n_bufs);
	struct rb_validate_job v = {job->regcmd.map,
				    addr_of(job, &job->regcmd, s),
				    job->regcmd.size,
				    tasks,
				    &chain,
				    1,
				    bufs,
				    n_bufs,
				    RB_NPU_CBUF_BANKS,
				    job->dev->ops->mainline_programs};
	int ret = bufs ? rb_validate_job(&v) : rb_set_error(-ENOMEM, "out of memory");

	free(bufs);
	return ret;
}

static int validate_programs(const struct rb_npu_job *job)
{
	struct rb_validate_task *tasks = calloc(job->plan->n_tasks, sizeof(*tasks));
	int ret = tasks ? 0 : rb_set_error(-ENOMEM, "out of memory for validation");

	for (size_t i = 0; ret == 0 && i < job->plan->n_tasks; i++)
		tasks[i] = task_program(job, i);
	for (size_t i = 0; ret == 0 && i < job->n_submits; i++)
		ret = validate_submit(job, tasks, &job->submits[i]);
	free(tasks);
	return ret;
}

/* Bytes [off, off + len) of the packed B, from src, into the parts that hold them. */
static void parts_write(const struct rb_npu_job *job, uint64_t off, const void *src, uint64_t len)
{
	for (size_t j = 0; j < job->parts->n; j++) {
		const struct b_range *r = &job->parts->r[j];
		uint64_t lo = off > r->lo ? off : r->lo, hi = off + len < r->hi ? off + len : r->hi;

		if (lo < hi)
			memcpy((char *)job->dev->ops->bo_part_map(&job->b, r->core) + r->at +
				   (lo - r->lo),
			       (const char *)src + (lo - off), hi - lo);
	}
}

/* Where the CPU packs B (job->b_host): the buffer; with parts, for B packed `whole`, a
 * staging copy of it (zero pages until written), else nowhere: pack_b_block packs each
 * run of a block's columns apart and writes it into the parts. */
static int b_begin(struct rb_npu_job *job, bool whole)
{
	job->b_host = job->parts ? NULL : job->b.map;
	if (!job->parts || !whole)
		return 0;
	job->b_host = calloc(1, job->plan->b_bytes);
	return job->b_host ? 0 : rb_set_error(-ENOMEM, "out of memory for packing B");
}

/* The packing is done (ret): a staging copy goes into the parts, and goes; then B is
 * handed to the device. */
static int b_end(struct rb_npu_job *job, int ret)
{
	if (job->parts && job->b_host) {
		if (ret == 0)
			parts_write(job, 0, job->b_host, job->plan->b_bytes);
		free(job->b_host);
	}
	job->b_host = NULL;
	return ret < 0 ? ret : bo_to_device(job->dev, &job->b);
}

/* Weights are packed once per shape, like a backend does at model load. */
int rb_npu_job_set_weights(struct rb_npu_job *job, const void *b)
{
	const struct rb_plan *p = job->plan;
	const struct rb_shape *s = &p->shape;
	int ret;

	if (job->b_external)
		return rb_set_error(-EINVAL, "the job reads its weights from the caller's buffer");
	job->b_source = 0; /* packed from b, which has no serial */
	if (job->dev->model_only)
		return bo_to_device(job->dev, &job->b);
	ret = b_begin(job, true);
	if (ret == 0)
		ret = rb_layout_pack_b_sliced(job->b_host, b, s->dtype, s->k, s->n, p->k_pad,
					      p->n_pad, p->k_slice, 0);
	return b_end(job, ret);
}

/* Streamed B (rb_inputs_init_streamed) is made and packed a block of columns at a time,
 * on every CPU, so B exists whole only once, packed: each block is K rows by a multiple
 * of the kernel group, about STREAM_BLOCK_BYTES, small enough to stay in a core's cache
 * between being made and packed. */
#define STREAM_BLOCK_BYTES (INT64_C(1) << 20)

static int64_t stream_block_cols(const struct rb_shape *s)
{
	int64_t kg = rb_layout_kernel_group(s->dtype);
	int64_t cols = STREAM_BLOCK_BYTES / (s->k * (int64_t)rb_dtype_in_size(s->dtype)) / kg * kg;

	return cols > kg ? cols : kg;
}

/* Packs columns [n0, n0 + cols) of B, given as a K×cols row-major block, into their
 * place in every K slice. Kernel group n0 of slice s starts where rb_layout_b_locate
 * says, and whole kernel groups pack there as their own [cols_pad/KG][ks/32][KG][32]
 * array (layout.h: N-splitting is a base address change); the last block also writes
 * the padding kernels up to n_pad. */
/* One K slice's run of a block: rows×cols of src packed as ks×cols_pad at B byte
 * `offset` (rows <= 0: a slice of padding alone, zeros), into B itself or, with parts,
 * through a run of its own into the parts. */
static int pack_b_run(const struct rb_npu_job *job, size_t offset, const void *src, int64_t rows,
		      int64_t cols, int64_t ks, int64_t cols_pad)
{
	enum rb_dtype dt = job->plan->shape.dtype;
	size_t bytes = (size_t)(ks * cols_pad) * rb_dtype_in_size(dt);
	char *run = job->b_host ? (char *)job->b_host + offset : malloc(bytes);
	int ret = 0;

	if (!run)
		return rb_set_error(-ENOMEM, "out of memory for a run of the weights");
	if (rows <= 0)
		memset(run, 0, bytes);
	else
		ret = rb_layout_pack_b(run, src, dt, rows, cols, ks, cols_pad, 1);
	if (!job->b_host) {
		if (ret == 0)
			parts_write(job, offset, run, bytes);
		free(run);
	}
	return ret;
}

static int pack_b_block(void *ctx, const void *block, int64_t n0, int64_t cols)
{
	struct rb_npu_job *job = ctx;
	const struct rb_plan *p = job->plan;
	const struct rb_shape *s = &p->shape;
	size_t es = rb_dtype_in_size(s->dtype), offset;
	int64_t slice_k = p->k_slice < p->k_pad ? p->k_slice : p->k_pad;
	int64_t cols_pad = n0 + cols == s->n ? p->n_pad - n0 : cols, ks = 0, rows;
	int ret = 0;

	for (int64_t k0 = 0; ret == 0 && k0 < p->k_pad; k0 += ks) {
		ret = rb_layout_b_locate(s->dtype, p->k_pad, p->n_pad, p->k_slice, k0 / slice_k, n0,
					 &offset, &ks);
		rows = s->k - k0 < ks ? s->k - k0 : ks;
		if (ret == 0)
			ret = pack_b_run(job, offset,
					 rows > 0 ? (const char *)block + (size_t)(k0 * cols) * es
						  : NULL,
					 rows, cols, ks, cols_pad);
	}
	return ret;
}

int rb_npu_job_set_weights_by_columns(struct rb_npu_job *job, rb_npu_b_columns_fn fill, void *ctx)
{
	const struct rb_shape *s = &job->plan->shape;
	int64_t per = stream_block_cols(s);
	void *block;
	int ret = 0;

	if (job->b_external)
		return rb_set_error(-EINVAL, "the job reads its weights from the caller's buffer");
	job->b_source = 0; /* packed from the caller's blocks, which have no serial */
	if (job->dev->model_only)
		return bo_to_device(job->dev, &job->b);
	block = malloc((size_t)(s->k * per) * rb_dtype_in_size(s->dtype));
	if (!block)
		return rb_set_error(-ENOMEM, "out of memory for a block of the weights");
	ret = b_begin(job, false);
	for (int64_t n0 = 0; ret == 0 && n0 < s->n; n0 += per) {
		int64_t cols = s->n - n0 < per ? s->n - n0 : per;

		ret = fill(ctx, block, n0, cols);
		if (ret == 0)
			ret = pack_b_block(job, block, n0, cols);
	}
	free(block);
	return b_end(job, ret);
}

/* Packs in's B, held or streamed, and records where it came from. */
static int pack_weights(struct rb_npu_job *job, const struct rb_inputs *in)
{
	int ret;

	if (!in || !in->b_streamed || job->dev->model_only) {
		ret = rb_npu_job_set_weights(job, in ? in->b : NULL);
	} else {
		ret = b_begin(job, false);
		if (ret == 0)
			ret = rb_inputs_b_columns(in, stream_block_cols(&in->shape), 0,
						  pack_b_block, job);
		ret = b_end(job, ret);
	}
	job->b_source = ret == 0 && rb_inputs_has_b(in) && !job->dev->model_only ? in->serial : 0;
	return ret;
}

void rb_npu_job_set_features(struct rb_npu_job *job, const void *a)
{
	job->a_host = a;
}

int rb_npu_job_set_launch(struct rb_npu_job *job, enum rb_npu_launch launch)
{
	int ret = job->dev->ops->check_launch(launch);

	if (ret == 0) {
		job->launch = launch;
		job->launched = false;
	}
	return ret;
}

int rb_npu_job_new(struct rb_npu_job **out, struct rb_npu_device *dev, const struct rb_plan *plan,
		   const struct rb_inputs *in, enum rb_npu_launch launch)
{
	return rb_npu_job_new_keeping(out, dev, plan, in, launch, NULL, 0);
}

static struct rb_npu_job *job_alloc(struct rb_npu_device *dev, const struct rb_plan *plan,
				    const struct rb_inputs *in, enum rb_npu_launch launch)
{
	struct rb_npu_job *job = calloc(1, sizeof(*job));

	if (!job) {
		rb_set_error(-ENOMEM, "out of memory for a job");
		return NULL;
	}
	job->dev = dev;
	job->plan = plan;
	job->a_host = in ? in->a : NULL;
	job->launch = launch;
	return job;
}

/* Buffers, programs, validation and (own B, from in) the weights of a new job; frees it
 * on failure. */
static int job_build(struct rb_npu_job **out, struct rb_npu_job *job, const struct rb_inputs *in,
		     struct rb_npu_packed_b *keep, size_t words)
{
	struct rb_npu_device *dev = job->dev;
	const struct rb_plan *plan = job->plan;
	int ret = dev->ops->check_launch(job->launch);

	if (ret == 0)
		ret = plan_submits(job);
	if (ret == 0 && words == 0)
		ret = rb_npu_job_program_words(plan, &words);
	if (ret == 0)
		ret = create_buffers(job, words, in, keep);
	if (ret == 0)
		ret = encode_programs(job);
	if (ret == 0 && dev->ops->tasks_in_bo)
		ret = dev->ops->write_tasks(dev, job->descs, plan->n_tasks, &job->tasks);
	if (ret == 0)
		describe_cores(job);
	if (ret == 0 && !dev->unsafe_skip_validation)
		ret = validate_programs(job);
	if (ret == 0)
		ret = bo_to_device(dev, &job->regcmd);
	if (ret == 0 && !job->b_source && !job->b_external &&
	    (rb_inputs_has_b(in) || dev->model_only))
		ret = pack_weights(job, in);
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

int rb_npu_job_new_keeping(struct rb_npu_job **out, struct rb_npu_device *dev,
			   const struct rb_plan *plan, const struct rb_inputs *in,
			   enum rb_npu_launch launch, struct rb_npu_packed_b *keep, size_t words)
{
	struct rb_npu_job *job = job_alloc(dev, plan, in, launch);

	*out = NULL;
	return job ? job_build(out, job, in, keep, words) : -ENOMEM;
}

int rb_npu_job_new_on_weights(struct rb_npu_job **out, struct rb_npu_device *dev,
			      const struct rb_plan *plan, enum rb_npu_launch launch,
			      struct rb_dev_bo *weights, uint64_t offset)
{
	struct rb_npu_job *job;
	int ret;

	*out = NULL;
	if (weights->parts)
		return rb_set_error(-EINVAL, "weights in per-core parts are shared with "
					     "rb_npu_job_new_sharing, not read whole");
	if (offset % 16 || offset > weights->size || weights->size - offset < plan->b_bytes)
		return rb_set_error(-EINVAL,
				    "weights at byte %" PRIu64 " of a %" PRIu64
				    "-byte buffer: %" PRIu64
				    " bytes from a multiple of 16 are needed",
				    offset, weights->size, plan->b_bytes);
	ret = rb_dev_bo_reach(dev, weights, plan->n_cores);
	if (ret < 0)
		return ret;
	job = job_alloc(dev, plan, NULL, launch);
	if (!job)
		return -ENOMEM;
	job->b = *weights;
	job->b_external = true;
	job->b_offset = offset;
	return job_build(out, job, NULL, NULL, 0);
}

/* Bytes [lo, hi) of B from the owner's parts into dst; -EINVAL where none holds them. */
static int parts_read(const struct rb_npu_job *owner, uint64_t lo, uint64_t hi, char *dst)
{
	uint64_t got = 0;

	for (size_t j = 0; j < owner->parts->n; j++) {
		const struct b_range *r = &owner->parts->r[j];
		uint64_t a = lo > r->lo ? lo : r->lo, b = hi < r->hi ? hi : r->hi;

		if (a < b) {
			memcpy(dst + (a - lo),
			       (const char *)owner->dev->ops->bo_part_map(&owner->b, r->core) +
				   r->at + (a - r->lo),
			       b - a);
			got += b - a; /* ranges of different cores may overlap: counted twice */
		}
	}
	return got >= hi - lo
		   ? 0
		   : rb_set_error(-EINVAL,
				  "bytes %" PRIu64 "..%" PRIu64 " of B are in no core's part", lo,
				  hi);
}

/* The ranges the job's plan reads outside the owner's parts (a split otherwise: the
 * cores' boundaries moved), in parts of its own filled from the owner's: a few tasks'
 * weights, where packing B again would hold all of it twice. */
static int extra_parts(struct rb_npu_job *job, const struct rb_npu_job *owner)
{
	struct rb_npu_device *dev = job->dev;
	int ret = 0;

	job->extra = ranges_of(job->plan, owner->parts);
	if (!job->extra)
		return rb_set_error(-ENOMEM, "out of memory for the parts of B");
	if (!job->extra->n) {
		free(job->extra);
		job->extra = NULL;
		return 0;
	}
	for (unsigned i = 0; i < job->plan->n_cores; i++)
		if (!job->extra->sizes[i])
			job->extra->sizes[i] = PART_PAGE;
	ret = dev->ops->bo_create_parts(dev, job->extra->sizes, job->plan->n_cores, &job->b_extra);
	for (size_t j = 0; ret == 0 && !dev->model_only && j < job->extra->n; j++) {
		const struct b_range *r = &job->extra->r[j];

		ret = parts_read(owner, r->lo, r->hi,
				 (char *)dev->ops->bo_part_map(&job->b_extra, r->core) + r->at);
	}
	return ret < 0 ? ret : bo_to_device(dev, &job->b_extra);
}

int rb_npu_job_new_sharing(struct rb_npu_job **out, struct rb_npu_device *dev,
			   const struct rb_plan *plan, enum rb_npu_launch launch,
			   struct rb_npu_job *owner)
{
	struct rb_npu_job *job;
	int ret;

	*out = NULL;
	if (owner->b_external || owner->dev != dev)
		return rb_set_error(-EINVAL, "the job to share weights with does not own them");
	if (!owner->parts)
		return rb_npu_job_new_on_weights(out, dev, plan, launch, &owner->b, 0);
	job = job_alloc(dev, plan, NULL, launch);
	if (!job)
		return -ENOMEM;
	job->b = owner->b;
	job->b_external = true;
	job->parts = owner->parts;
	ret = extra_parts(job, owner);
	if (ret < 0) {
		rb_npu_job_free(job);
		return ret;
	}
	return job_build(out, job, NULL, NULL, 0);
}

struct rb_dev_bo *rb_npu_job_own_weights(struct rb_npu_job *job)
{
	return job->b_external ? NULL : &job->b;
}

void rb_npu_job_keep_weights(struct rb_npu_job *job, struct rb_npu_packed_b *keep)
{
	const struct rb_plan *p = job->plan;

	/* Unchecked programs, or a run that failed, may have written anywhere; parts are
	 * this plan's split of B. */
	if (!job->b_source || keep->source || job->failed || job->dev->unsafe_skip_validation ||
	    job->parts)
		return;
	*keep = (struct rb_npu_packed_b){job->b,   p->shape,   p->k_pad,
					 p->n_pad, p->k_slice, job->b_source};
	memset(&job->b, 0, sizeof(job->b));
	job->b_source = 0;
}

void rb_npu_packed_b_release(struct rb_npu_device *dev, struct rb_npu_packed_b *keep)
{
	if (keep->source)
		bo_destroy(dev, &keep->bo);
	memset(keep, 0, sizeof(*keep));
}

void rb_npu_job_free(struct rb_npu_job *job)
{
	if (!job)
		return;
	bo_destroy(job->dev, &job->tasks);
	bo_destroy(job->dev, &job->regcmd);
	bo_destroy(job->dev, &job->c);
	if (!job->b_external) {
		bo_destroy(job->dev, &job->b);
		free(job->parts);
	}
	bo_destroy(job->dev, &job->b_extra);
	free(job->extra);
	bo_destroy(job->dev, &job->a);
	free(job->descs);
	free(job->submits);
	free(job->partial);
	free(job);
}
