/* SPDX-License-Identifier: MIT */
/* top.h - `jitstack top`: the hottest functions of live processes, live. */
#ifndef JS_TOP_H
#define JS_TOP_H

#include "out/color.h"
#include "record/record.h"

typedef struct js_top_opts {
	js_record_opts r; /* the processes, the rate and the mode, as record takes them */
	bool once;        /* one table on stdout, then exit (also when stdout is not a terminal) */
	js_color_when color;
} js_top_opts;

/* Returns a js_exit code; messages go to stderr. */
int js_top(js_top_opts *o);

#endif
