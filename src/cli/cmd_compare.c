/* rknn-bench compare: the regression gate between two JSON reports. */
#include <string.h>

#include "cli/cli.h"
#include "results/compare_table.h"
#include "core/json.h"
#include "page/page.h"

struct compare_args {
	const char *base_path, *new_path;
	struct rb_compare_opts opts;
	int format;           /* --format: an enum rb_format, or FORMAT_HTML */
	const char *out_path; /* -o: also written, in the format its extension names */
};

#define FORMAT_HTML 4 /* after the rb_format values of "table|csv|json|md" */

static int print_json(const struct compare_args *a, const struct rb_compare *cmp)
{
	cJSON *doc = rb_compare_json(cmp, a->base_path, a->new_path, &a->opts);
	int ret = doc ? cli_write_file("-", rb_json_write, doc)
		      : cli_fail(RB_EXIT_USAGE, "out of memory for the comparison");

	cJSON_Delete(doc);
	return ret;
}

/* ---- the HTML page and -o ---- */

static bool html_path(const char *path)
{
	const char *dot = strrchr(path, '.');

	return dot && (strcmp(dot, ".html") == 0 || strcmp(dot, ".htm") == 0);
}

/* The report page of both files with the comparison's bars, to out_path ("-":
 * stdout): an exit code. */
static int write_page(const struct compare_args *a, const struct rb_compare *cmp,
		      const char *out_path)
{
	struct rb_page page;
	char title[RB_PAGE_TEXT];
	int ret;

	snprintf(title, sizeof(title), "rknn-bench compare: %s vs %s", a->base_path, a->new_path);
	rb_page_init(&page, title);
	ret = rb_page_add_compare(&page, cmp, a->base_path, a->new_path);
	if (ret == 0)
		ret = rb_page_add_file(&page, a->base_path);
	if (ret == 0)
		ret = rb_page_add_file(&page, a->new_path);
	ret = ret < 0 ? cli_fail(cli_exit_code(ret), "%s", rb_last_error())
		      : cli_write_page(&page, out_path);
	rb_page_release(&page);
	return ret;
}

static int write_output(const struct compare_args *a, const struct rb_compare *cmp)
{
	cJSON *doc;
	int ret;

	if (html_path(a->out_path))
		return write_page(a, cmp, a->out_path);
	doc = rb_compare_json(cmp, a->base_path, a->new_path, &a->opts);
	ret = doc ? cli_write_file(a->out_path, rb_json_write, doc)
		  : cli_fail(RB_EXIT_USAGE, "out of memory for the comparison");
	cJSON_Delete(doc);
	return ret;
}

/* stdout in --format, then -o: RB_EXIT_OK or an exit code. */
static int print_all(const struct compare_args *a, const struct rb_compare *cmp)
{
	int ret = RB_EXIT_OK;

	if (a->format == FORMAT_HTML)
		ret = write_page(a, cmp, "-");
	else if (a->format == RB_FORMAT_JSON)
		ret = print_json(a, cmp);
	else
		ret = rb_compare_print(
			  stdout, a->format == RB_FORMAT_MD ? RB_TABLE_MARKDOWN : RB_TABLE_TEXT,
			  cmp, a->base_path, a->new_path, &a->opts) < 0
			  ? cli_fail(RB_EXIT_USAGE, "%s", rb_last_error())
			  : RB_EXIT_OK;
	if (ret == RB_EXIT_OK && a->out_path)
		ret = write_output(a, cmp);
	return ret;
}

/* ---- the command ---- */

static int set_format(const struct cli_opt *opt, void *group, const char *arg)
{
	struct compare_args *a = group;

	(void)opt;
	a->format = strcmp(arg, "html") == 0 ? FORMAT_HTML : 0;
	return a->format ? 0 : rb_format_parse(arg, (enum rb_format *)&a->format);
}

static int load_both(const struct compare_args *a, struct rb_compare_report *base,
		     struct rb_compare_report *new_)
{
	if (rb_compare_load(base, a->base_path) < 0)
		return rb_error("%s", rb_last_error());
	if (rb_compare_load(new_, a->new_path) < 0) {
		rb_compare_report_release(base);
		return rb_error("%s", rb_last_error());
	}
	return 0;
}

static int compare_run(void *o, const struct cli_args *args)
{
	struct compare_args *a = o;
	struct rb_compare_report base, new_;
	struct rb_compare cmp;
	int ret;

	a->base_path = args->v[0];
	a->new_path = args->v[1];
	if (load_both(a, &base, &new_) < 0)
		return RB_EXIT_USAGE;
	if (rb_compare_rows(&cmp, &base, &new_, &a->opts) < 0) {
		ret = cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	} else {
		ret = print_all(a, &cmp);
		if (ret == RB_EXIT_OK && cmp.regressions)
			ret = RB_EXIT_FAIL;
		if (ret == RB_EXIT_OK &&
		    !cmp.matched) /* a gate that compared nothing passes nothing */
			ret =
			    cli_fail(RB_EXIT_USAGE,
				     "nothing compared: no result of %s has the shape and name of "
				     "one of %s (%zu and %zu results)",
				     a->new_path, a->base_path, cmp.only_new, cmp.only_base);
		rb_compare_release(&cmp);
	}
	rb_compare_report_release(&base);
	rb_compare_report_release(&new_);
	return ret;
}

static void compare_init(void *o)
{
	rb_compare_opts_init(&((struct compare_args *)o)->opts);
}

#define C(field) offsetof(struct compare_args, field)

static const struct cli_opt compare_opts[] = {
    {"threshold", 0, CLI_DOUBLE, "PCT", .offset = C(opts.threshold_pct),
     .help = "a change beyond PCT percent counts (default 5)"},
    {"alpha", 0, CLI_DOUBLE, "A", .offset = C(opts.alpha), .min = 1e-300, .max = 1,
     .help = "significance level of the Mann-Whitney U test (default 0.05)"},
    {"allow-device-mismatch", 0, CLI_BOOL, .offset = C(opts.allow_device_mismatch),
     .help = "compare results of different devices, or modeled times\n"
	     "against measured ones"},
    {"format", 0, CLI_ENUM, "FMT", "table|md|json|html", C(format), .set = set_format,
     .help = "table (default), md (the table in Markdown), json or html on\n"
	     "stdout; html is the page of 'rknn-bench report' for both\n"
	     "files, with bars of base and new median per result"},
    {"output", 'o', CLI_STR, "FILE", .offset = C(out_path), .path = CLI_OUT,
     .help = "also write the comparison to FILE: the HTML page when FILE\n"
	     "ends in .html or .htm, else the JSON (written to a temporary\n"
	     "file and renamed)"},
    {NULL},
};

const struct cli_command cli_cmd_compare = {
    .name = "compare",
    .summary = "compare two JSON reports: regressions, improvements, geomean",
    .synopsis = "[options] BASE.json NEW.json",
    .about = "Compare two reports of 'rknn-bench run --format json' (or -o): results are paired\n"
	     "by shape and name, and each pair gets base and new median, change (new/base - 1)\n"
	     "and a verdict: regression, improvement, same, or identical. The last line is the\n"
	     "geometric mean of the new/base ratios.\n",
    .notes = "Modeled times (the emulator) are deterministic and compared exactly. Measured\n"
	     "times need the threshold and, with at least 9 samples on both sides, a two-sided\n"
	     "Mann-Whitney U test on the raw samples with p < alpha. A result that failed\n"
	     "verification in NEW is a regression.\n"
	     "\n"
	     "Exit codes: 0 no regression, 1 a regression, 2 usage or input error, or no result\n"
	     "of NEW matching one of BASE (nothing compared).\n",
    .groups = {CLI_GROUP(compare_opts, 0)},
    .pos = {{"BASE.json", CLI_IN, 1, 1}, {"NEW.json", CLI_IN, 1, 1}},
    .size = sizeof(struct compare_args),
    .init = compare_init,
    .run = compare_run,
};
