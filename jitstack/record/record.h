/* record.h - `jitstack record`: a sampling profiler through JIT frames. */
#ifndef JS_RECORD_H
#define JS_RECORD_H

#include "unwind/session.h"

typedef enum { FMT_COLLAPSED, FMT_PPROF, FMT_SVG } js_format;

typedef enum {
	MODE_PERF,   /* perf events copy registers and stacks; nothing stops (the default) */
	MODE_PTRACE, /* each sample stops the thread (PTRACE_INTERRUPT) */
} js_mode;

typedef struct js_record_opts {
	js_opts opt;
	const pid_t *pids; /* -p PID,PID,...: the processes to sample */
	size_t n_pids;
	bool all;        /* --all: every process the user may read (pids unused) */
	double hz;       /* samples per second */
	double secs;     /* 0: until the targets exit or SIGINT/SIGTERM */
	const char *out; /* NULL: stdout (collapsed, svg) or jitstack.pb.gz (pprof) */
	js_format format;
	bool idle;      /* count threads blocked in system calls too */
	bool addresses; /* collapsed: each frame's address too */
	js_mode mode;
} js_record_opts;

/* Returns a js_exit code. */
int js_record(const js_record_opts *r);

#endif
