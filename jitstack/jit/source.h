/* source.h - the sources jitstack reads beside the native stack, behind
 * one table.
 * SPDX-License-Identifier: MIT
 *
 * A source is a reader of one side channel a JIT publishes through: the
 * GDB JIT interface's images (source_gdb.c, over jitmodules.h), the perf
 * map (source_perfmap.c, over perfmap.h) and the jitdump
 * (source_jitdump.c, over jitdump.h); or of an interpreter's own frames,
 * which the threads run besides their native ones: CPython's Python
 * frames (source_python.c, over python/frames.h).  Each is one row, a js_source_ops
 * table in a file of its own; the session (unwind/session.h) keeps a list
 * of them, in the order their modules are reported and their --stats
 * lines printed, and loops over it.  Adding a source is one file, its row,
 * and its place in that list.
 */
#ifndef JS_SOURCE_H
#define JS_SOURCE_H

#include "base/err.h"
#include "python/frames.h"
#include "target/mem.h"

#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

typedef struct js_source js_source;

/* What a refresh asks of the modules the source reports (js_source_ops.refresh). */
typedef enum js_source_report {
	JS_SOURCE_REPORT_NONE,  /* nothing */
	JS_SOURCE_REPORT_ADDED, /* report it again with a report that only adds */
	JS_SOURCE_REPORT_ALL,   /* everything again: modules it reported before may be gone */
} js_source_report;

/* The output's writer of a JSON string (NULL: null), for describe. */
typedef void js_json_str_fn(FILE *f, const char *s);

/* The target a source looks for its file in (js_source_ops.open). */
typedef struct js_source_target {
	pid_t pid;
	bool core;     /* a core file (core_fd, core_elf), else a live process */
	int core_fd;   /* the core's */
	Elf *core_elf; /* the core's */
	uint16_t machine;
	bool once;   /* read once (a dump), not sampled: a look through every module is affordable */
	Dwfl *dwfl;  /* its modules, as reported (NULL: none yet) */
	js_mem *mem; /* its memory */
	/* a warning for the user, one line (the session's list) */
	void (*warn)(void *arg, const char *msg);
	void *warn_arg;
} js_source_target;

typedef struct js_source_ops {
	const char *name;
	/* Its member in a dump's JSON "jit" object (describe). */
	const char *json_key;
	/* Look for its file in target t (or take src->path, the one the user
	 * named) and, when there is one to read, get its reader ready and set
	 * *src->on; a file found and not used gets a warning through t->warn.
	 * Called when the target is opened, unless src->off (the user turned
	 * it off); for a live process again, at most once a second, while no
	 * file was named or found (js_refresh_sources: a JIT that starts
	 * writing late).  NULL: it reads no file of its own (the GDB images). */
	void (*open)(js_source *src, const js_source_target *t);
	/* Bumped whenever the names it gives changed: names remembered
	 * under another value may be stale.  Never fails. */
	uint64_t (*changes)(const js_source *src);
	/* Read what the target appended to it since the last call (all of it
	 * the first time).  1 when its names changed (*report: what that asks
	 * of its modules), 0 when not, -1 with *why ("PATH: reason") when it
	 * cannot be read (errnum ENOENT: there is none).  NULL: it is read
	 * otherwise (the GDB images: desc.h's modes, the session's
	 * js_refresh_jit). */
	int (*refresh)(js_source *src, js_source_report *report, js_err *why);
	/* Report its modules to dwfl, between the caller's
	 * dwfl_report_begin (or _begin_add) and dwfl_report_end, after those
	 * of the rows before it in list[0..n).  true when a module reported
	 * before lost its place (then everything is reported again).  NULL:
	 * it gives no modules.  Never fails (a module libdwfl refuses is
	 * left out). */
	bool (*report)(js_source *src, Dwfl *dwfl, const js_source *list, size_t n);
	/* After a whole report: let go of what was not reported again.  NULL:
	 * nothing to do.  Never fails. */
	void (*reap)(js_source *src);
	/* What it read, for a dump's summary: with json, its JSON value on f
	 * (an object, or null when it found no file; str writes a string);
	 * else its "JIT: ..." line, or nothing when it found no file.  Called
	 * only when it is read (js_source_on).  NULL: the output describes
	 * it itself (the GDB images).  Never fails. */
	void (*describe)(const js_source *src, FILE *f, bool json, js_json_str_fn *str);
	/* Read the frames of its own that the target's threads run (the
	 * Python frames of CPython's interpreter), now: every thread's, or
	 * (tid not 0) that thread's alone; while the threads are stopped, or
	 * with `running` when they are not (the source then checks what it
	 * read), or from a core.  Warnings go through t->warn.  Called only
	 * when it is read (js_source_on).  NULL: it has no frames of its own.
	 * Never fails. */
	void (*walk)(js_source *src, bool running, pid_t tid, const js_source_target *t);
	/* The frames of thread tid that the last walk read, innermost first
	 * (*n of them; NULL with *n 0 when none), good until the next walk.
	 * NULL when walk is. */
	const js_py_frame *(*frames)(const js_source *src, pid_t tid, size_t *n);
	/* --stats: its own lines on f (NULL: it prints none).  Never fails. */
	void (*stats)(const js_source *src, FILE *f);
	/* Free its reader (also one never opened, all zeros). */
	void (*free)(js_source *src);
} js_source_ops;

struct js_source {
	const js_source_ops *ops;
	void *r;            /* its reader: js_jit, js_perfmap, js_jitdump (or its own, made by open) */
	bool *on;           /* whether it is read (a path found or named), or NULL: always */
	const char *path;   /* the file the user named, or NULL: a named file's absence is worth a warning */
	bool off;           /* the user turned it off: never opened */
	uint64_t looked_ns; /* when open last looked for its file */
	uint64_t ns;        /* time spent reading it (--stats) */
	uint64_t first_ns;  /* of which before sampling began (record's --stats) */
};

/* The most sources a session lists. */
#define JS_MAX_SOURCES 8

/* The rows. */
extern const js_source_ops js_source_gdb, js_source_perfmap, js_source_jitdump, js_source_python;

static inline bool js_source_on(const js_source *src)
{
	return !src->on || *src->on;
}

/* The time this machine booted (btime of /proc/stat), or 0. */
time_t js_boot_time(void);
/* t->warn of a message formatted as printf's. */
void js_source_warn(const js_source_target *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The source of the row ops in list[0..n), or NULL. */
js_source *js_sources_find(js_source *list, size_t n, const js_source_ops *ops);

/* The sum of the sources' changes (js_source_ops.changes). */
uint64_t js_sources_changes(const js_source *list, size_t n);
/* Report the modules of every source that is read, in list order; true
 * when one lost its place. */
bool js_sources_report(js_source *list, size_t n, Dwfl *dwfl);
/* js_source_ops.reap of every source. */
void js_sources_reap(js_source *list, size_t n);
/* The --stats lines of every source that is read, in list order. */
void js_sources_stats(const js_source *list, size_t n, FILE *f);
/* js_source_ops.walk of every source that is read and has frames of its own. */
void js_sources_walk(js_source *list, size_t n, bool running, pid_t tid, const js_source_target *t);
/* Sampling begins: each source's first_ns is the time read so far. */
void js_sources_first_round(js_source *list, size_t n);
void js_sources_free(js_source *list, size_t n);

#endif
