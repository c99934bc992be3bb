#include "core/error.h"

#include <stdio.h>

static _Thread_local char last_error[1024];

int rb_set_error(int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
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
