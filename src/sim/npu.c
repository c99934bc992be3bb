/* The emulated NPU: per-core MMIO, the two register groups of every block, the PC's
 * interrupt and task-counter registers, reset (npu-facts §a.2, §a.4, §g.1). Every
 * offset and bit position comes from regs.def; the PC lives in hw_pc.c, the
 * execution of a task in hw_conv.c and hw_gemm.c. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "numeric/ref.h"
#include "sim/npu_internal.h"

/* §1: PC VERSION + (VERSION_NUM & 0xffff) read 0x46495245 ("FIRE") on a Rock 5B. How
 * the sum splits between the two registers is not known: all of it is in VERSION. */
#define HW_VERSION     0x46495245u
#define HW_VERSION_NUM 0u
/* §a.2: INTERRUPT_MASK resets to 0x1ffff. */
#define INT_MASK_RESET 0x1ffffu

/* The blocks with an S_POINTER, i.e. with two register groups (§a.4). */
struct pp_block {
	enum rb_block_id block;
	enum rb_reg_id s_status, s_pointer, op_enable;
	enum rb_field_id enable; /* its bit in the op-enable bitmap (§a.1) */
};

#define PP_BLOCK(b)                                                                                \
	{                                                                                          \
		RB_BLOCK_##b, RB_REG_##b##_S_STATUS, RB_REG_##b##_S_POINTER,                       \
		    RB_REG_##b##_OPERATION_ENABLE, RB_FIELD_GLOBAL_OPERATION_ENABLE_##b            \
	}

static const struct pp_block pp_blocks[] = {
    PP_BLOCK(CNA),      PP_BLOCK(CORE), PP_BLOCK(DPU),
    PP_BLOCK(DPU_RDMA), PP_BLOCK(PPU),  PP_BLOCK(PPU_RDMA),
};

#define N_PP_BLOCKS (sizeof(pp_blocks) / sizeof(pp_blocks[0]))

/* Asked for every word written and every register read, so looked up once: per block,
 * its pp_block (NULL: one register group) and the offsets a write is checked against;
 * per register, where it lives (block, word) and whether it is shadowed. */
struct block_slots {
	const struct pp_block *pp;
	uint16_t base, s_pointer, s_status, op_enable;
};

struct reg_slot {
	uint8_t block;
	bool shadowed;
	uint16_t word;
};

static struct block_slots block_slots[RB_BLOCK_COUNT];
static struct reg_slot reg_slots[RB_REG_COUNT];

static uint16_t reg_offset(enum rb_reg_id id)
{
	return rb_reg(id)->offset;
}

/* Registers from the block's OPERATION_ENABLE on are shadowed (§a.4). */
static bool shadowed(const struct block_slots *b, uint32_t offset)
{
	return b->pp && offset >= b->op_enable;
}

static unsigned word_index(int block, uint32_t offset)
{
	return (offset - block_slots[block].base) / 4;
}

__attribute__((constructor)) static void index_slots(void)
{
	for (int b = 0; b < RB_BLOCK_COUNT; b++)
		block_slots[b].base = rb_block(b)->base;
	for (size_t i = 0; i < N_PP_BLOCKS; i++) {
		struct block_slots *b = &block_slots[pp_blocks[i].block];

		b->pp = &pp_blocks[i];
		b->s_pointer = reg_offset(pp_blocks[i].s_pointer);
		b->s_status = reg_offset(pp_blocks[i].s_status);
		b->op_enable = reg_offset(pp_blocks[i].op_enable);
	}
	for (int id = 0; id < RB_REG_COUNT; id++) {
		const struct rb_reg_info *r = rb_reg(id);

		reg_slots[id] =
		    (struct reg_slot){.block = (uint8_t)r->block,
				      .shadowed = shadowed(&block_slots[r->block], r->offset),
				      .word = (uint16_t)word_index(r->block, r->offset)};
	}
}

int rb_sim_hang(struct rb_sim_fault *f, const char *fmt, ...)
{
	va_list ap;

	f->status = RB_SIM_HANG;
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
	return -1;
}

int rb_sim_iommu_fault(struct rb_sim_fault *f, bool write, const char *fmt, ...)
{
	va_list ap;

	f->status = RB_SIM_IOMMU_FAULT;
	f->dma_write = write;
	va_start(ap, fmt);
	vsnprintf(f->reason, sizeof(f->reason), fmt, ap);
	va_end(ap);
	return -1;
}

const char *rb_sim_field_name(enum rb_field_id id, char *buf, size_t size)
{
	return rb_field_fullname(id, buf, size);
}

uint32_t rb_sim_reg(const struct rb_sim_core *c, enum rb_reg_id id)
{
	struct reg_slot r = reg_slots[id];

	return c->regs[r.block][r.shadowed ? c->pp[r.block].executer : 0][r.word];
}

int64_t rb_sim_field(const struct rb_sim_core *c, enum rb_field_id id)
{
	return rb_field_decode(id, rb_sim_reg(c, rb_field(id)->reg));
}

int rb_sim_core_exec_group(const struct rb_sim_core *c, enum rb_block_id b)
{
	return c->pp[b].executer;
}

static uint32_t pc_reg(const struct rb_sim_core *c, enum rb_reg_id id)
{
	return c->regs[RB_BLOCK_PC][0][word_index(RB_BLOCK_PC, reg_offset(id))];
}

/* OPERATION_ENABLE = 1 in PC mode (PC_SEL = 0) latches a job; slave mode (PC_SEL = 1,
 * which the kernel writes first, §a.3) starts nothing. */
static void pc_start(struct rb_sim_core *c, uint32_t value)
{
	uint32_t base = pc_reg(c, RB_REG_PC_BASE_ADDRESS);

	if (!rb_field_unpack(RB_FIELD_PC_OPERATION_ENABLE_OP_EN, value) ||
	    rb_field_unpack(RB_FIELD_PC_BASE_ADDRESS_PC_SEL, base))
		return;
	c->start.pending = true;
	c->start.addr = (uint32_t)rb_field_decode(RB_FIELD_PC_BASE_ADDRESS_PC_SOURCE_ADDR, base);
	c->start.amount = rb_field_unpack(RB_FIELD_PC_REGISTER_AMOUNTS_PC_DATA_AMOUNT,
					  pc_reg(c, RB_REG_PC_REGISTER_AMOUNTS));
	c->start.tasks =
	    rb_field_unpack(RB_FIELD_PC_TASK_CON_TASK_NUMBER, pc_reg(c, RB_REG_PC_TASK_CON));
	c->start.dma_base = (uint32_t)rb_field_decode(RB_FIELD_PC_TASK_DMA_BASE_ADDR_DMA_BASE_ADDR,
						      pc_reg(c, RB_REG_PC_TASK_DMA_BASE_ADDR));
}

/* Returns true if the write is consumed (read-only or write-1-to-clear registers). */
static bool pc_special_write(struct rb_sim_core *c, int id, uint32_t *value, bool from_regcmd)
{
	switch (id) {
	case RB_REG_PC_VERSION:
	case RB_REG_PC_VERSION_NUM:
	case RB_REG_PC_INTERRUPT_STATUS:
	case RB_REG_PC_INTERRUPT_RAW_STATUS:
	case RB_REG_PC_TASK_STATUS:
		return true;
	case RB_REG_PC_INTERRUPT_CLEAR:
		c->raw_irq &= ~*value;
		return true;
	case RB_REG_PC_TASK_CON:
		if (rb_field_unpack(RB_FIELD_PC_TASK_CON_TASK_COUNT_CLEAR, *value))
			c->task_counter = 0;
		*value &= ~rb_field_mask(RB_FIELD_PC_TASK_CON_TASK_COUNT_CLEAR);
		return false;
	case RB_REG_PC_OPERATION_ENABLE:
		c->regs[RB_BLOCK_PC][0][word_index(RB_BLOCK_PC, reg_offset(id))] = *value;
		if (!from_regcmd)
			pc_start(c, *value);
		return true;
	default:
		return false;
	}
}

/* §a.4: the W1C bits reset pointer/executer; without POINTER_PP_EN the POINTER bit
 * selects the group by hand. */
static void s_pointer_write(struct rb_sim_core *c, int block, uint32_t v)
{
	struct rb_sim_pp *pp = &c->pp[block];
	uint32_t keep = rb_field_mask(RB_FIELD_CNA_S_POINTER_POINTER_PP_EN) |
			rb_field_mask(RB_FIELD_CNA_S_POINTER_EXECUTER_PP_EN) |
			rb_field_mask(RB_FIELD_CNA_S_POINTER_POINTER_PP_MODE) |
			rb_field_mask(RB_FIELD_CNA_S_POINTER_RESERVED_28);

	/* Every block's S_POINTER has the layout of CNA's (RB_BLOCK_HEAD in regs.def). */
	if (rb_field_unpack(RB_FIELD_CNA_S_POINTER_POINTER_PP_CLEAR, v))
		pp->pointer = 0;
	if (rb_field_unpack(RB_FIELD_CNA_S_POINTER_EXECUTER_PP_CLEAR, v))
		pp->executer = 0;
	if (!rb_field_unpack(RB_FIELD_CNA_S_POINTER_POINTER_PP_EN, v))
		pp->pointer = (uint8_t)rb_field_unpack(RB_FIELD_CNA_S_POINTER_POINTER, v);
	pp->ctl = v & keep;
}

void rb_sim_core_write(struct rb_sim_core *c, uint32_t offset, uint32_t value, bool from_regcmd)
{
	int block = rb_block_by_offset((uint16_t)offset);
	const struct block_slots *b;
	int grp = 0;

	if (block < 0 || offset > UINT16_MAX)
		return; /* no register there: the write is dropped */
	if (block == RB_BLOCK_PC &&
	    pc_special_write(c, rb_reg_find(RB_BLOCK_PC, (uint16_t)offset), &value, from_regcmd))
		return;
	b = &block_slots[block];
	if (b->pp && offset == b->s_pointer) {
		s_pointer_write(c, block, value);
		return;
	}
	if (b->pp && offset == b->s_status)
		return; /* read-only */
	if (shadowed(b, offset))
		grp = c->pp[block].pointer;
	c->regs[block][grp][word_index(block, offset)] = value;
}

static uint32_t s_pointer_read(const struct rb_sim_core *c, int block)
{
	const struct rb_sim_pp *pp = &c->pp[block];
	uint32_t v = pp->ctl;

	rb_field_pack(RB_FIELD_CNA_S_POINTER_POINTER, pp->pointer, &v);
	rb_field_pack(RB_FIELD_CNA_S_POINTER_EXECUTER, pp->executer, &v);
	return v;
}

static uint32_t pc_read(const struct rb_sim_core *c, uint32_t offset)
{
	uint32_t v = 0;

	switch (rb_reg_find(RB_BLOCK_PC, (uint16_t)offset)) {
	case RB_REG_PC_VERSION:
		return HW_VERSION;
	case RB_REG_PC_VERSION_NUM:
		return HW_VERSION_NUM;
	case RB_REG_PC_INTERRUPT_STATUS:
		return c->raw_irq & pc_reg(c, RB_REG_PC_INTERRUPT_MASK);
	case RB_REG_PC_INTERRUPT_RAW_STATUS:
		return c->raw_irq;
	case RB_REG_PC_TASK_STATUS:
		rb_field_pack(RB_FIELD_PC_TASK_STATUS_TASK_COUNTER, c->task_counter, &v);
		rb_field_pack(RB_FIELD_PC_TASK_STATUS_FIRST_TASK, c->first_task, &v);
		rb_field_pack(RB_FIELD_PC_TASK_STATUS_LAST_TASK, c->last_task, &v);
		return v;
	default:
		return c->regs[RB_BLOCK_PC][0][word_index(RB_BLOCK_PC, offset)];
	}
}

/* S_STATUS reads 0 (both executers idle): MMIO is only looked at between runs. */
static uint32_t core_read(const struct rb_sim_core *c, uint32_t offset)
{
	int block = rb_block_by_offset((uint16_t)offset);
	const struct block_slots *b;

	if (block < 0 || offset > UINT16_MAX)
		return 0;
	if (block == RB_BLOCK_PC)
		return pc_read(c, offset);
	b = &block_slots[block];
	if (b->pp && offset == b->s_pointer)
		return s_pointer_read(c, block);
	if (b->pp && offset == b->s_status)
		return 0;
	return c->regs[block][shadowed(b, offset) ? c->pp[block].pointer : 0]
		      [word_index(block, offset)];
}

void rb_sim_core_task_done(struct rb_sim_core *c, uint32_t op_enable)
{
	for (size_t i = 0; i < N_PP_BLOCKS; i++) {
		struct rb_sim_pp *pp = &c->pp[pp_blocks[i].block];

		if (!rb_field_unpack(pp_blocks[i].enable, op_enable))
			continue;
		if (rb_field_unpack(RB_FIELD_CNA_S_POINTER_EXECUTER_PP_EN, pp->ctl))
			pp->executer ^= 1;
		if (!rb_field_unpack(RB_FIELD_CNA_S_POINTER_POINTER_PP_EN, pp->ctl))
			continue;
		/* POINTER_PP_MODE 1: the pointer toggles by itself; 0: it follows the executer */
		if (rb_field_unpack(RB_FIELD_CNA_S_POINTER_POINTER_PP_MODE, pp->ctl))
			pp->pointer ^= 1;
		else
			pp->pointer = pp->executer;
	}
}

void rb_sim_core_reset(struct rb_sim_core *c)
{
	int index = c->index;

	memset(c, 0, sizeof(*c));
	c->index = index;
	c->regs[RB_BLOCK_PC][0][word_index(RB_BLOCK_PC, reg_offset(RB_REG_PC_INTERRUPT_MASK))] =
	    INT_MASK_RESET;
}

/* ---- public interface (sim.h) ---- */

/* The profile to run on: the configuration's or the embedded default, with at least
 * as many cores as asked for. */
static const struct rb_soc_profile *profile_of(const struct rb_sim_config *cfg)
{
	const struct rb_soc_profile *soc = cfg->soc ? cfg->soc : rb_soc_default();

	if (!soc) {
		rb_set_error(-EINVAL, "emulator: the embedded hardware profile does not load");
		return NULL;
	}
	if (cfg->cores > soc->cores) {
		rb_set_error(-EINVAL,
			     "emulator: %d NPU cores asked for; the hardware profile "
			     "'%s' has %lld",
			     cfg->cores, soc->label, (long long)soc->cores);
		return NULL;
	}
	return soc;
}

struct rb_sim_npu *rb_sim_npu_new(const struct rb_sim_config *cfg, const struct rb_sim_iommu *iommu)
{
	const struct rb_soc_profile *soc;
	struct rb_sim_npu *npu;

	if (!cfg || !iommu || !iommu->map || cfg->cores < 1 || cfg->cores > RB_SIM_MAX_CORES) {
		errno = EINVAL;
		return NULL;
	}
	soc = profile_of(cfg);
	if (!soc) {
		errno = EINVAL;
		return NULL;
	}
	npu = calloc(1, sizeof(*npu));
	if (!npu)
		return NULL;
	npu->cores = cfg->cores;
	npu->threads = rb_ref_threads(cfg->threads);
	npu->model_only = cfg->model_only;
	npu->rdma_required = cfg->rdma_required;
	npu->iommu = *iommu;
	npu->soc = *soc;
	for (int i = 0; i < RB_SIM_MAX_CORES; i++) {
		npu->core[i].index = i;
		rb_sim_core_reset(&npu->core[i]);
		rb_sim_gemm_mem_init(&npu->gemm_mem[i]);
	}
	rb_sim_pool_init(&npu->pool);
	return npu;
}

void rb_sim_npu_free(struct rb_sim_npu *npu)
{
	if (!npu)
		return;
	rb_sim_pool_release(&npu->pool);
	for (int i = 0; i < RB_SIM_MAX_CORES; i++) {
		free(npu->ran[i].v);
		rb_sim_gemm_mem_free(&npu->gemm_mem[i]);
	}
	free(npu);
}

int rb_sim_npu_cores(const struct rb_sim_npu *npu)
{
	return npu->cores;
}

void rb_sim_npu_mmio_write(struct rb_sim_npu *npu, int core, uint32_t offset, uint32_t value)
{
	if (core >= 0 && core < npu->cores)
		rb_sim_core_write(&npu->core[core], offset, value, false);
}

uint32_t rb_sim_npu_mmio_read(struct rb_sim_npu *npu, int core, uint32_t offset)
{
	if (core < 0 || core >= npu->cores)
		return 0;
	return core_read(&npu->core[core], offset);
}

int rb_sim_ran_add(struct rb_sim_npu *npu, int core, const struct rb_timing_task *t)
{
	struct rb_sim_tasks *r = &npu->ran[core];

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct rb_timing_task *v = realloc(r->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = *t;
	return 0;
}

/* Times what every core of the mask ran, together: the tasks that completed before a
 * hang or fault took their time too. Kick times count from the earliest. */
static void time_cores(struct rb_sim_npu *npu, uint32_t core_mask, const uint64_t start_ns[],
		       struct rb_sim_core_result results[])
{
	struct rb_timing_core tc[RB_SIM_MAX_CORES];
	int index[RB_SIM_MAX_CORES];
	uint64_t first = UINT64_MAX;
	size_t n = 0;

	for (int i = 0; i < npu->cores; i++) {
		if (!(core_mask & (1u << i)) || !npu->ran[i].n)
			continue;
		tc[n] = (struct rb_timing_core){
		    .start_ns = start_ns ? start_ns[i] : 0,
		    .tasks = npu->ran[i].v,
		    .n_tasks = npu->ran[i].n,
		};
		first = tc[n].start_ns < first ? tc[n].start_ns : first;
		index[n++] = i;
	}
	for (size_t j = 0; j < n; j++)
		tc[j].start_ns -= first;
	rb_timing_run(&npu->soc, tc, n);
	for (size_t j = 0; j < n; j++)
		results[index[j]].elapsed_ns = tc[j].elapsed_ns;
}

/* One core's run. */
struct core_run {
	struct rb_sim_npu *npu;
	struct rb_sim_core *c;
	struct rb_sim_core_result *res;
	int err;
};

static void core_run_job(void *arg, int i)
{
	struct core_run *r = (struct core_run *)arg + i;

	r->err = rb_sim_pc_run(r->npu, r->c, r->res) < 0 ? -ENOMEM : 0;
}

/* The cores' runs share nothing but what they read (the programs, the IOMMU, A and B)
 * and write disjoint outputs, and a core's result does not depend on the host threads
 * (hw_gemm.c), so cores with work run at once on host threads (the NPU's pool, kept
 * from run to run), sharing the CPUs out; a core whose thread cannot be started runs
 * on the calling thread. Model-only runs do no arithmetic: they stay on the calling
 * thread. */
static int run_cores(struct rb_sim_npu *npu, struct core_run *runs, int n)
{
	bool parallel = n > 1 && npu->threads > 1 && !npu->model_only;
	int share = parallel && npu->threads / n > 1 ? npu->threads / n : 1, err = 0;

	for (int i = 0; i < n; i++)
		runs[i].c->threads = parallel ? share : npu->threads;
	if (parallel)
		rb_sim_pool_run(&npu->pool, n, core_run_job, runs);
	for (int i = 0; !parallel && i < n; i++)
		core_run_job(runs, i);
	for (int i = 0; i < n; i++)
		if (runs[i].err && !err)
			err = runs[i].err;
	return err;
}

/* The cores execute on the host (above); their time comes after, from the timing
 * model, as if together. */
int rb_sim_npu_run_at(struct rb_sim_npu *npu, uint32_t core_mask,
		      const uint64_t start_ns[RB_SIM_MAX_CORES],
		      struct rb_sim_core_result results[RB_SIM_MAX_CORES])
{
	struct core_run runs[RB_SIM_MAX_CORES];
	int n = 0, err;

	if (core_mask >> npu->cores)
		return -EINVAL;
	for (int i = 0; i < npu->cores; i++) {
		struct rb_sim_core *c = &npu->core[i];

		npu->ran[i].n = 0;
		if (!(core_mask & (1u << i)))
			continue;
		memset(&results[i], 0, sizeof(results[i]));
		if (c->start.pending) /* else RB_SIM_IDLE */
			runs[n++] = (struct core_run){npu, c, &results[i], 0};
	}
	err = run_cores(npu, runs, n);
	time_cores(npu, core_mask, start_ns, results);
	return err;
}

int rb_sim_npu_run(struct rb_sim_npu *npu, uint32_t core_mask,
		   struct rb_sim_core_result results[RB_SIM_MAX_CORES])
{
	return rb_sim_npu_run_at(npu, core_mask, NULL, results);
}

void rb_sim_npu_reset(struct rb_sim_npu *npu, int core)
{
	if (core >= 0 && core < npu->cores)
		rb_sim_core_reset(&npu->core[core]);
}
