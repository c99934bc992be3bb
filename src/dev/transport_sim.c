/* The emulated transport: every operation goes to an emulated kernel in src/sim/
 * (sim.h), the vendor rknpu or the mainline rocket one, on the emulated NPU. `priv` is the
 * emulated kernel; the transport owns it. The clock is the kernel's virtual clock, so
 * device times measured through the transport are modeled, never measured. */
#include "dev/transport.h"

#include <errno.h>
#include <string.h>

#include "sim/sim.h"

static int sim_ioctl(void *priv, unsigned long request, void *arg)
{
	return rb_sim_kmod_ioctl(priv, request, arg);
}

static int sim_mmap(void *priv, size_t len, uint64_t offset, void **addr)
{
	return rb_sim_kmod_mmap(priv, len, offset, addr);
}

static int sim_munmap(void *priv, void *addr, size_t len)
{
	return rb_sim_kmod_munmap(priv, addr, len);
}

static int sim_wait(void *priv, int fence_fd, int timeout_ms)
{
	return rb_sim_kmod_wait(priv, fence_fd, timeout_ms);
}

static uint64_t sim_now_ns(void *priv)
{
	return rb_sim_kmod_now_ns(priv);
}

static int sim_close_fd(void *priv, int fd)
{
	return rb_sim_kmod_close_fd(priv, fd);
}

static const char *sim_fault_text(void *priv)
{
	return rb_sim_kmod_last_fault(priv);
}

static const char *sim_kernel_log(void *priv)
{
	return rb_sim_kmod_log(priv);
}

static int sim_group_begin(void *priv, unsigned threads)
{
	return rb_sim_kmod_group_begin(priv, threads);
}

static void sim_group_leave(void *priv)
{
	rb_sim_kmod_group_leave(priv);
}

static void sim_group_end(void *priv)
{
	rb_sim_kmod_group_end(priv);
}

static void sim_release(void *priv)
{
	rb_sim_kmod_free(priv);
}

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
    .release = sim_release,
};

static int open_sim(struct rb_transport *t, const struct rb_sim_config *cfg,
		    struct rb_sim_kmod *(*rb_kmod_new)(const struct rb_sim_config *cfg))
{
	struct rb_sim_config defaults;
	struct rb_sim_kmod *kmod;

	memset(t, 0, sizeof(*t));
	if (!cfg) {
		rb_sim_config_init(&defaults);
		cfg = &defaults;
	}
	kmod = rb_kmod_new(cfg);
	if (!kmod)
		return -errno; /* the emulated kernel recorded why */
	t->ops = &sim_ops;
	t->priv = kmod;
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
	return t->ops == &sim_ops ? t->priv : NULL;
}
