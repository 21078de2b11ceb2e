/* SPDX-License-Identifier: MIT */
/* targets.h - the processes one `jitstack record` run samples: those of
 * -p PID,PID,... or, with --all, every process the user may read at the
 * start (processes started later are not followed).  Each has its own
 * session (modules, JIT images, perf map, jitdump), perf events when
 * sampling with them, and its own part of the profile (js_profile_process);
 * one loop (perfrecord.c, record.c) drives them all, and a process that
 * exits or fails ends only its own part.
 *
 * A process that cannot be read at the start is not recorded and the rest
 * go on, as fleet profilers do: with a list, a warning names it; with
 * --all the ones left out are counted (--stats names them).  Only when no
 * process can be recorded does the run fail, with the first one's error
 * (so `-p PID` fails exactly as it always has).
 *
 * Resources are bounded: the soft limit of open files is raised to the
 * hard one, a process (but the first) is not added when fewer than
 * JS_TARGET_FD_RESERVE descriptors would be left, the perf rings of all threads share
 * JS_RING_BUDGET bytes, and at most JS_MAX_TARGETS processes are taken;
 * what is left out for a limit is counted and said.
 */
#ifndef JS_TARGETS_H
#define JS_TARGETS_H

#include "record/perfevent.h"
#include "out/profile.h"
#include "record/record.h"
#include "unwind/session.h"

/* With several processes, a round's budget for reading their files (the
 * perf maps and jitdumps, js_follow_round): one process's huge file is
 * read a piece a round, and the others are sampled meanwhile.  Also the
 * budget of each process's first reads when it is opened. */
#define JS_ROUND_READ_BUDGET_NS 2000000ull /* 2 ms */

typedef struct js_target {
	js_session s;
	js_pe pe;      /* perf events: one per thread (perf mode) */
	uint32_t proc; /* its index in the profile */
	bool done;     /* its part is over: it exited, or could not be read any more */
	bool exited;
	uint64_t done_ns; /* when, since the start of sampling */
	uint64_t last_scan, last_plain;
	size_t n_deferred; /* its samples waiting for a second unwind (perf events) */
	/* --stats */
	unsigned long refreshes, rescans;
	unsigned long samples, idle, failed; /* ptrace */
	unsigned long py_rereads, py_unfit;  /* Python chains read again, samples left without them */
	uint64_t jit_samples, jit_named, deferred, deferred_named; /* perf events */
} js_target;

/* A process that was not recorded, kept for --stats. */
typedef struct js_skipped {
	pid_t pid;
	int code; /* enum js_exit */
	char why[512];
} js_skipped;

typedef struct js_targets {
	js_target **t; /* (sessions must not move: libdwfl keeps a pointer) */
	size_t n, cap;
	js_opts opt; /* the sessions' options (each keeps a pointer to them) */
	bool perf;   /* sampling with perf events */
	bool multi;  /* more than one process was asked for (a list, or --all) */
	bool all;
	double hz;         /* the rate perf events sample at (may be below -F) */
	double asked_hz;   /* -F, when the kernel's maximum lowered it; else 0 */
	const char *event; /* the perf event sampled on */
	unsigned long n_gone, n_denied, n_limits, n_other; /* not recorded */
	js_skipped *skipped;                               /* the first JS_MAX_SKIPPED_KEPT of them */
	size_t n_skipped, cap_skipped;
	js_err first; /* the first failure: the run's when nothing was recorded */
} js_targets;

/* Open every process r asks for, registering each in prof.  Prints what
 * is left out.  0 when at least one process is recorded, else a js_exit
 * code with ts->first. */
int js_targets_open(js_targets *ts, const js_record_opts *r, js_profile *prof);
/* End t's part (it exited when exited): its threads are let go, its
 * events closed; its session stays until js_targets_close (deferred
 * samples are still unwound with it).  now: since the start of sampling. */
void js_target_end(js_targets *ts, js_target *t, bool exited, uint64_t now);
/* Are all the targets' parts over? */
bool js_targets_done(const js_targets *ts);
/* --stats of t: with several processes its line, "process PID (COMM): N
 * samples in the profile; " + how (the sampling mode's counts) + how its
 * part ended; then its sources' own lines (source.h). */
void js_target_stats(const js_targets *ts, const js_target *t, const js_profile *prof, const char *how);
/* --stats: what was left out and why. */
void js_targets_stats(const js_targets *ts);
void js_targets_close(js_targets *ts);

#endif
