/* Program validation before submit: every task of a job is checked against the rules
 * the emulator enforces while it runs (hw/conv.h holds the ones both share), so a bad
 * program is refused before it reaches a device, real or emulated.
 *
 * What is checked, per task, following each submit's chain like the PC does (§a.1-§a.3):
 *  - the fetch: (amount + 1)·2 words inside the regcmd buffer, the amount of the first
 *    task from the descriptor's regcfg_amount by the kernel's formula (§a.3);
 *  - every word decodes through the register database: a known target, a register at
 *    the offset, no value bits outside the register's fields (their widths), the sync
 *    and op-enable words well formed, op-enable the last word fetched;
 *  - the op-enable word: CNA, CORE and DPU, no PPU, DPU_RDMA only with MRDMA_DISABLE,
 *    and DPU_RDMA in every task under mainline rocket (rdma_required, §a.6);
 *  - DATA_BANK + WEIGHT_BANK within the CBUF;
 *  - every DMA range (feature per channel group, weights, output per sub-surface, as
 *    the emulator computes them) inside one data buffer of the job, and every output
 *    sub-surface written (DPU SIZE_E: the emulator, like the silicon, just skips the
 *    others, leaving C partly unwritten);
 *  - the tail: PC.BASE_ADDRESS and PC.REGISTER_AMOUNTS name the next task of the submit
 *    (its address, and the amount formula of its body), and are 0 in the last task.
 * Registers are tracked in program order: the programs rewrite every register a task
 * reads, so that is what each task's executing register group holds (§a.4).
 *
 * The error message names the task (index in the job), the core and the register:
 * "task 3 (core 1): CNA.FEATURE_DATA_ADDR: channel group 0 at 0x00001000 + 64 bytes is
 * outside every buffer of this job". Returns 0 or -ENOEXEC (rb_last_error() says why). */
#ifndef RB_NPU_VALIDATE_H
#define RB_NPU_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A buffer the job's DMAs may reach. */
struct rb_validate_buf {
	const char *name;
	uint32_t addr;
	uint64_t size;
};

/* Where a task's program lies, as its descriptor says. */
struct rb_validate_task {
	uint32_t regcmd_addr;
	uint32_t regcfg_amount; /* body words, without the 4-word tail */
};

/* One submit: n_tasks consecutive tasks run as one chain on one core. */
struct rb_validate_chain {
	unsigned core;
	uint32_t first, n_tasks;
};

struct rb_validate_job {
	const uint64_t *regcmd; /* the regcmd buffer as the host sees it */
	uint32_t regcmd_addr;   /* its NPU address */
	uint64_t regcmd_bytes;
	const struct rb_validate_task *tasks; /* every task of the job, by index */
	const struct rb_validate_chain *chains;
	size_t n_chains;
	const struct rb_validate_buf *bufs; /* the data buffers */
	size_t n_bufs;
	uint32_t cbuf_banks;
	bool rdma_required; /* mainline rocket: every task must run DPU_RDMA (§a.6) */
};

int rb_validate_job(const struct rb_validate_job *job);

#endif
