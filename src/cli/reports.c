/* The reports of run (cli.h): stdout, -o and --export-*, each in its format. The output
 * guard has checked the files; what is left is who takes stdout. */
#include <string.h>

#include "cli/cli.h"

int cli_reports_add(struct cli_reports *r, const char *opt, const char *path, enum rb_format format)
{
	if (!path)
		return 0;
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

/* Two outputs on stdout would interleave; --format asking for another one there. */
int cli_reports_check(const struct cli_reports *r)
{
	for (size_t i = 0; i < r->n_files; i++) {
		if (!is_stdout(r->files[i].path))
			continue;
		if (r->format_given && r->files[i].format != r->format)
			return rb_error("%s - and --format %s both write to standard output: "
					"give one of them",
					r->files[i].opt, rb_format_name(r->format));
		for (size_t j = i + 1; j < r->n_files; j++)
			if (is_stdout(r->files[j].path))
				return rb_error("%s and %s both write to standard output: give "
						"each its own file",
						r->files[j].opt, r->files[i].opt);
	}
	return 0;
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

/* The files first (atomically: a closed stdout must not lose them), then stdout. */
int cli_reports_write(const struct cli_reports *r, const struct rb_context *ctx,
		      const struct rb_result *results, size_t n)
{
	struct report_job job = {r->format, ctx, results, n};
	int ret = 0;

	for (size_t i = 0; ret == 0 && i < r->n_files; i++) {
		job.format = r->files[i].format;
		if (!is_stdout(r->files[i].path))
			ret = cli_write_file(r->files[i].path, write_report, &job);
	}
	job.format = r->format; /* stdout: --format, or the one output that took it */
	for (size_t i = 0; i < r->n_files; i++)
		if (is_stdout(r->files[i].path))
			job.format = r->files[i].format;
	return ret ? ret : cli_write_file("-", write_report, &job);
}
