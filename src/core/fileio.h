/* Files: whole-file reads and crash-safe writes. */
#ifndef RB_CORE_FILEIO_H
#define RB_CORE_FILEIO_H

#include <stddef.h>
#include <stdio.h>

/* Reads a whole file into a NUL-terminated buffer (free with free()). Returns 0 or a
 * negative errno with a message naming the file. */
int rb_file_read(const char *path, char **data, size_t *len);

/* Writes `path` through a temporary file in the same directory that is renamed over it
 * only when `write` returned 0 and every byte reached the disk; on any failure the
 * temporary is removed and `path` is untouched. An existing device, FIFO or socket
 * (/dev/null, /dev/stdout) is written in place instead, never replaced. */
typedef int (*rb_file_writer)(FILE *f, void *ctx);
int rb_file_write_atomic(const char *path, rb_file_writer write, void *ctx);

#endif
