/* SPDX-License-Identifier: MIT */
/* svg.h - a profile as a flame graph: one self-contained SVG file (no
 * network, no other file), drawn in full for any viewer and interactive
 * in a browser: hovering a frame shows its name and share of the samples,
 * clicking one zooms to it ("Reset zoom" goes back), and a search box
 * (regular expression; Ctrl-F) colours the frames whose names match and
 * shows their share.  JIT frames are coloured apart from native ones.
 */
#ifndef JS_SVG_H
#define JS_SVG_H

#include "out/profile.h"

#include <stdio.h>

/* Write p's flame graph to f, titled title.  0, or -1 (errno). */
int js_profile_write_svg(const js_profile *p, FILE *f, const char *title, const char *name, js_err *err);

#endif
