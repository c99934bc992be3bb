/* Rungs 1-3 of the selftest: buffers, and one-task jobs through the driver ops alone.
 *
 * Rungs 2 and 3 do not use the job runner (npu/job.c) on purpose: a failure there is
 * the driver's, the kernel's or the board's, not the runner's chains, splits or retries,
 * and the one task's descriptor and output can be read back after a timeout (interrupt
 * status; whether the NPU wrote C at all, which tells a hang from a lost interrupt). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "numeric/inputs.h"
#include "numeric/layout.h"
#include "numeric/ref.h"
#include "numeric/verify.h"
#include "dev/transport.h"
#include "npu/regcmd.h"
#include "selftest/selftest.h"

int rb_selftest_open_device(struct rb_selftest *st, struct rb_npu_device *dev)
{
	int err = rb_engine_open_npu_device(dev, st->ops, &st->opts.engine);

	if (err < 0) {
		const char *cause, *hint;

		rb_selftest_classify(err, rb_last_error(), &cause, &hint);
		return rb_selftest_fail(st, 1, err, cause, hint, "cannot open the device: %s",
					rb_last_error());
	}
	return 0;
}

/* ---- rung 1: buffers ---- */

/* The buffers the later rungs hold at once at most (rung 7's largest job: B of
 * 1x1024x4096 fp16 is 8 MiB, with C cubes and programs), and some small ones. */
static const uint64_t buffer_sizes[] = {4096, 1 << 20, 24u << 20};

static uint64_t pattern(uint64_t i, uint64_t seed)
{
	uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;

	x ^= x >> 31;
	return x * 0xbf58476d1ce4e5b9ull;
}

static int dma_memory_failure(struct rb_selftest *st, uint64_t size, uint64_t held)
{
	return rb_selftest_fail(
	    st, 1, -ENOMEM, "dma-memory",
	    "free memory (close other NPU and GPU users), or give the kernel more CMA "
	    "(cma=256M on its command line) when the IOMMU is off; docs/boards.md section 2",
	    "too little DMA memory: the kernel refused a buffer of %" PRIu64 " KiB with %" PRIu64
	    " KiB already held (ENOMEM); CMA free %" PRId64 " kB, memory available %" PRId64 " kB",
	    size >> 10, held >> 10, st->cma_free_kb, st->mem_available_kb);
}

/* Writes the pattern, syncs to and from the device, reads it back. */
static int check_buffer(struct rb_selftest *st, struct rb_npu_device *dev, struct rb_dev_bo *bo,
			uint64_t seed)
{
	uint64_t *w = bo->map, n = bo->size / sizeof(uint64_t);
	int err = 0;

	for (uint64_t i = 0; i < n; i++)
		w[i] = pattern(i, seed);
	err = dev->ops->bo_to_device(dev, bo);
	if (!err)
		err = dev->ops->bo_from_device(dev, bo);
	if (err)
		return rb_selftest_fail(st, 1, err, "device-error", NULL,
					"syncing a %" PRIu64 " KiB buffer failed: %s",
					bo->size >> 10, rb_last_error());
	for (uint64_t i = 0; i < n; i++)
		if (w[i] != pattern(i, seed))
			return rb_selftest_fail(st, 1, -EIO, "device-error", NULL,
						"a %" PRIu64 " KiB buffer at NPU address 0x%08x "
						"reads back word %" PRIu64 " as 0x%016" PRIx64
						" after a sync each way, not 0x%016" PRIx64,
						bo->size >> 10, bo->dma_addr, i, w[i],
						pattern(i, seed));
	return 0;
}

static int buffers(struct rb_selftest *st, struct rb_npu_device *dev)
{
	enum { N = sizeof(buffer_sizes) / sizeof(buffer_sizes[0]) };
	struct rb_dev_bo bos[N];
	uint64_t held = 0;
	size_t made = 0;
	int err = 0;

	memset(bos, 0, sizeof(bos));
	for (; err == 0 && made < N; made++) {
		err = dev->ops->bo_create(dev, buffer_sizes[made], RB_BO_DATA, &bos[made]);
		if (err == -ENOMEM)
			err = dma_memory_failure(st, buffer_sizes[made], held);
		else if (err)
			err = rb_selftest_fail(st, 1, err, "device-error", NULL,
					       "creating a %" PRIu64 " KiB buffer failed: %s",
					       buffer_sizes[made] >> 10, rb_last_error());
		else
			held += bos[made].size;
		if (err)
			break;
	}
	for (size_t i = 0; err == 0 && i < made; i++)
		err = check_buffer(st, dev, &bos[i], st->opts.seed + i);
	for (size_t i = 0; i < made; i++)
		dev->ops->bo_destroy(dev, &bos[i]);
	if (!err)
		rb_selftest_note(&st->rungs[1],
				 "%zu buffers (%" PRIu64 " KiB in all) written, synced to and from "
				 "the device, read back intact through the CPU mapping, destroyed; "
				 "the NPU's own reads and writes are rung 2's",
				 made, held >> 10);
	return err;
}

int rb_selftest_buffers(struct rb_selftest *st)
{
	struct rb_npu_device dev;
	int err = rb_selftest_open_device(st, &dev);

	if (err)
		return err;
	err = buffers(st, &dev);
	rb_npu_device_close(&dev);
	return err;
}

/* ---- one task through the driver ops ---- */

struct one {
	struct rb_npu_device *dev;
	struct rb_shape shape;
	struct rb_npu_task task;
	struct rb_regcmd rc;
	struct rb_inputs in;
	struct rb_dev_bo a, b, c, prog, tasks;
	void *got, *want;
};

static void one_release(struct one *o)
{
	struct rb_dev_bo *bos[] = {&o->a, &o->b, &o->c, &o->prog, &o->tasks};

	for (size_t i = 0; i < sizeof(bos) / sizeof(bos[0]); i++)
		if (bos[i]->map || bos[i]->size)
			o->dev->ops->bo_destroy(o->dev, bos[i]);
	rb_regcmd_release(&o->rc);
	rb_inputs_release(&o->in);
	free(o->got);
	free(o->want);
}

static int one_buffers(struct one *o)
{
	const struct rb_dev_ops *ops = o->dev->ops;
	const struct rb_npu_task *t = &o->task;
	int err = ops->bo_create(o->dev, rb_layout_a_bytes(t->dtype, t->a_height, t->k), RB_BO_DATA,
				 &o->a);

	if (!err)
		err = ops->bo_create(o->dev, rb_layout_b_bytes(t->dtype, t->k, t->n), RB_BO_DATA,
				     &o->b);
	if (!err)
		err = ops->bo_create(o->dev, rb_layout_c_bytes(4, t->c_height, t->n), RB_BO_DATA,
				     &o->c);
	if (!err)
		err = ops->bo_create(o->dev, 4096, RB_BO_DATA, &o->prog);
	if (!err && ops->tasks_in_bo)
		err = ops->bo_create(o->dev, ops->task_bytes, RB_BO_TASKS, &o->tasks);
	return err;
}

/* A padded to the task's rows (mainline: 4), packed into its cube. */
static int pack_inputs(struct one *o)
{
	const struct rb_npu_task *t = &o->task;
	size_t esize = o->shape.dtype == RB_DTYPE_FP16 ? 2 : 1;
	size_t row = (size_t)o->shape.k * esize;
	char *a = calloc(t->a_height, row);
	int err;

	if (!a)
		return rb_set_error(-ENOMEM, "out of memory");
	memcpy(a, o->in.a, (size_t)o->shape.m * row);
	err = rb_layout_pack_a(o->a.map, a, t->dtype, t->a_height, o->shape.k, t->k, 1);
	free(a);
	if (!err)
		err = rb_layout_pack_b(o->b.map, o->in.b, t->dtype, o->shape.k, o->shape.n, t->k,
				       t->n, 1);
	return err;
}

static int encode(struct one *o, size_t golden)
{
	uint32_t addr[3] = {rb_dev_bo_addr(o->dev, &o->a, 0), rb_dev_bo_addr(o->dev, &o->b, 0),
			    rb_dev_bo_addr(o->dev, &o->c, 0)};
	bool mainline = o->dev->ops->mainline_programs;
	int err = golden < RB_SELFTEST_GOLDEN
		      ? rb_selftest_golden_task(golden, addr, mainline, &o->task, &o->shape, NULL)
		      : rb_regcmd_one_task(&o->shape, NULL, addr, mainline, &o->task);

	rb_regcmd_release(&o->rc);
	rb_regcmd_init(&o->rc);
	if (!err)
		err = rb_regcmd_emit_task(&o->rc, &o->task);
	if (!err && o->rc.count * 8 > o->prog.size)
		err = rb_set_error(-E2BIG, "the program does not fit its buffer");
	if (!err)
		memcpy(o->prog.map, o->rc.words, o->rc.count * 8);
	return err;
}

/* The buffers are sized from a first plan at address 0; then the real addresses. */
static int one_prepare(struct one *o, size_t golden)
{
	uint32_t zero[3] = {0, 0, 0};
	bool mainline = o->dev->ops->mainline_programs;
	int err = golden < RB_SELFTEST_GOLDEN
		      ? rb_selftest_golden_task(golden, zero, mainline, &o->task, &o->shape, NULL)
		      : rb_regcmd_one_task(&o->shape, NULL, zero, mainline, &o->task);

	if (!err)
		err = rb_inputs_init(&o->in, &o->shape, 1, RB_DATA_EXACT);
	if (!err)
		err = one_buffers(o);
	if (!err)
		err = encode(o, golden);
	if (!err)
		err = pack_inputs(o);
	return err;
}

static int one_launch(struct one *o, enum rb_npu_launch launch)
{
	const struct rb_dev_ops *ops = o->dev->ops;
	struct rb_dev_task desc = {.regcmd_addr = rb_dev_bo_addr(o->dev, &o->prog, 0),
				   .regcfg_amount = (uint32_t)o->rc.count - RB_REGCMD_TAIL_WORDS,
				   .regcmd_words = (uint32_t)o->rc.count,
				   .enable_mask = rb_regcmd_op_enable(&o->task),
				   .int_mask = rb_regcmd_int_mask()};
	struct rb_dev_submit sub = {.core = 0, .plan_core = 0, .task_start = 0, .task_number = 1};
	struct rb_dev_core core = {.core = 0, .tasks = &desc, .n_tasks = 1};
	struct rb_dev_job job = {.submits = &sub,
				 .n_submits = 1,
				 .cores = &core,
				 .n_cores = 1,
				 .plan_core_mask = 0x1,
				 .tasks = &o->tasks,
				 .in = {&o->a, &o->b, &o->prog, NULL},
				 .out = &o->c};
	struct rb_dev_bo *bos[] = {&o->a, &o->b, &o->prog, &o->c};
	int err = 0;

	memset(o->c.map, RB_DEV_OUT_FILL, o->c.size); /* what the NPU did not write */
	for (size_t i = 0; !err && i < sizeof(bos) / sizeof(bos[0]); i++)
		err = ops->bo_to_device(o->dev, bos[i]);
	if (!err && ops->tasks_in_bo)
		err = ops->write_tasks(o->dev, &desc, 1, &o->tasks);
	if (!err)
		err = ops->launch(o->dev, launch, &job);
	return err;
}

static int one_check(struct one *o, struct rb_verify_result *res)
{
	struct rb_layout_c_tile tile = {0, o->shape.m, 0, o->shape.n, 0, o->task.c_height};
	struct rb_verify_opts vo;
	struct rb_matmul_io io = {.shape = o->shape, .a = o->in.a, .b = o->in.b};
	int err;

	o->got = rb_output_alloc(&o->shape);
	o->want = rb_output_alloc(&o->shape);
	if (!o->got || !o->want)
		return rb_set_error(-ENOMEM, "out of memory");
	err = o->dev->ops->bo_from_device(o->dev, &o->c);
	if (!err)
		err = rb_layout_unpack_c(o->got, o->shape.n, o->c.map, 4, &tile, 1);
	if (!err)
		err = rb_ref_gemm(&o->shape, o->in.a, o->in.b, o->want, 1);
	if (err)
		return err;
	io.c = o->got;
	rb_verify_opts_init(&vo, o->shape.dtype);
	vo.mode = RB_VERIFY_FULL;
	rb_verify_full(&io, o->want, &vo, res);
	return 0;
}

/* After a failed launch: the interrupt status the kernel wrote back, and whether the
 * NPU wrote C at all. */
static void read_back(struct rb_selftest *st, struct one *o)
{
	const unsigned char *c = o->c.map;
	struct rb_selftest_failure *f = &st->failure;

	if (o->dev->ops->tasks_in_bo && o->dev->ops->bo_from_device(o->dev, &o->tasks) == 0) {
		struct rknpu_task desc;

		memcpy(&desc, o->tasks.map, sizeof(desc));
		f->int_status = desc.int_status;
		f->int_status_read = true;
	}
	if (o->dev->ops->bo_from_device(o->dev, &o->c) == 0)
		for (size_t i = 0; i < o->c.size && !f->output_written; i++)
			f->output_written = c[i] != RB_DEV_OUT_FILL;
}

/* A kernel that signals a timed-out job like a finished one and drops a bad job
 * without a word (rocket, §d.2): an output it never wrote is a timeout. */
static int check_dropped(struct one *o)
{
	const unsigned char *c = o->c.map;
	int err;

	if (!o->dev->ops->drops_timed_out_jobs)
		return 0;
	err = o->dev->ops->bo_from_device(o->dev, &o->c);
	for (size_t i = 0; !err && i < o->c.size; i++)
		if (c[i] != RB_DEV_OUT_FILL)
			return 0;
	return err ? err
		   : rb_set_error(-ETIMEDOUT,
				  "the %s job never wrote its output: the kernel dropped it at "
				  "SUBMIT or timed it out and reset the core",
				  o->dev->ops->name);
}

static int keep_program(struct rb_selftest *st, const struct one *o)
{
	struct rb_selftest_failure *f = &st->failure;
	size_t size = o->rc.count * 64 + 256;
	char *text = malloc(size);
	size_t n;

	if (!text)
		return -ENOMEM;
	n = (size_t)snprintf(text, size,
			     "# %s: one task of %" PRId64 "x%" PRId64 "x%" PRId64
			     " %s on core 0 (rknn-bench dump reads this file)\n",
			     st->driver, o->shape.m, o->shape.k, o->shape.n,
			     rb_dtype_name(o->shape.dtype));
	for (size_t i = 0; i < o->rc.count && n < size; i++)
		n += (size_t)snprintf(text + n, size - n, "%016" PRIx64 "\n", o->rc.words[i]);
	f->programs[0] = text;
	f->program_core[0] = 0;
	f->n_programs = 1;
	return 0;
}

/* A timeout: what the kernel logged (an IOMMU fault), else whether C was written. */
static int timeout_failure(struct rb_selftest *st, int rung, const char *why)
{
	const struct rb_selftest_failure *f = &st->failure;
	const char *cause, *hint;
	char status[64] = "the interrupt status is not readable on this driver";

	if (f->int_status_read)
		snprintf(status, sizeof(status), "int_status 0x%08x read back", f->int_status);
	rb_selftest_classify(-ETIMEDOUT, f->kernel_log, &cause, &hint);
	if (strcmp(cause, "iommu-fault") == 0)
		return rb_selftest_fail(st, rung, -EFAULT, cause, hint,
					"IOMMU fault: the NPU accessed an address outside every "
					"buffer and the job timed out (the kernel log below says "
					"which; %s): %s",
					status, why);
	if (f->output_written)
		return rb_selftest_fail(
		    st, rung, -ETIMEDOUT, "no-interrupt",
		    "check the NPU's interrupt in the device tree and /proc/interrupts (its count "
		    "must grow with each job); send the kernel log",
		    "the interrupt never came: the NPU wrote the output but the kernel's wait "
		    "timed out (%s): %s",
		    status, why);
	return rb_selftest_fail(st, rung, -ETIMEDOUT, "hang",
				"send the bug report: its program and kernel log say which "
				"register the core stopped at; try the other cores (rung 4)",
				"the NPU hung: the job timed out and the core never wrote its "
				"output (%s): %s",
				status, why);
}

static void one_case(struct rb_selftest_case *c, const struct one *o, const char *what,
		     enum rb_npu_launch launch, int err, bool wrong)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->what, sizeof(c->what), "%s", what);
	c->shape = o->shape;
	snprintf(c->plan, sizeof(c->plan), "mask=0x1");
	c->launch = launch;
	c->err = err;
	c->wrong = wrong;
}

/* Runs one task; a failure is diagnosed in st->failure (rung `rung`). */
static int one_task(struct rb_selftest *st, int rung, const struct rb_shape *shape, size_t golden,
		    enum rb_npu_launch launch, const char *what)
{
	struct rb_npu_device dev;
	struct one o = {.shape = *shape};
	struct rb_verify_result res;
	struct rb_selftest_case c;
	int err = rb_selftest_open_device(st, &dev);
	char why[RB_SELFTEST_TEXT];

	if (err)
		return err;
	o.dev = &dev;
	rb_regcmd_init(&o.rc);
	err = one_prepare(&o, golden);
	if (!err)
		err = one_launch(&o, launch);
	if (!err)
		err = check_dropped(&o);
	if (err) {
		const char *cause, *hint;

		snprintf(why, sizeof(why), "%s", rb_last_error());
		read_back(st, &o);
		keep_program(st, &o);
		rb_selftest_kernel_log(st, rb_transport_kernel_log(rb_npu_device_transport(&dev)));
		rb_selftest_classify(err, why, &cause, &hint);
		err = err == -ETIMEDOUT
			  ? timeout_failure(st, rung, why)
			  : rb_selftest_fail(st, rung, err, cause, hint, "%s: %s", what, why);
	} else {
		err = one_check(&o, &res);
		if (!err && res.status == RB_VERIFY_FAILED) {
			keep_program(st, &o);
			err = rb_selftest_fail(
			    st, rung, -EBADMSG, "wrong-result",
			    "send the bug report: the program is the golden set's (tests/golden), "
			    "so a "
			    "wrong result there is the board's or the driver's",
			    "%s gives a wrong result: %" PRId64 " of %" PRId64
			    " elements differ, the "
			    "first at [%" PRId64 "][%" PRId64 "] (%g, expected %g)",
			    what, res.mismatches, res.checked, res.first[0].i, res.first[0].j,
			    res.first[0].got, res.first[0].expected);
		}
	}
	one_case(&c, &o, what, launch, err, err == -EBADMSG);
	if (err == 0 || st->failure.rung == rung) {
		st->failure.failing = c;
		st->failure.smallest = c;
	}
	rb_selftest_add_case(&st->rungs[rung], &c);
	one_release(&o);
	rb_npu_device_close(&dev);
	return err;
}

int rb_selftest_submit(struct rb_selftest *st)
{
	struct rb_shape s = {.m = 4, .k = 32, .n = 16, .dtype = RB_DTYPE_FP16};
	int err = one_task(st, 2, &s, RB_SELFTEST_GOLDEN, RB_LAUNCH_FENCES, "one task (fences)");

	/* the wait path: a blocking submit (rknpu), or rocket's submit from a thread */
	if (!err)
		err = one_task(st, 2, &s, RB_SELFTEST_GOLDEN, RB_LAUNCH_THREADS,
			       "one task (a blocking submit)");
	if (!err)
		rb_selftest_note(&st->rungs[2],
				 "one task of 4x32x16 fp16 on core 0 completed, "
				 "through a fence and through a blocking submit, its "
				 "output verified");
	return err;
}

/* ---- rung 3: the golden programs ---- */

static const struct rb_shape golden_shapes[RB_SELFTEST_GOLDEN] = {
    {.m = 4, .k = 64, .n = 16, .dtype = RB_DTYPE_FP16},
    {.m = 1, .k = 32, .n = 32, .dtype = RB_DTYPE_INT8},
};
static const char *const golden_names[RB_SELFTEST_GOLDEN] = {"fp16_4x64x16", "int8_1x32x32"};

int rb_selftest_golden_task(size_t i, const uint32_t addr[3], bool mainline,
			    struct rb_npu_task *task, struct rb_shape *shape, const char **name)
{
	if (i >= RB_SELFTEST_GOLDEN)
		return rb_set_error(-EINVAL, "no golden program %zu", i);
	*shape = golden_shapes[i];
	if (name)
		*name = golden_names[i];
	return rb_regcmd_one_task(shape, NULL, addr, mainline, task);
}

int rb_selftest_golden(struct rb_selftest *st)
{
	int err = 0;

	for (size_t i = 0; err == 0 && i < RB_SELFTEST_GOLDEN; i++) {
		char what[96];

		snprintf(what, sizeof(what), "golden program %s%s", golden_names[i],
			 st->driver[0] == 'r' && strcmp(st->driver, "rocket") == 0
			     ? " (mainline variant)"
			     : "");
		err = one_task(st, 3, &golden_shapes[i], i, RB_LAUNCH_FENCES, what);
	}
	if (!err)
		rb_selftest_note(&st->rungs[3],
				 "the golden programs (tests/golden: the encoder's words at their "
				 "addresses), at this device's addresses, verified");
	return err;
}
