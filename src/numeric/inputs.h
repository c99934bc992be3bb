/* Seeded input matrices for a matmul.
 *
 * `exact` data (the default) uses small integers for A and multiples of 1/8 for B, so
 * that every fp16 product and every fp32 partial sum is exactly representable: the
 * result does not depend on the order of accumulation, which is what lets a device be
 * checked tightly. `uniform` data is uniform in [-1, 1] (fp16) or [-128, 127] (int8).
 *
 * Why exact data is exact (fp16): A holds integers in [-4, 4] and B multiples of 1/8 in
 * [-1, 1], all exact in fp16. A product a·b is p/8 with |p| <= 32, exact in fp16 (11
 * significant bits). A partial sum of K products is s/8 with |s| <= 32·K; fp32 holds
 * every s/8 with |s| <= 2^24 exactly, so every partial sum, in any order, is exact for
 * K <= 2^19 = 524288. Past that only a sum near the worst case can round (random data
 * stays far below it), but the guarantee is gone. An fp16 accumulator would only be
 * exact for K <= 64.
 *
 * int8: both kinds are uniform in [-128, 127] for A and B. A product is at most
 * (-128)·(-128) = 2^14, so int32 accumulation is exact while K·2^14 < 2^31, i.e. for
 * K < 131072 = 2^17. Beyond that a worst-case sum wraps modulo 2^32, as int32 hardware
 * does; verification then holds only if the reference wraps the same way.
 *
 * The stream is splitmix64 (core/rng.h): A and B use two seeds drawn from `seed`, so
 * the same seed gives the same B for shapes that differ only in M. */
#ifndef RB_NUMERIC_INPUTS_H
#define RB_NUMERIC_INPUTS_H

#include <stdbool.h>
#include <stdint.h>

#include "rknn_bench/shape.h"

enum rb_data_kind {
	RB_DATA_EXACT = 0,
	RB_DATA_UNIFORM,
};

struct rb_inputs {
	struct rb_shape shape;
	void *a; /* M×K, uint16_t (fp16) or int8_t */
	void *b; /* K×N; NULL when streamed */
	/* Unique to one rb_inputs_init (0: matrices made elsewhere): what a device derived
	 * from B, its packed weights, may be kept under it, as A and B never change after
	 * init. */
	uint64_t serial;
	/* B's stream: element (k, n) is element k·N + n of the splitmix stream from b_seed,
	 * so any block of B can be made on its own (rb_inputs_b_block). */
	uint64_t b_seed;
	enum rb_data_kind kind;
	bool b_streamed; /* B is never held whole: b is NULL, blocks come from the stream */
};

/* Buffers are 64-byte aligned (free with free()). */
#define RB_INPUTS_ALIGN 64

/* What A, B and C are allocated with: RB_INPUTS_ALIGN-aligned, and a buffer of 2 MiB or
 * more 2 MiB-aligned and advised onto transparent huge pages. NULL if out of memory.
 * Free with free(). */
void *rb_inputs_alloc(size_t bytes);

/* Allocates and fills A and B; returns 0, -EINVAL (a dimension outside [1, 2^31] or an
 * unknown dtype), -ENOMEM or -EOVERFLOW (A, B or C larger than size_t can count), with
 * a message. On error *in is left empty. */
int rb_inputs_init(struct rb_inputs *in, const struct rb_shape *shape, uint64_t seed,
		   enum rb_data_kind kind);
/* The same inputs with B streamed: A is filled, B is not allocated; every block of it
 * comes from rb_inputs_b_block, with the same values rb_inputs_init would give. For
 * large weights, where a device packs B into a buffer of its own: B then exists once,
 * in the device's layout, instead of twice. Same errors (the memory check counts A and
 * two C, not B). */
int rb_inputs_init_streamed(struct rb_inputs *in, const struct rb_shape *shape, uint64_t seed,
			    enum rb_data_kind kind);
/* Bytes of B from which `run` streams B to a device that packs it (rb_measure_entry):
 * below it a second copy costs little and the whole B is one fill pass less. */
#define RB_INPUTS_STREAM_MIN_B_BYTES (INT64_C(64) << 20)
/* Whether in has a B (held, or streamed). */
bool rb_inputs_has_b(const struct rb_inputs *in);
/* Rows [k0, k0 + rows) and columns [n0, n0 + cols) of B (inside K×N) into dst, a
 * rows×cols row-major block: copied from B when held, made from the stream when
 * streamed (the same values). `threads` <= 0: one per online CPU; small blocks are
 * made on the calling thread. */
void rb_inputs_b_block(const struct rb_inputs *in, int64_t k0, int64_t rows, int64_t n0,
		       int64_t cols, void *dst, int threads);
/* Calls fn(ctx, block, n0, cols) for every block of `width` columns of B (the last one
 * may be narrower): block holds rows 0..K-1 of columns [n0, n0 + cols), row-major
 * K×cols. `threads` threads (<= 0: one per online CPU) each make blocks of their own
 * (rb_inputs_b_block) and take them in turn, so fn runs concurrently on disjoint
 * columns. Stops at the first error fn returns and returns it (with its message), or
 * 0, or -ENOMEM. */
typedef int (*rb_inputs_block_fn)(void *ctx, const void *block, int64_t n0, int64_t cols);
int rb_inputs_b_columns(const struct rb_inputs *in, int64_t width, int threads,
			rb_inputs_block_fn fn, void *ctx);
/* Frees A and B; safe on an empty or zeroed struct. */
void rb_inputs_release(struct rb_inputs *in);

/* Allocates an M×N output of the dtype's output type (float for fp16, int32_t for
 * int8), 64-byte aligned; free with free(). Every byte is set to RB_OUTPUT_POISON so
 * that an element a device fails to write is caught by verification: as a float it is
 * 3.39e38, far from any result; as an int32 it is 2139062143, more than any int8 result
 * reaches for K <= 130558. NULL with errno ENOMEM, EOVERFLOW or EINVAL, and a message,
 * on failure. */
void *rb_output_alloc(const struct rb_shape *shape);
#define RB_OUTPUT_POISON 0x7f

int rb_data_kind_parse(const char *text, enum rb_data_kind *out); /* 0 or -EINVAL */
const char *rb_data_kind_name(enum rb_data_kind kind);            /* "exact", "uniform" */

#endif
