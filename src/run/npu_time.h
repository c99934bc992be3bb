/* The NPU time of a process: how long its NPU was busy with its runs, counted once where
 * runs overlapped. Each run reports its window on the device clock (the emulator's
 * virtual clock, or CLOCK_MONOTONIC on a board: rb_npu_job_times); runs on different
 * cores that overlap in that clock ran at the same time, so the time is the length of
 * the union of the windows.
 *
 * A run reports its window after it ends, and threads report in any order, so windows
 * are kept and merged. Memory stays bounded: when RB_NPU_TIME_SPANS are kept, the
 * merged windows but the newest quarter are folded into a sum, and a window reported
 * later that reaches into the folded time counts only its part after it (it can only
 * count less there, never twice).
 *
 * Ownership and threads: the caller owns the struct (_init/_release); every function
 * takes its lock, so any thread may add at any time. */
#ifndef RB_RUN_NPU_TIME_H
#define RB_RUN_NPU_TIME_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RB_NPU_TIME_SPANS 256

struct rb_npu_time_span {
	uint64_t begin, end; /* ns on the device clock, begin <= end */
};

struct rb_npu_time {
	pthread_mutex_t lock;
	struct rb_npu_time_span spans[RB_NPU_TIME_SPANS];
	size_t n;
	uint64_t folded_ns;  /* the length of the windows folded away */
	uint64_t folded_end; /* where the folded time ends */
	unsigned long runs, tuned_runs;
};

void rb_npu_time_init(struct rb_npu_time *t);
void rb_npu_time_release(struct rb_npu_time *t);
/* One run's window; tuned: the run's config came from a tuned file. */
void rb_npu_time_add(struct rb_npu_time *t, uint64_t begin_ns, uint64_t end_ns, bool tuned);
/* The union of every window so far, in ns, and the run counts (either may be NULL). */
uint64_t rb_npu_time_ns(struct rb_npu_time *t, unsigned long *runs, unsigned long *tuned_runs);

#endif
