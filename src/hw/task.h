/* One NPU task: the description the planner produces and the regcmd encoder turns into
 * a register program (npu-facts.md §a.5, §a.6).
 *
 * A task computes C_tile[m×n] = A_tile[m×k] · B_tile[k×n] as a 1×1 convolution: the
 * feature cube is A seen as W = 1, H = rows, C = k channels (NC1HWC2, b.2); the n
 * kernels are columns of B (b.3); the DPU writes an NC1HWC2 output cube (b.4).
 * All addresses are 32-bit NPU (IOVA) addresses. */
#ifndef RB_HW_TASK_H
#define RB_HW_TASK_H

#include <stdbool.h>
#include <stdint.h>

#include "rknn_bench/shape.h"

/* The 3-bit precision field of CNA/CORE/DPU/DPU_RDMA (§a.6). */
enum rb_npu_prec {
	RB_PREC_INT8 = 0,
	RB_PREC_INT16 = 1,
	RB_PREC_FP16 = 2,
	RB_PREC_BF16 = 3,
	RB_PREC_INT32 = 4,
	RB_PREC_FP32 = 5,
};

#define RB_NPU_CBUF_BANKS      12
#define RB_NPU_CBUF_BANK_BYTES 32768
/* Rows of a mainline-variant task and its cubes come in multiples of this: the public
 * mainline userspace (rocket-userspace) clamps SURF_STRIDE to 0 below 4 rows, finds
 * M = 1 broken on silicon unless M is padded to 4, and accepts only M % 4 == 0
 * (npu-facts §b.2); Mesa's W·(H − 4) for other M is its convolution formula, unproven
 * for a matmul. */
#define RB_NPU_MAINLINE_MIN_ROWS 4

struct rb_npu_task {
	enum rb_dtype dtype;   /* input precision: fp16 or int8 */
	enum rb_npu_prec out;  /* FP32 or FP16 for fp16 input, INT32 for int8 */
	uint32_t m;            /* rows of this task (DATAIN_HEIGHT) */
	uint32_t k;            /* channels, a multiple of 32 (zero-padded) */
	uint32_t n;            /* kernels, a multiple of 16 (fp16) or 32 (int8) */
	uint32_t a_height;     /* rows of the feature cube A lives in (CNA strides) */
	uint32_t c_height;     /* rows of the output cube C is written into (DPU strides) */
	uint32_t data_banks;   /* CBUF_CON0 DATA_BANK */
	uint32_t weight_banks; /* CBUF_CON0 WEIGHT_BANK */
	uint32_t a_addr;       /* first byte of this task's rows and channels in the A cube */
	uint32_t b_addr;       /* first byte of this task's packed weights */
	uint32_t c_addr;       /* first byte of this task's rows and channels in the C cube */
	bool data_reuse;       /* CBUF_CON0 DATA_REUSE: keep the previous task's features */
	bool weight_reuse;     /* CBUF_CON0 WEIGHT_REUSE: keep the previous task's weights */
	bool mainline;         /* rocket-safe variant: program DPU_RDMA, op-enable 0x1D (§a.6) */
};

#endif
