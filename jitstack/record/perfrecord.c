/* SPDX-License-Identifier: MIT */
/* perfrecord.c - `jitstack record --mode perf` (perfrecord.h).
 *
 * The target is never stopped to be sampled: the kernel copies a sampled
 * thread's registers and the top of its stack into the thread's ring
 * (perfevent.h), and every DRAIN_MS (or sooner, when a ring is half
 * full) the rings are drained and each copy unwound here with the session's
 * libdwfl, modules, CFI and JIT images: the sample goes to js_unwind as a
 * value (stack.h, js_sample), its registers and memory from its stack
 * copy, and the target's memory only for reads outside the stack
 * (below the stack pointer, other mappings); a read on the stack past the
 * copy's end fails (the thread has run on: its live stack is not the
 * sampled one) and counts as a truncated copy.  Code and CFI come from
 * the module files and the cached JIT images, never from the target.
 *
 * Before each drain the JIT descriptor's seq is read: when it moved the
 * list is read again, so a sample of code published since the last read is
 * named.  A sample whose stack holds code that no module, image or perf
 * map line covers is kept (bounded) and unwound again once it is DEFER_NS
 * old: a JIT may run code before it registers it.  An image unregistered
 * between a sample and its drain is gone by then: such samples are named
 * after what replaced them, or kept and retried as above.  The perf map and
 * the jitdump are refreshed before each drain too.
 */
#include "base/follow.h"
#include "formats/clock.h"
#include "record/perfrecord.h"
#include "record/progress.h"
#include "unwind/stack.h"
#include "record/targets.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#define DRAIN_MS 10                   /* drain at least this often */
#define DEFER_MAX 1024                /* samples kept for a second unwind */
#define DEFER_BYTES (16u << 20)       /* ... and their stack copies */
#define DEFER_NS 20000000ull          /* ... until they are this old */
#define RESCAN_NS 100000000ull        /* list /proc/PID/task this often (clones are also reported) */
#define PLAIN_REREAD_NS 1000000000ull /* a list without the seqlock: read it stopped this often */
#define STACK_REACH (16u << 20)       /* above a full copy, this much counts as stack */
#define MAX_TIMINGS (1u << 20)

typedef struct ctx {
	js_targets *ts;
	js_target *t;  /* the process whose samples are unwound (use_target) ... */
	js_session *s; /* ... its session */
	js_pe *pe;     /* ... and its events */
	js_profile *prof;
	js_stack st;
	uint32_t *ns; /* unwind + name time per sample, for --stats */
	size_t n_ns;
	struct deferred *dq; /* samples in unknown code, unwound again next round */
	size_t n_dq, dq_bytes;
	bool final; /* the last drain: nothing is deferred */
} ctx;

typedef struct deferred {
	js_target *t;
	uint64_t time_ns;
	pid_t tid;
	char comm[32];
	struct user_regs_struct regs;
	uint8_t *stack;
	size_t len;
	bool full;
} deferred;

static void use_target(ctx *c, js_target *t)
{
	c->t = t;
	c->s = &t->s;
	c->pe = &t->pe;
}

/* Is the leaf of st in JIT code, and named?  (--stats) */
static void count_jit_leaf(ctx *c)
{
	if (!c->st.n)
		return;
	const js_sym y = c->st.sym[0];
	uint64_t pc = js_lookup_pc(&c->st.f[0]);
	bool in_jit = y.jit || y.source == JS_SRC_PERFMAP || js_jit_image_at(&c->s->jit, pc) ||
		      (!js_module_at(c->s, pc) && y.source != JS_SRC_ELF);
	if (!in_jit)
		return;
	c->t->jit_samples++;
	c->t->jit_named += y.func != NULL;
}

/* Unwind a stack copy into c->st; *used and *ran_off as js_copy_use
 * says. */
static void unwind_copy(ctx *c, pid_t tid, const char *comm, const struct user_regs_struct *regs,
			const uint8_t *stack, size_t len, bool full, size_t *used, bool *ran_off)
{
	js_sample x = {
		.tid = tid, .regs = regs, .stack = stack, .len = len, .reach = full ? STACK_REACH : len
	};
	memcpy(x.comm, comm, sizeof x.comm);
	js_copy_use use;
	js_unwind(c->s, &x, &c->st, &use);
	*used = use.used;
	*ran_off = use.ran_off;
	js_name_stack(c->s, &c->st);
}

/* Has c->st a frame in code no module, image or perf map line covers:
 * perhaps JIT code whose registration is not on the list yet? */
static bool in_unknown_code(ctx *c)
{
	for (size_t i = 0; i < c->st.n; i++)
		if (!c->st.sym[i].func && !c->st.sym[i].module)
			return true;
	return false;
}

static void add_sample(ctx *c)
{
	js_profile_add(c->prof, c->t->proc, js_names_epoch(c->s), &c->st);
	if (c->ts->opt.stats)
		count_jit_leaf(c);
}

/* Keep the sample just unwound for one more unwind once it is DEFER_NS
 * old, after the JIT list was read again: a JIT may run code before it
 * registers it (or a read may have come just before the registration),
 * and a sample of that code is named once its image is on the list.
 * Bounded; false when full. */
static bool defer(ctx *c, const js_pe_sample *x)
{
	if (c->final || c->n_dq >= DEFER_MAX || c->dq_bytes + x->stack_len > DEFER_BYTES)
		return false;
	if (!c->dq && !(c->dq = calloc(DEFER_MAX, sizeof *c->dq)))
		return false;
	uint8_t *copy = malloc(x->stack_len ? (size_t)x->stack_len : 1);
	if (!copy)
		return false;
	memcpy(copy, x->stack, (size_t)x->stack_len);
	deferred *d = &c->dq[c->n_dq++];
	d->t = c->t;
	d->time_ns = x->time_ns;
	d->tid = x->tid;
	memcpy(d->comm, x->t->comm, sizeof d->comm);
	d->regs = x->regs;
	d->stack = copy;
	d->len = (size_t)x->stack_len;
	d->full = x->stack_len == x->stack_size;
	c->dq_bytes += d->len;
	c->t->deferred++;
	c->t->n_deferred++;
	return true;
}

/* The deferred samples DEFER_NS old (all of them on the last drain),
 * unwound again with the images as they are now. */
static void flush_deferred(ctx *c)
{
	uint64_t now = now_ns();
	size_t w = 0;
	for (size_t i = 0; i < c->n_dq; i++) {
		deferred *d = &c->dq[i];
		if (!c->final && d->time_ns + DEFER_NS > now) {
			c->dq[w++] = *d;
			continue;
		}
		size_t used;
		bool ran_off;
		use_target(c, d->t);
		unwind_copy(c, d->tid, d->comm, &d->regs, d->stack, d->len, d->full, &used, &ran_off);
		c->t->deferred_named += !in_unknown_code(c);
		c->t->n_deferred--;
		add_sample(c);
		c->dq_bytes -= d->len;
		free(d->stack);
	}
	c->n_dq = w;
}

static void on_sample(const js_pe_sample *x, void *arg)
{
	ctx *c = arg;
	uint64_t t0 = now_ns();
	size_t used;
	bool ran_off;
	unwind_copy(c, x->tid, x->t->comm, &x->regs, x->stack, (size_t)x->stack_len,
		    x->stack_len == x->stack_size, &used, &ran_off);
	js_pe_used(c->pe, x, used, ran_off);
	bool jit_source = c->s->jit.n_desc || c->s->pm.bytes || c->s->jd_on; /* something may name it later */
	if (!(jit_source && in_unknown_code(c) && defer(c, x)))
		add_sample(c);
	uint64_t dt = now_ns() - t0;
	if (c->ns && c->n_ns < MAX_TIMINGS)
		c->ns[c->n_ns++] = dt > UINT32_MAX ? UINT32_MAX : (uint32_t)dt;
}

/* Give the threads a listing found an event. */
static void add_threads(js_target *t)
{
	for (size_t i = 0; i < t->s.proc.n; i++) {
		js_thread *th = &t->s.proc.t[i];
		if (!th->gone)
			js_pe_add(&t->pe, th->tid, th->comm, NULL);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* The perf event counters of every process, summed. */
static void sum_stats(const js_targets *ts, js_pe_stats *p)
{
	memset(p, 0, sizeof *p);
	for (size_t i = 0; i < ts->n; i++) {
		const js_pe_stats *x = &ts->t[i]->pe.st;
		p->samples += x->samples, p->lost += x->lost, p->lost_records += x->lost_records;
		p->truncated += x->truncated, p->throttled += x->throttled, p->forks += x->forks;
		p->exits += x->exits, p->grown += x->grown, p->shrunk += x->shrunk, p->no_regs += x->no_regs;
		p->open_failed += x->open_failed, p->stack_bytes += x->stack_bytes;
	}
}

/* --stats of one process: its perf events' counts. */
static void print_process(const ctx *c, const js_target *t)
{
	const js_pe_stats *p = &t->pe.st;
	char how[512];
	snprintf(
		how, sizeof how,
		"perf events: %llu samples, %llu lost, %llu truncated stack copies, %llu threads followed from "
		"their clone; %lu JIT re-reads, %lu images copied; samples whose leaf is JIT code: %llu, named: "
		"%llu",
		(unsigned long long)p->samples, (unsigned long long)p->lost, (unsigned long long)p->truncated,
		(unsigned long long)p->forks, t->refreshes, t->s.jit.copies,
		(unsigned long long)t->jit_samples, (unsigned long long)t->jit_named);
	js_target_stats(c->ts, t, c->prof, how);
}

static void print_stats(ctx *c, double cpu, double secs)
{
	const js_targets *ts = c->ts;
	js_pe_stats p;
	sum_stats(ts, &p);
	unsigned long refreshes = 0, copies = 0, reads = 0, rescans = 0;
	uint64_t jit_samples = 0, jit_named = 0, deferred = 0, deferred_named = 0;
	for (size_t i = 0; i < ts->n; i++) {
		const js_target *t = ts->t[i];
		refreshes += t->refreshes, copies += t->s.jit.copies, rescans += t->rescans;
		reads += js_mem_syscalls(t->s.mem);
		jit_samples += t->jit_samples, jit_named += t->jit_named;
		deferred += t->deferred, deferred_named += t->deferred_named;
	}
	fprintf(stderr,
		"jitstack: stats: perf events (%s, %.0f Hz per thread): %llu samples, %llu lost (%llu lost "
		"records), %llu truncated stack copies, %llu throttled, %llu threads followed from their clone, "
		"%llu exits\n",
		ts->event, ts->hz, (unsigned long long)p.samples, (unsigned long long)p.lost,
		(unsigned long long)p.lost_records, (unsigned long long)p.truncated,
		(unsigned long long)p.throttled, (unsigned long long)p.forks, (unsigned long long)p.exits);
	fprintf(stderr,
		"jitstack: stats: stack copies: %.1f KiB asked per sample on average, %llu grown, %llu shrunk; "
		"%lu JIT re-reads, %lu images copied, %lu locations, %lu memory reads, %lu thread rescans\n",
		p.samples ? p.stack_bytes / 1024.0 / (double)p.samples : 0.0, (unsigned long long)p.grown,
		(unsigned long long)p.shrunk, refreshes, copies, (unsigned long)c->prof->n_loc, reads,
		rescans);
	fprintf(stderr,
		"jitstack: stats: samples whose leaf is JIT code: %llu, named: %llu (%.2f%%); %llu samples in "
		"unknown code unwound again after the next JIT list refresh, %llu named then\n",
		(unsigned long long)jit_samples, (unsigned long long)jit_named,
		jit_samples ? 100.0 * (double)jit_named / (double)jit_samples : 100.0,
		(unsigned long long)deferred, (unsigned long long)deferred_named);
	fprintf(stderr, "jitstack: stats: own CPU time %.3f s over %.2f s, %.1f us per sample\n", cpu, secs,
		p.samples ? cpu * 1e6 / (double)p.samples : 0.0);
	if (c->n_ns) {
		uint32_t *v = c->ns;
		size_t n = c->n_ns;
		qsort(v, n, sizeof *v, cmp_u32);
		fprintf(stderr,
			"jitstack: stats: unwind and name one sample: median %.1f us, p90 %.1f us, p99 %.1f us, max "
			"%.1f us\n",
			v[n / 2] / 1e3, v[n * 9 / 10] / 1e3, v[n * 99 / 100] / 1e3, v[n - 1] / 1e3);
	}
	for (size_t i = 0; i < ts->n; i++)
		print_process(c, ts->t[i]);
	js_targets_stats(ts);
}

/* The profile says what it misses: pprof comments (and stderr). */
static void add_comments(ctx *c)
{
	js_pe_stats p;
	sum_stats(c->ts, &p);
	char buf[200];
	if (p.lost) {
		snprintf(buf, sizeof buf, "jitstack: %llu samples lost (the kernel's ring buffer was full)",
			 (unsigned long long)p.lost);
		js_profile_comment(c->prof, buf);
		fprintf(stderr, "%s\n", buf);
	}
	if (p.truncated) {
		snprintf(
			buf, sizeof buf,
			"jitstack: %llu samples unwound only partly: the stack ran past its copy (%llu copies grown)",
			(unsigned long long)p.truncated, (unsigned long long)p.grown);
		js_profile_comment(c->prof, buf);
		fprintf(stderr, "%s\n", buf);
	}
	if (p.open_failed) {
		snprintf(
			buf, sizeof buf,
			"jitstack: %llu times a thread's perf event could not be opened (open files: ulimit -n; "
			"memory); those threads were not sampled meanwhile",
			(unsigned long long)p.open_failed);
		js_profile_comment(c->prof, buf);
		fprintf(stderr, "%s\n", buf);
	}
	snprintf(buf, sizeof buf, "jitstack: sampled with perf events (%s), %llu samples", c->ts->event,
		 (unsigned long long)p.samples);
	js_profile_comment(c->prof, buf);
}

/* t's JIT lists, perf map and jitdump brought up to date.  Returns true
 * when t is gone (it exited while its list was read). */
static bool refresh(js_target *t, uint64_t now)
{
	js_session *s = &t->s;
	if (s->jit.n_desc && js_jit_seq_moved(&s->jit, s->mem)) {
		t->refreshes++;
		if (js_refresh_jit(s, READ_RUNNING))
			return true;
	}
	if (js_jit_has_plain(&s->jit) && now - t->last_plain >= PLAIN_REREAD_NS) {
		t->last_plain = now;
		t->refreshes++;
		if (js_refresh_jit_stopped(s))
			return true;
	}
	js_refresh_sources(s);
	return false;
}

/* t's rings drained, and now and then its threads listed (after the
 * drain, so that a clone's PERF_RECORD_FORK opens the new thread's event
 * first; the listing catches what that missed).  Returns true when the
 * process is gone (its last samples drained). */
static bool drain(ctx *c, js_target *t, uint64_t now)
{
	use_target(c, t);
	js_pe_drain(&t->pe, on_sample, c);
	if (now - t->last_scan >= RESCAN_NS) {
		t->last_scan = now;
		t->rescans++;
		js_pe_take_forks(&t->pe);
		/* (another failure, such as no descriptor left, is not the end) */
		if (js_proc_rescan(&t->s.proc, NULL) == JS_EXIT_NO_PROCESS || js_proc_gone(&t->s.proc))
			return true;
		add_threads(t);
	}
	return js_pe_all_gone(&t->pe);
}

/* One round between two waits: the lists of every process with samples
 * to unwind brought up to date, the deferred samples unwound again, every
 * process's rings drained.  (A process without samples is left alone, so
 * that --all's idle processes cost little.)  A process found gone ends
 * its part. */
static void round_once(ctx *c, uint64_t start)
{
	js_targets *ts = c->ts;
	uint64_t now = now_ns();
	js_follow_round(ts->multi ? JS_ROUND_READ_BUDGET_NS : 0);
	for (size_t i = 0; i < ts->n; i++) {
		js_target *t = ts->t[i];
		if (t->done || !(t->n_deferred || js_pe_pending(&t->pe)) || !refresh(t, now))
			continue;
		use_target(c, t);
		js_pe_drain(&t->pe, on_sample, c);
		js_target_end(ts, t, true, now - start);
	}
	js_follow_round(0);
	flush_deferred(c);
	for (size_t i = 0; i < ts->n; i++) {
		js_target *t = ts->t[i];
		if (!t->done && drain(c, t, now))
			js_target_end(ts, t, true, now - start);
	}
}

/* The last drain: lists read once more, then every sample unwound. */
static void last_drain(ctx *c)
{
	js_targets *ts = c->ts;
	for (size_t i = 0; i < ts->n; i++) {
		js_session *s = &ts->t[i]->s;
		if (!ts->t[i]->done && s->jit.n_desc && js_jit_seq_moved(&s->jit, s->mem))
			js_refresh_jit(s, READ_RUNNING);
	}
	c->final = true;
	flush_deferred(c);
	for (size_t i = 0; i < ts->n; i++) {
		use_target(c, ts->t[i]);
		if (!c->t->done)
			js_pe_drain(c->pe, on_sample, c);
	}
}

int js_record_perf(js_targets *ts, const js_record_opts *r, js_profile *prof, const sigset_t *set)
{
	ctx c = { .ts = ts, .prof = prof };
	if (ts->asked_hz)
		fprintf(stderr,
			"jitstack: -F %g is above kernel.perf_event_max_sample_rate: sampling at %g Hz\n",
			ts->asked_hz, ts->hz);
	js_pe **pes = malloc(ts->n * sizeof *pes);
	if (!pes)
		return js_fail(&ts->first, JS_EXIT_FAILURE, ENOMEM, "out of memory");
	int sfd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		free(pes);
		return js_fail(&ts->first, JS_EXIT_FAILURE, errno, "signalfd: %s", strerror(errno));
	}
	if (ts->opt.stats)
		c.ns = malloc(MAX_TIMINGS * sizeof *c.ns);
	double cpu0 = cpu_s();
	uint64_t start = now_ns();
	uint64_t end = r->secs ? start + (uint64_t)(r->secs * 1e9) : UINT64_MAX;
	for (size_t i = 0; i < ts->n; i++)
		ts->t[i]->last_scan = ts->t[i]->last_plain = start;
	js_ticker k;
	js_ticker_start(&k, r, ts, prof, start, end);
	while (!js_targets_done(ts)) {
		uint64_t now = now_ns();
		if (now >= end)
			break;
		uint64_t left_ms = (end - now) / 1000000u;
		int timeout = left_ms < DRAIN_MS ? (int)left_ms + 1 : DRAIN_MS;
		size_t n = 0;
		for (size_t i = 0; i < ts->n; i++)
			if (!ts->t[i]->done)
				pes[n++] = &ts->t[i]->pe;
		bool signalled = false;
		if (js_pe_wait_all(pes, n, sfd, timeout)) {
			struct signalfd_siginfo si;
			while (read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
				signalled |= si.ssi_signo != SIGCHLD;
		}
		js_proc_suspend_point(); /* ^Z: stopped and continued here */
		round_once(&c, start);
		if (signalled || js_ticker_tick(&k, now_ns()))
			break;
	}
	js_ticker_end(&k);
	last_drain(&c);
	close(sfd);
	prof->duration_ns = now_ns() - start;
	add_comments(&c);
	if (ts->opt.stats)
		print_stats(&c, cpu_s() - cpu0, prof->duration_ns / 1e9);
	js_stack_free(&c.st);
	free(c.ns);
	free(c.dq);
	free(pes);
	return 0;
}
