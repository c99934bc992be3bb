/* The two helpers every floor wants, defined once here (the lowest floor). */
#ifndef RB_CORE_UTIL_H
#define RB_CORE_UTIL_H

#include <stdint.h>

/* Elements of an array (not of a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static inline int64_t rb_div_up_i64(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

static inline uint64_t rb_div_up_u64(uint64_t a, uint64_t b)
{
	return (a + b - 1) / b;
}

/* a / b rounded up, for a >= 0 and b > 0: in int64_t when a + b is signed, in uint64_t
 * when it is unsigned (a + b - 1 must not overflow that type). Each argument is read
 * once. */
/* clang-format off */
#define DIV_UP(a, b)                                                                               \
	_Generic((a) + (b),                                                                        \
		 unsigned: rb_div_up_u64,                                                          \
		 unsigned long: rb_div_up_u64,                                                     \
		 unsigned long long: rb_div_up_u64,                                                \
		 default: rb_div_up_i64)((a), (b))
/* clang-format on */

#endif
