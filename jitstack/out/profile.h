/* SPDX-License-Identifier: MIT */
/* profile.h - samples aggregated the way pprof models them: strings,
 * mappings (modules), functions, locations (one per distinct pc, with
 * the functions inlined there) and samples (a list of locations, leaf
 * first, with a count), so every output format comes from the same data.
 *
 * The frames come named (unwind/name.h); each pc becomes a location once
 * and is remembered, until the JIT images, the perf map or the jitdump
 * change (new code at an old address must not keep a stale location).
 * A Python frame placed in a stack (unwind/interp.h) is a location of its
 * own, one per function and line, with no address, shared by every
 * process.
 *
 * A profile may hold several processes (record -p PID,PID..., --all).
 * Each has its own memo and mappings: the same address is other code in
 * another process.  Functions (name, file) are shared.
 */
#ifndef JS_PROFILE_H
#define JS_PROFILE_H

#include "base/err.h"
#include "base/hash.h"
#include "unwind/stack.h"

#include <stdint.h>
#include <stdio.h>

/* A function inlined at a location, at its line. */
typedef struct pr_line {
	uint32_t function; /* index + 1, 0 = unknown */
	int64_t line;
} pr_line;

typedef struct pr_location {
	uint64_t address;
	uint32_t mapping;  /* index + 1, 0 = none */
	uint32_t function; /* the physical frame's: index + 1, 0 = unknown */
	int64_t line;      /* its line: with inline frames, where the outermost was called */
	uint32_t inl;      /* the functions inlined at address: p->inl[inl .. inl + n_inl), */
	uint32_t n_inl;    /* innermost first */
	bool jit;          /* named from JIT data (an image, the perf map) */
	bool python;       /* a Python function (no address, no mapping: its line is its own) */
	uint8_t source;    /* where its name came from: js_name_source */
} pr_location;

typedef struct pr_function {
	uint32_t name, file; /* string indices */
} pr_function;

typedef struct pr_mapping {
	uint64_t start, limit;
	uint32_t file; /* string index */
	bool jit;
} pr_mapping;

typedef struct pr_sample {
	uint32_t proc;   /* process index (js_profile_process) */
	uint32_t thread; /* string index of the thread's name */
	uint32_t n;      /* locations */
	uint32_t *loc;   /* location index + 1, leaf first */
	uint64_t count;
} pr_sample;

typedef struct pr_process {
	int64_t pid;
	uint32_t comm;        /* string index of its name (/proc/PID/comm) */
	uint32_t frame;       /* string index of its root frame, "comm-PID" */
	js_htab pc_memo;      /* lookup pc -> location index + 1 */
	js_htab map_index;    /* module name (string index) -> mapping */
	uint64_t jit_changes; /* js_names_epoch() the memo was built for */
	uint64_t total;       /* samples added */
} pr_process;

typedef struct js_profile {
	char **str;
	size_t n_str, cap_str;
	js_htab str_index; /* string -> index */
	pr_mapping *map;
	size_t n_map, cap_map;
	pr_function *fn;
	size_t n_fn, cap_fn;
	pr_location *loc;
	size_t n_loc, cap_loc;
	pr_line *inl; /* the locations' inline frames */
	size_t n_inl, cap_inl;
	pr_sample *smp;
	size_t n_smp, cap_smp;
	pr_process *proc;
	size_t n_proc, cap_proc;
	js_htab fn_index;  /* (name, file) string indexes -> function */
	js_htab py_index;  /* (function, line) of a Python frame -> location */
	js_htab smp_index; /* (process, thread, locations) -> sample */
	uint32_t *scratch; /* a sample's locations before it is kept */
	size_t cap_scratch;
	uint64_t total; /* samples added */
	uint64_t period_ns, start_ns, duration_ns;
	const char *main_exe;
	int64_t comment[8]; /* pprof comments: string indices */
	size_t n_comment;
	bool by_process; /* collapsed and svg: each stack under a "comm-PID" root frame */
	bool oom;
} js_profile;

void js_profile_init(js_profile *p);
void js_profile_free(js_profile *p);
/* A process the samples come from: its index for js_profile_add. */
uint32_t js_profile_process(js_profile *p, pid_t pid, const char *comm);
/* Add one stack (unwound and named) of a thread of process proc, whose
 * names are those of names_epoch (js_names_epoch): when that changed, the
 * pcs that JIT data named are named again from st. */
void js_profile_add(js_profile *p, uint32_t proc, uint64_t names_epoch, const js_stack *st);

/* A line of text the profile carries about itself (pprof: a comment):
 * samples lost, stack copies too short.  At most 8; later ones dropped. */
void js_profile_comment(js_profile *p, const char *text);

/* The profile is written in a format of writers.h.  The writers' end: f flushed, and "cannot write NAME: ..."
 * in *err when that failed or failed is set (out of memory).  0 or js_fail's code. */
int js_profile_flushed(FILE *f, int failed, const char *name, js_err *err);

#endif
