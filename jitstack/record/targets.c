/* SPDX-License-Identifier: MIT */
/* targets.c - the processes of one record run (targets.h).
 *
 * --all lists /proc once: every process but jitstack itself, kernel
 * threads (PF_KTHREAD: no user stack to sample) and zombies, and for a
 * user other than root only the user's own processes (ptrace and perf
 * events allow no more; those that still refuse, such as processes made
 * undumpable, are counted as not allowed).
 *
 * With perf events the mode is decided by the first process probed: when
 * the kernel refuses it, the run falls back to ptrace for all, unless
 * jitstack may sample itself, in which case only that process refuses
 * (not dumpable, another user's) and it alone is left out, as is any
 * later process the kernel refuses once perf events were chosen.
 */
#include "record/targets.h"
#include "base/bounds.h"
#include "base/follow.h"
#include "base/grow.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define RECORD_SNAPSHOT_BUDGET_NS 5000000ull /* a seqlock read between samples */
#define PF_KTHREAD 0x00200000u               /* linux/sched.h: a kernel thread */
#define PAGE 4096u

typedef struct cand {
	pid_t pid;
	unsigned threads;
} cand;

/* From /proc/PID/stat: a kernel thread or a zombie (not to be sampled), and
 * how many threads it has.  False when it cannot be read (gone). */
static bool read_stat(pid_t pid, bool *skip, unsigned *threads)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (js_read_small(path, buf, sizeof buf) <= 0)
		return false;
	const char *p = strrchr(buf, ')'); /* comm may hold anything */
	if (!p || p[1] != ' ')
		return false;
	char state = p[2];
	/* fields after comm: 3 state ... 9 flags ... 20 num_threads */
	unsigned long v[18] = { 0 };
	p += 3;
	for (int i = 1; i < 18 && *p; i++) {
		while (*p == ' ')
			p++;
		v[i] = strtoul(p, (char **)&p, 10);
	}
	*skip = state == 'Z' || state == 'X' || (v[6] & PF_KTHREAD);
	*threads = v[17] ? (unsigned)v[17] : 1;
	return true;
}

/* Every process --all takes, in pid order. */
static int list_all(cand **out, size_t *n)
{
	DIR *d = opendir("/proc");
	if (!d)
		return -1;
	size_t cap = 0;
	uid_t me = geteuid();
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t pid = (pid_t)atoi(de->d_name);
		char path[64];
		struct stat st;
		bool skip;
		unsigned threads;
		snprintf(path, sizeof path, "/proc/%d", (int)pid);
		if (pid == getpid() || stat(path, &st) || (me != 0 && st.st_uid != me) ||
		    !read_stat(pid, &skip, &threads) || skip)
			continue;
		if (!js_grow(out, &cap, *n, sizeof **out))
			break;
		(*out)[(*n)++] = (cand){ pid, threads };
	}
	closedir(d);
	return 0;
}

/* Soft limit of open files up to the hard one: perf events take one
 * descriptor per thread, and each process's modules some more. */
static void raise_nofile(void)
{
	struct rlimit nofile;
	if (!getrlimit(RLIMIT_NOFILE, &nofile) && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
}

/* Enough descriptors left for another process?  Descriptors are given
 * lowest first, so the next free one tells about how many are open. */
static bool fds_left(void)
{
	struct rlimit nofile;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	close(fd);
	return getrlimit(RLIMIT_NOFILE, &nofile) || nofile.rlim_cur == RLIM_INFINITY ||
	       (rlim_t)fd + JS_TARGET_FD_RESERVE < nofile.rlim_cur;
}

/* A process not recorded: counted, kept for --stats, and named on stderr
 * when it was in a list. */
static void skip(js_targets *ts, pid_t pid, const js_err *e, bool limits)
{
	int en = e->errnum;
	if (limits || en == EMFILE || en == ENFILE || en == ENOMEM)
		ts->n_limits++;
	else if (e->code == JS_EXIT_NO_PROCESS)
		ts->n_gone++;
	else if (e->code == JS_EXIT_PERMISSION)
		ts->n_denied++;
	else
		ts->n_other++;
	if (!ts->first.code)
		ts->first = *e;
	if (ts->n_skipped < JS_MAX_SKIPPED_KEPT &&
	    js_grow(&ts->skipped, &ts->cap_skipped, ts->n_skipped, sizeof *ts->skipped)) {
		js_skipped *k = &ts->skipped[ts->n_skipped++];
		k->pid = pid;
		k->code = e->code;
		snprintf(k->why, sizeof k->why, "%s", e->msg);
	}
	if (ts->multi && !ts->all)
		fprintf(stderr, "jitstack: not recording process %d: %s\n", (int)pid, e->msg);
}

/* May jitstack sample itself with perf events?  Then a refusal is the
 * process's own (not dumpable, another user's), not the system's. */
static bool perf_allowed_here(double hz)
{
	js_pe pe;
	js_err e = { 0 };
	int rc = js_pe_probe(&pe, getpid(), hz, &e);
	js_pe_close(&pe);
	return rc == 0;
}

/* Perf events for t, probed on pid; the first probe decides the mode
 * (ts->perf).  0, or a js_exit code with *e: t is left out. */
static int probe(js_targets *ts, const js_record_opts *r, js_target *t, pid_t pid, bool *decided, js_err *e)
{
	if (*decided && !ts->perf)
		return 0;
	int rc = js_pe_probe(&t->pe, pid, r->hz, e);
	if (!rc) {
		if (!*decided) {
			*decided = ts->perf = true;
			ts->hz = t->pe.hz;
			ts->asked_hz = t->pe.asked_hz;
			ts->event = t->pe.event;
		}
		return 0;
	}
	js_pe_close(&t->pe);
	if (rc == JS_EXIT_NO_PROCESS)
		return rc;
	/* perf events work on another process, or on jitstack: this one refuses */
	if (ts->multi && rc == JS_EXIT_PERMISSION && (*decided || perf_allowed_here(r->hz)))
		return js_fail(
			e, rc, e->errnum,
			"perf_event_open on process %d refused (%s), though allowed on others: another "
			"user's process, or one made undumpable",
			(int)pid, strerror(e->errnum));
	if (*decided)
		return rc;
	fprintf(stderr, "jitstack: %s: sampling with ptrace instead (--mode ptrace)\n", e->msg);
	memset(e, 0, sizeof *e);
	*decided = true;
	ts->perf = false;
	return 0;
}

/* The first reads of a new session, before sampling: its JIT lists, its
 * perf map and jitdump.  0, or a js_exit code with s->err. */
static int prepare(const js_targets *ts, js_target *t)
{
	js_session *s = &t->s;
	int rc = js_refresh_jit(s, READ_RUNNING);
	if (!rc && js_jit_has_plain(&s->jit)) /* no seqlock: read it stopped */
		rc = js_refresh_jit_stopped(s);
	if (rc)
		return rc;
	/* From now on a snapshot must not hold sampling up: a writer that
	 * keeps the list changing gets a best-effort read instead. */
	s->jit.snapshot_budget_ns = RECORD_SNAPSHOT_BUDGET_NS;
	js_follow_round(ts->multi ? JS_ROUND_READ_BUDGET_NS : 0); /* the rest in the rounds */
	js_refresh_sources(s);
	js_follow_round(0);
	js_sources_first_round(s->src, s->n_src);
	return 0;
}

/* Give every listed thread of t an event.  0, or a js_exit code with
 * *e: none could be opened, or the kernel refused. */
static int add_events(js_target *t, size_t ring_pages, js_err *e)
{
	js_session *s = &t->s;
	t->pe.pid = s->pid; /* -p may have named a thread */
	t->pe.max_pages = ring_pages;
	size_t opened = 0;
	for (size_t i = 0; i < s->proc.n; i++) {
		js_thread *th = &s->proc.t[i];
		if (th->gone)
			continue;
		int rc = js_pe_add(&t->pe, th->tid, th->comm, e);
		if (rc > 0)
			return rc;
		opened += rc == 0;
	}
	if (!opened && t->pe.st.open_failed)
		return js_fail(
			e, JS_EXIT_FAILURE, EMFILE,
			"no perf event could be opened for process %d (open files: ulimit -n; locked memory)",
			(int)s->pid);
	return 0;
}

static void free_target(js_target *t)
{
	js_close(&t->s);
	js_pe_close(&t->pe);
	free(t);
}

/* Open pid as a target (or leave it out, saying why). */
static void open_one(js_targets *ts, const js_record_opts *r, js_profile *prof, pid_t pid, size_t ring_pages,
		     bool *decided)
{
	js_err e = { 0 };
	pid_t tgid;
	if (js_proc_tgid(pid, &tgid, &e)) {
		skip(ts, pid, &e, false);
		return;
	}
	for (size_t i = 0; i < ts->n; i++)
		if (ts->t[i]->s.pid == tgid)
			return; /* named twice (or a thread of one named) */
	if (ts->n >= JS_MAX_TARGETS) {
		js_fail(&e, JS_EXIT_FAILURE, 0, "more processes than %u: process %d is left out",
			JS_MAX_TARGETS, (int)tgid);
		skip(ts, tgid, &e, true);
		return;
	}
	if (ts->n && !fds_left()) { /* (the first is always tried) */
		js_fail(&e, JS_EXIT_FAILURE, EMFILE,
			"too few file descriptors left for process %d (ulimit -n)", (int)tgid);
		skip(ts, tgid, &e, true);
		return;
	}
	js_target *t = calloc(1, sizeof *t);
	if (!t) {
		js_fail(&e, JS_EXIT_FAILURE, ENOMEM, "out of memory for process %d", (int)tgid);
		skip(ts, tgid, &e, true);
		return;
	}
	t->s.exe_fd = t->s.core_fd = -1; /* (js_close on a session never opened) */
	int rc = r->mode == MODE_PERF ? probe(ts, r, t, pid, decided, &e) : 0;
	if (rc) {
		skip(ts, tgid, &e, false);
		free_target(t);
		return;
	}
	ts->opt.no_ptrace = ts->perf;
	rc = js_open_live(&t->s, tgid, &ts->opt);
	if (!rc)
		rc = prepare(ts, t);
	if (rc) {
		skip(ts, tgid, &t->s.err, false);
		free_target(t);
		return;
	}
	if (ts->perf && (rc = add_events(t, ring_pages, &e))) {
		skip(ts, tgid, &e, false);
		free_target(t);
		return;
	}
	const js_source *py = js_source_of(&t->s, &js_source_python);
	if (ts->perf && py && js_source_on(py))
		/* a perf sample is read after the thread ran on: its Python frames are gone */
		js_warn(&t->s, "a CPython: its Python frames are shown with --mode ptrace only");
	if (!js_grow(&ts->t, &ts->cap, ts->n, sizeof *ts->t)) {
		js_fail(&e, JS_EXIT_FAILURE, ENOMEM, "out of memory for process %d", (int)tgid);
		skip(ts, tgid, &e, true);
		free_target(t);
		return;
	}
	t->proc = js_profile_process(prof, t->s.pid, t->s.comm);
	ts->t[ts->n++] = t;
}

/* Ring pages per thread: the budget shared by every thread there is. */
static size_t ring_pages_for(const cand *c, size_t n)
{
	size_t threads = 0;
	for (size_t i = 0; i < n; i++)
		threads += c[i].threads;
	size_t per = JS_RING_BUDGET / PAGE / (threads ? threads : 1), pages = 1;
	while (pages * 2 <= per)
		pages *= 2;
	return pages;
}

int js_targets_open(js_targets *ts, const js_record_opts *r, js_profile *prof)
{
	memset(ts, 0, sizeof *ts);
	ts->opt = r->opt;
	ts->all = r->all;
	ts->multi = r->all || r->n_pids > 1;
	raise_nofile();
	cand *c = NULL;
	size_t n = 0, cap = 0;
	if (r->all) {
		if (list_all(&c, &n))
			return js_fail(&ts->first, JS_EXIT_FAILURE, errno, "cannot list /proc: %s",
				       strerror(errno));
	} else {
		for (size_t i = 0; i < r->n_pids; i++) {
			bool skip_it;
			unsigned threads = 1;
			read_stat(r->pids[i], &skip_it, &threads);
			if (!js_grow(&c, &cap, n, sizeof *c))
				return js_fail(&ts->first, JS_EXIT_FAILURE, ENOMEM, "out of memory");
			c[n++] = (cand){ r->pids[i], threads };
		}
	}
	size_t ring_pages = ring_pages_for(c, n);
	bool decided = r->mode != MODE_PERF;
	for (size_t i = 0; i < n; i++)
		open_one(ts, r, prof, c[i].pid, ring_pages, &decided);
	free(c);
	unsigned long left_out = ts->n_gone + ts->n_denied + ts->n_limits + ts->n_other;
	if (r->all)
		fprintf(stderr, "jitstack: --all: recording %zu process%s%s", ts->n, ts->n == 1 ? "" : "es",
			left_out ? "" : "\n");
	if (r->all && left_out)
		fprintf(stderr,
			" (%lu left out: %lu gone, %lu not allowed, %lu over the open-file or memory limits, %lu "
			"other; --stats names them)\n",
			left_out, ts->n_gone, ts->n_denied, ts->n_limits, ts->n_other);
	else if (ts->n_limits && ts->multi)
		fprintf(stderr, "jitstack: %lu process%s left out: over the open-file or memory limits\n",
			ts->n_limits, ts->n_limits == 1 ? "" : "es");
	if (ts->n)
		return 0;
	if (!ts->first.code)
		return js_fail(&ts->first, JS_EXIT_NO_PROCESS, 0, "--all: no process to record");
	if (ts->multi) {
		js_err e = ts->first;
		js_fail(&ts->first, e.code, e.errnum, "no process could be recorded (the first: %s)", e.msg);
	}
	return ts->first.code;
}

void js_target_end(js_targets *ts, js_target *t, bool exited, uint64_t now)
{
	if (t->done)
		return;
	t->done = true;
	t->exited = exited;
	t->done_ns = now;
	if (ts->perf) {
		js_pe_stats st = t->pe.st;
		js_pe_close(&t->pe);
		t->pe.st = st;
	} else {
		js_proc_detach(&t->s.proc);
	}
	if (!ts->multi || js_targets_done(ts))
		return;
	if (exited)
		fprintf(stderr, "jitstack: process %d (%s) exited after %.2f s; recording the others\n",
			(int)t->s.pid, t->s.comm, now / 1e9);
	else
		fprintf(stderr,
			"jitstack: process %d (%s) could not be read any more after %.2f s%s%s; recording the others\n",
			(int)t->s.pid, t->s.comm, now / 1e9, t->s.err.code ? ": " : "", t->s.err.msg);
}

bool js_targets_done(const js_targets *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		if (!ts->t[i]->done)
			return false;
	return true;
}

void js_targets_stats(const js_targets *ts)
{
	if (!ts->multi)
		return;
	unsigned long left_out = ts->n_gone + ts->n_denied + ts->n_limits + ts->n_other;
	fprintf(stderr,
		"jitstack: stats: processes: %zu recorded, %lu left out (%lu gone, %lu not allowed, %lu over the "
		"open-file or memory limits, %lu other)\n",
		ts->n, left_out, ts->n_gone, ts->n_denied, ts->n_limits, ts->n_other);
	for (size_t i = 0; i < ts->n_skipped; i++)
		fprintf(stderr, "jitstack: stats: left out: process %d: %s\n", (int)ts->skipped[i].pid,
			ts->skipped[i].why);
	if (left_out > ts->n_skipped)
		fprintf(stderr, "jitstack: stats: left out: %lu more not named\n", left_out - ts->n_skipped);
}

void js_target_stats(const js_targets *ts, const js_target *t, const js_profile *prof, const char *how)
{
	const js_session *s = &t->s;
	if (ts->multi) {
		char end[64] = "";
		if (t->done)
			snprintf(end, sizeof end, "; %s after %.2f s", t->exited ? "exited" : "ended",
				 t->done_ns / 1e9);
		fprintf(stderr, "jitstack: stats: process %d (%s): %llu samples in the profile; %s%s\n",
			(int)s->pid, s->comm, (unsigned long long)prof->proc[t->proc].total, how, end);
	}
	js_sources_stats(s->src, s->n_src, stderr);
}

void js_targets_close(js_targets *ts)
{
	for (size_t i = 0; i < ts->n; i++)
		free_target(ts->t[i]);
	free(ts->t);
	free(ts->skipped);
	memset(ts, 0, sizeof *ts);
}
