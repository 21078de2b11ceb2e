/* outfile.h - a profile file written whole or not at all.
 *
 * SPDX-License-Identifier: MIT
 *
 * The bytes go to a temporary file in the same directory
 * (.NAME.XXXXXX, made with mkstemp: O_EXCL, so nothing planted there is
 * followed), which replaces NAME by rename(2) once every byte is written
 * and the file closed.  A write that fails (a full disk), or a record that
 * ends before it has a profile, leaves NAME as it was: an old profile is
 * never replaced by a truncated one.  A NAME that exists and is not a
 * regular file (a FIFO, /dev/null, /dev/stdout) is written in place, since
 * renaming over it would replace it.
 */
#ifndef JS_OUTFILE_H
#define JS_OUTFILE_H

#include "base/err.h"

#include <stdio.h>

typedef struct js_outfile {
	const char *path;
	char *tmp; /* the temporary file's path; NULL when written in place */
	FILE *f;
} js_outfile;

/* 0 with o->f open for writing, or a js_exit code with *err. */
int js_outfile_open(js_outfile *o, const char *path, js_err *err);
/* Close and put the file in place: 0, or a js_exit code with *err (then
 * the temporary file is removed and path is as it was). */
int js_outfile_commit(js_outfile *o, js_err *err);
/* Close and remove the temporary file: path is as it was. */
void js_outfile_abort(js_outfile *o);

#endif
