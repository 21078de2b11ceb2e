/* SPDX-License-Identifier: MIT */
/* window.h - a profile seen through a sliding window of time, for
 * `jitstack top`: the hottest functions (or threads) of the last second
 * and of the last JS_WIN_SLOTS seconds, as a table of text.
 *
 * The window reads the profile record fills (profile.h) and keeps nothing
 * of the samples but their counts: js_window_step turns what was added
 * since the last step into the newest of JS_WIN_SLOTS slots, forgetting
 * the oldest, so a step costs one pass over the profile's distinct stacks
 * and sampling costs what it costs record.
 *
 * A function's self count is the samples where it is the innermost frame;
 * its total, those where it is on the stack at all (once per stack, however
 * deep the recursion).  A function inlined at a pc (guest inline frames:
 * DWARF of GDB JIT images, perf map chains) is a frame of its own, as in
 * every other output, and counts the same way.
 */
#ifndef JS_WINDOW_H
#define JS_WINDOW_H

#include "base/hash.h"
#include "out/profile.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JS_WIN_SLOTS 10 /* steps the long window spans (top: seconds) */

/* A row of the table: a function, or a thread (proc, thread). */
typedef struct jw_row {
	uint32_t fn; /* functions: profile function index + 1, 0 unnamed; threads: the hottest (below) */
	uint32_t proc, thread; /* threads: process index and thread name (string index) */
	uint8_t source;        /* js_name_source, as first seen */
	bool jit, inlined;     /* named from JIT data; seen as an inlined frame */
	bool python;           /* a Python function (a frame read from the interpreter) */
	uint32_t self[JS_WIN_SLOTS], total[JS_WIN_SLOTS];
} jw_row;

typedef struct js_window {
	const js_profile *p;
	uint64_t *seen; /* each sample's count at the last step */
	size_t cap_seen;
	jw_row *fn, *th, *pair; /* functions, threads, (thread, leaf function) */
	size_t n_fn, cap_fn, n_th, cap_th, n_pair, cap_pair;
	js_htab fn_index, th_index, pair_index;
	uint32_t *stamp; /* per function row: the stack it was last counted in */
	size_t cap_stamp;
	uint32_t stamp_now;
	uint64_t samples[JS_WIN_SLOTS];
	unsigned slot;  /* the newest */
	unsigned steps; /* so far (the long window is shorter at first) */
	bool oom;
} js_window;

void js_window_init(js_window *w, const js_profile *p);
void js_window_free(js_window *w);
/* The samples added to the profile since the last step become the newest
 * slot; the oldest is forgotten. */
void js_window_step(js_window *w);

typedef enum { JW_FUNCTIONS, JW_THREADS } jw_view;
typedef enum { JW_BY_SELF, JW_BY_TOTAL } jw_sort;

typedef struct jw_show {
	jw_view view;
	jw_sort sort;
	unsigned width;   /* columns: every line is cut to fit */
	unsigned rows;    /* table rows at most (0: all) */
	bool one;         /* one window (top --once): the newest slot only, its length said by span */
	const char *span; /* the short window's name ("1 s"; --once: "2.0 s") */
	bool color;       /* names coloured by kind (color.h), the column header in reverse video */
	const char *eol;  /* ends each line: "\n", or with an erase for a screen */
} jw_show;

/* The table (its column header, then its rows, sorted) on f.  Returns the
 * number of lines written. */
unsigned js_window_print(const js_window *w, FILE *f, const jw_show *o);
/* Samples in the newest slot and in the whole window. */
uint64_t js_window_samples(const js_window *w, bool whole);

#endif
