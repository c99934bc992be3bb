/* Test helpers: whether this process can get transparent huge pages, and the VmFlags of
 * the mapping that holds an address (" hg": MADV_HUGEPAGE was asked for it). Header-only,
 * for the unit tests that check buffers ask for huge pages. */
#ifndef RB_TESTS_THP_H
#define RB_TESTS_THP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* False where the kernel gives none ("never" or no THP) and under qemu-user (make
 * check-aarch64 sets RUNNER), which does not pass the advice on. */
static inline bool thp_available(void)
{
	const char *runner = getenv("RUNNER");
	FILE *thp = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
	char mode[128] = "";

	if (thp) {
		if (!fgets(mode, sizeof(mode), thp))
			mode[0] = '\0';
		fclose(thp);
	}
	return !(runner && *runner) && mode[0] && !strstr(mode, "[never]");
}

/* The VmFlags of the mapping holding addr (/proc/self/smaps), or "" if not found. */
static inline void thp_vm_flags_of(const void *addr, char *flags, size_t size)
{
	FILE *fp = fopen("/proc/self/smaps", "r");
	unsigned long long at = (uintptr_t)addr, lo, hi;
	char line[512], *end;
	bool inside = false;

	flags[0] = '\0';
	while (fp && fgets(line, sizeof(line), fp)) {
		/* a mapping's first line: "lo-hi perms ..." in hex */
		lo = strtoull(line, &end, 16);
		if (end != line && *end == '-') {
			hi = strtoull(end + 1, &end, 16);
			inside = *end == ' ' && at >= lo && at < hi;
		} else if (inside && strncmp(line, "VmFlags:", 8) == 0) {
			snprintf(flags, size, "%s", line + 8);
			break;
		}
	}
	if (fp)
		fclose(fp);
}

#endif
