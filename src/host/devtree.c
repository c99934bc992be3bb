/* The device tree reader (devtree.h). */
#include "host/devtree.h"

#include <stdio.h>

size_t rb_devtree_read(const char *path, char *buf, size_t size)
{
	FILE *f = path ? fopen(path, "rb") : NULL;
	size_t n;

	buf[0] = '\0';
	if (!f)
		return 0;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return n;
}

const char *rb_devtree_last_string(const char *data, size_t len)
{
	size_t last = 0;

	for (size_t i = 0; i + 1 < len; i++)
		if (data[i] == '\0' && data[i + 1] != '\0')
			last = i + 1;
	return data + last;
}
