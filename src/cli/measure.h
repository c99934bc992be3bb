/* Verify, then measure, one shape on one engine: shared by run and tune.
 *
 * cli_measure_shape prepares the engine for the inputs (timed apart as setup_us), runs
 * once and checks C against the CPU reference (guard bytes behind C catch overruns),
 * then warms up and samples with rb_measure. A failure is described in m->reason and,
 * unless m->quiet, printed; a wrong result is not a failure here but r->verify.status
 * RB_VERIFY_FAILED (the caller decides what it means).
 *
 * Profiling (run --perf, --phase): with e->perf set, prepare and the runs after the
 * first are counted per phase by the engine, the check as RB_PHASE_VERIFY; the first
 * run is cold (first touches of every buffer) and not counted. With phase_only, the
 * first run is a full one, then exactly measure->iters runs of that phase alone are
 * sampled on the host clock (no warm-up, no batching, no --min-time). */
#ifndef RB_CLI_MEASURE_H
#define RB_CLI_MEASURE_H

#include <stdbool.h>

#include "core/inputs.h"
#include "core/report.h"
#include "core/stats.h"
#include "core/verify.h"
#include "npu/engine.h"

struct cli_measure {
	const struct rb_measure_opts *measure;
	const struct rb_verify_opts *verify;
	int ref_threads;          /* threads of the reference GEMM that checks NPU results */
	bool quiet;               /* keep failures in `reason` only */
	bool stoppable;           /* a stop signal (cli_stop_signal) ends the sampling: 128 + sig */
	enum rb_phase phase_only; /* RB_PHASE_NONE, or the NPU phase sampled alone */
	char reason[512];         /* why the last call failed ("" after success) */
};

/* Returns 0 or an exit code: RB_EXIT_USAGE (cannot plan, out of memory),
 * RB_EXIT_DEVICE (the device failed), RB_EXIT_FAIL (C overrun), 128 + a signal
 * (stoppable). Fills r->setup_us, r->verify, r->stats, r->batch, and with phase_only
 * r->phase (then r->modeled is false: host times). */
int cli_measure_shape(struct cli_measure *m, struct rb_engine *e, const struct rb_inputs *in,
		      struct rb_result *r);

#endif
