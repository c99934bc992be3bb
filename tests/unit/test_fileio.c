/* Whole-file reads and atomic writes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/error.h"
#include "core/fileio.h"

/* A fresh directory per test, removed with its (flat) contents afterwards. */
static int setup(void **state)
{
	char *dir = strdup("/tmp/test_fileio.XXXXXX");

	if (!dir || !mkdtemp(dir)) {
		free(dir);
		return -1;
	}
	*state = dir;
	return 0;
}

static int teardown(void **state)
{
	char *dir = *state;
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[512];

	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	}
	if (d)
		closedir(d);
	rmdir(dir);
	free(dir);
	return 0;
}

static const char *in(void **state, const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", (const char *)*state, name);
	return path;
}

/* Number of entries in the directory other than "." and "..". */
static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void put(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static int write_text(FILE *f, void *ctx)
{
	return fputs(ctx, f) < 0 ? -EIO : 0;
}

/* Writes half its text, then fails as a real writer would midway. */
static int write_then_fail(FILE *f, void *ctx)
{
	fputs(ctx, f);
	return -EIO;
}

static int write_with_message(FILE *f, void *ctx)
{
	(void)f;
	(void)ctx;
	return rb_set_error(-ENOSPC, "result %d does not fit", 7);
}

static void test_read_missing(void **state)
{
	char *data = (char *)1;
	size_t len = 99;
	char want[600];
	const char *path = in(state, "x.json");

	snprintf(want, sizeof(want), "cannot open '%s': No such file or directory", path);
	assert_int_equal(rb_file_read(path, &data, &len), -ENOENT);
	assert_string_equal(rb_last_error(), want);
	assert_null(data);
}

static void test_read_directory(void **state)
{
	char *data = NULL;
	size_t len;
	char want[600];

	snprintf(want, sizeof(want), "cannot read '%s': Is a directory", (char *)*state);
	assert_int_equal(rb_file_read(*state, &data, &len), -EISDIR);
	assert_string_equal(rb_last_error(), want);
	assert_null(data);
}

static void test_read_contents(void **state)
{
	static const char text[] = "{\"pairs\": []}\n\0tail";
	const char *path = in(state, "a.json");
	char *data;
	size_t len;

	put(path, text, sizeof(text) - 1);
	assert_int_equal(rb_file_read(path, &data, &len), 0);
	assert_int_equal(len, sizeof(text) - 1);
	assert_memory_equal(data, text, len);
	assert_int_equal(data[len], '\0');
	free(data);

	put(path, "", 0);
	assert_int_equal(rb_file_read(path, &data, &len), 0);
	assert_int_equal(len, 0);
	assert_string_equal(data, "");
	free(data);
}

static void test_read_large(void **state)
{
	const char *path = in(state, "big");
	size_t n = 1000003;
	char *big = malloc(n), *data;
	size_t len;

	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		big[i] = (char)('a' + i % 26);
	put(path, big, n);
	assert_int_equal(rb_file_read(path, &data, &len), 0);
	assert_int_equal(len, n);
	assert_memory_equal(data, big, n);
	free(data);
	free(big);
}

/* /proc files report size 0: the reader must not trust st_size. */
static void test_read_proc(void **state)
{
	char *data;
	size_t len;
	(void)state;

	if (access("/proc/self/status", R_OK) != 0)
		skip();
	assert_int_equal(rb_file_read("/proc/self/status", &data, &len), 0);
	assert_true(len > 0);
	assert_int_equal(strlen(data), len);
	assert_non_null(strstr(data, "Name:"));
	free(data);
}

static void test_write_new(void **state)
{
	const char *path = in(state, "out.json");
	char *data;
	size_t len;
	struct stat st;
	mode_t old = umask(022);

	assert_int_equal(rb_file_write_atomic(path, write_text, "{\"results\": []}\n"), 0);
	umask(old);
	assert_int_equal(rb_file_read(path, &data, &len), 0);
	assert_string_equal(data, "{\"results\": []}\n");
	free(data);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644); /* not mkstemp's 0600 */
	assert_int_equal(count_files(*state), 1);
}

static void test_write_replace(void **state)
{
	char path[512];
	char *data;
	size_t len;
	struct stat st;

	snprintf(path, sizeof(path), "%s", in(state, "out.json"));
	put(path, "old", 3);
	assert_int_equal(chmod(path, 0640), 0);
	assert_int_equal(rb_file_write_atomic(path, write_text, "new"), 0);
	assert_int_equal(rb_file_read(path, &data, &len), 0);
	assert_string_equal(data, "new");
	free(data);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0640); /* the replaced file's mode is kept */
	assert_int_equal(count_files(*state), 1);
}

/* A failing writer leaves the old file as it was and no temporary behind. */
static void test_write_failure(void **state)
{
	char path[512], want[600];
	char *data;
	size_t len;

	snprintf(path, sizeof(path), "%s", in(state, "out.json"));
	put(path, "old", 3);
	assert_int_equal(rb_file_write_atomic(path, write_then_fail, "partial"), -EIO);
	snprintf(want, sizeof(want), "cannot write '%s': Input/output error", path);
	assert_string_equal(rb_last_error(), want);
	assert_int_equal(rb_file_write_atomic(path, write_with_message, NULL), -ENOSPC);
	snprintf(want, sizeof(want), "cannot write '%s': result 7 does not fit", path);
	assert_string_equal(rb_last_error(), want);
	assert_int_equal(rb_file_read(path, &data, &len), 0);
	assert_string_equal(data, "old");
	free(data);
	assert_int_equal(count_files(*state), 1);
}

static void test_write_failure_new(void **state)
{
	const char *path = in(state, "new.json");

	assert_int_equal(rb_file_write_atomic(path, write_then_fail, "partial"), -EIO);
	assert_int_equal(access(path, F_OK), -1);
	assert_int_equal(count_files(*state), 0);
}

static void test_write_bad_paths(void **state)
{
	char path[512], want[600];

	snprintf(path, sizeof(path), "%s/no/such/dir/out.json", (char *)*state);
	assert_int_equal(rb_file_write_atomic(path, write_text, "x"), -ENOENT);
	snprintf(want, sizeof(want), "cannot write '%s': No such file or directory", path);
	assert_string_equal(rb_last_error(), want);

	snprintf(path, sizeof(path), "%s/", (char *)*state);
	assert_int_equal(rb_file_write_atomic(path, write_text, "x"), -EINVAL);
	snprintf(want, sizeof(want), "cannot write '%s': not a file name", path);
	assert_string_equal(rb_last_error(), want);

	/* a directory in the way of the target: the rename fails, nothing is left */
	snprintf(path, sizeof(path), "%s", in(state, "sub"));
	assert_int_equal(mkdir(path, 0755), 0);
	assert_true(rb_file_write_atomic(path, write_text, "x") < 0);
	snprintf(want, sizeof(want), "cannot replace '%s': ", path);
	assert_memory_equal(rb_last_error(), want, strlen(want));
	assert_int_equal(count_files(*state), 1);
	rmdir(path);
}

/* A bare file name puts the temporary in the current directory. */
/* A FIFO (like /dev/null or /dev/stdout) is written in place, never replaced by a
 * regular file renamed over it. */
static void test_write_fifo(void **state)
{
	const char *path = in(state, "pipe");
	char buf[64] = {0};
	struct stat st;
	int rd;

	assert_int_equal(mkfifo(path, 0600), 0);
	rd = open(path, O_RDWR | O_NONBLOCK); /* a reader, so the writer's open returns */
	assert_true(rd >= 0);
	assert_int_equal(rb_file_write_atomic(path, write_text, "{}\n"), 0);
	assert_int_equal(read(rd, buf, sizeof(buf) - 1), 3);
	assert_string_equal(buf, "{}\n");
	close(rd);
	assert_int_equal(stat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(count_files(*state), 1);
}

/* A full device: the error names the file and says why; the device stays. */
static void test_write_full_device(void **state)
{
	struct stat st;

	(void)state;
	if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
		skip();
	assert_int_equal(rb_file_write_atomic("/dev/full", write_text, "{}\n"), -ENOSPC);
	assert_string_equal(rb_last_error(), "cannot write '/dev/full': No space left on device");
	assert_int_equal(stat("/dev/full", &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void test_write_relative(void **state)
{
	char cwd[512];
	char *data;
	size_t len;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(*state), 0);
	assert_int_equal(rb_file_write_atomic("rel.json", write_text, "rel"), 0);
	assert_int_equal(rb_file_read("rel.json", &data, &len), 0);
	assert_string_equal(data, "rel");
	free(data);
	assert_int_equal(count_files("."), 1);
	assert_int_equal(chdir(cwd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_read_missing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_directory, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_contents, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_large, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_read_proc, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_new, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_replace, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_failure, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_failure_new, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_bad_paths, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_relative, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_fifo, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_write_full_device, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
