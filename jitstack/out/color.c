/* SPDX-License-Identifier: MIT */
/* color.c - colour on a terminal (color.h). */
#include "out/color.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool js_color_parse(const char *s, js_color_when *w)
{
	if (!strcmp(s, "auto"))
		*w = JS_COLOR_AUTO;
	else if (!strcmp(s, "always"))
		*w = JS_COLOR_ALWAYS;
	else if (!strcmp(s, "never"))
		*w = JS_COLOR_NEVER;
	else
		return false;
	return true;
}

bool js_color_wanted(js_color_when w, int fd)
{
	if (w != JS_COLOR_AUTO)
		return w == JS_COLOR_ALWAYS;
	const char *no = getenv("NO_COLOR");
	return !(no && *no) && isatty(fd);
}

js_frame_kind js_sym_kind(const js_sym *y)
{
	if (y->jit || y->source == JS_SRC_PERFMAP || y->source == JS_SRC_JITDUMP)
		return y->func ? JS_KIND_JIT : JS_KIND_UNNAMED;
	return y->func ? JS_KIND_NATIVE : JS_KIND_UNNAMED;
}

const char *js_color_of(js_frame_kind k)
{
	switch (k) {
	case JS_KIND_JIT: return "\033[32m";    /* green: the SVG's JIT hues (140-185) */
	case JS_KIND_NATIVE: return "\033[33m"; /* yellow-orange: its warm native hues (5-50) */
	case JS_KIND_PYTHON: return "\033[36m"; /* cyan: Python frames */
	default: return "\033[90m";             /* grey: its unknown frames */
	}
}
