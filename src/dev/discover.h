/* Finding the NPU's device node.
 *
 * DRM nodes (<devroot>/dri/card*, renderD*) and accel nodes (<devroot>/accel/accel*)
 * are opened and asked DRM_IOCTL_VERSION (drmGetVersion); a node is an NPU when its DRM
 * driver is one of rb_npu_drivers and its major version is one we know. The device root
 * is $RKNN_BENCH_DEVROOT, default "/dev" (tests build a fake tree there).
 *
 * Every failure returns -errno with a message (rb_last_error) saying what to do: which
 * group to join, which kernel module to load, that another process holds the device.
 * -ENOENT no such node / no NPU node, -EACCES, -EBUSY, -ENODEV not a DRM node or not
 * the wanted driver, -EPROTO a driver version we do not know. */
#ifndef RB_DEV_DISCOVER_H
#define RB_DEV_DISCOVER_H

#include <stddef.h>

enum rb_npu_driver {
	RB_DRIVER_NONE = 0,
	RB_DRIVER_RKNPU,  /* the vendor driver, /dev/dri/cardN or renderDN (npu-facts §d.1) */
	RB_DRIVER_ROCKET, /* mainline accel/rocket, /dev/accel/accelN (§d.2) */
};

struct rb_npu_node {
	enum rb_npu_driver driver;
	char path[256];
	char name[32]; /* the DRM driver name, "rknpu" or "rocket" */
	char date[32];
	char desc[64];
	int major, minor, patch;
};

/* "rknpu", "rocket"; "none". */
const char *rb_npu_driver_name(enum rb_npu_driver driver);

/* The device root: $RKNN_BENCH_DEVROOT or "/dev". */
const char *rb_discover_devroot(void);

/* The first usable NPU node of any known driver (DRM nodes first, then accel nodes, in
 * name order). -ENOENT when there is none; a node that could not be opened (EACCES,
 * EBUSY) is named in the message, since it may be the NPU. */
int rb_discover_npu(struct rb_npu_node *out);

/* Like rb_discover_npu, of one driver ("rknpu" or "rocket") only. */
int rb_discover_driver(const char *want_driver, struct rb_npu_node *out);

/* Checks the node at `path` (rknpu:PATH, rocket:PATH): it opens, it is a DRM node, its
 * driver is `want_driver` at a known version. `out` may be NULL. */
int rb_discover_check(const char *path, const char *want_driver, struct rb_npu_node *out);

/* The message for open(path) failing with `err` (-errno) on a node of `driver` (NULL:
 * any NPU): sets it and returns err. */
int rb_discover_open_error(const char *path, int err, const char *driver);

#endif
