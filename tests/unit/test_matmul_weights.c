/* Weights kept once (rknn_bench/matmul.h): a buffer of the device holding B in the rknn
 * native layout is what the NPU reads, with no copy. The claim under it, checked byte
 * for byte: where rb_matmul_native_weights says so, the job's packing of B (numeric/layout,
 * with the plan's K-slice) is the native layout, written here from its definition; where
 * it does not, the bytes differ. Then results from a buffer on both kernels, B rewritten
 * in place and set again, the switch between a buffer and packed weights, buffers and matmuls made
 * and freed from three threads at once on rocket, and the errors. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/error.h"
#include "core/fp16.h"
#include "numeric/layout.h"
#include "rknn_bench/matmul.h"

#define SEGMENT 8192 /* RK3588: native B segments of K */

/* The native index of B[k][n] (elements): (N/KG, Ks/32, KG, 32) per segment of K. */
static size_t native_index(int64_t K, int64_t N, int64_t kg, int64_t k, int64_t n)
{
	int64_t seg = k / SEGMENT, ks = k % SEGMENT;
	int64_t seg_k = K - seg * SEGMENT < SEGMENT ? K - seg * SEGMENT : SEGMENT;

	return (size_t)(seg * SEGMENT * N + ((n / kg) * (seg_k / 32) + ks / 32) * kg * 32 +
			(n % kg) * 32 + ks % 32);
}

static int8_t b_val(int64_t k, int64_t n, int scale)
{
	return (int8_t)(((k * 7 + n * 3) % 17 - 8) * scale);
}

static float a_val(int64_t m, int64_t k)
{
	return (float)((m * 3 + k * 5) % 9 - 4);
}

/* B (K×N row-major, fp16 bits or int8) with values b_val·scale (fp16: /8, exact). */
static void *make_b_kn(enum rb_dtype dt, int64_t K, int64_t N, int scale)
{
	size_t es = rb_dtype_in_size(dt);
	char *b = malloc((size_t)(K * N) * es);

	assert_non_null(b);
	for (int64_t k = 0; k < K; k++)
		for (int64_t n = 0; n < N; n++) {
			uint16_t h = rb_fp16_from_f32((float)b_val(k, n, scale) / 8);

			if (es == 2)
				memcpy(b + (size_t)(k * N + n) * 2, &h, 2);
			else
				b[k * N + n] = (char)b_val(k, n, scale);
		}
	return b;
}

/* B in the native layout, from its definition. */
static void to_native(enum rb_dtype dt, int64_t K, int64_t N, const void *kn, void *dst)
{
	size_t es = rb_dtype_in_size(dt);
	int64_t kg = rb_layout_kernel_group(dt);

	for (int64_t k = 0; k < K; k++)
		for (int64_t n = 0; n < N; n++)
			memcpy((char *)dst + native_index(K, N, kg, k, n) * es,
			       (const char *)kn + (size_t)(k * N + n) * es, es);
}

static struct rb_matmul_device *open_dev(const char *name)
{
	struct rb_matmul_device *dev = NULL;

	assert_int_equal(rb_matmul_device_open(&dev, name), 0);
	return dev;
}

static struct rb_matmul *create(struct rb_matmul_device *dev, int64_t m, int64_t k, int64_t n,
				enum rb_dtype dt, const char *config)
{
	struct rb_matmul_desc d = {.shape = {m, k, n, dt}, .config = config};
	struct rb_matmul *mm = NULL;

	if (rb_matmul_create(&mm, dev, &d) < 0)
		fail_msg("create %lldx%lldx%lld '%s': %s", (long long)m, (long long)k, (long long)n,
			 config ? config : "", rb_last_error());
	return mm;
}

/* The plan's K-slice, read back from its config. */
static int64_t planned_k_slice(const struct rb_matmul *mm)
{
	const char *at = strstr(rb_matmul_config(mm), "kslice=");

	assert_non_null(at);
	return strtoll(at + 7, NULL, 10);
}

struct layout_case {
	enum rb_dtype dt;
	int64_t k, n;
	const char *config;
	bool native;
};

static void test_native_is_the_packed_layout(void **state)
{
	static const struct layout_case cases[] = {
	    {RB_DTYPE_FP16, 256, 64, NULL, true},
	    {RB_DTYPE_FP16, 8192, 32, NULL, true},           /* one whole segment */
	    {RB_DTYPE_FP16, 9216, 32, "kslice=8192", true},  /* segments 8192 + 1024 */
	    {RB_DTYPE_FP16, 9216, 32, NULL, false},          /* auto: two slices of 4608 */
	    {RB_DTYPE_FP16, 2048, 48, "kslice=1024", false}, /* K-slices inside a segment */
	    {RB_DTYPE_INT8, 512, 64, NULL, true},
	    {RB_DTYPE_INT8, 8224, 32, "kslice=8192", true}, /* 8192 + 32 */
	    {RB_DTYPE_INT8, 16384, 64, "kslice=4096", false},
	};
	struct rb_matmul_device *dev = open_dev("sim");

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct layout_case *c = &cases[i];
		struct rb_matmul *mm = create(dev, 1, c->k, c->n, c->dt, c->config);
		size_t bytes = (size_t)(c->k * c->n) * rb_dtype_in_size(c->dt);
		void *kn = make_b_kn(c->dt, c->k, c->n, 1), *packed = malloc(bytes),
		     *native = malloc(bytes);

		assert_non_null(packed);
		assert_non_null(native);
		/* what rb_npu_job_set_weights writes for this plan */
		assert_int_equal(rb_layout_pack_b_sliced(packed, kn, c->dt, c->k, c->n, c->k, c->n,
							 planned_k_slice(mm), 1),
				 0);
		to_native(c->dt, c->k, c->n, kn, native);
		if (rb_matmul_native_weights(mm) != c->native)
			fail_msg("case %zu (%s): rb_matmul_native_weights %d", i,
				 rb_matmul_config(mm), !c->native);
		if ((memcmp(packed, native, bytes) == 0) != c->native)
			fail_msg("case %zu (%s): the packed B %s the native layout", i,
				 rb_matmul_config(mm), c->native ? "differs from" : "equals");
		free(kn);
		free(packed);
		free(native);
		rb_matmul_destroy(mm);
	}
	rb_matmul_device_close(dev);
}

/* C = A·B for B = b_val·scale, A = a_val; fp16 C is fp32, int8 C is int32. */
static void expect_c(enum rb_dtype dt, int64_t M, int64_t K, int64_t N, int scale, const void *c)
{
	for (int64_t m = 0; m < M; m++)
		for (int64_t n = 0; n < N; n++) {
			double want = 0, got;

			for (int64_t k = 0; k < K; k++)
				want += a_val(m, k) * b_val(k, n, scale) /
					(dt == RB_DTYPE_FP16 ? 8.0 : 1.0);
			got = dt == RB_DTYPE_FP16 ? ((const float *)c)[m * N + n]
						  : ((const int32_t *)c)[m * N + n];
			if (got != want)
				fail_msg("C[%lld][%lld] = %g, expected %g", (long long)m,
					 (long long)n, got, want);
		}
}

static void run_and_check(struct rb_matmul *mm, enum rb_dtype dt, int64_t M, int64_t K, int64_t N,
			  int scale)
{
	size_t es = rb_dtype_in_size(dt);
	char *a = malloc((size_t)(M * K) * es);
	void *c = calloc((size_t)(M * N), 4);

	assert_non_null(a);
	assert_non_null(c);
	for (int64_t i = 0; i < M * K; i++) {
		uint16_t h = rb_fp16_from_f32(a_val(i / K, i % K));

		if (es == 2)
			memcpy(a + i * 2, &h, 2);
		else
			((int8_t *)a)[i] =
			    (int8_t)a_val(i / K, i % K); /* char is unsigned on aarch64 */
	}
	if (rb_matmul_run(mm, a, dt == RB_DTYPE_FP16 ? RB_MATMUL_FP16 : RB_MATMUL_INT8, c,
			  dt == RB_DTYPE_FP16 ? RB_MATMUL_FP32 : RB_MATMUL_INT32) < 0)
		fail_msg("run: %s", rb_last_error());
	expect_c(dt, M, K, N, scale, c);
	free(a);
	free(c);
}

/* Native B at an offset of a buffer, on both kernels: the result, then B rewritten in the
 * buffer (scale 2) and set again (the sync alone): the NPU read the new bytes. */
static void check_buffer(const char *device, enum rb_dtype dt, int64_t M, int64_t K, int64_t N,
			 const char *config)
{
	struct rb_matmul_device *dev = open_dev(device);
	struct rb_matmul *mm = create(dev, M, K, N, dt, config);
	size_t bytes = (size_t)(K * N) * rb_dtype_in_size(dt), offset = 4096 + 48;
	struct rb_matmul_buffer *buf = NULL;
	void *kn;

	assert_int_equal(rb_matmul_buffer_new(&buf, dev, offset + bytes), 0);
	for (int scale = 1; scale <= 2; scale++) {
		kn = make_b_kn(dt, K, N, scale);
		to_native(dt, K, N, kn, (char *)rb_matmul_buffer_map(buf) + offset);
		free(kn);
		if (rb_matmul_set_weights_buffer(mm, buf, offset) < 0)
			fail_msg("%s %s: %s", device, rb_matmul_config(mm), rb_last_error());
		run_and_check(mm, dt, M, K, N, scale);
	}
	rb_matmul_destroy(mm);
	rb_matmul_buffer_free(buf);
	rb_matmul_device_close(dev);
}

static void test_weights_from_a_buffer(void **state)
{
	(void)state;
	check_buffer("sim", RB_DTYPE_FP16, 3, 256, 64, NULL);
	check_buffer("sim", RB_DTYPE_INT8, 2, 512, 96, "mask=0x7 split=n:1,1,1");
	check_buffer("sim", RB_DTYPE_FP16, 1, 9216, 32, "kslice=8192");
	check_buffer("sim:rocket", RB_DTYPE_FP16, 5, 128, 48, "mask=0x3 split=n:1,1");
	check_buffer("sim:rocket", RB_DTYPE_INT8, 1, 8224, 32, "kslice=8192");
}

/* A buffer, then packed weights (from the native layout), then the buffer again. */
static void test_buffer_and_packed_replace_each_other(void **state)
{
	struct rb_matmul_device *dev = open_dev("sim");
	struct rb_matmul *mm = create(dev, 2, 256, 32, RB_DTYPE_FP16, NULL);
	struct rb_matmul_buffer *buf = NULL;
	size_t bytes = 256 * 32 * 2;
	void *kn = make_b_kn(RB_DTYPE_FP16, 256, 32, 1), *native = malloc(bytes);

	(void)state;
	assert_non_null(native);
	assert_int_equal(rb_matmul_buffer_new(&buf, dev, bytes), 0);
	to_native(RB_DTYPE_FP16, 256, 32, kn, rb_matmul_buffer_map(buf));
	assert_int_equal(rb_matmul_set_weights_buffer(mm, buf, 0), 0);
	run_and_check(mm, RB_DTYPE_FP16, 2, 256, 32, 1);
	free(kn);
	kn = make_b_kn(RB_DTYPE_FP16, 256, 32, 2);
	to_native(RB_DTYPE_FP16, 256, 32, kn, native);
	assert_int_equal(rb_matmul_set_weights(mm, native, RB_MATMUL_FP16, RB_MATMUL_B_NATIVE), 0);
	memset(rb_matmul_buffer_map(buf), 0, bytes); /* packed: the buffer no longer counts */
	run_and_check(mm, RB_DTYPE_FP16, 2, 256, 32, 2);
	memcpy(rb_matmul_buffer_map(buf), native, bytes);
	assert_int_equal(rb_matmul_set_weights_buffer(mm, buf, 0), 0);
	run_and_check(mm, RB_DTYPE_FP16, 2, 256, 32, 2);
	free(kn);
	free(native);
	rb_matmul_destroy(mm);
	rb_matmul_buffer_free(buf);
	rb_matmul_device_close(dev);
}

/* A config with other K-slices packs native weights once, into its own buffer. */
static void test_native_packed_for_other_layouts(void **state)
{
	struct rb_matmul_device *dev = open_dev("sim:rocket");
	struct rb_matmul *mm = create(dev, 3, 2048, 48, RB_DTYPE_FP16, "kslice=1024");
	void *kn = make_b_kn(RB_DTYPE_FP16, 2048, 48, 1), *native = malloc(2048 * 48 * 2);

	(void)state;
	assert_non_null(native);
	to_native(RB_DTYPE_FP16, 2048, 48, kn, native);
	assert_false(rb_matmul_native_weights(mm));
	assert_int_equal(rb_matmul_set_weights(mm, native, RB_MATMUL_FP16, RB_MATMUL_B_NATIVE), 0);
	memset(native, 0, 2048 * 48 * 2); /* the caller's copy may go */
	run_and_check(mm, RB_DTYPE_FP16, 3, 2048, 48, 1);
	free(kn);
	free(native);
	rb_matmul_destroy(mm);
	rb_matmul_device_close(dev);
}

/* ---- three threads making and freeing buffers and matmuls on one rocket device ---- */

#define THREAD_ROUNDS 12

struct worker {
	struct rb_matmul_device *dev;
	unsigned core;
	int failures;
	char error[256];
};

/* One round: a buffer with native B, a matmul on one core reading it, a run checked. */
static int one_round(struct worker *w, int round)
{
	char config[32];
	struct rb_matmul_desc d = {.shape = {2, 128 + 32 * round, 32, RB_DTYPE_FP16},
				   .config = config};
	int64_t K = d.shape.k;
	struct rb_matmul *mm = NULL;
	struct rb_matmul_buffer *buf = NULL;
	void *kn = make_b_kn(RB_DTYPE_FP16, K, 32, 1);
	uint16_t a[2 * 512];
	float c[2 * 32];
	int ret;

	snprintf(config, sizeof(config), "mask=0x%x", 1u << w->core);
	for (int64_t i = 0; i < 2 * K; i++)
		a[i] = rb_fp16_from_f32(a_val(i / K, i % K));
	ret = rb_matmul_buffer_new(&buf, w->dev, (uint64_t)K * 32 * 2);
	if (ret == 0) {
		to_native(RB_DTYPE_FP16, K, 32, kn, rb_matmul_buffer_map(buf));
		ret = rb_matmul_create(&mm, w->dev, &d);
	}
	if (ret == 0)
		ret = rb_matmul_set_weights_buffer(mm, buf, 0);
	if (ret == 0)
		ret = rb_matmul_run(mm, a, RB_MATMUL_FP16, c, RB_MATMUL_FP32);
	if (ret < 0)
		snprintf(w->error, sizeof(w->error), "%s", rb_last_error());
	for (int64_t n = 0; ret == 0 && n < 32; n++) {
		double want = 0;

		for (int64_t k = 0; k < K; k++)
			want += a_val(1, k) * b_val(k, n, 1) / 8.0;
		if (c[32 + n] != want) {
			snprintf(w->error, sizeof(w->error), "C[1][%lld] = %g, expected %g",
				 (long long)n, c[32 + n], want);
			ret = -EIO;
		}
	}
	rb_matmul_destroy(mm);
	rb_matmul_buffer_free(buf);
	free(kn);
	return ret;
}

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int round = 0; round < THREAD_ROUNDS; round++)
		w->failures += one_round(w, round) < 0;
	return NULL;
}

static void test_threads_make_buffers_at_once(void **state)
{
	struct worker w[3];
	pthread_t tid[3];

	(void)state;
	memset(w, 0, sizeof(w));
	w[0].dev = open_dev("sim:rocket");
	for (unsigned i = 0; i < 3; i++) {
		w[i].dev = w[0].dev;
		w[i].core = i;
		assert_int_equal(pthread_create(&tid[i], NULL, work, &w[i]), 0);
	}
	for (unsigned i = 0; i < 3; i++)
		pthread_join(tid[i], NULL);
	for (unsigned i = 0; i < 3; i++)
		if (w[i].failures)
			fail_msg("thread %u: %d of %d rounds failed, e.g. %s", i, w[i].failures,
				 THREAD_ROUNDS, w[i].error);
	rb_matmul_device_close(w[0].dev);
}

static void expect_error(int ret, const char *part)
{
	assert_int_equal(ret, -EINVAL);
	if (!strstr(rb_last_error(), part))
		fail_msg("'%s' does not say '%s'", rb_last_error(), part);
}

static void test_errors(void **state)
{
	struct rb_matmul_device *dev = open_dev("sim"), *other = open_dev("sim");
	struct rb_matmul *mm = create(dev, 1, 256, 64, RB_DTYPE_FP16, NULL);
	struct rb_matmul *sliced = create(dev, 1, 2048, 64, RB_DTYPE_FP16, "kslice=1024");
	struct rb_matmul_buffer *buf = NULL, *theirs = NULL;
	uint16_t a[256] = {0};
	float c[64];

	(void)state;
	/* 32 KiB, a whole number of pages: the kernel rounds a buffer up to pages */
	assert_int_equal(rb_matmul_buffer_new(&buf, dev, 256 * 64 * 2), 0);
	assert_int_equal(rb_matmul_buffer_new(&theirs, other, 256 * 64 * 2), 0);
	expect_error(rb_matmul_buffer_new(&buf, dev, 0), "size 0");
	expect_error(rb_matmul_set_weights_buffer(mm, NULL, 0), "NULL");
	expect_error(rb_matmul_set_weights_buffer(mm, theirs, 0), "another device");
	expect_error(rb_matmul_set_weights_buffer(mm, buf, 8), "multiple of 16");
	expect_error(rb_matmul_set_weights_buffer(mm, buf, 16), "32768 bytes");
	expect_error(rb_matmul_set_weights_buffer(sliced, buf, 0), "K-slices of 1024");
	expect_error(rb_matmul_set_weights(mm, a, RB_MATMUL_FP32, RB_MATMUL_B_NATIVE), "fp32");
	expect_error(rb_matmul_run(mm, a, RB_MATMUL_FP16, c, RB_MATMUL_FP32), "no weights");
	assert_int_equal(rb_matmul_set_weights_buffer(mm, buf, 0), 0);
	assert_int_equal(rb_matmul_set_weights_buffer(mm, buf, 0), 0); /* the same: no-op */
	assert_int_equal(rb_matmul_run(mm, a, RB_MATMUL_FP16, c, RB_MATMUL_FP32), 0);
	rb_matmul_destroy(mm);
	rb_matmul_destroy(sliced);
	rb_matmul_buffer_free(buf);
	rb_matmul_buffer_free(theirs);
	rb_matmul_buffer_free(NULL);
	rb_matmul_device_close(other);
	rb_matmul_device_close(dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_native_is_the_packed_layout),
	    cmocka_unit_test(test_weights_from_a_buffer),
	    cmocka_unit_test(test_buffer_and_packed_replace_each_other),
	    cmocka_unit_test(test_native_packed_for_other_layouts),
	    cmocka_unit_test(test_threads_make_buffers_at_once),
	    cmocka_unit_test(test_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
