/* SPDX-License-Identifier: MIT */
/* top.c - `jitstack top`: record's sampling (perf events, ptrace where
 * those are refused), shown as it goes instead of written at the end.
 *
 * The samples go into a profile exactly as record puts them there, so the
 * target pays what it pays under record at the same rate; once a second
 * the profile is seen through a sliding window (out/window.h: the last
 * second and the last ten) and the table redrawn.
 *
 * The screen is plain ANSI (ECMA-48 and the xterm private modes every
 * terminal emulator and tmux take): the alternate screen, the cursor
 * hidden, each line erased to its end after it is written and the rest of
 * the screen after the last, so a redraw never leaves stale text, whatever
 * the size was before.  The size is read (TIOCGWINSZ) at every tick, ten
 * times a second, and a new one redraws at once: no SIGWINCH handler is
 * needed.  Keys come from the terminal in non-canonical mode without echo;
 * ^C stays a signal (ISIG), which ends the sampling as it ends record's.
 *
 * Without a terminal on stdout, or with --once, it samples for -d seconds
 * and prints one table: for scripts.
 */
#include "top.h"
#include "out/window.h"
#include "record/progress.h"
#include "record/targets.h"
#include "target/hold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define TICK_NS 100000000ull  /* keys and the terminal's size: ten times a second */
#define STEP_NS 1000000000ull /* the window's slot, and the refresh */
#define ONCE_SECS 2.0         /* --once without -d */

typedef struct top {
	const js_top_opts *o;
	js_window w;
	js_targets *ts;
	js_profile *prof;
	uint64_t elapsed, stepped;
	bool live;      /* the full screen (else one table) */
	bool on_screen; /* the alternate screen is up */
	bool raw;       /* stdin's modes are changed (saved in tio) */
	struct termios tio;
	bool color;
	jw_view view;
	jw_sort sort;
	bool paused, quit;
	unsigned cols, rows;
} top;

static void screen_enter(top *t)
{
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->tio) == 0) {
		struct termios raw = t->tio;
		raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
		raw.c_cc[VMIN] = 0; /* read returns at once, with what was typed */
		raw.c_cc[VTIME] = 0;
		t->raw = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
	}
	/* the alternate screen (xterm's 1049), the cursor hidden */
	fputs("\033[?1049h\033[?25l", stdout);
	fflush(stdout);
	t->on_screen = true;
}

static void screen_leave(void *arg)
{
	top *t = arg;
	if (t->on_screen) {
		fputs("\033[?25h\033[?1049l", stdout);
		fflush(stdout);
		t->on_screen = false;
	}
	if (t->raw) {
		tcsetattr(STDIN_FILENO, TCSANOW, &t->tio);
		t->raw = false;
	}
}

/* The terminal's size; true when it changed. */
static bool read_size(top *t)
{
	struct winsize ws;
	unsigned cols = 80, rows = 24;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row)
		cols = ws.ws_col, rows = ws.ws_row;
	bool changed = cols != t->cols || rows != t->rows;
	t->cols = cols, t->rows = rows;
	return changed;
}

/* Who is sampled, and how: the header's first line. */
static void describe(const top *t, char *buf, size_t len)
{
	const js_targets *ts = t->ts;
	char who[96];
	if (!ts->multi)
		snprintf(who, sizeof who, "PID %d (%s)", (int)ts->t[0]->s.pid, ts->t[0]->s.comm);
	else
		snprintf(who, sizeof who, "%zu processes, %zu sampled", ts->n, js_targets_alive(ts));
	double hz = t->prof->period_ns ? 1e9 / (double)t->prof->period_ns : t->o->r.hz;
	if (ts->perf)
		snprintf(buf, len, "jitstack top: %s; perf events (%s) at %g Hz", who, ts->event, hz);
	else
		snprintf(buf, len, "jitstack top: %s; ptrace at %g Hz", who, hz);
}

/* A line of the header or the footer: cut to the width, erased to its end. */
static void put_line(FILE *f, const top *t, const char *s, const char *eol)
{
	size_t n = strlen(s);
	fwrite(s, 1, n < t->cols ? n : t->cols, f);
	fputs(eol, f);
}

static void draw(top *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return;
	const char *eol = "\033[K\n";
	char line[512];
	fputs("\033[H", f); /* home: every line is written over */
	if (t->rows < 6) {  /* no room for a table: say so on one line */
		put_line(f, t, "jitstack top: the window is too small", "\033[K\033[J");
		goto out;
	}
	describe(t, line, sizeof line);
	size_t at = strlen(line);
	snprintf(line + at, sizeof line - at, "; %.0f s", t->elapsed / 1e9);
	put_line(f, t, line, eol);
	snprintf(line, sizeof line, "samples: %llu in 1 s, %llu in %u s; %llu lost   %s%s",
		 (unsigned long long)js_window_samples(&t->w, false),
		 (unsigned long long)js_window_samples(&t->w, true),
		 t->w.steps < JS_WIN_SLOTS ? t->w.steps : JS_WIN_SLOTS,
		 (unsigned long long)js_targets_lost(t->ts),
		 t->view == JW_THREADS   ? "threads by share"
		 : t->sort == JW_BY_SELF ? "functions by self"
					 : "functions by total",
		 t->paused ? "   [paused]" : "");
	put_line(f, t, line, eol);
	put_line(f, t, "", eol);
	/* the header's 3 lines, the table, the footer: never the last line's
	 * newline, which would scroll the screen */
	unsigned table = t->rows > 5 ? t->rows - 4 : 1;
	jw_show show = { .view = t->view,
			 .sort = t->sort,
			 .width = t->cols,
			 .rows = table,
			 .span = "1s",
			 .color = t->color,
			 .eol = eol };
	unsigned n = js_window_print(&t->w, f, &show);
	for (; n < table; n++)
		fputs(eol, f);
	snprintf(line, sizeof line,
		 "s: by self  t: by total  v: %s  p: %s  q: quit    J: JIT code  i: inlined",
		 t->view == JW_THREADS ? "functions" : "threads", t->paused ? "resume" : "pause");
	put_line(f, t, line, "\033[K\033[J");
out:
	if (fclose(f) == 0) {
		fwrite(buf, 1, len, stdout);
		fflush(stdout);
	}
	free(buf);
}

/* The keys typed since the last tick; true when one changed the view. */
static bool read_keys(top *t)
{
	if (!t->raw)
		return false;
	char k[64];
	ssize_t n = read(STDIN_FILENO, k, sizeof k);
	bool changed = false;
	for (ssize_t i = 0; i < n; i++) {
		switch (k[i]) {
		case 'q':
		case 'Q': t->quit = true; break;
		case 's': t->sort = JW_BY_SELF, changed = true; break;
		case 't': t->sort = JW_BY_TOTAL, changed = true; break;
		case 'v':
		case '\t': t->view = t->view == JW_THREADS ? JW_FUNCTIONS : JW_THREADS, changed = true; break;
		case 'p':
		case ' ': t->paused = !t->paused, changed = true; break;
		default: break;
		}
	}
	return changed;
}

/* Between two drains: keys, the size, and once a second the window's step
 * and a redraw (not while paused: the screen stays as it was). */
static bool tick(void *arg, js_targets *ts, js_profile *prof, uint64_t elapsed)
{
	top *t = arg;
	t->ts = ts, t->prof = prof, t->w.p = prof, t->elapsed = elapsed;
	if (!t->live)
		return false;
	if (!t->on_screen) {
		screen_enter(t);
		read_size(t);
		js_window_step(&t->w);
		t->stepped = elapsed;
		draw(t);
	}
	bool redraw = read_keys(t) | read_size(t);
	if (elapsed - t->stepped >= STEP_NS) {
		js_window_step(&t->w);
		t->stepped += STEP_NS;
		if (elapsed - t->stepped >= STEP_NS) /* fell behind: no burst of steps */
			t->stepped = elapsed;
		redraw |= !t->paused;
	}
	if (redraw && !t->quit)
		draw(t);
	return t->quit;
}

/* The end: one table for --once; the screen is already gone when live. */
static int done(void *arg, js_targets *ts, js_profile *prof)
{
	top *t = arg;
	t->ts = ts, t->prof = prof, t->w.p = prof;
	if (t->live) {
		/* the screen is gone: say why it ended when nobody asked it to */
		if (!t->quit && !js_targets_alive(ts))
			fprintf(stderr, "jitstack: %s\n",
				ts->n == 1 ? "the process exited" : "every process exited");
		return 0;
	}
	js_window_step(&t->w);
	char line[512], span[32];
	describe(t, line, sizeof line);
	snprintf(span, sizeof span, "%.1fs", prof->duration_ns / 1e9);
	printf("%s; %s: %llu samples, %llu lost\n", line, span,
	       (unsigned long long)js_window_samples(&t->w, false), (unsigned long long)js_targets_lost(ts));
	bool tty = isatty(STDOUT_FILENO);
	if (tty)
		read_size(t);
	jw_show show = { .view = JW_FUNCTIONS,
			 .sort = JW_BY_SELF,
			 .width = tty ? t->cols : 4096,
			 .one = true,
			 .span = span,
			 .color = t->color,
			 .eol = "\n" };
	js_window_print(&t->w, stdout, &show);
	return 0;
}

int js_top(js_top_opts *o)
{
	top t = { .o = o };
	t.live = !o->once && isatty(STDOUT_FILENO);
	t.color = js_color_wanted(o->color, STDOUT_FILENO);
	if (!t.live && !o->r.secs)
		o->r.secs = ONCE_SECS;
	js_record_view view = {
		.tick_ns = TICK_NS, .tick = tick, .stop = screen_leave, .done = done, .arg = &t
	};
	o->r.view = &view;
	/* ^Z takes the screen down; the next tick puts it back (on_screen) */
	js_hold_set_screen(&(js_hold_screen){ .leave = screen_leave, .arg = &t });
	js_window_init(&t.w, NULL); /* (it reads the profile record fills: tick and done give it) */
	int rc = js_record(&o->r);
	js_hold_set_screen(NULL);
	screen_leave(&t);
	js_window_free(&t.w);
	return rc;
}
