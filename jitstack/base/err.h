/* SPDX-License-Identifier: MIT */
/* err.h - jitstack's one error type, and the notes that share its
 * formatting.
 *
 * A failure of the run is a js_err: the message printed after "jitstack: ",
 * the exit code it ends the run with (enum js_exit, documented in
 * jitstack(1)), and the errno behind it when there is one.  Functions that
 * can fail take a js_err * and return 0 or the code; every failure is made
 * at one choke point, js_fail, so each path reads the same and a build with
 * -DJS_DEBUG records where it was made (as SQLite's SQLITE_CORRUPT_BKPT).
 *
 * What is wrong with one image or one descriptor does not fail the run:
 * an image is rejected with a js_err (its reason), a descriptor carries a
 * note.  Notes are clauses joined by "; ", written with js_note.
 */
#ifndef JS_ERR_H
#define JS_ERR_H

#include <stdarg.h>
#include <stddef.h>

enum js_exit {
	JS_EXIT_OK = 0,
	JS_EXIT_FAILURE = 1, /* anything else: out of memory, libdwfl failure, I/O */
	JS_EXIT_USAGE = 2,
	JS_EXIT_NO_PROCESS = 3, /* no such process, or it exited while being read */
	JS_EXIT_PERMISSION = 4, /* not allowed to trace it, or to read the core */
	JS_EXIT_BAD_CORE = 5,   /* not a core file, or an unreadable one */
	JS_EXIT_ARCH = 6,       /* a process or core of an architecture we cannot unwind */
};

typedef struct js_err {
	int code;         /* enum js_exit; JS_EXIT_OK: no error */
	int errnum;       /* the errno behind it, 0 if none */
	const char *file; /* where it was made (JS_DEBUG builds), else NULL */
	int line;
	char msg[512];
} js_err;

/* Set *e (NULL: only return) and return code.  Use js_fail. */
int js_fail_at(js_err *e, const char *file, int line, int code, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

#ifdef JS_DEBUG
#define js_fail(e, code, errnum, ...) js_fail_at((e), __FILE__, __LINE__, (code), (errnum), __VA_ARGS__)
#else
#define js_fail(e, code, errnum, ...) js_fail_at((e), NULL, 0, (code), (errnum), __VA_ARGS__)
#endif

/* Print "jitstack: MESSAGE" on stderr (and where it was made, if known). */
void js_err_print(const js_err *e);

/* Append a clause to the note in buf[size] ("; " after what is there); a
 * clause that does not fit is cut. */
void js_note(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void js_vnote(char *buf, size_t size, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

#endif
