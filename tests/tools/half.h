/* IEEE half precision of a float that is exact in it, for test programs built against
 * public headers only (tests/consumer/backend_demo.c, tests/shim/api_test.c): their
 * data are small integers and multiples of 1/8. */
#ifndef RB_TESTS_HALF_H
#define RB_TESTS_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint16_t half_of(float f)
{
	uint32_t x, sign, mant;
	int exp;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000u;
	if ((x & 0x7fffffffu) == 0)
		return (uint16_t)sign;
	exp = (int)((x >> 23) & 0xff) - 127 + 15;
	mant = x & 0x7fffffu;
	if (exp <= 0) /* subnormal half: exact values need no more bits */
		return (uint16_t)(sign | ((mant | 0x800000u) >> (14 - exp)));
	return (uint16_t)(sign | (uint32_t)exp << 10 | mant >> 13);
}

#endif
