#include "npu/fault.h"

#include "core/debug.h"
#include "hw/regs.h"

/* An address no buffer of a test shape has: the vendor kernel hands out addresses
 * top-down below 4 GiB, rocket bottom-up from 0 (where 0x1000 is a buffer's). */
#define UNMAPPED_ADDR 0x80000000u
/* A target code the PC does not know (§a.1 lists every valid one). */
#define BAD_TARGET 0x0003u

static uint64_t *find_reg(uint64_t *words, size_t n, enum rb_reg_id id)
{
	const struct rb_reg_info *reg = rb_reg(id);

	for (size_t i = 0; i < n; i++)
		if (rb_word_offset(words[i]) == reg->offset &&
		    rb_word_target(words[i]) == rb_block(reg->block)->target)
			return &words[i];
	return NULL;
}

/* Rewrites one register write of the first task (through the database, like the
 * encoder); 1 if it was found. */
static int rewrite(uint64_t *words, size_t n, enum rb_reg_id id, uint32_t (*change)(uint32_t value))
{
	uint64_t *w = find_reg(words, n, id);

	if (!w)
		return 0;
	*w = rb_word_reg(id, change(rb_word_value(*w)));
	return 1;
}

static uint32_t overflow_banks(uint32_t v)
{
	rb_field_pack(RB_FIELD_CNA_CBUF_CON0_DATA_BANK, 8, &v);
	rb_field_pack(RB_FIELD_CNA_CBUF_CON0_WEIGHT_BANK, 8, &v);
	return v;
}

static uint32_t wrong_size_e(uint32_t v)
{
	/* 1 is right for fp16 output (KB 16 / C2 8 - 1); fp32 needs 3 (§a.6). */
	rb_field_pack(RB_FIELD_DPU_BS_OW_CFG_SIZE_E_0, 1, &v);
	rb_field_pack(RB_FIELD_DPU_BS_OW_CFG_SIZE_E_1, 1, &v);
	rb_field_pack(RB_FIELD_DPU_BS_OW_CFG_SIZE_E_2, 1, &v);
	return v;
}

static uint32_t unmapped(uint32_t v)
{
	(void)v;
	return UNMAPPED_ADDR;
}

static uint32_t no_address(uint32_t v)
{
	(void)v;
	return 0;
}

static uint64_t bad_target(uint64_t word)
{
	return (word & ~(UINT64_C(0xffff) << 48)) | ((uint64_t)BAD_TARGET << 48);
}

int rb_fault_inject_program(uint64_t *words, size_t n)
{
	int applied = 0;

	if (rb_debug("fault_word") && n > 1) {
		words[1] = bad_target(words[1]);
		applied++;
	}
	if (rb_debug("fault_banks"))
		applied += rewrite(words, n, RB_REG_CNA_CBUF_CON0, overflow_banks);
	if (rb_debug("fault_size_e"))
		applied += rewrite(words, n, RB_REG_DPU_BS_OW_CFG, wrong_size_e);
	if (rb_debug("fault_dma"))
		applied += rewrite(words, n, RB_REG_CNA_FEATURE_DATA_ADDR, unmapped);
	/* The first tail that points at a next task: its amount stays, its address goes. */
	if (rb_debug("fault_tail"))
		applied += rewrite(words, n, RB_REG_PC_BASE_ADDRESS, no_address);
	return applied;
}

uint32_t rb_fault_core_mask(uint32_t mask)
{
	return rb_debug("fault_mask5") ? 0x5 : mask;
}

int rb_fault_hang_once(uint64_t *word)
{
	if (!rb_debug("fault_hang_once"))
		return 0;
	*word = bad_target(*word);
	return 1;
}

int rb_fault_no_rdma(void)
{
	return rb_debug("fault_no_rdma");
}

int rb_fault_no_sync(void)
{
	return rb_debug("fault_no_sync");
}
