/* Debug switches (debug.h): RKNN_BENCH_DEBUG is read once, on first use, into a bit
 * set over the table of valid flags, so a query is a table lookup and a misspelled
 * flag can be reported instead of silently doing nothing. */
#include "core/debug.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const valid_flags[] = {
    "corrupt_c",  "fault_word",  "fault_banks",     "fault_size_e",  "fault_dma",
    "fault_tail", "fault_mask5", "fault_hang_once", "fault_no_rdma", "shim",
    "stream_b",   "device_c",    "no_prune",        "fault_no_sync",
};
#define N_FLAGS (sizeof(valid_flags) / sizeof(valid_flags[0]))

static unsigned enabled;  /* bit i: valid_flags[i] */
static char unknown[256]; /* the flags of the list that are not in the table */
static pthread_once_t env_once = PTHREAD_ONCE_INIT;

static int flag_index(const char *name, size_t len)
{
	for (size_t i = 0; i < N_FLAGS; i++)
		if (strlen(valid_flags[i]) == len && strncmp(valid_flags[i], name, len) == 0)
			return (int)i;
	return -1;
}

static void append_unknown(const char *name, size_t len)
{
	size_t used = strlen(unknown);

	snprintf(unknown + used, sizeof(unknown) - used, "%s%.*s", used ? "," : "", (int)len, name);
}

void rb_debug_set(const char *list)
{
	enabled = 0;
	unknown[0] = '\0';
	for (const char *p = list; p && *p;) {
		size_t len = strcspn(p, ",");
		int i = flag_index(p, len);

		if (i >= 0)
			enabled |= 1u << i;
		else if (len)
			append_unknown(p, len);
		p += len + (p[len] == ',');
	}
}

static void load_env(void)
{
	rb_debug_set(getenv("RKNN_BENCH_DEBUG"));
}

bool rb_debug(const char *flag)
{
	int i = flag_index(flag, strlen(flag));

	pthread_once(&env_once, load_env);
	return i >= 0 && (enabled & (1u << i));
}

const char *rb_debug_unknown(void)
{
	pthread_once(&env_once, load_env);
	return unknown;
}

size_t rb_debug_flag_count(void)
{
	return N_FLAGS;
}

const char *rb_debug_flag_name(size_t i)
{
	return i < N_FLAGS ? valid_flags[i] : NULL;
}
