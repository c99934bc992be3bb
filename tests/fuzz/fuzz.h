/* The fuzz targets (tests/fuzz/fuzz_*.c): each defines LLVMFuzzerTestOneInput, run by
 * libFuzzer under `make fuzz` (clang) and by the replay runner (replay.c, gcc) over
 * its corpus and regressions under `make check`.
 *
 * A target returns 0 for every input the code under test handles; anything it
 * considers a bug (a crash, a sanitizer report, a failed-but-silent error path)
 * aborts through FUZZ_CHECK so both runners report it. */
#ifndef RB_TESTS_FUZZ_H
#define RB_TESTS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__,      \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* The unread rest of a fuzz input; fuzz_take copies the next n bytes out, bytes past
 * the end reading as zero. */
struct fuzz_input {
	const uint8_t *p;
	size_t left;
};

static inline void fuzz_take(struct fuzz_input *in, void *dst, size_t n)
{
	size_t got = n < in->left ? n : in->left;

	memset(dst, 0, n);
	memcpy(dst, in->p, got);
	in->p += got;
	in->left -= got;
}

/* A failed load must say why (rb_last_error), and a good one must not leave junk. */
#define FUZZ_CHECK_ERROR(ret) FUZZ_CHECK((ret) == 0 || rb_last_error()[0] != '\0')

#endif
