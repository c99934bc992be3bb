/* The job runner: one matmul on an NPU device, through the vendor driver ABI.
 *
 * prepare (once per shape and plan, like a backend at model load): allocate buffer
 * objects (A cube, packed B, C cubes, one regcmd and one task array per core), pack B
 * (and its K-slices), encode every core's program (npu/regcmd) and task descriptors.
 * run (timed): pack A, submit one job per core of the plan (non-blocking submits with
 * out-fences, one blocking submit per core from its own thread like the seed backend,
 * or one multi-core submit), wait for all, unpack C (adding K-slices on the host).
 *
 * Device time is measured on the transport's clock from the first submit to the last
 * completion: CLOCK_MONOTONIC on a board, the virtual clock on the emulator (then the
 * device is `modeled`). Host time per phase is reported apart.
 *
 * Ownership: rb_npu_device_open_* fill a caller-owned struct, rb_npu_device_close
 * releases it; rb_npu_job_new/_free pair. A job keeps a pointer to its device and plan,
 * which must outlive it. */
#ifndef RB_NPU_JOB_H
#define RB_NPU_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "numeric/inputs.h"
#include "dev/npu_device.h"
#include "npu/plan.h"

struct rb_npu_job_times {
	double device_us; /* first submit to last completion, on the device clock */
	/* The window device_us measures, as readings of the device clock (the emulator's
	 * virtual clock, or CLOCK_MONOTONIC): runs of one device that overlap in it ran at
	 * the same time, so a process's NPU time is the union of its runs' windows. */
	uint64_t device_begin_ns, device_end_ns;
	double hw_us[RB_PLAN_MAX_CORES]; /* per-core job hw_elapse_time (0 if unknown) */
	double pack_us;                  /* host: packing A */
	double submit_us;                /* host: submit + wait */
	double unpack_us;                /* host: unpacking C and adding K-slices */
};

struct rb_npu_job;

int rb_npu_job_new(struct rb_npu_job **job, struct rb_npu_device *dev, const struct rb_plan *plan,
		   const struct rb_inputs *in, enum rb_npu_launch launch);

/* Packed weights that outlive their job. A tune runs many configs of one shape on the
 * same B, and packing B (plus faulting in its buffer) costs more than an emulated GEMV;
 * configs whose weight layout is the same (K_pad, N_pad, K-slice) can share one packed
 * copy, as a backend shares one weight buffer between the plans of a model. */
struct rb_npu_packed_b {
	struct rb_dev_bo bo;
	struct rb_shape shape;
	uint32_t k_pad, n_pad, k_slice;
	uint64_t source; /* rb_inputs.serial of the B packed; 0: holds nothing */
};
/* rb_npu_job_new, taking *keep's buffer instead of packing B again when it holds this
 * plan's layout of in's B (keep->source becomes 0); else *keep is left as it was.
 * words: the regcmd words of plan's programs when the caller counted them already
 * (rb_npu_job_bytes: counting encodes every program once), else 0. */
int rb_npu_job_new_keeping(struct rb_npu_job **job, struct rb_npu_device *dev,
			   const struct rb_plan *plan, const struct rb_inputs *in,
			   enum rb_npu_launch launch, struct rb_npu_packed_b *keep, size_t words);
/* rb_npu_job_new whose weights are the caller's: B in plan's layout (plan->b_bytes) at
 * byte `offset` (a multiple of 16) of `weights`, a buffer of the same device that must
 * outlive the job. The job never packs, syncs nor frees it (rb_npu_job_set_weights
 * refuses): the caller hands its CPU writes to the device (bo_to_device) before a run.
 * The job makes `weights` reachable by its plan's cores first (rb_dev_bo_reach: under
 * rocket, copies in more cores' files), so a caller sharing it between threads holds
 * its buffer lock around this call. */
int rb_npu_job_new_on_weights(struct rb_npu_job **job, struct rb_npu_device *dev,
			      const struct rb_plan *plan, enum rb_npu_launch launch,
			      struct rb_dev_bo *weights, uint64_t offset);
/* A job of `plan` on the weights `owner` packed itself (owner must outlive it, and lay B
 * out the same way): rb_npu_job_new_on_weights on its buffer, or, when owner holds B in
 * per-core parts (rocket, an N-split plan), on those parts: then each core of `plan` must
 * read within the part of the owner's core of the same index (-EINVAL otherwise: B was
 * split otherwise; pack it again). */
int rb_npu_job_new_sharing(struct rb_npu_job **job, struct rb_npu_device *dev,
			   const struct rb_plan *plan, enum rb_npu_launch launch,
			   struct rb_npu_job *owner);
/* Whether *keep holds plan's layout of in's B (what rb_npu_job_new_keeping takes). */
bool rb_npu_packed_b_fits(const struct rb_npu_packed_b *keep, const struct rb_npu_device *dev,
			  const struct rb_plan *plan, const struct rb_inputs *in);
/* Moves the job's packed B into *keep (which must hold nothing) when the job packed it
 * from inputs with a serial; the job must then only be freed. */
void rb_npu_job_keep_weights(struct rb_npu_job *job, struct rb_npu_packed_b *keep);
void rb_npu_packed_b_release(struct rb_npu_device *dev, struct rb_npu_packed_b *keep);
/* The buffer a job packed its own weights into (for rb_npu_job_new_on_weights of a job
 * of another M that lays B out the same way; when it is made of per-core parts,
 * bo->parts, only rb_npu_job_new_sharing reads it); NULL when its weights are the
 * caller's. */
struct rb_dev_bo *rb_npu_job_own_weights(struct rb_npu_job *job);
/* Packs B (K×N row-major of the shape's input type) into the job's weight buffer and
 * syncs it, replacing what it held: a job made with in->b NULL has no weights until
 * then (a backend sets them once, at model load). */
int rb_npu_job_set_weights(struct rb_npu_job *job, const void *b);
/* fill writes columns [n0, n0 + cols) of B into block, as a K×cols row-major block of
 * the shape's input type; 0 or a negative errno. */
typedef int (*rb_npu_b_columns_fn)(void *ctx, void *block, int64_t n0, int64_t cols);
/* rb_npu_job_set_weights from B in blocks of columns (about 1 MiB each, in order), so
 * that B need not exist whole in host memory next to its packed copy (a backend's
 * weights in another layout or type, converted a block at a time). */
int rb_npu_job_set_weights_by_columns(struct rb_npu_job *job, rb_npu_b_columns_fn fill, void *ctx);
/* A (M×K row-major) for the next runs, instead of in->a; it must stay valid while a run
 * uses it. */
void rb_npu_job_set_features(struct rb_npu_job *job, const void *a);
/* The launch mode of the next runs. The programs do not depend on it (only how they are
 * submitted does), so a job serves every launch mode of its plan; the job then counts as
 * new (fault_hang_once applies again). 0, or -EINVAL when the driver lacks the mode. */
int rb_npu_job_set_launch(struct rb_npu_job *job, enum rb_npu_launch launch);
/* Runs the matmul; C is M×N row-major of the shape's output type. A launch that times
 * out is retried once after a reset (rknpu: ACT_RESET; rocket: the kernel reset the
 * core itself); a second timeout fails with -ETIMEDOUT. c NULL: C is left in the
 * device's cubes, for rb_npu_job_read_c (no host C next to the cubes). */
int rb_npu_job_run(struct rb_npu_job *job, void *c, struct rb_npu_job_times *times);
/* Rows [m0, m0 + rows) and columns [n0, n0 + cols) of the last run's C into c (rows×cols
 * row-major): the values rb_npu_job_run would have written there (the same unpacking
 * and K-slice sums). n0 must start a channel group of the cube: a multiple of 16
 * always does. 0, -EINVAL (a block outside C, or no
 * successful run with data) or -ENOMEM. */
int rb_npu_job_read_c(const struct rb_npu_job *job, int64_t m0, int64_t rows, int64_t n0,
		      int64_t cols, void *c);
void rb_npu_job_free(struct rb_npu_job *job);

/* rb_plan_fit_timeout for the device: its kernel's job timeout at its profile's clock
 * (plan_timeout.c). */
int rb_npu_fit_plan(struct rb_plan *plan, const struct rb_npu_device *dev);
/* The same without a device (`plan`): a mainline plan gets rocket's 500 ms, another the
 * vendor submit's RB_NPU_DEFAULT_TIMEOUT_MS; soc should run at the driver's clock
 * (rb_soc_for_driver). */
int rb_plan_fit_driver(struct rb_plan *plan, const struct rb_soc_profile *soc);

/* Words of all the programs of a job of `plan` (the regcmd buffer). */
int rb_npu_job_program_words(const struct rb_plan *plan, size_t *words);

/* The buffer objects a job of `plan` allocates, in bytes, each rounded up to 4 KiB pages
 * like the kernel does (job_limits.c). */
struct rb_npu_job_bytes {
	uint64_t a, b, c, regcmd, tasks, total;
	size_t words; /* of the regcmd buffer, not rounded */
};

int rb_npu_job_bytes(const struct rb_plan *plan, struct rb_npu_job_bytes *bytes);
/* Fills bytes; -E2BIG (rb_last_error() gives the number and the limit) if they exceed
 * the 4 GiB NPU address space (whose first page is never handed out) or `budget`
 * bytes (the emulator's mem_budget; 0: none). Checked before anything is allocated. */
int rb_npu_job_check_limits(const struct rb_plan *plan, uint64_t budget,
			    struct rb_npu_job_bytes *bytes);

#endif
