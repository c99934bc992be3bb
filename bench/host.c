/* bench-host: the host work per call of the matmul executor (include/rknn_bench/matmul.h,
 * which the shim, build/shim/librknnrt.so, runs every rknn_matmul_run through) next to
 * the modeled NPU time of the same call, for the seed file's decode shapes and the
 * prefill shapes of configs/llama-3.2-1b-prefill.json, each with the model-guided default
 * config.
 *
 *   bench-host [--quick] [-o FILE]
 *
 * The device is the emulator (`sim`): the NPU time is modeled; its arithmetic runs on
 * this CPU inside submit-and-wait, which is therefore not host work of a board's call
 * (the kernel's costs per submit are in the modeled time). Host: the phases the
 * executor reports (rb_matmul_stats: converting A from fp32 and C, packing A, unpacking
 * C), medians over the runs. Times are this machine's CPU (an x86 host, labelled so), not
 * the board's Cortex-A76. --quick: one decode and one prefill shape, one run each. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results/report.h"
#include "core/stats.h"
#include "rknn_bench/matmul.h"

struct bshape {
	int m, k, n;
	const char *what;
};

static const struct bshape shapes[] = {
    {1, 2048, 8192, "decode ffn_up"},          {1, 8192, 2048, "decode ffn_out"},
    {1, 2048, 128256, "decode output"},        {128, 2048, 512, "prefill 128 Kcur"},
    {128, 2048, 2048, "prefill 128 Qcur"},     {128, 2048, 8192, "prefill 128 ffn_up"},
    {128, 8192, 2048, "prefill 128 ffn_out"},  {128, 2048, 128256, "prefill 128 output"},
    {512, 2048, 512, "prefill 512 Kcur"},      {512, 2048, 2048, "prefill 512 Qcur"},
    {512, 2048, 8192, "prefill 512 ffn_up"},   {512, 8192, 2048, "prefill 512 ffn_out"},
    {512, 2048, 128256, "prefill 512 output"},
};

/* What one shape measured. */
struct host_row {
	const struct bshape *s;
	char config[192];
	double npu_us;                                    /* modeled */
	double convert_us, pack_us, unpack_us, submit_us; /* executor, medians */
};

static int runs_of(const struct bshape *s, bool quick)
{
	return quick ? 1 : s->m == 1 ? 10 : 2;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), by_value);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void fill_half(uint16_t *p, size_t count)
{
	for (size_t i = 0; i < count; i++)
		p[i] = (uint16_t)(0x3800 + (i * 7919 % 512)); /* 0.5 .. 1.0 */
}

static void fill_float(float *p, size_t count)
{
	for (size_t i = 0; i < count; i++)
		p[i] = (float)(i % 17) / 16.0f;
}

/* The executor: create, weights, then runs; medians of its host phases. */
static int run_executor(struct rb_matmul_device *dev, struct host_row *r, int runs)
{
	const struct bshape *s = r->s;
	struct rb_matmul_desc desc = {.shape = {s->m, s->k, s->n, RB_DTYPE_FP16}};
	size_t mk = (size_t)s->m * s->k, kn = (size_t)s->k * s->n, mn = (size_t)s->m * s->n;
	uint16_t *b = malloc(kn * 2);
	float *a = malloc(mk * 4), *c = malloc(mn * 4);
	double conv[32], pack[32], unpack[32], submit[32];
	struct rb_matmul *mm = NULL;
	struct rb_matmul_stats st;
	int ret = b && a && c ? 0 : -1;

	if (ret == 0)
		ret = rb_matmul_create(&mm, dev, &desc);
	if (ret == 0) {
		fill_half(b, kn);
		fill_float(a, mk);
		ret = rb_matmul_set_weights(mm, b, RB_MATMUL_FP16, RB_MATMUL_B_KN);
	}
	for (int i = -1; ret == 0 && i < runs; i++) { /* one warm-up */
		ret = rb_matmul_run(mm, a, RB_MATMUL_FP32, c, RB_MATMUL_FP32);
		rb_matmul_stats(mm, &st);
		if (i < 0)
			continue;

		conv[i] = st.convert_us;
		pack[i] = st.pack_us;
		unpack[i] = st.unpack_us;
		submit[i] = st.submit_us;
	}
	if (ret == 0) {
		snprintf(r->config, sizeof(r->config), "%s", rb_matmul_config(mm));
		r->npu_us = st.device_us;
		r->convert_us = median(conv, runs);
		r->pack_us = median(pack, runs);
		r->unpack_us = median(unpack, runs);
		r->submit_us = median(submit, runs);
	}
	rb_matmul_destroy(mm);
	free(a);
	free(b);
	free(c);
	return ret;
}

static double exec_host(const struct host_row *r)
{
	return r->convert_us + r->pack_us + r->unpack_us;
}

static const char header[] =
    "Host: %s (x86, not the board's Cortex-A76). NPU: the emulator, modeled. Host: the "
    "phases rb_matmul_run reports (medians), fp32 A and C, with the model-guided default "
    "config; the shim runs every call through it. Times in us.\n\n";

static const char footer[] =
    "\nshare = host / modeled NPU. submit-and-wait is not in host: on the emulator it is the "
    "emulator computing the matmul; the kernel's costs of a submit (ioctl, commit, "
    "interrupt, wake-up: configs/soc/rk3588.json) are in the modeled NPU time.\n";

static void print_table(FILE *f, const struct host_row *rows, size_t n)
{
	char host[256];

	rb_cpu_model_read(host, sizeof(host), "/proc/cpuinfo", "/proc/device-tree/compatible");
	fprintf(f, "# Host work per matmul call (bench-host)\n\n");
	fprintf(f, header, host);
	fprintf(f,
		"| shape | modeled NPU | convert | pack A | unpack C | host | share | config |\n");
	fprintf(f, "|---|---:|---:|---:|---:|---:|---:|---|\n");
	for (size_t i = 0; i < n; i++) {
		const struct host_row *r = &rows[i];

		fprintf(f, "| %dx%dx%d %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f %% | `%s` |\n",
			r->s->m, r->s->k, r->s->n, r->s->what, r->npu_us, r->convert_us, r->pack_us,
			r->unpack_us, exec_host(r), 100 * exec_host(r) / r->npu_us, r->config);
	}
	fputs(footer, f);
}

static int parse(int argc, char **argv, bool *quick, const char **out)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			*quick = true;
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			*out = argv[++i];
		else {
			fprintf(stderr, "usage: bench-host [--quick] [-o FILE]\n");
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	bool quick = false;
	const char *out = NULL;
	struct host_row rows[sizeof(shapes) / sizeof(shapes[0])];
	size_t n = 0;
	struct rb_matmul_device *dev = NULL;

	if (parse(argc, argv, &quick, &out) < 0)
		return 2;
	if (rb_matmul_device_open(&dev, "sim") < 0) {
		fprintf(stderr, "bench-host: cannot open the emulator\n");
		return 3;
	}
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
		struct host_row *r = &rows[n];

		if (quick && i != 0 && i != 4)
			continue;
		memset(r, 0, sizeof(*r));
		r->s = &shapes[i];
		if (run_executor(dev, r, runs_of(r->s, quick)) < 0) {
			fprintf(stderr, "bench-host: %dx%dx%d failed\n", r->s->m, r->s->k, r->s->n);
			rb_matmul_device_close(dev);
			return 1;
		}
		n++;
	}
	rb_matmul_device_close(dev);
	print_table(stdout, rows, n);
	if (out) {
		FILE *f = fopen(out, "w");

		if (!f)
			return 2;
		print_table(f, rows, n);
		fclose(f);
	}
	return 0;
}
