/* Runs matmuls through the ggml-rknn backend of a llama.cpp tree (built against
 * build/shim/librknnrt.so by scripts/test-llama-backend.sh): each pair named on the
 * command line as NAME:M:K:N becomes a ggml MUL_MAT node of that name and shape, the way
 * llama.cpp's graph names it, is computed by the rknn backend and compared with a plain
 * loop. Exact data (A small integers, weights multiples of 1/8), so fp32 sums are exact.
 * A name the shapes file does not list is not offloaded (the backend says it does not
 * support the node), as in llama.cpp. Prints one line per pair and "N verified,
 * N failed, N not offloaded"; exit 1 on any failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-rknn.h"

static int run_pair(ggml_backend_t rknn, const char *name, int m, int k, int n)
{
	size_t mem = (size_t)k * n * 2 + (size_t)k * m * 4 + (size_t)m * n * 4 + (16u << 20);
	struct ggml_init_params ip = {mem, NULL, false};
	struct ggml_context *ctx = ggml_init(ip);
	struct ggml_tensor *w = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, k, n); /* weights */
	struct ggml_tensor *x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, k, m); /* activations */
	struct ggml_tensor *y = ggml_mul_mat(ctx, w, x);
	struct ggml_cgraph *gf = ggml_new_graph(ctx);
	double max_err = 0;
	int bad = 0;

	ggml_set_name(y, name);
	for (int j = 0; j < n; j++)
		for (int i = 0; i < k; i++)
			((ggml_fp16_t *)w->data)[j * k + i] =
			    ggml_fp32_to_fp16((float)((i * 7 + j * 3) % 17 - 8) / 8);
	for (int r = 0; r < m; r++)
		for (int i = 0; i < k; i++)
			((float *)x->data)[r * k + i] = (float)((r * 5 + i * 3) % 9 - 4);
	ggml_build_forward_expand(gf, y);
	if (!ggml_backend_supports_op(rknn, y)) {
		printf("%-16s %dx%dx%d: not offloaded (no such pair in mat_kernel_size.json)\n", name,
		       m, k, n);
		ggml_free(ctx);
		return -1;
	}
	if (ggml_backend_graph_compute(rknn, gf) != GGML_STATUS_SUCCESS)
		bad = 1;
	for (int r = 0; !bad && r < m; r++)
		for (int j = 0; j < n; j++) {
			double want = 0, err;

			for (int i = 0; i < k; i++)
				want += ((float *)x->data)[r * k + i] *
					ggml_fp16_to_fp32(((ggml_fp16_t *)w->data)[j * k + i]);
			err = fabs(((float *)y->data)[r * n + j] - want);
			max_err = err > max_err ? err : max_err;
		}
	bad |= max_err != 0;
	printf("%-16s %dx%dx%d: %s (max error %g)\n", name, m, k, n, bad ? "FAILED" : "verified",
	       max_err);
	ggml_free(ctx);
	return bad;
}

int main(int argc, char **argv)
{
	ggml_backend_t rknn = ggml_backend_rknn_init();
	int failed = 0, verified = 0, skipped = 0;

	if (!rknn) {
		fprintf(stderr, "ggml_backend_rknn_init failed\n");
		return 2;
	}
	/* as llama.cpp does from -t: the backend leaves its thread count unset until then */
	ggml_backend_rknn_set_n_threads(rknn, 3);
	for (int i = 1; i < argc; i++) {
		char name[64];
		int m, k, n;

		if (sscanf(argv[i], "%63[^:]:%d:%d:%d", name, &m, &k, &n) != 4) {
			fprintf(stderr, "usage: rknn-backend-smoke NAME:M:K:N...\n");
			return 2;
		}
		switch (run_pair(rknn, name, m, k, n)) {
		case 0:
			verified++;
			break;
		case -1:
			skipped++;
			break;
		default:
			failed++;
		}
	}
	printf("%d verified, %d failed, %d not offloaded\n", verified, failed, skipped);
	ggml_backend_free(rknn);
	return failed ? 1 : 0;
}
