/* rknn-bench [global options] <command> [options] [args] */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "core/debug.h"
#include "core/error.h"
#include "core/version.h"

bool cli_quiet;

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static int cmd_help(int argc, char **argv);

/* Adding a command is a line here and a cmd_<name>.c. */
static const struct command commands[] = {
    {"run", cmd_run, "benchmark and verify the matmuls of shapes files on a device"},
    {"dump", cmd_dump, "decode a register program (regcmd) into text"},
    {"regcmd", cmd_regcmd, "print the register program of a one-task matmul"},
    {"plan", cmd_plan, "show how a matmul is cut into NPU tasks per core"},
    {"tune", cmd_tune, "search NPU configs per shape, write the tuned kernel JSON"},
    {"merge", cmd_merge, "join the tuned JSONs of tune --shard I/N into one"},
    {"compare", cmd_compare, "compare two JSON reports: regressions, improvements, geomean"},
    {"shapes", cmd_shapes, "write a shapes file from a model (GGUF header or its numbers)"},
    {"calibrate", cmd_calibrate, "fit the emulator's hardware profile to a board's run reports"},
    {"report", cmd_report, "write an HTML page (rooflines, bars, heatmaps) from reports"},
    {"info", cmd_info, "show the NPU driver, hardware and host settings numbers depend on"},
    {"selftest", cmd_selftest,
     "first light on a board: a ladder of checks that stops at what broke"},
    {"bugreport", cmd_bugreport, "bundle info, the last selftest and its failing programs"},
    {"help", cmd_help, "show help for rknn-bench or one command"},
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rknn-bench [--quiet] [--version] [--help] <command> [options] [args]\n\n"
		"Benchmark and tune matrix multiplication on the Rockchip RK3588 NPU.\n\n"
		"commands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'rknn-bench <command> --help' describes a command.\n"
		     "exit codes: 0 ok, 1 verification failure or regression, 2 usage or input "
		     "error, 3 device or driver error\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int cmd_help(int argc, char **argv)
{
	const struct command *cmd;
	char *help_argv[] = {NULL, "--help", NULL};

	if (argc < 2) {
		usage(stdout);
		return RB_EXIT_OK;
	}
	cmd = find_command(argv[1]);
	if (!cmd || cmd->fn == cmd_help) {
		rb_error("'%s' is not a command; see 'rknn-bench --help'", argv[1]);
		return RB_EXIT_USAGE;
	}
	help_argv[0] = (char *)cmd->name;
	return cmd->fn(2, help_argv);
}

/* A misspelled RKNN_BENCH_DEBUG flag would silently do nothing: say so, with the
 * valid ones. */
static void warn_debug_flags(void)
{
	char valid[256] = "";
	size_t used = 0;

	if (!*rb_debug_unknown())
		return;
	for (size_t i = 0; i < rb_debug_flag_count() && used < sizeof(valid); i++)
		used += (size_t)snprintf(valid + used, sizeof(valid) - used, "%s%s", i ? ", " : "",
					 rb_debug_flag_name(i));
	rb_warn("RKNN_BENCH_DEBUG: unknown flag '%s' ignored; valid flags: %s", rb_debug_unknown(),
		valid);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"quiet", no_argument, NULL, 'q'},
	    {NULL, 0, NULL, 0},
	};
	const struct command *cmd;
	int c;

	/* A closed stdout (| head) is a write error, not a death: -o files are written
	 * before stdout, and nothing else is lost (cli_stdout_failed). */
	signal(SIGPIPE, SIG_IGN);
	/* '+': stop at the command name; its own options are parsed by the command. */
	while ((c = getopt_long(argc, argv, "+hVq", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return RB_EXIT_OK;
		case 'V':
			printf("rknn-bench %s (commit %s)\n", RB_VERSION, rb_git_commit);
			return RB_EXIT_OK;
		case 'q':
			cli_quiet = true;
			break;
		default:
			usage(stderr);
			return RB_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return RB_EXIT_USAGE;
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		rb_error("'%s' is not a command; see 'rknn-bench --help'", argv[optind]);
		return RB_EXIT_USAGE;
	}
	argc -= optind;
	argv += optind;
	optind = 0; /* glibc: full reset so the command's getopt_long starts afresh */
	warn_debug_flags();
	return cmd->fn(argc, argv);
}
