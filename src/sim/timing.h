/* The emulated NPU's timing model: how long the tasks of one or more cores take, run
 * together in virtual time, from a hardware profile (soc.h). Deterministic: integer
 * arithmetic in picoseconds, the same result on every host and thread count.
 *
 * One task (what hw_conv.c reads from its registers) is
 *   fetch    the PC reads its regcmd words: task.fetch_ns + words · task.ns_per_word;
 *   load     the CNA reads the feature tile (none with DATA_REUSE);
 *   execute  the CNA streams the weights (none with WEIGHT_REUSE) while the MAC array
 *            computes and the DPU writes the output, then task.pipeline_ns of fill and
 *            drain that nothing hides.
 * The MAC array (NVDLA-like CMAC, npu-facts §e, §b.3) takes one row's 32-channel atom
 * against a kernel group (512 / 32 = 16 fp16, 1024 / 32 = 32 int8 kernels) per
 * cycle: partial atoms and groups waste lanes, and a block of weights stays in the
 * array for all rows of the task but takes kernel-group cycles to load, so a task of
 * fewer rows than that (M = 1: decode) is bound by loading weights, not by MACs.
 *
 * A core runs fetch+load and execute as two stages: task i executes after its load
 * and after task i-1 executed. With ping-pong register groups in one kick (chained
 * tasks, npu-facts §a.4), task i+1 is fetched and loaded while task i executes;
 * otherwise a task is fetched and loaded only after the previous one finished.
 *
 * DDR: every load, weight stream and output write is a stream; at every moment the
 * streams of all cores share the bandwidth max-min fairly under three limits — one
 * stream (a DMA engine) at most ddr.gbps_per_stream, one core's streams together at
 * most ddr.gbps_per_core, all cores together at most ddr.gbps_total. So k cores
 * streaming at once each get min(per-stream, per-core, total / k). */
#ifndef RB_SIM_TIMING_H
#define RB_SIM_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw/soc.h"

/* What one task asks of the hardware. */
struct rb_timing_task {
	uint64_t fetch_words;   /* regcmd words the PC fetched */
	uint64_t feature_bytes; /* read by the CNA's feature DMA */
	uint64_t weight_bytes;  /* read by the CNA's weight DMA */
	uint64_t output_bytes;  /* written by the DPU */
	uint64_t cycles;        /* MAC array cycles (rb_timing_cycles) */
	bool overlap;           /* may be fetched and loaded while the previous task executes */
};

/* Cycles of the MAC array for a task of rows × channels × kernels, lane waste
 * included. */
uint64_t rb_timing_cycles(const struct rb_soc_profile *soc, bool int8, uint64_t rows,
			  uint64_t channels, uint64_t kernels);

/* One core's job: its tasks in order, from its kick at start_ns. */
struct rb_timing_core {
	uint64_t start_ns;
	const struct rb_timing_task *tasks;
	size_t n_tasks;
	uint64_t elapsed_ns; /* out: start to the end of the last task (0 without tasks) */
};

/* Runs the cores together; fills every elapsed_ns. */
void rb_timing_run(const struct rb_soc_profile *soc, struct rb_timing_core *cores, size_t n);

#endif
