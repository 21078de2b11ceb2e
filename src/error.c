/* SPDX-License-Identifier: MIT */
/* error.c - error codes, the per-thread message, and logging. */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char last_msg[512];

int ju__fail(int code, const char *file, int line, const char *fmt, ...)
{
	size_t at = 0;
#ifdef JU_DEBUG
	int n = snprintf(last_msg, sizeof last_msg, "%s:%d: ", file, line);
	at = n > 0 && (size_t)n < sizeof last_msg ? (size_t)n : 0;
#else
	(void)file;
	(void)line;
#endif
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_msg + at, sizeof last_msg - at, fmt, ap);
	va_end(ap);
	return code;
}

void ju__clear_error(void)
{
	last_msg[0] = 0;
}

const char *ju_errmsg(void)
{
	return last_msg;
}

const char *ju_strerror(int err)
{
	switch (err) {
	case JU_OK: return "success";
	case JU_EINVAL: return "invalid argument";
	case JU_ENOMEM: return "out of memory";
	case JU_EOVERLAP: return "range overlaps published code";
	case JU_ENOENT: return "nothing published at that address";
	case JU_EBUSY: return "blobs are still published";
	case JU_ENOCONSUMER: return "the channel's consumer is not present";
	case JU_EIO: return "file write failed";
	case JU_EPERM: return "file exists and may not be written";
	case JU_ERANGE: return "value out of range for the format";
	case JU_ECFI: return "invalid frame description";
	case JU_ENAME: return "invalid name";
	case JU_ELINES: return "invalid line table";
	case JU_EENV: return "malformed JITUNWIND environment variable";
	case JU_ENOTSUP: return "a field this library version does not know is set";
	case JU_EINLINE: return "invalid guest frames (inline ranges)";
	default: return "unknown error";
	}
}

void ju__log(const struct ju_ctx *ctx, int level, const char *fmt, ...)
{
	if (!ctx || !ctx->opt.log)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	ctx->opt.log(ctx->opt.log_arg, level, msg);
}
