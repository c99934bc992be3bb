/* The emulated transport: every operation goes to an emulated kernel in src/sim/
 * (sim.h), the vendor rknpu or the mainline rocket one, on the emulated NPU. `priv` is a
 * file of the emulated kernel: the transport that created the kernel (file 0) owns it,
 * those of open_file (further files) close their file only. The clock is the kernel's
 * virtual clock, so device times measured through the transport are modeled, never
 * measured. */
#include "dev/transport.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

#include "sim/sim.h"

struct sim_file {
	struct rb_sim_kmod *k;
	int file; /* 0: the kernel's first file, which owns it */
};

static struct rb_sim_kmod *kmod(void *priv)
{
	return ((struct sim_file *)priv)->k;
}

static int sim_ioctl(void *priv, unsigned long request, void *arg)
{
	const struct sim_file *f = priv;

	return rb_sim_kmod_file_ioctl(f->k, f->file, request, arg);
}

static int sim_mmap(void *priv, size_t len, uint64_t offset, void **addr)
{
	const struct sim_file *f = priv;

	return rb_sim_kmod_file_mmap(f->k, f->file, len, offset, addr);
}

static int sim_munmap(void *priv, void *addr, size_t len)
{
	return rb_sim_kmod_munmap(kmod(priv), addr, len);
}

static int sim_wait(void *priv, int fence_fd, int timeout_ms)
{
	return rb_sim_kmod_wait(kmod(priv), fence_fd, timeout_ms);
}

static uint64_t sim_now_ns(void *priv)
{
	return rb_sim_kmod_now_ns(kmod(priv));
}

static int sim_close_fd(void *priv, int fd)
{
	return rb_sim_kmod_close_fd(kmod(priv), fd);
}

static const char *sim_fault_text(void *priv)
{
	return rb_sim_kmod_last_fault(kmod(priv));
}

static const char *sim_kernel_log(void *priv)
{
	return rb_sim_kmod_log(kmod(priv));
}

static int sim_group_begin(void *priv, unsigned threads)
{
	return rb_sim_kmod_group_begin(kmod(priv), threads);
}

static void sim_group_leave(void *priv)
{
	rb_sim_kmod_group_leave(kmod(priv));
}

static void sim_group_end(void *priv)
{
	rb_sim_kmod_group_end(kmod(priv));
}

static void sim_release(void *priv)
{
	struct sim_file *f = priv;

	if (f->file)
		rb_sim_kmod_file_close(f->k, f->file);
	else
		rb_sim_kmod_free(f->k);
	free(f);
}

static int sim_open_file(void *priv, struct rb_transport *out);

static const struct rb_transport_ops sim_ops = {
    .name = "sim",
    .ioctl = sim_ioctl,
    .mmap = sim_mmap,
    .munmap = sim_munmap,
    .wait = sim_wait,
    .now_ns = sim_now_ns,
    .close_fd = sim_close_fd,
    .fault_text = sim_fault_text,
    .kernel_log = sim_kernel_log,
    .group_begin = sim_group_begin,
    .group_leave = sim_group_leave,
    .group_end = sim_group_end,
    .open_file = sim_open_file,
    .release = sim_release,
};

static int sim_open_file(void *priv, struct rb_transport *out)
{
	struct sim_file *f = malloc(sizeof(*f));

	memset(out, 0, sizeof(*out));
	if (!f)
		return rb_set_error(-ENOMEM, "cannot open another file of the emulated kernel: "
					     "out of memory");
	f->k = kmod(priv);
	f->file = rb_sim_kmod_file_open(f->k);
	if (f->file < 0) {
		int err = f->file;

		free(f);
		return rb_set_error(err, "cannot open another file of the emulated kernel: %s",
				    strerror(-err));
	}
	out->ops = &sim_ops;
	out->priv = f;
	return 0;
}

static int open_sim(struct rb_transport *t, const struct rb_sim_config *cfg,
		    struct rb_sim_kmod *(*rb_kmod_new)(const struct rb_sim_config *cfg))
{
	struct rb_sim_config defaults;
	struct sim_file *f;

	memset(t, 0, sizeof(*t));
	if (!cfg) {
		rb_sim_config_init(&defaults);
		cfg = &defaults;
	}
	f = calloc(1, sizeof(*f));
	if (!f)
		return rb_set_error(-ENOMEM, "cannot create the emulated kernel: out of memory");
	f->k = rb_kmod_new(cfg);
	if (!f->k) {
		int err = -errno; /* the emulated kernel recorded why */

		free(f);
		return err;
	}
	t->ops = &sim_ops;
	t->priv = f;
	t->model_only = cfg->model_only;
	return 0;
}

int rb_transport_open_sim_rknpu(struct rb_transport *t, const struct rb_sim_config *cfg)
{
	return open_sim(t, cfg, rb_sim_kmod_rknpu_new);
}

int rb_transport_open_sim_rocket(struct rb_transport *t, const struct rb_sim_config *cfg)
{
	return open_sim(t, cfg, rb_sim_kmod_rocket_new);
}

struct rb_sim_kmod *rb_transport_sim_kmod(const struct rb_transport *t)
{
	return t->ops == &sim_ops ? kmod(t->priv) : NULL;
}
