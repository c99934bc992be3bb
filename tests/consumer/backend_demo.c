/* A backend's use of the matmul executor, built with the public headers only
 * (-Iinclude) against librknn-bench.a:
 *
 *   backend-demo TUNED.json [--device D] [--api]
 *
 * Runs every tuned pair of the file the way ggml-rknn would run it: weights given once
 * as fp16 N×K (ggml's layout of a weight tensor; int8 for int8 pairs), A as fp32
 * converted on each call, C as fp32 (int32 for int8). Each result is checked against a
 * plain CPU loop. --api runs each pair's rknn_matmul_api section (the best config that
 * API can express) instead of its tuned config. On the emulator each modeled time is
 * compared with the file's. The data are exact (A small integers, B multiples of 1/8), so every
 * product and every fp32 partial sum is exact and fp32 results must match exactly; a
 * config that writes fp16 C is checked to fp16's precision. Prints one line per pair
 * ("modeled times as in the file: N of N" on the emulator) and "N verified, N failed"
 * last; exits 0 if all verified, 1 if any failed, 2 on bad
 * arguments or a file that does not load. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rknn_bench/matmul.h"
#include "rknn_bench/tuned.h"
#include "../tools/half.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static int rand_in(int lo, int hi)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return lo + (int)(rng_state % (uint64_t)(hi - lo + 1));
}

struct pair_data {
	size_t m, k, n;
	float *a, *w, *ref, *c; /* fp16 pairs: A M×K, W N×K (as values), ref and C M×N */
	int8_t *a8, *w8;        /* int8 pairs */
	int32_t *ref32, *c32;
	uint16_t *w16;
};

static void free_data(struct pair_data *d)
{
	free(d->a);
	free(d->w);
	free(d->ref);
	free(d->c);
	free(d->a8);
	free(d->w8);
	free(d->ref32);
	free(d->c32);
	free(d->w16);
}

static int make_fp16(struct pair_data *d)
{
	d->a = malloc(d->m * d->k * sizeof(float));
	d->w = malloc(d->n * d->k * sizeof(float));
	d->w16 = malloc(d->n * d->k * sizeof(uint16_t));
	d->ref = calloc(d->m * d->n, sizeof(float));
	d->c = malloc(d->m * d->n * sizeof(float));
	if (!d->a || !d->w || !d->w16 || !d->ref || !d->c)
		return -1;
	for (size_t i = 0; i < d->m * d->k; i++)
		d->a[i] = (float)rand_in(-4, 4);
	for (size_t i = 0; i < d->n * d->k; i++) {
		d->w[i] = (float)rand_in(-8, 8) / 8.0f;
		d->w16[i] = half_of(d->w[i]);
	}
	for (size_t i = 0; i < d->m; i++)
		for (size_t j = 0; j < d->n; j++) {
			float s = 0;

			for (size_t x = 0; x < d->k; x++)
				s += d->a[i * d->k + x] * d->w[j * d->k + x];
			d->ref[i * d->n + j] = s;
		}
	return 0;
}

static int make_int8(struct pair_data *d)
{
	d->a8 = malloc(d->m * d->k);
	d->w8 = malloc(d->n * d->k);
	d->ref32 = calloc(d->m * d->n, sizeof(int32_t));
	d->c32 = malloc(d->m * d->n * sizeof(int32_t));
	if (!d->a8 || !d->w8 || !d->ref32 || !d->c32)
		return -1;
	for (size_t i = 0; i < d->m * d->k; i++)
		d->a8[i] = (int8_t)rand_in(-128, 127);
	for (size_t i = 0; i < d->n * d->k; i++)
		d->w8[i] = (int8_t)rand_in(-128, 127);
	for (size_t i = 0; i < d->m; i++)
		for (size_t j = 0; j < d->n; j++) {
			int64_t s = 0;

			for (size_t x = 0; x < d->k; x++)
				s += (int64_t)d->a8[i * d->k + x] * d->w8[j * d->k + x];
			d->ref32[i * d->n + j] = (int32_t)s;
		}
	return 0;
}

/* Pairs of one shape (every layer's ffn_up) share their data and reference. */
static bool same_data(const struct pair_data *d, const struct rb_tuned_config *t)
{
	return (d->a || d->a8) && d->m == (size_t)t->shape.m && d->k == (size_t)t->shape.k &&
	       d->n == (size_t)t->shape.n && (d->a8 != NULL) == (t->shape.dtype == RB_DTYPE_INT8);
}

static int make_data(struct pair_data *d, const struct rb_tuned_config *t)
{
	free_data(d);
	*d = (struct pair_data){
	    .m = (size_t)t->shape.m, .k = (size_t)t->shape.k, .n = (size_t)t->shape.n};
	return t->shape.dtype == RB_DTYPE_INT8 ? make_int8(d) : make_fp16(d);
}

/* The largest error, and whether it is within what the config's output allows. */
static int check(const struct pair_data *d, bool fp16_out, double *max_err)
{
	size_t n = d->m * d->n;

	*max_err = 0;
	for (size_t i = 0; i < n; i++) {
		double e = d->c32 ? fabs((double)d->c32[i] - d->ref32[i])
				  : fabs((double)d->c[i] - d->ref[i]);
		/* fp16 C: half an ulp per rounding, a few roundings when K-slices add up */
		double tol = fp16_out && !d->c32 ? 4.0 * ldexp(fabs(d->ref[i]), -11) + 1e-3 : 0;

		if (e > *max_err)
			*max_err = e;
		if (e > tol)
			return -1;
	}
	return 0;
}

struct demo {
	struct rb_matmul_device *dev;
	bool api;           /* run the rknn_matmul_api sections */
	size_t same, timed; /* modeled times equal to the file's, of those compared */
};

static void compare_time(struct demo *demo, const struct rb_matmul_stats *st, double want)
{
	if (!st->modeled)
		return;
	demo->timed++;
	demo->same += fabs(st->device_us - want) < 1e-3;
}

static int run_pair(struct demo *demo, const struct rb_tuned_config *t, struct pair_data *d,
		    char *why, size_t size)
{
	struct rb_matmul_desc desc = {.shape = t->shape};
	struct rb_matmul *mm = NULL;
	bool int8 = t->shape.dtype == RB_DTYPE_INT8;
	double want = demo->api ? t->api.median_us : t->median_us;
	int ret;

	if (demo->api && !t->api.present) {
		snprintf(why, size, "the pair has no rknn_matmul_api section");
		return -1;
	}
	rb_matmul_desc_tuned(&desc, t);
	if (demo->api) {
		desc.config = t->api.config;
		desc.launch = t->api.launch;
	}
	ret = rb_matmul_create(&mm, demo->dev, &desc);
	if (ret == 0)
		ret = int8 ? rb_matmul_set_weights(mm, d->w8, RB_MATMUL_INT8, RB_MATMUL_B_NK)
			   : rb_matmul_set_weights(mm, d->w16, RB_MATMUL_FP16, RB_MATMUL_B_NK);
	if (ret == 0)
		ret = int8 ? rb_matmul_run(mm, d->a8, RB_MATMUL_INT8, d->c32, RB_MATMUL_INT32)
			   : rb_matmul_run(mm, d->a, RB_MATMUL_FP32, d->c, RB_MATMUL_FP32);
	if (ret < 0) {
		snprintf(why, size, "%s", rb_last_error());
	} else {
		struct rb_matmul_stats st;
		double err;
		bool fp16_out = strstr(rb_matmul_config(mm), "out=fp16") != NULL;

		rb_matmul_stats(mm, &st);
		compare_time(demo, &st, want);
		ret = check(d, fp16_out, &err);
		snprintf(why, size, "%.1f us %s (file: %.1f us), max error %g%s", st.device_us,
			 st.modeled ? "modeled" : "measured", want, err, ret ? " (too large)" : "");
	}
	rb_matmul_destroy(mm);
	return ret;
}

static int usage(void)
{
	fprintf(stderr, "usage: backend-demo TUNED.json [--device D] [--api]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *device = "auto";
	struct rb_tuned_db *db = NULL;
	struct demo demo = {0};
	struct pair_data d = {0};
	size_t verified = 0, failed = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--device") == 0 && i + 1 < argc)
			device = argv[++i];
		else if (strcmp(argv[i], "--api") == 0)
			demo.api = true;
		else if (!path && argv[i][0] != '-')
			path = argv[i];
		else
			return usage();
	}
	if (!path)
		return usage();
	if (rb_tuned_load_file(&db, path) < 0 || rb_matmul_device_open(&demo.dev, device) < 0) {
		fprintf(stderr, "backend-demo: %s\n", rb_last_error());
		rb_tuned_free(db);
		return 2;
	}
	printf("device %s%s, %zu tuned pairs of %s%s\n", rb_matmul_device_name(demo.dev),
	       rb_matmul_device_modeled(demo.dev) ? " (times modeled)" : "", rb_tuned_count(db),
	       path, demo.api ? ", their rknn_matmul_api configs" : "");
	for (size_t i = 0; i < rb_tuned_count(db); i++) {
		const struct rb_tuned_config *t = rb_tuned_at(db, i);
		char why[1024];
		int ok = same_data(&d, t) || make_data(&d, t) == 0;

		if (!ok)
			snprintf(why, sizeof(why), "out of host memory");
		else
			ok = run_pair(&demo, t, &d, why, sizeof(why)) == 0;
		printf("%-20s %lldx%lldx%lld %s %-9s %s\n", t->name, (long long)t->shape.m,
		       (long long)t->shape.k, (long long)t->shape.n, rb_dtype_name(t->shape.dtype),
		       ok ? "verified" : "FAILED", why);
		ok ? verified++ : failed++;
	}
	free_data(&d);
	if (demo.timed)
		printf("modeled times as in the file: %zu of %zu\n", demo.same, demo.timed);
	printf("%zu verified, %zu failed\n", verified, failed);
	rb_matmul_device_close(demo.dev);
	rb_tuned_free(db);
	return failed ? 1 : 0;
}
