/* The device tree reader (devtree.h). */
#include "host/devtree.h"

#include <stdio.h>

#include "core/fileio.h"

size_t rb_devtree_read(const char *path, char *buf, size_t size)
{
	/* bounded (core/fileio.h): RKNN_BENCH_DTROOT or RKNN_BENCH_SYSFS may name a FIFO,
	 * which must not hang the command, and a stop by a signal ends the wait */
	ssize_t n = path ? rb_file_read_prefix(path, buf, size) : -1;

	if (n <= 0)
		buf[0] = '\0';
	return n > 0 ? (size_t)n : 0;
}

const char *rb_devtree_last_string(const char *data, size_t len)
{
	size_t last = 0;

	for (size_t i = 0; i + 1 < len; i++)
		if (data[i] == '\0' && data[i + 1] != '\0')
			last = i + 1;
	return data + last;
}
