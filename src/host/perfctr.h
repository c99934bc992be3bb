/* Host performance counters per phase of a run (run --perf), through perf_event_open.
 *
 * Counted: task-clock (ns), context switches and page faults (software events, in
 * every kernel with perf events), cycles, instructions and cache misses (hardware
 * events, only where the CPU exposes a PMU to this kernel: many VMs do not). An event
 * that cannot be opened is unavailable, with the reason (rb_perf.why); the run goes on.
 *
 * What is counted: the process that opens the counters, from its calling thread and
 * every thread it starts afterwards (inherit: the reference GEMM's workers, the
 * emulator's workers, the threads of --launch threads), user and kernel mode — kernel
 * mode only when perf_event_paranoid allows it (rb_perf.user_only says it did not).
 * Not counted: other processes, and the NPU's own work and the driver's kernel threads
 * on a board (what the kernel does on behalf of an ioctl in the caller's context is).
 *
 * Phases partition the host work of a shape: rb_perfctr_enter(pc, phase) ends the
 * phase being counted (adding its counts) and starts `phase` (RB_PHASE_NONE: count
 * nothing). Every function accepts pc == NULL and then does nothing, so callers need
 * no checks when --perf is off.
 *
 * Ownership: rb_perfctr_open fills a caller-owned struct, rb_perfctr_close releases
 * it. struct rb_perf is plain data (copy it freely). */
#ifndef RB_HOST_PERFCTR_H
#define RB_HOST_PERFCTR_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cJSON.h>

enum rb_perfctr_event {
	RB_PERFCTR_TASK_CLOCK, /* ns on a CPU */
	RB_PERFCTR_CONTEXT_SWITCHES,
	RB_PERFCTR_PAGE_FAULTS,
	RB_PERFCTR_CYCLES,
	RB_PERFCTR_INSTRUCTIONS,
	RB_PERFCTR_CACHE_MISSES,
	RB_PERFCTR_EVENTS,
};

/* Phases index the arrays of struct rb_perf from 1; 0 is no phase (the default of a
 * zeroed struct). */
enum rb_phase {
	RB_PHASE_NONE,
	RB_PHASE_PACK_B,  /* NPU engine prepare: plan, buffers, pack B, programs */
	RB_PHASE_PACK_A,  /* NPU run: pack A, sync to the device */
	RB_PHASE_SUBMIT,  /* NPU run: submit + wait */
	RB_PHASE_UNPACK,  /* NPU run: sync from the device, unpack C */
	RB_PHASE_COMPUTE, /* CPU engine run: the reference GEMM */
	RB_PHASE_VERIFY,  /* checking C against the reference */
	RB_PHASES,
};

#define RB_PERFCTR_WHY 192

/* What a shape's counters add up to. */
struct rb_perf {
	char why[RB_PERFCTR_EVENTS][RB_PERFCTR_WHY]; /* "" when counted, else why not */
	bool user_only;                              /* kernel mode excluded (paranoid) */
	uint64_t runs[RB_PHASES];                    /* times each phase was counted */
	double sum[RB_PHASES][RB_PERFCTR_EVENTS];    /* totals over those runs */
};

struct rb_perfctr {
	int fd[RB_PERFCTR_EVENTS]; /* -1: unavailable */
	enum rb_phase current;
	double start[RB_PERFCTR_EVENTS];
	struct rb_perf perf;
};

/* Opens every event it can (never fails; see rb_perf.why). Counting starts at once. */
void rb_perfctr_open(struct rb_perfctr *pc);
void rb_perfctr_close(struct rb_perfctr *pc);
/* Ends the current phase, adding its counts, and starts `phase`. */
void rb_perfctr_enter(struct rb_perfctr *pc, enum rb_phase phase);
/* Forgets the counts (runs and sums), keeping the reasons. */
void rb_perfctr_reset(struct rb_perfctr *pc);

/* JSON key of an event ("task_clock_ns", "context_switches", ...) and of a phase
 * ("pack_b", "pack_a", "submit", "unpack", "compute", "verify"). */
const char *rb_perfctr_event_name(enum rb_perfctr_event ev);
const char *rb_phase_name(enum rb_phase phase);
/* Why perf_event_open failed with -err (err > 0 is an errno), for rb_perf.why;
 * `paranoid` is kernel.perf_event_paranoid (or INT_MIN when unknown). */
void rb_perfctr_reason(char *buf, size_t size, int err, int paranoid);

/* {"counted": "...", "phases": {"pack_a": {"runs": N, "task_clock_ns": mean, ...}},
 *  "unavailable": {"cycles": "reason"}}: means per run, null for unavailable events;
 * phases that never ran are left out. NULL when out of memory. */
cJSON *rb_perf_json(const struct rb_perf *perf);
/* The table's block: a header line naming `label`, one line per phase that ran. */
void rb_perf_print(FILE *out, const char *label, const struct rb_perf *perf);
/* One line per unavailable event of `perf`, with the reason. */
void rb_perf_print_unavailable(FILE *out, const struct rb_perf *perf);

#endif
