/* Fault injection for the NPU path (RKNN_BENCH_DEBUG=fault_<kind>, core/debug.h).
 *
 * Each fault breaks the first task of a job the way a generator bug or a corrupted
 * buffer would, so the tests can prove that the device (or the emulator) reports it
 * as documented and that nothing crashes:
 *   fault_word    word 1 gets an unknown target code        -> device error (hang)
 *   fault_banks   CBUF DATA_BANK 8 + WEIGHT_BANK 8 > 12      -> device error (hang)
 *   fault_tail    the first chained tail loses its address   -> device error (stalled chain)
 *   fault_size_e  DPU SIZE_E of fp16 output with fp32 output -> missing output: verify fails
 *   fault_dma     feature address outside every buffer       -> device error (IOMMU fault)
 *   fault_mask5   the submit asks for core mask 0x5          -> device error (never runs)
 *   fault_hang_once  the first launch of each job finds word 1 broken as fault_word,
 *                 later ones the program intact               -> timeout, reset, retry: ok
 *   fault_no_rdma a rocket device keeps the vendor program variant (mainline=0)
 *                                                             -> device error (DPU_RDMA)
 *   fault_no_sync the runner skips the sync of A to the device after packing it (rknpu
 *                 MEM_SYNC, rocket FINI_BO): under the emulated CPU cache
 *                 (rb_sim_config.cpu_cache) the NPU reads stale A -> verify fails
 * On rocket, fault_tail and fault_mask5 change nothing: the kernel kicks one task at a
 * time (no chain is followed) and has no core masks.
 */
#ifndef RB_NPU_FAULT_H
#define RB_NPU_FAULT_H

#include <stddef.h>
#include <stdint.h>

/* Applies the program faults that are enabled to the first task of `words` (a chain of
 * n words); returns how many were applied. */
int rb_fault_inject_program(uint64_t *words, size_t n);
/* The core mask a submit should carry: `mask`, or 0x5 under fault_mask5. */
uint32_t rb_fault_core_mask(uint32_t mask);
/* Under fault_hang_once, breaks *word (word 1 of a program) as fault_word does and
 * returns 1; the job runner applies it to the first launch of each job only. */
int rb_fault_hang_once(uint64_t *word);
/* fault_no_rdma: rocket devices keep the plan's mainline flag as given. */
int rb_fault_no_rdma(void);
/* fault_no_sync: the job runner leaves A's CPU writes in the CPU's cache. */
int rb_fault_no_sync(void);

#endif
