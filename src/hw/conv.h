/* What the registers of a convolution task say, as numbers, and the rules on them that
 * both the emulator and the validator apply: the CBUF bank sum and the DMA ranges
 * (npu-facts §b.2-§b.4, §c) and what a task's op-enable may run (§a.6). The emulator
 * (src/sim/hw_conv.c) enforces them while it runs a task; the validator (validate.h) checks every
 * task with them before a program is submitted. One piece of code, so the two never disagree.
 *
 * Registers are read through a callback: the emulator reads the register group the
 * block executes, the validator the values the program wrote. Nothing here allocates
 * or fails; a broken rule is reported as text for the caller to prefix. */
#ifndef RB_HW_CONV_H
#define RB_HW_CONV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/regs.h"

/* A register's value as the task sees it. */
typedef uint32_t rb_conv_reg_fn(const void *ctx, enum rb_reg_id id);

struct rb_conv {
	bool int8;         /* IN_PRECISION int8 (else the fp16 layout) */
	unsigned out_prec; /* DPU OUT_PRECISION */
	unsigned bpe, c2_in, kg, kb, esize, c2_out;
	uint32_t width, height, channels, kernels;
	uint32_t data_banks, weight_banks;
	bool data_reuse, weight_reuse;
	bool weights_fit; /* not read: the emulator's, all weights fit the weight banks */
	uint32_t feature_addr, line_stride; /* TASK_DMA_BASE_ADDR added */
	int32_t surf_stride;
	uint32_t weight_addr, kernel_bytes, weight_bytes;
	uint32_t dst_addr, dst_surf_stride, surface_add, notch;
	unsigned size_e[3]; /* first, middle, last line */
};

/* The numbers of the task, dma_base added to the data addresses; no checks (the
 * layout numbers follow IN/OUT_PRECISION as if they were valid). */
void rb_conv_read(struct rb_conv *cv, rb_conv_reg_fn *reg, const void *ctx, uint32_t dma_base);
int64_t rb_conv_field(rb_conv_reg_fn *reg, const void *ctx, enum rb_field_id id);

/* §c: DATA_BANK + WEIGHT_BANK must not exceed the CBUF's banks. 0, or -1 with
 * "CNA.CBUF_CON0: DATA_BANK 8 + WEIGHT_BANK 8 = 16 banks, the CBUF has 12" in why. */
int rb_conv_check_banks(const struct rb_conv *cv, uint32_t banks, char *why, size_t size);

/* §a.1, §a.6: what the op-enable word of a task runs. CNA, CORE and DPU (the only
 * tasks modeled), no PPU; DPU_RDMA needs MRDMA_DISABLE set, and under mainline rocket
 * (rdma_required) a task without DPU_RDMA never finishes. 0, or -1 with why. */
int rb_conv_check_enable(uint32_t op_enable, bool mrdma_disable, bool rdma_required, char *why,
			 size_t size);

/* One DMA: [addr, addr + len) of the NPU address space (may pass 4 GiB). */
struct rb_dma_range {
	uint32_t addr;
	uint64_t len;
};

/* §b.2: the feature is read per channel group (surface). */
uint32_t rb_conv_feature_groups(const struct rb_conv *cv);
struct rb_dma_range rb_conv_feature_range(const struct rb_conv *cv, uint32_t group);
/* The range from the first channel group's start to the last one's end, and the pitch
 * between groups, when no group address wraps around 32 bits: every group then lies
 * inside it, so one check (or one mapping) of it stands for all groups. false when the
 * addresses wrap (then only the groups one by one say where the data is). */
bool rb_conv_feature_span(const struct rb_conv *cv, struct rb_dma_range *span, uint32_t *pitch);
/* §b.3: WEIGHT_SIZE0 bytes of weights. */
struct rb_dma_range rb_conv_weight_range(const struct rb_conv *cv);
/* §b.4: the output is written per sub-surface of C2_out channels; false for a
 * sub-surface past every SIZE_E, which is never written. */
uint32_t rb_conv_output_subs(const struct rb_conv *cv);
bool rb_conv_output_range(const struct rb_conv *cv, uint32_t sub, struct rb_dma_range *r);
/* rb_conv_output_range of sub-surfaces 0, 1, 2, ... in turn, for a loop over all of
 * them (each task's DMA check): the same ranges, without its three divisions per
 * sub-surface when KB holds whole C2_out atoms (then the walk counts sub-surfaces
 * within a surface). Init, then next once per sub-surface below rb_conv_output_subs. */
struct rb_conv_out_walk {
	const struct rb_conv *cv;
	uint32_t sub;        /* the next sub-surface */
	uint32_t per;        /* sub-surfaces per KB channels (0: each by rb_conv_output_range) */
	uint32_t surface, s; /* of the next: c0 / KB and (c0 % KB) / C2_out */
	unsigned most;       /* the largest SIZE_E */
};
void rb_conv_out_walk_init(struct rb_conv_out_walk *w, const struct rb_conv *cv);
bool rb_conv_out_walk_next(struct rb_conv_out_walk *w, struct rb_dma_range *r);

#endif
