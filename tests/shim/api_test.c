/* A program written only against the rknn_matmul_api declarations (src/shim/
 * rknn_matmul_api.h, the public header's names and layouts; no other header of
 * rknn-bench), linked with
 * build/shim/librknnrt.so:
 *
 *   shim-api [--full]     the seed backend's call sequence for each shape: one context
 *                         per core with a third of N (rounded down to 32, the last takes
 *                         the rest), core mask set, memories created, B converted to the
 *                         native layout, A and C in the native layout, then every
 *                         context run from its own thread, 3 times; each result checked
 *                         against a plain loop. --full: one context per shape, core mask
 *                         left on auto (what RKNN_BENCH_TUNED then configures)
 *   shim-api --layouts    the normal and transposed layouts on one context
 *   shim-api --rss        the seed's call sequence on 1x4096x8192 fp16 (B of 64 MiB), B
 *                         written straight into the memories in the native layout (no
 *                         other copy): the peak RSS of the library's own memory, which
 *                         tests/e2e/shim.sh compares with the stand-in librknnrt's
 *   shim-api --shapes MxKxN...  the seed's call sequence for these fp16 shapes (the
 *                         pairs of a model, whose slices a tuned file configures)
 *   shim-api --errors     every error path; prints "N error paths checked"
 *   shim-api --mems       memories' lives and B rewritten: memories made before any
 *                         context (ctx 0) and destroyed after theirs, or while still
 *                         set; a native or normal B rewritten in its memory and set
 *                         again (as the seed backend does) is what the next run reads
 *
 * Prints one line per shape and "N verified, N failed" last; exit 0 when all verified. */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "shim/rknn_matmul_api.h"
#include "../tools/half.h"

struct shape {
	int m, k, n;
	rknn_matmul_type type;
};

static const struct shape shapes[] = {
    {1, 2048, 8192, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32}, /* ffn_up of the seed file */
    {4, 256, 1024, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32},
    {2, 512, 768, RKNN_INT8_MM_INT8_TO_INT32},
    {1, 9216, 96, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32}, /* K > 8192: B in two segments */
};

/* --rss: B of 64 MiB, the size of a Llama-3.2-1B ffn weight pair's slices. */
static const struct shape big = {1, 4096, 8192, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32};
static bool b_direct; /* --rss: B written native, without a normal copy first */

/* One context: a slice [n0, n0 + info.N) of a shape's columns. */
struct context {
	rknn_matmul_ctx ctx;
	rknn_matmul_info info;
	rknn_matmul_io_attr io;
	rknn_tensor_mem *a, *b, *c;
	int n0, runs, failed;
};

/* Exact data: A small integers, B multiples of 1/8 (fp16) or any int8. */
static float a_val(const struct shape *s, int m, int k)
{
	return s->type == RKNN_INT8_MM_INT8_TO_INT32 ? (float)((m * 7 + k * 13) % 255 - 127)
						     : (float)((m * 3 + k * 5) % 9 - 4);
}

static float b_val(const struct shape *s, int k, int n)
{
	return s->type == RKNN_INT8_MM_INT8_TO_INT32 ? (float)((k * 11 + n * 17) % 255 - 127)
						     : (float)((k * 7 + n * 3) % 17 - 8) / 8;
}

static size_t esize(const struct shape *s)
{
	return s->type == RKNN_INT8_MM_INT8_TO_INT32 ? 1 : 2;
}

static void put(const struct shape *s, void *p, size_t i, float v)
{
	if (esize(s) == 1)
		((int8_t *)p)[i] = (int8_t)v;
	else
		((uint16_t *)p)[i] = half_of(v);
}

/* A in the native layout (K/8, M, 8) fp16 or (K/16, M, 16) int8. */
static void fill_a(const struct shape *s, struct context *c)
{
	int at = esize(s) == 1 ? 16 : 8;

	for (int m = 0; m < s->m; m++)
		for (int k = 0; k < s->k; k++)
			put(s, c->a->virt_addr, (size_t)((k / at) * s->m + m) * at + k % at,
			    a_val(s, m, k));
}

/* B of the slice, normal (K, N) and then converted by the library. */
static int fill_b(const struct shape *s, struct context *c)
{
	int n = c->info.N;
	void *normal = malloc((size_t)s->k * n * esize(s));
	int ret;

	if (!normal)
		return -1;
	for (int k = 0; k < s->k; k++)
		for (int j = 0; j < n; j++)
			put(s, normal, (size_t)k * n + j, b_val(s, k, c->n0 + j));
	ret = rknn_B_normal_layout_to_native_layout(normal, c->b->virt_addr, s->k, n, &c->info);
	free(normal);
	return ret;
}

/* B of the slice written in the native layout (N/16, K/32, 16, 32) fp16 or (N/32, K/32,
 * 32, 32) int8, in segments of 8192 rows of K, as the seed backend writes it. */
static void fill_b_direct(const struct shape *s, struct context *c)
{
	int blk = esize(s) == 1 ? 32 : 16, n = c->info.N;

	for (int k = 0; k < s->k; k++) {
		int seg = k / 8192, seg_k = s->k - seg * 8192 < 8192 ? s->k - seg * 8192 : 8192;
		size_t base = (size_t)seg * 8192 * n, ks = (size_t)(k % 8192);

		for (int j = 0; j < n; j++)
			put(s, c->b->virt_addr,
			    base + ((size_t)(j / blk) * (size_t)(seg_k / 32) + ks / 32) * blk * 32 +
				(size_t)(j % blk) * 32 + ks % 32,
			    b_val(s, k, c->n0 + j));
	}
}

static int setup_context(const struct shape *s, struct context *c, int n0, int n, int core)
{
	memset(&c->info, 0, sizeof(c->info));
	c->n0 = n0;
	c->info.M = s->m;
	c->info.K = s->k;
	c->info.N = n;
	c->info.type = s->type;
	c->info.B_layout = RKNN_MM_LAYOUT_NATIVE;
	c->info.AC_layout = RKNN_MM_LAYOUT_NATIVE;
	if (rknn_matmul_create(&c->ctx, &c->info, &c->io) != RKNN_SUCC)
		return -1;
	if (core >= 0 && rknn_matmul_set_core_mask(c->ctx, (rknn_core_mask)(1 << core)))
		return -1;
	c->a = rknn_create_mem(c->ctx, c->io.A.size);
	c->b = rknn_create_mem(c->ctx, c->io.B.size);
	c->c = rknn_create_mem(c->ctx, c->io.C.size);
	if (!c->a || !c->b || !c->c)
		return -1;
	fill_a(s, c);
	if (b_direct)
		fill_b_direct(s, c);
	else if (fill_b(s, c) != RKNN_SUCC)
		return -1;
	return rknn_matmul_set_io_mem(c->ctx, c->a, &c->io.A) ||
	       rknn_matmul_set_io_mem(c->ctx, c->b, &c->io.B) ||
	       rknn_matmul_set_io_mem(c->ctx, c->c, &c->io.C);
}

/* C of the slice, native (N/4, M, 4), against a plain loop. */
static bool check_c(const struct shape *s, const struct context *c)
{
	for (int m = 0; m < s->m; m++)
		for (int j = 0; j < c->info.N; j++) {
			size_t at = (size_t)((j / 4) * s->m + m) * 4 + j % 4;
			double want = 0, got;

			for (int k = 0; k < s->k; k++)
				want += (double)a_val(s, m, k) * b_val(s, k, c->n0 + j);
			got = esize(s) == 1 ? ((int32_t *)c->c->virt_addr)[at]
					    : ((float *)c->c->virt_addr)[at];
			if (got != want) {
				fprintf(stderr, "C[%d][%d] = %g, expected %g\n", m, c->n0 + j, got,
					want);
				return false;
			}
		}
	return true;
}

static void *run_thread(void *arg)
{
	struct context *c = arg;

	for (int i = 0; i < 3; i++) {
		memset(c->c->virt_addr, 0xff, c->c->size);
		c->failed |= rknn_matmul_run(c->ctx) != RKNN_SUCC;
		c->runs++;
	}
	return NULL;
}

static void teardown(struct context *c)
{
	rknn_destroy_mem(c->ctx, c->a);
	rknn_destroy_mem(c->ctx, c->b);
	rknn_destroy_mem(c->ctx, c->c);
	rknn_matmul_destroy(c->ctx);
}

/* The seed's way: three single-core contexts, three threads. */
static bool run_shape(const struct shape *s, bool full)
{
	struct context ctx[3];
	pthread_t tid[3];
	int n_ctx = full ? 1 : 3, width = s->n / 32 / 3 * 32;
	bool ok = true;

	memset(ctx, 0, sizeof(ctx));
	for (int i = 0; i < n_ctx && ok; i++) {
		int n0 = full ? 0 : i * width, n = full || i == 2 ? s->n - n0 : width;

		ok = setup_context(s, &ctx[i], n0, n, full ? -1 : i) == 0;
	}
	for (int i = 0; i < n_ctx && ok; i++)
		ok = pthread_create(&tid[i], NULL, run_thread, &ctx[i]) == 0;
	for (int i = 0; i < n_ctx && ok; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < n_ctx && ok; i++)
		ok = !ctx[i].failed && ctx[i].runs == 3 && check_c(s, &ctx[i]);
	for (int i = 0; i < n_ctx; i++)
		teardown(&ctx[i]);
	printf("%dx%dx%d %s, %d context(s): %s\n", s->m, s->k, s->n,
	       s->type == RKNN_INT8_MM_INT8_TO_INT32 ? "int8" : "fp16", n_ctx,
	       ok ? "verified" : "FAILED");
	return ok;
}

/* ---- normal and transposed layouts ---- */

/* B (times scale) in layout bl: normal (K, N), transposed (N, K), or native through the
 * library. */
static void fill_b_layout(const struct shape *s, int bl, rknn_matmul_info *info, uint16_t *b,
			  float scale)
{
	uint16_t *normal = bl == RKNN_MM_LAYOUT_NATIVE ? malloc((size_t)s->k * s->n * 2) : b;

	for (int k = 0; k < s->k; k++)
		for (int n = 0; n < s->n; n++)
			normal[bl == RKNN_MM_LAYOUT_TP_NORM ? n * s->k + k : k * s->n + n] =
			    half_of(b_val(s, k, n) * scale);
	if (bl == RKNN_MM_LAYOUT_NATIVE) {
		rknn_B_normal_layout_to_native_layout(normal, b, s->k, s->n, info);
		free(normal);
	}
}

static void fill_a_normal(const struct shape *s, rknn_tensor_mem *a)
{
	for (int m = 0; m < s->m; m++)
		for (int k = 0; k < s->k; k++)
			((uint16_t *)a->virt_addr)[m * s->k + k] = half_of(a_val(s, m, k));
}

/* C normal (M, N) of an fp16 matmul whose B is b_val times scale. */
static bool normal_c_ok(const struct shape *s, const rknn_tensor_mem *c, float scale)
{
	for (int m = 0; m < s->m; m++)
		for (int n = 0; n < s->n; n++) {
			float want = 0;

			for (int k = 0; k < s->k; k++)
				want += a_val(s, m, k) * b_val(s, k, n) * scale;
			if (((float *)c->virt_addr)[m * s->n + n] != want)
				return false;
		}
	return true;
}

static bool run_layouts(void)
{
	static const struct shape s = {3, 64, 48, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32};
	bool ok = true;

	for (int bl = RKNN_MM_LAYOUT_NORM; bl <= RKNN_MM_LAYOUT_TP_NORM && ok; bl++) {
		rknn_matmul_info info = {.M = s.m, .K = s.k, .N = s.n, .type = s.type};
		rknn_matmul_io_attr io;
		rknn_matmul_ctx ctx;
		rknn_tensor_mem *a, *b, *c;

		info.B_layout = (int16_t)bl;
		ok = rknn_matmul_create(&ctx, &info, &io) == RKNN_SUCC;
		if (!ok)
			break;
		a = rknn_create_mem(ctx, io.A.size);
		b = rknn_create_mem(ctx, io.B.size);
		c = rknn_create_mem(ctx, io.C.size);
		fill_a_normal(&s, a);
		fill_b_layout(&s, bl, &info, b->virt_addr, 1);
		ok = rknn_matmul_set_io_mem(ctx, a, &io.A) == RKNN_SUCC &&
		     rknn_matmul_set_io_mem(ctx, b, &io.B) == RKNN_SUCC &&
		     rknn_matmul_set_io_mem(ctx, c, &io.C) == RKNN_SUCC &&
		     rknn_matmul_run(ctx) == RKNN_SUCC && normal_c_ok(&s, c, 1);
		printf("layouts A/C normal, B %s: %s\n",
		       bl == RKNN_MM_LAYOUT_NORM ? "normal"
		       : bl == 1                 ? "native"
						 : "transposed",
		       ok ? "verified" : "FAILED");
		rknn_destroy_mem(ctx, a);
		rknn_destroy_mem(ctx, b);
		rknn_destroy_mem(ctx, c);
		rknn_matmul_destroy(ctx);
	}
	return ok;
}

/* ---- memories: lives, and when B is read ---- */

/* One layout of B: memories made before the context (ctx 0), B rewritten and set again
 * (native: read where it is; normal: packed again), B destroyed while set (runs refused
 * until a live B is set), A and C destroyed after the context. */
static bool mems_one(int bl)
{
	static const struct shape s = {2, 64, 32, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32};
	rknn_matmul_info info = {.M = s.m, .K = s.k, .N = s.n, .type = s.type};
	rknn_matmul_io_attr io;
	rknn_matmul_ctx ctx;
	rknn_tensor_mem *a = rknn_create_mem(0, s.m * s.k * 2),
			*b = rknn_create_mem(0, s.k * s.n * 2),
			*c = rknn_create_mem(0, s.m * s.n * 4);
	bool ok;

	info.B_layout = (int16_t)bl;
	if (!a || !b || !c || rknn_matmul_create(&ctx, &info, &io) != RKNN_SUCC)
		return false;
	fill_a_normal(&s, a);
	fill_b_layout(&s, bl, &info, b->virt_addr, 1);
	ok = rknn_matmul_set_io_mem(ctx, a, &io.A) == RKNN_SUCC &&
	     rknn_matmul_set_io_mem(ctx, b, &io.B) == RKNN_SUCC &&
	     rknn_matmul_set_io_mem(ctx, c, &io.C) == RKNN_SUCC &&
	     rknn_matmul_run(ctx) == RKNN_SUCC && normal_c_ok(&s, c, 1);
	fill_b_layout(&s, bl, &info, b->virt_addr, 2);
	ok = ok && rknn_matmul_set_io_mem(ctx, b, &io.B) == RKNN_SUCC &&
	     rknn_matmul_run(ctx) == RKNN_SUCC && normal_c_ok(&s, c, 2);
	/* B destroyed while set: with the vendor runtime its buffer is gone, so a run is
	 * refused (and C left alone) until a live B is set */
	ok = ok && rknn_destroy_mem(ctx, b) == RKNN_SUCC;
	memset(c->virt_addr, 0, c->size);
	ok = ok && rknn_matmul_run(ctx) == RKNN_ERR_INPUT_INVALID &&
	     ((float *)c->virt_addr)[0] == 0.0f;
	b = rknn_create_mem(0, s.k * s.n * 2);
	ok = ok && b;
	if (b)
		fill_b_layout(&s, bl, &info, b->virt_addr, 2);
	ok = ok && rknn_matmul_set_io_mem(ctx, b, &io.B) == RKNN_SUCC &&
	     rknn_matmul_run(ctx) == RKNN_SUCC && normal_c_ok(&s, c, 2);
	ok = rknn_destroy_mem(0, b) == RKNN_SUCC && ok;
	ok = rknn_matmul_destroy(ctx) == RKNN_SUCC && ok;
	ok = rknn_destroy_mem(ctx, a) == RKNN_SUCC && ok;
	return rknn_destroy_mem(0, c) == RKNN_SUCC && ok;
}

static bool run_mems(void)
{
	bool native = mems_one(RKNN_MM_LAYOUT_NATIVE), normal = mems_one(RKNN_MM_LAYOUT_NORM);

	printf("memories, B native (rewritten, set again): %s\n", native ? "verified" : "FAILED");
	printf("memories, B normal (rewritten, set again): %s\n", normal ? "verified" : "FAILED");
	return native && normal;
}

/* ---- error paths ---- */

static int checked, wrong;

static void expect(int got, int want, const char *what)
{
	checked++;
	if (got != want) {
		wrong++;
		printf("error path %s: %d, expected %d\n", what, got, want);
	}
}

struct contender {
	rknn_matmul_ctx ctx;
	volatile bool stop;
};

static void *keep_running(void *arg)
{
	struct contender *t = arg;

	while (!t->stop)
		rknn_matmul_run(t->ctx);
	return NULL;
}

/* Another thread's run on the same context: refused as busy (RKNN_ERR_FAIL, not
 * RKNN_ERR_CTX_INVALID: the handle is good) while one is in progress. */
static void concurrent_use(rknn_matmul_ctx ctx)
{
	struct contender t = {ctx, false};
	struct timespec start, now, pause = {0, 1000000};
	pthread_t tid;
	int refused = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_create(&tid, NULL, keep_running, &t);
	do {
		refused += rknn_matmul_run(ctx) == RKNN_ERR_FAIL;
		nanosleep(&pause, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (!refused && now.tv_sec - start.tv_sec < 20);
	t.stop = true;
	pthread_join(tid, NULL);
	expect(refused ? RKNN_ERR_FAIL : RKNN_SUCC, RKNN_ERR_FAIL,
	       "a context used by two threads at once: busy");
}

/* Issue 35: memories are checked against the context's own tensor sizes, not the
 * caller's attr->size (a short C was overrun on run: ASan, a write in copy_lines), on
 * set and again on run (the offset is the application's to move); a memory destroyed
 * while set is refused on run. ASan (make SANITIZE=1) sees any overrun left. */
static void short_and_destroyed(rknn_matmul_ctx ctx, const rknn_matmul_io_attr *io,
				rknn_tensor_mem *a, rknn_tensor_mem *c)
{
	rknn_matmul_tensor_attr lie[3] = {io->A, io->B, io->C};
	rknn_tensor_mem *small = rknn_create_mem(ctx, 64), *spare;

	for (int i = 0; i < 3; i++) {
		lie[i].size = 64; /* the caller says 64 bytes are enough: they are not */
		expect(rknn_matmul_set_io_mem(ctx, small, &lie[i]), RKNN_ERR_PARAM_INVALID,
		       i == 0   ? "a short A, with an attr->size that fits"
		       : i == 1 ? "a short B, with an attr->size that fits"
				: "a short C, with an attr->size that fits");
	}
	c->offset = 64; /* moved after it was set: C no longer fits */
	expect(rknn_matmul_run(ctx), RKNN_ERR_PARAM_INVALID, "C's offset moved past its end");
	c->offset = 0;
	spare = rknn_create_mem(ctx, io->A.size);
	memcpy(spare->virt_addr, a->virt_addr, io->A.size);
	expect(rknn_matmul_set_io_mem(ctx, spare, (rknn_matmul_tensor_attr *)&io->A), RKNN_SUCC,
	       "set a spare A");
	expect(rknn_destroy_mem(ctx, spare), RKNN_SUCC, "destroy A while it is set");
	expect(rknn_matmul_run(ctx), RKNN_ERR_INPUT_INVALID, "run with a destroyed A");
	expect(rknn_matmul_set_io_mem(ctx, a, (rknn_matmul_tensor_attr *)&io->A), RKNN_SUCC,
	       "set a live A again");
	expect(rknn_matmul_run(ctx), RKNN_SUCC, "run with live memories again");
	rknn_destroy_mem(ctx, small);
}

static void run_errors(void)
{
	rknn_matmul_info info = {
	    .M = 1, .K = 2048, .N = 1024, .type = RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32};
	rknn_matmul_info bad;
	rknn_matmul_io_attr io;
	rknn_matmul_ctx ctx;
	rknn_tensor_mem *small, *a, *b, *c;
	rknn_quant_params qp;

	expect(rknn_matmul_create(NULL, &info, &io), RKNN_ERR_PARAM_INVALID, "NULL ctx");
	expect(rknn_matmul_create(&ctx, NULL, &io), RKNN_ERR_PARAM_INVALID, "NULL info");
	bad = info;
	bad.type = RKNN_INT8_MM_INT8_TO_INT8;
	expect(rknn_matmul_create(&ctx, &bad, &io), RKNN_ERR_PARAM_INVALID, "unimplemented type");
	bad = info;
	bad.K = 100;
	expect(rknn_matmul_create(&ctx, &bad, &io), RKNN_ERR_PARAM_INVALID,
	       "K not a multiple of 32");
	bad = info;
	bad.M = 0;
	expect(rknn_matmul_create(&ctx, &bad, &io), RKNN_ERR_PARAM_INVALID, "M = 0");
	bad = info;
	bad.B_layout = 7;
	expect(rknn_matmul_create(&ctx, &bad, &io), RKNN_ERR_PARAM_INVALID, "B_layout 7");
	expect(rknn_matmul_run(12345), RKNN_ERR_CTX_INVALID, "run on a made-up handle");
	expect(rknn_matmul_create(&ctx, &info, &io), RKNN_SUCC, "create");
	expect(rknn_matmul_run(ctx), RKNN_ERR_INPUT_INVALID, "run without memories");
	expect(rknn_matmul_set_core_mask(ctx, (rknn_core_mask)8), RKNN_ERR_PARAM_INVALID, "mask 8");
	expect(rknn_matmul_set_core_mask(ctx, RKNN_NPU_CORE_0_1), RKNN_SUCC, "mask 0x3");
	small = rknn_create_mem(ctx, 16);
	expect(rknn_matmul_set_io_mem(ctx, small, &io.B), RKNN_ERR_PARAM_INVALID,
	       "memory too small");
	expect(rknn_matmul_set_io_mem(ctx, NULL, &io.B), RKNN_ERR_PARAM_INVALID, "NULL memory");
	expect(rknn_create_mem(ctx, 0) == NULL ? RKNN_ERR_PARAM_INVALID : RKNN_SUCC,
	       RKNN_ERR_PARAM_INVALID, "a memory of 0 bytes");
	memset(&qp, 0, sizeof(qp));
	expect(rknn_matmul_set_quant_params(ctx, &qp), RKNN_ERR_PARAM_INVALID,
	       "quant params on fp16");
	expect(rknn_destroy_mem(ctx, small), RKNN_SUCC, "destroy a memory");
	expect(rknn_B_normal_layout_to_native_layout(NULL, NULL, 64, 64, &info),
	       RKNN_ERR_PARAM_INVALID, "layout conversion of NULL");
	a = rknn_create_mem(ctx, io.A.size);
	b = rknn_create_mem(ctx, io.B.size);
	c = rknn_create_mem(ctx, io.C.size);
	memset(a->virt_addr, 0, a->size);
	memset(b->virt_addr, 0, b->size);
	expect(rknn_matmul_set_io_mem(ctx, a, &io.A) | rknn_matmul_set_io_mem(ctx, b, &io.B) |
		   rknn_matmul_set_io_mem(ctx, c, &io.C),
	       RKNN_SUCC, "set the memories");
	concurrent_use(ctx);
	short_and_destroyed(ctx, &io, a, c);
	rknn_destroy_mem(ctx, a);
	rknn_destroy_mem(ctx, b);
	rknn_destroy_mem(ctx, c);
	expect(rknn_matmul_destroy(ctx), RKNN_SUCC, "destroy");
	expect(rknn_matmul_destroy(ctx), RKNN_ERR_CTX_INVALID, "destroy twice");
	printf("%d error paths checked, %d wrong\n", checked, wrong);
}

/* "MxKxN", each a positive int. */
static bool parse_shape(const char *text, struct shape *s)
{
	int *dims[3] = {&s->m, &s->k, &s->n};
	const char *p = text;

	for (int i = 0; i < 3; i++) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 1 || v > 1 << 20 || *end != (i < 2 ? 'x' : '\0'))
			return false;
		*dims[i] = (int)v;
		p = end + 1;
	}
	return true;
}

int main(int argc, char **argv)
{
	bool full = argc > 1 && strcmp(argv[1], "--full") == 0;
	int verified = 0, failed = 0;

	if (argc > 1 && strcmp(argv[1], "--errors") == 0) {
		run_errors();
		return wrong ? 1 : 0;
	}
	if (argc > 1 && strcmp(argv[1], "--layouts") == 0)
		return run_layouts() ? 0 : 1;
	if (argc > 1 && strcmp(argv[1], "--mems") == 0)
		return run_mems() ? 0 : 1;
	if (argc > 1 && strcmp(argv[1], "--rss") == 0) {
		b_direct = true;
		return run_shape(&big, false) ? 0 : 1;
	}
	if (argc > 1 && strcmp(argv[1], "--shapes") == 0) {
		for (int i = 2; i < argc; i++) {
			struct shape s = {0, 0, 0, RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32};

			if (!parse_shape(argv[i], &s)) {
				fprintf(stderr, "shim-api: '%s' is not MxKxN\n", argv[i]);
				return 2;
			}
			run_shape(&s, false) ? verified++ : failed++;
		}
		printf("%d verified, %d failed\n", verified, failed);
		return failed ? 1 : 0;
	}
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		run_shape(&shapes[i], full) ? verified++ : failed++;
	printf("%d verified, %d failed\n", verified, failed);
	return failed ? 1 : 0;
}
