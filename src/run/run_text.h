/* What `run` shows on the stream the command hands it: progress lines (core/progress.h)
 * where a shape is an item whose work is 2·M·N·K plus a fixed cost, and the driver an
 * engine runs on ("rknpu 0.9.8 (emulated)", "none (cpu)"). */
#ifndef RB_RUN_RUN_TEXT_H
#define RB_RUN_RUN_TEXT_H

#include <stdio.h>

#include "core/progress.h"
#include "results/report.h"
#include "run/engine.h"

void rb_run_progress_start(struct rb_progress *p, FILE *out, const struct rb_shape_list *l);
void rb_run_progress_shape(struct rb_progress *p, const struct rb_shape_entry *entry,
			   const char *device);
void rb_run_progress_result(struct rb_progress *p, const struct rb_result *r);
void rb_engine_driver_text(const struct rb_engine *e, char *buf, size_t size);

#endif
