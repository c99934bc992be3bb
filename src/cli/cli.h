/* The command line: one file per command (cmd_<name>.c), each declaring its options in
 * one table (struct cli_command) from which main parses, prints --help, lists the
 * options for the completions and man pages, and guards the outputs (options.c,
 * guard.c). docs/architecture.md, "how to add a command". */
#ifndef RB_CLI_CLI_H
#define RB_CLI_CLI_H

#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cJSON.h>

#include "core/error.h"
#include "numeric/inputs.h"
#include "results/report.h"
#include "core/stats.h"
#include "core/table.h"
#include "numeric/verify.h"
#include "run/engine.h"

/* A failed write of an output (a file or stdout) is exit 2 (README "Exit codes":
 * "unwritable output"), never 3: the device is not at fault. */
#define CLI_EXIT_OUTPUT RB_EXIT_USAGE

/* ---- option tables ---- */

enum cli_kind {
	CLI_BOOL,   /* a bool set to true; no argument */
	CLI_INT,    /* an int from min to max */
	CLI_LONG,   /* a long from min to max */
	CLI_DOUBLE, /* a double of at least min (at most max when max > min) */
	CLI_U64,    /* a uint64_t */
	CLI_STR,    /* a const char * (the last one given wins) */
	CLI_LIST,   /* a struct cli_list of every value given, in order */
	CLI_ENUM,   /* one of `values`: its index as an int, or through set() */
	CLI_CALL,   /* set() does everything (arg is NULL without `arg`) */
};

/* What a path option or argument is to the output guard. */
enum cli_path { CLI_NO_PATH, CLI_IN, CLI_OUT };

/* --help prints the options section by section, in this order. */
enum cli_section {
	CLI_SEC_OPTIONS,
	CLI_SEC_MODEL,
	CLI_SEC_LIST,
	CLI_SEC_SHAPES,
	CLI_SEC_SEARCH,
	CLI_SEC_DEVICE,
	CLI_SEC_MEASURING,
	CLI_SEC_VERIFICATION,
	CLI_SEC_OUTPUT,
	CLI_SEC_BACKEND,
	CLI_SEC_PLAN,
	CLI_N_SECTIONS
};

struct cli_opt {
	const char *name; /* --name */
	int short_name;   /* -x, or 0 */
	enum cli_kind kind;
	const char *arg;    /* the argument in --help ("FILE"); NULL: none */
	const char *values; /* "a|b|c": what CLI_ENUM accepts; the completion of others */
	size_t offset;      /* of the value (of the path, for CLI_CALL) in the group */
	double min, max;
	/* CLI_CALL, or CLI_ENUM's conversion: 0, or -1 with a message printed */
	int (*set)(const struct cli_opt *opt, void *group, const char *arg);
	const char *key; /* data for set() */
	enum cli_path path;
	bool required;
	enum cli_section section;
	const char *help; /* lines after the first are indented under it */
};

struct cli_list {
	const char **items;
	size_t n;
};

/* A table of options whose values live at `base` in the command's struct: a command
 * has its own table, and may share one (run and tune: cli_bench_group). */
struct cli_group {
	const struct cli_opt *opts; /* ends with an entry whose name is NULL */
	size_t base;
};
#define CLI_GROUP(table, base)                                                                     \
	{                                                                                          \
		table, base                                                                        \
	}

/* Positional arguments: `min` to `max` (-1: any) of them named `name`. */
struct cli_pos {
	const char *name;
	enum cli_path path;
	int min, max;
};

struct cli_args {
	char **v;
	int n;
};

/* Paths for the output guard beyond the table's (derived ones: tune's default cache). */
struct cli_paths {
	struct cli_path_item {
		const char *label, *path;
		enum cli_path kind;
	} * items;
	size_t n, cap;
};
/* -1 with a message when out of memory. */
int cli_paths_add(struct cli_paths *p, const char *label, const char *path, enum cli_path kind);

#define CLI_MAX_GROUPS 3
#define CLI_MAX_POS    2
struct cli_command {
	const char *name, *summary;
	const char *synopsis; /* after "usage: rknn-bench NAME " */
	const char *about;    /* paragraphs before the options */
	const char *notes;    /* paragraphs after them */
	struct cli_group groups[CLI_MAX_GROUPS];
	struct cli_pos pos[CLI_MAX_POS];
	size_t size; /* of the command's options struct */
	void (*init)(void *o);
	/* After parsing, before the guard: loads and checks what needs the whole command
	 * line, adds derived paths. 0 or an exit code. NULL: nothing to do. */
	int (*prepare)(void *o, const struct cli_args *a, struct cli_paths *p);
	int (*run)(void *o, const struct cli_args *a); /* an exit code */
	void (*release)(void *o);                      /* frees what o holds; may be NULL */
};

/* Every command, for main, the completions and the tests (main.c). */
extern const struct cli_command *const cli_commands[];
extern const size_t cli_n_commands;

/* Parses argv (argv[0] = the command) into o, runs prepare and the output guard, then
 * the command: an exit code (options.c). */
int cli_command_main(const struct cli_command *cmd, int argc, char **argv);
/* The options of every command, one per line, for scripts/completions.sh and the tests:
 * "COMMAND<TAB>--name<TAB>-x<TAB>ARG<TAB>VALUES<TAB>PATH" ("-" for none). */
void cli_list_options(FILE *out);
/* Prints "did you mean 'x'?" material: the name of `known` nearest to `typed`, or NULL. */
const char *cli_nearest(const char *typed, const char *const *known, size_t n);

/* The output guard (guard.c): every output against every input and every other output,
 * by device and inode after links; outputs writable. 0, or -1 with a message. */
int cli_guard(const struct cli_paths *p);
/* At exit: stdout flushed and closed; a failed write says why. The exit code. */
int cli_finish_stdout(int ret);
/* After a failed write to stdout: 141 quietly for a closed pipe (SIGPIPE is ignored,
 * so that -o is written first), else a message and CLI_EXIT_OUTPUT. */
int cli_stdout_failed(void);
/* A document written atomically to `path` (or stdout for "-"): an exit code. */
int cli_write_file(const char *path, int (*write)(FILE *f, void *ctx), void *ctx);
/* An HTML page (report/page.h) to out_path ("-": stdout): an exit code (cmd_report.c). */
struct rb_page;
int cli_write_page(const struct rb_page *page, const char *out_path);
bool cli_is_regular_or_new(const char *path);

/* ---- values and messages (util.c) ---- */

int cli_parse_int(const char *opt, const char *text, long min, long max, long *out);
int cli_parse_u64(const char *opt, const char *text, uint64_t *out);
int cli_parse_double(const char *opt, const char *text, double min, double *out);
/* Prints "rknn-bench: <message>" (rb_error) and returns the exit code `code`. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The exit code of a library error: -EINVAL, -ENOMEM, ... and host file errors: usage
 * or input; -EFAULT: a failure; -EINTR: 128 + cli_stop_signal; else the device. */
int cli_exit_code(int err);

/* rb_engine_find for --device NAME: prints the message and returns NULL on error;
 * prints auto's note (why the emulator) on stderr, once per process. */
const struct rb_engine_ops *cli_find_device(const char *name, struct rb_engine_opts *opts);

/* Loads the shapes files and --shape specs (of `dtype`) into `list`, keeping each
 * file's text in texts[i] when texts is not NULL (free .data): a pipe can be read once.
 * An empty result is an error unless `allow_empty`. -1 with a message on error. */
struct rb_shape_list;
struct rb_text;
int cli_load_shapes(struct rb_shape_list *list, char **files, int n_files, struct rb_text *texts,
		    const struct cli_list *specs, int dtype, const char *command, bool allow_empty);
/* --filter REGEX: keeps the pair names matching the POSIX extended expression; an entry
 * without one leaves. NULL keeps all; -1 with a message for a bad expression or none. */
int cli_filter_shapes(struct rb_shape_list *list, const char *regex);

/* One warning line (unless --quiet) for what info flags in the host settings. */
void cli_warn_host_settings(const cJSON *settings, bool modeled);

/* The shipped data of an installed binary (datadir.c): PREFIX/share/rknn-bench, or
 * NULL from a build tree; an input path falling back to it (a note on stderr); and
 * " (nor in the installed data directory DIR)" for a missing relative path. */
const char *cli_data_dir(void);
const char *cli_data_path(const char *path, const char *subdir);
const char *cli_data_hint(const char *path, int err);

/* SIGINT/SIGTERM (stop.c): between cli_catch_stop(true) and (false) a signal sets
 * cli_stop_signal instead of ending the process; a second one ends it. A stopped
 * command exits 128 + the signal (130, 143). */
extern volatile sig_atomic_t cli_stop_signal;
void cli_catch_stop(bool on);

extern bool cli_quiet;

/* Where a file kept between commands goes (the last selftest report, cmd_selftest.c):
 * $RKNN_BENCH_STATE, else $XDG_STATE_HOME/rknn-bench, else ~/.local/state/rknn-bench
 * (made as needed). 0, or -ENOENT when there is no such directory. */
int cli_state_path(const char *name, char *buf, size_t size); /* --quiet, global or a command's */

/* ---- run and tune (bench_opts.c) ---- */

/* The options run and tune share, embedded in both commands' structs. */
struct cli_bench {
	struct cli_list specs; /* --shape */
	enum rb_dtype dtype;   /* of --shape shapes */
	const char *device_name;
	const char *soc_path; /* --soc, as found */
	struct rb_engine_opts engine;
	struct rb_measure_opts measure;
	struct rb_verify_opts verify;
	uint64_t seed;
	enum rb_data_kind data;
	const char *out_path;
	const char *filter;
};
void cli_bench_init(struct cli_bench *b);
/* After parsing: the hardware profile of the board when --soc was not given. */
int cli_bench_finish(struct cli_bench *b);
extern const struct cli_opt cli_bench_opts[];
/* The planner's config flags (plan, run): their group is a struct rb_plan_config. */
extern const struct cli_opt cli_plan_opts[];
extern bool cli_plan_flags_given; /* a planner flag was given: no model-guided default */
#define CLI_BENCH_GROUP(type, member)                                                              \
	{                                                                                          \
		cli_bench_opts, offsetof(type, member)                                             \
	}
#define CLI_PLAN_GROUP(type, member)                                                               \
	{                                                                                          \
		cli_plan_opts, offsetof(type, member)                                              \
	}

/* Enumerations shared by tables: a set() for CLI_ENUM options of a library enum. */
int cli_set_dtype(const struct cli_opt *opt, void *group, const char *arg);

/* The reports of run (reports.c): stdout in --format; -o FILE in the format its
 * extension names (or --format when given); --export-* each in its own. "-" is stdout,
 * which one output at most may take. */
#define CLI_MAX_REPORTS 4
struct cli_reports {
	enum rb_format format; /* of stdout */
	bool format_given;
	struct {
		const char *opt, *path;
		enum rb_format format;
	} files[CLI_MAX_REPORTS];
	size_t n_files;
};
int cli_reports_add(struct cli_reports *r, const char *opt, const char *path,
		    enum rb_format format);
/* After adding every file: stdout asked for twice is refused. 0 or -1. */
int cli_reports_check(const struct cli_reports *r);
struct rb_context;
struct rb_result;
int cli_reports_write(const struct cli_reports *r, const struct rb_context *ctx,
		      const struct rb_result *results, size_t n);

#endif
