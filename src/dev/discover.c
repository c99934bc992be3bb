#include "dev/discover.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <xf86drm.h>

#include "dev/rknpu_uapi.h"

static int driver_is(const char *path, const char *name)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	drmVersionPtr v;
	int match;

	if (fd < 0)
		return 0;
	v = drmGetVersion(fd);
	match = v && v->name && strcmp(v->name, name) == 0;
	drmFreeVersion(v);
	close(fd);
	return match;
}

int rb_discover_rknpu(char *path, size_t size)
{
	DIR *dir = opendir("/dev/dri");
	struct dirent *e;
	int ret = -ENOENT;

	if (!dir)
		return -ENOENT;
	while (ret < 0 && (e = readdir(dir))) {
		if (strncmp(e->d_name, "card", 4) && strncmp(e->d_name, "renderD", 7))
			continue;
		snprintf(path, size, "/dev/dri/%s", e->d_name);
		if (driver_is(path, RKNPU_DRIVER_NAME))
			ret = 0;
	}
	closedir(dir);
	return ret;
}
