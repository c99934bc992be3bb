/* rknn-bench [global options] <command> [options] [args] */
#include <getopt.h>
#include <string.h>

#include "cli/cli.h"
#include "core/debug.h"
#include "core/json.h"
#include "core/version.h"

bool cli_quiet;

extern const struct cli_command cli_cmd_run, cli_cmd_dump, cli_cmd_regcmd, cli_cmd_plan,
    cli_cmd_tune, cli_cmd_merge, cli_cmd_compare, cli_cmd_shapes, cli_cmd_calibrate, cli_cmd_report,
    cli_cmd_info, cli_cmd_selftest, cli_cmd_bugreport;

/* Adding a command is a cmd_<name>.c with its struct cli_command and a line here. */
const struct cli_command *const cli_commands[] = {
    &cli_cmd_run,   &cli_cmd_dump,     &cli_cmd_regcmd,    &cli_cmd_plan,      &cli_cmd_tune,
    &cli_cmd_merge, &cli_cmd_compare,  &cli_cmd_shapes,    &cli_cmd_calibrate, &cli_cmd_report,
    &cli_cmd_info,  &cli_cmd_selftest, &cli_cmd_bugreport,
};
const size_t cli_n_commands = sizeof(cli_commands) / sizeof(cli_commands[0]);

static void usage(FILE *out)
{
	fprintf(out,
		"usage: rknn-bench [--quiet] [--version] [--help] <command> [options] [args]\n\n"
		"Benchmark and tune matrix multiplication on the Rockchip RK3588 NPU.\n\n"
		"commands:\n");
	for (size_t i = 0; i < cli_n_commands; i++)
		fprintf(out, "  %-9s %s\n", cli_commands[i]->name, cli_commands[i]->summary);
	fprintf(out, "  %-9s %s\n", "help", "show help for rknn-bench or one command");
	fprintf(out, "\n'rknn-bench <command> --help' describes a command.\n"
		     "exit codes: 0 ok, 1 verification failure or regression, 2 usage or input "
		     "error (an output that cannot be written too), 3 device or driver error\n");
}

/* The command called `name`, or NULL with a message (and the nearest name). */
static const struct cli_command *find_command(const char *name)
{
	const char *names[32], *near;

	for (size_t i = 0; i < cli_n_commands; i++) {
		if (strcmp(cli_commands[i]->name, name) == 0)
			return cli_commands[i];
		names[i] = cli_commands[i]->name;
	}
	names[cli_n_commands] = "help";
	near = rb_name_nearest(name, names, cli_n_commands + 1);
	if (near)
		rb_error("'%s' is not a command; did you mean '%s'?", name, near);
	else
		rb_error("'%s' is not a command; see 'rknn-bench --help'", name);
	return NULL;
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

/* The global options; -1 to go on to the command, else an exit code. */
static int global_options(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"version", no_argument, NULL, 'V'},
	    {"quiet", no_argument, NULL, 'q'},
	    {"list-options", no_argument, NULL, 'L'}, /* for the completions and tests */
	    {NULL, 0, NULL, 0},
	};
	int c;

	/* '+': stop at the command name; its own options are parsed by the command. */
	while ((c = getopt_long(argc, argv, "+hVq", opts, NULL)) != -1) {
		if (c == 'h')
			usage(stdout);
		else if (c == 'V')
			printf("rknn-bench %s (commit %s)\n", RB_VERSION, rb_git_commit);
		else if (c == 'L')
			cli_list_options(stdout);
		else if (c == 'q')
			cli_quiet = true;
		else
			usage(stderr);
		if (c != 'q')
			return c == '?' ? RB_EXIT_USAGE : RB_EXIT_OK;
	}
	if (optind < argc)
		return -1;
	usage(stderr);
	return RB_EXIT_USAGE;
}

static int dispatch(int argc, char **argv)
{
	const struct cli_command *cmd;
	char *help_argv[] = {NULL, "--help", NULL};
	int ret = global_options(argc, argv);

	if (ret >= 0)
		return ret;
	argc -= optind;
	argv += optind;
	optind = 0; /* glibc: full reset so the command's getopt_long starts afresh */
	if (strcmp(argv[0], "help") == 0) { /* help COMMAND: COMMAND --help */
		if (argc < 2)
			return usage(stdout), RB_EXIT_OK;
		help_argv[0] = argv[1];
		argv = help_argv;
		argc = 2;
	}
	cmd = find_command(argv[0]);
	if (!cmd)
		return RB_EXIT_USAGE;
	warn_debug_flags();
	return cli_command_main(cmd, argc, argv);
}

int main(int argc, char **argv)
{
	/* A closed stdout (| head) is a write error, not a death: -o files are written
	 * before stdout, and nothing else is lost (cli_stdout_failed). */
	signal(SIGPIPE, SIG_IGN);
	return cli_finish_stdout(dispatch(argc, argv));
}
