/* rknn-bench selftest: the ladder of src/selftest on a device, printed as it goes, the
 * diagnosis of a failure, and the report (a run report calibrate reads). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/fileio.h"
#include "hw/soc.h"
#include "npu/regcmd.h"
#include "selftest/selftest.h"

static const char selftest_usage[] =
    "usage: rknn-bench selftest [options]\n"
    "\n"
    "First light on a board: a ladder of rungs, each proving one thing, run in order and\n"
    "stopped at the first failure with a diagnosis (the smallest failing shape and config,\n"
    "its programs decoded, the interrupt status, the kernel log and what to try next).\n"
    "The rungs are 0 system, 1 buffers, 2 the smallest submit, 3 the golden programs,\n"
    "4 single-core plans, 5 multi-core launch modes, 6 unproven features, 7 timing and\n"
    "8 a soak (docs/boards.md section 0).\n"
    "\n"
    "options:\n"
    "  -d, --device D     auto (default), sim, sim:rocket, rknpu[:PATH], rocket[:PATH]\n"
    "  -o FILE            write the report: a run report of the timing runs (rung 7),\n"
    "                     which 'rknn-bench calibrate FILE' fits, with the ladder in\n"
    "                     its \"selftest\" object\n"
    "      --soak S       seconds of the soak (rung 8; default 60)\n"
    "      --seed N       inputs and the soak's choices (default 1)\n"
    "      --iters N      samples per timing run on a board (default 20)\n"
    "      --soc FILE     hardware profile of the emulator (sim devices)\n"
    "      --allow-shared another process holding the NPU is a note, not a failure\n"
    "  -h, --help         show this help\n"
    "\n"
    "The report is also kept as the last selftest report for 'rknn-bench bugreport'\n"
    "($RKNN_BENCH_STATE, else $XDG_STATE_HOME/rknn-bench, else ~/.local/state/rknn-bench).\n"
    "Exit codes: 0 every rung passed, 1 a wrong result, 2 usage error, 3 device error.\n";

enum { OPT_SOAK = 256, OPT_SEED, OPT_ITERS, OPT_SOC, OPT_ALLOW_SHARED };

static const struct option selftest_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"device", required_argument, NULL, 'd'},
    {"output", required_argument, NULL, 'o'},
    {"soak", required_argument, NULL, OPT_SOAK},
    {"seed", required_argument, NULL, OPT_SEED},
    {"iters", required_argument, NULL, OPT_ITERS},
    {"soc", required_argument, NULL, OPT_SOC},
    {"allow-shared", no_argument, NULL, OPT_ALLOW_SHARED},
    {NULL, 0, NULL, 0},
};

struct selftest_cli {
	struct rb_selftest_opts opts;
	struct rb_soc_profile soc;
	const char *out;
};

static int parse_one(struct selftest_cli *c, int opt, const char *arg)
{
	long v;

	switch (opt) {
	case 'd':
		c->opts.device = arg;
		return 0;
	case 'o':
		c->out = arg;
		return 0;
	case OPT_SOAK:
		return cli_parse_double("--soak", arg, 0, &c->opts.soak_s);
	case OPT_SEED:
		return cli_parse_u64("--seed", arg, &c->opts.seed);
	case OPT_ITERS:
		if (cli_parse_int("--iters", arg, 1, 100000, &v) < 0)
			return -1;
		c->opts.iters = (int)v;
		return 0;
	case OPT_SOC:
		if (rb_soc_load_file(&c->soc, arg) < 0)
			return rb_error("--soc: %s", rb_last_error());
		c->opts.engine.sim.soc = &c->soc;
		return 0;
	case OPT_ALLOW_SHARED:
		c->opts.allow_shared = true;
		return 0;
	default:
		return -1;
	}
}

/* 0, or an exit code (help: 100). */
static int parse_args(struct selftest_cli *c, int argc, char **argv)
{
	int opt;

	while ((opt = getopt_long(argc, argv, "hd:o:", selftest_options, NULL)) != -1) {
		if (opt == 'h') {
			fputs(selftest_usage, stdout);
			return 100;
		}
		if (opt == '?' || parse_one(c, opt, optarg) < 0) {
			fputs("see 'rknn-bench selftest --help'\n", stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind < argc)
		return cli_fail(RB_EXIT_USAGE, "selftest takes no arguments ('%s')", argv[optind]);
	if (c->out && cli_check_output("-o", c->out, NULL, 0) < 0)
		return RB_EXIT_USAGE;
	return 0;
}

/* ---- printing as the ladder goes ---- */

static void progress(void *ctx, const struct rb_selftest *st, int i, bool done)
{
	const struct rb_selftest_rung *r = &st->rungs[i];

	(void)ctx;
	if (cli_quiet)
		return;
	if (!done) {
		fprintf(stderr, "rung %d %-12s %s ...\n", i, r->name, r->proves);
		return;
	}
	for (size_t n = 0; n < r->n_notes; n++)
		fprintf(stderr, "    %s\n", r->notes[n]);
	fprintf(stderr, "rung %d %-12s %s (%zu cases, %.1f s)\n", i, r->name,
		r->passed ? "passed" : "FAILED", r->n_cases, r->seconds);
}

static void print_case(const char *label, const struct rb_selftest_case *c)
{
	printf("%s: %s %" PRId64 "x%" PRId64 "x%" PRId64 " %s, config '%s', launch %s\n", label,
	       c->what, c->shape.m, c->shape.k, c->shape.n, rb_dtype_name(c->shape.dtype), c->plan,
	       rb_npu_launch_name(c->launch));
}

/* The programs as text back to words, decoded as `dump` prints them. */
static void print_program(const char *text, unsigned core)
{
	uint64_t *words = NULL;
	size_t n = 0;

	printf("\nprogram of core %u (decoded as 'rknn-bench dump' does):\n", core);
	if (text[0] == '#') /* what it is and where its buffers were placed */
		printf("%.*s\n", (int)strcspn(text, "\n"), text);
	if (rb_regcmd_parse(text, strlen(text), false, "program", &words, &n) < 0) {
		printf("  (cannot decode: %s)\n", rb_last_error());
		return;
	}
	rb_decode_print(stdout, words, n);
	free(words);
}

static void print_failure(const struct rb_selftest *st)
{
	const struct rb_selftest_failure *f = &st->failure;

	printf("selftest FAILED at rung %d (%s): %s\n", f->rung, st->rungs[f->rung].name, f->cause);
	printf("diagnosis: %s\n", f->message);
	if (f->failing.what[0])
		print_case("failing case", &f->failing);
	if (f->bisect_steps)
		print_case("smallest failing case", &f->smallest);
	if (f->int_status_read)
		printf("interrupt status read back: 0x%08x\n", f->int_status);
	if (f->rung == 2 || f->rung == 3)
		printf("output written by the NPU: %s\n", f->output_written ? "yes" : "no");
	printf("fault registers: not readable from user space on %s; the kernel log below has "
	       "what the driver read\n",
	       st->driver[0] ? st->driver : "this driver");
	for (size_t i = 0; i < f->n_programs; i++)
		print_program(f->programs[i], f->program_core[i]);
	printf("\nkernel log since the selftest started:\n%s", f->kernel_log);
	if (f->hint[0])
		printf("\nwhat to try next: %s\n", f->hint);
	printf("then send 'rknn-bench bugreport -o bug.tar.gz' (docs/boards.md)\n");
}

/* ---- the report ---- */

struct report_ctx {
	const cJSON *doc;
};

static int write_doc(FILE *f, void *ctx)
{
	const struct report_ctx *r = ctx;
	char *text = cJSON_Print(r->doc);
	int ret = 0;

	if (!text)
		return -ENOMEM;
	if (fputs(text, f) < 0 || fputc('\n', f) < 0)
		ret = -EIO;
	free(text);
	return ret;
}

int cli_state_path(const char *name, char *buf, size_t size)
{
	const char *dir = getenv("RKNN_BENCH_STATE"), *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char base[512];

	if (dir && *dir)
		snprintf(base, sizeof(base), "%s", dir);
	else if (xdg && *xdg)
		snprintf(base, sizeof(base), "%s/rknn-bench", xdg);
	else if (home && *home)
		snprintf(base, sizeof(base), "%s/.local/state/rknn-bench", home);
	else
		return -ENOENT;
	for (char *p = strchr(base + 1, '/'); p; p = strchr(p + 1, '/')) { /* mkdir -p */
		*p = '\0';
		mkdir(base, 0700);
		*p = '/';
	}
	mkdir(base, 0700);
	snprintf(buf, size, "%s/%s", base, name);
	return 0;
}

static int write_reports(const struct selftest_cli *c, const struct rb_selftest *st)
{
	struct rb_context ctx;
	struct report_ctx r;
	char last[600];
	cJSON *settings = rb_host_settings_json();
	int ret = 0;

	rb_context_collect(&ctx);
	ctx.settings = settings;
	snprintf(ctx.driver, sizeof(ctx.driver), "%s", st->driver);
	if (c->opts.engine.sim.soc) {
		ctx.hw_profile = c->opts.engine.sim.soc->label;
		ctx.hw_profile_chosen_by = c->opts.engine.sim.soc->chosen_by;
	}
	r.doc = rb_selftest_json(st, &ctx);
	if (!r.doc)
		ret = cli_fail(RB_EXIT_DEVICE, "out of memory");
	if (!ret && c->out && rb_file_write_atomic(c->out, write_doc, &r) < 0)
		ret = cli_fail(RB_EXIT_USAGE, "cannot write '%s': %s", c->out, rb_last_error());
	if (!ret && cli_state_path("selftest-last.json", last, sizeof(last)) == 0 &&
	    rb_file_write_atomic(last, write_doc, &r) < 0)
		rb_warn("cannot keep the report for bugreport in '%s': %s", last, rb_last_error());
	cJSON_Delete((cJSON *)r.doc);
	cJSON_Delete(settings);
	return ret;
}

static int exit_code(int err)
{
	if (err == 0)
		return RB_EXIT_OK;
	return err == -EBADMSG ? RB_EXIT_FAIL : RB_EXIT_DEVICE;
}

int cmd_selftest(int argc, char **argv)
{
	struct selftest_cli c;
	struct rb_selftest st;
	int ret, err;

	memset(&c, 0, sizeof(c));
	rb_selftest_opts_init(&c.opts);
	c.opts.sysfs_root = getenv("RKNN_BENCH_SYSFS"); /* as info and run read it */
	ret = parse_args(&c, argc, argv);
	if (ret)
		return ret == 100 ? RB_EXIT_OK : ret;
	if (strcmp(c.opts.device, "auto") != 0 && !cli_find_device(c.opts.device, &c.opts.engine))
		return RB_EXIT_USAGE; /* checked again by the ladder, which keeps no path */
	err = rb_selftest_run(&st, &c.opts, progress, NULL);
	if (err == -EINVAL && st.failure.rung < 0) {
		rb_selftest_release(&st);
		return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	}
	if (err)
		print_failure(&st);
	else
		printf("selftest passed: %d rungs on %s in %.1f s\n", RB_SELFTEST_RUNGS,
		       c.opts.device, st.seconds);
	ret = write_reports(&c, &st);
	rb_selftest_release(&st);
	return ret ? ret : exit_code(err);
}
