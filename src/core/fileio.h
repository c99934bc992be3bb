/* Files: whole-file reads and crash-safe writes. */
#ifndef RB_CORE_FILEIO_H
#define RB_CORE_FILEIO_H

#include <stddef.h>
#include <stdio.h>

/* A file's text as read (NUL-terminated; data is malloc'ed). */
struct rb_text {
	char *data;
	size_t len;
};

/* Reads a whole file into a NUL-terminated buffer (free with free()). Returns 0 or a
 * negative errno with a message naming the file. */
int rb_file_read(const char *path, char **data, size_t *len);
/* The same with a smaller limit (at most 256 MiB) for one `kind` of file, named in the
 * message of a file that is larger ("... limit for a register program"). Regular files,
 * pipes, /dev/stdin and FIFOs are read to the end. */
int rb_file_read_max(const char *path, size_t max, const char *kind, char **data, size_t *len);

/* How long rb_file_read waits for a FIFO's first data before refusing it. */
#ifndef RB_FIFO_TIMEOUT_MS
#define RB_FIFO_TIMEOUT_MS 10000
#endif

/* Writes `path` through a temporary file in the same directory that is renamed over it
 * only when `write` returned 0 and every byte reached the disk; on any failure the
 * temporary is removed and `path` is untouched. An existing device, FIFO or socket
 * (/dev/null, /dev/stdout) is written in place instead, never replaced; "-" is standard
 * output (flushed, left open). */
typedef int (*rb_file_writer)(FILE *f, void *ctx);
int rb_file_write_atomic(const char *path, rb_file_writer write, void *ctx);

#endif
