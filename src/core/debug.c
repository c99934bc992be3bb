#include "core/debug.h"

#include <stdlib.h>
#include <string.h>

bool rb_debug(const char *flag)
{
	const char *list = getenv("RKNN_BENCH_DEBUG");
	size_t len = strlen(flag);

	for (const char *p = list; p && *p; p += strcspn(p, ",")) {
		p += *p == ',';
		if (strncmp(p, flag, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return true;
	}
	return false;
}
