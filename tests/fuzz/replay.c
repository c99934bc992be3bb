/* Replays fuzz inputs through one fuzz target without libFuzzer, so the corpus and every
 * crash once found (tests/fuzz/regressions/) stay tests under `make check` with gcc.
 *
 * Usage: fuzz-replay-TARGET FILE|DIR...   (every regular file of a DIR, once)
 * Prints the number of inputs run; a finding aborts like under libFuzzer. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/error.h"
#include "core/fileio.h"
#include "fuzz.h"

/* Targets without an LLVMFuzzerInitialize still link. */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

/* The input goes in a buffer of its exact size, as libFuzzer passes it, so a read past
 * its end is caught under SANITIZE=1 (rb_file_read adds a NUL). */
static int run_file(const char *path)
{
	char *data = NULL;
	uint8_t *exact;
	size_t len = 0;

	if (rb_file_read(path, &data, &len) < 0) {
		fprintf(stderr, "fuzz-replay: %s\n", rb_last_error());
		return -1;
	}
	exact = malloc(len ? len : 1);
	if (!exact) {
		free(data);
		return -1;
	}
	memcpy(exact, data, len);
	free(data);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int run_dir(const char *dir, size_t *count)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), ret = 0;

	if (n < 0) {
		fprintf(stderr, "fuzz-replay: cannot list '%s': %s\n", dir, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (ret == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			ret = run_file(path);
			++*count;
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

int main(int argc, char **argv)
{
	size_t count = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		int ret;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "fuzz-replay: '%s': %s\n", argv[i], strerror(errno));
			return 2;
		}
		if (S_ISDIR(st.st_mode)) {
			ret = run_dir(argv[i], &count);
		} else {
			ret = run_file(argv[i]);
			count++;
		}
		if (ret < 0)
			return 2;
	}
	printf("%zu inputs\n", count);
	return 0;
}
