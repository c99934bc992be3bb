/* The shared rules of a convolution task (conv.h). */
#include "numeric/layout.h"
#include "core/util.h"
#include "hw/conv.h"

#include <stdio.h>

#include "hw/task.h"

#define ATOM 16u /* bytes of a cube atom (§b.1) */

int64_t rb_conv_field(rb_conv_reg_fn *reg, const void *ctx, enum rb_field_id id)
{
	return rb_field_decode(id, reg(ctx, rb_field(id)->reg));
}

#define FLD(name) rb_conv_field(reg, ctx, RB_FIELD_##name)

/* §a.6, §b: the layout numbers of the precisions. */
static void read_format(struct rb_conv *cv, rb_conv_reg_fn *reg, const void *ctx)
{
	cv->int8 = FLD(CNA_CONV_CON1_IN_PRECISION) == RB_PREC_INT8;
	cv->bpe = cv->int8 ? 1 : 2;
	cv->c2_in = ATOM / cv->bpe;
	/* kernels per weight block (§b.3), channels per DPU output group (§b.4) */
	cv->kg = (unsigned)rb_layout_kernel_group(cv->int8 ? RB_DTYPE_INT8 : RB_DTYPE_FP16);
	cv->kb = cv->kg;
	cv->out_prec = (unsigned)FLD(DPU_DATA_FORMAT_OUT_PRECISION);
	cv->esize = cv->out_prec == RB_PREC_FP16 ? 2 : 4;
	cv->c2_out = ATOM / cv->esize;
}

void rb_conv_read(struct rb_conv *cv, rb_conv_reg_fn *reg, const void *ctx, uint32_t dma_base)
{
	read_format(cv, reg, ctx);
	cv->width = (uint32_t)FLD(CNA_DATA_SIZE0_DATAIN_WIDTH);
	cv->height = (uint32_t)FLD(CNA_DATA_SIZE0_DATAIN_HEIGHT);
	cv->channels = (uint32_t)FLD(CNA_DATA_SIZE1_DATAIN_CHANNEL);
	cv->kernels = (uint32_t)FLD(CNA_WEIGHT_SIZE2_WEIGHT_KERNELS);
	cv->data_banks = (uint32_t)FLD(CNA_CBUF_CON0_DATA_BANK);
	cv->weight_banks = (uint32_t)FLD(CNA_CBUF_CON0_WEIGHT_BANK);
	cv->data_reuse = FLD(CNA_CBUF_CON0_DATA_REUSE) != 0;
	cv->weight_reuse = FLD(CNA_CBUF_CON0_WEIGHT_REUSE) != 0;
	cv->feature_addr = dma_base + (uint32_t)FLD(CNA_FEATURE_DATA_ADDR_FEATURE_BASE_ADDR);
	cv->line_stride = (uint32_t)FLD(CNA_DMA_CON1_LINE_STRIDE);
	cv->surf_stride = (int32_t)FLD(CNA_DMA_CON2_SURF_STRIDE);
	cv->weight_addr = dma_base + (uint32_t)FLD(CNA_DCOMP_ADDR0_DECOMPRESS_ADDR0);
	cv->kernel_bytes = (uint32_t)FLD(CNA_WEIGHT_SIZE1_WEIGHT_BYTES_PER_KERNEL);
	cv->weight_bytes = (uint32_t)FLD(CNA_WEIGHT_SIZE0_WEIGHT_BYTES);
	cv->dst_addr = dma_base + (uint32_t)FLD(DPU_DST_BASE_ADDR_DST_BASE_ADDR);
	cv->dst_surf_stride = (uint32_t)FLD(DPU_DST_SURF_STRIDE_DST_SURF_STRIDE);
	cv->surface_add = (uint32_t)FLD(DPU_SURFACE_ADD_SURF_ADD);
	cv->notch = (uint32_t)FLD(DPU_DATA_CUBE_NOTCH_ADDR_NOTCH_ADDR_0);
	cv->size_e[0] = (unsigned)FLD(DPU_BS_OW_CFG_SIZE_E_0);
	cv->size_e[1] = (unsigned)FLD(DPU_BS_OW_CFG_SIZE_E_1);
	cv->size_e[2] = (unsigned)FLD(DPU_BS_OW_CFG_SIZE_E_2);
}

int rb_conv_check_banks(const struct rb_conv *cv, uint32_t banks, char *why, size_t size)
{
	uint64_t sum = (uint64_t)cv->data_banks + cv->weight_banks;

	if (sum <= banks)
		return 0;
	snprintf(why, size,
		 "CNA.CBUF_CON0: DATA_BANK %u + WEIGHT_BANK %u = %llu banks, the CBUF has %u",
		 cv->data_banks, cv->weight_banks, (unsigned long long)sum, banks);
	return -1;
}

static bool op_bit(uint32_t op, enum rb_field_id id)
{
	return rb_field_unpack(id, op) != 0;
}

int rb_conv_check_enable(uint32_t op, bool mrdma_disable, bool rdma_required, char *why,
			 size_t size)
{
	if (!op_bit(op, RB_FIELD_GLOBAL_OPERATION_ENABLE_CNA) ||
	    !op_bit(op, RB_FIELD_GLOBAL_OPERATION_ENABLE_CORE) ||
	    !op_bit(op, RB_FIELD_GLOBAL_OPERATION_ENABLE_DPU))
		snprintf(why, size,
			 "op-enable 0x%x does not run CNA, CORE and DPU: only convolution tasks "
			 "are modeled",
			 op);
	else if (op_bit(op, RB_FIELD_GLOBAL_OPERATION_ENABLE_PPU) ||
		 op_bit(op, RB_FIELD_GLOBAL_OPERATION_ENABLE_PPU_RDMA))
		snprintf(why, size, "op-enable 0x%x runs the PPU, which is not modeled", op);
	else if (rdma_required && !op_bit(op, RB_FIELD_GLOBAL_OPERATION_ENABLE_DPU_RDMA))
		snprintf(why, size,
			 "op-enable 0x%x does not run DPU_RDMA: under the mainline rocket kernel "
			 "the DPU then never finishes (npu-facts §a.6); program DPU_RDMA (plan "
			 "flag mainline=1)",
			 op);
	else if (op_bit(op, RB_FIELD_GLOBAL_OPERATION_ENABLE_DPU_RDMA) && !mrdma_disable)
		snprintf(why, size,
			 "op-enable 0x%x runs DPU_RDMA but DPU_RDMA.FEATURE_MODE_CFG.MRDMA_DISABLE "
			 "is 0: the DPU waits for MRDMA data that was never set up",
			 op);
	else
		return 0;
	return -1;
}

uint32_t rb_conv_feature_groups(const struct rb_conv *cv)
{
	return (uint32_t)DIV_UP(cv->channels, cv->c2_in);
}

/* §b.2 [derived]: line pitch 4·LINE_STRIDE bytes, surface (channel group) pitch
 * 16·(LINE_STRIDE + SURF_STRIDE) bytes, 32-bit wrap-around. */
struct rb_dma_range rb_conv_feature_range(const struct rb_conv *cv, uint32_t group)
{
	uint64_t line = 4 * (uint64_t)cv->line_stride;
	uint32_t pitch = (uint32_t)(ATOM * ((int64_t)cv->line_stride + cv->surf_stride));
	struct rb_dma_range r = {
	    .addr = cv->feature_addr + group * pitch,
	    .len = (uint64_t)(cv->height - 1) * line + (uint64_t)cv->width * ATOM,
	};

	return r;
}

bool rb_conv_feature_span(const struct rb_conv *cv, struct rb_dma_range *span, uint32_t *pitch)
{
	uint32_t groups = rb_conv_feature_groups(cv);
	struct rb_dma_range first = rb_conv_feature_range(cv, 0);
	uint64_t step = 0, last;

	if (groups == 0)
		return false;
	if (groups > 1) {
		uint32_t second = rb_conv_feature_range(cv, 1).addr;

		if (second < first.addr)
			return false; /* group 1 wrapped */
		step = second - first.addr;
	}
	/* group g at first.addr + g·step: no wrap while the 64-bit sum stays below 2^32 */
	last = first.addr + (uint64_t)(groups - 1) * step;
	if (last + first.len > UINT64_C(1) << 32)
		return false;
	*pitch = (uint32_t)step;
	*span = (struct rb_dma_range){first.addr, last - first.addr + first.len};
	return true;
}

struct rb_dma_range rb_conv_weight_range(const struct rb_conv *cv)
{
	struct rb_dma_range r = {.addr = cv->weight_addr, .len = cv->weight_bytes};

	return r;
}

uint32_t rb_conv_output_subs(const struct rb_conv *cv)
{
	return (uint32_t)DIV_UP(cv->kernels, cv->c2_out);
}

/* §b.4 [derived]: channel c of pixel (h, w) at DST_BASE + (c / KB)·SURFACE_ADD +
 * ((c % KB) / C2_out)·DST_SURF_STRIDE + (h·(W + NOTCH) + w)·16 + (c % C2_out)·esize. */
static unsigned largest_size_e(const struct rb_conv *cv)
{
	unsigned most = cv->size_e[0];

	most = cv->size_e[1] > most ? cv->size_e[1] : most;
	return cv->size_e[2] > most ? cv->size_e[2] : most;
}

/* Sub-surface s of surface `surface` (channels surface·KB + s·C2_out on). */
static bool output_at(const struct rb_conv *cv, uint32_t surface, uint32_t s, unsigned most,
		      struct rb_dma_range *r)
{
	r->addr = cv->dst_addr + surface * cv->surface_add + s * cv->dst_surf_stride;
	r->len = ((uint64_t)(cv->height - 1) * (cv->width + cv->notch) + cv->width) * ATOM;
	return s <= most;
}

bool rb_conv_output_range(const struct rb_conv *cv, uint32_t sub, struct rb_dma_range *r)
{
	uint32_t c0 = sub * cv->c2_out;

	return output_at(cv, c0 / cv->kb, (c0 % cv->kb) / cv->c2_out, largest_size_e(cv), r);
}

void rb_conv_out_walk_init(struct rb_conv_out_walk *w, const struct rb_conv *cv)
{
	bool whole = cv->c2_out && cv->kb >= cv->c2_out && cv->kb % cv->c2_out == 0;

	*w = (struct rb_conv_out_walk){
	    .cv = cv, .per = whole ? cv->kb / cv->c2_out : 0, .most = largest_size_e(cv)};
}

bool rb_conv_out_walk_next(struct rb_conv_out_walk *w, struct rb_dma_range *r)
{
	bool valid;

	if (!w->per)
		return rb_conv_output_range(w->cv, w->sub++, r);
	valid = output_at(w->cv, w->surface, w->s, w->most, r);
	w->sub++;
	if (++w->s == w->per) {
		w->s = 0;
		w->surface++;
	}
	return valid;
}
