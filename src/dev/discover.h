/* Finding the NPU's device node. */
#ifndef RB_DEV_DISCOVER_H
#define RB_DEV_DISCOVER_H

#include <stddef.h>

/* The first /dev/dri node (card*, renderD*) whose DRM driver is "rknpu": its path in
 * `path`, 0; -ENOENT when there is none (the emulator is used then). */
int rb_discover_rknpu(char *path, size_t size);

#endif
