#include "core/error.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char last_error[1024];

/* Formats into a buffer of its own first: callers pass rb_last_error() as an argument
 * to wrap the cause ("tuned config 'x': %s"), and formatting into the buffer being read
 * is undefined (glibc lost the cause). */
int rb_set_error(int err, const char *fmt, ...)
{
	char msg[sizeof(last_error)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	memcpy(last_error, msg, sizeof(msg));
	return err;
}

const char *rb_last_error(void)
{
	return last_error;
}

static void vprint(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "rknn-bench: %s", prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

int rb_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("", fmt, ap);
	va_end(ap);
	return -1;
}

void rb_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("warning: ", fmt, ap);
	va_end(ap);
}
