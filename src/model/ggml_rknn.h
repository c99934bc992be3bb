/* What the seed ggml-rknn backend (Mhrooz/llama.cpp d8744d571dc4,
 * ggml/src/ggml-rknn/ggml-rknn.cpp) makes of a pair of its shapes file: whether it can
 * create it at all, and the single-core matmul contexts ("slices") it creates for it.
 * The one place these rules live: `shapes` flags and splits with them, the tune side
 * can ask the same questions.
 *
 * The backend, with its known defects fixed (a kernel is looked up by thread too):
 *   init (ggml_backend_rknn_init): three contexts per pair, one per core 0..2, each with
 *     N' = N/32/3*32 columns, the last with the rest (N - 2·N'); every context is an
 *     fp16 matmul (RKNN_FLOAT16_MM_FLOAT16_TO_FLOAT32) pinned to its core.
 *   run (ggml_rk_mul_mat): T = llama.cpp's thread count (-t for decode, -tb for a
 *     prompt), lowered for some N (below); thread t computes columns
 *     [t·N/T/32·32, (t+1)·N/T/32·32) on the context of its thread with that width: the
 *     init context of core t when the widths agree, else one it creates then, pinned
 *     to core t (t < 3) or to none (t ≥ 3: librknnrt chooses).
 * So a pair is unusable when rknn_matmul_create would get N = 0 (N < 96 at init, or an
 * empty run-time range), when the native layouts cannot hold it (K % 32, N % 16), or
 * when part of C is never computed (the run-time ranges end at N/32·32). */
#ifndef RB_MODEL_GGML_RKNN_H
#define RB_MODEL_GGML_RKNN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rknn_bench/shape.h"

#define RB_GGML_RKNN_CORES 3 /* contexts per pair at init, one per core */
/* Its kernel table (GGML_RKNPU2_MAX_MATMUL_KERNELS, ggml-rknn.cpp 280): a context made
 * when it is full overwrites the first one. */
#define RB_GGML_RKNN_MAX_CONTEXTS 256
#define RB_GGML_RKNN_MAX_THREADS  64 /* run-time thread counts accepted here */
/* Contexts one pair can need: the init ones plus one per run-time thread. */
#define RB_GGML_RKNN_MAX_SLICES (RB_GGML_RKNN_CORES + RB_GGML_RKNN_MAX_THREADS)

/* One context the backend creates for a pair: columns [n_begin, n_end) of B and C. */
struct rb_ggml_rknn_slice {
	int64_t n_begin, n_end;
	int core;     /* 0..2: pinned to that core; -1: no core mask (librknnrt chooses) */
	int thread;   /* the run-time thread that runs it; -1: none (created, never run) */
	bool at_init; /* created by ggml_backend_rknn_init (else at the first run) */
};

/* Whether the backend can create and run `s` with `threads` run-time threads. false
 * with the reason (lower case, naming the numbers) in why[size]; true leaves why "". */
bool rb_ggml_rknn_usable(const struct rb_shape *s, int threads, char *why, size_t size);

/* The columns of each init context but the last (N/32/3*32; the last takes the rest):
 * also the backend's own split that tune measures as its baseline. */
int64_t rb_ggml_rknn_init_share(int64_t n);

/* The run-time thread count the backend uses for N columns when llama.cpp gives it
 * `threads` (ggml_rk_mul_mat lowers it for some N). */
int rb_ggml_rknn_run_threads(int64_t n, int threads);

/* The contexts the backend creates for a usable `s` with `threads` run-time threads:
 * the init ones in core order, then those created at run time, in thread order. Returns
 * their number (at most RB_GGML_RKNN_MAX_SLICES), or -EINVAL (a message) for an
 * unusable pair or a thread count outside 1..RB_GGML_RKNN_MAX_THREADS. */
int rb_ggml_rknn_slices(const struct rb_shape *s, int threads, struct rb_ggml_rknn_slice *out);

#endif
