/* rknn-bench info: the NPU as its driver reports it, and the host settings that decide
 * whether numbers taken on this machine can be trusted. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "dev/info_text.h"

#define INFO_SCHEMA "rknn-bench-info/1"

struct info_args {
	const char *device;
	int json; /* --format: text 0, json 1 */
};

struct info_data {
	const char *device; /* "sim", "rknpu", "cpu" */
	bool has_npu;
	struct rb_npu_info npu;
	struct rb_host_info host;
	struct rb_info_warnings warnings;
};

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

static void print_text(const struct info_data *d)
{
	printf("device: %s\n", d->device);
	if (d->has_npu)
		rb_npu_info_print(stdout, &d->npu);
	rb_board_print(stdout);
	rb_host_info_print(stdout, &d->host);
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
		cJSON_AddItemToObject(doc, "npu",
				      rb_npu_info_json(&d->npu, rb_npu_info_note(&d->npu)));
	else
		cJSON_AddNullToObject(doc, "npu");
	cJSON_AddItemToObject(doc, "board", rb_board_json());
	cJSON_AddItemToObject(doc, "host", rb_host_info_json(&d->host));
	warn = cJSON_AddArrayToObject(doc, "warnings");
	for (size_t i = 0; warn && i < d->warnings.n; i++)
		cJSON_AddItemToArray(warn, cJSON_CreateString(d->warnings.text[i]));
	text = cJSON_Print(doc);
	cJSON_Delete(doc);
	if (!text)
		return cli_fail(RB_EXIT_USAGE, "out of memory");
	puts(text);
	free(text);
	return RB_EXIT_OK;
}

static int info_run(void *opts, const struct cli_args *a)
{
	const struct info_args *args = opts;
	struct info_data *d = calloc(1, sizeof(*d));
	int ret;

	(void)a;
	if (!d)
		return cli_fail(RB_EXIT_USAGE, "out of memory");
	ret = collect(d, args->device);
	if (ret == RB_EXIT_OK && args->json)
		ret = print_json(d);
	else if (ret == RB_EXIT_OK)
		print_text(d);
	free(d);
	return ret;
}

static void info_init(void *o)
{
	((struct info_args *)o)->device = "auto";
}

static const struct cli_opt info_opts[] = {
    {"device", 0, CLI_STR, "NAME", "auto|sim|sim:rknpu|sim:rocket|rknpu|rocket|cpu",
     offsetof(struct info_args, device),
     .help = "auto (default), sim, sim:rocket, rknpu[:PATH],\n"
	     "rocket[:PATH] or cpu (host only)"},
    {"format", 0, CLI_ENUM, "FMT", "text|json", offsetof(struct info_args, json),
     .help = "text (default) or json on stdout"},
    {NULL},
};

const struct cli_command cli_cmd_info = {
    .name = "info",
    .summary = "show the NPU driver, hardware and host settings numbers depend on",
    .synopsis = "[options]",
    .about = "Show the NPU as its driver reports it (DRM name, version, date and description;\n"
	     "driver and hardware version, frequency, voltage, IOMMU, SRAM, cores) and the host\n"
	     "settings benchmark numbers depend on: CPU model, governors and frequencies per\n"
	     "cpufreq policy, DDR (devfreq dmc) and NPU devfreq. Warns when the CPU governor is\n"
	     "not 'performance', the DDR is not pinned at its top frequency (numbers halve with\n"
	     "an unpinned DDR) or the NPU is below its top frequency.\n",
    .notes = "RKNN_BENCH_SYSFS replaces /sys as the root the host settings are read from,\n"
	     "RKNN_BENCH_DEVROOT /dev as the root NPU nodes are discovered under.\n"
	     "Unreadable values are 'unknown'. Text warnings go to stderr, JSON ones to the\n"
	     "\"warnings\" array.\n"
	     "\n"
	     "Exit codes: 0 ok, 2 usage error, 3 the device cannot be opened.\n",
    .groups = {CLI_GROUP(info_opts, 0)},
    .size = sizeof(struct info_args),
    .init = info_init,
    .run = info_run,
};
