/* Opening and closing an NPU device of either driver, and what the launch files share
 * (npu_device.h). */
#include "dev/npu_device.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "core/error.h"
#include "dev/transport.h"
#include "sim/sim.h"

/* ---- the lock on the node ---- */

static bool wait_for_device;

void rb_npu_device_set_wait(bool wait)
{
	wait_for_device = wait;
}

/* The exclusive flock on path (an NPU node, or the file standing for an emulated one,
 * made if missing), held by an fd of its own until rb_npu_device_close. */
static int lock_node(struct rb_npu_device *dev, const char *path, bool create)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | (create ? O_CREAT : 0), 0600);

	if (fd < 0)
		return rb_set_error(-errno, "cannot open '%s' to lock the device: %s", path,
				    strerror(errno));
	while (flock(fd, LOCK_EX | (wait_for_device ? 0 : LOCK_NB)) < 0) {
		int err = errno;

		if (err == EINTR)
			continue;
		close(fd);
		if (err == EWOULDBLOCK)
			return rb_set_error(
			    -EBUSY,
			    "device '%s' is in use by another rknn-bench process: it runs alone "
			    "on an NPU (the vendor driver drops other users' jobs older than their "
			    "timeout in µs on every non-blocking submit, and two users spoil each "
			    "other's times); wait for it with --wait-device",
			    path);
		return rb_set_error(-err, "cannot lock '%s': %s", path, strerror(err));
	}
	dev->lock_fd = fd;
	dev->locked = true;
	return 0;
}

/* An emulated device locks the file $RKNN_BENCH_SIM_NODE names, if any. */
static int lock_sim(struct rb_npu_device *dev)
{
	const char *node = getenv("RKNN_BENCH_SIM_NODE");

	return node && *node ? lock_node(dev, node, true) : 0;
}

/* ---- devices ---- */

static int device_init(struct rb_npu_device *dev, struct rb_transport *tr, const char *name,
		       enum rb_npu_driver driver, const struct rb_soc_profile *soc)
{
	memset(dev, 0, sizeof(*dev));
	dev->name = name;
	dev->driver = driver;
	dev->modeled = strcmp(tr->ops->name, "sim") == 0;
	dev->timeout_ms = RB_NPU_DEFAULT_TIMEOUT_MS;
	dev->ops = driver == RB_DRIVER_ROCKET ? &rb_rocket_ops : &rb_rknpu_ops;
	if (soc) {
		dev->soc = *soc;
	} else { /* a board: its kernel's NPU clock */
		const char *sysfs = getenv("RKNN_BENCH_SYSFS");

		dev->soc = *rb_soc_default();
		rb_soc_for_driver(&dev->soc, driver == RB_DRIVER_ROCKET, sysfs ? sysfs : "/sys");
	}
	if (driver == RB_DRIVER_ROCKET)
		return rb_rocket_open(&dev->rocket, tr, RB_ROCKET_MAX_FILES);
	return rb_rknpu_open(&dev->drv, tr);
}

int rb_npu_device_open_sim(struct rb_npu_device *dev, const struct rb_sim_config *cfg)
{
	struct rb_transport tr;
	int ret = rb_transport_open_sim_rknpu(&tr, cfg);
	bool model_only = tr.model_only; /* device_init takes tr over */

	if (ret == 0)
		ret = device_init(dev, &tr, "sim", RB_DRIVER_RKNPU,
				  cfg && cfg->soc ? cfg->soc : rb_soc_default());
	if (ret == 0)
		dev->model_only = model_only;
	if (ret == 0 && (ret = lock_sim(dev)) < 0)
		rb_npu_device_close(dev);
	return ret;
}

int rb_npu_device_open_rknpu(struct rb_npu_device *dev, const char *path)
{
	struct rb_npu_node node;
	struct rb_transport tr;
	int ret =
	    path ? rb_discover_check(path, "rknpu", &node) : rb_discover_driver("rknpu", &node);

	if (ret == 0)
		ret = rb_transport_open_host(&tr, node.path);
	if (ret == 0)
		ret = device_init(dev, &tr, "rknpu", RB_DRIVER_RKNPU, NULL);
	if (ret == 0 && (ret = lock_node(dev, node.path, false)) < 0)
		rb_npu_device_close(dev);
	return ret;
}

/* Without a profile, the emulated rocket kernel runs the NPU at the mainline clock
 * (rb_soc_for_driver), as a mainline board does. */
int rb_npu_device_open_sim_rocket(struct rb_npu_device *dev, const struct rb_sim_config *cfg)
{
	struct rb_sim_config mainline;
	struct rb_soc_profile soc;
	struct rb_transport tr;
	int ret;
	bool model_only;

	if (cfg)
		mainline = *cfg;
	else
		rb_sim_config_init(&mainline);
	if (!mainline.soc) {
		soc = *rb_soc_default();
		rb_soc_for_driver(&soc, true, NULL);
		mainline.soc = &soc;
	}
	ret = rb_transport_open_sim_rocket(&tr, &mainline);
	model_only = tr.model_only; /* device_init takes tr over */
	if (ret == 0)
		ret = device_init(dev, &tr, "sim:rocket", RB_DRIVER_ROCKET, mainline.soc);
	if (ret == 0)
		dev->model_only = model_only;
	if (ret == 0 && (ret = lock_sim(dev)) < 0)
		rb_npu_device_close(dev);
	return ret;
}

int rb_npu_device_open_rocket(struct rb_npu_device *dev, const char *path)
{
	struct rb_npu_node node;
	struct rb_transport tr;
	int ret =
	    path ? rb_discover_check(path, "rocket", &node) : rb_discover_driver("rocket", &node);

	if (ret == 0)
		ret = rb_transport_open_host(&tr, node.path);
	if (ret == 0)
		ret = device_init(dev, &tr, "rocket", RB_DRIVER_ROCKET, NULL);
	if (ret == 0 && (ret = lock_node(dev, node.path, false)) < 0)
		rb_npu_device_close(dev);
	return ret;
}

void rb_npu_device_close(struct rb_npu_device *dev)
{
	if (dev->locked)
		close(dev->lock_fd); /* drops the flock */
	if (dev->driver == RB_DRIVER_ROCKET)
		rb_rocket_close(&dev->rocket);
	else
		rb_rknpu_close(&dev->drv);
	memset(dev, 0, sizeof(*dev));
}

struct rb_transport *rb_npu_device_transport(struct rb_npu_device *dev)
{
	return dev->driver == RB_DRIVER_ROCKET ? &dev->rocket.tr : &dev->drv.tr;
}

unsigned rb_npu_device_job_timeout_ms(const struct rb_npu_device *dev)
{
	if (dev->ops->job_timeout_ms)
		return dev->ops->job_timeout_ms;
	return dev->timeout_ms > 0 ? (unsigned)dev->timeout_ms : 0;
}

uint32_t rb_dev_bo_addr(const struct rb_npu_device *dev, const struct rb_dev_bo *bo,
			unsigned plan_core)
{
	return dev->ops->bo_addr ? dev->ops->bo_addr(dev, bo, plan_core) : bo->dma_addr;
}

int rb_dev_bo_reach(struct rb_npu_device *dev, struct rb_dev_bo *bo, unsigned n_cores)
{
	return dev->ops->bo_reach ? dev->ops->bo_reach(dev, bo, n_cores) : 0;
}

/* ---- launch modes ---- */

static const char *const launch_names[] = {
    [RB_LAUNCH_FENCES] = "fences",
    [RB_LAUNCH_THREADS] = "threads",
    [RB_LAUNCH_MULTICORE] = "multicore",
};

const char *rb_npu_launch_name(enum rb_npu_launch launch)
{
	return launch <= RB_LAUNCH_MULTICORE ? launch_names[launch] : "unknown";
}

int rb_npu_launch_parse(const char *text, enum rb_npu_launch *out)
{
	for (int i = 0; i <= RB_LAUNCH_MULTICORE; i++) {
		if (strcmp(text, launch_names[i]) == 0) {
			*out = (enum rb_npu_launch)i;
			return 0;
		}
	}
	return rb_set_error(-EINVAL, "launch mode '%s' must be fences, threads or multicore", text);
}

int rb_dev_submit_error(struct rb_npu_device *dev, unsigned core, uint32_t task_start,
			uint32_t task_number, int err)
{
	const char *fault = rb_transport_fault_text(rb_npu_device_transport(dev));
	char cause[512];

	/* rb_set_error writes the buffer rb_last_error() returns: copy it first. */
	snprintf(cause, sizeof(cause), "%s", rb_last_error());
	return rb_set_error(err, "core %u, tasks %u..%u: %s%s%s", core, task_start,
			    task_start + task_number - 1, cause, *fault ? "; emulator: " : "",
			    fault);
}
