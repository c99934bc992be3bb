/* The two helpers every floor wants, defined once here (the lowest floor). */
#ifndef RB_CORE_UTIL_H
#define RB_CORE_UTIL_H

/* Elements of an array (not of a pointer). */
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* a / b rounded up, for a >= 0 and b > 0 of any integer type (a + b - 1 must not
 * overflow it). */
#define DIV_UP(a, b) (((a) + (b) - 1) / (b))

#endif
