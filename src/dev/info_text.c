/* info's facts as text, and the board as JSON (dev/info_text.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dev/discover.h"
#include "dev/info_text.h"
#include "hw/board.h"
#include "hw/soc.h"

#define SIM_NOTE    "emulated rknpu 0.9.8 kernel; values are the emulator's"
#define ROCKET_NOTE "emulated mainline rocket kernel; values are the emulator's"

static void print_num(FILE *out, const char *label, int64_t v, const char *unit)
{
	if (v < 0)
		fprintf(out, "  %-18s unknown\n", label);
	else
		fprintf(out, "  %-18s %" PRId64 "%s\n", label, v, unit);
}

static void print_version(FILE *out, const char *label, int64_t v)
{
	if (v < 0)
		fprintf(out, "  %-18s unknown\n", label);
	else
		fprintf(out, "  %-18s %" PRId64 ".%" PRId64 ".%" PRId64 "\n", label, v / 10000,
			v / 100 % 100, v % 100);
}

const char *rb_npu_info_note(const struct rb_npu_info *n)
{
	return strcmp(n->drm_name, "rocket") == 0 ? ROCKET_NOTE : SIM_NOTE;
}

void rb_npu_info_print(FILE *out, const struct rb_npu_info *n)
{
	fprintf(out, "npu:\n");
	if (n->emulated)
		fprintf(out, "  %-18s %s\n", "note", rb_npu_info_note(n));
	fprintf(out, "  %-18s %s\n", "node", n->path);
	fprintf(out, "  %-18s %s %d.%d.%d (%s, %s)\n", "drm driver", n->drm_name, n->drm_major,
		n->drm_minor, n->drm_patch, n->drm_date, n->drm_desc);
	print_version(out, "driver version", n->drv_version);
	if (n->hw_version < 0)
		fprintf(out, "  %-18s unknown\n", "hardware version");
	else
		fprintf(out, "  %-18s 0x%08" PRIx64 "\n", "hardware version", n->hw_version);
	print_num(out, "frequency", n->freq_hz, " Hz");
	print_num(out, "voltage", n->volt_uv, " uV");
	fprintf(out, "  %-18s %s\n", "iommu",
		n->iommu_en < 0 ? "unknown"
		: n->iommu_en   ? "yes"
				: "no");
	print_num(out, "sram total", n->sram_total, " bytes");
	print_num(out, "sram free", n->sram_free, " bytes");
	fprintf(out, "  %-18s %d\n", "cores", n->cores);
}

static void print_devfreq(FILE *out, const char *label, const struct rb_devfreq_info *d)
{
	char cur[32] = "unknown", max[32] = "unknown";

	if (d->cur_hz >= 0)
		snprintf(cur, sizeof(cur), "%" PRId64 " Hz", d->cur_hz);
	if (d->max_hz >= 0)
		snprintf(max, sizeof(max), "%" PRId64 " Hz", d->max_hz);
	fprintf(out, "  %-18s governor %s, cur %s, max %s\n", label, d->governor, cur, max);
}

void rb_host_info_print(FILE *out, const struct rb_host_info *h)
{
	fprintf(out, "host:\n");
	fprintf(out, "  %-18s %s\n", "cpu", h->ctx.cpu);
	fprintf(out, "  %-18s %d\n", "cpus", h->ctx.cpu_count);
	fprintf(out, "  %-18s %s\n", "kernel", h->ctx.kernel);
	if (!h->n_policies)
		fprintf(out, "  %-18s unknown\n", "cpufreq");
	for (size_t i = 0; i < h->n_policies; i++) {
		const struct rb_cpufreq_policy *p = &h->policies[i];

		fprintf(out, "  %-18s governor %s, cur ", p->name, p->governor);
		if (p->cur_khz < 0)
			fprintf(out, "unknown, max ");
		else
			fprintf(out, "%" PRId64 " kHz, max ", p->cur_khz);
		if (p->max_khz < 0)
			fprintf(out, "unknown\n");
		else
			fprintf(out, "%" PRId64 " kHz\n", p->max_khz);
	}
	print_devfreq(out, "ddr (dmc)", &h->ddr);
	print_devfreq(out, "npu devfreq", &h->npu);
}

/* The profile run and tune use without --soc: the board's memory (rb_soc_choose) at
 * the NPU clock its kernel set (sysfs, else 200 MHz under a mainline rocket node). */
static int board_profile(struct rb_soc_profile *p)
{
	struct rb_npu_node node;
	const char *sysfs = getenv("RKNN_BENCH_SYSFS");
	int ret = rb_soc_choose(p, rb_board_dt_root());

	if (ret == 0)
		rb_soc_for_driver(p, rb_discover_driver("rocket", &node) == 0,
				  sysfs ? sysfs : "/sys");
	return ret;
}

/* The board the device tree names, its memory and the hardware profile run and tune
 * use without --soc (hw/board.h, board_profile). */
void rb_board_print(FILE *out)
{
	struct rb_board b;
	struct rb_soc_profile p;

	rb_board_detect(&b, rb_board_dt_root());
	fprintf(out, "board:\n");
	fprintf(out, "  %-18s %s\n", "model", b.model[0] ? b.model : "unknown");
	fprintf(out, "  %-18s %s", "memory", rb_ddr_type_name(b.ddr));
	fprintf(out, b.source ? " (%s)\n" : " (not a board whose memory is known)\n", b.source);
	if (board_profile(&p) == 0)
		fprintf(out, "  %-18s %s, chosen by %s\n", "hardware profile", p.label,
			p.chosen_by);
}

cJSON *rb_board_json(void)
{
	struct rb_board b;
	struct rb_soc_profile p;
	cJSON *o = cJSON_CreateObject(), *prof;

	rb_board_detect(&b, rb_board_dt_root());
	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "model", b.model);
	cJSON_AddStringToObject(o, "compatible", b.compatible);
	cJSON_AddStringToObject(o, "memory",
				rb_ddr_type_key(b.ddr) ? rb_ddr_type_key(b.ddr) : "unknown");
	if (b.source)
		cJSON_AddStringToObject(o, "memory_source", b.source);
	else
		cJSON_AddNullToObject(o, "memory_source");
	prof = cJSON_AddObjectToObject(o, "hw_profile");
	if (prof && board_profile(&p) == 0) {
		cJSON_AddStringToObject(prof, "label", p.label);
		cJSON_AddStringToObject(prof, "chosen_by", p.chosen_by);
	}
	return o;
}
