/* Whole-file reads and crash-safe writes (see fileio.h). */
#include "core/fileio.h"

#include "core/error.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Refuse to slurp more than this: inputs are small JSON files, and a mistaken path such
 * as /dev/zero must not eat the machine's memory. */
#define FILE_MAX ((size_t)256 << 20)

/* ---- reading ---- */

/* Grows the buffer to at least `want` bytes (doubling), at most FILE_MAX + 2: one byte
 * past the limit is enough to notice a file that is too big, and the terminator. */
static int grow(char **buf, size_t *cap, size_t want)
{
	size_t cap2 = *cap ? *cap * 2 : 4096;
	char *p;

	while (cap2 < want)
		cap2 *= 2;
	if (cap2 > FILE_MAX + 2)
		cap2 = FILE_MAX + 2;
	p = realloc(*buf, cap2);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = cap2;
	return 0;
}

#define STOP_SLICE_MS 100

/* ---- bounded input: every read of a pipe, FIFO or terminal waits at most until a
 * deadline, and a signal (SIGINT, SIGTERM caught by the CLI) ends the wait ---- */

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int rb_file_read_timeout_ms(void)
{
	const char *env = getenv("RKNN_BENCH_READ_TIMEOUT_MS");
	char *end;
	long v;

	if (!env || !*env)
		return RB_READ_TIMEOUT_MS;
	errno = 0;
	v = strtol(env, &end, 10);
	return errno || *end || v < 1 || v > RB_READ_TIMEOUT_MS ? RB_READ_TIMEOUT_MS : (int)v;
}

static int stopped(const struct rb_file_in *in)
{
	return rb_set_error(-EINTR, "cannot read '%s': stopped by a signal while waiting for data",
			    in->path);
}

static const volatile sig_atomic_t *stop_flag;

void rb_file_read_stop_flag(const volatile sig_atomic_t *flag)
{
	stop_flag = flag;
}

/* Waits until the descriptor has data (or end of file) or the deadline passes: before
 * any data the first-data limit (a FIFO's writer may never come), then the whole
 * read's limit. The wait is cut in slices so that a stop asked for by a signal (which
 * may reach another thread) ends it within one slice. */
static int wait_data(const struct rb_file_in *in)
{
	struct pollfd p = {.fd = in->fd, .events = POLLIN};
	double end = in->opened_ms + (in->got_data ? in->limit_ms : in->first_ms), left;
	int r = 0;

	while (r == 0 && (left = end - now_ms()) > 0) {
		if (stop_flag && *stop_flag)
			return stopped(in);
		r = poll(&p, 1, left < STOP_SLICE_MS ? (int)left + 1 : STOP_SLICE_MS);
		if (r < 0 && errno == EINTR)
			r = 0; /* the flag says whether it was a stop */
	}
	if (r < 0)
		return rb_set_error(-errno, "cannot read '%s': %s", in->path, strerror(errno));
	if (r > 0)
		return 0;
	if (!in->got_data && S_ISFIFO(in->st.st_mode))
		return rb_set_error(-ETIMEDOUT,
				    "cannot read '%s': it is a FIFO and nothing was written to it "
				    "for %g s",
				    in->path, in->first_ms / 1e3);
	return rb_set_error(-ETIMEDOUT,
			    "cannot read '%s': the pipe stalled; its whole read must finish "
			    "within %g s (RKNN_BENCH_READ_TIMEOUT_MS)",
			    in->path, (in->got_data ? in->limit_ms : in->first_ms) / 1e3);
}

/* One read of up to n bytes (fewer from a pipe; 0 at end of file), after waiting. */
int rb_file_in_read_some(struct rb_file_in *in, void *buf, size_t n, size_t *got)
{
	ssize_t r;
	int rc;

	for (;;) {
		if (in->waits && (rc = wait_data(in)) < 0)
			return rc;
		r = read(in->fd, buf, n);
		if (r >= 0)
			break;
		if (errno == EINTR && stop_flag && *stop_flag)
			return stopped(in);
		if (errno != EAGAIN && errno != EINTR)
			return rb_set_error(-errno, "cannot read '%s': %s", in->path,
					    strerror(errno));
	}
	in->got_data |= r > 0;
	*got = (size_t)r;
	return 0;
}

int rb_file_in_open(struct rb_file_in *in, const char *path)
{
	int err;

	memset(in, 0, sizeof(*in));
	in->path = path;
	/* non-blocking: opening a FIFO that has no writer must not hang, and reads of a
	 * pipe are polled against the deadline (wait_data) */
	in->fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (in->fd < 0) {
		err = errno;
		return rb_set_error(-err, "cannot open '%s': %s", path, strerror(err));
	}
	if (fstat(in->fd, &in->st) < 0) {
		err = errno;
		rb_file_in_close(in);
		return rb_set_error(-err, "cannot read '%s': %s", path, strerror(err));
	}
	/* open() succeeds on a directory; say so instead of failing later in read() */
	if (S_ISDIR(in->st.st_mode)) {
		rb_file_in_close(in);
		return rb_set_error(-EISDIR, "cannot read '%s': %s", path, strerror(EISDIR));
	}
	in->waits = !S_ISREG(in->st.st_mode) && !S_ISBLK(in->st.st_mode);
	in->limit_ms = rb_file_read_timeout_ms();
	in->first_ms = in->limit_ms < RB_FIFO_TIMEOUT_MS ? in->limit_ms : RB_FIFO_TIMEOUT_MS;
	in->opened_ms = now_ms();
	return 0;
}

int rb_file_in_read(struct rb_file_in *in, void *buf, size_t n, size_t *got)
{
	size_t done = 0, part = 1;
	int rc = 0;

	while (rc == 0 && done < n && part) {
		rc = rb_file_in_read_some(in, (char *)buf + done, n - done, &part);
		done += rc ? 0 : part;
	}
	*got = done;
	return rc;
}

void rb_file_in_close(struct rb_file_in *in)
{
	if (in->fd >= 0)
		close(in->fd);
	in->fd = -1;
}

ssize_t rb_file_read_prefix(const char *path, char *buf, size_t size)
{
	struct rb_file_in in;
	size_t got = 0;
	int rc = rb_file_in_open(&in, path);

	buf[0] = '\0';
	if (rc)
		return rc;
	rc = rb_file_in_read(&in, buf, size - 1, &got);
	rb_file_in_close(&in);
	buf[got] = '\0';
	return rc ? rc : (ssize_t)got;
}

/* Reads until end of file; the size from fstat is only a hint (pipes, /proc). */
static int read_all(struct rb_file_in *in, size_t max, const char *kind, size_t hint, char **data,
		    size_t *len)
{
	char *buf = NULL;
	size_t cap = 0, n = 0, got = 0;
	int rc;

	for (;;) {
		/* n <= FILE_MAX here, so a full-size buffer always has room for one more
		 * byte: a file at or past the limit is seen, never cut short */
		if (n + 1 >= cap && grow(&buf, &cap, n + 2 + (n ? 0 : hint))) {
			free(buf);
			return rb_set_error(-ENOMEM, "cannot read '%s': out of memory", in->path);
		}
		rc = rb_file_in_read_some(in, buf + n, cap - n - 1, &got);
		if (rc) {
			free(buf);
			return rc;
		}
		if (got == 0)
			break;
		n += got;
		if (n > max) {
			free(buf);
			return rb_set_error(
			    -EFBIG, "cannot read '%s': larger than the %zu MiB limit for %s",
			    in->path, max >> 20, kind);
		}
	}
	buf[n] = '\0';
	*data = buf;
	*len = n;
	return 0;
}

int rb_file_read_max(const char *path, size_t max, const char *kind, char **data, size_t *len)
{
	struct rb_file_in in;
	size_t n = 0, hint;
	int rc;

	*data = NULL;
	rc = rb_file_in_open(&in, path);
	if (rc)
		return rc;
	if (max > FILE_MAX)
		max = FILE_MAX;
	hint = S_ISREG(in.st.st_mode) && in.st.st_size > 0 && (size_t)in.st.st_size < max
		   ? (size_t)in.st.st_size
		   : 0;
	rc = read_all(&in, max, kind, hint, data, &n);
	rb_file_in_close(&in);
	if (len)
		*len = n;
	return rc;
}

int rb_file_read(const char *path, char **data, size_t *len)
{
	return rb_file_read_max(path, FILE_MAX, "an input file", data, len);
}

/* ---- writing ---- */

/* "<dir>/.<base>.XXXXXX": the same directory, so rename() cannot cross filesystems. */
static int temp_name(const char *path, char **out)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dir_len = (int)(base - path);
	size_t size = strlen(path) + sizeof(".XXXXXX") + 1;

	if (!*base)
		return rb_set_error(-EINVAL, "cannot write '%s': not a file name", path);
	*out = malloc(size);
	if (!*out)
		return rb_set_error(-ENOMEM, "cannot write '%s': out of memory", path);
	snprintf(*out, size, "%.*s.%s.XXXXXX", dir_len, path, base);
	return 0;
}

static mode_t current_umask(void)
{
	static const char key[] = "Umask:";
	FILE *f = fopen("/proc/self/status", "re");
	unsigned long mask;
	char line[128], *end;
	mode_t m;

	/* Linux shows the umask here; reading it leaves the process state alone */
	while (f && fgets(line, sizeof(line), f)) {
		const char *num = line + sizeof(key) - 1;

		if (strncmp(line, key, sizeof(key) - 1) != 0)
			continue;
		errno = 0;
		mask = strtoul(num, &end, 8);
		if (!errno && end != num && mask <= 0777) {
			fclose(f);
			return (mode_t)mask;
		}
	}
	if (f)
		fclose(f);
	m = umask(022);
	umask(m);
	return m;
}

/* mkstemp() creates 0600 files; give the result the mode of the file it replaces, or
 * the mode fopen() would have used, so results stay readable by others. Failing to
 * change the mode is not worth losing the results over. */
static void set_mode(int fd, const char *path)
{
	struct stat st;
	mode_t mode;

	if (stat(path, &st) == 0)
		mode = st.st_mode & 07777;
	else
		mode = 0666 & ~current_umask();
	(void)fchmod(fd, mode);
}

/* Runs the writer and pushes its bytes to the disk; closes f in every case. */
static int write_sync(FILE *f, const char *path, rb_file_writer writer, void *ctx)
{
	char why[512];
	bool own_message;
	int rc;

	/* cleared so that a message left by a failing writer can be told apart */
	rb_set_error(0, "%s", "");
	rc = writer(f, ctx);
	if (rc > 0)
		rc = -EIO;
	own_message = rc && *rb_last_error();
	errno = 0;
	/* a writer that failed on the stream ("cannot write the report"): the stream's
	 * own reason (a full disk) is the one to tell */
	if (rc && ferror(f) && fflush(f) != 0 && errno) {
		rc = -errno;
		own_message = false;
	}
	if (!rc && fflush(f) != 0)
		rc = errno ? -errno : -EIO;
	if (!rc && ferror(f))
		rc = -EIO;
	/* EINVAL: a device or pipe, which has nothing to sync */
	if (!rc && fsync(fileno(f)) < 0 && errno != EINVAL)
		rc = -errno;
	if (fclose(f) != 0 && !rc)
		rc = errno ? -errno : -EIO;
	if (!rc)
		return 0;
	snprintf(why, sizeof(why), "%s", own_message ? rb_last_error() : strerror(-rc));
	return rb_set_error(rc, "cannot write '%s': %s", path, why);
}

/* Makes the rename itself durable. Best effort: some filesystems refuse to fsync a
 * directory, and the data is already safe in the file. */
static void sync_dir(const char *tmp)
{
	const char *slash = strrchr(tmp, '/');
	char *dir = slash ? strndup(tmp, (size_t)(slash - tmp) + 1) : NULL;
	int fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		(void)fsync(fd);
		close(fd);
	}
	free(dir);
}

/* An existing device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written in
 * place: renaming a temporary over it would replace the node with a regular file. */
static int write_special(const char *path, rb_file_writer writer, void *ctx)
{
	/* non-blocking open: a FIFO nobody reads is refused (ENXIO) instead of hanging */
	int fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK), err;
	FILE *f;

	if (fd < 0) {
		err = errno;
		return rb_set_error(-err, "cannot write '%s': %s", path,
				    err == ENXIO ? "a FIFO that nobody reads" : strerror(err));
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); /* then wait for the reader */
	f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		return rb_set_error(-err, "cannot write '%s': %s", path, strerror(err));
	}
	return write_sync(f, path, writer, ctx);
}

/* "-": standard output, left open (the command may print more after it). */
static int write_stdout(rb_file_writer writer, void *ctx)
{
	int rc = writer(stdout, ctx);

	errno = 0;
	if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout)))
		rc = errno ? -errno : -EIO;
	if (rc > 0)
		rc = -EIO;
	return rc ? rb_set_error(rc, "cannot write to standard output: %s", strerror(-rc)) : 0;
}

int rb_file_write_atomic(const char *path, rb_file_writer writer, void *ctx)
{
	struct stat st;
	char *tmp;
	FILE *f;
	int fd, rc, err;

	if (strcmp(path, "-") == 0)
		return write_stdout(writer, ctx);
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return write_special(path, writer, ctx);
	rc = temp_name(path, &tmp);
	if (rc)
		return rc;
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = errno;
		rc = rb_set_error(-err, "cannot write '%s': %s", path, strerror(err));
		goto err_free;
	}
	set_mode(fd, path);
	f = fdopen(fd, "w");
	if (!f) {
		err = errno;
		close(fd);
		rc = rb_set_error(-err, "cannot write '%s': %s", path, strerror(err));
		goto err_unlink;
	}
	rc = write_sync(f, path, writer, ctx);
	if (rc)
		goto err_unlink;
	if (rename(tmp, path) < 0) {
		err = errno;
		rc = rb_set_error(-err, "cannot replace '%s': %s", path, strerror(err));
		goto err_unlink;
	}
	sync_dir(tmp);
	free(tmp);
	return 0;

err_unlink:
	unlink(tmp);
err_free:
	free(tmp);
	return rc;
}
