/* record.c - `jitstack record`: sample a live process's stacks at a fixed
 * rate and write a profile (collapsed stacks or pprof).
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
#include "perfrecord.h"
#include "profile.h"
#include "record.h"
#include "svg.h"
#include "stack.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RESCAN_NS 100000000ull      /* look for new threads this often */
#define PLAIN_REREAD_NS 1000000000ull /* re-read a list without the seqlock this often */
#define RECORD_SNAPSHOT_BUDGET_NS 5000000ull /* a seqlock read between samples */
#define MAX_TIMINGS (1u << 20)      /* sample latencies kept for --stats */

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

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
	unsigned long idle, failed, refreshes, rescans;
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

/* Wait until `until`, passing on the signals the target's threads get;
 * returns true when we were asked to stop (SIGINT, SIGTERM, SIGHUP). */
static bool wait_until(js_session *s, const sigset_t *set, uint64_t until)
{
	for (;;) {
		uint64_t now = mono_ns();
		if (now >= until)
			return false;
		struct timespec ts = { (time_t)((until - now) / 1000000000u), (long)((until - now) % 1000000000u) };
		int sig = sigtimedwait(set, NULL, &ts);
		if (sig == SIGCHLD)
			js_proc_poll(&s->proc);
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
static void sample_all(js_session *s, const js_record_opts *r, js_profile *prof, js_stack *st, timings *tm)
{
	for (size_t i = 0; i < s->proc.n; i++) {
		js_thread *t = &s->proc.t[i];
		if (t->gone)
			continue;
		uint64_t t0 = mono_ns();
		if (js_proc_stop(&s->proc, t)) {
			tm->failed += !t->gone;
			continue;
		}
		if (t->idle && !r->idle) {
			js_proc_resume(&s->proc, t);
			tm->idle++;
			continue;
		}
		uint64_t sp = js_regs_sp(&t->regs);
		js_mem_snapshot(s->mem, sp, stack_to_copy(t));
		js_proc_resume(&s->proc, t);
		uint64_t t1 = mono_ns();
		js_unwind_live(s, t, st);
		js_mem_snapshot_clear(s->mem);
		if (st->max_sp > sp && st->max_sp - sp < STACK_MAX)
			t->stack_hint = (size_t)(st->max_sp - sp);
		js_profile_add(prof, s, st);
		note_time(tm, t1 - t0, mono_ns() - t0);
	}
}

static int write_profile(js_session *s, const js_record_opts *r, js_profile *prof)
{
	const char *out = r->out;
	if (r->format == FMT_PPROF) {
		if (!out)
			out = "jitstack.pb.gz";
		if (js_profile_write_pprof(prof, out))
			return js_fail(&s->err, JS_EXIT_FAILURE, errno, "cannot write %s: %s", out, strerror(errno));
		return 0;
	}
	FILE *f = out && strcmp(out, "-") ? fopen(out, "we") : stdout;
	if (!f)
		return js_fail(&s->err, JS_EXIT_FAILURE, errno, "cannot write %s: %s", out, strerror(errno));
	int bad;
	if (r->format == FMT_SVG) {
		const char *exe = prof->main_exe && *prof->main_exe ? prof->main_exe : "?";
		const char *base = strrchr(exe, '/');
		/* the rate sampled at: perf events may have lowered -F to the kernel's maximum */
		double hz = prof->period_ns ? 1e9 / (double)prof->period_ns : r->hz;
		char title[512];
		snprintf(title, sizeof title, "%.200s (PID %d): %" PRIu64 " samples in %.1f s at %g Hz",
			 base ? base + 1 : exe, (int)r->pid, prof->total, prof->duration_ns / 1e9, hz);
		bad = js_profile_write_svg(prof, f, title);
	} else {
		bad = js_profile_write_collapsed(prof, f, r->addresses);
	}
	if (f != stdout)
		bad |= fclose(f);
	if (bad)
		return js_fail(&s->err, JS_EXIT_FAILURE, errno, "cannot write %s: %s", out ? out : "stdout",
			       strerror(errno));
	return 0;
}

/* The ptrace sampling loop: every thread stopped in turn, HZ times a
 * second, until the duration is over, the process exited or a signal. */
static void sample_ptrace(js_session *s, const js_record_opts *r, const sigset_t *set, js_profile *prof,
			  uint64_t pm_first_ns)
{
	timings tm = { 0 };
	if (s->opt->stats) {
		tm.stopped = malloc(MAX_TIMINGS * sizeof *tm.stopped);
		tm.total = malloc(MAX_TIMINGS * sizeof *tm.total);
		tm.pm = s->pm_on ? malloc(MAX_TIMINGS * sizeof *tm.pm) : NULL;
	}
	js_stack st = { 0 };
	uint64_t start = mono_ns(), next = start, last_scan = start, last_plain = start;
	uint64_t end = r->secs ? start + (uint64_t)(r->secs * 1e9) : UINT64_MAX;
	for (;;) {
		if (wait_until(s, set, next < end ? next : end) || mono_ns() >= end)
			break;
		js_proc_poll(&s->proc);
		uint64_t now = mono_ns();
		if (now - last_scan >= RESCAN_NS) {
			last_scan = now;
			tm.rescans++;
			if (js_proc_rescan(&s->proc, NULL) && js_proc_gone(&s->proc))
				break;
		}
		if (js_proc_gone(&s->proc))
			break;
		if (s->jit.n_desc && js_jit_seq_moved(&s->jit, s->mem)) {
			tm.refreshes++;
			if (js_refresh_jit(s, READ_RUNNING))
				break;
		}
		if (js_jit_has_plain(&s->jit) && now - last_plain >= PLAIN_REREAD_NS) {
			/* no seq to watch: read the list again, stopped, now and then */
			last_plain = now;
			tm.refreshes++;
			if (js_refresh_jit_stopped(s))
				break;
		}
		/* one stat() when nothing was appended */
		uint64_t pm0 = mono_ns();
		js_refresh_perfmap(s);
		js_refresh_jitdump(s);
		note_pm(&tm, mono_ns() - pm0);
		sample_all(s, r, prof, &st, &tm);
		next += prof->period_ns;
		if (next <= mono_ns()) /* fell behind: skip, never burst */
			next = mono_ns() + prof->period_ns;
	}
	prof->duration_ns = mono_ns() - start;
	js_stack_free(&st);
	if (s->opt->stats) {
		fprintf(stderr,
			"jitstack: stats: %zu thread samples, %lu idle skipped, %lu failed, %lu JIT re-reads, "
			"%lu images copied, %lu locations, %lu memory reads\n",
			tm.n, tm.idle, tm.failed, tm.refreshes, s->jit.copies, (unsigned long)prof->n_loc,
			js_mem_syscalls(s->mem));
		print_dist("thread stopped (interrupt, copy registers and stack, resume)", tm.stopped, tm.n);
		print_dist("whole sample (stop, unwind, name)", tm.total, tm.n);
		if (s->pm_on)
			fprintf(stderr,
				"jitstack: stats: perf map: first read %.3f ms, %llu bytes, %lu lines, %lu "
				"re-reads from the start\n",
				pm_first_ns / 1e6, (unsigned long long)s->pm.bytes, s->pm.lines,
				s->pm.rereads);
		print_dist("perf map refresh between rounds", tm.pm, tm.n_pm);
		js_stats_jitdump(s);
	}
	free(tm.pm);
	free(tm.stopped);
	free(tm.total);
}

/* pe: sample with perf events (js_pe_probe succeeded), else with ptrace. */
static int record(js_session *s, const js_record_opts *r, const sigset_t *set, js_pe *pe)
{
	int rc = js_refresh_jit(s, READ_RUNNING);
	if (rc)
		return rc;
	if (js_jit_has_plain(&s->jit) && (rc = js_refresh_jit_stopped(s))) /* no seqlock: read it stopped */
		return rc;
	/* From now on a snapshot must not hold sampling up: a writer that
	 * keeps the list changing gets a best-effort read instead. */
	s->jit.snapshot_budget_ns = RECORD_SNAPSHOT_BUDGET_NS;
	js_refresh_perfmap(s);
	js_refresh_jitdump(s);
	uint64_t pm_first_ns = s->pm_ns;
	js_profile prof;
	js_profile_init(&prof);
	prof.period_ns = (uint64_t)(1e9 / (pe ? pe->hz : r->hz));
	prof.start_ns = real_ns();
	prof.main_exe = s->exe_path;
	if (pe)
		rc = js_record_perf(s, r, &prof, pe, set, pm_first_ns);
	else
		sample_ptrace(s, r, set, &prof, pm_first_ns);
	bool gone = js_proc_gone(&s->proc) || (pe && js_pe_all_gone(pe));
	if (!rc)
		rc = prof.oom ? js_fail(&s->err, JS_EXIT_FAILURE, ENOMEM, "out of memory for the profile")
			      : write_profile(s, r, &prof);
	fprintf(stderr, "jitstack: %llu samples in %.2f s%s%s\n", (unsigned long long)prof.total,
		prof.duration_ns / 1e9, gone ? " (the process exited)" : "",
		rc                       ? ""
		: r->format == FMT_PPROF ? ", pprof written"
					 : "");
	js_profile_free(&prof);
	return rc;
}

/* Can perf events sample r->pid?  When the kernel refuses, say so and
 * sample with ptrace (returns false); a process that is not there is
 * left to js_open_live to report. */
static bool use_perf(const js_record_opts *r, js_pe *pe)
{
	if (r->mode != MODE_PERF)
		return false;
	js_err why = { 0 };
	int rc = js_pe_probe(pe, r->pid, r->hz, &why);
	if (!rc)
		return true;
	js_pe_close(pe);
	if (rc != JS_EXIT_NO_PROCESS)
		fprintf(stderr, "jitstack: %s: sampling with ptrace instead (--mode ptrace)\n", why.msg);
	return false;
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
	js_pe pe;
	bool perf = use_perf(r, &pe);
	js_opts opt = r->opt;
	opt.no_ptrace = perf;
	js_session s;
	int rc = js_open_live(&s, r->pid, &opt);
	if (!rc)
		rc = record(&s, r, &set, perf ? &pe : NULL);
	if (rc)
		js_err_print(&s.err);
	js_close(&s);
	if (perf)
		js_pe_close(&pe);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return rc;
}
