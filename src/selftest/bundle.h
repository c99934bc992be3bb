/* The bug report bundle of `rknn-bench bugreport`: named files in memory, written as one
 * POSIX ustar archive (no compression here: the command pipes it through gzip).
 *
 * Ownership: struct rb_bundle is caller-owned (zero it); rb_bundle_add copies the
 * data; rb_bundle_release frees it all. */
#ifndef RB_SELFTEST_BUNDLE_H
#define RB_SELFTEST_BUNDLE_H

#include <stddef.h>
#include <stdio.h>
#include <time.h>

#include <cJSON.h>

struct rb_bundle_file {
	char name[100]; /* ustar's name field: at most 99 bytes */
	char *data;
	size_t len;
};

struct rb_bundle {
	struct rb_bundle_file *files;
	size_t n;
};

/* 0, -EINVAL (a name longer than 99 bytes or empty), -ENOMEM. */
int rb_bundle_add(struct rb_bundle *b, const char *name, const char *data, size_t len);
/* Replaces every whole-word occurrence of `word` (2 bytes or more; a word is a run of
 * letters, digits, '-', '_' and '.') in every file by `with`. -ENOMEM. */
int rb_bundle_scrub(struct rb_bundle *b, const char *word, const char *with);
/* The files as a ustar archive (mode 0644, owner 0/0, the given mtime), two zero
 * blocks at the end. 0 or -EIO. */
int rb_bundle_write_tar(const struct rb_bundle *b, FILE *out, time_t mtime);
void rb_bundle_release(struct rb_bundle *b);

/* The files a selftest report (selftest_json.c) carries: programs/coreN.hex of its
 * failure (text `dump` reads) and kernel-log.txt. Returns how many programs, or
 * -ENOMEM. A report without a failure adds only the log note. */
int rb_bundle_add_report_files(struct rb_bundle *b, const cJSON *report);

#endif
