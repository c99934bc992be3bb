/* The matmul executor (rknn_bench/matmul.h) on the emulator: results against a plain
 * loop in every layout and type a backend passes, errors without exits, three threads
 * running distinct matmuls on one device at once. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/fp16.h"
#include "rknn_bench/matmul.h"

struct data {
	int m, k, n;
	float *a, *b_kn, *b_nk, *ref; /* exact values: A integers, B multiples of 1/8 */
	uint16_t *a16, *b16_nk;
};

static void make_data(struct data *d, int m, int k, int n, unsigned seed)
{
	d->m = m, d->k = k, d->n = n;
	d->a = malloc(sizeof(float) * (size_t)(m * k));
	d->b_kn = malloc(sizeof(float) * (size_t)(k * n));
	d->b_nk = malloc(sizeof(float) * (size_t)(k * n));
	d->ref = calloc((size_t)(m * n), sizeof(float));
	d->a16 = malloc(sizeof(uint16_t) * (size_t)(m * k));
	d->b16_nk = malloc(sizeof(uint16_t) * (size_t)(k * n));
	assert_non_null(d->a);
	assert_non_null(d->b_kn);
	assert_non_null(d->b_nk);
	assert_non_null(d->ref);
	assert_non_null(d->a16);
	assert_non_null(d->b16_nk);
	for (int i = 0; i < m * k; i++)
		d->a[i] = (float)((int)((seed + (unsigned)i * 7u) % 9u) - 4);
	for (int r = 0; r < k; r++)
		for (int c = 0; c < n; c++) {
			float v =
			    (float)((int)((seed + (unsigned)(r * 31 + c * 13)) % 17u) - 8) / 8;

			d->b_kn[r * n + c] = v;
			d->b_nk[c * k + r] = v;
		}
	rb_fp16_from_f32_array(d->a16, d->a, (size_t)(m * k));
	rb_fp16_from_f32_array(d->b16_nk, d->b_nk, (size_t)(k * n));
	for (int i = 0; i < m; i++)
		for (int j = 0; j < n; j++)
			for (int x = 0; x < k; x++)
				d->ref[i * n + j] += d->a[i * k + x] * d->b_kn[x * n + j];
}

static void free_data(struct data *d)
{
	free(d->a);
	free(d->b_kn);
	free(d->b_nk);
	free(d->ref);
	free(d->a16);
	free(d->b16_nk);
}

static void expect_c(const struct data *d, const float *c)
{
	for (int i = 0; i < d->m * d->n; i++)
		if (c[i] != d->ref[i])
			fail_msg("C[%d] = %g, expected %g", i, c[i], d->ref[i]);
}

static struct rb_matmul *create(struct rb_matmul_device *dev, int m, int k, int n,
				const char *config, const char *launch)
{
	struct rb_matmul_desc desc = {.shape = {m, k, n, RB_DTYPE_FP16}};
	struct rb_matmul *mm = NULL;

	desc.config = config;
	desc.launch = launch;
	assert_int_equal(rb_matmul_create(&mm, dev, &desc), 0);
	return mm;
}

/* Every way a backend hands in B, A and C gives the same, exact result. */
static void test_layouts_and_types(void **state)
{
	struct rb_matmul_device *dev;
	struct rb_matmul *mm;
	struct rb_matmul_stats st;
	struct data d;
	float *c = malloc(sizeof(float) * 4 * 96);
	uint16_t *c16 = malloc(sizeof(uint16_t) * 4 * 96);

	(void)state;
	assert_non_null(c);
	assert_non_null(c16);
	make_data(&d, 4, 64, 96, 1);
	assert_int_equal(rb_matmul_device_open(&dev, "sim"), 0);
	assert_string_equal(rb_matmul_device_name(dev), "sim");
	assert_true(rb_matmul_device_modeled(dev));
	mm = create(dev, 4, 64, 96, "mask=0x3", "threads");
	assert_non_null(strstr(rb_matmul_config(mm), "mask=0x3"));

	assert_int_equal(rb_matmul_set_weights(mm, d.b16_nk, RB_MATMUL_FP16, RB_MATMUL_B_NK), 0);
	assert_int_equal(rb_matmul_run(mm, d.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), 0);
	expect_c(&d, c);
	memset(c, 0, sizeof(float) * 4 * 96);
	assert_int_equal(rb_matmul_set_weights(mm, d.b_kn, RB_MATMUL_FP32, RB_MATMUL_B_KN), 0);
	assert_int_equal(rb_matmul_run(mm, d.a16, RB_MATMUL_FP16, c, RB_MATMUL_FP32), 0);
	expect_c(&d, c);
	assert_int_equal(rb_matmul_run(mm, d.a16, RB_MATMUL_FP16, c16, RB_MATMUL_FP16), 0);
	rb_fp16_to_f32_array(c, c16, 4 * 96);
	expect_c(&d, c); /* the exact sums here are small integers/8: exact in fp16 too */
	rb_matmul_stats(mm, &st);
	assert_int_equal(st.runs, 3);
	assert_true(st.modeled);
	assert_true(st.device_us > 0);
	rb_matmul_destroy(mm);
	rb_matmul_device_close(dev);
	free_data(&d);
	free(c);
	free(c16);
}

static void test_int8(void **state)
{
	struct rb_matmul_device *dev;
	struct rb_matmul_desc desc = {.shape = {2, 64, 64, RB_DTYPE_INT8}, .core_mask = 0x4};
	struct rb_matmul *mm;
	int8_t a[2 * 64], b_nk[64 * 64];
	int32_t c[2 * 64];

	(void)state;
	for (int i = 0; i < 2 * 64; i++)
		a[i] = (int8_t)(i * 37 % 256 - 128);
	for (int i = 0; i < 64 * 64; i++)
		b_nk[i] = (int8_t)(i * 91 % 256 - 128);
	assert_int_equal(rb_matmul_device_open(&dev, "sim:rocket"), 0);
	assert_int_equal(rb_matmul_create(&mm, dev, &desc), 0);
	assert_non_null(strstr(rb_matmul_config(mm), "mask=0x4"));
	assert_int_equal(rb_matmul_set_weights(mm, b_nk, RB_MATMUL_INT8, RB_MATMUL_B_NK), 0);
	assert_int_equal(rb_matmul_run(mm, a, RB_MATMUL_INT8, c, RB_MATMUL_INT32), 0);
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 64; j++) {
			int32_t s = 0;

			for (int x = 0; x < 64; x++)
				s += a[i * 64 + x] * b_nk[j * 64 + x];
			assert_int_equal(c[i * 64 + j], s);
		}
	rb_matmul_destroy(mm);
	rb_matmul_device_close(dev);
}

static void expect_error(int ret, int err, const char *words)
{
	assert_int_equal(ret, err);
	if (!strstr(rb_last_error(), words))
		fail_msg("message '%s' lacks '%s'", rb_last_error(), words);
}

/* Errors are codes and messages, never exits. */
static void test_errors(void **state)
{
	struct rb_matmul_device *dev = NULL;
	struct rb_matmul_desc desc = {.shape = {1, 64, 64, RB_DTYPE_FP16}};
	struct rb_matmul *mm = NULL;
	float a[64], c[64];
	int8_t a8[64];

	(void)state;
	memset(a, 0, sizeof(a));
	memset(a8, 0, sizeof(a8));
	expect_error(rb_matmul_device_open(&dev, "tpu"), -EINVAL, "not a device");
	assert_null(dev);
	expect_error(rb_matmul_device_open(&dev, "cpu"), -EINVAL, "not an NPU");
	expect_error(rb_matmul_device_open(NULL, "sim"), -EINVAL, "NULL");
	assert_int_equal(rb_matmul_device_open(&dev, "sim"), 0);
	expect_error(rb_matmul_create(&mm, dev, NULL), -EINVAL, "NULL");
	desc.shape.k = 0;
	assert_int_equal(rb_matmul_create(&mm, dev, &desc), -EINVAL);
	assert_null(mm);
	desc.shape.k = 64;
	desc.config = "mask=0x9";
	expect_error(rb_matmul_create(&mm, dev, &desc), -EINVAL, "config 'mask=0x9'");
	desc.config = NULL;
	desc.launch = "warp";
	expect_error(rb_matmul_create(&mm, dev, &desc), -EINVAL, "launch 'warp'");
	desc.launch = NULL;
	desc.core_mask = 0x10;
	expect_error(rb_matmul_create(&mm, dev, &desc), -EINVAL, "core mask 0x10");
	desc.core_mask = 0;
	assert_int_equal(rb_matmul_create(&mm, dev, &desc), 0);
	expect_error(rb_matmul_run(mm, a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), -EINVAL,
		     "no weights");
	expect_error(rb_matmul_set_weights(mm, NULL, RB_MATMUL_FP16, RB_MATMUL_B_NK), -EINVAL,
		     "NULL");
	expect_error(rb_matmul_set_weights(mm, a8, RB_MATMUL_INT8, RB_MATMUL_B_NK), -EINVAL,
		     "fp16 or fp32");
	expect_error(rb_matmul_set_weights(mm, a, RB_MATMUL_FP32, (enum rb_matmul_b_layout)7),
		     -EINVAL, "layout");
	rb_matmul_destroy(mm);
	rb_matmul_device_close(dev);
}

/* Weights are converted and packed a block of columns at a time (about 1 MiB: 64
 * columns at K = 8192), never held whole: N = 96 takes a whole block and a part of one,
 * from both host layouts, exactly. */
static void test_weights_in_blocks(void **state)
{
	struct rb_matmul_device *dev;
	struct rb_matmul *mm;
	struct data d;
	float *c = malloc(sizeof(float) * 2 * 96);

	(void)state;
	assert_non_null(c);
	make_data(&d, 2, 8192, 96, 3);
	assert_int_equal(rb_matmul_device_open(&dev, "sim"), 0);
	mm = create(dev, 2, 8192, 96, NULL, NULL);
	assert_int_equal(rb_matmul_set_weights(mm, d.b16_nk, RB_MATMUL_FP16, RB_MATMUL_B_NK), 0);
	assert_int_equal(rb_matmul_run(mm, d.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), 0);
	expect_c(&d, c);
	memset(c, 0, sizeof(float) * 2 * 96);
	assert_int_equal(rb_matmul_set_weights(mm, d.b_kn, RB_MATMUL_FP32, RB_MATMUL_B_KN), 0);
	assert_int_equal(rb_matmul_run(mm, d.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), 0);
	expect_c(&d, c);
	rb_matmul_destroy(mm);
	rb_matmul_device_close(dev);
	free_data(&d);
	free(c);
}

/* Matmuls of one weight for two M share one packed copy: the second reads the first's
 * weights and both compute exactly; it can share only packed weights of the same
 * layout; given weights of its own, it no longer needs the first. */
static void test_sharing(void **state)
{
	struct rb_matmul_device *dev;
	struct rb_matmul *owner, *decode = NULL;
	struct rb_matmul_desc desc = {.shape = {1, 64, 96, RB_DTYPE_FP16}, .config = "mask=0x1"};
	struct data prompt, token;
	float c[4 * 96];

	(void)state;
	make_data(&prompt, 4, 64, 96, 1);
	make_data(&token, 1, 64, 96, 1); /* the same B: it depends on the seed, K and N only */
	assert_int_equal(rb_matmul_device_open(&dev, "sim"), 0);
	owner = create(dev, 4, 64, 96, "mask=0x3", "threads");
	expect_error(rb_matmul_create_sharing(&decode, dev, &desc, owner), -EINVAL,
		     "no weights packed");
	assert_null(decode);
	assert_int_equal(
	    rb_matmul_set_weights(owner, prompt.b16_nk, RB_MATMUL_FP16, RB_MATMUL_B_NK), 0);
	assert_int_equal(rb_matmul_create_sharing(&decode, dev, &desc, owner), 0);
	assert_int_equal(rb_matmul_run(decode, token.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), 0);
	expect_c(&token, c);
	assert_int_equal(rb_matmul_run(owner, prompt.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), 0);
	expect_c(&prompt, c);
	/* its own weights: the owner may go */
	assert_int_equal(rb_matmul_set_weights(decode, token.b_kn, RB_MATMUL_FP32, RB_MATMUL_B_KN),
			 0);
	rb_matmul_destroy(owner);
	memset(c, 0, sizeof(c));
	assert_int_equal(rb_matmul_run(decode, token.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), 0);
	expect_c(&token, c);
	owner = decode;
	decode = NULL;
	desc.shape.k = 128;
	expect_error(rb_matmul_create_sharing(&decode, dev, &desc, owner), -EINVAL,
		     "cannot be shared");
	assert_null(decode);
	expect_error(rb_matmul_create_sharing(&decode, dev, &desc, NULL), -EINVAL, "NULL");
	rb_matmul_destroy(owner);
	rb_matmul_device_close(dev);
	free_data(&prompt);
	free_data(&token);
}

/* Run-time type errors, each caught before the NPU runs. */
static void test_run_types(void **state)
{
	struct rb_matmul_device *dev;
	struct rb_matmul *mm;
	struct data d;
	float c[2 * 32];
	int32_t c32[2 * 32];

	(void)state;
	make_data(&d, 2, 32, 32, 3);
	assert_int_equal(rb_matmul_device_open(&dev, "sim"), 0);
	mm = create(dev, 2, 32, 32, NULL, NULL);
	assert_int_equal(rb_matmul_set_weights(mm, d.b_nk, RB_MATMUL_FP32, RB_MATMUL_B_NK), 0);
	expect_error(rb_matmul_run(mm, d.a, RB_MATMUL_INT8, c, RB_MATMUL_FP32), -EINVAL,
		     "fp16 or fp32");
	expect_error(rb_matmul_run(mm, d.a, RB_MATMUL_FP32, c32, RB_MATMUL_INT32), -EINVAL,
		     "fp32 or fp16");
	expect_error(rb_matmul_run(mm, NULL, RB_MATMUL_FP32, c, RB_MATMUL_FP32), -EINVAL, "NULL");
	assert_int_equal(rb_matmul_run(mm, d.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), 0);
	expect_c(&d, c);
	rb_matmul_destroy(mm);
	rb_matmul_device_close(dev);
	free_data(&d);
}

/* ---- three threads, three matmuls, one device ---- */

struct worker {
	struct rb_matmul_device *dev;
	struct data d;
	const char *launch;
	int bad;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct rb_matmul_desc desc = {.shape = {w->d.m, w->d.k, w->d.n, RB_DTYPE_FP16}};
	struct rb_matmul *mm = NULL;
	float *c = malloc(sizeof(float) * (size_t)(w->d.m * w->d.n));

	desc.launch = w->launch;
	w->bad = !c || rb_matmul_create(&mm, w->dev, &desc) != 0 ||
		 rb_matmul_set_weights(mm, w->d.b16_nk, RB_MATMUL_FP16, RB_MATMUL_B_NK) != 0;
	for (int i = 0; i < 10 && !w->bad; i++) {
		memset(c, 0, sizeof(float) * (size_t)(w->d.m * w->d.n));
		w->bad = rb_matmul_run(mm, w->d.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32) != 0 ||
			 memcmp(c, w->d.ref, sizeof(float) * (size_t)(w->d.m * w->d.n)) != 0;
	}
	rb_matmul_destroy(mm);
	free(c);
	return NULL;
}

static void test_three_threads(void **state)
{
	static const char *const launches[3] = {"fences", "threads", "multicore"};
	struct rb_matmul_device *dev;
	struct worker w[3];
	pthread_t th[3];

	(void)state;
	assert_int_equal(rb_matmul_device_open(&dev, "sim"), 0);
	for (int i = 0; i < 3; i++) {
		w[i] = (struct worker){.dev = dev, .launch = launches[i]};
		make_data(&w[i].d, 3 + i, 64 * (i + 1), 48 + 16 * i, (unsigned)i);
	}
	for (int i = 0; i < 3; i++)
		assert_int_equal(pthread_create(&th[i], NULL, worker_main, &w[i]), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(pthread_join(th[i], NULL), 0);
		assert_int_equal(w[i].bad, 0);
		free_data(&w[i].d);
	}
	rb_matmul_device_close(dev);
}

/* The device's NPU time: matmuls run one after another add up exactly (each run's
 * modeled time), and only those created with a tuned desc count as tuned. */
static void test_device_stats(void **state)
{
	struct rb_matmul_device *dev;
	struct rb_matmul *mm[2];
	struct rb_matmul_stats st;
	struct rb_matmul_device_stats ds;
	struct data d;
	float *c;
	double sum = 0;

	(void)state;
	make_data(&d, 4, 64, 64, 3);
	c = malloc(sizeof(float) * 4 * 64);
	assert_non_null(c);
	assert_int_equal(rb_matmul_device_open(&dev, "sim"), 0);
	rb_matmul_device_stats(dev, &ds);
	assert_int_equal(ds.runs, 0);
	assert_true(ds.modeled);
	mm[0] = create(dev, 4, 64, 64, "mask=0x1", NULL);
	{
		struct rb_matmul_desc desc = {.shape = {4, 64, 64, RB_DTYPE_FP16}};
		struct rb_tuned_config t = {.config = "mask=0x7 split=n", .launch = "fences"};

		rb_matmul_desc_tuned(&desc, &t);
		assert_true(desc.tuned);
		assert_int_equal(rb_matmul_create(&mm[1], dev, &desc), 0);
	}
	for (int i = 0; i < 2; i++) {
		assert_int_equal(
		    rb_matmul_set_weights(mm[i], d.b_kn, RB_MATMUL_FP32, RB_MATMUL_B_KN), 0);
		for (int r = 0; r < 1 + i; r++) {
			assert_int_equal(
			    rb_matmul_run(mm[i], d.a, RB_MATMUL_FP32, c, RB_MATMUL_FP32), 0);
			expect_c(&d, c);
			rb_matmul_stats(mm[i], &st);
			assert_true(st.device_us > 0);
			sum += st.device_us;
		}
	}
	rb_matmul_device_stats(dev, &ds);
	assert_int_equal(ds.runs, 3);
	assert_int_equal(ds.tuned_runs, 2);
	assert_true(ds.npu_us > sum - 0.003 && ds.npu_us < sum + 0.003);
	for (int i = 0; i < 2; i++)
		rb_matmul_destroy(mm[i]);
	rb_matmul_device_close(dev);
	free(c);
	free_data(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layouts_and_types),
	    cmocka_unit_test(test_int8),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_run_types),
	    cmocka_unit_test(test_weights_in_blocks),
	    cmocka_unit_test(test_sharing),
	    cmocka_unit_test(test_three_threads),
	    cmocka_unit_test(test_device_stats),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
