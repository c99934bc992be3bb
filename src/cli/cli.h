/* The command line: one cmd_<name>.c per subcommand, dispatched from main.c's table. */
#ifndef RB_CLI_CLI_H
#define RB_CLI_CLI_H

#include <stdbool.h>
#include <stdint.h>

/* Each command gets argv with argv[0] = its name and returns an exit code (enum rb_exit). */
int cmd_run(int argc, char **argv);

/* Option values: strict parsing, a message naming the option on error (CLI prints). */
int cli_parse_int(const char *opt, const char *text, long min, long max, long *out);
int cli_parse_u64(const char *opt, const char *text, uint64_t *out);
int cli_parse_double(const char *opt, const char *text, double min, double *out);

/* Global switches read once in main. */
extern bool cli_quiet;

#endif
