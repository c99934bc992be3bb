/* Resource limits, checked before anything big is allocated: sizes computed with
 * saturating arithmetic (a size that does not fit 64 bits reads UINT64_MAX, which no
 * limit admits), and the memory the machine can still give.
 *
 * A refusal gives the number that does not fit and the limit, e.g. "shape 1x8192x65536
 * fp16 needs 1.0 GiB of host memory (...), more than the 512.0 MiB available
 * (MemAvailable of /proc/meminfo)"; callers treat it as an input error (exit 2). */
#ifndef RB_HOST_LIMITS_H
#define RB_HOST_LIMITS_H

#include <stddef.h>
#include <stdint.h>

/* a·b and a + b, or UINT64_MAX when they do not fit. */
static inline uint64_t rb_mul_sat(uint64_t a, uint64_t b)
{
	return (a && b > UINT64_MAX / a) ? UINT64_MAX : a * b;
}

static inline uint64_t rb_add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* Bytes the machine can still give without swapping: MemAvailable of /proc/meminfo
 * (RKNN_BENCH_MEMINFO=FILE reads FILE instead, for tests), else the available pages of
 * sysconf; UINT64_MAX when neither is known (nothing is refused then). */
uint64_t rb_limits_mem_available(void);

/* "5.2 GiB", "512.0 MiB", "100 bytes" into buf; returns buf. */
const char *rb_limits_bytes(uint64_t bytes, char *buf, size_t size);

/* 0 if `need` bytes fit the available memory, else -ENOMEM with "<what> needs X of
 * <kind>, more than the Y available (<where the number came from>)". */
int rb_limits_check_memory(const char *what, const char *kind, uint64_t need);

#endif
