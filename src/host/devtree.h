/* The device tree as the kernel shows it: small files of NUL-separated strings
 * (/proc/device-tree/model, .../compatible). One reader for the board detection
 * (hw/board.c) and the report's context (host/context.c). */
#ifndef RB_HOST_DEVTREE_H
#define RB_HOST_DEVTREE_H

#include <stddef.h>

/* Up to size - 1 bytes of the file at path into buf, NUL-terminated; their count, 0
 * when the file is missing or unreadable (buf is then ""). path may be NULL. */
size_t rb_devtree_read(const char *path, char *buf, size_t size);

/* The last string of a NUL-separated list of len bytes: in a "compatible" list (most
 * specific first), the SoC ("radxa,rock-5b\0rockchip,rk3588\0" -> "rockchip,rk3588"). */
const char *rb_devtree_last_string(const char *data, size_t len);

#endif
