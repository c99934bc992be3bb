/* Matmul shapes: the mat_kernel_size.json file of the ggml-rknn backend.
 *
 * Format (seed backend, §6), with an optional "dtype" at top level or per pair:
 *   {"dtype":"fp16","pairs":[{"src0":{"row":M,"col":K},"src1":{"row":K,"col":N},
 *                            "name":"ffn_up-0","dtype":"int8"}]}
 * C[M×N] = src0[M×K] · src1[K×N]. Pairs with the same M, K, N and dtype are merged into
 * one entry carrying all their names, in order of first appearance. A pair may pin the
 * NPU plan config it runs with ("config": "mask=0x1 ...", the compact form of
 * `rknn-bench plan`); pairs pinned to different configs stay apart. A pair may name the
 * NPU core its context is pinned to ("core": 0, 1 or 2, as `shapes --for ggml-rknn`
 * writes each per-core slice the ggml-rknn backend creates; null or absent: none);
 * pairs pinned to different cores stay apart too.
 *
 * Ownership: a struct rb_shape_list is owned by the caller; _init sets it up empty,
 * _release frees everything it holds. Loaders append to the list. On error they return
 * a negative errno, leave the list as it was, and rb_last_error() holds a message that
 * names the file, the JSON path and the problem. */
#ifndef RKNN_BENCH_SHAPE_H
#define RKNN_BENCH_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum rb_dtype {
	RB_DTYPE_FP16 = 0, /* fp16 × fp16 → fp32 (fp32 accumulation) */
	RB_DTYPE_INT8 = 1, /* int8 × int8 → int32 (exact) */
};

/* Largest accepted dimension (inclusive). */
#define RB_SHAPE_DIM_MAX (INT64_C(1) << 31)

struct rb_shape {
	int64_t m, k, n;
	enum rb_dtype dtype;
};

struct rb_shape_entry {
	struct rb_shape shape;
	char **names;
	size_t n_names;
	char *config; /* the plan config the pairs are pinned to ("config"), or NULL */
	/* The core the pairs' context is pinned to ("core": c gives 1 << c): 0x1, 0x2 or
	 * 0x4; 0 when none (zero-initialized entries are unpinned). */
	unsigned core_mask;
};

struct rb_shape_list {
	struct rb_shape_entry *entries;
	size_t count;
};

void rb_shape_list_init(struct rb_shape_list *list);
void rb_shape_list_release(struct rb_shape_list *list);

/* Reads a shapes file; `path` is used in messages. */
int rb_shape_list_load_file(struct rb_shape_list *list, const char *path);
/* Parses shapes JSON held in memory; `label` stands for the file name in messages. */
int rb_shape_list_load_string(struct rb_shape_list *list, const char *json, size_t len,
			      const char *label);
/* Adds one shape given as "MxKxN" (e.g. "1x2048x8192"), named after the spec. */
int rb_shape_list_add_spec(struct rb_shape_list *list, const char *spec, enum rb_dtype dtype);
/* Adds a shape under a name, merging with an identical shape; a name already used by
 * a different shape is refused. */
int rb_shape_list_add(struct rb_shape_list *list, const struct rb_shape *shape, const char *name);
/* The same for a shape pinned to a plan config (NULL: none); entries are unique per
 * shape and config. */
int rb_shape_list_add_config(struct rb_shape_list *list, const struct rb_shape *shape,
			     const char *name, const char *config);
/* The same for a shape pinned to a config and to a core (core_mask 0x1, 0x2, 0x4; 0:
 * none); entries are unique per shape, config and core. */
int rb_shape_list_add_pinned(struct rb_shape_list *list, const struct rb_shape *shape,
			     const char *name, const char *config, unsigned core_mask);

const char *rb_dtype_name(enum rb_dtype dtype); /* "fp16", "int8" */
/* Same dimensions and dtype. */
bool rb_shape_equal(const struct rb_shape *a, const struct rb_shape *b);
int rb_dtype_parse(const char *text, enum rb_dtype *out); /* 0 or -EINVAL */
/* Bytes of one element of A/B, and of C. */
size_t rb_dtype_in_size(enum rb_dtype dtype);
size_t rb_dtype_out_size(enum rb_dtype dtype);

#ifdef __cplusplus
}
#endif

#endif
