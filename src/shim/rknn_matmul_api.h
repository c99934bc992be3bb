/* The matmul subset of Rockchip's rknn_matmul_api (librknnrt), declared here from the
 * documented public headers (rknn_api.h and rknn_matmul_api.h as the seed repository
 * Mhrooz/llama.cpp ships them in ggml/include, RKNN SDK 2.x): the same names, types,
 * enum values and struct layouts, so that a program compiled against those headers
 * runs unchanged on build/shim/librknnrt.so. Facts only; these are our declarations.
 * Sizes and offsets are checked against the public header's in shim.c. */
#ifndef RB_SHIM_RKNN_MATMUL_API_H
#define RB_SHIM_RKNN_MATMUL_API_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- from rknn_api.h ---- */

#define RKNN_SUCC                   0
#define RKNN_ERR_FAIL               -1
#define RKNN_ERR_TIMEOUT            -2
#define RKNN_ERR_DEVICE_UNAVAILABLE -3
#define RKNN_ERR_MALLOC_FAIL        -4
#define RKNN_ERR_PARAM_INVALID      -5
#define RKNN_ERR_MODEL_INVALID      -6
#define RKNN_ERR_CTX_INVALID        -7
#define RKNN_ERR_INPUT_INVALID      -8
#define RKNN_ERR_OUTPUT_INVALID     -9

#define RKNN_MAX_DIMS     16
#define RKNN_MAX_NAME_LEN 256

#ifdef __arm__
typedef uint32_t rknn_context;
#else
typedef uint64_t rknn_context;
#endif

typedef enum _rknn_tensor_type {
	RKNN_TENSOR_FLOAT32 = 0,
	RKNN_TENSOR_FLOAT16,
	RKNN_TENSOR_INT8,
	RKNN_TENSOR_UINT8,
	RKNN_TENSOR_INT16,
	RKNN_TENSOR_UINT16,
	RKNN_TENSOR_INT32,
	RKNN_TENSOR_UINT32,
	RKNN_TENSOR_INT64,
	RKNN_TENSOR_BOOL,
	RKNN_TENSOR_INT4,
	RKNN_TENSOR_BFLOAT16,
	RKNN_TENSOR_TYPE_MAX
} rknn_tensor_type;

typedef enum _rknn_core_mask {
	RKNN_NPU_CORE_AUTO = 0,
	RKNN_NPU_CORE_0 = 1,
	RKNN_NPU_CORE_1 = 2,
	RKNN_NPU_CORE_2 = 4,
	RKNN_NPU_CORE_0_1 = RKNN_NPU_CORE_0 | RKNN_NPU_CORE_1,
	RKNN_NPU_CORE_0_1_2 = RKNN_NPU_CORE_0_1 | RKNN_NPU_CORE_2,
	RKNN_NPU_CORE_ALL = 0xffff,
	RKNN_NPU_CORE_UNDEFINED,
} rknn_core_mask;

typedef enum _rknn_tensor_mem_flags {
	RKNN_TENSOR_MEMORY_FLAGS_ALLOC_INSIDE = 1,
	RKNN_TENSOR_MEMORY_FLAGS_FROM_FD = 2,
	RKNN_TENSOR_MEMORY_FLAGS_FROM_PHYS = 3,
	RKNN_TENSOR_MEMORY_FLAGS_UNKNOWN
} rknn_tensor_mem_flags;

typedef struct _rknn_tensor_memory {
	void *virt_addr;
	uint64_t phys_addr;
	int32_t fd;
	int32_t offset;
	uint32_t size;
	uint32_t flags;
	void *priv_data;
} rknn_tensor_mem;

rknn_tensor_mem *rknn_create_mem(rknn_context ctx, uint32_t size);
rknn_tensor_mem *rknn_create_mem2(rknn_context ctx, uint64_t size, uint64_t alloc_flags);
int rknn_destroy_mem(rknn_context ctx, rknn_tensor_mem *mem);

/* ---- from rknn_matmul_api.h ---- */

typedef rknn_context rknn_matmul_ctx;

typedef enum _rknn_matmul_quant_type {
	RKNN_QUANT_TYPE_PER_LAYER_SYM = 0,
	RKNN_QUANT_TYPE_PER_LAYER_ASYM = 1,
	RKNN_QUANT_TYPE_PER_CHANNEL_SYM = 2,
	RKNN_QUANT_TYPE_PER_CHANNEL_ASYM = 3,
	RKNN_QUANT_TYPE_PER_GROUP_SYM = 4,
	RKNN_QUANT_TYPE_PER_GROUP_ASYM = 5,
} rknn_matmul_quant_type;

typedef struct _rknn_quant_params {
	char name[RKNN_MAX_NAME_LEN];
	float *scale;
	int32_t scale_len;
	int32_t *zp;
	int32_t zp_len;
} rknn_quant_params;

typedef enum _rknn_matmul_type {
	RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32 = 1,
	RKNN_INT8_MM_INT8_TO_INT32 = 2,
	RKNN_INT8_MM_INT8_TO_INT8 = 3,
	RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT16 = 4,
	RKNN_FLOAT16_MM_INT8_TO_FLOAT32 = 5,
	RKNN_FLOAT16_MM_INT8_TO_FLOAT16 = 6,
	RKNN_FLOAT16_MM_INT4_TO_FLOAT32 = 7,
	RKNN_FLOAT16_MM_INT4_TO_FLOAT16 = 8,
	RKNN_INT8_MM_INT8_TO_FLOAT32 = 9,
	RKNN_INT4_MM_INT4_TO_INT16 = 10,
	RKNN_INT8_MM_INT4_TO_INT32 = 11,
	RKNN_FLOAT16_MM_INT4_TO_BFLOAT16 = 12,
} rknn_matmul_type;

typedef struct _rknn_matmul_tensor_attr {
	char name[RKNN_MAX_NAME_LEN];
	uint32_t n_dims;
	uint32_t dims[RKNN_MAX_DIMS];
	uint32_t size;
	rknn_tensor_type type;
} rknn_matmul_tensor_attr;

typedef struct _rknn_matmul_io_attr {
	rknn_matmul_tensor_attr A;
	rknn_matmul_tensor_attr B;
	rknn_matmul_tensor_attr C;
} rknn_matmul_io_attr;

typedef enum {
	RKNN_MM_LAYOUT_NORM = 0,
	RKNN_MM_LAYOUT_NATIVE = 1,
	RKNN_MM_LAYOUT_TP_NORM = 2,
} rknn_matmul_layout;

typedef struct rknn_matmul_info_t {
	int32_t M;
	int32_t K;
	int32_t N;
	rknn_matmul_type type;
	int16_t B_layout;
	int16_t B_quant_type;
	int16_t AC_layout;
	int16_t AC_quant_type;
	int32_t iommu_domain_id;
	int16_t group_size;
	int8_t reserved[34];
} rknn_matmul_info;

int rknn_matmul_create(rknn_matmul_ctx *ctx, rknn_matmul_info *info, rknn_matmul_io_attr *io_attr);
int rknn_matmul_set_io_mem(rknn_matmul_ctx ctx, rknn_tensor_mem *mem,
			   rknn_matmul_tensor_attr *attr);
int rknn_matmul_set_core_mask(rknn_matmul_ctx context, rknn_core_mask core_mask);
int rknn_matmul_set_quant_params(rknn_matmul_ctx context, rknn_quant_params *params);
int rknn_matmul_run(rknn_matmul_ctx ctx);
int rknn_matmul_destroy(rknn_matmul_ctx ctx);
int rknn_B_normal_layout_to_native_layout(void *B_input, void *B_output, int K, int N,
					  rknn_matmul_info *info);

#ifdef __cplusplus
}
#endif

#endif
