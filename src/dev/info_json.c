/* The NPU and host facts of `info` (info.h) as JSON: what `info --json` prints and
 * what every report and tuned file records as the host settings its numbers depend
 * on. Unknown numbers are null. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cJSON.h>

#include "dev/info.h"

/* Unknown numbers are null. */
static void add_num(cJSON *obj, const char *key, int64_t v)
{
	if (v < 0)
		cJSON_AddNullToObject(obj, key);
	else
		cJSON_AddNumberToObject(obj, key, (double)v);
}

cJSON *rb_npu_info_json(const struct rb_npu_info *n, const char *note)
{
	cJSON *o = cJSON_CreateObject();
	char ver[32];

	cJSON_AddBoolToObject(o, "emulated", n->emulated);
	if (n->emulated)
		cJSON_AddStringToObject(o, "note", note);
	cJSON_AddStringToObject(o, "node", n->path);
	cJSON_AddStringToObject(o, "driver", n->drm_name);
	snprintf(ver, sizeof(ver), "%d.%d.%d", n->drm_major, n->drm_minor, n->drm_patch);
	cJSON_AddStringToObject(o, "version", ver);
	cJSON_AddStringToObject(o, "date", n->drm_date);
	cJSON_AddStringToObject(o, "description", n->drm_desc);
	add_num(o, "drv_version", n->drv_version);
	add_num(o, "hw_version", n->hw_version);
	add_num(o, "freq_hz", n->freq_hz);
	add_num(o, "volt_uv", n->volt_uv);
	if (n->iommu_en < 0)
		cJSON_AddNullToObject(o, "iommu");
	else
		cJSON_AddBoolToObject(o, "iommu", n->iommu_en != 0);
	add_num(o, "sram_total", n->sram_total);
	add_num(o, "sram_free", n->sram_free);
	cJSON_AddNumberToObject(o, "cores", n->cores);
	return o;
}

static cJSON *devfreq_json(const struct rb_devfreq_info *d)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "governor", d->governor);
	add_num(o, "cur_hz", d->cur_hz);
	add_num(o, "max_hz", d->max_hz);
	return o;
}

cJSON *rb_host_info_json(const struct rb_host_info *h)
{
	cJSON *o = cJSON_CreateObject(), *pols = cJSON_AddArrayToObject(o, "cpufreq");

	cJSON_AddStringToObject(o, "cpu", h->ctx.cpu);
	cJSON_AddNumberToObject(o, "cpu_count", h->ctx.cpu_count);
	cJSON_AddStringToObject(o, "kernel", h->ctx.kernel);
	cJSON_AddStringToObject(o, "host", h->ctx.host);
	for (size_t i = 0; pols && i < h->n_policies; i++) {
		const struct rb_cpufreq_policy *p = &h->policies[i];
		cJSON *pj = cJSON_CreateObject();

		cJSON_AddStringToObject(pj, "policy", p->name);
		cJSON_AddStringToObject(pj, "governor", p->governor);
		add_num(pj, "cur_khz", p->cur_khz);
		add_num(pj, "max_khz", p->max_khz);
		cJSON_AddItemToArray(pols, pj);
	}
	cJSON_AddItemToObject(o, "ddr", devfreq_json(&h->ddr));
	cJSON_AddItemToObject(o, "npu_devfreq", devfreq_json(&h->npu));
	return o;
}

cJSON *rb_host_settings_json(void)
{
	const char *root = getenv("RKNN_BENCH_SYSFS");
	struct rb_info_warnings w;
	struct rb_host_info host;
	cJSON *o, *warn;

	rb_host_info_collect(&host, root ? root : "/sys");
	rb_info_check(&host, NULL, &w);
	o = rb_host_info_json(&host);
	warn = o ? cJSON_AddArrayToObject(o, "warnings") : NULL;
	for (size_t i = 0; warn && i < w.n; i++)
		cJSON_AddItemToArray(warn, cJSON_CreateString(w.text[i]));
	return o;
}
