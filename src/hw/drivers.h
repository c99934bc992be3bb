/* The names the two NPU kernel drivers report in DRM_IOCTL_VERSION: discovery matches
 * them and the emulated kernels answer with them, so both sides share one spelling.
 * rknpu: the vendor driver's RKNPU_DRIVER_NAME (include/uapi/drm/rknpu_ioctl.h);
 * rocket: drivers/accel/rocket in mainline Linux (DRIVER_NAME "rocket"). */
#ifndef RB_HW_DRIVERS_H
#define RB_HW_DRIVERS_H

#define ROCKET_DRIVER_NAME "rocket"

#endif
