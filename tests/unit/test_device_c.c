/* C left on the device (run/measure.c, engine read_c, npu/job.c rb_npu_job_read_c):
 * a large C is not copied whole to the host after its one modeled run, but read and
 * checked a block at a time. That must change nothing: the blocked comparison
 * (rb_verify_full_block) gives the verdict, numbers and first mismatches of the whole
 * one, whatever the tiling and the order of the blocks; a block read from the device
 * is that block of the C a run unpacks; and run's path gives the same results with C
 * held and with C on the device, a wrong C included. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/debug.h"
#include "core/error.h"
#include "numeric/verify.h"
#include "run/engine.h"
#include "run/measure.h"

static void assert_same_result(const struct rb_verify_result *a, const struct rb_verify_result *b)
{
	assert_int_equal(a->status, b->status);
	assert_int_equal(a->mode, b->mode);
	assert_int_equal(a->checked, b->checked);
	assert_int_equal(a->mismatches, b->mismatches);
	assert_true(a->max_abs == b->max_abs && a->max_rel == b->max_rel);
	assert_int_equal(a->n_reported, b->n_reported);
	for (int i = 0; i < a->n_reported; i++) {
		assert_int_equal(a->first[i].i, b->first[i].i);
		assert_int_equal(a->first[i].j, b->first[i].j);
		/* bits, as a NaN got is a mismatch too */
		assert_memory_equal(&a->first[i].expected, &b->first[i].expected, sizeof(double));
		assert_memory_equal(&a->first[i].got, &b->first[i].got, sizeof(double));
	}
}

/* rows×cols of `whole` (an m×n matrix of `es`-byte elements) from (i0, j0) into dst. */
static void copy_block(void *dst, const void *whole, size_t es, int64_t n, int64_t i0, int64_t j0,
		       int64_t rows, int64_t cols)
{
	for (int64_t i = 0; i < rows; i++)
		memcpy((char *)dst + (size_t)(i * cols) * es,
		       (const char *)whole + (size_t)((i0 + i) * n + j0) * es, (size_t)cols * es);
}

/* The result of comparing c with expected in blocks of rows×cols, visited column of
 * blocks by column of blocks, from the last one back when `backwards`. */
static void verify_blocked(const struct rb_shape *s, const void *c, const void *expected,
			   int64_t rows, int64_t cols, bool backwards,
			   const struct rb_verify_opts *vo, struct rb_verify_result *res)
{
	size_t es = rb_dtype_out_size(s->dtype);
	int64_t nb = (s->n + cols - 1) / cols, mb = (s->m + rows - 1) / rows;
	void *cb = malloc((size_t)(rows * cols) * es), *eb = malloc((size_t)(rows * cols) * es);

	assert_non_null(cb);
	assert_non_null(eb);
	rb_verify_full_begin(res);
	for (int64_t t = 0; t < nb * mb; t++) {
		int64_t b = backwards ? nb * mb - 1 - t : t;
		int64_t j0 = b / mb * cols, i0 = b % mb * rows;
		int64_t h = s->m - i0 < rows ? s->m - i0 : rows;
		int64_t w = s->n - j0 < cols ? s->n - j0 : cols;
		struct rb_verify_block blk = {s->dtype, i0, j0, h, w, cb, eb};

		copy_block(cb, c, es, s->n, i0, j0, h, w);
		copy_block(eb, expected, es, s->n, i0, j0, h, w);
		rb_verify_full_block(&blk, vo, res);
	}
	free(cb);
	free(eb);
}

/* A 37×300 C and its expected C (fp16: float, int8: int32_t), with wrong elements
 * placed against a tiling of 16×64 blocks: a block's first and last column and row, a
 * corner of C, one block with many, and (fp16) non-finite values; more than
 * RB_VERIFY_MAX_REPORTED in all, so that the blocks' first mismatches must be merged. */
#define WM 37
#define WN 300
static void make_wrong(enum rb_dtype dtype, void *c, void *expected)
{
	const int64_t wrong[][2] = {{0, 63},  {0, 64},  {15, 64}, {16, 127}, {36, 299},
				    {20, 70}, {21, 71}, {22, 72}, {23, 73},  {24, 74},
				    {25, 75}, {36, 0},  {5, 128}, {6, 191},  {31, 192}};
	float *cf = c, *ef = expected;
	int32_t *ci = c, *ei = expected;

	for (int i = 0; i < WM * WN; i++) {
		if (dtype == RB_DTYPE_FP16)
			ef[i] = cf[i] = (float)(i % 97 - 48) / 8.0f;
		else
			ei[i] = ci[i] = i % 1013 - 500;
	}
	for (int w = 0; w < (int)(sizeof(wrong) / sizeof(wrong[0])); w++) {
		int64_t at = wrong[w][0] * WN + wrong[w][1];

		if (dtype == RB_DTYPE_FP16)
			cf[at] += 0.25f * (float)(w + 1);
		else
			ci[at] += w + 1;
	}
	if (dtype != RB_DTYPE_FP16)
		return;
	cf[2 * WN + 200] = NAN;                  /* where a finite value was expected */
	ef[3 * WN + 10] = INFINITY;              /* expected non-finite, got finite */
	cf[4 * WN + 11] = ef[4 * WN + 11] = NAN; /* a match */
	ef[0] = 0;                               /* out of max_rel */
}

/* Every tiling, whatever the order of its blocks, gives the whole comparison's result. */
static void test_blocked_full_is_whole(void **state)
{
	const enum rb_dtype dtypes[] = {RB_DTYPE_FP16, RB_DTYPE_INT8};
	/* {rows, cols} of the tilings: single elements, single rows and columns, whole */
	const int64_t tilings[][2] = {{1, 1}, {16, 64}, {WM, 1}, {1, WN}, {5, 7}, {WM, WN}};

	(void)state;
	for (size_t d = 0; d < 2; d++) {
		const struct rb_shape s = {WM, 8, WN, dtypes[d]};
		void *c = malloc(WM * WN * 4), *expected = malloc(WM * WN * 4);
		struct rb_matmul_io io = {.shape = s, .c = c};
		struct rb_verify_opts vo;
		struct rb_verify_result whole, blocked;

		assert_true(c && expected);
		make_wrong(s.dtype, c, expected);
		rb_verify_opts_init(&vo, s.dtype);
		rb_verify_full(&io, expected, &vo, &whole);
		assert_int_equal(whole.status, RB_VERIFY_FAILED);
		assert_true(whole.mismatches > RB_VERIFY_MAX_REPORTED);
		for (size_t t = 0; t < sizeof(tilings) / sizeof(tilings[0]); t++) {
			for (int back = 0; back < 2; back++) {
				verify_blocked(&s, c, expected, tilings[t][0], tilings[t][1], back,
					       &vo, &blocked);
				assert_same_result(&whole, &blocked);
			}
		}
		free(c);
		free(expected);
	}
}

/* An engine prepared for the case, on inputs the caller releases. */
struct device_case {
	struct rb_shape shape;
	unsigned k_slice;     /* 0: the planner's choice */
	enum rb_plan_out out; /* RB_PLAN_OUT_FP16: fp16 K-slices summed on the host */
	const struct rb_engine_ops *ops;
};

static void open_case(struct rb_engine *e, const struct device_case *dc, struct rb_inputs *in)
{
	struct rb_engine_opts opts;

	rb_engine_opts_init(&opts);
	opts.plan.k_slice = dc->k_slice;
	opts.plan.out = dc->out;
	assert_int_equal(rb_inputs_init(in, &dc->shape, 7, RB_DATA_UNIFORM), 0);
	assert_int_equal(rb_engine_open(e, dc->ops, &opts), 0);
	assert_int_equal(e->ops->prepare(e, in), 0);
}

/* Blocks read from the C a run left on the device are the blocks of the C it unpacks,
 * to the bit: blocks of every form (one element's channel group, one row, columns at
 * every group, the whole), with K-slices summed on the host (fp32, fp16, int32), M
 * padded by the mainline variant, on both emulated kernels. A block that starts
 * inside a channel group or leaves C is refused. */
static void test_read_c_is_run_c(void **state)
{
	const struct device_case cases[] = {
	    {{7, 300, 1234, RB_DTYPE_FP16}, 0, RB_PLAN_OUT_AUTO, &rb_engine_sim},
	    {{3, 300, 500, RB_DTYPE_FP16}, 0, RB_PLAN_OUT_AUTO, &rb_engine_sim_rocket},
	    {{40, 1100, 700, RB_DTYPE_FP16}, 256, RB_PLAN_OUT_AUTO, &rb_engine_sim},
	    {{9, 600, 333, RB_DTYPE_FP16}, 256, RB_PLAN_OUT_FP16, &rb_engine_sim},
	    {{33, 900, 600, RB_DTYPE_INT8}, 256, RB_PLAN_OUT_AUTO, &rb_engine_sim},
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct rb_shape *s = &cases[k].shape;
		size_t es = rb_dtype_out_size(s->dtype), bytes = (size_t)(s->m * s->n) * es;
		/* {m0, rows, n0, cols} */
		const int64_t blocks[][4] = {{0, 1, 0, 1},
					     {s->m - 1, 1, 0, s->n},
					     {0, s->m, 16, 16},
					     {1, s->m - 1, 32, s->n - 32},
					     {0, s->m, s->n / 16 * 16, s->n % 16},
					     {0, s->m, 0, s->n}};
		void *whole = malloc(bytes), *block = malloc(bytes), *want = malloc(bytes);
		struct rb_inputs in;
		struct rb_engine e;
		double us;

		assert_true(whole && block && want);
		open_case(&e, &cases[k], &in);
		assert_int_equal(e.ops->read_c(&e, 0, 1, 0, 1, block), -EINVAL); /* no run yet */
		assert_int_equal(e.ops->run(&e, whole, &us), 0);
		assert_int_equal(e.ops->run(&e, NULL, &us), 0);
		for (size_t b = 0; b < sizeof(blocks) / sizeof(blocks[0]); b++) {
			const int64_t *q = blocks[b];

			copy_block(want, whole, es, s->n, q[0], q[2], q[1], q[3]);
			assert_int_equal(e.ops->read_c(&e, q[0], q[1], q[2], q[3], block), 0);
			if (memcmp(want, block, (size_t)(q[1] * q[3]) * es) != 0)
				print_error("case %zu block %zu differs\n", k, b);
			assert_memory_equal(want, block, (size_t)(q[1] * q[3]) * es);
		}
		assert_int_equal(e.ops->read_c(&e, 0, 1, 1, 1, block), -EINVAL);
		assert_int_equal(e.ops->read_c(&e, s->m, 1, 0, 1, block), -EINVAL);
		assert_int_equal(e.ops->read_c(&e, 0, 1, 0, s->n + 1, block), -EINVAL);
		rb_engine_close(&e);
		rb_inputs_release(&in);
		free(whole);
		free(block);
		free(want);
	}
}

/* One rb_measure_entry on the emulator (no kept reference: run's path). */
static void measure(const struct rb_shape *s, enum rb_verify_mode mode, int64_t stream_b_min,
		    struct rb_result *r)
{
	static char name[] = "case";
	char *names[] = {name};
	const struct rb_shape_entry entry = {.shape = *s, .names = names, .n_names = 1};
	struct rb_measure_opts mo;
	struct rb_verify_opts vo;
	struct rb_shape_measure m = {
	    .measure = &mo, .verify = &vo, .ref_threads = 2, .stream_b_min = stream_b_min};
	struct rb_engine_opts opts;
	struct rb_engine e;

	rb_measure_opts_init(&mo);
	rb_verify_opts_init(&vo, s->dtype);
	vo.mode = mode;
	vo.samples = 500;
	rb_engine_opts_init(&opts);
	assert_int_equal(rb_engine_open(&e, &rb_engine_sim, &opts), 0);
	memset(r, 0, sizeof(*r));
	assert_int_equal(rb_measure_entry(&m, &e, &entry, 21, RB_DATA_UNIFORM, r), 0);
	rb_engine_close(&e);
}

/* One shape, mode and B (held: stream_b_min -1, streamed: 1), with the debug flags
 * `flags` and then flags plus device_c: the same verdict, numbers, first mismatches and
 * modeled time. */
static void assert_the_same(const struct rb_shape *s, enum rb_verify_mode mode,
			    int64_t stream_b_min, bool corrupt)
{
	struct rb_result held, on_device;

	rb_debug_set(corrupt ? "corrupt_c" : "");
	measure(s, mode, stream_b_min, &held);
	rb_debug_set(corrupt ? "corrupt_c,device_c" : "device_c");
	measure(s, mode, stream_b_min, &on_device);
	rb_debug_set(NULL);
	if (!corrupt || mode == RB_VERIFY_FULL) /* a sample may miss the one wrong element */
		assert_int_equal(held.verify.status,
				 corrupt ? RB_VERIFY_FAILED : RB_VERIFY_VERIFIED);
	assert_same_result(&held.verify, &on_device.verify);
	assert_true(held.stats.median_us == on_device.stats.median_us);
	rb_result_release(&held);
	rb_result_release(&on_device);
}

/* run's path with C held and with C on the device (RKNN_BENCH_DEBUG=device_c), with B
 * held and streamed, in full and sample mode, right and with one wrong element
 * (corrupt_c). */
static void test_measure_the_same(void **state)
{
	const struct rb_shape shapes[] = {{9, 700, 2500, RB_DTYPE_FP16},
					  {1, 512, 1000, RB_DTYPE_FP16},
					  {6, 800, 1700, RB_DTYPE_INT8}};

	(void)state;
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		for (int corrupt = 0; corrupt < 2; corrupt++) {
			for (int64_t stream = -1; stream <= 1; stream += 2) {
				assert_the_same(&shapes[i], RB_VERIFY_FULL, stream, corrupt);
				assert_the_same(&shapes[i], RB_VERIFY_SAMPLE, stream, corrupt);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blocked_full_is_whole),
	    cmocka_unit_test(test_read_c_is_run_c),
	    cmocka_unit_test(test_measure_the_same),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
