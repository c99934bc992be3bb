/* The PC, the NPU's task controller (npu-facts §a.1-§a.3, §g.1, §g.2, §g.4): fetches a
 * task's regcmd words through the IOMMU, decodes each through regs.def, kicks the
 * blocks, raises the DPU interrupt, counts the task and follows the tail's chain until
 * TASK_CON.TASK_NUMBER tasks are done.
 *
 * Fetch: (REGISTER_AMOUNTS + 1)·2 words from BASE_ADDRESS (TASK_DMA_BASE_ADDR applies
 * to data only). Decode, per word: target 0 → ignored (filler, "no next task");
 * 0x0041 → barrier (the emulator runs in order anyway); 0x0081 → kick the blocks of the
 * bitmap, only as the last word fetched; a block's target code → write the register at
 * the word's offset, which must lie in that block; anything else stops the core.
 * Chain: the words of task i that write PC BASE_ADDRESS / REGISTER_AMOUNTS say where
 * task i+1 is. An amount without an address stalls the PC (RUS, §a.3), as does a chain
 * that ends before TASK_NUMBER tasks.
 *
 * Faults stop the core without an interrupt (RB_SIM_HANG: the kernel times out) or with
 * the DMA error bit raised (RB_SIM_IOMMU_FAULT); the core stays stopped until reset. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim/npu_internal.h"

struct job {
	struct rb_sim_npu *npu;
	struct rb_sim_core *c;
	struct rb_sim_core_result *res;
	struct rb_sim_start st;
	uint32_t task;         /* index of the current task in the job, from 0 */
	uint32_t addr, amount; /* where the current task is fetched from */
	uint64_t words;        /* how many words were fetched */
	bool kicked;
	uint32_t op_enable;
	/* what the current task's words wrote to the PC: where the next task is */
	uint32_t next_addr, next_amount;
};

/* A regcmd word is little-endian in memory. One load on a little-endian host (every
 * host this builds for; the byte loop it replaces was half of the PC's time). */
static uint64_t le64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

static void note_chain(struct job *j, uint16_t offset, uint32_t value)
{
	int id = rb_reg_find(RB_BLOCK_PC, offset);

	if (id == RB_REG_PC_BASE_ADDRESS)
		j->next_addr =
		    (uint32_t)rb_field_decode(RB_FIELD_PC_BASE_ADDRESS_PC_SOURCE_ADDR, value);
	else if (id == RB_REG_PC_REGISTER_AMOUNTS)
		j->next_amount =
		    rb_field_unpack(RB_FIELD_PC_REGISTER_AMOUNTS_PC_DATA_AMOUNT, value);
}

static int decode_word(struct job *j, uint64_t word, uint64_t i, struct rb_sim_fault *f)
{
	uint16_t target = rb_word_target(word), offset = rb_word_offset(word);
	uint32_t value = rb_word_value(word);
	int block;

	if (target == 0 || target == RB_TARGET_SYNC)
		return 0;
	if (target == RB_TARGET_OP_ENABLE) {
		if (i + 1 != j->words)
			return rb_sim_hang(
			    f, "word %llu of %llu: op-enable 0x%x is not the last word",
			    (unsigned long long)i, (unsigned long long)j->words, value);
		j->kicked = true;
		j->op_enable = value;
		return 0;
	}
	block = rb_block_by_target(target);
	if (block < 0)
		return rb_sim_hang(f, "word %llu: unknown target 0x%04x (offset 0x%04x)",
				   (unsigned long long)i, target, offset);
	if (rb_block_by_offset(offset) != block)
		return rb_sim_hang(
		    f, "word %llu: target 0x%04x writes offset 0x%04x, outside the %s block",
		    (unsigned long long)i, target, offset, rb_block(block)->name);
	if (block == RB_BLOCK_PC)
		note_chain(j, offset, value);
	rb_sim_core_write(j->c, offset, value, true);
	return 0;
}

static int fetch(struct job *j, struct rb_sim_fault *f)
{
	const struct rb_sim_iommu *mmu = &j->npu->iommu;
	const uint8_t *w;

	j->words = ((uint64_t)j->amount + 1) * 2;
	w = mmu->map(mmu->ctx, j->c->index, j->addr, j->words * 8);
	if (!w)
		return rb_sim_iommu_fault(
		    f, false,
		    "PC.BASE_ADDRESS: the regcmd fetch of %llu words at 0x%08x "
		    "(PC.REGISTER_AMOUNTS %u) is outside every buffer",
		    (unsigned long long)j->words, j->addr, j->amount);
	j->kicked = false;
	j->next_addr = 0;
	j->next_amount = 0;
	for (uint64_t i = 0; i < j->words; i++)
		if (decode_word(j, le64(w + 8 * i), i, f))
			return -1;
	if (!j->kicked)
		return rb_sim_hang(
		    f, "no op-enable word in the %llu words fetched (PC.REGISTER_AMOUNTS %u)",
		    (unsigned long long)j->words, j->amount);
	return 0;
}

/* The task's end (§a.2, §g.4): DPU_0 or DPU_1 after the DPU's register group, the task
 * counter, the groups toggled; what it asked of the hardware goes to the timing
 * model. */
static int complete(struct job *j, const struct rb_timing_task *timing)
{
	struct rb_sim_core *c = j->c;
	int grp = rb_sim_core_exec_group(c, RB_BLOCK_DPU);

	if (rb_sim_ran_add(j->npu, c->index, timing))
		return -ENOMEM;
	c->raw_irq |= rb_field_mask(grp ? RB_FIELD_PC_INTERRUPT_RAW_STATUS_DPU_1
					: RB_FIELD_PC_INTERRUPT_RAW_STATUS_DPU_0);
	c->task_counter =
	    (c->task_counter + 1) & rb_field_max(RB_FIELD_PC_TASK_STATUS_TASK_COUNTER);
	rb_sim_core_task_done(c, j->op_enable);
	j->res->tasks_done++;
	return 0;
}

static int run_task(struct job *j, struct rb_sim_fault *f)
{
	struct rb_sim_exec x = {
	    .npu = j->npu,
	    .core = j->c,
	    .dma_base = j->st.dma_base,
	    .first_in_job = j->task == 0,
	    .pingpong = rb_field_unpack(RB_FIELD_PC_TASK_CON_TASK_PP_EN,
					rb_sim_reg(j->c, RB_REG_PC_TASK_CON)) != 0,
	};
	int ret = fetch(j, f);

	if (ret)
		return ret;
	x.op_enable = j->op_enable;
	x.regcmd_bytes = j->words * 8;
	ret = rb_sim_conv_run(&x, f);
	if (ret)
		return ret;
	return complete(j, &x.timing);
}

static int follow_chain(struct job *j, struct rb_sim_fault *f)
{
	if (j->next_amount == 0)
		return rb_sim_hang(f,
				   "the chain ends after %u of %u tasks (PC.REGISTER_AMOUNTS 0 "
				   "but PC.TASK_CON.TASK_NUMBER %u)",
				   j->task + 1, j->st.tasks, j->st.tasks);
	if (j->next_addr == 0)
		return rb_sim_hang(f,
				   "chain has an amount but no address (PC.REGISTER_AMOUNTS %u, "
				   "PC.BASE_ADDRESS 0)",
				   j->next_amount);
	j->addr = j->next_addr;
	j->amount = j->next_amount;
	return 0;
}

/* A job that did not complete: the reason names the task; the core stays stopped. */
static int stop(struct job *j, const struct rb_sim_fault *f, int ret)
{
	struct rb_sim_core *c = j->c;
	struct rb_sim_core_result *res = j->res;

	res->status = RB_SIM_HANG;
	if (ret == -ENOMEM) {
		snprintf(res->reason, sizeof(res->reason),
			 "task %u: the emulator ran out of host memory", j->task);
		return -ENOMEM;
	}
	res->status = f->status;
	snprintf(res->reason, sizeof(res->reason), "task %u: %.232s", j->task, f->reason);
	if (f->status == RB_SIM_IOMMU_FAULT)
		c->raw_irq |=
		    rb_field_mask(f->dma_write ? RB_FIELD_PC_INTERRUPT_RAW_STATUS_DMA_WRITE_ERROR
					       : RB_FIELD_PC_INTERRUPT_RAW_STATUS_DMA_READ_ERROR);
	c->wedged = res->status;
	memcpy(c->wedged_reason, res->reason, sizeof(c->wedged_reason));
	return 0;
}

static int refuse_wedged(struct job *j)
{
	j->res->status = j->c->wedged;
	snprintf(j->res->reason, sizeof(j->res->reason),
		 "core %d is still stopped (%.200s): reset it first", j->c->index,
		 j->c->wedged_reason);
	return 0;
}

int rb_sim_pc_run(struct rb_sim_npu *npu, struct rb_sim_core *c, struct rb_sim_core_result *res)
{
	struct job j = {.npu = npu, .c = c, .res = res, .st = c->start};
	struct rb_sim_fault f = {0};
	int ret;

	c->start.pending = false;
	if (c->wedged != RB_SIM_IDLE)
		return refuse_wedged(&j);
	/* The CBUF is not emptied here: it is SRAM, and nothing in a kick clears it. Mesa's
	 * rocket driver and rocket-userspace set WEIGHT_REUSE on the tasks of one mainline
	 * job, which that kernel kicks one task at a time, and get correct results (§c).
	 * Only a core reset empties it (rb_sim_core_reset); that a new job must not count
	 * on an earlier one's CBUF is the planner's rule, not the hardware's. */
	if (j.st.tasks == 0)
		return stop(&j, &f,
			    rb_sim_hang(&f, "PC.TASK_CON.TASK_NUMBER is 0: no task to run"));
	j.addr = j.st.addr;
	j.amount = j.st.amount;
	for (;;) {
		ret = run_task(&j, &f);
		if (ret)
			return stop(&j, &f, ret);
		if (res->tasks_done == j.st.tasks) {
			res->status = RB_SIM_DONE;
			return 0;
		}
		ret = follow_chain(&j, &f);
		if (ret)
			return stop(&j, &f, ret);
		j.task++;
	}
}
