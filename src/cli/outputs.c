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
