/* SPDX-License-Identifier: MIT */
/* record.h - `jitstack record`: a sampling profiler through JIT frames. */
#ifndef JS_RECORD_H
#define JS_RECORD_H

#include "out/profile.h"
#include "out/writers.h"
#include "unwind/session.h"

typedef enum {
	MODE_PERF,   /* perf events copy registers and stacks; nothing stops (the default) */
	MODE_PTRACE, /* each sample stops the thread (PTRACE_INTERRUPT) */
} js_mode;

struct js_targets;

/* Another command's use of the sampling loop (`jitstack top`): the
 * samples go into the profile as record's do, at the same cost; tick is
 * called between two drains (or two ptrace rounds) at least every tick_ns
 * with the profile sampled so far, and ends the sampling when it returns
 * true; stop is called once the sampling ended (before its last drain,
 * which may print on stderr: a full-screen view leaves the screen first);
 * done, instead of writing the profile, returns the run's exit code. */
typedef struct js_record_view {
	uint64_t tick_ns;
	bool (*tick)(void *arg, struct js_targets *ts, js_profile *prof, uint64_t elapsed_ns);
	void (*stop)(void *arg);
	int (*done)(void *arg, struct js_targets *ts, js_profile *prof);
	void *arg;
} js_record_view;

typedef struct js_record_opts {
	js_opts opt;
	const pid_t *pids; /* -p PID,PID,...: the processes to sample */
	size_t n_pids;
	bool all;                /* --all: every process the user may read (pids unused) */
	double hz;               /* samples per second */
	double secs;             /* 0: until the targets exit or SIGINT/SIGTERM */
	const char *out;         /* NULL: stdout, or "jitstack" and the extension for a binary format */
	const js_writer *format; /* a row of js_writers */
	bool idle;               /* count threads blocked in system calls too */
	bool addresses;          /* collapsed: each frame's address too */
	js_mode mode;
	const js_record_view *view; /* NULL: record writes the profile (top: its view) */
} js_record_opts;

/* Returns a js_exit code. */
int js_record(const js_record_opts *r);

#endif
