/* A plan as text, on the stream the command hands it: the config as planned, the
 * buffers, per core its range of the split axis and its first `shown` tasks (0: all),
 * then the totals and the notes on what is unproven on silicon. */
#ifndef RB_NPU_PLAN_TEXT_H
#define RB_NPU_PLAN_TEXT_H

#include <stdbool.h>
#include <stdio.h>

#include "npu/plan.h"
#include "rknn_bench/shape.h"

/* after_head (may be NULL) prints what the caller adds below the head (plan: the ranking). */
void rb_plan_print(FILE *out, const struct rb_plan *p, const struct rb_shape_entry *e, long shown,
		   void (*after_head)(FILE *out, const void *ctx), const void *ctx);
/* "MxKxN" of the entry, and whether it has a name of its own (from a shapes file). */
bool rb_plan_entry_spec(const struct rb_shape_entry *e, char *buf, size_t size);

#endif
