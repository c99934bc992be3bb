/* librknnrt.so's matmul API (rknn_matmul_api.h) on the matmul executor
 * (include/rknn_bench/matmul.h): a program written for Rockchip's library runs
 * rknn-bench's own programs, on the vendor driver, on mainline rocket, or on the
 * emulator. This file only translates: handles, memories, layouts and error codes.
 *
 *   RKNN_BENCH_DEVICE   the device (auto by default; sim works anywhere)
 *   RKNN_BENCH_TUNED    a tuned JSON: a matmul whose M, K, N and type are in it runs
 *                       that config (the cores of the config only while the program
 *                       leaves the core mask on auto); else the planner's default
 *   RKNN_BENCH_DEBUG    with "shim": each failed call and each run's time on stderr
 *
 * Layouts (RK3588, from the public header's comments): A normal (M, K), native
 * (K/8, M, 8) fp16 or (K/16, M, 16) int8; B normal (K, N), transposed normal (N, K),
 * native (N/16, K/32, 16, 32) fp16 or (N/32, K/32, 32, 32) int8, cut into segments of
 * 8192 rows of K when K is larger; C normal (M, N), native (N/4, M, 4).
 *
 * Memories are NPU buffers of the shim's device (rb_matmul_buffer), and virt_addr is
 * their mapping, as with librknnrt: the weights exist once. A native B set as a
 * context's B is read by the NPU from its memory at every run when the context's config
 * lays B out natively (no K-slices, or K-slices of 8192 when K is larger: the default
 * here); else, and for a normal or transposed B, B is packed once, when its memory is
 * set, into the matmul's own buffer. Either way the CPU's writes to B reach the device
 * when its memory is set (a cache sync on a board, never at each run): set it again
 * after rewriting B. */
#include "shim/rknn_matmul_api.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/debug.h"
#include "rknn_bench/matmul.h"
#include "rknn_bench/tuned.h"

/* The public header's layout (LP64: aarch64, x86-64), recorded from it. */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(rknn_matmul_info) == 64, "rknn_matmul_info");
_Static_assert(offsetof(rknn_matmul_info, type) == 12, "info.type");
_Static_assert(offsetof(rknn_matmul_info, B_layout) == 16, "info.B_layout");
_Static_assert(offsetof(rknn_matmul_info, B_quant_type) == 18, "info.B_quant_type");
_Static_assert(offsetof(rknn_matmul_info, AC_layout) == 20, "info.AC_layout");
_Static_assert(offsetof(rknn_matmul_info, AC_quant_type) == 22, "info.AC_quant_type");
_Static_assert(offsetof(rknn_matmul_info, iommu_domain_id) == 24, "info.iommu_domain_id");
_Static_assert(offsetof(rknn_matmul_info, group_size) == 28, "info.group_size");
_Static_assert(offsetof(rknn_matmul_info, reserved) == 30, "info.reserved");
_Static_assert(sizeof(rknn_matmul_tensor_attr) == 332, "rknn_matmul_tensor_attr");
_Static_assert(offsetof(rknn_matmul_tensor_attr, n_dims) == 256, "attr.n_dims");
_Static_assert(offsetof(rknn_matmul_tensor_attr, dims) == 260, "attr.dims");
_Static_assert(offsetof(rknn_matmul_tensor_attr, size) == 324, "attr.size");
_Static_assert(offsetof(rknn_matmul_tensor_attr, type) == 328, "attr.type");
_Static_assert(sizeof(rknn_matmul_io_attr) == 996, "rknn_matmul_io_attr");
_Static_assert(offsetof(rknn_matmul_io_attr, B) == 332, "io_attr.B");
_Static_assert(offsetof(rknn_matmul_io_attr, C) == 664, "io_attr.C");
_Static_assert(sizeof(rknn_tensor_mem) == 40, "rknn_tensor_mem");
_Static_assert(offsetof(rknn_tensor_mem, phys_addr) == 8, "mem.phys_addr");
_Static_assert(offsetof(rknn_tensor_mem, fd) == 16, "mem.fd");
_Static_assert(offsetof(rknn_tensor_mem, offset) == 20, "mem.offset");
_Static_assert(offsetof(rknn_tensor_mem, size) == 24, "mem.size");
_Static_assert(offsetof(rknn_tensor_mem, flags) == 28, "mem.flags");
_Static_assert(offsetof(rknn_tensor_mem, priv_data) == 32, "mem.priv_data");
_Static_assert(sizeof(rknn_quant_params) == 288, "rknn_quant_params");
_Static_assert(offsetof(rknn_quant_params, scale) == 256, "quant.scale");
_Static_assert(offsetof(rknn_quant_params, scale_len) == 264, "quant.scale_len");
_Static_assert(offsetof(rknn_quant_params, zp) == 272, "quant.zp");
_Static_assert(offsetof(rknn_quant_params, zp_len) == 280, "quant.zp_len");
_Static_assert(sizeof(rknn_context) == 8, "rknn_context");
_Static_assert(sizeof(rknn_matmul_type) == 4, "rknn_matmul_type");
#endif

#define B_SEGMENT_K 8192 /* RK3588: native B is cut into segments of this many K rows */
#define STR_(x)     #x
#define STR(x)      STR_(x)

/* Marks our memories (priv_data) and contexts, to refuse anything else. */
static const char mem_tag[] = "rknn-bench shim memory";

/* A memory: what the application sees first, so that the two pointers are one. It lives
 * while the application has it (until rknn_destroy_mem) or a context has it set, so a
 * context never reads a freed buffer; the device lives while any memory does. */
struct shim_mem {
	rknn_tensor_mem mem;
	struct rb_matmul_buffer *buf;
	uint64_t bytes; /* as created: mem.size is the application's to change */
	unsigned refs;  /* with registry_lock */
};

struct shim_ctx {
	struct shim_ctx *next; /* the registry of live contexts */
	atomic_flag busy;      /* a call on this context is running */
	rknn_matmul_info info;
	struct rb_matmul *mm;
	bool tuned;         /* mm runs a tuned config */
	unsigned core_mask; /* the application's, 0 = auto */
	struct shim_mem *a, *b, *c;
	void *a_row, *c_row; /* A and C row-major, for the native layouts */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shim_ctx *contexts;
static unsigned live_mems;
static struct rb_matmul_device *device;
static struct rb_tuned_db *tuned;

/* ---- messages (only with RKNN_BENCH_DEBUG=shim) ---- */

static int fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(int code, const char *fmt, ...)
{
	va_list ap;

	if (!rb_debug("shim"))
		return code;
	va_start(ap, fmt);
	fputs("rknn-bench shim: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return code;
}

static int code_of(int err)
{
	switch (err) {
	case -ENOMEM:
		return RKNN_ERR_MALLOC_FAIL;
	case -ETIMEDOUT:
		return RKNN_ERR_TIMEOUT;
	case -EINVAL:
	case -E2BIG:
		return RKNN_ERR_PARAM_INVALID;
	case -ENODEV:
	case -ENOENT:
	case -EACCES:
		return RKNN_ERR_DEVICE_UNAVAILABLE;
	default:
		return RKNN_ERR_FAIL;
	}
}

/* ---- the device and the tuned file, shared by every context ---- */

/* With registry_lock held: opens them with the first context. */
static int open_shared(void)
{
	const char *name = getenv("RKNN_BENCH_DEVICE"), *path = getenv("RKNN_BENCH_TUNED");
	int ret;

	if (device)
		return RKNN_SUCC;
	ret = rb_matmul_device_open(&device, name && *name ? name : "auto");
	if (ret < 0)
		return fail(code_of(ret) == RKNN_ERR_PARAM_INVALID ? RKNN_ERR_DEVICE_UNAVAILABLE
								   : code_of(ret),
			    "RKNN_BENCH_DEVICE: %s", rb_last_error());
	if (path && *path && rb_tuned_load_file(&tuned, path) < 0) {
		ret = fail(RKNN_ERR_PARAM_INVALID, "RKNN_BENCH_TUNED: %s", rb_last_error());
		rb_matmul_device_close(device);
		device = NULL;
	}
	return ret < 0 ? ret : RKNN_SUCC;
}

/* With registry_lock held: closes them with the last context or memory. */
static void close_shared(void)
{
	if (contexts || live_mems)
		return;
	rb_tuned_free(tuned);
	tuned = NULL;
	rb_matmul_device_close(device);
	device = NULL;
}

/* The context behind a handle, marked busy; NULL if there is none or it is busy. */
static struct shim_ctx *acquire(rknn_matmul_ctx handle, int *code)
{
	struct shim_ctx *c;

	pthread_mutex_lock(&registry_lock);
	for (c = contexts; c && (uintptr_t)c != (uintptr_t)handle; c = c->next)
		;
	if (c && atomic_flag_test_and_set(&c->busy)) {
		pthread_mutex_unlock(&registry_lock);
		/* a valid context, busy: not RKNN_ERR_CTX_INVALID, which says the handle is
		 * wrong; the API has no busy code, so the generic failure with why */
		*code =
		    fail(RKNN_ERR_FAIL, "context %#llx is busy: another thread is in a call on it",
			 (unsigned long long)handle);
		return NULL;
	}
	pthread_mutex_unlock(&registry_lock);
	if (!c)
		*code = fail(RKNN_ERR_CTX_INVALID, "%#llx is not a matmul context",
			     (unsigned long long)handle);
	return c;
}

static int release(struct shim_ctx *c, int code)
{
	atomic_flag_clear(&c->busy);
	return code;
}

/* ---- shapes and layouts ---- */

static bool is_fp16(const rknn_matmul_info *info)
{
	return info->type == RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32;
}

static size_t in_size(const rknn_matmul_info *info)
{
	return is_fp16(info) ? 2 : 1;
}

/* Elements per atom of native A (8 fp16, 16 int8) and kernels per native B block. */
static unsigned a_atom(const rknn_matmul_info *info)
{
	return is_fp16(info) ? 8 : 16;
}

static unsigned b_block(const rknn_matmul_info *info)
{
	return is_fp16(info) ? 16 : 32;
}

static void set_attr(rknn_matmul_tensor_attr *a, const char *name, rknn_tensor_type type,
		     size_t esize, unsigned n, const uint32_t *dims)
{
	size_t elems = 1;

	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", name);
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
	if (in->B_layout == RKNN_MM_LAYOUT_NATIVE) /* dims of one segment; size of all */
		set_attr(&io->B, "B", t, in_size(in), 4,
			 (uint32_t[]){n / b_block(in), seg_k / 32, b_block(in), 32});
	else if (in->B_layout == RKNN_MM_LAYOUT_TP_NORM)
		set_attr(&io->B, "B", t, in_size(in), 2, (uint32_t[]){n, k});
	else
		set_attr(&io->B, "B", t, in_size(in), 2, (uint32_t[]){k, n});
	io->B.size = (uint32_t)((size_t)k * n * in_size(in));
}

/* Offset (in elements) of B[k][n] in the native layout, segments included. */
static size_t native_b_index(const rknn_matmul_info *info, size_t k, size_t n)
{
	size_t K = (size_t)info->K, N = (size_t)info->N, blk = b_block(info);
	size_t seg = k / B_SEGMENT_K, ks = k % B_SEGMENT_K;
	size_t seg_k = K - seg * B_SEGMENT_K < B_SEGMENT_K ? K - seg * B_SEGMENT_K : B_SEGMENT_K;

	return seg * B_SEGMENT_K * N + ((n / blk) * (seg_k / 32) + ks / 32) * blk * 32 +
	       (n % blk) * 32 + ks % 32;
}

static void native_a_to_rows(const rknn_matmul_info *info, const void *src, void *dst)
{
	size_t M = (size_t)info->M, K = (size_t)info->K, es = in_size(info), at = a_atom(info);

	for (size_t m = 0; m < M; m++)
		for (size_t k = 0; k < K; k++)
			memcpy((char *)dst + (m * K + k) * es,
			       (const char *)src + (((k / at) * M + m) * at + k % at) * es, es);
}

static void rows_to_native_c(const rknn_matmul_info *info, const void *src, void *dst)
{
	size_t M = (size_t)info->M, N = (size_t)info->N;
	const uint32_t *s = src;
	uint32_t *d = dst;

	for (size_t m = 0; m < M; m++)
		for (size_t n = 0; n < N; n++)
			d[((n / 4) * M + m) * 4 + n % 4] = s[m * N + n];
}

/* ---- create and destroy ---- */

static int check_info(const rknn_matmul_info *info)
{
	if (info->type != RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 &&
	    info->type != RKNN_INT8_MM_INT8_TO_INT32)
		return fail(RKNN_ERR_PARAM_INVALID,
			    "matmul type %d: only RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 and "
			    "RKNN_INT8_MM_INT8_TO_INT32 are implemented",
			    (int)info->type);
	if (info->M < 1 || info->K < 1 || info->N < 1)
		return fail(RKNN_ERR_PARAM_INVALID, "M, K, N = %d, %d, %d: each must be >= 1",
			    info->M, info->K, info->N);
	if (info->K % 32 || info->N % (int)b_block(info))
		return fail(RKNN_ERR_PARAM_INVALID,
			    "K = %d, N = %d: on RK3588 K must be a multiple of 32 and N of %u",
			    info->K, info->N, b_block(info));
	if ((size_t)info->M * (size_t)info->N * 4 > UINT32_MAX ||
	    (size_t)info->K * (size_t)info->N * in_size(info) > UINT32_MAX)
		return fail(RKNN_ERR_PARAM_INVALID, "a tensor of more than 4 GiB");
	if (info->B_layout < RKNN_MM_LAYOUT_NORM || info->B_layout > RKNN_MM_LAYOUT_TP_NORM ||
	    info->AC_layout < RKNN_MM_LAYOUT_NORM || info->AC_layout > RKNN_MM_LAYOUT_NATIVE)
		return fail(RKNN_ERR_PARAM_INVALID, "B_layout %d or AC_layout %d is not a layout",
			    info->B_layout, info->AC_layout);
	if (info->B_quant_type != RKNN_QUANT_TYPE_PER_LAYER_SYM ||
	    info->AC_quant_type != RKNN_QUANT_TYPE_PER_LAYER_SYM)
		return fail(RKNN_ERR_PARAM_INVALID, "only per-layer symmetric quantization");
	return RKNN_SUCC;
}

static enum rb_matmul_b_layout b_layout(const rknn_matmul_info *info)
{
	return info->B_layout == RKNN_MM_LAYOUT_NATIVE    ? RB_MATMUL_B_NATIVE
	       : info->B_layout == RKNN_MM_LAYOUT_TP_NORM ? RB_MATMUL_B_NK
							  : RB_MATMUL_B_KN;
}

static const void *mem_data(const rknn_tensor_mem *mem)
{
	return (const char *)mem->virt_addr + mem->offset;
}

/* B from its memory: read there by every run when it is native and the config lays B
 * out natively (one copy), else packed now into the matmul's own buffer. */
static int set_weights(struct shim_ctx *c)
{
	const rknn_matmul_info *in = &c->info;
	const rknn_tensor_mem *b = &c->b->mem;
	int ret;

	if (in->B_layout == RKNN_MM_LAYOUT_NATIVE && b->offset % 16 == 0 &&
	    rb_matmul_native_weights(c->mm))
		ret = rb_matmul_set_weights_buffer(c->mm, c->b->buf, (uint64_t)b->offset);
	else
		ret = rb_matmul_set_weights(c->mm, mem_data(b),
					    is_fp16(in) ? RB_MATMUL_FP16 : RB_MATMUL_INT8,
					    b_layout(in));
	return ret < 0 ? fail(code_of(ret), "B: %s", rb_last_error()) : RKNN_SUCC;
}

/* (Re)creates the executor's matmul: the tuned config of the shape if there is one (its
 * cores only while the mask is auto), else the planner's default with K-slices of the
 * native segments when K is larger than one (so that a native B is read from its
 * memory), and the application's core mask; then B again if it was set. */
static int make_matmul(struct shim_ctx *c)
{
	const rknn_matmul_info *in = &c->info;
	struct rb_matmul_desc d = {
	    .shape = {in->M, in->K, in->N, is_fp16(in) ? RB_DTYPE_FP16 : RB_DTYPE_INT8},
	    .core_mask = c->core_mask};
	enum rb_tuned_match how = RB_TUNED_NONE;
	const struct rb_tuned_config *t =
	    rb_tuned_lookup(tuned, d.shape.m, d.shape.k, d.shape.n, d.shape.dtype, NULL, &how);
	struct rb_matmul *mm = NULL;
	int ret;

	if (t && how == RB_TUNED_SHAPE)
		rb_matmul_desc_tuned(&d, t);
	else if (in->K > B_SEGMENT_K)
		d.config = "kslice=" STR(B_SEGMENT_K);
	ret = rb_matmul_create(&mm, device, &d);
	if (ret < 0)
		return fail(code_of(ret), "%dx%dx%d: %s", in->M, in->K, in->N, rb_last_error());
	rb_matmul_destroy(c->mm);
	c->mm = mm;
	c->tuned = t && how == RB_TUNED_SHAPE;
	return c->b ? set_weights(c) : RKNN_SUCC;
}

static void mem_unref(struct shim_mem *m);

/* With registry_lock held when a memory is set. */
static void free_ctx(struct shim_ctx *c)
{
	rb_matmul_destroy(c->mm);
	mem_unref(c->a);
	mem_unref(c->b);
	mem_unref(c->c);
	free(c->a_row);
	free(c->c_row);
	free(c);
}

static int new_ctx(const rknn_matmul_info *info, struct shim_ctx **out)
{
	struct shim_ctx *c = calloc(1, sizeof(*c));
	size_t mk = (size_t)info->M * (size_t)info->K, mn = (size_t)info->M * (size_t)info->N;

	if (!c)
		return fail(RKNN_ERR_MALLOC_FAIL, "out of memory");
	atomic_flag_clear(&c->busy);
	c->info = *info;
	c->a_row = malloc(mk * in_size(info));
	c->c_row = malloc(mn * 4);
	if (!c->a_row || !c->c_row) {
		free_ctx(c);
		return fail(RKNN_ERR_MALLOC_FAIL, "out of memory");
	}
	*out = c;
	return RKNN_SUCC;
}

int rknn_matmul_create(rknn_matmul_ctx *ctx, rknn_matmul_info *info, rknn_matmul_io_attr *io_attr)
{
	struct shim_ctx *c = NULL;
	int ret;

	if (!ctx || !info || !io_attr)
		return fail(RKNN_ERR_PARAM_INVALID, "rknn_matmul_create: NULL argument");
	ret = check_info(info);
	if (ret == RKNN_SUCC)
		ret = new_ctx(info, &c);
	if (ret != RKNN_SUCC)
		return ret;
	pthread_mutex_lock(&registry_lock);
	ret = open_shared();
	if (ret == RKNN_SUCC)
		ret = make_matmul(c);
	if (ret == RKNN_SUCC) {
		c->next = contexts;
		contexts = c;
	} else {
		close_shared();
	}
	pthread_mutex_unlock(&registry_lock);
	if (ret != RKNN_SUCC) {
		free_ctx(c);
		return ret;
	}
	fill_io_attr(info, io_attr);
	*ctx = (rknn_matmul_ctx)(uintptr_t)c;
	return RKNN_SUCC;
}

int rknn_matmul_destroy(rknn_matmul_ctx ctx)
{
	int code = RKNN_SUCC;
	struct shim_ctx *c = acquire(ctx, &code), **pp;

	if (!c)
		return code;
	pthread_mutex_lock(&registry_lock);
	for (pp = &contexts; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	free_ctx(c);
	close_shared();
	pthread_mutex_unlock(&registry_lock);
	return RKNN_SUCC;
}

int rknn_matmul_set_core_mask(rknn_matmul_ctx ctx, rknn_core_mask core_mask)
{
	int code = RKNN_SUCC;
	struct shim_ctx *c;
	unsigned mask = (unsigned)core_mask;

	if (mask == RKNN_NPU_CORE_ALL)
		mask = 0; /* "auto choice" */
	if (mask > RKNN_NPU_CORE_0_1_2)
		return fail(RKNN_ERR_PARAM_INVALID, "core mask %#x is not a set of cores 0-2",
			    (unsigned)core_mask);
	c = acquire(ctx, &code);
	if (!c)
		return code;
	if (mask != c->core_mask) {
		unsigned was = c->core_mask;

		c->core_mask = mask;
		code = make_matmul(c);
		if (code != RKNN_SUCC)
			c->core_mask = was;
	}
	return release(c, code);
}

int rknn_matmul_set_quant_params(rknn_matmul_ctx ctx, rknn_quant_params *params)
{
	int code = RKNN_SUCC;
	struct shim_ctx *c;

	if (!params || params->scale_len < 0 || params->zp_len < 0 ||
	    (params->scale_len && !params->scale) || (params->zp_len && !params->zp))
		return fail(RKNN_ERR_PARAM_INVALID, "rknn_matmul_set_quant_params: bad params");
	c = acquire(ctx, &code);
	if (!c)
		return code;
	if (c->info.type != RKNN_INT8_MM_INT8_TO_INT32)
		return release(c, fail(RKNN_ERR_PARAM_INVALID, "quant params are for int8 types"));
	/* The int32 result is the exact sum of the products: a scale changes nothing in it,
	 * a zero point would. */
	for (int32_t i = 0; i < params->zp_len; i++)
		if (params->zp[i])
			return release(c, fail(RKNN_ERR_PARAM_INVALID,
					       "zero points other than 0 are not implemented"));
	return release(c, RKNN_SUCC);
}

/* ---- memories ---- */

/* With registry_lock held: drops one holder; the last one frees the memory, and the
 * device with it when nothing else uses it. */
static void mem_unref(struct shim_mem *m)
{
	if (!m || --m->refs)
		return;
	rb_matmul_buffer_free(m->buf);
	free(m);
	live_mems--;
	close_shared();
}

static struct shim_mem *mem_of(rknn_tensor_mem *mem)
{
	return mem && mem->priv_data == mem_tag ? (struct shim_mem *)mem : NULL;
}

/* A buffer of the shim's device: any context, or none (0), may ask for it, and it
 * outlives them all until rknn_destroy_mem. */
static int new_mem(uint64_t size, struct shim_mem *m)
{
	int ret;

	pthread_mutex_lock(&registry_lock);
	ret = open_shared();
	if (ret == RKNN_SUCC && rb_matmul_buffer_new(&m->buf, device, size) < 0)
		ret = fail(RKNN_ERR_MALLOC_FAIL, "rknn_create_mem of %llu bytes: %s",
			   (unsigned long long)size, rb_last_error());
	if (ret == RKNN_SUCC) {
		m->refs = 1;
		m->bytes = size;
		live_mems++;
	} else {
		close_shared();
	}
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

rknn_tensor_mem *rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags)
{
	struct shim_mem *m;

	(void)ctx; /* one device per process: the context adds nothing */
	(void)alloc_flags;
	if (!size || size > UINT32_MAX) {
		fail(RKNN_ERR_PARAM_INVALID, "rknn_create_mem: size %llu",
		     (unsigned long long)size);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m) {
		fail(RKNN_ERR_MALLOC_FAIL, "rknn_create_mem: out of memory");
		return NULL;
	}
	if (new_mem(size, m) != RKNN_SUCC) {
		free(m);
		return NULL;
	}
	m->mem.virt_addr = rb_matmul_buffer_map(m->buf);
	m->mem.fd = -1;
	m->mem.size = (uint32_t)size;
	m->mem.flags = RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE;
	m->mem.priv_data = (void *)mem_tag;
	return &m->mem;
}

rknn_tensor_mem *rknn_create_mem(rknn_context ctx, uint32_t size)
{
	return rknn_create_mem2(ctx, size, 0);
}

int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem *mem)
{
	struct shim_mem *m = mem_of(mem);

	(void)ctx;
	if (!m)
		return fail(RKNN_ERR_PARAM_INVALID, "rknn_destroy_mem: not a memory of ours");
	pthread_mutex_lock(&registry_lock);
	m->mem.priv_data = NULL; /* the application's hold ends here */
	mem_unref(m);
	pthread_mutex_unlock(&registry_lock);
	return RKNN_SUCC;
}

/* Sets one of the context's memories; B is bound or packed now (set_weights). */
static int set_slot(struct shim_ctx *c, struct shim_mem **slot, struct shim_mem *m)
{
	struct shim_mem *old = *slot;
	int code = RKNN_SUCC;

	*slot = m;
	if (slot == &c->b)
		code = set_weights(c);
	if (code != RKNN_SUCC) {
		*slot = old;
		return code;
	}
	pthread_mutex_lock(&registry_lock);
	m->refs++;
	mem_unref(old);
	pthread_mutex_unlock(&registry_lock);
	return RKNN_SUCC;
}

/* The bytes a memory must hold for one of the context's tensors: the context's own
 * sizes (fill_io_attr), never the caller's attr->size, which may be anything. */
static uint64_t tensor_bytes(const struct shim_ctx *c, char name)
{
	rknn_matmul_io_attr io;

	fill_io_attr(&c->info, &io);
	return name == 'A' ? io.A.size : name == 'B' ? io.B.size : io.C.size;
}

/* The memory holds the tensor at its offset, by the size it was created with. */
static int check_fits(const char *name, const struct shim_mem *m, uint64_t need)
{
	if (m->mem.offset < 0 || m->bytes < (uint64_t)m->mem.offset + need)
		return fail(RKNN_ERR_PARAM_INVALID,
			    "%s: memory of %llu bytes at offset %d; the context's %s needs %llu",
			    name, (unsigned long long)m->bytes, m->mem.offset, name,
			    (unsigned long long)need);
	return RKNN_SUCC;
}

int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem *mem, rknn_matmul_tensor_attr *attr)
{
	int code = RKNN_SUCC;
	struct shim_mem *m = mem_of(mem), **slot;
	struct shim_ctx *c;

	if (!mem || !attr)
		return fail(RKNN_ERR_PARAM_INVALID, "rknn_matmul_set_io_mem: NULL argument");
	if (!m)
		return fail(RKNN_ERR_PARAM_INVALID,
			    "rknn_matmul_set_io_mem: not a memory of rknn_create_mem");
	c = acquire(ctx, &code);
	if (!c)
		return code;
	if (strcmp(attr->name, "A") == 0)
		slot = &c->a;
	else if (strcmp(attr->name, "B") == 0)
		slot = &c->b;
	else if (strcmp(attr->name, "C") == 0)
		slot = &c->c;
	else
		return release(
		    c, fail(RKNN_ERR_PARAM_INVALID, "attr '%.16s' is not A, B or C", attr->name));
	code = check_fits(attr->name, m, tensor_bytes(c, attr->name[0]));
	return release(c, code == RKNN_SUCC ? set_slot(c, slot, m) : code);
}

/* ---- run ---- */

static void say_run(const struct shim_ctx *c)
{
	const rknn_matmul_info *in = &c->info;
	struct rb_matmul_stats st;

	rb_matmul_stats(c->mm, &st);
	fprintf(stderr, "rknn-bench shim: %dx%dx%d %s config '%s' on %s, B %s: %.3f us (%s)\n",
		in->M, in->K, in->N, c->tuned ? "tuned" : "default", rb_matmul_config(c->mm),
		rb_matmul_device_name(device),
		in->B_layout == RKNN_MM_LAYOUT_NATIVE && rb_matmul_native_weights(c->mm)
		    ? "read from its memory"
		    : "packed when set",
		st.device_us, st.modeled ? "modeled" : "measured");
}

static int run_ctx(struct shim_ctx *c)
{
	const rknn_matmul_info *in = &c->info;
	bool native = in->AC_layout == RKNN_MM_LAYOUT_NATIVE;
	const void *a = mem_data(&c->a->mem);
	void *c_mem = (char *)c->c->mem.virt_addr + c->c->mem.offset;
	int ret;

	if (native) {
		native_a_to_rows(in, a, c->a_row);
		a = c->a_row;
	}
	ret = rb_matmul_run(c->mm, a, is_fp16(in) ? RB_MATMUL_FP16 : RB_MATMUL_INT8,
			    native ? c->c_row : c_mem,
			    is_fp16(in) ? RB_MATMUL_FP32 : RB_MATMUL_INT32);
	if (ret < 0)
		return fail(code_of(ret), "%dx%dx%d: %s", in->M, in->K, in->N, rb_last_error());
	if (native)
		rows_to_native_c(in, c->c_row, c_mem);
	if (rb_debug("shim"))
		say_run(c);
	return RKNN_SUCC;
}

/* Before a run, every memory set is still the application's (not destroyed: with the
 * vendor runtime its buffer would be gone) and still holds its tensor at the offset the
 * application may have moved since it was set. */
static int check_bound(struct shim_ctx *c)
{
	struct shim_mem **slots[] = {&c->a, &c->b, &c->c};
	static const char *const names[] = {"A", "B", "C"};
	int code = RKNN_SUCC;

	for (size_t i = 0; i < 3 && code == RKNN_SUCC; i++) {
		const struct shim_mem *m = *slots[i];

		pthread_mutex_lock(&registry_lock);
		if (m->mem.priv_data != mem_tag)
			code = fail(RKNN_ERR_INPUT_INVALID,
				    "rknn_matmul_run: the memory set as %s was destroyed "
				    "(rknn_destroy_mem); set a live one",
				    names[i]);
		pthread_mutex_unlock(&registry_lock);
		if (code == RKNN_SUCC)
			code = check_fits(names[i], m, tensor_bytes(c, names[i][0]));
	}
	return code;
}

int rknn_matmul_run(rknn_matmul_ctx ctx)
{
	int code = RKNN_SUCC;
	struct shim_ctx *c = acquire(ctx, &code);

	if (!c)
		return code;
	if (!c->a || !c->b || !c->c)
		return release(c, fail(RKNN_ERR_INPUT_INVALID,
				       "rknn_matmul_run: set the A, B and C memories first"));
	code = check_bound(c);
	return release(c, code == RKNN_SUCC ? run_ctx(c) : code);
}

/* ---- layouts for the application ---- */

int rknn_B_normal_layout_to_native_layout(void *B_input, void *B_output, int K, int N,
					  rknn_matmul_info *info)
{
	rknn_matmul_info shape;
	size_t es;

	if (!B_input || !B_output || !info)
		return fail(RKNN_ERR_PARAM_INVALID, "rknn_B_normal_layout_to_native_layout: NULL");
	shape = *info;
	shape.K = K;
	shape.N = N;
	shape.M = 1;
	if (check_info(&shape) != RKNN_SUCC)
		return RKNN_ERR_PARAM_INVALID;
	es = in_size(&shape);
	for (size_t k = 0; k < (size_t)K; k++)
		for (size_t n = 0; n < (size_t)N; n++)
			memcpy((char *)B_output + native_b_index(&shape, k, n) * es,
			       (const char *)B_input + (k * (size_t)N + n) * es, es);
	return RKNN_SUCC;
}
