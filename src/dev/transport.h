/* The transport: the only seam between the userspace drivers and a kernel.
 *
 * The userspace drivers (src/dev/rknpu.c, src/dev/rocket.c) are written once against this
 * interface. The host transport opens a device node and calls drmIoctl / mmap / munmap /
 * poll / close; the emulated transport calls the emulated kernel in src/sim/, which
 * implements the same ABI (struct layouts, flags, errors) on the emulated NPU. So
 * everything but the syscall itself is the code that runs on a board.
 *
 * Every call returns 0 or a negative errno. Ownership: rb_transport_open_* fills a
 * caller-owned struct; rb_transport_close releases it (and the device or emulator). */
#ifndef RB_DEV_TRANSPORT_H
#define RB_DEV_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rb_sim_config;
struct rb_sim_kmod;
struct rb_transport;

struct rb_transport_ops {
	const char *name; /* "host" or "sim" */
	int (*ioctl)(void *priv, unsigned long request, void *arg);
	int (*mmap)(void *priv, size_t len, uint64_t offset, void **addr);
	int (*munmap)(void *priv, void *addr, size_t len);
	/* Waits until the fence fd signals; -ETIMEDOUT after timeout_ms. */
	int (*wait)(void *priv, int fence_fd, int timeout_ms);
	/* The clock device time is measured with: CLOCK_MONOTONIC on a board, the
	 * emulator's virtual clock under emulation (so one timing code serves both). */
	uint64_t (*now_ns)(void *priv);
	/* Closes an fd the kernel handed out (a fence). */
	int (*close_fd)(void *priv, int fd);
	/* What the kernel said about the last failed job, and its whole log, for messages:
	 * the emulated kernel keeps both; on a board they are in dmesg, so "" (optional:
	 * NULL means ""). */
	const char *(*fault_text)(void *priv);
	const char *(*kernel_log)(void *priv);
	/* A thread group (optional, NULL on a board where cores run concurrently by
	 * themselves): `threads` threads are about to block in SUBMIT at once; each calls
	 * group_leave when it submits no more; group_end after they joined. The emulated
	 * kernel runs jobs on the calling thread and needs this to run them together in
	 * virtual time (src/sim/sim.h). begin: 0 or a negative errno (then no group). */
	int (*group_begin)(void *priv, unsigned threads);
	void (*group_leave)(void *priv);
	void (*group_end)(void *priv);
	/* Another open of the same device node (optional): a second DRM file, with handles
	 * and (rocket) an NPU address space and scheduler entity of its own. Fills `out`;
	 * close it with rb_transport_close before this one. */
	int (*open_file)(void *priv, struct rb_transport *out);
	void (*release)(void *priv);
};

struct rb_transport {
	const struct rb_transport_ops *ops;
	void *priv;
	/* The emulator runs programs for their timing only (rb_sim_config.model_only):
	 * C is never written. */
	bool model_only;
};

/* Opens the device node at `path` (O_RDWR | O_CLOEXEC). */
int rb_transport_open_host(struct rb_transport *t, const char *path);
/* Creates an emulated vendor-rknpu kernel with its emulated NPU. */
int rb_transport_open_sim_rknpu(struct rb_transport *t, const struct rb_sim_config *cfg);
/* Creates an emulated mainline rocket kernel with its emulated NPU. */
int rb_transport_open_sim_rocket(struct rb_transport *t, const struct rb_sim_config *cfg);
void rb_transport_close(struct rb_transport *t);
/* The emulated kernel behind a sim transport (for tests); NULL for any other transport. */
struct rb_sim_kmod *rb_transport_sim_kmod(const struct rb_transport *t);

/* Another file on the transport's device (see open_file): 0 or a negative errno. */
int rb_transport_open_file(const struct rb_transport *t, struct rb_transport *out);

/* The transport's fault_text / kernel_log, "" where it has none. */
const char *rb_transport_fault_text(const struct rb_transport *t);
const char *rb_transport_kernel_log(const struct rb_transport *t);

/* The transport's thread group calls; no-ops where it has none. */
int rb_transport_group_begin(const struct rb_transport *t, unsigned threads);
void rb_transport_group_leave(const struct rb_transport *t);
void rb_transport_group_end(const struct rb_transport *t);

static inline int rb_transport_ioctl(struct rb_transport *t, unsigned long request, void *arg)
{
	return t->ops->ioctl(t->priv, request, arg);
}

#endif
