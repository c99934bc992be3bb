/* Hardware profiles: the numbers the emulator's timing model (timing.c) and emulated
 * kernel (kmod_rknpu.c) run on — cores, clock, MAC array, CBUF, DDR bandwidth, fixed
 * costs per task and per submit — and the ceilings of run reports' roofline.
 * configs/soc/rk3588.json is the RK3588's default; rk3588-lpddr4x.json and
 * rk3588-lpddr5.json differ in DDR bandwidth by memory type. All three are embedded in
 * the binary at build time (the Makefile turns them into build/gen/soc_rk3588.c), so an
 * installed binary needs no data files. rb_soc_choose picks one for the board it runs
 * on (board.h).
 *
 * File format: a JSON object with "name", "version" and "status" strings/numbers and
 * every number as {"value": N, "source": "where it comes from"} — a source is required,
 * so a number cannot enter the model without one. Keys the model does not use are
 * ignored; every key it uses is required. Errors name the file, the JSON path and the
 * problem: "rk3588.json: ddr.gbps_total is -3: must be a positive number".
 *
 * Ownership: struct rb_soc_profile is plain data (no pointers), filled by the loaders
 * and copied freely; the emulator keeps its own copy. */
#ifndef RB_HW_SOC_H
#define RB_HW_SOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* NPU cores of the RK3588 (three, each with its own CBUF and PC): the most any profile
 * may name, and the size of every per-core array. */
#define RB_HW_MAX_CORES 3

struct rb_soc_profile {
	char name[32];   /* "rk3588" */
	int64_t version; /* of the profile's numbers */
	char status[64]; /* "calibrated, see bench/calibration.md" */
	char label[96];  /* "rk3588.json v1 (calibrated, see bench/calibration.md)" */
	/* how it was chosen: "--soc FILE", "board 'Orange Pi 5' (LPDDR4x)", "built-in
	 * default: ...", or "" when it was loaded without a choice (rb_soc_load_*) */
	char chosen_by[320];
	/* The user named it (--soc): no driver's clock replaces its clock_mhz
	 * (rb_soc_for_driver). The loaders leave it false. */
	bool pinned;
	int64_t cores;    /* NPU cores, 1..RB_SIM_MAX_CORES */
	double clock_mhz; /* NPU clock */
	/* the MAC array of one core */
	int64_t fp16_macs; /* MACs per cycle, fp16 */
	int64_t int8_macs; /* MACs per cycle, int8 */
	/* The share of those MACs the array achieves on long tasks, per dtype (1: the TRM
	 * rate; calibrate fits them to a board's MAC-bound runs) */
	double fp16_efficiency, int8_efficiency;
	int64_t channel_atom;       /* channels of a row the array takes per cycle */
	int64_t weight_load_cycles; /* cycles to load one kernel's atom into the array */
	/* the CBUF of one core */
	int64_t cbuf_banks;
	int64_t cbuf_bank_bytes;
	/* DDR, in GB/s (10^9 bytes per second) */
	double ddr_stream_gbps; /* one DMA stream (feature reader, weight reader, writer) */
	double ddr_core_gbps;   /* all streams of one core */
	double ddr_total_gbps;  /* all cores together */
	/* per task, in ns */
	double task_fetch_ns;    /* the regcmd fetch's DDR round trip */
	double task_word_ns;     /* per regcmd word fetched */
	double task_pipeline_ns; /* pipeline fill and drain */
	/* per submit, in ns (the emulated kernel) */
	double submit_ioctl_ns;  /* SUBMIT ioctl entry and job setup, until a commit */
	double submit_commit_ns; /* the commit's MMIO writes */
	double submit_irq_ns;    /* interrupt to the job marked done */
	double submit_wake_ns;   /* waking the waiting thread */
};

/* The NPU clock under a mainline (rocket) kernel when the board does not say: the RK3588
 * device tree assigns the SCMI NPU clock 200 MHz (assigned-clock-rates) and mainline has
 * no NPU frequency scaling (npu-facts §1, §e); vendor kernels run it at 1 GHz. */
#define RB_SOC_MAINLINE_CLOCK_MHZ 200.0

/* Loads a profile from JSON text; label names it in messages (a file name), its last
 * path component goes into the profile's label. 0, or -EINVAL with a message naming
 * label, JSON path and problem (rb_last_error); *out is untouched on error. */
int rb_soc_load_string(struct rb_soc_profile *out, const char *json, size_t len, const char *label);
int rb_soc_load_file(struct rb_soc_profile *out, const char *path);

/* The embedded configs/soc/rk3588.json, parsed once (thread-safe); NULL only if the
 * embedded text does not load, which `make check` rules out. */
const struct rb_soc_profile *rb_soc_default(void);
/* The embedded text itself (not NUL-counted in *len). */
const char *rb_soc_default_text(size_t *len);

/* The embedded profiles by name: "rk3588" (the default), "rk3588-lpddr4x" and
 * "rk3588-lpddr5" (configs/soc/NAME.json); NULL for another name. Parsed once. */
const struct rb_soc_profile *rb_soc_builtin(const char *name);
/* Its JSON text (not NUL-counted in *len), NULL for another name. */
const char *rb_soc_builtin_text(const char *name, size_t *len);

/* The profile to use when none is given (no --soc): the embedded profile of the memory
 * type of the board the device tree under dt_root names (board.h), else the default.
 * out->chosen_by says which and why. -ENOENT only if an embedded profile does not
 * load, which `make check` rules out. */
int rb_soc_choose(struct rb_soc_profile *out, const char *dt_root);

/* The NPU clock the kernel set, in Hz, read under sysfs_root (NULL: "/sys"): the vendor
 * kernel's devfreq (class/devfreq/fdab0000.npu/cur_freq), else the clock framework's
 * debugfs rate of the NPU clock (kernel/debug/clk/{scmi_clk_npu,clk_npu}/clk_rate, a
 * mainline kernel without devfreq). 0 when none is readable (not a board, or no
 * debugfs); `from` gets the file read ("" when none). */
int64_t rb_soc_read_npu_clock_hz(const char *sysfs_root, char *from, size_t size);

/* The profile as the kernel driver runs the NPU: its clock_mhz becomes the clock read
 * under sysfs_root (a board), else, under a mainline kernel (`mainline`: rocket), the
 * mainline clock RB_SOC_MAINLINE_CLOCK_MHZ; a vendor kernel keeps the profile's. The
 * label and chosen_by say so. A pinned profile (--soc) is left as it is. */
void rb_soc_for_driver(struct rb_soc_profile *p, bool mainline, const char *sysfs_root);

#endif
