/* SPDX-License-Identifier: MIT */
/* perfevent.h - sampling a process's threads with perf events: the kernel
 * copies each sampled thread's user registers and the top of its user
 * stack into a ring buffer (perf_event_open(2): PERF_SAMPLE_REGS_USER,
 * PERF_SAMPLE_STACK_USER, as `perf record --call-graph dwarf` samples), and
 * the thread never stops.  The copies are unwound later, off the target.
 *
 * One event per thread (cpu -1), opened as threads appear: `inherit` would
 * follow new threads from their first instruction, but the kernel refuses
 * to mmap an inherited per-task event (perf_mmap: "cpu == -1 &&
 * attr.inherit"), and per-CPU inherited events cannot tell a thread missed
 * between listing and opening from one covered by inheritance.  Each event
 * also reports its thread's clones (PERF_RECORD_FORK, attr.task), so a new
 * thread gets its own event at the next drain, and renames (attr.comm).
 *
 * The stack copy's size is per thread and adapts (js_pe_used): it starts at
 * JS_PE_STACK_START, doubles (up to JS_PE_STACK_MAX) when an unwind ran off
 * the copy's end, and shrinks to 1.5 x the most any of its last
 * JS_PE_WINDOW unwinds read (+1 KiB) when that is under half the size.  The
 * size is fixed when an event is opened, so a change reopens the thread's
 * event (between drains; what it would have sampled meanwhile is a few
 * microseconds).  The kernel copies the whole size at every sample, so the
 * size is what the target pays.  The environment variable JITSTACK_STACK_COPY
 * (bytes) sets the starting size instead: tests use it to start short.
 */
#ifndef JS_PERFEVENT_H
#define JS_PERFEVENT_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

enum {
	JS_PE_STACK_START = 8 << 10,
	JS_PE_STACK_MIN = 2 << 10,
	JS_PE_STACK_MAX = 65528, /* the kernel's limit: a record's size is 16 bits */
	JS_PE_WINDOW = 64,
};

typedef struct js_pe_thread {
	pid_t tid;
	char comm[32];
	int fd;
	uint8_t *ring; /* the header page, then data_size bytes */
	size_t ring_len, data_size;
	uint32_t stack;          /* sample_stack_user of its event */
	uint32_t want;           /* the size its next event should have (0: keep) */
	uint32_t win_n, win_max; /* unwinds since the last resize, the most one read */
	bool hup;                /* the thread exited (POLLHUP, PERF_RECORD_EXIT) */
} js_pe_thread;

typedef struct js_pe_sample {
	js_pe_thread *t;
	pid_t tid;
	uint64_t time_ns;             /* CLOCK_MONOTONIC */
	struct user_regs_struct regs; /* the registers DWARF unwinding uses */
	const uint8_t *stack;         /* the copy, from regs.rsp up */
	uint64_t stack_size;          /* what was asked for */
	uint64_t stack_len;           /* what the kernel could copy (less at the stack's top) */
} js_pe_sample;

typedef struct js_pe_stats {
	uint64_t samples, lost, lost_records, truncated, throttled, forks, exits;
	uint64_t grown, shrunk, no_regs;
	uint64_t open_failed; /* events that could not be opened (no descriptors, memory) */
	uint64_t stack_bytes; /* sum of the sizes asked for, per sample */
} js_pe_stats;

typedef struct js_pe {
	pid_t pid;
	double hz;       /* per thread; at most kernel.perf_event_max_sample_rate */
	double asked_hz; /* what was asked when that was more, else 0 */
	uint32_t type;   /* PERF_TYPE_HARDWARE (cycles) or PERF_TYPE_SOFTWARE (cpu-clock) */
	uint64_t config;
	const char *event; /* "cycles", "cpu-clock" */
	js_pe_thread *t;
	size_t n, cap;
	uint8_t *scratch; /* a record that wraps around the ring's end */
	js_pe_stats st;
	uint32_t start_stack; /* JS_PE_STACK_START, or the JITSTACK_STACK_COPY variable (tests) */
	size_t max_pages;     /* data pages of a ring at most (0: 256); record shares a budget */
} js_pe;

/* Can the process be sampled with perf events?  Opens (and closes) an
 * event on pid with the settings sampling uses: the hardware cycle
 * counter where the machine has one, else cpu-clock.  0, or a js_exit code
 * with *err: JS_EXIT_PERMISSION when the kernel refused
 * (perf_event_paranoid, seccomp, no CAP_PERFMON), saying why. */
int js_pe_probe(js_pe *pe, pid_t pid, double hz, js_err *err);
/* Open tid's event (nothing if it has one).  Its name is read once the
 * event is on (a rename from then on comes as a PERF_RECORD_COMM); comm,
 * when not NULL, is used only if that read fails.  0, -1 when the thread
 * is gone, or a js_exit code with *err. */
int js_pe_add(js_pe *pe, pid_t tid, const char *comm, js_err *err);
/* Drain every ring, calling cb for each sample (in each ring's order),
 * then reopen the events whose size is to change and forget the threads
 * that exited.  New threads (PERF_RECORD_FORK) get their events here.
 * Returns the samples seen. */
size_t js_pe_drain(js_pe *pe, void (*cb)(const js_pe_sample *x, void *arg), void *arg);
/* Open the events of the threads whose fork records are in the rings now,
 * leaving every record there for the next drain (which then finds those
 * threads known).  Before a listing of the threads: a clone that came
 * while a long drain unwound its samples is followed from its clone. */
void js_pe_take_forks(js_pe *pe);
/* After unwinding x: how far into the copy the unwind read, and whether it
 * ran off the copy's end (adapts the thread's size). */
void js_pe_used(js_pe *pe, const js_pe_sample *x, size_t used, bool ran_off);
/* Wait until a ring is half full, fd (a signalfd, or -1) is readable,
 * or timeout_ms passed.  Returns true when fd is readable. */
bool js_pe_wait(js_pe *pe, int fd, int timeout_ms);
/* The same over the rings of several processes' events (one poll). */
bool js_pe_wait_all(js_pe *const *pe, size_t n_pe, int fd, int timeout_ms);
/* Has any ring a record not drained yet? */
bool js_pe_pending(const js_pe *pe);
/* Are all the threads gone (every event hung up)? */
bool js_pe_all_gone(const js_pe *pe);
void js_pe_close(js_pe *pe);

#endif
