/* Device and host information for `rknn-bench info` (see info.h). */
#include "dev/info.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "dev/discover.h"
#include "dev/rknpu.h"
#include "dev/transport.h"
#include "sim/sim.h" /* the emulator's core count */

/* ---- the NPU ---- */

static void copy_text(char *dst, size_t size, const char *src, size_t len)
{
	size_t n = len < size - 1 ? len : size - 1;

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* DRM_IOCTL_VERSION with caller buffers, as drmGetVersion does. */
static void read_drm_version(struct rb_npu_info *info, struct rb_transport *tr)
{
	char name[64] = "", date[64] = "", desc[128] = "";
	struct drm_version v;

	memset(&v, 0, sizeof(v));
	v.name = name;
	v.name_len = sizeof(name);
	v.date = date;
	v.date_len = sizeof(date);
	v.desc = desc;
	v.desc_len = sizeof(desc);
	if (rb_transport_ioctl(tr, DRM_IOCTL_VERSION, &v) < 0)
		return;
	info->drm_major = v.version_major;
	info->drm_minor = v.version_minor;
	info->drm_patch = v.version_patchlevel;
	copy_text(info->drm_name, sizeof(info->drm_name), name, v.name_len);
	copy_text(info->drm_date, sizeof(info->drm_date), date, v.date_len);
	copy_text(info->drm_desc, sizeof(info->drm_desc), desc, v.desc_len);
}

static int64_t action_value(struct rb_rknpu *drv, enum rknpu_action_code code)
{
	uint32_t value = 0;

	return rb_rknpu_action(drv, code, &value) == 0 ? (int64_t)value : -1;
}

static void read_actions(struct rb_npu_info *info, struct rb_rknpu *drv)
{
	info->drv_version = drv->drv_version;
	info->hw_version = drv->hw_version;
	info->freq_hz = action_value(drv, RKNPU_GET_FREQ);
	info->volt_uv = action_value(drv, RKNPU_GET_VOLT);
	info->iommu_en = action_value(drv, RKNPU_GET_IOMMU_EN);
	info->sram_total = action_value(drv, RKNPU_GET_TOTAL_SRAM_SIZE);
	info->sram_free = action_value(drv, RKNPU_GET_FREE_SRAM_SIZE);
}

static int open_transport(struct rb_npu_info *info, struct rb_transport *tr, const char *device,
			  const char *path, const struct rb_sim_config *cfg)
{
	struct rb_npu_node node;
	const char *driver;
	int err;

	if (strcmp(device, "sim") == 0 || strcmp(device, "sim:rocket") == 0) {
		info->emulated = true;
		info->cores = cfg->cores;
		snprintf(info->path, sizeof(info->path), "(emulator)");
		if (strcmp(device, "sim:rocket") == 0)
			return rb_transport_open_sim_rocket(tr, cfg);
		return rb_transport_open_sim_rknpu(tr, cfg);
	}
	info->cores = 3; /* RK3588 (npu-facts §1) */
	driver = strcmp(device, "rocket") == 0 ? "rocket" : "rknpu";
	err = path ? rb_discover_check(path, driver, &node) : rb_discover_driver(driver, &node);
	if (err < 0)
		return err;
	snprintf(info->path, sizeof(info->path), "%s", node.path);
	return rb_transport_open_host(tr, info->path);
}

static void npu_info_init(struct rb_npu_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->drm_name, sizeof(info->drm_name), "unknown");
	snprintf(info->drm_date, sizeof(info->drm_date), "unknown");
	snprintf(info->drm_desc, sizeof(info->drm_desc), "unknown");
	info->drm_major = info->drm_minor = info->drm_patch = -1;
}

int rb_npu_info_read(struct rb_npu_info *info, const char *device, const char *path,
		     const struct rb_sim_config *cfg)
{
	struct rb_transport tr;
	struct rb_rknpu drv;
	int err;

	npu_info_init(info);
	err = open_transport(info, &tr, device, path, cfg);
	if (err < 0)
		return err;
	read_drm_version(info, &tr);
	if (strcmp(info->drm_name, "rocket") == 0) { /* no queries beyond VERSION (§d.2) */
		info->drv_version = info->hw_version = info->freq_hz = info->volt_uv = -1;
		info->iommu_en = info->sram_total = info->sram_free = -1;
		rb_transport_close(&tr);
		return 0;
	}
	err = rb_rknpu_open(&drv, &tr); /* takes the transport over */
	if (err < 0)
		return err;
	read_actions(info, &drv);
	rb_rknpu_close(&drv);
	return 0;
}

/* ---- the host ---- */

/* The first line of root/rel, trailing white space cut; false when unreadable. */
static bool read_line(const char *root, const char *rel, char *buf, size_t size)
{
	char path[512];
	FILE *f;
	bool ok;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	f = fopen(path, "r");
	if (!f)
		return false;
	ok = fgets(buf, (int)size, f) != NULL;
	fclose(f);
	if (!ok)
		return false;
	n = strlen(buf);
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' ' || buf[n - 1] == '\t'))
		buf[--n] = '\0';
	return n > 0;
}

static void read_word(const char *root, const char *rel, char *buf, size_t size)
{
	if (!read_line(root, rel, buf, size))
		snprintf(buf, size, "unknown");
}

static int64_t parse_number(const char *text)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(text, &end, 10);
	if (errno || end == text || v < 0)
		return -1;
	return (int64_t)v;
}

static int64_t read_number(const char *root, const char *rel)
{
	char buf[64];

	return read_line(root, rel, buf, sizeof(buf)) ? parse_number(buf) : -1;
}

/* The highest of a space-separated list of numbers; -1 if none. */
static int64_t max_of_list(const char *text)
{
	int64_t best = -1;
	char *end;

	for (const char *p = text; *p; p = end) {
		long long v;

		errno = 0;
		v = strtoll(p, &end, 10);
		if (end == p || errno)
			break;
		if (v > best)
			best = v;
	}
	return best;
}

static void read_devfreq(struct rb_devfreq_info *d, const char *root, const char *name)
{
	char rel[128], list[1024];

	snprintf(rel, sizeof(rel), "class/devfreq/%s/governor", name);
	d->present = read_line(root, rel, d->governor, sizeof(d->governor));
	if (!d->present)
		snprintf(d->governor, sizeof(d->governor), "unknown");
	snprintf(rel, sizeof(rel), "class/devfreq/%s/cur_freq", name);
	d->cur_hz = read_number(root, rel);
	snprintf(rel, sizeof(rel), "class/devfreq/%s/available_frequencies", name);
	d->max_hz = read_line(root, rel, list, sizeof(list)) ? max_of_list(list) : -1;
	d->present = d->present || d->cur_hz >= 0 || d->max_hz >= 0;
}

static void read_policy(struct rb_cpufreq_policy *p, const char *root, const char *name)
{
	char rel[192];

	snprintf(p->name, sizeof(p->name), "%.31s", name);
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpufreq/%s/scaling_governor", p->name);
	read_word(root, rel, p->governor, sizeof(p->governor));
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpufreq/%s/scaling_cur_freq", p->name);
	p->cur_khz = read_number(root, rel);
	snprintf(rel, sizeof(rel), "devices/system/cpu/cpufreq/%s/cpuinfo_max_freq", p->name);
	p->max_khz = read_number(root, rel);
}

static int policy_number(const char *name)
{
	return (int)strtol(name + strlen("policy"), NULL, 10);
}

static int policy_cmp(const void *a, const void *b)
{
	const struct rb_cpufreq_policy *x = a, *y = b;

	return policy_number(x->name) - policy_number(y->name);
}

static void read_policies(struct rb_host_info *host, const char *root)
{
	char path[512];
	struct dirent *e;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpufreq", root);
	dir = opendir(path);
	if (!dir)
		return;
	while ((e = readdir(dir)) && host->n_policies < RB_INFO_MAX_POLICIES) {
		if (strncmp(e->d_name, "policy", 6) != 0 || !e->d_name[6])
			continue;
		read_policy(&host->policies[host->n_policies++], root, e->d_name);
	}
	closedir(dir);
	qsort(host->policies, host->n_policies, sizeof(host->policies[0]), policy_cmp);
}

void rb_host_info_collect(struct rb_host_info *host, const char *sysfs_root)
{
	const char *root = sysfs_root && *sysfs_root ? sysfs_root : "/sys";

	memset(host, 0, sizeof(*host));
	rb_context_collect(&host->ctx);
	read_policies(host, root);
	read_devfreq(&host->ddr, root, "dmc");
	read_devfreq(&host->npu, root, "fdab0000.npu");
}

/* ---- warnings ---- */

static void warn(struct rb_info_warnings *w, const char *fmt, ...) RB_PRINTF(2, 3);

static void warn(struct rb_info_warnings *w, const char *fmt, ...)
{
	va_list ap;

	if (w->n >= RB_INFO_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	vsnprintf(w->text[w->n++], RB_INFO_WARNING_SIZE, fmt, ap);
	va_end(ap);
}

static void check_cpu(const struct rb_host_info *host, struct rb_info_warnings *w)
{
	for (size_t i = 0; i < host->n_policies; i++) {
		const struct rb_cpufreq_policy *p = &host->policies[i];

		if (strcmp(p->governor, "performance") != 0 && strcmp(p->governor, "unknown") != 0)
			warn(w,
			     "CPU %s governor is '%s', not 'performance': host times vary "
			     "(echo performance > .../cpufreq/%s/scaling_governor)",
			     p->name, p->governor, p->name);
	}
}

static bool pinned_governor(const char *governor)
{
	return strcmp(governor, "userspace") == 0 || strcmp(governor, "performance") == 0;
}

static void check_ddr(const struct rb_devfreq_info *d, struct rb_info_warnings *w)
{
	if (!d->present)
		return;
	if (strcmp(d->governor, "unknown") != 0 && !pinned_governor(d->governor))
		warn(w,
		     "DDR governor is '%s', not 'userspace' or 'performance': numbers halve "
		     "with an unpinned DDR (pin /sys/class/devfreq/dmc at its top frequency)",
		     d->governor);
	if (d->cur_hz >= 0 && d->max_hz > d->cur_hz)
		warn(w,
		     "DDR runs at %" PRId64 " Hz, below its max %" PRId64 " Hz: pin it "
		     "(/sys/class/devfreq/dmc)",
		     d->cur_hz, d->max_hz);
}

static void check_npu(const struct rb_host_info *host, const struct rb_npu_info *npu,
		      struct rb_info_warnings *w)
{
	const struct rb_devfreq_info *d = &host->npu;
	int64_t max = d->max_hz > 0 ? d->max_hz : RB_INFO_NPU_MAX_HZ;

	if (npu && !npu->emulated && npu->freq_hz >= 0 && npu->freq_hz < max)
		warn(w,
		     "NPU runs at %" PRId64 " Hz, below its max %" PRId64 " Hz (pin "
		     "/sys/class/devfreq/fdab0000.npu)",
		     npu->freq_hz, max);
	else if (d->cur_hz >= 0 && d->cur_hz < max)
		warn(w,
		     "NPU devfreq is at %" PRId64 " Hz, below its max %" PRId64 " Hz (pin "
		     "/sys/class/devfreq/fdab0000.npu)",
		     d->cur_hz, max);
}

void rb_info_check(const struct rb_host_info *host, const struct rb_npu_info *npu,
		   struct rb_info_warnings *w)
{
	memset(w, 0, sizeof(*w));
	check_cpu(host, w);
	check_ddr(&host->ddr, w);
	check_npu(host, npu, w);
}
