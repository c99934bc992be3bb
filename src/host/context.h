/* The host context of a report: where the numbers were taken (tool version and commit,
 * host, CPU model, kernel, board, date), read once per report from /proc and the device
 * tree. The report writers turn it into JSON and text (core/report.h). */
#ifndef RB_HOST_CONTEXT_H
#define RB_HOST_CONTEXT_H

#include <stdbool.h>
#include <stddef.h>

#include <cJSON.h>

/* Where the numbers were taken. */
struct rb_context {
	char tool_version[32];
	char tool_commit[48]; /* git describe of the build, or "unknown" */
	char board[128];      /* device-tree model ("Radxa ROCK 5B"), "" without one */
	char driver[64];      /* the driver the results ran on (the caller sets it), or "" */
	char host[128];
	char cpu[128];
	char kernel[160];
	char date[32]; /* ISO 8601, UTC */
	int cpu_count;
	const cJSON *settings; /* borrowed: host settings (governors, DDR) to embed, or NULL */
	bool unsafe_skip_validation; /* programs were submitted unchecked (run's flag) */
	/* borrowed: the hardware profile's label and how it was chosen (hw/soc.h), or NULL
	 * when the device uses none (the CPU) */
	const char *hw_profile, *hw_profile_chosen_by;
};

/* Fills every field but driver and settings; what cannot be found reads "unknown"
 * (cpu_count 0; board "": no device tree). The board is read from
 * $RKNN_BENCH_SYSFS/firmware/devicetree/base/model (default /sys), as the host
 * settings are. */
void rb_context_collect(struct rb_context *ctx);
/* The board model of a device tree "model" file (NUL-terminated text), "" if none. */
void rb_board_model_read(char *buf, size_t size, const char *model_path);
/* One line for people: "rknn-bench 0.1.0 (commit abc1234) on HOST: CPU, N CPUs, BOARD,
 * KERNEL, DATE". */
void rb_context_line(const struct rb_context *ctx, char *buf, size_t size);
/* The CPU description rb_context_collect uses, read from the given files (normally
 * /proc/cpuinfo and /proc/device-tree/compatible): the "model name" line; else the
 * SoC (last device-tree compatible string) and the distinct Arm cores ("CPU part"),
 * e.g. "rockchip,rk3588 (Cortex-A55 + Cortex-A76)"; else "unknown". */
void rb_cpu_model_read(char *buf, size_t size, const char *cpuinfo_path,
		       const char *dt_compatible_path);

#endif
