/* Checks the unit tests share, on top of cmocka's (include after <cmocka.h>): each
 * prints what it got and what it wanted, then fails the test. */
#ifndef RB_TESTS_ASSERT_H
#define RB_TESTS_ASSERT_H

#include <math.h>
#include <string.h>

/* |a - b| <= eps, in double. */
#define assert_near(a, b, eps)                                                                     \
	do {                                                                                       \
		double a_ = (a), b_ = (b);                                                         \
		if (!(fabs(a_ - b_) <= (eps))) {                                                   \
			print_error("%s = %.17g, want %.17g\n", #a, a_, b_);                       \
			fail();                                                                    \
		}                                                                                  \
	} while (0)

/* haystack holds needle (both strings). */
#define assert_contains(haystack, needle)                                                          \
	do {                                                                                       \
		const char *h_ = (haystack), *n_ = (needle);                                       \
		if (!strstr(h_, n_)) {                                                             \
			print_error("'%s' does not contain '%s'\n", h_, n_);                       \
			fail();                                                                    \
		}                                                                                  \
	} while (0)

#endif
