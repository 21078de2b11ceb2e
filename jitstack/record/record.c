/* SPDX-License-Identifier: MIT */
/* record.c - `jitstack record`: sample live processes' stacks at a fixed
 * rate and write a profile (collapsed stacks, pprof or svg).  The
 * processes (targets.h: one, a list, or --all) are sampled with perf
 * events (perfrecord.c) or, here, with ptrace; one round visits every
 * process, and a process that exits ends only its own part.
 *
 * One sample of one thread: PTRACE_INTERRUPT, wait for the stop, read the
 * registers, unwind with libdwfl (modules, CFI and JIT images are kept from
 * sample to sample; stack pages are read fresh), PTRACE_CONT; then name the
 * frames (each pc once, profile.c) while the thread runs again.  Between
 * samples the JIT descriptor's seq is read (8 bytes): the list and new
 * images are read again only when it moved.  Signals the threads receive
 * meanwhile stop them under ptrace; SIGCHLD wakes us to pass them on at
 * once, so the target is not held up between samples.  The perf map is
 * read whole before the first sample, then between rounds only what was
 * appended to it (one stat() when nothing was).
 */
#include "base/follow.h"
#include "base/grow.h"
#include "formats/clock.h"
#include "record/perfrecord.h"
#include "record/progress.h"
#include "out/outfile.h"
#include "out/profile.h"
#include "record/record.h"
#include "unwind/interp.h"
#include "unwind/stack.h"
#include "record/targets.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RESCAN_NS 100000000ull        /* look for new threads this often */
#define PLAIN_REREAD_NS 1000000000ull /* re-read a list without the seqlock this often */
#define MAX_TIMINGS (1u << 20)        /* sample latencies kept for --stats */

static uint64_t real_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

typedef struct timings {
	uint32_t *stopped, *total; /* ns, per thread sample */
	size_t n;
	uint32_t *pm; /* ns, per perf map refresh between rounds */
	size_t n_pm;
} timings;

static void note_time(timings *t, uint64_t stopped, uint64_t total)
{
	if (t->n >= MAX_TIMINGS || !t->stopped || !t->total)
		return;
	t->stopped[t->n] = stopped > UINT32_MAX ? UINT32_MAX : (uint32_t)stopped;
	t->total[t->n] = total > UINT32_MAX ? UINT32_MAX : (uint32_t)total;
	t->n++;
}

static void note_pm(timings *t, uint64_t ns)
{
	if (t->n_pm < MAX_TIMINGS && t->pm)
		t->pm[t->n_pm++] = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static void print_dist(const char *what, uint32_t *v, size_t n)
{
	if (!n)
		return;
	qsort(v, n, sizeof *v, cmp_u32);
	fprintf(stderr, "jitstack: stats: %s: median %.1f us, p90 %.1f us, p99 %.1f us, max %.1f us\n", what,
		v[n / 2] / 1e3, v[n * 9 / 10] / 1e3, v[n * 99 / 100] / 1e3, v[n - 1] / 1e3);
}

/* Stops of the traced threads that came on their own (signals), handed
 * to their processes. */
static void poll_all(js_targets *ts, js_proc **procs)
{
	for (size_t i = 0; i < ts->n; i++)
		procs[i] = &ts->t[i]->s.proc;
	js_proc_poll_all(procs, ts->n);
}

/* Wait until `until`, passing on the signals the targets' threads get;
 * returns true when we were asked to stop (SIGINT, SIGTERM, SIGHUP). */
static bool wait_until(js_targets *ts, js_proc **procs, const sigset_t *set, uint64_t until)
{
	for (;;) {
		uint64_t now = now_ns();
		if (now >= until)
			return false;
		struct timespec left = { (time_t)((until - now) / 1000000000u),
					 (long)((until - now) % 1000000000u) };
		int sig = sigtimedwait(set, NULL, &left);
		js_proc_suspend_point(); /* ^Z: stopped and continued here */
		if (sig == SIGCHLD)
			poll_all(ts, procs);
		else if (sig > 0)
			return true;
	}
}

/* How much stack to copy: what the thread's last unwind needed, with room
 * to grow; bounded.  A deeper stack than the copy is read live for the rest
 * of that sample (a little racy) and copied in full the next time. */
enum { STACK_MIN = 8 << 10, STACK_MAX = 1 << 20, STACK_SLACK = 4 << 10 };

static size_t stack_to_copy(const js_thread *t)
{
	size_t n = t->stack_hint + STACK_SLACK;
	n = (n + 4095) & ~(size_t)4095;
	return n < STACK_MIN ? STACK_MIN : n > STACK_MAX ? STACK_MAX : n;
}

/* One round: every thread sampled once.  The thread is held only while its
 * registers and stack are copied; it is unwound from the copy after it was
 * let go, which keeps the time it stands still to the ptrace round trip. */
static void sample_all(js_target *tg, const js_record_opts *r, js_profile *prof, js_stack *st, timings *tm)
{
	js_session *s = &tg->s;
	for (size_t i = 0; i < s->proc.n; i++) {
		js_thread *t = &s->proc.t[i];
		if (t->gone)
			continue;
		uint64_t t0 = now_ns();
		if (js_proc_stop(&s->proc, t)) {
			tg->failed += !t->gone;
			continue;
		}
		if (t->idle && !r->idle) {
			js_proc_resume(&s->proc, t);
			tg->idle++;
			continue;
		}
		uint64_t sp = js_regs_sp(&t->regs);
		size_t len = stack_to_copy(t);
		while (len > st->cap_copy && js_grow(&st->copy, &st->cap_copy, st->cap_copy, 1))
			;
		js_sample x = { .tid = t->tid, .idle = t->idle, .regs = &t->regs, .stack = st->copy };
		memcpy(x.comm, t->comm, sizeof x.comm);
		x.len = js_mem_copy(s->mem, sp, st->copy, len < st->cap_copy ? len : st->cap_copy);
		/* its Python frames as they are at the stop, as its stack is: a
		 * chain read after the thread ran on would not fit the stack
		 * whenever it called into C and back, or returned, in between
		 * (a generator does, each item) */
		js_walk_sources(s, false, t->tid);
		js_proc_resume(&s->proc, t);
		uint64_t t1 = now_ns();
		js_unwind(s, &x, st, NULL);
		if (st->max_sp > sp && st->max_sp - sp < STACK_MAX)
			t->stack_hint = (size_t)(st->max_sp - sp);
		js_name_stack(s, st);
		js_place_interp_frames(s, st);
		js_profile_add(prof, tg->proc, js_names_epoch(s), st);
		tg->samples++;
		note_time(tm, t1 - t0, now_ns() - t0);
	}
}

/* The profile, whole or not at all (outfile.h): an old file at -o stays
 * as it was when the write fails. */
static int write_profile(js_targets *ts, const js_record_opts *r, const js_profile *prof)
{
	js_err *err = &ts->first;
	char deflt[32];
	snprintf(deflt, sizeof deflt, "jitstack%s", r->format->ext);
	const char *out = r->out ? r->out : r->format->to_file ? deflt : "-";
	bool to_stdout = !strcmp(out, "-");
	const char *name = to_stdout ? "stdout" : out;
	js_outfile of = { .f = stdout };
	if (!to_stdout) {
		int rc = js_outfile_open(&of, out, err);
		if (rc)
			return rc;
	}
	js_write_opts o = { .addresses = r->addresses };
	int rc = r->format->write(prof, &o, of.f, name, err);
	if (to_stdout)
		return rc;
	if (rc) {
		js_outfile_abort(&of);
		return rc;
	}
	return js_outfile_commit(&of, err);
}

/* One process's round: its threads listed now and then, its JIT lists,
 * perf map and jitdump brought up to date, every thread sampled.  Ends its
 * part when it is gone. */
static void round_one(js_targets *ts, js_target *t, const js_record_opts *r, js_profile *prof, js_stack *st,
		      timings *tm, uint64_t start)
{
	js_session *s = &t->s;
	uint64_t now = now_ns();
	if (now - t->last_scan >= RESCAN_NS) {
		t->last_scan = now;
		t->rescans++;
		js_proc_rescan(&s->proc, NULL);
	}
	if (js_proc_gone(&s->proc)) {
		js_target_end(ts, t, true, now - start);
		return;
	}
	if (s->jit.n_desc && js_jit_seq_moved(&s->jit, s->mem)) {
		t->refreshes++;
		if (js_refresh_jit(s, READ_RUNNING)) {
			js_target_end(ts, t, true, now - start);
			return;
		}
	}
	if (js_jit_has_plain(&s->jit) && now - t->last_plain >= PLAIN_REREAD_NS) {
		/* no seq to watch: read the list again, stopped, now and then */
		t->last_plain = now;
		t->refreshes++;
		if (js_refresh_jit_stopped(s)) {
			js_target_end(ts, t, true, now - start);
			return;
		}
	}
	/* one stat() when nothing was appended */
	uint64_t pm0 = now_ns();
	js_refresh_sources(s);
	note_pm(tm, now_ns() - pm0);
	sample_all(t, r, prof, st, tm);
}

static void print_ptrace_stats(const js_targets *ts, const js_profile *prof, timings *tm)
{
	unsigned long idle = 0, failed = 0, refreshes = 0, copies = 0, reads = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const js_target *t = ts->t[i];
		idle += t->idle, failed += t->failed, refreshes += t->refreshes, copies += t->s.jit.copies;
		reads += js_mem_syscalls(t->s.mem);
	}
	fprintf(stderr,
		"jitstack: stats: %zu thread samples, %lu idle skipped, %lu failed, %lu JIT re-reads, "
		"%lu images copied, %lu locations, %lu memory reads\n",
		tm->n, idle, failed, refreshes, copies, (unsigned long)prof->n_loc, reads);
	print_dist("thread stopped (interrupt, copy registers and stack, resume)", tm->stopped, tm->n);
	print_dist("whole sample (stop, unwind, name)", tm->total, tm->n);
	for (size_t i = 0; i < ts->n; i++) {
		const js_target *t = ts->t[i];
		char how[256];
		snprintf(
			how, sizeof how,
			"%lu thread samples, %lu idle skipped, %lu failed, %lu JIT re-reads, %lu images copied",
			t->samples, t->idle, t->failed, t->refreshes, t->s.jit.copies);
		js_target_stats(ts, t, prof, how);
	}
	print_dist("perf map refresh between rounds", tm->pm, tm->n_pm);
	js_targets_stats(ts);
}

/* The ptrace sampling loop: every thread of every process stopped in
 * turn, HZ times a second, until the duration is over, every process
 * exited, or a signal. */
static int sample_ptrace(js_targets *ts, const js_record_opts *r, const sigset_t *set, js_profile *prof)
{
	js_proc **procs = malloc(ts->n * sizeof *procs);
	if (!procs)
		return js_fail(&ts->first, JS_EXIT_FAILURE, ENOMEM, "out of memory");
	timings tm = { 0 };
	if (ts->opt.stats) {
		tm.stopped = malloc(MAX_TIMINGS * sizeof *tm.stopped);
		tm.total = malloc(MAX_TIMINGS * sizeof *tm.total);
		tm.pm = malloc(MAX_TIMINGS * sizeof *tm.pm);
	}
	js_stack st = { 0 };
	uint64_t start = now_ns(), next = start;
	uint64_t end = r->secs ? start + (uint64_t)(r->secs * 1e9) : UINT64_MAX;
	for (size_t i = 0; i < ts->n; i++)
		ts->t[i]->last_scan = ts->t[i]->last_plain = start;
	js_ticker k;
	js_ticker_start(&k, r, ts, prof, start, end);
	while (!js_targets_done(ts)) {
		/* a round when one is due; a tick may come between two */
		uint64_t due = next < end ? next : end;
		if (wait_until(ts, procs, set, due < k.next ? due : k.next) || js_ticker_tick(&k, now_ns()))
			break;
		if (now_ns() < due)
			continue;
		if (now_ns() >= end)
			break;
		poll_all(ts, procs);
		js_follow_round(ts->multi ? JS_ROUND_READ_BUDGET_NS : 0);
		for (size_t i = 0; i < ts->n; i++)
			if (!ts->t[i]->done)
				round_one(ts, ts->t[i], r, prof, &st, &tm, start);
		js_follow_round(0);
		next += prof->period_ns;
		if (next <= now_ns()) /* fell behind: skip, never burst */
			next = now_ns() + prof->period_ns;
	}
	js_ticker_end(&k);
	prof->duration_ns = now_ns() - start;
	js_stack_free(&st);
	if (ts->opt.stats)
		print_ptrace_stats(ts, prof, &tm);
	free(tm.pm);
	free(tm.stopped);
	free(tm.total);
	free(procs);
	return 0;
}

/* What the closing line says of the processes that exited. */
static void exit_note(const js_targets *ts, char *buf, size_t len)
{
	size_t exited = 0;
	for (size_t i = 0; i < ts->n; i++)
		exited += ts->t[i]->done && ts->t[i]->exited;
	buf[0] = 0;
	if (!ts->multi && exited)
		snprintf(buf, len, " (the process exited)");
	else if (exited)
		snprintf(buf, len, " (%zu of %zu processes exited)", exited, ts->n);
}

/* What each process's session gathered (js_warn: a perf map or jitdump
 * that cannot be read, CFI that loops, a rejected image, ...), each
 * distinct warning once, after the sampling (warnings come up in every
 * round); with --stats, how many. */
static void print_warnings(js_targets *ts)
{
	size_t n = 0;
	for (size_t i = 0; i < ts->n; i++) {
		js_session *s = &ts->t[i]->s;
		char who[64] = "";
		if (ts->multi)
			snprintf(who, sizeof who, "process %d (%s): ", (int)s->pid, s->comm);
		js_warn_jit_data(s);
		js_print_warnings(s, who);
		n += s->n_warn;
	}
	if (ts->opt.stats)
		fprintf(stderr, "jitstack: stats: warnings: %zu\n", n);
}

static int record(js_targets *ts, const js_record_opts *r, const sigset_t *set, js_profile *prof)
{
	prof->period_ns = (uint64_t)(1e9 / (ts->perf ? ts->hz : r->hz));
	prof->start_ns = real_ns();
	prof->main_exe = ts->t[0]->s.exe_path;
	prof->by_process = ts->multi;
	int rc = ts->perf ? js_record_perf(ts, r, prof, set) : sample_ptrace(ts, r, set, prof);
	if (!rc && prof->oom)
		rc = js_fail(&ts->first, JS_EXIT_FAILURE, ENOMEM, "out of memory for the profile");
	else if (!rc)
		rc = r->view ? r->view->done(r->view->arg, ts, prof) : write_profile(ts, r, prof);
	print_warnings(ts);
	if (r->view)
		return rc;
	char gone[96];
	exit_note(ts, gone, sizeof gone);
	fprintf(stderr, "jitstack: %llu samples in %.2f s%s%s%s%s\n", (unsigned long long)prof->total,
		prof->duration_ns / 1e9, gone, !rc && r->format->to_file ? ", " : "",
		!rc && r->format->to_file ? r->format->name : "",
		!rc && r->format->to_file ? " written" : "");
	return rc;
}

/* SIGINT, SIGTERM or SIGHUP came while the targets were being opened
 * (their perf maps read): the run ends there, with no profile, and says so
 * by its exit status. */
static bool interrupted(void)
{
	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	struct timespec now = { 0, 0 };
	return sigtimedwait(&stop, NULL, &now) > 0; /* taken: the exit status says it */
}

int js_record(const js_record_opts *r)
{
	/* Signals are taken synchronously (sigtimedwait), so SIGCHLD from the
	 * threads' stops and ^C both wake the wait between samples. */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, &old);
	js_profile prof;
	js_profile_init(&prof);
	js_targets ts;
	int rc = js_targets_open(&ts, r, &prof);
	if (!rc && interrupted())
		rc = js_fail(&ts.first, JS_EXIT_FAILURE, EINTR, "interrupted before sampling began: %s%s",
			     r->out ? r->out : "no profile", r->out ? " not written" : "");
	if (!rc)
		rc = record(&ts, r, &set, &prof);
	if (rc)
		js_err_print(&ts.first);
	js_profile_free(&prof);
	js_targets_close(&ts);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
