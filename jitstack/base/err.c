/* SPDX-License-Identifier: MIT */
/* err.c - the choke point of jitstack's errors and notes (see err.h). */
#include "base/err.h"

#include <stdio.h>
#include <string.h>

int js_fail_at(js_err *e, const char *file, int line, int code, int errnum, const char *fmt, ...)
{
	if (!e)
		return code;
	e->code = code;
	e->errnum = errnum;
	e->file = file;
	e->line = line;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return code;
}

void js_err_print(const js_err *e)
{
	const char *msg = e->msg[0] ? e->msg : "failed"; /* every failure path sets one; never silent */
	if (e->file)
		fprintf(stderr, "jitstack: %s [%s:%d]\n", msg, e->file, e->line);
	else
		fprintf(stderr, "jitstack: %s\n", msg);
}

void js_vnote(char *buf, size_t size, const char *fmt, va_list ap)
{
	size_t len = strnlen(buf, size);
	if (len + 3 >= size)
		return;
	if (len)
		len += (size_t)snprintf(buf + len, size - len, "; ");
	vsnprintf(buf + len, size - len, fmt, ap);
}

void js_note(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	js_vnote(buf, size, fmt, ap);
	va_end(ap);
}
