/* The emulated NPU's insides, shared by npu.c (MMIO, register groups), hw_pc.c (the
 * PC: fetch, decode, chaining), hw_conv.c (CNA/CORE/DPU: decoding a task from the
 * registers, faults, DMA) and hw_gemm.c (the arithmetic). Not an interface for anything
 * outside src/sim/.
 *
 * Register state (npu-facts §a.4): every block keeps two register groups for its
 * OPERATION_ENABLE (+0x008) and every register after it; S_STATUS and S_POINTER are
 * single. A write (MMIO or regcmd) lands in the group the block's pointer selects; a
 * task executes each block's registers from the group its executer selects. With
 * S_POINTER = 0xE (POINTER_PP_MODE | EXECUTER_PP_EN | POINTER_PP_EN) both toggle after
 * every task the block took part in, so consecutive tasks of a chain alternate groups.
 * Nothing but a reset clears a group: state persists across tasks and jobs. Blocks
 * without S_POINTER (PC, DDMA, SDMA, GLOBAL) use group 0 only. */
#ifndef RB_SIM_NPU_INTERNAL_H
#define RB_SIM_NPU_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/regs.h"
#include "sim/pool.h"
#include "sim/sim.h"
#include "hw/soc.h"
#include "sim/timing.h"

#define RB_SIM_REG_WORDS  (RB_BLOCK_SPAN / 4)
#define RB_SIM_REASON_MAX 256

/* Ping-pong state of one block (§a.4). */
struct rb_sim_pp {
	uint8_t pointer;  /* group that writes land in */
	uint8_t executer; /* group the next task executes */
	uint32_t ctl;     /* S_POINTER as last written, without the W1C and status bits */
};

/* What the CBUF holds after a task, for DATA_REUSE / WEIGHT_REUSE (§c): a new job
 * starts with nothing reusable. */
struct rb_sim_cbuf {
	bool valid;
	uint32_t data_banks, weight_banks;
	uint32_t prec;
	/* the feature tile: its shape and where it was read from */
	uint32_t width, height, channels;
	uint32_t feature_addr, line_stride;
	int32_t surf_stride;
	/* the weights, if they were resident (fitted the weight banks) */
	bool weights_resident;
	uint32_t kernels, kernel_bytes, weight_addr;
};

/* A job latched by PC OPERATION_ENABLE = 1 (§a.3). */
struct rb_sim_start {
	bool pending;
	uint32_t addr;     /* PC.BASE_ADDRESS.PC_SOURCE_ADDR */
	uint32_t amount;   /* PC.REGISTER_AMOUNTS */
	uint32_t tasks;    /* PC.TASK_CON.TASK_NUMBER */
	uint32_t dma_base; /* PC.TASK_DMA_BASE_ADDR */
};

struct rb_sim_core {
	int index;
	int threads; /* host threads for this core's arithmetic in the current run */
	uint32_t regs[RB_BLOCK_COUNT][2][RB_SIM_REG_WORDS];
	struct rb_sim_pp pp[RB_BLOCK_COUNT];
	uint32_t raw_irq;      /* INTERRUPT_RAW_STATUS */
	uint32_t task_counter; /* TASK_STATUS.TASK_COUNTER */
	bool first_task, last_task;
	struct rb_sim_start start;
	struct rb_sim_cbuf cbuf;
	/* A core that hung or faulted stays stopped until reset, like the silicon. */
	enum rb_sim_status wedged;
	char wedged_reason[RB_SIM_REASON_MAX];
};

/* The tasks one core ran in the current rb_sim_npu_run, for the timing model. */
struct rb_sim_tasks {
	struct rb_timing_task *v;
	size_t n, cap;
};

struct rb_sim_scratch; /* hw_gemm.c's */

/* What hw_gemm.c keeps of a core from task to task; owned by the NPU, one per core.
 * f: the weights the core's last task loaded, converted: what a task with WEIGHT_REUSE
 * finds in the CBUF (§c); hw_gemm.c fills, keys and empties it. scratch: its workers'
 * buffers, kept rather than allocated (and faulted in) for every task. */
struct rb_sim_gemm_mem {
	float *f;
	size_t cap; /* floats */
	bool valid;
	/* the key: whose weights, which shape, converted for which kernel family */
	const uint8_t *b;
	int64_t channels, kernels;
	bool int8;
	const char *impl;
	struct rb_sim_scratch **scratch;
	int scratch_n;
	struct rb_sim_pool pool; /* the core's workers, kept from task to task */
};

void rb_sim_gemm_mem_init(struct rb_sim_gemm_mem *m);
void rb_sim_gemm_mem_free(struct rb_sim_gemm_mem *m);

struct rb_sim_npu {
	int cores;
	int threads;        /* resolved: >= 1 */
	bool model_only;    /* every check and DMA mapping, but no arithmetic */
	bool rdma_required; /* the mainline "MRDMA trap" (sim.h) */
	struct rb_sim_iommu iommu;
	struct rb_soc_profile soc;
	struct rb_sim_core core[RB_SIM_MAX_CORES];
	struct rb_sim_tasks ran[RB_SIM_MAX_CORES];
	struct rb_sim_gemm_mem gemm_mem[RB_SIM_MAX_CORES];
	struct rb_sim_pool pool; /* the threads the cores run on, kept from run to run */
};

/* Why a task stopped: status HANG or IOMMU_FAULT and a reason that names the register
 * (the PC prefixes the task). `dma_write` picks the DMA error interrupt bit. */
struct rb_sim_fault {
	enum rb_sim_status status;
	bool dma_write;
	char reason[RB_SIM_REASON_MAX];
};

int rb_sim_hang(struct rb_sim_fault *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int rb_sim_iommu_fault(struct rb_sim_fault *f, bool write, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- npu.c: the register file ---- */

/* Value of a register in the group its block executes. */
uint32_t rb_sim_reg(const struct rb_sim_core *c, enum rb_reg_id id);
/* A field of it, decoded as regs.def's FMT says (signed, byte quantity, ...). */
int64_t rb_sim_field(const struct rb_sim_core *c, enum rb_field_id id);
/* "CNA.CBUF_CON0.DATA_BANK" (a static buffer per call site is the caller's). */
const char *rb_sim_field_name(enum rb_field_id id, char *buf, size_t size);
/* A register write by MMIO or by a regcmd word (from_regcmd: no job start). */
void rb_sim_core_write(struct rb_sim_core *c, uint32_t offset, uint32_t value, bool from_regcmd);
/* After a task: toggle the groups of the blocks it ran (§a.4). */
void rb_sim_core_task_done(struct rb_sim_core *c, uint32_t op_enable);
/* The group a block executes now (for the DPU_0 / DPU_1 interrupt). */
int rb_sim_core_exec_group(const struct rb_sim_core *c, enum rb_block_id b);
void rb_sim_core_reset(struct rb_sim_core *c);

/* ---- hw_pc.c: one job on one core ---- */

/* Runs the latched job to its end; fills res (but elapsed_ns, which the timing model
 * gives from what the tasks asked for, rb_sim_ran_add). 0, or -ENOMEM (res says so
 * too). */
int rb_sim_pc_run(struct rb_sim_npu *npu, struct rb_sim_core *c, struct rb_sim_core_result *res);
/* Records what a completed task asked of the hardware: 0 or -ENOMEM. */
int rb_sim_ran_add(struct rb_sim_npu *npu, int core, const struct rb_timing_task *t);

/* ---- hw_conv.c: one kicked task ---- */

struct rb_sim_exec {
	struct rb_sim_npu *npu;
	struct rb_sim_core *core;
	uint32_t op_enable; /* the kick's block bitmap */
	uint32_t dma_base;  /* PC.TASK_DMA_BASE_ADDR, added to every data address */
	bool first_in_job;
	bool pingpong; /* PC TASK_PP_EN: the next task's registers load meanwhile */
	uint64_t regcmd_bytes;
	struct rb_timing_task timing; /* out: what the task asks of the hardware */
};

/* Executes the convolution the registers describe; 0, a fault (-1, f filled) or
 * -ENOMEM. */
int rb_sim_conv_run(struct rb_sim_exec *x, struct rb_sim_fault *f);

/* ---- hw_gemm.c: the arithmetic of a 1×1 convolution on NPU layouts ---- */

/* What hw_conv.c resolved: host pointers for every surface the DMAs touch. Pixel p
 * (p = h·width + w) of channel group g of the feature starts at
 * a_surf[g] + h·a_line + w·16; kernel n's 32-channel block b starts at
 * b + (n / kg)·kg·kernel_bytes + (b·kg + n % kg)·32·bpe (§b.3); output channel n of
 * pixel p goes to c_surf[n / c2_out] + (h·(width + notch) + w)·16 + (n % c2_out)·esize,
 * written only if c_surf[...] is not NULL and the sub-surface index (n % kb) / c2_out
 * is at most size_e of the pixel's line (§b.4). */
struct rb_sim_gemm {
	bool int8;    /* int8 in, int32 out; else fp16 in */
	int out_prec; /* enum rb_npu_prec: FP32, FP16 or INT32 */
	int64_t width, height, channels, kernels;
	const uint8_t *const *a_surf;
	int64_t a_line;
	const uint8_t *b;
	int64_t kernel_bytes;
	uint8_t *const *c_surf;
	int64_t notch;
	unsigned kb, c2_out;
	unsigned size_e[3]; /* first, middle, last line */
	int threads;
	/* The core's memory (or NULL); weight_reuse: the task claims WEIGHT_REUSE (checked
	 * against the CBUF's state); weights_resident: they fit the banks. */
	struct rb_sim_gemm_mem *mem;
	bool weight_reuse, weights_resident;
};

int rb_sim_gemm_run(const struct rb_sim_gemm *g);
/* The kernel family rb_sim_gemm_run uses: "avx512" (two kernels per register),
 * "avx2" (AVX2+FMA, F16C) or "portable"; all give the same bits. */
const char *rb_sim_gemm_impl(void);
/* For tests and benchmarks: use the family `name` (one rb_sim_gemm_impl can name);
 * NULL restores the automatic choice. Returns 0, -ENOTSUP when this CPU or build lacks
 * it, or -EINVAL for an unknown name. */
int rb_sim_gemm_force_impl(const char *name);

#endif
