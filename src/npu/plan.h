/* The planner: a matmul shape and a config → per-core lists of NPU tasks.
 *
 * The matmul C[M×N] = A[M×K]·B[K×N] is cut along one axis (N, or M for prefill shapes)
 * into one contiguous range per core; each core's range is cut into tasks whose
 * feature rows fit the CBUF data banks and whose kernels fit the weight banks
 * (npu-facts §c), and K is cut into K-slices when one kernel would not fit a bank.
 *
 * Buffers (all offsets below are bytes from the start of the buffer; bpe = 2 fp16,
 * 1 int8; K_pad = K rounded up to 32, N_pad = N rounded up to the kernel group KG,
 * 16 fp16 / 32 int8; C2_in = 16/bpe; C2_out = 4 fp32/int32, 8 fp16; ob = 16/C2_out):
 *   A  one NC1HWC2 cube of H = M rows, K_pad channels (§b.2): K_pad·M·bpe bytes.
 *      Task (m0, k0): a_addr = (k0/C2_in)·M·16 + m0·16, a_height = M (strides from the
 *      full height, §b.2 "splitting rows across tasks while keeping one big cube").
 *   B  packed per K-slice (§b.3): slice s at s·N_pad·k_slice·bpe, N_pad·ks·bpe bytes
 *      (ks = that slice's width: k_slice, the last one possibly narrower); inside it
 *      kernel group n0 at n0·ks·bpe. Total N_pad·K_pad·bpe bytes.
 *   C  one NC1HWC2 cube of H = M rows, N_pad channels per K-slice (§b.4), the cubes
 *      back to back: cube s at s·N_pad·M·ob. Task (m0, n0, s): c_addr =
 *      s·N_pad·M·ob + (n0/C2_out)·M·16 + m0·16, c_height = M. The host adds the
 *      K-slice cubes (fp32 / int32; fp16 partials are added as fp16 values).
 * rb_plan_task_resolve() turns offsets into NPU addresses given the buffer bases.
 *
 * Ownership: struct rb_plan is owned by the caller; rb_plan_init fills it (on error
 * it holds nothing and rb_last_error() names the constraint), rb_plan_release frees
 * the task lists. Configs are plain values. */
#ifndef RB_NPU_PLAN_H
#define RB_NPU_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "hw/task.h"
#include "hw/soc.h"
#include "rknn_bench/shape.h"

#define RB_PLAN_MAX_CORES  RB_HW_MAX_CORES
#define RB_PLAN_WEIGHT_MAX 1000 /* largest weight of a weighted split */
#define RB_PLAN_MAX_TASKS  (1u << 20)
/* Chained tasks per submit: TASK_NUMBER is 12 bits (§c field-width limits). */
#define RB_PLAN_TASKS_PER_SUBMIT 4095

enum rb_plan_axis {
	RB_PLAN_AXIS_AUTO = 0, /* M when M > N_pad (prefill), else N */
	RB_PLAN_AXIS_N,
	RB_PLAN_AXIS_M,
};

enum rb_plan_residency {
	RB_PLAN_RESIDENT = 0, /* every task's weights fit its weight banks */
	RB_PLAN_STREAMED,     /* tasks may exceed them (MTX 1×8192×8192): unproven */
};

enum rb_plan_out {
	RB_PLAN_OUT_AUTO = 0, /* fp32 for fp16 input, int32 for int8 */
	RB_PLAN_OUT_FP32,
	RB_PLAN_OUT_FP16,
	RB_PLAN_OUT_INT32,
};

/* Zero / AUTO fields are chosen by the planner; rb_plan.config holds the choice. */
struct rb_plan_config {
	unsigned core_mask; /* 0x1..0x7: the cores taking part (0x5, 0x6 are fine) */
	enum rb_plan_axis axis;
	unsigned n_weights; /* 0: even split; else one weight per core, in core order */
	unsigned weights[RB_PLAN_MAX_CORES];
	unsigned align;        /* cut points: 0 (the kernel group), 16, 32 or 64 */
	unsigned data_banks;   /* D, 0 auto; D + W ≤ 12 */
	unsigned weight_banks; /* W, 0 auto */
	unsigned k_slice;      /* channels per K-slice, a multiple of 32; 0 auto */
	enum rb_plan_residency residency;
	bool chain; /* one submit per core for all its tasks, else one per task */
	enum rb_plan_out out;
	bool mainline; /* rocket-safe program variant (§a.6); pads M to a multiple of 4 (§b.2) */
	/* CBUF_CON0 WEIGHT_REUSE on a chained task whose weights are the previous task's
	 * (§c): the CNA skips their DMA. Unproven on silicon for rknn-bench. */
	bool weight_reuse;
};

/* One task and where it sits in the matmul. */
struct rb_plan_task {
	struct rb_npu_task npu; /* a_addr, b_addr, c_addr: offsets into A, B, C */
	uint32_t m0, k0, n0;    /* first row, channel and kernel (padded coordinates) */
	uint32_t kslice;        /* K-slice index = the C cube written */
	uint64_t feature_bytes; /* m·k·bpe read from A */
	uint64_t weight_bytes;  /* n·k·bpe read from B */
	uint64_t output_bytes;  /* m·n·out-size written to C */
	bool streamed;          /* weights exceed the weight banks */
	/* npu.weight_reuse is set (and weight_bytes is 0) when the previous task of the
	 * same submit left these very weights resident in the CBUF. */
};

struct rb_plan_core {
	unsigned core;       /* NPU core 0..2 */
	uint32_t begin, end; /* its range of the split axis: rows, or padded kernels */
	struct rb_plan_task *tasks;
	size_t n_tasks;
	size_t n_listed; /* tasks in `tasks`: n_tasks, but at most `head` in a head plan */
	size_t n_submits;
	/* NULL: submits of RB_PLAN_TASKS_PER_SUBMIT tasks (chain) or of one; else where
	 * each of the n_submits ends (one past its last task), cut by rb_plan_fit_timeout */
	uint32_t *submit_ends;
	uint64_t feature_bytes, weight_bytes, output_bytes;
};

/* What rb_plan_fit_timeout did (plan_timeout.c); all zero when it did not run. */
struct rb_plan_timeout_fit {
	double clock_mhz;    /* the profile's NPU clock the times are modeled at */
	unsigned timeout_ms; /* the kernel's job timeout */
	uint64_t limit_ns;   /* half of it: the most a submit may model */
	uint64_t unsplit_ns; /* the longest submit as the plan cut them, modeled */
	uint64_t longest_ns; /* the longest submit after the fit, modeled */
	size_t submits_before, submits_after;
};

struct rb_plan {
	struct rb_shape shape;
	struct rb_plan_config requested; /* as given */
	struct rb_plan_config config;    /* as planned: no auto value left */
	enum rb_npu_prec out;
	uint32_t bpe, out_bpe;       /* bytes per element of A/B and of C */
	uint32_t kernel_group;       /* KG: 16 fp16, 32 int8 */
	uint32_t c2_in, c2_out;      /* NC1HWC2 atoms of A and C */
	uint32_t m, k_pad, n_pad;    /* padded matmul */
	uint32_t k_slice, n_kslices; /* K-slice width (last may be narrower) and count */
	uint32_t m_cap, n_cap;       /* most rows and kernels one task may take */
	uint64_t a_bytes, b_bytes;
	uint64_t c_cube_bytes, c_bytes; /* one K-slice cube; all of them */
	bool streamed;                  /* some task streams its weights: unproven on silicon */
	bool weight_reuse;              /* some task reuses its weights: unproven on silicon */
	size_t head;                    /* 0; else a head plan (rb_plan_init_head) */
	unsigned n_cores;
	struct rb_plan_core cores[RB_PLAN_MAX_CORES];
	/* totals over the cores */
	size_t n_tasks, n_submits;
	uint64_t feature_bytes, weight_bytes, output_bytes;
	uint64_t max_core_bytes; /* bytes moved by the busiest core */
	struct rb_plan_timeout_fit timeout_fit;
};

/* NPU base addresses of the three buffers (16-byte aligned). */
struct rb_plan_bases {
	uint32_t a, b, c;
};

/* Everything auto, all three cores, resident weights, chained, weight reuse on. */
void rb_plan_config_init(struct rb_plan_config *cfg);
/* The default for a shape: init plus axis, alignment and output precision chosen; banks
 * and K-slice stay auto (the planner picks them). Plans every shape up to the limits. */
void rb_plan_config_default(struct rb_plan_config *cfg, const struct rb_shape *shape,
			    unsigned core_mask);
/* Sets one key of the compact form (mask, split, axis, weights, align, banks, dbanks,
 * wbanks, kslice, res, chain, out, mainline, wreuse) from text. 0 or -EINVAL. */
int rb_plan_config_set(struct rb_plan_config *cfg, const char *key, const char *value);
/* Applies a compact config string, e.g. "mask=0x7 split=n:1,1,1 align=32 banks=4:8
 * kslice=0 res=resident chain=1 out=fp32 mainline=0 wreuse=1", on top of cfg; keys not given
 * keep their value. On error cfg is unchanged. */
int rb_plan_config_parse(struct rb_plan_config *cfg, const char *text);
/* Writes the compact form (all keys); returns what snprintf returns. */
int rb_plan_config_format(const struct rb_plan_config *cfg, char *buf, size_t size);
/* Checks a config against a shape: 0 or -EINVAL naming the constraint. */
int rb_plan_config_check(const struct rb_plan_config *cfg, const struct rb_shape *shape);

/* What the plan asks of the silicon that no board has confirmed for rknn-bench yet:
 * streamed weights or weight reuse. The tuned JSON and reports say so. */
bool rb_plan_unproven(const struct rb_plan *plan);

int rb_plan_init(struct rb_plan *plan, const struct rb_shape *shape,
		 const struct rb_plan_config *cfg);
/* A head plan: what rb_plan_init plans, but each core lists only its first `head` tasks
 * (n_listed); task, submit and core counts are the whole plan's, the byte totals those of
 * the listed tasks. For a model that times the first tasks and scales (run/plan_model.c):
 * the lm head of a model file has 60 k tasks per candidate. Not for a job. */
int rb_plan_init_head(struct rb_plan *plan, const struct rb_shape *shape,
		      const struct rb_plan_config *cfg, size_t head);
void rb_plan_release(struct rb_plan *plan);
/* Whether the plan's packed B is byte for byte the rknn matmul API's native B layout
 * (RK3588: (N/16, K/32, 16, 32) fp16, (N/32, K/32, 32, 32) int8, in segments of 8192
 * rows of K): no padding, and no K-slice for K <= 8192, else K-slices of exactly 8192.
 * Then a native B in the caller's memory is what the NPU reads, with no copy. */
bool rb_plan_native_b(const struct rb_plan *plan);
/* Cuts every core's submits (rb_plan_core.submit_ends) so that none models above half
 * of the kernel's job timeout at the profile's clock (plan_timeout.c): the rocket
 * kernel resets a core whose job passes 500 ms, and a mainline board runs the NPU at
 * 200 MHz. kick_per_task: the kernel kicks each task alone, with its fixed costs
 * (rocket). A task that starts a new submit loses its weight reuse. Records what it did
 * in plan->timeout_fit. 0, -EINVAL (timeout 0) or -ENOMEM. */
int rb_plan_fit_timeout(struct rb_plan *plan, const struct rb_soc_profile *soc, unsigned timeout_ms,
			bool kick_per_task);
/* One sentence on the fit for `plan` and reports ("" when it did not run), naming the
 * driver ("rocket"); returns what snprintf returns. */
int rb_plan_timeout_note(const struct rb_plan *plan, const char *driver, char *buf, size_t size);

/* Whether two configs ask the planner for the same thing (the weights past n_weights
 * do not count). */
bool rb_plan_config_equal(const struct rb_plan_config *a, const struct rb_plan_config *b);

/* The task with NPU addresses: offsets plus bases. -ERANGE if an address range would
 * pass 4 GiB, -EINVAL if a base is not 16-byte aligned. */
int rb_plan_task_resolve(const struct rb_plan *plan, const struct rb_plan_task *task,
			 const struct rb_plan_bases *bases, struct rb_npu_task *out);

/* Bytes the task's NPU reads/writes span from its a/b/c offset (inclusive start,
 * exclusive end), for bounds checks and BO sizing. */
uint64_t rb_plan_task_a_span(const struct rb_plan *plan, const struct rb_plan_task *task);
uint64_t rb_plan_task_b_span(const struct rb_plan *plan, const struct rb_plan_task *task);
uint64_t rb_plan_task_c_span(const struct rb_plan *plan, const struct rb_plan_task *task);

const char *rb_plan_axis_name(enum rb_plan_axis axis);          /* "auto", "n", "m" */
const char *rb_plan_residency_name(enum rb_plan_residency res); /* "resident", ... */
const char *rb_plan_out_name(enum rb_plan_out out);             /* "auto", "fp32", ... */
const char *rb_plan_prec_name(enum rb_npu_prec prec);           /* "fp32", "int32", ... */

/* Appends `plan` as an object to the JSON array (plan_json.c): name, shape, configs
 * (as planned and as requested), settings, padded sizes, buffers, totals, cores with
 * their tasks. False when out of memory. */
bool rb_plan_json_add(cJSON *array, const struct rb_plan *plan, const char *name);

/* The document of `plan --format json`: {"schema", "context", "results": one
 * rb_plan_json_add object per plan, named after shapes->entries[i]}. NULL when out of
 * memory. */
cJSON *rb_plans_json(const struct rb_plan *plans, const struct rb_shape_list *shapes);

#endif
