/* Outputs checked before any work (a run of many minutes must not end in "cannot
 * write", nor replace one of its own inputs), and every write checked, stdout's too. */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/fileio.h"

int cli_paths_add(struct cli_paths *p, const char *label, const char *path, enum cli_path kind)
{
	struct cli_path_item *grown;

	if (!path || kind == CLI_NO_PATH)
		return 0;
	if (p->n == p->cap) {
		grown = realloc(p->items, (p->cap * 2 + 8) * sizeof(*grown));
		if (!grown)
			return rb_error("out of memory");
		p->items = grown;
		p->cap = p->cap * 2 + 8;
	}
	p->items[p->n++] = (struct cli_path_item){label, path, kind};
	return 0;
}

/* What a path names, links resolved: the file when it exists, else its directory and
 * its last name (a file to be created, which only another new output can collide with). */
struct identity {
	bool exists, regular, dir_known;
	dev_t dev;
	ino_t ino;
	const char *base;
};

static struct identity identify(const char *path, char *copy, size_t size)
{
	struct identity id = {0};
	struct stat st;

	if (stat(path, &st) == 0) {
		id = (struct identity){true, S_ISREG(st.st_mode), true, st.st_dev, st.st_ino, NULL};
		return id;
	}
	snprintf(copy, size, "%s", path);
	id.base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (stat(dirname(copy), &st) == 0)
		id = (struct identity){false, false, true, st.st_dev, st.st_ino, id.base};
	return id;
}

static bool same(const struct identity *a, const struct identity *b)
{
	if (!a->dir_known || !b->dir_known || a->exists != b->exists)
		return false;
	if (a->exists) /* devices and FIFOs (/dev/null twice) are written in place */
		return a->regular && b->regular && a->dev == b->dev && a->ino == b->ino;
	return a->dev == b->dev && a->ino == b->ino && strcmp(a->base, b->base) == 0;
}

/* The directory a new file at `path` goes to must exist and be writable. */
static int check_directory(const char *label, const char *path)
{
	char *copy = strdup(path);
	const char *dir;
	int ret = 0;

	if (!copy)
		return rb_error("out of memory");
	dir = dirname(copy);
	if (access(dir, W_OK | X_OK) != 0)
		ret = rb_error("%s '%s': cannot write in '%s': %s", label, path, dir,
			       strerror(errno));
	free(copy);
	return ret;
}

static int check_writable(const char *label, const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return errno == ENOENT ? check_directory(label, path)
				       : rb_error("%s '%s': %s", label, path, strerror(errno));
	if (S_ISDIR(st.st_mode))
		return rb_error("%s '%s' is a directory", label, path);
	if (S_ISREG(st.st_mode) && access(path, W_OK) != 0)
		return rb_error("%s '%s': %s", label, path, strerror(errno));
	return S_ISREG(st.st_mode) ? check_directory(label, path) : 0;
}

int cli_guard(const struct cli_paths *p)
{
	char a_copy[4096], b_copy[4096];

	for (size_t i = 0; i < p->n; i++) {
		struct identity a;

		if (p->items[i].kind != CLI_OUT || strcmp(p->items[i].path, "-") == 0)
			continue;
		if (check_writable(p->items[i].label, p->items[i].path) < 0)
			return -1;
		a = identify(p->items[i].path, a_copy, sizeof(a_copy));
		for (size_t j = 0; j < p->n; j++) {
			struct identity b;

			/* a pair of outputs is compared once */
			if (j == i || (j < i && p->items[j].kind == CLI_OUT) ||
			    strcmp(p->items[j].path, "-") == 0)
				continue;
			b = identify(p->items[j].path, b_copy, sizeof(b_copy));
			if (!same(&a, &b))
				continue;
			if (p->items[j].kind == CLI_OUT)
				return rb_error("%s and %s both write to '%s': give each its own "
						"file",
						p->items[j].label, p->items[i].label,
						p->items[j].path);
			return rb_error("%s '%s' is also an input of this command (%s '%s'): it "
					"would be replaced by the output; write somewhere else",
					p->items[i].label, p->items[i].path, p->items[j].label,
					p->items[j].path);
		}
	}
	return 0;
}

bool cli_is_regular_or_new(const char *path)
{
	struct stat st;

	return stat(path, &st) != 0 || S_ISREG(st.st_mode);
}

/* ---- writes ---- */

static bool stdout_reported; /* said once: the exit's check stays quiet */

int cli_stdout_failed(void)
{
	stdout_reported = true;
	if (errno == EPIPE) /* the reader went away (| head): as a program killed by SIGPIPE */
		return 128 + 13;
	return cli_fail(CLI_EXIT_OUTPUT, "cannot write to standard output: %s",
			strerror(errno ? errno : EIO));
}

int cli_finish_stdout(int ret)
{
	int failed;

	errno = 0;
	failed = fflush(stdout) != 0 || ferror(stdout);
	if (fclose(stdout) != 0)
		failed = 1;
	if (!failed || stdout_reported) /* the command said so, with its exit code */
		return ret;
	failed = cli_stdout_failed();
	return ret == RB_EXIT_OK || ret == RB_EXIT_FAIL ? failed : ret;
}

int cli_write_file(const char *path, int (*write)(FILE *f, void *ctx), void *ctx)
{
	if (strcmp(path, "-") == 0) {
		errno = 0;
		if (write(stdout, ctx) < 0 || fflush(stdout) != 0 || ferror(stdout))
			return cli_stdout_failed();
		return RB_EXIT_OK;
	}
	if (rb_file_write_atomic(path, write, ctx) < 0)
		return cli_fail(CLI_EXIT_OUTPUT, "%s", rb_last_error());
	return RB_EXIT_OK;
}
