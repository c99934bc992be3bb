/* Resource limits (limits.h). */
#include "host/limits.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/fileio.h"

#define MEMINFO "/proc/meminfo"

/* The MemAvailable line of a meminfo file, in bytes; 0 if absent. */
static uint64_t meminfo_available(const char *path)
{
	static const char key[] = "MemAvailable:";
	char data[8192], *end; /* /proc/meminfo is ~1.5 KiB, MemAvailable its third line */
	unsigned long long kib;
	uint64_t bytes = 0;

	/* bounded: RKNN_BENCH_MEMINFO may name a FIFO, and a signal must end the wait */
	if (rb_file_read_prefix(path, data, sizeof(data)) <= 0)
		return 0;
	for (const char *line = data; line;
	     line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		const char *num = line + sizeof(key) - 1;

		if (strncmp(line, key, sizeof(key) - 1) != 0)
			continue;
		errno = 0;
		kib = strtoull(num, &end, 10);
		if (!errno && end != num)
			bytes = rb_mul_sat(kib, 1024);
	}
	return bytes;
}

static const char *mem_source(void)
{
	const char *path = getenv("RKNN_BENCH_MEMINFO");

	return path && *path ? path : MEMINFO;
}

uint64_t rb_limits_mem_available(void)
{
	uint64_t bytes = meminfo_available(mem_source());
	long pages, page;

	if (bytes)
		return bytes;
	pages = sysconf(_SC_AVPHYS_PAGES);
	page = sysconf(_SC_PAGESIZE);
	if (pages > 0 && page > 0)
		return rb_mul_sat((uint64_t)pages, (uint64_t)page);
	return UINT64_MAX;
}

const char *rb_limits_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024) {
		snprintf(buf, size, "%" PRIu64 " bytes", bytes);
		return buf;
	}
	do { /* bytes >= 1024: at least KiB */
		v /= 1024;
		u++;
	} while (v >= 1024 && u < 5);
	snprintf(buf, size, "%.1f %s", v, units[u]);
	return buf;
}

int rb_limits_check_memory(const char *what, const char *kind, uint64_t need)
{
	uint64_t avail = rb_limits_mem_available();
	char n[32], a[32];

	if (need <= avail)
		return 0;
	return rb_set_error(-ENOMEM,
			    "%s needs %s of %s (%" PRIu64 " bytes), more than the %s available "
			    "(%" PRIu64 " bytes, MemAvailable of %s)",
			    what, rb_limits_bytes(need, n, sizeof(n)), kind, need,
			    rb_limits_bytes(avail, a, sizeof(a)), avail, mem_source());
}
