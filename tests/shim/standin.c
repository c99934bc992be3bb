/* A stand-in librknnrt.so (build/tests/standin/librknnrt.so) that computes on the CPU:
 * the yardstick of the shim's memory (tests/e2e/shim.sh, scripts/test-llama.sh). It is
 * written only against the rknn_matmul_api declarations (src/shim/rknn_matmul_api.h)
 * and keeps nothing but what the program hands it: each memory is one malloc, and a run
 * computes C straight from the A, B and C memories in their layouts (native, normal or
 * transposed), so a program's peak RSS on it is that of the memories it creates.
 *
 * Layouts (RK3588, from the public header's comments, as the shim reads them): A normal
 * (M, K), native (K/8, M, 8) fp16 or (K/16, M, 16) int8; B normal (K, N), transposed
 * (N, K), native (N/16, K/32, 16, 32) fp16 or (N/32, K/32, 32, 32) int8 in segments of
 * 8192 rows of K; C normal (M, N), native (N/4, M, 4). fp16 products are summed in
 * float in K order, int8 ones in int32. No threads of its own: contexts may run from
 * different threads at once (the seed backend's way), each context from one. */
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "shim/rknn_matmul_api.h"

#define B_SEGMENT_K 8192

struct standin_ctx {
	rknn_matmul_info info;
	rknn_tensor_mem *a, *b, *c;
	float *a_row; /* one row of A, as floats */
};

static float half_table[65536];
static pthread_once_t half_once = PTHREAD_ONCE_INIT;

static float half_to_float(uint16_t h)
{
	int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
	float v;

	if (exp == 0)
		v = (float)mant / 16777216.0f; /* subnormal: mant · 2^-24 */
	else if (exp == 31)
		v = mant ? __builtin_nanf("") : __builtin_inff();
	else
		v = (float)(mant | 0x400) * ((float)(1u << exp) / 33554432.0f); /* · 2^(exp-25) */
	return h & 0x8000 ? -v : v;
}

static void fill_half_table(void)
{
	for (uint32_t h = 0; h < 65536; h++)
		half_table[h] = half_to_float((uint16_t)h);
}

static bool is_fp16(const rknn_matmul_info *info)
{
	return info->type == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
}

static size_t in_size(const rknn_matmul_info *info)
{
	return is_fp16(info) ? 2 : 1;
}

static unsigned a_atom(const rknn_matmul_info *info)
{
	return is_fp16(info) ? 8 : 16;
}

static unsigned b_block(const rknn_matmul_info *info)
{
	return is_fp16(info) ? 16 : 32;
}

static int check_info(const rknn_matmul_info *info)
{
	if (!is_fp16(info) && info->type != RKNN_INT8_MM_INT8_TO_INT32)
		return RKNN_ERR_PARAM_INVALID;
	if (info->M < 1 || info->K < 1 || info->N < 1 || info->K % 32 ||
	    info->N % (int)b_block(info))
		return RKNN_ERR_PARAM_INVALID;
	if (info->B_layout < RKNN_MM_LAYOUT_NORM || info->B_layout > RKNN_MM_LAYOUT_TP_NORM ||
	    info->AC_layout < RKNN_MM_LAYOUT_NORM || info->AC_layout > RKNN_MM_LAYOUT_NATIVE)
		return RKNN_ERR_PARAM_INVALID;
	return RKNN_SUCC;
}

static void set_attr(rknn_matmul_tensor_attr *a, const char *name, rknn_tensor_type type,
		     size_t esize, unsigned n, const uint32_t *dims)
{
	size_t elems = 1;

	memset(a, 0, sizeof(*a));
	strncpy(a->name, name, sizeof(a->name) - 1);
	a->n_dims = n;
	for (unsigned i = 0; i < n; i++) {
		a->dims[i] = dims[i];
		elems *= dims[i];
	}
	a->size = (uint32_t)(elems * esize);
	a->type = type;
}

static void fill_io_attr(const rknn_matmul_info *in, rknn_matmul_io_attr *io)
{
	uint32_t m = (uint32_t)in->M, k = (uint32_t)in->K, n = (uint32_t)in->N;
	rknn_tensor_type t = is_fp16(in) ? RKNN_TENSOR_FLOAT16 : RKNN_TENSOR_INT8;
	rknn_tensor_type ct = is_fp16(in) ? RKNN_TENSOR_FLOAT32 : RKNN_TENSOR_INT32;
	uint32_t seg_k = k < B_SEGMENT_K ? k : B_SEGMENT_K;

	if (in->AC_layout == RKNN_MM_LAYOUT_NATIVE) {
		set_attr(&io->A, "A", t, in_size(in), 3,
			 (uint32_t[]){k / a_atom(in), m, a_atom(in)});
		set_attr(&io->C, "C", ct, 4, 3, (uint32_t[]){n / 4, m, 4});
	} else {
		set_attr(&io->A, "A", t, in_size(in), 2, (uint32_t[]){m, k});
		set_attr(&io->C, "C", ct, 4, 2, (uint32_t[]){m, n});
	}
	if (in->B_layout == RKNN_MM_LAYOUT_NATIVE)
		set_attr(&io->B, "B", t, in_size(in), 4,
			 (uint32_t[]){n / b_block(in), seg_k / 32, b_block(in), 32});
	else if (in->B_layout == RKNN_MM_LAYOUT_TP_NORM)
		set_attr(&io->B, "B", t, in_size(in), 2, (uint32_t[]){n, k});
	else
		set_attr(&io->B, "B", t, in_size(in), 2, (uint32_t[]){k, n});
	io->B.size = (uint32_t)((size_t)k * n * in_size(in));
}

int rknn_matmul_create(rknn_matmul_ctx *ctx, rknn_matmul_info *info, rknn_matmul_io_attr *io_attr)
{
	struct standin_ctx *c;

	if (!ctx || !info || !io_attr || check_info(info) != RKNN_SUCC)
		return RKNN_ERR_PARAM_INVALID;
	pthread_once(&half_once, fill_half_table);
	c = calloc(1, sizeof(*c));
	if (!c || !(c->a_row = malloc((size_t)info->K * sizeof(float)))) {
		free(c);
		return RKNN_ERR_MALLOC_FAIL;
	}
	c->info = *info;
	fill_io_attr(info, io_attr);
	*ctx = (rknn_matmul_ctx)(uintptr_t)c;
	return RKNN_SUCC;
}

int rknn_matmul_destroy(rknn_matmul_ctx ctx)
{
	struct standin_ctx *c = (struct standin_ctx *)(uintptr_t)ctx;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	free(c->a_row);
	free(c);
	return RKNN_SUCC;
}

int rknn_matmul_set_core_mask(rknn_matmul_ctx ctx, rknn_core_mask core_mask)
{
	unsigned mask = (unsigned)core_mask;

	if (!ctx)
		return RKNN_ERR_CTX_INVALID;
	return mask == RKNN_NPU_CORE_ALL || mask <= RKNN_NPU_CORE_0_1_2 ? RKNN_SUCC
									: RKNN_ERR_PARAM_INVALID;
}

int rknn_matmul_set_quant_params(rknn_matmul_ctx ctx, rknn_quant_params *params)
{
	return ctx && params ? RKNN_SUCC : RKNN_ERR_PARAM_INVALID;
}

rknn_tensor_mem *rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags)
{
	rknn_tensor_mem *mem;

	(void)ctx;
	(void)alloc_flags;
	if (!size || size > UINT32_MAX)
		return NULL;
	mem = calloc(1, sizeof(*mem));
	if (mem && !(mem->virt_addr = malloc((size_t)size))) {
		free(mem);
		return NULL;
	}
	if (mem) {
		mem->fd = -1;
		mem->size = (uint32_t)size;
		mem->flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
	}
	return mem;
}

rknn_tensor_mem *rknn_create_mem(rknn_context ctx, uint32_t size)
{
	return rknn_create_mem2(ctx, size, 0);
}

int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem *mem)
{
	(void)ctx;
	if (!mem)
		return RKNN_ERR_PARAM_INVALID;
	free(mem->virt_addr);
	free(mem);
	return RKNN_SUCC;
}

int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem *mem, rknn_matmul_tensor_attr *attr)
{
	struct standin_ctx *c = (struct standin_ctx *)(uintptr_t)ctx;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (!mem || !attr || !mem->virt_addr || mem->offset < 0 ||
	    (uint64_t)mem->size < (uint64_t)mem->offset + attr->size)
		return RKNN_ERR_PARAM_INVALID;
	if (strcmp(attr->name, "A") == 0)
		c->a = mem;
	else if (strcmp(attr->name, "B") == 0)
		c->b = mem;
	else if (strcmp(attr->name, "C") == 0)
		c->c = mem;
	else
		return RKNN_ERR_PARAM_INVALID;
	return RKNN_SUCC;
}

/* ---- the computation ---- */

static const void *data_of(const rknn_tensor_mem *mem)
{
	return (const char *)mem->virt_addr + mem->offset;
}

static float element(const rknn_matmul_info *in, const void *p, size_t i)
{
	return is_fp16(in) ? half_table[((const uint16_t *)p)[i]] : (float)((const int8_t *)p)[i];
}

/* Row m of A as floats. */
static void load_a_row(const struct standin_ctx *c, size_t m)
{
	const rknn_matmul_info *in = &c->info;
	size_t M = (size_t)in->M, K = (size_t)in->K, at = a_atom(in);
	const void *a = data_of(c->a);

	for (size_t k = 0; k < K; k++)
		c->a_row[k] = element(in, a,
				      in->AC_layout == RKNN_MM_LAYOUT_NATIVE
					  ? ((k / at) * M + m) * at + k % at
					  : m * K + k);
}

/* Where column n's 32 values of K starting at k (a multiple of 32) lie in native B. */
static size_t native_b_at(const rknn_matmul_info *in, size_t k, size_t n)
{
	size_t K = (size_t)in->K, N = (size_t)in->N, blk = b_block(in);
	size_t seg = k / B_SEGMENT_K, ks = k % B_SEGMENT_K;
	size_t seg_k = K - seg * B_SEGMENT_K < B_SEGMENT_K ? K - seg * B_SEGMENT_K : B_SEGMENT_K;

	return seg * B_SEGMENT_K * N + ((n / blk) * (seg_k / 32) + ks / 32) * blk * 32 +
	       (n % blk) * 32;
}

/* Where B[k][n] lies in its layout; k0 = k rounded down to 32, whose native place is
 * computed once per 32 values. */
static size_t b_index(const rknn_matmul_info *in, size_t native_k0, size_t k, size_t n)
{
	if (in->B_layout == RKNN_MM_LAYOUT_NATIVE)
		return native_k0 + k % 32;
	return in->B_layout == RKNN_MM_LAYOUT_TP_NORM ? n * (size_t)in->K + k
						      : k * (size_t)in->N + n;
}

/* Row m of A times column n of B, summed in K order (float for fp16, int32 for int8). */
static double dot(const struct standin_ctx *c, size_t n)
{
	const rknn_matmul_info *in = &c->info;
	const void *b = data_of(c->b);
	float f = 0;
	int32_t i = 0;

	for (size_t k0 = 0; k0 < (size_t)in->K; k0 += 32) {
		size_t native = native_b_at(in, k0, n);

		for (size_t k = k0; k < k0 + 32; k++) {
			size_t at = b_index(in, native, k, n);

			if (is_fp16(in))
				f += c->a_row[k] * half_table[((const uint16_t *)b)[at]];
			else
				i += (int32_t)c->a_row[k] * ((const int8_t *)b)[at];
		}
	}
	return is_fp16(in) ? (double)f : (double)i;
}

int rknn_matmul_run(rknn_matmul_ctx ctx)
{
	struct standin_ctx *c = (struct standin_ctx *)(uintptr_t)ctx;
	const rknn_matmul_info *in;
	size_t M, N;

	if (!c)
		return RKNN_ERR_CTX_INVALID;
	if (!c->a || !c->b || !c->c)
		return RKNN_ERR_INPUT_INVALID;
	in = &c->info;
	M = (size_t)in->M;
	N = (size_t)in->N;
	for (size_t m = 0; m < M; m++) {
		load_a_row(c, m);
		for (size_t n = 0; n < N; n++) {
			size_t at = in->AC_layout == RKNN_MM_LAYOUT_NATIVE
					? ((n / 4) * M + m) * 4 + n % 4
					: m * N + n;
			double v = dot(c, n);

			if (is_fp16(in))
				((float *)((char *)c->c->virt_addr + c->c->offset))[at] = (float)v;
			else
				((int32_t *)((char *)c->c->virt_addr + c->c->offset))[at] =
				    (int32_t)v;
		}
	}
	return RKNN_SUCC;
}

int rknn_B_normal_layout_to_native_layout(void *B_input, void *B_output, int K, int N,
					  rknn_matmul_info *info)
{
	rknn_matmul_info shape;
	size_t es;

	if (!B_input || !B_output || !info)
		return RKNN_ERR_PARAM_INVALID;
	shape = *info;
	shape.M = 1;
	shape.K = K;
	shape.N = N;
	if (check_info(&shape) != RKNN_SUCC)
		return RKNN_ERR_PARAM_INVALID;
	es = in_size(&shape);
	for (size_t k = 0; k < (size_t)K; k++)
		for (size_t n = 0; n < (size_t)N; n++)
			memcpy((char *)B_output +
				   (native_b_at(&shape, k - k % 32, n) + k % 32) * es,
			       (const char *)B_input + (k * (size_t)N + n) * es, es);
	return RKNN_SUCC;
}
