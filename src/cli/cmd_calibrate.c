/* rknn-bench calibrate: a hardware profile fitted to a board's `run` reports. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/fileio.h"
#include "core/json.h"
#include "tune/calibrate_table.h"

struct calibrate_args {
	char **reports;
	int n_reports;
	const char *out_path;
	const char *soc_path; /* NULL: the built-in profile */
	const char *name;
};

/* The base profile: the parsed numbers and the JSON text the output is made from. */
static int load_base(const struct calibrate_args *a, struct rb_soc_profile *soc,
		     struct rb_text *text)
{
	const struct rb_soc_profile *def = rb_soc_default();
	size_t len;
	const char *builtin;
	int ret;

	if (a->soc_path) {
		ret = rb_file_read(a->soc_path, &text->data, &text->len);
		if (!ret)
			ret = rb_soc_load_string(soc, text->data, text->len, a->soc_path);
		return ret ? cli_fail(cli_exit_code(ret), "--soc: %s", rb_last_error()) : 0;
	}
	builtin = rb_soc_default_text(&len);
	text->data = malloc(len + 1);
	if (!def || !text->data)
		return cli_fail(RB_EXIT_USAGE, "cannot load the built-in profile");
	memcpy(text->data, builtin, len);
	text->data[len] = '\0';
	text->len = len;
	*soc = *def;
	return 0;
}

/* ---- the command ---- */

static int write_profile(const struct calibrate_args *a, const struct rb_calib *c,
			 const struct rb_text *base)
{
	cJSON *doc = rb_calib_profile_json(c, base->data, base->len, a->name);
	int ret;

	if (!doc)
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	ret = cli_write_file(a->out_path, rb_json_write, doc);
	cJSON_Delete(doc);
	return ret;
}

static int load_reports(const struct calibrate_args *a, struct rb_calib *c)
{
	for (int i = 0; i < a->n_reports; i++) {
		int ret = rb_calib_add_report(c, a->reports[i]);

		if (ret)
			return cli_fail(cli_exit_code(ret), "%s", rb_last_error());
	}
	for (size_t i = 0; i < c->n_notes; i++)
		rb_warn("%s", c->notes[i]);
	return 0;
}

static int calibrate(const struct calibrate_args *a, const struct rb_soc_profile *base,
		     const struct rb_text *text)
{
	struct rb_calib c;
	int ret;

	rb_calib_init(&c, base);
	ret = load_reports(a, &c);
	if (ret == 0) {
		ret = rb_calib_fit(&c);
		if (ret)
			ret = cli_fail(ret == -EINVAL ? RB_EXIT_USAGE : RB_EXIT_DEVICE, "%s",
				       rb_last_error());
	}
	if (ret == 0)
		ret = write_profile(a, &c, text);
	if (ret == 0)
		rb_calib_print(stdout, &c);
	rb_calib_release(&c);
	return ret;
}

static int calibrate_run(void *o, const struct cli_args *args)
{
	struct calibrate_args *a = o;
	struct rb_soc_profile base;
	struct rb_text text = {NULL, 0};
	int ret;

	a->reports = args->v;
	a->n_reports = args->n;
	ret = load_base(a, &base, &text);
	if (ret == 0)
		ret = calibrate(a, &base, &text);
	free(text.data);
	return ret;
}

#define A(field) offsetof(struct calibrate_args, field)

static const struct cli_opt calibrate_opts[] = {
    {"output", 'o', CLI_STR, "PROFILE.json", .offset = A(out_path), .path = CLI_OUT,
     .required = true,
     .help = "the fitted profile (required; written to a temporary\n"
	     "file and renamed)"},
    {"soc", 0, CLI_STR, "FILE", .offset = A(soc_path), .path = CLI_IN,
     .help = "the profile to start from and keep the other numbers of\n"
	     "(default: the built-in configs/soc/rk3588.json)"},
    {"name", 0, CLI_STR, "NAME", .offset = A(name),
     .help = "the profile's name (default: the base profile's)"},
    {NULL},
};

const struct cli_command cli_cmd_calibrate = {
    .name = "calibrate",
    .summary = "fit the emulator's hardware profile to a board's run reports",
    .synopsis = "[options] REPORT.json... -o PROFILE.json",
    .about = "Fit the emulator's hardware profile to the times of 'rknn-bench run -o' reports\n"
	     "from one board, by least squares (Levenberg-Marquardt on the relative error):\n"
	     "each result's plan and launch mode are run through the emulator's timing model\n"
	     "and the profile's free numbers are moved until the modeled medians match the\n"
	     "measured ones. Fitted: ddr.gbps_per_stream, ddr.gbps_per_core, ddr.gbps_total,\n"
	     "mac.fp16_efficiency, mac.int8_efficiency (the share of the MAC rate reached per\n"
	     "dtype), task.fetch_ns, task.pipeline_ns, submit.ioctl_ns, submit.wake_ns and the\n"
	     "sum of submit.commit_ns and irq_ns (run times cannot tell those two apart; the\n"
	     "base profile's split is kept). The rest is kept from the base profile, as is any\n"
	     "parameter no result constrains.\n"
	     "\n"
	     "Prints every result's measured and fitted time and the error, then the\n"
	     "parameters; writes PROFILE.json (the schema of configs/soc/rk3588.json, usable\n"
	     "with 'run --soc') with a \"calibration\" object holding the rows.\n",
    .notes = "The reports must all be measured (a board) or all modeled (the emulator: for\n"
	     "tests; the profile's status says so), from one host and one kernel driver\n"
	     "(rknpu or rocket); results on 'cpu' or that failed verification are refused.\n"
	     "docs/boards.md says which runs to make so every parameter is constrained.\n"
	     "\n"
	     "Exit codes: 0 fitted, 2 usage or input error (a bad or mixed report, too few\n"
	     "results, an output that cannot be written), 3 the emulator could not run a\n"
	     "result's plan.\n",
    .groups = {CLI_GROUP(calibrate_opts, 0)},
    .pos = {{"REPORT.json", CLI_IN, 1, -1}},
    .size = sizeof(struct calibrate_args),
    .run = calibrate_run,
};
