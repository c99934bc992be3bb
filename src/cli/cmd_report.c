/* rknn-bench report: one self-contained HTML page from run reports, tuned JSON files
 * and tune caches (src/report/page.h says what each gives). */
#include "cli/cli.h"
#include "page/page.h"

struct report_opts {
	const char *out_path; /* "-": stdout */
	const char *title;
};

static void report_init(void *o)
{
	*(struct report_opts *)o = (struct report_opts){"-", "rknn-bench report"};
}

int cli_write_page(const struct rb_page *page, const char *out_path)
{
	return cli_write_file(out_path, rb_page_writer, (void *)page);
}

static int report_run(void *opts, const struct cli_args *a)
{
	const struct report_opts *o = opts;
	struct rb_page page;
	int ret = 0;

	rb_page_init(&page, o->title);
	for (int i = 0; ret == 0 && i < a->n; i++)
		ret = rb_page_add_file(&page, a->v[i]);
	ret = ret < 0 ? cli_fail(cli_exit_code(ret), "%s", rb_last_error())
		      : cli_write_page(&page, o->out_path);
	rb_page_release(&page);
	return ret;
}

static const struct cli_opt report_opts[] = {
    {"output", 'o', CLI_STR, "FILE", .offset = offsetof(struct report_opts, out_path),
     .path = CLI_OUT,
     .help = "the HTML file (written to a temporary file and renamed;\n"
	     "default and '-': stdout)"},
    {"title", 0, CLI_STR, "TEXT", .offset = offsetof(struct report_opts, title),
     .help = "the page title (default 'rknn-bench report')"},
    {NULL},
};

const struct cli_command cli_cmd_report = {
    .name = "report",
    .summary = "write an HTML page (rooflines, bars, heatmaps) from reports",
    .synopsis = "[options] FILE...",
    .about =
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
	"badge.\n",
    .notes = "Example:\n"
	     "  rknn-bench tune configs/mat_kernel_size.json -o tuned.json\n"
	     "  rknn-bench report tuned.json tuned.json.cache.jsonl -o report.html\n"
	     "\n"
	     "Exit codes: 0 ok, 2 usage or input error (the message names the file and what is\n"
	     "wrong; no output file is written).\n",
    .groups = {CLI_GROUP(report_opts, 0)},
    .pos = {{"FILE", CLI_IN, 1, -1}},
    .size = sizeof(struct report_opts),
    .init = report_init,
    .run = report_run,
};
