/* SPDX-License-Identifier: MIT */
/* color.h - colour on a terminal: when to use it, and what a frame's
 * colour is.
 *
 * The colours follow the SVG flame graph's (svg.c): JIT code green, native
 * code warm, frames without a name grey, so a dump on a terminal and the
 * graph of the same process read alike.  Plain SGR codes of the eight
 * standard colours, which every terminal (and tmux) renders.
 */
#ifndef JS_COLOR_H
#define JS_COLOR_H

#include "unwind/name.h"

#include <stdbool.h>

typedef enum { JS_COLOR_AUTO, JS_COLOR_ALWAYS, JS_COLOR_NEVER } js_color_when;

/* --color=WHEN: "auto", "always" or "never" into *w; false for anything else. */
bool js_color_parse(const char *s, js_color_when *w);
/* Colour what goes to fd?  always and never as they say; auto: when fd is
 * a terminal and NO_COLOR is unset or empty (no-color.org: an option given
 * on the command line overrides NO_COLOR, so always still colours). */
bool js_color_wanted(js_color_when w, int fd);

typedef enum { JS_KIND_JIT, JS_KIND_NATIVE, JS_KIND_UNNAMED, JS_KIND_PYTHON } js_frame_kind;

/* A frame named from JIT data (an image, the perf map, the jitdump) is
 * JIT; one with no function name is unnamed, wherever it is. */
js_frame_kind js_sym_kind(const js_sym *y);
/* (A Python frame, read from the interpreter, is JS_KIND_PYTHON.)
 * The SGR sequence that starts a frame of that kind. */
const char *js_color_of(js_frame_kind k);
#define JS_COLOR_OFF "\033[m"

#endif
