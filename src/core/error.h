/* Error reporting.
 *
 * Library code is silent: it records a message with rb_set_error() and returns a
 * negative errno. Only src/cli/ prints, with rb_error()/rb_warn(). Messages are lower
 * case, have no trailing period, quote their subject and say what to do when there is
 * something to do. */
#ifndef RB_CORE_ERROR_H
#define RB_CORE_ERROR_H

#include <stdarg.h>

/* Exit codes of the command line (README "Exit codes"). */
enum rb_exit {
	RB_EXIT_OK = 0,
	RB_EXIT_FAIL = 1,   /* verification failure or regression */
	RB_EXIT_USAGE = 2,  /* usage or input error */
	RB_EXIT_DEVICE = 3, /* device or driver error */
};

#if defined(__GNUC__)
#define RB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RB_PRINTF(f, a)
#endif

/* Records the message of the last library error of this thread and returns err
 * (a negative errno), so `return rb_set_error(-EINVAL, "...", ...);` is one line. */
int rb_set_error(int err, const char *fmt, ...) RB_PRINTF(2, 3);
/* The message recorded by the last failing library call of this thread ("" if none). */
const char *rb_last_error(void);

/* CLI only: print "rknn-bench: <message>" to stderr; rb_error returns -1. */
int rb_error(const char *fmt, ...) RB_PRINTF(1, 2);
void rb_warn(const char *fmt, ...) RB_PRINTF(1, 2);

#endif
