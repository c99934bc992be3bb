/* Seeded input matrices for a matmul.
 *
 * `exact` data (the default) uses small integers for A and multiples of 1/8 for B, so
 * that every fp16 product and every fp32 partial sum is exactly representable: the
 * result does not depend on the order of accumulation, which is what lets a device be
 * checked tightly. `uniform` data is uniform in [-1, 1] (fp16) or [-128, 127] (int8). */
#ifndef RB_CORE_INPUTS_H
#define RB_CORE_INPUTS_H

#include <stdint.h>

#include "rknn_bench/shape.h"

enum rb_data_kind {
	RB_DATA_EXACT = 0,
	RB_DATA_UNIFORM,
};

struct rb_inputs {
	struct rb_shape shape;
	void *a; /* M×K, uint16_t (fp16) or int8_t */
	void *b; /* K×N */
};

/* Allocates and fills A and B; returns 0, -ENOMEM or -EOVERFLOW (with a message). */
int rb_inputs_init(struct rb_inputs *in, const struct rb_shape *shape, uint64_t seed,
		   enum rb_data_kind kind);
void rb_inputs_release(struct rb_inputs *in);

/* Allocates an M×N output of the dtype's output type; NULL on failure. */
void *rb_output_alloc(const struct rb_shape *shape);

int rb_data_kind_parse(const char *text, enum rb_data_kind *out);
const char *rb_data_kind_name(enum rb_data_kind kind);

#endif
