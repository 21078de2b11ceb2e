/* SPDX-License-Identifier: MIT */
/* progress.h - what a sampling loop does between rounds besides sampling:
 * the progress line `jitstack record` keeps on a terminal, and the view
 * of another command (record.h, js_record_view: `jitstack top`).
 *
 * The progress line (stderr, only when it is a terminal, so that logs and
 * pipes never see it) is rewritten in place a few times a second:
 *   jitstack: recording 1.5 s, 2.5 s left: 148 samples, 99/s, 0 lost, 1 process
 * and erased when the sampling ends, before the closing lines.
 */
#ifndef JS_PROGRESS_H
#define JS_PROGRESS_H

#include "out/profile.h"
#include "record/record.h"

#include <stdbool.h>
#include <stdint.h>

struct js_targets;

typedef struct js_ticker {
	const js_record_view *view; /* or NULL */
	struct js_targets *ts;
	js_profile *prof;
	uint64_t start, end; /* now_ns(); end UINT64_MAX: until ^C or the processes exit */
	uint64_t next;       /* the next tick is due then */
	uint64_t period;
	bool line;  /* the progress line is on */
	bool shown; /* ... and on the screen now */
} js_ticker;

/* Ticks for r's sampling of ts into prof, from start (now_ns()) to end. */
void js_ticker_start(js_ticker *k, const js_record_opts *r, struct js_targets *ts, js_profile *prof,
		     uint64_t start, uint64_t end);
/* At or after k->next: the progress line rewritten, the view's tick
 * called.  Returns true when the view asks to end the sampling. */
bool js_ticker_tick(js_ticker *k, uint64_t now);
/* The sampling is over: the line erased, the view's stop called. */
void js_ticker_end(js_ticker *k);

/* The samples of every process lost so far: perf events' lost records, or
 * ptrace samples that failed. */
uint64_t js_targets_lost(const struct js_targets *ts);
/* How many processes are still sampled. */
size_t js_targets_alive(const struct js_targets *ts);

#endif
