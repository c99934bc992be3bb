/* What the planner's files share (plan.c: geometry and tasks, plan_config.c: configs,
 * their text form and their checks, plan_rank.c: the model-guided default): the
 * hardware limits the plan keeps to and small arithmetic. Private to src/npu/plan*.c. */
#ifndef RB_NPU_PLAN_INTERNAL_H
#define RB_NPU_PLAN_INTERNAL_H

#include <stdint.h>

#include "core/util.h"
#include "numeric/layout.h"
#include "npu/plan.h"

#define BANK  RB_NPU_CBUF_BANK_BYTES
#define BANKS RB_NPU_CBUF_BANKS
/* FEATURE_GRAINS holds rows + 1 in 10 bits (§a.5 #2), so rows ≤ 1022; tasks keep to whole
 * 4-row groups, the unit the CNA fetches (§b.2). DATAIN_HEIGHT (11 bits) and the DPU
 * height (13 bits) allow more. */
#define MAX_ROWS 1020
/* DPU DATA_CUBE_CHANNEL and WDMA CHANNEL hold N − 1 in 13 bits (§a.5 #62, #69). */
#define MAX_KERNELS 8192
/* DATA_SIZE1 DATAIN_CHANNEL_REAL holds K − 1 in 14 bits (§a.5 #5). */
#define MAX_CHANNELS 16384
/* One kernel (K·bpe, WEIGHT_BYTES_PER_KERNEL) must fit one bank: MTX's check (§c). */
#define MAX_KERNEL_BYTES BANK
/* Auto K-slices stop at 8192 channels: the largest K run in one task on silicon (MTX
 * 1×8192×8192, §c) and the vendor runtime's per-context K (perf-anchors §1.5). */
#define AUTO_K_SLICE 8192
/* Every NPU-visible buffer lies below 4 GiB of IOVA (§b.5). */
#define ADDR_SPACE (UINT64_C(1) << 32)
/* The fixed cost of one task in bytes of DDR traffic, for the auto bank split only: a
 * heuristic (a few µs at ~10-20 GB/s) so that it does not trade a little traffic for many
 * more tasks. 32 KiB was enough while every M tile re-read its weights; once reused
 * weights cost nothing, it split one-core int8 prefill into 52 small tasks where 32
 * are faster (bench/calibration.md A2-A11 went from -2..+22 % to +15..+33 %). The tuner
 * measures instead. */
#define TASK_COST_BYTES 65536.0
/* The CBUF stores a feature row in whole 64-byte entries (CBUF_CON1 DATA_ENTRIES =
 * ceil(row bytes / 64), §c), so a row takes that much even when int8 K % 64 = 32. */
#define ENTRY_BYTES 64
/* Channel padding of A and B (§b.5). */
#define K_ALIGN 32

static inline uint64_t round_up(uint64_t a, uint64_t b)
{
	return DIV_UP(a, b) * b;
}

static inline uint64_t round_down(uint64_t a, uint64_t b)
{
	return a / b * b;
}

static inline uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static inline unsigned popcount(unsigned x)
{
	unsigned n = 0;

	for (; x; x &= x - 1)
		n++;
	return n;
}

/* Kernels per weight block and per DPU output group: 16 fp16, 32 int8 (§b.3, §b.4). */
static inline uint32_t kernel_group(enum rb_dtype dtype)
{
	return (uint32_t)rb_layout_kernel_group(dtype);
}

/* The auto choices of plan_config.c that the geometry resolves too. */
enum rb_plan_axis rb_plan_auto_axis(const struct rb_shape *s);
enum rb_plan_out rb_plan_auto_out(enum rb_dtype dtype);

#endif
