/* SPDX-License-Identifier: MIT */
/* progress.c - the ticks of a sampling loop (progress.h). */
#include "record/progress.h"
#include "record/targets.h"

#include <stdio.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define LINE_NS 250000000ull /* the progress line: four times a second */

uint64_t js_targets_lost(const js_targets *ts)
{
	uint64_t n = 0;
	for (size_t i = 0; i < ts->n; i++)
		n += ts->t[i]->pe.st.lost + ts->t[i]->failed;
	return n;
}

size_t js_targets_alive(const js_targets *ts)
{
	size_t n = 0;
	for (size_t i = 0; i < ts->n; i++)
		n += !ts->t[i]->done;
	return n;
}

void js_ticker_start(js_ticker *k, const js_record_opts *r, js_targets *ts, js_profile *prof, uint64_t start,
		     uint64_t end)
{
	*k = (js_ticker){ .view = r->view, .ts = ts, .prof = prof, .start = start, .end = end };
	/* a view owns the terminal: no line of ours on it */
	k->line = !r->view && isatty(STDERR_FILENO);
	k->period = LINE_NS;
	if (r->view && r->view->tick_ns && r->view->tick_ns < k->period)
		k->period = r->view->tick_ns;
	k->next = k->line || r->view ? start + k->period : UINT64_MAX;
}

/* The terminal's width: the line must not wrap, or \r would rewrite only
 * its last row. */
static size_t columns(void)
{
	struct winsize ws;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) || ws.ws_col < 20)
		return 80;
	return ws.ws_col;
}

static void draw_line(js_ticker *k, uint64_t now)
{
	double secs = (now - k->start) / 1e9;
	char left[48] = "^C to stop";
	if (k->end != UINT64_MAX)
		snprintf(left, sizeof left, "%.1f s left", now < k->end ? (k->end - now) / 1e9 : 0.0);
	char procs[48];
	size_t alive = js_targets_alive(k->ts), n = k->ts->n;
	if (alive == n)
		snprintf(procs, sizeof procs, "%zu process%s", n, n == 1 ? "" : "es");
	else
		snprintf(procs, sizeof procs, "%zu of %zu processes", alive, n);
	char buf[256];
	int len = snprintf(buf, sizeof buf,
			   "jitstack: recording %.1f s, %s: %llu samples, %.0f/s, %llu lost, %s", secs, left,
			   (unsigned long long)k->prof->total, secs > 0 ? (double)k->prof->total / secs : 0.0,
			   (unsigned long long)js_targets_lost(k->ts), procs);
	size_t width = columns() - 1;
	if (len > 0 && (size_t)len > width)
		buf[width] = 0;
	/* \r and erase to the end of the line (ECMA-48 EL): rewritten in place */
	fprintf(stderr, "\r%s\033[K", buf);
	fflush(stderr);
	k->shown = true;
}

bool js_ticker_tick(js_ticker *k, uint64_t now)
{
	if (now < k->next)
		return false;
	k->next = now + k->period;
	if (k->line)
		draw_line(k, now);
	return k->view && k->view->tick(k->view->arg, k->ts, k->prof, now - k->start);
}

void js_ticker_end(js_ticker *k)
{
	if (k->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
		k->shown = false;
	}
	k->line = false;
	if (k->view && k->view->stop)
		k->view->stop(k->view->arg);
	k->next = UINT64_MAX;
}
