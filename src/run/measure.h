/* Verify, then measure, one shape on one engine: shared by run, tune and any library
 * user.
 *
 * rb_measure_shape prepares the engine for the inputs (timed apart as setup_us), runs
 * once and checks C against the CPU reference (guard bytes behind C catch overruns),
 * then warms up and samples with rb_measure. A failure is described in m->reason (and
 * rb_last_error()); nothing is printed. A wrong result is not a failure here but r->verify.status
 * RB_VERIFY_FAILED (the caller decides what it means).
 *
 * Profiling (run --perf, --phase): with e->perf set, prepare and the runs after the
 * first are counted per phase by the engine, the check as RB_PHASE_VERIFY; the first
 * run is cold (first touches of every buffer) and not counted. With phase_only, the
 * first run is a full one, then exactly measure->iters runs of that phase alone are
 * sampled on the host clock (no warm-up, no batching, no --min-time). */
#ifndef RB_RUN_MEASURE_H
#define RB_RUN_MEASURE_H

#include <signal.h>
#include <stdbool.h>

#include "numeric/inputs.h"
#include "results/report.h"
#include "core/stats.h"
#include "numeric/verify.h"
#include "run/engine.h"

struct rb_shape_measure {
	const struct rb_measure_opts *measure;
	const struct rb_verify_opts *verify;
	int ref_threads; /* threads of the reference GEMM that checks NPU results */
	/* Optional: when *stop becomes non-zero (a signal handler sets it), sampling ends
	 * and the call returns -EINTR. */
	const volatile sig_atomic_t *stop;
	enum rb_phase phase_only; /* RB_PHASE_NONE, or the NPU phase sampled alone */
	/* Optional: where the reference C of a full verification is kept for the next call
	 * on the same inputs (a tune verifies many configs of one shape). The caller frees
	 * *expected (free) when the inputs change; NULL: computed per call. */
	void **expected;
	/* rb_measure_entry: B bytes from which an engine other than the CPU reference gets
	 * streamed inputs (rb_inputs_init_streamed: B exists once, packed by the device);
	 * 0: RB_INPUTS_STREAM_MIN_B_BYTES, < 0: never. */
	int64_t stream_b_min;
	char reason[512]; /* why the last call failed ("" after success) */
};

/* Returns 0, -EINVAL (the shape or config cannot be planned), -ENOMEM (host memory),
 * -EIO (the device failed), -EFAULT (the device wrote past the end of C) or -EINTR
 * (*stop was set). Fills r->setup_us, r->verify, r->stats, r->batch, and with phase_only
 * r->phase (then r->modeled is false: host times). */
int rb_measure_shape(struct rb_shape_measure *m, struct rb_engine *e, const struct rb_inputs *in,
		     struct rb_result *r);

/* One entry of a shapes file on an open engine: r gets the entry's shape, names and
 * device, seeded inputs are made and measured (rb_measure_shape), then r->config, the
 * reproducer and, with e->perf, the counters. 0 or as rb_measure_shape (a shape whose
 * buffers would not fit: -EINVAL before anything is allocated). */
int rb_measure_entry(struct rb_shape_measure *m, struct rb_engine *e,
		     const struct rb_shape_entry *entry, uint64_t seed, enum rb_data_kind data,
		     struct rb_result *r);

#endif
