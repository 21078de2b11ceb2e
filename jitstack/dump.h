/* SPDX-License-Identifier: MIT */
/* dump.h - the stack dump command (jitstack -p / --core). */
#ifndef JS_DUMP_H
#define JS_DUMP_H

#include "out/color.h"
#include "unwind/session.h"

typedef struct js_dump_opts {
	js_opts opt;
	pid_t pid;        /* live, or */
	const char *core; /* a core file */
	const char *exe;
	bool json;
	bool images; /* list the JIT images instead of the stacks */
	js_color_when color;
} js_dump_opts;

/* Returns a js_exit code; messages go to stderr. */
int js_dump(const js_dump_opts *d);

#endif
