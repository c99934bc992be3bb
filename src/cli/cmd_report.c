/* rknn-bench report: one self-contained HTML page from run reports, tuned JSON files
 * and tune caches (src/report/page.h says what each gives). */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/fileio.h"
#include "page/page.h"

static const char report_usage[] =
    "usage: rknn-bench report [options] FILE...\n"
    "\n"
    "Write one self-contained HTML page (inline SVG and CSS, no script, no network)\n"
    "from files rknn-bench wrote, told apart by their schema:\n"
    "  run reports (run -o, --format json)  a roofline per device: each result at its\n"
    "                                       arithmetic intensity and GFLOP/s under the\n"
    "                                       MAC and DDR ceilings the report records;\n"
    "                                       the decode and prefill totals\n"
    "  tuned JSON files (tune -o)           the roofline of the tuned shapes (ceilings of\n"
    "                                       the embedded hardware profile), per-layer\n"
    "                                       bars of the default, tuned and best\n"
    "                                       rknn_matmul_api times with their configs, and\n"
    "                                       the totals per model\n"
    "  tune caches (tune --cache, .jsonl)   per shape, heatmaps of the best time over\n"
    "                                       core mask x bank split and split weights x\n"
    "                                       launch mode\n"
    "Each file adds its provenance (tool version, device, driver, host settings and\n"
    "their warnings, whatever it records). Times from the emulator carry a 'modeled'\n"
    "badge.\n"
    "\n"
    "  -o FILE, --output FILE  the HTML file (written to a temporary file and renamed;\n"
    "                          default and '-': stdout)\n"
    "  --title TEXT            the page title (default 'rknn-bench report')\n"
    "\n"
    "Example:\n"
    "  rknn-bench tune configs/mat_kernel_size.json -o tuned.json\n"
    "  rknn-bench report tuned.json tuned.json.cache.jsonl -o report.html\n"
    "\n"
    "Exit codes: 0 ok, 2 usage or input error (the message names the file and what is\n"
    "wrong; no output file is written).\n";

enum { OPT_TITLE = 256 };

static const struct option report_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"output", required_argument, NULL, 'o'},
    {"title", required_argument, NULL, OPT_TITLE},
    {NULL, 0, NULL, 0},
};

struct report_args {
	const char *out_path; /* NULL: stdout */
	const char *title;
};

/* 0, or an exit code + 100 (help printed: 100 + RB_EXIT_OK). */
static int parse_args(struct report_args *a, int argc, char **argv)
{
	int c;

	a->out_path = NULL;
	a->title = "rknn-bench report";
	while ((c = getopt_long(argc, argv, "ho:", report_options, NULL)) != -1) {
		if (c == 'h') {
			fputs(report_usage, stdout);
			return 100 + RB_EXIT_OK;
		}
		if (c == 'o')
			a->out_path = strcmp(optarg, "-") == 0 ? NULL : optarg;
		else if (c == OPT_TITLE)
			a->title = optarg;
		else {
			fputs("see 'rknn-bench report --help'\n", stderr);
			return 100 + RB_EXIT_USAGE;
		}
	}
	if (optind == argc) {
		rb_error("report needs at least one file (a run report, a tuned JSON or a tune "
			 "cache); see 'rknn-bench report --help'");
		return 100 + RB_EXIT_USAGE;
	}
	return 0;
}

/* The page to -o (atomically) or stdout: an exit code. */
int cli_write_page(const struct rb_page *page, const char *out_path)
{
	if (!out_path) {
		if (rb_page_write_html(stdout, page) < 0 || fflush(stdout) != 0)
			return cli_stdout_failed();
		return RB_EXIT_OK;
	}
	if (rb_file_write_atomic(out_path, rb_page_writer, (void *)page) < 0)
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	return RB_EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
	struct report_args a;
	struct rb_page page;
	int ret = parse_args(&a, argc, argv);

	if (ret)
		return ret - 100;
	if (a.out_path && cli_check_output("-o", a.out_path, (const char *const *)argv + optind,
					   (size_t)(argc - optind)) < 0)
		return RB_EXIT_USAGE;
	rb_page_init(&page, a.title);
	for (int i = optind; i < argc; i++) {
		int err = rb_page_add_file(&page, argv[i]);

		if (err < 0) {
			rb_page_release(&page);
			return cli_fail(cli_exit_code(err), "%s", rb_last_error());
		}
	}
	ret = cli_write_page(&page, a.out_path);
	rb_page_release(&page);
	return ret;
}
