/* The model-guided default: when no config is given, the planner ranks a small set of
 * candidates with a timing model and takes the best (plan_rank.c); and the host work
 * a plan's result needs, which the ranking adds to the device time (as tune does).
 *
 * The candidates vary what the tuned files show matters per shape class and leave
 * everything the caller fixed alone: the split axis (n, m), the CBUF bank split (the
 * planner's own choice and 1:11 .. 4:8), the K-slice (auto, 1024, 2048, 4096 when
 * narrower than K) and, inside the model, the launch mode. The model is a callback
 * (run/plan_model.c gives the emulator's timing model): the planner's floor cannot
 * reach the emulator.
 *
 * The planner's own auto config comes first; ties go to the earlier candidate.
 * Candidates are compared under fences, then the best RB_PLAN_RANK_LAUNCH_TOP under
 * every launch mode. What a
 * candidate costs to model is the model's business (run/plan_model.c bounds it).
 *
 * Ownership: every struct is plain data owned by the caller. */
#ifndef RB_NPU_PLAN_RANK_H
#define RB_NPU_PLAN_RANK_H

#include <stddef.h>
#include <stdint.h>

#include "dev/npu_device.h"
#include "npu/plan.h"

/* ---- the host part ----
 *
 * Packing A into its cube before a run, unpacking the C cubes and adding the K-slice
 * partial sums after (npu/job.c), modeled for the board's Cortex-A76 as the bytes each
 * phase moves over RB_PLAN_HOST_GBPS (docs/tuned-json.md, "The host part", gives the
 * figure's public source; it is a lower bound). */
#define RB_PLAN_HOST_GBPS 17.0

struct rb_plan_host {
	double pack_a_us; /* read A, write its cube */
	double unpack_us; /* read the first C cube, write C */
	double kslice_us; /* each further K-slice: read its cube, read and write C */
};

void rb_plan_host_model(const struct rb_plan *plan, struct rb_plan_host *h);
/* The sum of the three phases. */
double rb_plan_host_us(const struct rb_plan *plan);

/* ---- the ranking ---- */

#define RB_PLAN_RANK_LAUNCHES 3 /* fences, threads, multicore */
#define RB_PLAN_RANK_MAX      48
/* Tasks per core each candidate's plan lists (rb_plan_init_head): what the model may
 * time of it. */
#define RB_PLAN_RANK_HEAD 384

/* The modeled device time of `plan` under each launch mode of the mask (bit l: launch
 * l), in µs (NAN: not asked, or the launch cannot run it). 0 or a negative errno. */
typedef int (*rb_plan_model_fn)(void *ctx, const struct rb_plan *plan, unsigned launches,
				double device_us[RB_PLAN_RANK_LAUNCHES]);
/* Launch modes differ by the kernel's fixed costs per submit (tens of µs): every
 * candidate is ranked under fences, and the best few under every launch mode. */
#define RB_PLAN_RANK_LAUNCH_TOP 3

struct rb_plan_candidate {
	struct rb_plan_config config; /* as requested: what goes to rb_plan_init */
	enum rb_npu_launch launch;    /* its fastest launch mode */
	double device_us, host_us;    /* modeled; NAN when no launch mode runs it */
	size_t tasks;
	bool modeled;
};

struct rb_plan_ranking {
	struct rb_plan_candidate items[RB_PLAN_RANK_MAX]; /* distinct plans, in the order tried */
	size_t count;
	size_t best;       /* index of the least device + host time */
	size_t duplicates; /* candidates that planned to another's program */
	size_t rejected;   /* candidates the planner refused (or not native, native_b) */
	uint64_t tasks;    /* planned, summed over the candidates */
};

/* Ranks the candidates over `base` (its fixed fields kept; its auto axis, banks and
 * K-slice varied) and fills out. native_b: only candidates whose packed B is the
 * native layout (rb_plan_native_b) besides base itself, for a caller that reads B in
 * place (the executor, the shim: another layout would be a second copy of the
 * weights). launches: the launch modes the device runs (bit l: launch l; fences always
 * counts). 0, -EINVAL when the planner refuses even base (with its message), or the
 * model's error. */
int rb_plan_rank(const struct rb_shape *shape, const struct rb_plan_config *base, bool native_b,
		 unsigned launches, rb_plan_model_fn model, void *ctx, struct rb_plan_ranking *out);
/* Every launch mode: RB_PLAN_RANK_LAUNCHES bits. */
#define RB_PLAN_RANK_ALL_LAUNCHES ((1u << RB_PLAN_RANK_LAUNCHES) - 1)

/* The one-line description of candidate i, e.g. "n 2:10 kslice=auto fences
 * 827.7+12.3 us". */
int rb_plan_candidate_format(const struct rb_plan_ranking *r, size_t i, char *buf, size_t size);

#endif
