/* The command line: one cmd_<name>.c per subcommand, dispatched from main.c's table. */
#ifndef RB_CLI_CLI_H
#define RB_CLI_CLI_H

#include <regex.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <cJSON.h>

#include "numeric/inputs.h"
#include "results/report.h"
#include "core/table.h"

/* Each command gets argv with argv[0] = its name and returns an exit code (enum rb_exit). */
int cmd_run(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_regcmd(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_shapes(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_selftest(int argc, char **argv);
int cmd_bugreport(int argc, char **argv);
/* Where a file kept between commands goes (the last selftest report, cmd_selftest.c):
 * $RKNN_BENCH_STATE, else $XDG_STATE_HOME/rknn-bench, else ~/.local/state/rknn-bench
 * (made as needed). 0, or -ENOENT when there is no such directory. */
int cli_state_path(const char *name, char *buf, size_t size);

/* An HTML report page (report/page.h) to out_path, written atomically, or to stdout
 * when out_path is NULL (cmd_report.c): an exit code. */
struct rb_page;
int cli_write_page(const struct rb_page *page, const char *out_path);

/* Tunes every shape of o and writes the output (tune_main.c): an exit code. */
struct rb_tune_opts;
int tune_main(const struct rb_tune_opts *o, enum rb_table_style style);

/* Loads the shapes files and --shape specs (of `dtype`) of a command into `list`;
 * an empty result is an error unless `allow_empty`. Prints the message on error and
 * returns -1 (a usage error), else 0. */
struct rb_shape_list;
struct rb_text;
/* The same, keeping each file's text in texts[i] (n_files of them; free .data): what a
 * pipe held can be read once only. */
int cli_load_shapes_kept(struct rb_shape_list *list, char **files, int n_files,
			 struct rb_text *texts, const char **specs, size_t n_specs, int dtype,
			 const char *command, bool allow_empty);
int cli_load_shapes(struct rb_shape_list *list, char **files, int n_files, const char **specs,
		    size_t n_specs, int dtype, const char *command, bool allow_empty);

/* Shipped data of an installed binary (datadir.c): PREFIX/share/rknn-bench for the
 * binary PREFIX/bin/rknn-bench, or NULL when there is none (a build-tree binary). */
const char *cli_data_dir(void);
/* The file to open for an input named on the command line: `path` itself unless it is a
 * relative path that does not exist; then the same name in the data directory (a
 * leading "configs/" dropped; also under `subdir` when not NULL), with a note on stderr
 * (not under --quiet), when it is there; else `path`. The result lives until exit. */
const char *cli_data_path(const char *path, const char *subdir);
/* " (nor in the installed data directory DIR)" for an error `err` opening a relative
 * `path` that is missing, when there is a data directory; else "". For messages. */
const char *cli_data_hint(const char *path, int err);

/* rb_engine_find for --device NAME: prints the message and returns NULL on error;
 * prints auto's note (why the emulator) on stderr, once per process. */
struct rb_engine_ops;
struct rb_engine_opts;
const struct rb_engine_ops *cli_find_device(const char *name, struct rb_engine_opts *opts);

/* The exit code of a library error: -EINVAL, -ENOMEM, -E2BIG, -EOVERFLOW and host file
 * errors (-ENOSPC, -EACCES, -ENOENT, ...): usage or input; -EFAULT (C overrun): a failure; -EINTR:
 * 128 + cli_stop_signal; anything else: the device. */
int cli_exit_code(int err);

/* Prints "rknn-bench: <message>" (rb_error) and returns the exit code `code`. */
int cli_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An output path (-o, --cache) before any work: refused (a message naming the option,
 * -1) when it is a directory, its directory is missing or not writable, or it is the
 * same file as one of `inputs` (NULL entries are skipped). Devices and FIFOs pass. */
int cli_check_output(const char *opt, const char *path, const char *const *inputs, size_t n);
/* After a failed write to stdout: 141 quietly for a closed pipe (SIGPIPE is ignored,
 * so that -o is written first), else a message and exit 2. */
int cli_stdout_failed(void);
/* True for a regular file or a path that does not exist yet. */
bool cli_is_regular_or_new(const char *path);
/* True for a path that does not exist yet. */
bool cli_is_new(const char *path);

/* Option values: strict parsing, a message naming the option on error (CLI prints). */
int cli_parse_int(const char *opt, const char *text, long min, long max, long *out);
int cli_parse_u64(const char *opt, const char *text, uint64_t *out);
int cli_parse_double(const char *opt, const char *text, double min, double *out);

/* Planner config flags shared by plan, run and tune (plan_opts.c): a command getopts
 * with cli_plan_options_join(its own options) (free it), hands every code at or above
 * CLI_PLAN_OPT_BASE to cli_plan_option, and prints cli_plan_usage in its help. */
struct option;
struct rb_plan_config;
#define CLI_PLAN_OPT_BASE 0x1000
extern const char cli_plan_usage[];
struct option *cli_plan_options_join(const struct option *own);
int cli_plan_option(struct rb_plan_config *cfg, int code, const char *arg);
int cmd_plan(int argc, char **argv);

/* The options of run and tune (bench_opts.c): one table for both commands, with the
 * usage text generated from it. A command getopts with cli_bench_options(ITS_BIT)
 * (free it), hands every code to cli_bench_option, which returns 0, -1 (the message is
 * printed) or 1 for a code the command parses itself (its own options: --format,
 * --strategy, ...), and prints cli_bench_usage(ITS_BIT) and cli_plan_usage in --help. */
#define CLI_RUN  1u
#define CLI_TUNE 2u
enum cli_bench_code {
	CLI_OPT_SHAPE = 256,
	CLI_OPT_DTYPE,
	CLI_OPT_DEVICE,
	CLI_OPT_SOC,
	CLI_OPT_WAIT_DEVICE,
	CLI_OPT_THREADS,
	CLI_OPT_LAUNCH,
	CLI_OPT_TUNED,
	CLI_OPT_WARMUP,
	CLI_OPT_ITERS,
	CLI_OPT_MIN_TIME,
	CLI_OPT_MAX_ITERS,
	CLI_OPT_PHASE,
	CLI_OPT_PERF,
	CLI_OPT_VERIFY,
	CLI_OPT_NO_VERIFY,
	CLI_OPT_SAMPLES,
	CLI_OPT_ATOL,
	CLI_OPT_RTOL,
	CLI_OPT_SEED,
	CLI_OPT_DATA,
	CLI_OPT_FORMAT,
	CLI_OPT_STRATEGY,
	CLI_OPT_TOP,
	CLI_OPT_MAX_EVALS,
	CLI_OPT_SPACE,
	CLI_OPT_TARGET,
	CLI_OPT_LIST_SPACE,
	CLI_OPT_NO_WEIGHT_REUSE,
	CLI_OPT_WEIGHT_COPIES,
	CLI_OPT_CACHE,
	CLI_OPT_SHARD,
	CLI_OPT_SHARD_PLAN,
	CLI_OPT_QUIET,
	CLI_OPT_VERBOSE,
	CLI_OPT_EXPORT_JSON,
	CLI_OPT_EXPORT_CSV,
	CLI_OPT_EXPORT_MD,
	CLI_OPT_FILTER,
};
struct rb_measure_opts;
struct rb_verify_opts;
struct cli_bench {
	const char **specs; /* --shape values (room for argc) */
	size_t n_specs;
	enum rb_dtype dtype; /* of --shape shapes */
	const char **device_name;
	struct rb_engine_opts *engine;
	struct rb_measure_opts *measure;
	struct rb_verify_opts *verify;
	uint64_t *seed;
	enum rb_data_kind *data;
	const char **out_path;
	const char *soc_path; /* --soc, an input the outputs must not replace */
	const char *filter;   /* --filter REGEX on pair names, or NULL */
};
/* A cli_bench over the fields of a command's options struct `o` (run's and tune's name
 * them the same). */
#define CLI_BENCH_OF(o)                                                                            \
	{                                                                                          \
		.dtype = RB_DTYPE_FP16, .device_name = &(o)->device_name, .engine = &(o)->engine,  \
		.measure = &(o)->measure, .verify = &(o)->verify, .seed = &(o)->seed,              \
		.data = &(o)->data, .out_path = &(o)->out_path                                     \
	}
struct option *cli_bench_options(unsigned cmd);
void cli_bench_usage(FILE *out, unsigned cmd);
int cli_bench_option(struct cli_bench *b, int code, const char *arg);
/* The whole getopt loop of run or tune: the shared options into b (b->specs is
 * allocated: free it), the command's own through `option`. 0, -1 (a message was
 * printed) or -2 (--help was printed). */
struct cli_bench_cmd {
	const char *name;
	void (*usage)(void);
	int (*option)(void *ctx, int code, const char *arg);
	void *ctx;
};
int cli_bench_parse(struct cli_bench *b, unsigned cmd, int argc, char **argv,
		    const struct cli_bench_cmd *own);

/* SIGINT/SIGTERM (stop.c): between cli_catch_stop(true) and (false) a signal sets
 * cli_stop_signal (its number, kept after (false)) instead of ending the process; a
 * second one ends it.
 * The exit code of a stopped command is 128 + the signal (130, 143). */
extern volatile sig_atomic_t cli_stop_signal;
void cli_catch_stop(bool on);
/* --unsafe-skip-validation of run and tune: sets the engine option and warns loudly
 * on stderr (even under --quiet). */
struct rb_engine_opts;
#define CLI_UNSAFE_OPT     "unsafe-skip-validation"
#define CLI_UNSAFE_OPT_VAL 0x0f00
void cli_unsafe_skip_validation(struct rb_engine_opts *opts);

/* The reports of run (outputs.c): stdout in --format (default table); -o FILE in the
 * format its extension names (.json, .csv, .md; else json), or in --format when that
 * was given; each --export-json/--export-csv/--export-md FILE in its own format. "-"
 * is stdout: then nothing else is printed there, and only one output may take it. */
#define CLI_MAX_REPORTS 8
struct cli_reports {
	enum rb_format format; /* of stdout */
	bool format_given;     /* --format was given */
	struct {
		const char *opt, *path;
		enum rb_format format;
	} files[CLI_MAX_REPORTS];
	size_t n_files;
};
/* --export-*: adds a file (a message and -1 when there are too many). */
int cli_reports_add(struct cli_reports *r, const char *opt, const char *path,
		    enum rb_format format);
/* After parsing: adds -o (out_path, may be NULL) and checks every file before any work
 * (cli_check_output against `inputs`; one path twice; stdout taken twice). 0 or -1. */
int cli_reports_finish(struct cli_reports *r, const char *out_path, const char *const *inputs,
		       size_t n_inputs);
/* Writes the files (atomically, first: a closed stdout must not lose them), then
 * stdout unless a file took it. An exit code: 0, or 2 / 141 on a write error. */
struct rb_context;
struct rb_result;
int cli_reports_write(const struct cli_reports *r, const struct rb_context *ctx,
		      const struct rb_result *results, size_t n);

/* --filter REGEX (options.c): keeps the pairs of `list` whose name matches the POSIX
 * extended regular expression (regcomp, unanchored: use ^...$ for a whole name); an
 * entry keeps only its matching names, and leaves when none is left. NULL keeps all.
 * -1 with a message for a bad expression or one that matches no pair. */
struct rb_shape_list;
int cli_filter_shapes(struct rb_shape_list *list, const char *regex);
/* The same test on one name; `re` from cli_filter_compile (NULL: everything matches). */
int cli_filter_compile(regex_t *re, const char *regex);
bool cli_filter_match(const regex_t *re, const char *name);

/* Provenance (options.c): the driver an engine runs on, "rknpu 0.9.8 (emulated)", or
 * "none (cpu)"; and one warning line (unless --quiet) summarising what info's checks
 * flag in the host settings (rb_host_settings_json) before run or tune measures. */
struct rb_engine;
void cli_driver_text(const struct rb_engine *e, char *buf, size_t size);
void cli_warn_host_settings(const cJSON *settings, bool modeled);

/* Global switches read once in main. */
extern bool cli_quiet;

#endif
