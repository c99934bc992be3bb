/* Device discovery (see discover.h). The messages are the product here: each one names
 * the node and says what to do about it. */
#include "dev/discover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <xf86drm.h>

#include "core/error.h"

struct driver_desc {
	enum rb_npu_driver driver;
	const char *name;
	int major;          /* the DRM major version whose ABI we speak */
	const char *module; /* how to get the node */
};

/* Adding a driver is a line here. Vendor rknpu reports 0.x (0.4.2 .. 0.9.8, §d.1);
 * mainline rocket leaves its version at 0.0.0. */
static const struct driver_desc drivers[] = {
    {RB_DRIVER_RKNPU, "rknpu", 0, "modprobe rknpu; the module comes with Rockchip's vendor kernel"},
    {RB_DRIVER_ROCKET, "rocket", 0,
     "modprobe rocket; a mainline kernel needs CONFIG_DRM_ACCEL_ROCKET"},
};

#define N_DRIVERS (sizeof(drivers) / sizeof(drivers[0]))

static const struct driver_desc *driver_by_name(const char *name)
{
	for (size_t i = 0; name && i < N_DRIVERS; i++)
		if (strcmp(drivers[i].name, name) == 0)
			return &drivers[i];
	return NULL;
}

const char *rb_npu_driver_name(enum rb_npu_driver driver)
{
	for (size_t i = 0; i < N_DRIVERS; i++)
		if (drivers[i].driver == driver)
			return drivers[i].name;
	return "none";
}

const char *rb_discover_devroot(void)
{
	const char *root = getenv("RKNN_BENCH_DEVROOT");

	return root && *root ? root : "/dev";
}

/* ---- messages ---- */

/* The group owning the node, for "add the user to the 'render' group"; "" if unknown
 * (root's group, or no node to look at). */
static void node_group(const char *path, char *buf, size_t size)
{
	struct group grp, *res = NULL;
	char scratch[1024];
	struct stat st;

	buf[0] = '\0';
	if (stat(path, &st) < 0 || st.st_gid == 0)
		return;
	if (getgrgid_r(st.st_gid, &grp, scratch, sizeof(scratch), &res) == 0 && res)
		snprintf(buf, size, "%s", res->gr_name);
}

static int open_error(const char *path, int err, const struct driver_desc *want)
{
	char group[64];

	if (err == -ENOENT)
		return rb_set_error(
		    err,
		    "cannot open '%s': no such device node: is the %s kernel module "
		    "loaded? (%s; without an NPU use --device sim)",
		    path, want ? want->name : "NPU", want ? want->module : drivers[0].module);
	if (err == -EACCES || err == -EPERM) {
		node_group(path, group, sizeof(group));
		return rb_set_error(err,
				    "cannot open '%s': permission denied: add the user to the '%s' "
				    "group (sudo usermod -aG %s $USER, then log in again) or run "
				    "with sudo",
				    path, group[0] ? group : "render' or 'video",
				    group[0] ? group : "render");
	}
	if (err == -EBUSY)
		return rb_set_error(err,
				    "cannot open '%s': device busy: another process holds the NPU "
				    "(see 'fuser -v %s'); stop it and retry",
				    path, path);
	return rb_set_error(err, "cannot open '%s': %s", path, strerror(-err));
}

int rb_discover_open_error(const char *path, int err, const char *driver)
{
	return open_error(path, err, driver_by_name(driver));
}

/* ---- probing one node ---- */

static void copy_version(struct rb_npu_node *node, const char *path, drmVersionPtr v)
{
	memset(node, 0, sizeof(*node));
	snprintf(node->path, sizeof(node->path), "%s", path);
	snprintf(node->name, sizeof(node->name), "%.*s", v->name_len, v->name ? v->name : "");
	snprintf(node->date, sizeof(node->date), "%.*s", v->date_len, v->date ? v->date : "");
	snprintf(node->desc, sizeof(node->desc), "%.*s", v->desc_len, v->desc ? v->desc : "");
	node->major = v->version_major;
	node->minor = v->version_minor;
	node->patch = v->version_patchlevel;
}

/* Opens `path` and reads its DRM version into `node`; -errno with a message. */
static int probe(const char *path, struct rb_npu_node *node, const struct driver_desc *want)
{
	drmVersionPtr v;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return open_error(path, -errno, want);
	errno = 0;
	v = drmGetVersion(fd);
	if (!v) {
		int err = errno ? -errno : -ENODEV;

		close(fd);
		return rb_set_error(-ENODEV,
				    "'%s' is not a DRM device node (DRM_IOCTL_VERSION: %s): give "
				    "the NPU's node, e.g. rknpu:/dev/dri/card1 or "
				    "rocket:/dev/accel/accel0",
				    path, strerror(-err));
	}
	copy_version(node, path, v);
	drmFreeVersion(v);
	close(fd);
	return 0;
}

/* Is the probed node an NPU of `want` (NULL: any known driver) at a version we know? */
static int accept_node(struct rb_npu_node *node, const struct driver_desc *want)
{
	const struct driver_desc *d = driver_by_name(node->name);

	if (!d || (want && d != want))
		return rb_set_error(-ENODEV,
				    "'%s' is driven by '%s', not %s%s%s: it is not the NPU "
				    "(--device auto finds the NPU's node)",
				    node->path, node->name, want ? "'" : "an NPU driver",
				    want ? want->name : "", want ? "'" : "");
	if (node->major != d->major)
		return rb_set_error(-EPROTO,
				    "'%s': %s driver version %d.%d.%d is not one rknn-bench knows "
				    "(major %d): its ioctls may differ; use a kernel with a %d.x "
				    "%s driver, or report the version",
				    node->path, d->name, node->major, node->minor, node->patch,
				    d->major, d->major, d->name);
	node->driver = d->driver;
	return 0;
}

int rb_discover_check(const char *path, const char *want_driver, struct rb_npu_node *out)
{
	const struct driver_desc *want = driver_by_name(want_driver);
	struct rb_npu_node node;
	int err = probe(path, &node, want);

	if (err == 0)
		err = accept_node(&node, want);
	if (err == 0 && out)
		*out = node;
	return err;
}

/* ---- scanning ---- */

struct scan {
	const struct driver_desc *want;
	struct rb_npu_node *out;
	int err;        /* the first failure worth telling: EACCES, EBUSY, version */
	char msg[1024]; /* its message */
};

static int node_filter(const struct dirent *e)
{
	return strncmp(e->d_name, "card", 4) == 0 || strncmp(e->d_name, "renderD", 7) == 0 ||
	       strncmp(e->d_name, "accel", 5) == 0;
}

/* A node that is not an NPU (a display controller, a GPU) is skipped silently. */
static int scan_node(struct scan *s, const char *path)
{
	struct rb_npu_node node;
	int err = probe(path, &node, s->want);

	if (err == 0)
		err = accept_node(&node, s->want);
	if (err == 0) {
		*s->out = node;
		return 0;
	}
	if (err != -ENODEV && err != -ENOENT && !s->err) {
		s->err = err;
		snprintf(s->msg, sizeof(s->msg), "%s", rb_last_error());
	}
	return err;
}

static int scan_dir(struct scan *s, const char *sub)
{
	char dir[512], path[768];
	struct dirent **names;
	int n, found = -ENOENT;

	snprintf(dir, sizeof(dir), "%s/%s", rb_discover_devroot(), sub);
	n = scandir(dir, &names, node_filter, alphasort);
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (found < 0 && scan_node(s, path) == 0)
			found = 0;
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return found;
}

static int scan(const struct driver_desc *want, struct rb_npu_node *out)
{
	struct scan s = {.want = want, .out = out};
	const char *root = rb_discover_devroot();

	if (scan_dir(&s, "dri") == 0 || scan_dir(&s, "accel") == 0)
		return 0;
	if (s.err)
		return rb_set_error(s.err, "%s", s.msg);
	return rb_set_error(-ENOENT,
			    "no NPU device node found (no %s node under %s/dri or %s/accel): "
			    "is the %s kernel module loaded? (%s; without an NPU use --device "
			    "sim)",
			    want ? want->name : "rknpu or rocket", root, root,
			    want ? want->name : "rknpu or rocket",
			    want ? want->module : "modprobe rknpu or rocket");
}

int rb_discover_npu(struct rb_npu_node *out)
{
	return scan(NULL, out);
}

int rb_discover_driver(const char *want_driver, struct rb_npu_node *out)
{
	const struct driver_desc *want = driver_by_name(want_driver);

	if (!want)
		return rb_set_error(-EINVAL, "'%s' is not an NPU driver", want_driver);
	return scan(want, out);
}
