/* Files: whole-file reads and crash-safe writes. */
#ifndef RB_CORE_FILEIO_H
#define RB_CORE_FILEIO_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

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

/* Reads of a pipe, FIFO or terminal are bounded in time: a FIFO must get its first data
 * within RB_FIFO_TIMEOUT_MS (a writer may never come), and the whole read must end
 * within the read limit, RB_READ_TIMEOUT_MS or the environment's
 * RKNN_BENCH_READ_TIMEOUT_MS if smaller (tests use 1000), which also caps the first.
 * A stop asked for by a signal (rb_file_read_stop_flag) ends the read with -EINTR. Regular files
 * are read without a limit. */
#ifndef RB_FIFO_TIMEOUT_MS
#define RB_FIFO_TIMEOUT_MS 10000
#endif
#define RB_READ_TIMEOUT_MS 60000
int rb_file_read_timeout_ms(void);
/* The flag a signal handler sets to ask for a stop (the CLI's): a wait for a pipe or
 * FIFO checks it every 100 ms, in any thread, and ends with -EINTR when it is set. */
void rb_file_read_stop_flag(const volatile sig_atomic_t *flag);

/* A file opened for bounded reading (rb_file_in_open: -errno with a message naming the
 * file, -EISDIR for a directory). rb_file_in_read fills buf with n bytes, fewer only at
 * the end of the file; -ETIMEDOUT past the limits above, -EINTR on a signal. */
struct rb_file_in {
	int fd;
	const char *path;
	struct stat st;
	bool waits;    /* not a regular file: every read is polled against the limits */
	bool got_data; /* the first-data limit is over */
	double opened_ms, first_ms, limit_ms;
};
int rb_file_in_open(struct rb_file_in *in, const char *path);
int rb_file_in_read(struct rb_file_in *in, void *buf, size_t n, size_t *got);
/* One read after the wait: what a pipe has now, up to n bytes (0 at the end). */
int rb_file_in_read_some(struct rb_file_in *in, void *buf, size_t n, size_t *got);
void rb_file_in_close(struct rb_file_in *in);

/* The first size - 1 bytes of a small file (a device-tree or /proc entry, often named
 * by the environment) into buf, NUL-terminated (what was read, even on an error):
 * bounded like every read, so a FIFO cannot hang the command and a signal ends the wait.
 * The byte count, or a negative errno. */
ssize_t rb_file_read_prefix(const char *path, char *buf, size_t size);

/* Writes `path` through a temporary file in the same directory that is renamed over it
 * only when `write` returned 0 and every byte reached the disk; on any failure the
 * temporary is removed and `path` is untouched. An existing device, FIFO or socket
 * (/dev/null, /dev/stdout) is written in place instead, never replaced; "-" is standard
 * output (flushed, left open). */
typedef int (*rb_file_writer)(FILE *f, void *ctx);
int rb_file_write_atomic(const char *path, rb_file_writer write, void *ctx);

#endif
