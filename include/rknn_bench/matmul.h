/* The matmul executor: rknn-bench's own NPU programs for an inference backend.
 *
 * A backend (e.g. ggml-rknn) that wants C = A·B on the RK3588 NPU without librknnrt:
 * open a device, create one matmul per weight matrix (at model load), give it the
 * weights once, then run it with each new A. Every matmul is planned, encoded and
 * validated like `rknn-bench run`; with a tuned entry (rknn_bench/tuned.h) it runs the
 * config `rknn-bench tune` found for it.
 *
 *   struct rb_matmul_device *dev;
 *   struct rb_matmul *mm;
 *   struct rb_matmul_desc d = {.shape = {1, 2048, 8192, RB_DTYPE_FP16}};
 *
 *   rb_matmul_desc_tuned(&d, rb_tuned_lookup(db, 1, 2048, 8192, RB_DTYPE_FP16,
 *                                            "ffn_up-0", NULL));
 *   if (rb_matmul_device_open(&dev, "auto") < 0 || rb_matmul_create(&mm, dev, &d) < 0 ||
 *       rb_matmul_set_weights(mm, w, RB_MATMUL_FP16, RB_MATMUL_B_NK) < 0)
 *           fprintf(stderr, "%s\n", rb_last_error());
 *   ... rb_matmul_run(mm, a, RB_MATMUL_FP32, c, RB_MATMUL_FP32) per token ...
 *   rb_matmul_destroy(mm);
 *   rb_matmul_device_close(dev);
 *
 * Devices: "auto" (the first NPU node found, rknpu or rocket, else the emulator), "sim"
 * (the emulated NPU behind the emulated vendor kernel; times are modeled), "sim:rocket",
 * "rknpu" or "rknpu:/dev/dri/cardN", "rocket" or "rocket:/dev/accel/accelN".
 *
 * Errors: every call returns 0 or a negative errno and never prints or exits;
 * rb_last_error() (per thread) says what went wrong. -EINVAL: a bad argument or a
 * shape or config that cannot be planned; -ENODEV: no such device; -ETIMEDOUT: the
 * NPU did not finish (after one reset and retry); -ENOMEM, -EIO: the device.
 *
 * Ownership and threads: the caller owns each handle until its destroy/close; a
 * matmul keeps a pointer to its device, which must outlive it. Different matmuls may
 * be created, given weights, run and destroyed from different threads at once, on one
 * device, and so may buffers; one matmul is used by one thread at a time. The weights are packed
 * into the matmul's own buffer: the caller's copy may go after rb_matmul_set_weights returns.
 *
 * Weights kept once (what build/shim/librknnrt.so does with rknn_create_mem): a buffer of
 * the device, mapped for the CPU, holds B in the native layout, and the matmul reads it
 * there at every run, with no copy of its own:
 *
 *   rb_matmul_buffer_new(&buf, dev, bytes);
 *   ... write B into rb_matmul_buffer_map(buf) in the native layout ...
 *   if (rb_matmul_native_weights(mm))
 *           rb_matmul_set_weights_buffer(mm, buf, 0);
 *   else    rb_matmul_set_weights(mm, rb_matmul_buffer_map(buf), RB_MATMUL_FP16,
 *                                 RB_MATMUL_B_NATIVE); (packed once, into its own)
 *
 * A buffer belongs to its device, which must outlive it; it must outlive the matmuls
 * reading it. The NPU reads B there at each run, but the CPU's writes reach the device
 * when the buffer is set: after rewriting B, set it again (a cache sync on a board, no
 * copy, no pass at each run). */
#ifndef RKNN_BENCH_MATMUL_H
#define RKNN_BENCH_MATMUL_H

#include <stdbool.h>
#include <stdint.h>

#include "rknn_bench/shape.h"
#include "rknn_bench/tuned.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Element types of host matrices. */
enum rb_matmul_type {
	RB_MATMUL_FP32 = 0, /* float */
	RB_MATMUL_FP16,     /* IEEE half in a uint16_t */
	RB_MATMUL_INT8,     /* int8_t */
	RB_MATMUL_INT32,    /* int32_t */
};

/* How the weights are laid out in host memory. */
enum rb_matmul_b_layout {
	RB_MATMUL_B_KN = 0, /* K rows of N: row-major B */
	RB_MATMUL_B_NK,     /* N rows of K: as ggml stores a weight tensor (B transposed) */
	/* The rknn matmul API's native B (B_layout 1 on RK3588): (N/16, K/32, 16, 32) fp16
	 * or (N/32, K/32, 32, 32) int8, cut into segments of 8192 rows of K, each laid out
	 * so, when K is larger; K a multiple of 32, N of 16 (fp16) or 32 (int8). */
	RB_MATMUL_B_NATIVE,
};

struct rb_matmul_desc {
	struct rb_shape shape; /* M, K, N and the dtype: fp16→fp32 or int8→int32 */
	/* The plan config, as `rknn-bench run --config` takes it (e.g. "mask=0x7
	 * split=n:1,1,1 align=32"); NULL: the planner's default. */
	const char *config;
	const char *launch; /* "fences" (NULL), "threads" or "multicore" */
	/* 0, or the cores to run on (0x1..0x7) over the config's: what
	 * rknn_matmul_set_core_mask sets. A weighted split goes back to even when the
	 * number of cores changes. */
	unsigned core_mask;
	/* The config came from a tuned file (rb_matmul_desc_tuned sets it): counted apart
	 * in the NPU time of the process (rb_matmul_device_stats, RKNN_BENCH_STATS). */
	bool tuned;
};

/* Fills config and launch from a tuned entry and sets tuned (NULL: leaves the defaults). The shape
 * stays the caller's: a bucket match plans the tuned config for the real M. */
void rb_matmul_desc_tuned(struct rb_matmul_desc *desc, const struct rb_tuned_config *t);

struct rb_matmul_device;
struct rb_matmul;

int rb_matmul_device_open(struct rb_matmul_device **dev, const char *name);
void rb_matmul_device_close(struct rb_matmul_device *dev);
/* "sim", "sim:rocket", "rknpu" or "rocket": what "auto" found. */
const char *rb_matmul_device_name(const struct rb_matmul_device *dev);
/* True on the emulator: device times are modeled, not measured. */
bool rb_matmul_device_modeled(const struct rb_matmul_device *dev);

/* Plans the matmul; it has no weights yet, and its NPU buffers come with them. */
int rb_matmul_create(struct rb_matmul **mm, struct rb_matmul_device *dev,
		     const struct rb_matmul_desc *desc);
/* A matmul that reads the weights `weights_of` packed (rb_matmul_set_weights, on the
 * same device) instead of a copy of its own: a backend runs one weight with several M
 * (decode and prompt) and keeps it once. Rewriting weights_of's weights rewrites both's;
 * weights_of must keep them (no rb_matmul_set_weights_buffer) and outlive it, unless it
 * is given weights of its own. -EINVAL when weights_of has none, or when desc's config
 * lays them out otherwise (another K, N, padding or K-slice): create it on its own then. */
int rb_matmul_create_sharing(struct rb_matmul **mm, struct rb_matmul_device *dev,
			     const struct rb_matmul_desc *desc, const struct rb_matmul *weights_of);
/* The config as planned, with no auto value left (rknn-bench run --config form). */
const char *rb_matmul_config(const struct rb_matmul *mm);

/* Packs the weights (K×N values in `layout`) into the NPU layout, in a buffer of the
 * matmul's own: fp16 (or fp32, converted, except native) for an fp16 matmul, int8 for an
 * int8 one. May be called again to replace them. */
int rb_matmul_set_weights(struct rb_matmul *mm, const void *b, enum rb_matmul_type type,
			  enum rb_matmul_b_layout layout);

/* A buffer object of the device's driver (the emulated kernel's on sim), mapped for the
 * CPU. The device must outlive it. */
struct rb_matmul_buffer;

int rb_matmul_buffer_new(struct rb_matmul_buffer **buf, struct rb_matmul_device *dev,
			 uint64_t size);
void *rb_matmul_buffer_map(const struct rb_matmul_buffer *buf);
void rb_matmul_buffer_free(struct rb_matmul_buffer *buf);

/* True when the config lays B out as RB_MATMUL_B_NATIVE: no K or N padding, and one
 * K-slice for K <= 8192, else K-slices of exactly 8192 (the native segments). */
bool rb_matmul_native_weights(const struct rb_matmul *mm);
/* The weights from now on: B in the native layout at byte `offset` (a multiple of 16) of
 * buf, read there by every run, never copied (the replacement for rb_matmul_set_weights;
 * either may replace the other). buf must be of the matmul's device and outlive its use.
 * -EINVAL when the config's layout is not the native one (rb_matmul_native_weights), or
 * when buf is too small. Hands the CPU's writes of buf to the device: call it again,
 * with the same buffer and offset, after rewriting B (that costs only the sync). */
int rb_matmul_set_weights_buffer(struct rb_matmul *mm, const struct rb_matmul_buffer *buf,
				 uint64_t offset);

/* C = A·B: A is M×K row-major (fp16, or fp32 converted per call as ggml-rknn does, for
 * fp16 matmuls; int8 for int8), C is M×N row-major (fp32 or fp16 for fp16 matmuls, int32
 * for int8). -EINVAL before the weights are set. */
int rb_matmul_run(struct rb_matmul *mm, const void *a, enum rb_matmul_type a_type, void *c,
		  enum rb_matmul_type c_type);

/* The last successful run: device time (submit to completion, on the device clock) and
 * whether it was modeled by the emulator. */
struct rb_matmul_stats {
	double device_us;
	bool modeled;
	unsigned runs; /* successful runs so far */
	/* Host wall time of the last run's phases, in µs (this CPU, not the device):
	 * converting A to fp16 and C from fp32 (convert_us), packing A into its cube
	 * (pack_us), submitting and waiting (submit_us: on the emulator its own work
	 * too), unpacking C and adding K-slices (unpack_us). */
	double convert_us, pack_us, submit_us, unpack_us;
};

void rb_matmul_stats(const struct rb_matmul *mm, struct rb_matmul_stats *stats);

/* The NPU time of every successful run on a device so far: the union of the runs'
 * windows on the device clock, so runs on different cores that overlap in time count
 * once (on the emulator, as its virtual clock places them: modeled). With the
 * environment variable RKNN_BENCH_STATS=1 at rb_matmul_device_open, the process prints
 * at exit, on stderr, one line over all its devices:
 *   rknn-bench: N matmuls (T tuned, D default), NPU time X us (modeled)
 * (the one thing the library ever prints; "measured" on a board). */
struct rb_matmul_device_stats {
	unsigned long runs, tuned_runs; /* tuned: of matmuls whose desc has tuned set */
	double npu_us;
	bool modeled;
};

void rb_matmul_device_stats(struct rb_matmul_device *dev, struct rb_matmul_device_stats *stats);

void rb_matmul_destroy(struct rb_matmul *mm);

#ifdef __cplusplus
}
#endif

#endif
