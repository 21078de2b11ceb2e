/* SPDX-License-Identifier: MIT */
/* writers.h - the formats a profile is written in (record --format): one
 * row each, with the word that names it, the extension its files take,
 * where it goes by default, and its writer.  Every writer has the same
 * signature; a format is added by one row here and its writer's file.
 *
 * jitstack(1) lists the same formats, in the same order: a test checks it
 * against the list this table gives (t-record-formats-are-the-ones-the-man-
 * page-lists).  A dump's text and JSON are printed thread by thread as it
 * unwinds (output.h), not written from a profile: they are not rows here.
 */
#ifndef JS_WRITERS_H
#define JS_WRITERS_H

#include "out/profile.h"

#include <stdbool.h>
#include <stdio.h>

/* What a writer may be asked besides the profile. */
typedef struct js_write_opts {
	bool addresses; /* collapsed: each frame's address too (--addresses) */
} js_write_opts;

/* Write p to f (name: f's name for the error messages).  0, or js_fail's
 * code with *err set. */
typedef int js_write_fn(const js_profile *p, const js_write_opts *o, FILE *f, const char *name, js_err *err);

typedef struct js_writer {
	const char *name; /* --format's word */
	const char *ext;  /* the extension of a file in this format */
	bool to_file;     /* binary: by default to the file "jitstack" ext, not stdout */
	js_write_fn *write;
} js_writer;

/* The formats, the default first; n_writers of them. */
extern const js_writer js_writers[];
extern const size_t js_n_writers;

/* The row of the format named name, or NULL. */
const js_writer *js_writer_named(const char *name);
/* The names as a sentence, "a, b or c", into buf (len bytes). */
void js_writer_names(char *buf, size_t len);

js_write_fn js_write_collapsed, js_write_pprof, js_write_svg;

#endif
