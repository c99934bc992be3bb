/* The host transport: a real device node. ioctls go through drmIoctl (which restarts
 * on EINTR/EAGAIN), buffers are mapped with mmap(MAP_SHARED) at the fake offset the
 * kernel hands out, fences are sync_file fds waited on with poll, and time is
 * CLOCK_MONOTONIC. `priv` holds the fd; the transport owns it. */
#include "dev/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/sync_file.h>
#include <xf86drm.h>

#include "core/error.h"
#include "dev/discover.h"

struct host {
	int fd;
	char path[]; /* the node, for open_file */
};

static int host_fd(void *priv)
{
	return ((struct host *)priv)->fd;
}

static int host_ioctl(void *priv, unsigned long request, void *arg)
{
	if (drmIoctl(host_fd(priv), request, arg) < 0)
		return -errno;
	return 0;
}

static int host_mmap(void *priv, size_t len, uint64_t offset, void **addr)
{
	void *p;

	if (offset > (uint64_t)INT64_MAX)
		return -EINVAL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, host_fd(priv), (off_t)offset);
	if (p == MAP_FAILED)
		return -errno;
	*addr = p;
	return 0;
}

static int host_munmap(void *priv, void *addr, size_t len)
{
	(void)priv;
	if (munmap(addr, len) < 0)
		return -errno;
	return 0;
}

/* A fence that signalled with an error (a job the kernel gave up on) still polls
 * readable; the sync_file status tells the two apart. A kernel whose fences are not
 * sync_files (ENOTTY) is taken at poll's word. */
static int fence_status(int fd)
{
	struct sync_file_info info;

	memset(&info, 0, sizeof(info));
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info) < 0)
		return 0;
	return info.status < 0 ? info.status : 0;
}

static int host_wait(void *priv, int fence_fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fence_fd, .events = POLLIN};
	int ret;

	(void)priv;
	do {
		ret = poll(&pfd, 1, timeout_ms);
	} while (ret < 0 && (errno == EINTR || errno == EAGAIN));
	if (ret < 0)
		return -errno;
	if (ret == 0)
		return -ETIMEDOUT;
	if (pfd.revents & POLLNVAL)
		return -EBADF;
	return fence_status(fence_fd);
}

static uint64_t host_now_ns(void *priv)
{
	struct timespec ts;

	(void)priv;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int host_close_fd(void *priv, int fd)
{
	(void)priv;
	if (close(fd) < 0)
		return -errno;
	return 0;
}

static int host_open_file(void *priv, struct rb_transport *out)
{
	return rb_transport_open_host(out, ((struct host *)priv)->path);
}

static void host_release(void *priv)
{
	close(host_fd(priv));
	free(priv);
}

static const struct rb_transport_ops host_ops = {
    .name = "host",
    .ioctl = host_ioctl,
    .mmap = host_mmap,
    .munmap = host_munmap,
    .wait = host_wait,
    .now_ns = host_now_ns,
    .close_fd = host_close_fd,
    .open_file = host_open_file,
    .release = host_release,
};

int rb_transport_open_host(struct rb_transport *t, const char *path)
{
	struct host *h;
	int fd;

	memset(t, 0, sizeof(*t));
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return rb_discover_open_error(path, -errno, NULL);
	h = malloc(sizeof(*h) + strlen(path) + 1);
	if (!h) {
		close(fd);
		return rb_set_error(-ENOMEM, "cannot open '%s': out of memory", path);
	}
	h->fd = fd;
	memcpy(h->path, path, strlen(path) + 1);
	t->ops = &host_ops;
	t->priv = h;
	return 0;
}

void rb_transport_close(struct rb_transport *t)
{
	if (t->ops)
		t->ops->release(t->priv);
	memset(t, 0, sizeof(*t));
}

int rb_transport_open_file(const struct rb_transport *t, struct rb_transport *out)
{
	int err;

	memset(out, 0, sizeof(*out));
	if (!t || !t->ops || !t->ops->open_file)
		return rb_set_error(-EOPNOTSUPP, "the %s transport cannot open another file",
				    t && t->ops ? t->ops->name : "closed");
	err = t->ops->open_file(t->priv, out);
	if (err == 0)
		out->model_only = t->model_only;
	return err;
}

const char *rb_transport_fault_text(const struct rb_transport *t)
{
	return t && t->ops && t->ops->fault_text ? t->ops->fault_text(t->priv) : "";
}

const char *rb_transport_kernel_log(const struct rb_transport *t)
{
	return t && t->ops && t->ops->kernel_log ? t->ops->kernel_log(t->priv) : "";
}

int rb_transport_group_begin(const struct rb_transport *t, unsigned threads)
{
	return t && t->ops && t->ops->group_begin ? t->ops->group_begin(t->priv, threads)
						  : -EOPNOTSUPP;
}

void rb_transport_group_leave(const struct rb_transport *t)
{
	if (t && t->ops && t->ops->group_leave)
		t->ops->group_leave(t->priv);
}

void rb_transport_group_end(const struct rb_transport *t)
{
	if (t && t->ops && t->ops->group_end)
		t->ops->group_end(t->priv);
}
