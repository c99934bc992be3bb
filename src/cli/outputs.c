/* Output paths checked before any work starts (a run of many minutes must not end in
 * "cannot write"), and never over one of the command's own inputs. */
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/error.h"
#include "core/fileio.h"
#include "results/report.h"

static bool same_file(const struct stat *a, const char *path)
{
	struct stat b;

	return path && stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

/* The directory a new file at `path` goes to must exist and be writable. */
static int check_directory(const char *opt, const char *path)
{
	char *copy = strdup(path);
	const char *dir;
	int ret = 0;

	if (!copy)
		return rb_error("out of memory");
	dir = dirname(copy);
	if (access(dir, W_OK | X_OK) != 0)
		ret =
		    rb_error("%s '%s': cannot write in '%s': %s", opt, path, dir, strerror(errno));
	free(copy);
	return ret;
}

int cli_check_output(const char *opt, const char *path, const char *const *inputs, size_t n)
{
	struct stat st;

	if (!path)
		return 0;
	if (stat(path, &st) != 0)
		return errno == ENOENT ? check_directory(opt, path)
				       : rb_error("%s '%s': %s", opt, path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return rb_error("%s '%s' is a directory", opt, path);
	for (size_t i = 0; i < n; i++)
		if (same_file(&st, inputs[i]))
			return rb_error(
			    "%s '%s' is also an input of this command ('%s'): it would be "
			    "replaced by the output; write somewhere else",
			    opt, path, inputs[i]);
	if (S_ISREG(st.st_mode) && access(path, W_OK) != 0)
		return rb_error("%s '%s': %s", opt, path, strerror(errno));
	return S_ISREG(st.st_mode) ? check_directory(opt, path) : 0;
}

bool cli_is_regular_or_new(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

int cli_stdout_failed(void)
{
	if (errno == EPIPE) /* the reader went away (| head): as a program killed by SIGPIPE */
		return 128 + 13;
	return cli_fail(RB_EXIT_USAGE, "cannot write to standard output: %s", strerror(errno));
}

bool cli_is_new(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0;
}

/* ---- the reports of run: stdout, -o, --export-* ---- */

int cli_reports_add(struct cli_reports *r, const char *opt, const char *path, enum rb_format format)
{
	if (r->n_files >= CLI_MAX_REPORTS)
		return rb_error("%s '%s': at most %d report files", opt, path, CLI_MAX_REPORTS);
	r->files[r->n_files].opt = opt;
	r->files[r->n_files].path = path;
	r->files[r->n_files++].format = format;
	return 0;
}

static bool is_stdout(const char *path)
{
	return strcmp(path, "-") == 0;
}

/* Two outputs on one path would race for it; two on stdout would interleave. */
static int check_distinct(const struct cli_reports *r)
{
	for (size_t i = 0; i < r->n_files; i++)
		for (size_t j = i + 1; j < r->n_files; j++)
			if (strcmp(r->files[i].path, r->files[j].path) == 0)
				return rb_error("%s and %s both write to %s%s%s: give each its "
						"own file",
						r->files[i].opt, r->files[j].opt,
						is_stdout(r->files[i].path) ? "standard output"
									    : "'",
						is_stdout(r->files[i].path) ? "" : r->files[i].path,
						is_stdout(r->files[i].path) ? "" : "'");
	return 0;
}

/* stdout taken by a file output, and --format asking for something else there. */
static int check_stdout(const struct cli_reports *r)
{
	for (size_t i = 0; i < r->n_files; i++)
		if (is_stdout(r->files[i].path) && r->format_given &&
		    r->files[i].format != r->format)
			return rb_error("%s - and --format %s both write to standard output: "
					"give one of them",
					r->files[i].opt, rb_format_name(r->format));
	return 0;
}

int cli_reports_finish(struct cli_reports *r, const char *out_path, const char *const *inputs,
		       size_t n_inputs)
{
	enum rb_format format = RB_FORMAT_JSON; /* what -o has always written */
	int ret = 0;

	if (out_path) {
		if (r->format_given)
			format = r->format;
		else
			rb_format_of_path(out_path, &format);
		ret = cli_reports_add(r, "-o", out_path, format);
	}
	for (size_t i = 0; ret == 0 && i < r->n_files; i++)
		if (!is_stdout(r->files[i].path))
			ret = cli_check_output(r->files[i].opt, r->files[i].path, inputs, n_inputs);
	if (ret == 0)
		ret = check_distinct(r);
	return ret == 0 ? check_stdout(r) : ret;
}

struct report_job {
	enum rb_format format;
	const struct rb_context *ctx;
	const struct rb_result *results;
	size_t n;
};

static int write_report(FILE *f, void *arg)
{
	const struct report_job *job = arg;

	return rb_report_write(f, job->format, job->ctx, job->results, job->n);
}

int cli_reports_write(const struct cli_reports *r, const struct rb_context *ctx,
		      const struct rb_result *results, size_t n)
{
	struct report_job job = {r->format, ctx, results, n};

	for (size_t i = 0; i < r->n_files; i++) {
		job.format = r->files[i].format;
		if (!is_stdout(r->files[i].path) &&
		    rb_file_write_atomic(r->files[i].path, write_report, &job) < 0)
			return cli_fail(RB_EXIT_USAGE, "%s", rb_last_error());
	}
	job.format = r->format; /* stdout: --format, or the one output that took it */
	for (size_t i = 0; i < r->n_files; i++)
		if (is_stdout(r->files[i].path))
			job.format = r->files[i].format;
	if (rb_report_write(stdout, job.format, ctx, results, n) < 0 || fflush(stdout) != 0)
		return cli_stdout_failed();
	return 0;
}
