/* The shipped data of an installed binary. `make install` puts the configs/ JSON files in
 * PREFIX/share/rknn-bench and configs/soc/ files in PREFIX/share/rknn-bench/soc, next
 * to PREFIX/bin/rknn-bench, so the data directory is found from the binary itself
 * (/proc/self/exe), wherever the tree was installed or moved to: no path is built in. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

#define DATA_SUBDIR "/share/rknn-bench"

/* Resolved paths live until exit: they replace argv entries that are used until then. */
struct resolved {
	struct resolved *next;
	char path[];
};
static struct resolved *resolved_paths;

/* PREFIX/share/rknn-bench for the binary PREFIX/bin/rknn-bench, or NULL when that is not
 * a directory (a binary run from the build tree). */
const char *cli_data_dir(void)
{
	static char dir[PATH_MAX];
	static int state; /* 0 not looked up yet, 1 found, -1 none */
	char exe[PATH_MAX];
	ssize_t n;
	char *slash;

	if (state)
		return state > 0 ? dir : NULL;
	state = -1;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	for (int up = 0; up < 2; up++) { /* strip "/rknn-bench", then "/bin" */
		slash = strrchr(exe, '/');
		if (!slash)
			return NULL;
		*slash = '\0';
	}
	if ((size_t)snprintf(dir, sizeof(dir), "%s" DATA_SUBDIR, exe) >= sizeof(dir) ||
	    access(dir, X_OK) != 0)
		return NULL;
	state = 1;
	return dir;
}

/* Keeps "DIR/NAME" when it is a readable file. */
static const char *keep_if_readable(const char *dir, const char *sub, const char *name)
{
	size_t size = strlen(dir) + strlen(sub) + strlen(name) + 3;
	struct resolved *r = malloc(sizeof(*r) + size);

	if (!r)
		return NULL;
	snprintf(r->path, size, "%s/%s%s%s", dir, sub, *sub ? "/" : "", name);
	if (access(r->path, R_OK) != 0) {
		free(r);
		return NULL;
	}
	r->next = resolved_paths;
	resolved_paths = r;
	return r->path;
}

static bool is_relative_name(const char *path)
{
	return *path && *path != '/' && strcmp(path, "-") != 0;
}

const char *cli_data_path(const char *path, const char *subdir)
{
	const char *dir = cli_data_dir(), *name = path, *found = NULL;

	if (!dir || !is_relative_name(path) || access(path, F_OK) == 0 || errno != ENOENT)
		return path;
	/* The README's commands name configs/... as in the checkout. */
	if (strncmp(name, "configs/", 8) == 0)
		name += 8;
	found = keep_if_readable(dir, "", name);
	if (!found && subdir)
		found = keep_if_readable(dir, subdir, name);
	if (!found)
		return path;
	if (!cli_quiet)
		rb_warn("'%s' is not in the current directory: using the installed %s", path,
			found);
	return found;
}

const char *cli_data_hint(const char *path, int err)
{
	static char hint[PATH_MAX + 64];
	const char *dir = cli_data_dir();

	if (err != -ENOENT || !dir || !is_relative_name(path))
		return "";
	snprintf(hint, sizeof(hint), " (nor in the installed data directory %s)", dir);
	return hint;
}
