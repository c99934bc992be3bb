/* What `rknn-bench info` shows: the NPU as its driver reports it, and the host settings
 * that decide whether numbers taken on it can be trusted (CPU and DDR governors, DDR
 * and NPU frequencies: published numbers halve with an unpinned DDR, perf-anchors §0).
 *
 * Library code: silent, fills caller-owned structs. Numbers that cannot be read are -1
 * and strings "unknown"; an unreadable sysfs file is never an error. Only opening the
 * NPU device fails (-errno, with a message saying what to do). */
#ifndef RB_DEV_INFO_H
#define RB_DEV_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "host/context.h"

struct rb_sim_config; /* sim/sim.h: only the emulated transport includes it */

#define RB_INFO_MAX_POLICIES 16
#define RB_INFO_MAX_WARNINGS 16
#define RB_INFO_WARNING_SIZE 256
/* The RK3588 NPU's top frequency on vendor kernels (npu-facts §1, perf-anchors §0). */
#define RB_INFO_NPU_MAX_HZ 1000000000LL

struct rb_npu_info {
	bool emulated;     /* the emulated rknpu kernel, not a driver */
	char path[256];    /* device node, or "(emulator)" */
	char drm_name[64]; /* DRM_IOCTL_VERSION */
	char drm_date[64];
	char drm_desc[128];
	int drm_major, drm_minor, drm_patch;
	int64_t drv_version; /* RKNPU_ACTION GET_DRV_VERSION: major·10000+minor·100+patch */
	int64_t hw_version;
	int64_t freq_hz;
	int64_t volt_uv;
	int64_t iommu_en;
	int64_t sram_total;
	int64_t sram_free;
	int cores;
};

struct rb_cpufreq_policy {
	char name[32]; /* "policy0" */
	char governor[32];
	int64_t cur_khz, max_khz;
};

struct rb_devfreq_info {
	bool present; /* the devfreq directory has a readable file */
	char governor[32];
	int64_t cur_hz;
	int64_t max_hz; /* highest of available_frequencies */
};

struct rb_host_info {
	struct rb_context ctx;
	struct rb_cpufreq_policy policies[RB_INFO_MAX_POLICIES];
	size_t n_policies;
	struct rb_devfreq_info ddr; /* class/devfreq/dmc */
	struct rb_devfreq_info npu; /* class/devfreq/fdab0000.npu */
};

struct rb_info_warnings {
	char text[RB_INFO_MAX_WARNINGS][RB_INFO_WARNING_SIZE];
	size_t n;
};

/* Opens "sim" (the emulator of `cfg`) or "rknpu" (`path`; NULL: discover the node),
 * reads everything, closes. -ENOENT / -EACCES carry a hint in rb_last_error(). */
int rb_npu_info_read(struct rb_npu_info *info, const char *device, const char *path,
		     const struct rb_sim_config *cfg);

/* Reads the host; sysfs_root replaces "/sys" (NULL: "/sys"). */
void rb_host_info_collect(struct rb_host_info *host, const char *sysfs_root);

/* The settings that make numbers untrustworthy; npu may be NULL. */
void rb_info_check(const struct rb_host_info *host, const struct rb_npu_info *npu,
		   struct rb_info_warnings *w);

/* As JSON (info_json.c); `note` says what an emulated NPU is (NULL: none). */
cJSON *rb_npu_info_json(const struct rb_npu_info *npu, const char *note);
cJSON *rb_host_info_json(const struct rb_host_info *host);
/* The host settings and their warnings (collected from $RKNN_BENCH_SYSFS or /sys) for
 * the context of a report; NULL when out of memory. The caller frees it. */
cJSON *rb_host_settings_json(void);

#endif
