/* SPDX-License-Identifier: MIT */
/* output.h - printing stacks: text for people, JSON for programs.
 *
 * Text (one frame per line, innermost first):
 *   #N  0xPC FUNCTION+0xOFF (MODULE) at FILE:LINE [fp]
 * where MODULE is a file's base name or a JIT image's "[jit 0x...]", and
 * [fp] marks a frame found by following the frame pointer, [perf-map] one
 * named from the target's perf map.  A function inlined at a frame's pc
 * comes before it, at the same pc, numbered as gdb numbers it:
 *   #N  0xPC FUNCTION (MODULE) at FILE:LINE [inlined]
 * A Python function (a frame of CPython's interpreter, placed by
 * unwind/interp.h) comes above the eval loop frame that runs it, at its pc:
 *   #N  0xPC QUALNAME at FILE:LINE [python]
 * With color, each FUNCTION is coloured by its kind (color.h: JIT,
 * native, Python, unnamed).  The JSON shape (one object per frame, inline frames
 * too, with "inlined") is documented in jitstack(1); JSON is never
 * coloured.
 */
#ifndef JS_OUTPUT_H
#define JS_OUTPUT_H

#include "unwind/stack.h"

#include <stdio.h>

typedef struct js_out {
	FILE *f;
	bool json;
	bool color; /* text: function names coloured by kind (color.h) */
	size_t threads;
	bool any_fp;
	bool any_perfmap;
	bool any_jitdump;
	bool any_inlined;
	bool any_python;
} js_out;

void out_begin(js_out *o, js_session *s);
/* One thread, its frames named (js_mark_fp and js_name_stack done). */
void out_thread(js_out *o, const js_stack *st);
void out_end(js_out *o, js_session *s);
/* The JIT images and their functions (--images). */
void out_images(js_out *o, js_session *s);

/* JSON string with escapes. */
void json_str(FILE *f, const char *s);

#endif
