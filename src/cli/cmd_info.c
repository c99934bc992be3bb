/* rknn-bench info: the NPU as its driver reports it, and the host settings that decide
 * whether numbers taken on this machine can be trusted. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "cli/cli.h"
#include "core/error.h"
#include "dev/discover.h"
#include "dev/info.h"
#include "hw/board.h"
#include "hw/soc.h"
#include "run/engine.h"

#define INFO_SCHEMA "rknn-bench-info/1"
#define SIM_NOTE    "emulated rknpu 0.9.8 kernel; values are the emulator's"
#define ROCKET_NOTE "emulated mainline rocket kernel; values are the emulator's"

struct info_args {
	const char *device;
	bool json;
};

struct info_data {
	const char *device; /* "sim", "rknpu", "cpu" */
	bool has_npu;
	struct rb_npu_info npu;
	struct rb_host_info host;
	struct rb_info_warnings warnings;
};

static const char info_usage[] =
    "usage: rknn-bench info [options]\n"
    "\n"
    "Show the NPU as its driver reports it (DRM name, version, date and description;\n"
    "driver and hardware version, frequency, voltage, IOMMU, SRAM, cores) and the host\n"
    "settings benchmark numbers depend on: CPU model, governors and frequencies per\n"
    "cpufreq policy, DDR (devfreq dmc) and NPU devfreq. Warns when the CPU governor is\n"
    "not 'performance', the DDR is not pinned at its top frequency (numbers halve with\n"
    "an unpinned DDR) or the NPU is below its top frequency.\n"
    "\n"
    "  --device NAME        auto (default), sim, sim:rocket, rknpu[:PATH],\n"
    "                       rocket[:PATH] or cpu (host only)\n"
    "  --format FMT         text (default) or json on stdout\n"
    "\n"
    "RKNN_BENCH_SYSFS replaces /sys as the root the host settings are read from,\n"
    "RKNN_BENCH_DEVROOT /dev as the root NPU nodes are discovered under.\n"
    "Unreadable values are 'unknown'. Text warnings go to stderr, JSON ones to the\n"
    "\"warnings\" array.\n"
    "\n"
    "Exit codes: 0 ok, 2 usage error, 3 the device cannot be opened.\n";

enum { OPT_DEVICE = 256, OPT_FORMAT };

static const struct option info_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"device", required_argument, NULL, OPT_DEVICE},
    {"format", required_argument, NULL, OPT_FORMAT},
    {NULL, 0, NULL, 0},
};

static int parse_option(struct info_args *a, int c, const char *arg)
{
	if (c == OPT_DEVICE) {
		a->device = arg;
		return 0;
	}
	if (strcmp(arg, "text") != 0 && strcmp(arg, "json") != 0)
		return rb_error("--format '%s' must be text or json", arg);
	a->json = strcmp(arg, "json") == 0;
	return 0;
}

/* Returns 0, or an exit code (help printed: RB_EXIT_OK + 100). */
static int parse_args(struct info_args *a, int argc, char **argv)
{
	int c;

	memset(a, 0, sizeof(*a));
	a->device = "auto";
	while ((c = getopt_long(argc, argv, "h", info_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(info_usage, stdout);
			return 100 + RB_EXIT_OK;
		}
		if (c == '?' || parse_option(a, c, optarg) < 0) {
			fputs("see 'rknn-bench info --help'\n", stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind != argc) {
		rb_error("info takes no arguments; see 'rknn-bench info --help'");
		return RB_EXIT_USAGE;
	}
	return 0;
}

static int collect(struct info_data *d, const char *device_arg)
{
	struct rb_engine_opts opts;
	const struct rb_engine_ops *ops;

	rb_engine_opts_init(&opts);
	ops = cli_find_device(device_arg, &opts);
	if (!ops)
		return RB_EXIT_USAGE;
	d->device = ops->name;
	d->has_npu = strcmp(ops->name, "cpu") != 0;
	if (d->has_npu && rb_npu_info_read(&d->npu, ops->name, opts.path, &opts.sim) < 0) {
		rb_error("%s", rb_last_error());
		return RB_EXIT_DEVICE;
	}
	rb_host_info_collect(&d->host, getenv("RKNN_BENCH_SYSFS"));
	rb_info_check(&d->host, d->has_npu ? &d->npu : NULL, &d->warnings);
	return RB_EXIT_OK;
}

/* ---- text ---- */

static void print_num(const char *label, int64_t v, const char *unit)
{
	if (v < 0)
		printf("  %-18s unknown\n", label);
	else
		printf("  %-18s %" PRId64 "%s\n", label, v, unit);
}

static void print_version(const char *label, int64_t v)
{
	if (v < 0)
		printf("  %-18s unknown\n", label);
	else
		printf("  %-18s %" PRId64 ".%" PRId64 ".%" PRId64 "\n", label, v / 10000,
		       v / 100 % 100, v % 100);
}

static const char *sim_note(const struct rb_npu_info *n)
{
	return strcmp(n->drm_name, "rocket") == 0 ? ROCKET_NOTE : SIM_NOTE;
}

static void print_npu(const struct rb_npu_info *n)
{
	printf("npu:\n");
	if (n->emulated)
		printf("  %-18s %s\n", "note", sim_note(n));
	printf("  %-18s %s\n", "node", n->path);
	printf("  %-18s %s %d.%d.%d (%s, %s)\n", "drm driver", n->drm_name, n->drm_major,
	       n->drm_minor, n->drm_patch, n->drm_date, n->drm_desc);
	print_version("driver version", n->drv_version);
	if (n->hw_version < 0)
		printf("  %-18s unknown\n", "hardware version");
	else
		printf("  %-18s 0x%08" PRIx64 "\n", "hardware version", n->hw_version);
	print_num("frequency", n->freq_hz, " Hz");
	print_num("voltage", n->volt_uv, " uV");
	printf("  %-18s %s\n", "iommu", n->iommu_en < 0 ? "unknown" : n->iommu_en ? "yes" : "no");
	print_num("sram total", n->sram_total, " bytes");
	print_num("sram free", n->sram_free, " bytes");
	printf("  %-18s %d\n", "cores", n->cores);
}

static void print_devfreq(const char *label, const struct rb_devfreq_info *d)
{
	char cur[32] = "unknown", max[32] = "unknown";

	if (d->cur_hz >= 0)
		snprintf(cur, sizeof(cur), "%" PRId64 " Hz", d->cur_hz);
	if (d->max_hz >= 0)
		snprintf(max, sizeof(max), "%" PRId64 " Hz", d->max_hz);
	printf("  %-18s governor %s, cur %s, max %s\n", label, d->governor, cur, max);
}

static void print_host(const struct rb_host_info *h)
{
	printf("host:\n");
	printf("  %-18s %s\n", "cpu", h->ctx.cpu);
	printf("  %-18s %d\n", "cpus", h->ctx.cpu_count);
	printf("  %-18s %s\n", "kernel", h->ctx.kernel);
	if (!h->n_policies)
		printf("  %-18s unknown\n", "cpufreq");
	for (size_t i = 0; i < h->n_policies; i++) {
		const struct rb_cpufreq_policy *p = &h->policies[i];

		printf("  %-18s governor %s, cur ", p->name, p->governor);
		if (p->cur_khz < 0)
			printf("unknown, max ");
		else
			printf("%" PRId64 " kHz, max ", p->cur_khz);
		if (p->max_khz < 0)
			printf("unknown\n");
		else
			printf("%" PRId64 " kHz\n", p->max_khz);
	}
	print_devfreq("ddr (dmc)", &h->ddr);
	print_devfreq("npu devfreq", &h->npu);
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
static void print_board(void)
{
	struct rb_board b;
	struct rb_soc_profile p;

	rb_board_detect(&b, rb_board_dt_root());
	printf("board:\n");
	printf("  %-18s %s\n", "model", b.model[0] ? b.model : "unknown");
	printf("  %-18s %s", "memory", rb_ddr_type_name(b.ddr));
	printf(b.source ? " (%s)\n" : " (not a board whose memory is known)\n", b.source);
	if (board_profile(&p) == 0)
		printf("  %-18s %s, chosen by %s\n", "hardware profile", p.label, p.chosen_by);
}

static cJSON *board_json(void)
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

static void print_text(const struct info_data *d)
{
	printf("device: %s\n", d->device);
	if (d->has_npu)
		print_npu(&d->npu);
	print_board();
	print_host(&d->host);
	for (size_t i = 0; i < d->warnings.n; i++)
		rb_warn("%s", d->warnings.text[i]);
}

static int print_json(const struct info_data *d)
{
	cJSON *doc = cJSON_CreateObject(), *warn;
	char *text;

	cJSON_AddStringToObject(doc, "schema", INFO_SCHEMA);
	cJSON_AddStringToObject(doc, "device", d->device);
	if (d->has_npu)
		cJSON_AddItemToObject(doc, "npu", rb_npu_info_json(&d->npu, sim_note(&d->npu)));
	else
		cJSON_AddNullToObject(doc, "npu");
	cJSON_AddItemToObject(doc, "board", board_json());
	cJSON_AddItemToObject(doc, "host", rb_host_info_json(&d->host));
	warn = cJSON_AddArrayToObject(doc, "warnings");
	for (size_t i = 0; warn && i < d->warnings.n; i++)
		cJSON_AddItemToArray(warn, cJSON_CreateString(d->warnings.text[i]));
	text = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!text)
		return cli_fail(RB_EXIT_DEVICE, "out of memory");
	puts(text);
	free(text);
	return RB_EXIT_OK;
}

int cmd_info(int argc, char **argv)
{
	struct info_args args;
	struct info_data *d;
	int ret = parse_args(&args, argc, argv);

	if (ret)
		return ret >= 100 ? ret - 100 : ret;
	d = calloc(1, sizeof(*d));
	if (!d)
		return cli_fail(RB_EXIT_DEVICE, "out of memory");
	ret = collect(d, args.device);
	if (ret == RB_EXIT_OK && args.json)
		ret = print_json(d);
	else if (ret == RB_EXIT_OK)
		print_text(d);
	free(d);
	return ret;
}
