/* Engines: what runs one matmul on one device.
 *
 * `run` drives every device through this table: the CPU reference today, the NPU
 * devices (emulated and real) as they arrive. An engine is opened once, prepared once
 * per shape (packing, buffer allocation: the setup time reported apart from run time),
 * then run repeatedly; each run reports the time it took: wall time on the CPU, device
 * time on an NPU, modeled time on the emulator (then `modeled` is true).
 *
 * Ownership: rb_engine_open fills a caller-owned struct rb_engine; rb_engine_close
 * releases what it holds. */
#ifndef RB_CORE_ENGINE_H
#define RB_CORE_ENGINE_H

#include <stdbool.h>

#include <cJSON.h>

#include "core/inputs.h"

struct rb_engine_opts {
	int threads; /* CPU threads; <= 0: one per online CPU */
};

struct rb_engine;

struct rb_engine_ops {
	const char *name;
	const char *description;
	bool modeled;      /* times come from a model */
	bool is_reference; /* this engine is the CPU reference itself */
	int (*open)(struct rb_engine *engine);
	/* Takes the inputs of one shape; they stay valid until the next prepare or close. */
	int (*prepare)(struct rb_engine *engine, const struct rb_inputs *in);
	/* Computes C (M×N of the dtype's output type) and its elapsed time. */
	int (*run)(struct rb_engine *engine, void *c, double *elapsed_us);
	/* The configuration this engine runs with, as a new JSON object. */
	cJSON *(*config)(const struct rb_engine *engine);
	void (*close)(struct rb_engine *engine);
};

struct rb_engine {
	const struct rb_engine_ops *ops;
	struct rb_engine_opts opts;
	const struct rb_inputs *in;
	void *priv;
};

/* The engine named `name` ("cpu", ...), or NULL. */
const struct rb_engine_ops *rb_engine_find(const char *name);
/* The engine `auto` picks on this machine. */
const struct rb_engine_ops *rb_engine_default(void);
/* Engines in table order, NULL-terminated. */
const struct rb_engine_ops *const *rb_engine_list(void);

int rb_engine_open(struct rb_engine *engine, const struct rb_engine_ops *ops,
		   const struct rb_engine_opts *opts);
void rb_engine_close(struct rb_engine *engine);

#endif
