/* rknn-bench tune, inside the CLI: options (cmd_tune.c), tuning one shape
 * (tune_shape.c) and the tuned JSON (tune_out.c). */
#ifndef RB_CLI_TUNE_CLI_H
#define RB_CLI_TUNE_CLI_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>

#include "core/inputs.h"
#include "core/stats.h"
#include "core/verify.h"
#include "npu/engine.h"
#include "rknn_bench/shape.h"
#include "tune/tune.h"

enum tune_strategy {
	TUNE_MODEL = 0, /* rank by the timing model, run the best --top on the device */
	TUNE_EXHAUSTIVE,
	TUNE_RANDOM,
};

struct tune_opts {
	struct rb_shape_list shapes;
	char **files;
	int n_files;
	const char *device_name;
	const struct rb_engine_ops *device;
	struct rb_engine_opts engine;
	struct rb_measure_opts measure;
	struct rb_verify_opts verify;
	uint64_t seed;
	enum rb_data_kind data;
	enum tune_strategy strategy;
	long top, max_evals;
	struct rb_tune_space space;
	bool list_space, quiet, verbose;
	const char *out_path;
	const char *cache_path;
	char cache_buf[PATH_MAX];
};

/* What tuning one unique shape found. */
struct tune_best {
	struct rb_shape shape;
	bool found;                 /* a config ran and verified */
	struct rb_tune_point point; /* the fastest such config */
	double median_us;
	char verify[16];
	double default_us, cpu_us; /* NAN when unknown */
	size_t n_space, n_model, n_run, n_failed;
};

/* Everything open while tuning. */
struct tune_run {
	const struct tune_opts *o;
	struct rb_engine device; /* the --device engine */
	struct rb_engine model;  /* sim, model_only: the timing model (strategy model) */
	struct rb_engine cpu;    /* the CPU reference, timed once per shape */
	bool model_open, cpu_open;
	struct rb_tune_header header; /* what the cache was opened with */
	struct rb_tune_cache cache;
	size_t shape_index, n_shapes;
	bool tty;
	double t0_us;
};

/* Tunes every shape of o and writes the output (tune_main.c): an exit code. */
int tune_main(const struct tune_opts *o);

/* Tunes one shape: 0, TUNE_INTERRUPTED (a stop signal, cli_stop_signal: it stops
 * after the config being measured), or an exit code (RB_EXIT_*). */
#define TUNE_INTERRUPTED 130
int tune_shape(struct tune_run *t, const struct rb_shape *shape, const char *label,
	       struct tune_best *best);

/* Writes the tuned JSON: the input files' pairs (in order, every name) with "tuned"
 * and "measured" objects. Returns 0 or an exit code. */
int tune_write_output(const struct tune_run *t, const struct tune_best *best);

/* The command line that replays a config alone on the device. */
void tune_reproducer(const struct tune_opts *o, const struct rb_shape *s,
		     const struct rb_tune_point *p, char *buf, size_t size);

#endif
