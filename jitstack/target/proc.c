/* SPDX-License-Identifier: MIT */
/* proc.c - ptrace control of a live process's threads (see proc.h).
 * Semantics from ptrace(2): "Attaching and detaching", "Group-stop",
 * "PTRACE_EVENT_STOP", "Signal-delivery-stop".
 */
#include "target/proc.h"
#include "target/hold.h"
#include "base/follow.h"
#include "formats/clock.h"
#include "base/grow.h"
#include "base/bounds.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#if defined(__aarch64__)
#include <elf.h> /* NT_PRSTATUS, NT_ARM_SYSTEM_CALL */
#endif
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_STOP_TIMEOUT_NS 2000000000ull /* a thread that cannot stop in 2 s: D state */
#define POLL_NS 50000ull                      /* poll for a stop this long before sleeping */

/* ---- /proc ------------------------------------------------------------------ */

/* "Name:\tvalue" lines of /proc/PID/status. */
static bool status_field(const char *status, const char *key, char *out, size_t len)
{
	size_t klen = strlen(key);
	for (const char *l = status; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, key, klen) || l[klen] != ':')
			continue;
		const char *v = l + klen + 1;
		while (*v == ' ' || *v == '\t')
			v++;
		size_t n = strcspn(v, "\n");
		if (n >= len)
			n = len - 1;
		memcpy(out, v, n);
		out[n] = 0;
		return true;
	}
	return false;
}

int js_proc_tgid(pid_t pid, pid_t *tgid, js_err *err)
{
	char path[64], status[4096], v[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	if (js_read_small(path, status, sizeof status) < 0) {
		int e = errno == ENOENT ? ESRCH : errno;
		return js_fail(err,
			       e == ESRCH    ? JS_EXIT_NO_PROCESS
			       : e == EACCES ? JS_EXIT_PERMISSION
					     : JS_EXIT_FAILURE,
			       e, "no process %d", (int)pid);
	}
	/* A leader that called pthread_exit is a zombie while its threads
	 * live on (Threads: counts them): the process is there, but its
	 * executable and memory are no longer to be had through it. */
	char threads[32];
	int live = status_field(status, "Threads", threads, sizeof threads) ? atoi(threads) : 0;
	if (status_field(status, "State", v, sizeof v) && (v[0] == 'Z' || v[0] == 'X'))
		return live > 1 ? js_fail(err, JS_EXIT_NO_PROCESS, ESRCH,
					  "process %d: its main thread has exited (pthread_exit) while %d "
					  "other thread%s live%s on; jitstack cannot read such a process",
					  (int)pid, live - 1, live > 2 ? "s" : "", live > 2 ? "" : "s")
				: js_fail(err, JS_EXIT_NO_PROCESS, ESRCH,
					  "process %d has exited (it is a zombie)", (int)pid);
	if (!status_field(status, "Tgid", v, sizeof v))
		return js_fail(err, JS_EXIT_FAILURE, EIO, "cannot read /proc/%d/status", (int)pid);
	*tgid = (pid_t)atoi(v);
	return 0;
}

/* A seize failed with EPERM: say why in words a user can act on. */
static int fail_eperm(js_proc *p, js_err *err)
{
	char path[64], status[4096], v[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)p->pid);
	if (js_read_small(path, status, sizeof status) >= 0 &&
	    status_field(status, "TracerPid", v, sizeof v) && atoi(v) != 0)
		return js_fail(err, JS_EXIT_PERMISSION, EPERM,
			       "process %d is already traced by process %s (a debugger?)", (int)p->pid, v);
	if (p->pid == getpid())
		return js_fail(err, JS_EXIT_PERMISSION, EPERM,
			       "process %d is jitstack itself: a process cannot trace its own threads",
			       (int)p->pid);
	char scope[16] = "";
	js_read_small("/proc/sys/kernel/yama/ptrace_scope", scope, sizeof scope);
	return js_fail(err, JS_EXIT_PERMISSION, EPERM,
		       "not allowed to trace process %d: run as its user or as root (CAP_SYS_PTRACE)%s%.*s",
		       (int)p->pid, scope[0] ? "; kernel.yama.ptrace_scope is " : "",
		       (int)strcspn(scope, "\n"), scope);
}

/* The processes attached to, for js_proc_suspend_point. */
static js_proc **all;
static size_t n_all, cap_all;

static void suspend_point(void)
{
	js_proc_suspend_point();
}

static void enrol(js_proc *p)
{
	js_hold_set_point(suspend_point);
	for (size_t i = 0; i < n_all; i++)
		if (all[i] == p)
			return;
	if (js_grow(&all, &cap_all, n_all, sizeof *all))
		all[n_all++] = p;
}

static void unenrol(js_proc *p)
{
	for (size_t i = 0; i < n_all; i++)
		if (all[i] == p) {
			all[i] = all[--n_all];
			return;
		}
}

/* A thread held is entered in hold.h's table, and forgotten there when it
 * is let go, or when a handler let it go (then it runs, with the signal it
 * was to get). */
static void hold(js_thread *t)
{
	if (!t->hold && t->stopped)
		t->hold = js_hold_add(t->tid, t->pending_sig, t->group_stop) + 1;
}

static void settle(js_thread *t)
{
	if (!t->hold)
		return;
	if (js_hold_released(t->hold - 1)) {
		t->stopped = false;
		t->pending_sig = 0;
	}
	if (!t->stopped) {
		js_hold_drop(t->hold - 1);
		t->hold = 0;
	}
}

static void settle_all(js_proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		settle(&p->t[i]);
}

static js_thread *find(js_proc *p, pid_t tid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->t[i].tid == tid)
			return &p->t[i];
	return NULL;
}

static void read_comm(js_proc *p, js_thread *t)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task/%d/comm", (int)p->pid, (int)t->tid);
	if (js_read_small(path, t->comm, sizeof t->comm) < 0)
		t->comm[0] = 0;
	t->comm[strcspn(t->comm, "\n")] = 0;
}

/* Threads often name themselves once they run (pthread_setname_np from
 * the thread's own start): a thread's name is read again at each of its
 * first COMM_YOUNG listings, then at every COMM_EVERY-th.  record lists
 * every 100 ms, so a new thread's name is right within 100 ms and a later
 * rename within a second, at one small read a thread a second.  Not for
 * list_only: perf events report renames, and their threads' names are
 * their own (perfevent.c). */
enum { COMM_YOUNG = 10, COMM_EVERY = 10 };

/* List /proc/PID/task: add new threads (counted in *added), mark the ones
 * listed.  Returns 0, or a js_exit code with *err (the process is gone). */
static int scan(js_proc *p, int *added, js_err *err)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(path);
	*added = 0;
	if (!d) {
		int e = errno == ENOENT ? ESRCH : errno;
		return js_fail(err, e == ESRCH ? JS_EXIT_NO_PROCESS : JS_EXIT_FAILURE, e,
			       "process %d is gone", (int)p->pid);
	}
	for (size_t i = 0; i < p->n; i++)
		p->t[i].seen = false;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid_t tid = (pid_t)atoi(de->d_name);
		js_thread *t = find(p, tid);
		if (!t) {
			if (p->n >= JS_MAX_THREADS)
				continue;
			if (!js_grow(&p->t, &p->cap, p->n, sizeof *p->t))
				break;
			t = &p->t[p->n++];
			memset(t, 0, sizeof *t);
			t->tid = tid;
			read_comm(p, t);
			++*added;
		} else if (!p->list_only && (++t->listings < COMM_YOUNG || t->listings % COMM_EVERY == 0)) {
			read_comm(p, t);
		}
		t->seen = true;
	}
	closedir(d);
	return 0;
}

/* Seize the threads not seized yet: 0, or a js_exit code with *err. */
int js_proc_seize(js_proc *p, js_err *err)
{
	for (size_t i = 0; i < p->n; i++) {
		js_thread *t = &p->t[i];
		if (t->seized || t->gone)
			continue;
		if (ptrace(PTRACE_SEIZE, t->tid, 0, 0) == 0) {
			t->seized = true;
			continue;
		}
		if (errno == ESRCH) {
			t->gone = true;
			t->why = "exited";
			continue;
		}
		if (errno == EPERM)
			return fail_eperm(p, err);
		return js_fail(err, JS_EXIT_FAILURE, errno, "cannot trace thread %d: %s", (int)t->tid,
			       strerror(errno));
	}
	return 0;
}

/* A zombie's main thread stays listed in /proc/PID/task until it is
 * reaped; a tracer learns of the exit from waitpid, a lister from here. */
static bool zombie(pid_t pid, pid_t tid)
{
	char path[64], st[512];
	snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	if (js_read_small(path, st, sizeof st) < 0)
		return true;
	const char *paren = strrchr(st, ')'); /* comm may hold anything */
	return !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X';
}

static int seize_new(js_proc *p, js_err *err)
{
	if (!p->list_only)
		return js_proc_seize(p, err);
	for (size_t i = 0; i < p->n; i++)
		if (!p->t[i].gone && !p->t[i].seized && zombie(p->pid, p->t[i].tid)) {
			p->t[i].gone = true;
			p->t[i].why = "exited";
		}
	return 0;
}

static int attach(js_proc *p, pid_t pid, bool list_only, js_err *err)
{
	memset(p, 0, sizeof *p);
	enrol(p);
	p->pid = pid;
	p->list_only = list_only;
	p->stop_timeout_ns = DEFAULT_STOP_TIMEOUT_NS;
	/* Tracee stops are announced with SIGCHLD: keep it pending for
	 * wait_stop's sigtimedwait (its default action would discard it). */
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	/* Threads may be created while we attach: scan until no new ones. */
	for (int round = 0; round < 16; round++) {
		int added;
		int rc = scan(p, &added, err);
		if (!rc)
			rc = seize_new(p, err);
		if (rc)
			return rc;
		if (!added)
			break;
	}
	if (js_proc_gone(p))
		return js_fail(err, JS_EXIT_NO_PROCESS, ESRCH, "process %d exited while being attached to",
			       (int)pid);
	return 0;
}

int js_proc_attach(js_proc *p, pid_t pid, js_err *err)
{
	return attach(p, pid, false, err);
}

int js_proc_list(js_proc *p, pid_t pid, js_err *err)
{
	return attach(p, pid, true, err);
}

int js_proc_rescan(js_proc *p, js_err *err)
{
	settle_all(p);
	int added;
	int rc = scan(p, &added, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < p->n; i++)
		if (!p->t[i].seen && !p->t[i].gone) {
			p->t[i].gone = true;
			p->t[i].why = "exited";
		}
	/* forget threads gone for good */
	size_t w = 0;
	for (size_t i = 0; i < p->n; i++)
		if (!p->t[i].gone || p->t[i].stopped)
			p->t[w++] = p->t[i];
	p->n = w;
	return seize_new(p, err);
}

bool js_proc_gone(js_proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (!p->t[i].gone)
			return false;
	return true;
}

/* ---- stops -------------------------------------------------------------------- */

static void on_status(js_thread *t, int st)
{
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		t->gone = true;
		t->stopped = false;
		t->why = "exited";
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	int sig = WSTOPSIG(st);
	t->stopped = true;
	if ((st >> 16) == PTRACE_EVENT_STOP) {
		/* our interrupt (SIGTRAP), or a group stop (the stop signal) */
		t->group_stop = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
	} else {
		t->pending_sig = sig; /* a signal on its way: pass it on when resuming */
		t->group_stop = false;
	}
}

/* Wait for t to stop.  A running thread stops within microseconds of
 * PTRACE_INTERRUPT, and every microsecond we then sleep is one it stands
 * still, so poll first -- yielding the CPU between polls, since the thread
 * may be waiting for this very CPU to reach its stop -- and then sleep in
 * sigtimedwait until SIGCHLD (which the kernel sends the tracer at every
 * tracee stop; it is blocked from js_proc_attach on, so it is queued
 * rather than ignored). */
static int wait_stop(js_thread *t, uint64_t timeout_ns)
{
	uint64_t start = now_ns(), deadline = start + timeout_ns;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	for (;;) {
		int st;
		pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
		if (r == t->tid) {
			on_status(t, st);
			if (t->stopped || t->gone)
				return t->stopped ? 0 : -1;
			continue;
		}
		if (r < 0 && errno != EINTR) {
			t->gone = true; /* ECHILD: not ours any more */
			t->why = "exited";
			return -1;
		}
		uint64_t now = now_ns();
		if (now >= deadline) {
			t->why = "did not stop (uninterruptible sleep?)";
			return -1;
		}
		if (now - start < POLL_NS) {
			sched_yield();
			continue;
		}
		uint64_t left = deadline - now;
		struct timespec ts = { (time_t)(left / 1000000000u), (long)(left % 1000000000u) };
		sigtimedwait(&chld, NULL, &ts);
	}
}

static void read_regs(js_thread *t)
{
#if defined(__x86_64__)
	t->have_regs = ptrace(PTRACE_GETREGS, t->tid, 0, &t->regs) == 0;
	/* Stopped inside a blocking system call: orig_rax holds its number and
	 * rax the kernel's "restart" value (-ERESTARTSYS and friends). */
	long rax = (long)t->regs.rax;
	t->idle = t->have_regs && (long)t->regs.orig_rax >= 0 &&
		  (rax == -512 || rax == -513 || rax == -514 || rax == -516 || rax == -EINTR);
#elif defined(__aarch64__)
	/* No PTRACE_GETREGS here: the general registers are the NT_PRSTATUS
	 * regset (x0-x30, sp, pc, pstate), the system call being made is
	 * NT_ARM_SYSTEM_CALL (-1 outside one), and an interrupted call's
	 * "restart" value is in x0. */
	struct iovec iov = { &t->regs, sizeof t->regs };
	t->have_regs = ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_PRSTATUS, &iov) == 0 &&
		       iov.iov_len == sizeof t->regs;
	int sysno = -1;
	struct iovec sc = { &sysno, sizeof sysno };
	if (t->have_regs && ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_ARM_SYSTEM_CALL, &sc))
		sysno = -1;
	long x0 = (long)t->regs.regs[0];
	t->idle = t->have_regs && sysno >= 0 &&
		  (x0 == -512 || x0 == -513 || x0 == -514 || x0 == -516 || x0 == -EINTR);
#else
	t->have_regs = false;
#endif
	if (!t->have_regs)
		t->why = "registers unreadable";
}

int js_proc_stop(js_proc *p, js_thread *t)
{
	js_proc_suspend_point();
	settle(t);
	t->have_regs = false;
	if (t->gone || !t->seized)
		return -1;
	if (!t->stopped) {
		if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0)) {
			t->gone = errno == ESRCH;
			t->why = t->gone ? "exited" : "cannot be interrupted";
			return -1;
		}
		if (wait_stop(t, p->stop_timeout_ns))
			return -1;
	}
	hold(t);
	read_regs(t);
	return t->have_regs ? 0 : -1;
}

void js_proc_stop_all(js_proc *p)
{
	js_proc_suspend_point();
	settle_all(p);
	for (size_t i = 0; i < p->n; i++) {
		js_thread *t = &p->t[i];
		t->have_regs = false;
		if (t->seized && !t->gone && !t->stopped && ptrace(PTRACE_INTERRUPT, t->tid, 0, 0)) {
			t->gone = errno == ESRCH;
			t->why = t->gone ? "exited" : "cannot be interrupted";
		}
	}
	uint64_t start = now_ns();
	for (size_t i = 0; i < p->n; i++) {
		js_thread *t = &p->t[i];
		if (!t->seized || t->gone)
			continue;
		uint64_t spent = now_ns() - start;
		if (!t->stopped &&
		    wait_stop(t, spent < p->stop_timeout_ns ? p->stop_timeout_ns - spent : 1000000))
			continue;
		hold(t);
		read_regs(t);
	}
}

void js_proc_resume(js_proc *p, js_thread *t)
{
	(void)p;
	settle(t);
	if (!t->stopped || t->gone)
		return;
	long r = t->group_stop ? ptrace(PTRACE_LISTEN, t->tid, 0, 0)
			       : ptrace(PTRACE_CONT, t->tid, 0, (void *)(long)t->pending_sig);
	if (r == 0 || errno == ESRCH) {
		t->stopped = false;
		t->pending_sig = 0;
		if (r)
			t->gone = true;
		settle(t);
	}
}

void js_proc_resume_all(js_proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		js_proc_resume(p, &p->t[i]);
}

void js_proc_poll(js_proc *p)
{
	js_proc_poll_all(&p, 1);
}

/* waitpid(-1) reports the stops of every tracee: each is given to the
 * process whose thread it is (a status dropped would leave that thread
 * stopped). */
void js_proc_poll_all(js_proc *const *p, size_t n)
{
	for (int i = 0; i < 4096; i++) {
		int st;
		pid_t r = waitpid(-1, &st, __WALL | WNOHANG);
		if (r <= 0)
			return;
		for (size_t k = 0; k < n; k++) {
			js_thread *t = find(p[k], r);
			if (!t)
				continue;
			on_status(t, st);
			js_proc_resume(p[k], t); /* a stop we did not ask for: let it go on */
			break;
		}
	}
}

void js_proc_detach(js_proc *p)
{
	settle_all(p);
	for (size_t i = 0; i < p->n; i++) {
		js_thread *t = &p->t[i];
		if (!t->seized || t->gone)
			continue;
		/* PTRACE_DETACH needs a stopped tracee.  One that cannot stop is
		 * detached by the kernel when we exit. */
		if (!t->stopped && (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) || wait_stop(t, 100000000)))
			continue;
		ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->pending_sig);
		t->seized = t->stopped = false;
		t->pending_sig = 0;
		settle(t);
	}
}

bool js_proc_suspend_point(void)
{
	int sig = js_hold_take_suspend();
	if (!sig)
		return false;
	for (size_t k = 0; k < n_all; k++) {
		js_proc *p = all[k];
		for (size_t i = 0; i < p->n; i++)
			p->t[i].reseize = p->t[i].seized && !p->t[i].gone;
		js_proc_detach(p);
	}
	js_hold_screen_leave();
	js_hold_stop_self(sig);
	js_hold_screen_enter();
	for (size_t k = 0; k < n_all; k++) {
		js_proc *p = all[k];
		for (size_t i = 0; i < p->n; i++) {
			js_thread *t = &p->t[i];
			if (!t->reseize || t->seized)
				continue;
			t->reseize = false;
			if (ptrace(PTRACE_SEIZE, t->tid, 0, 0) == 0)
				t->seized = true;
			else if (errno == ESRCH)
				t->gone = true, t->why = "exited";
			else
				t->why = "not traced again after jitstack was stopped";
		}
	}
	return true;
}

void js_proc_free(js_proc *p)
{
	unenrol(p);
	free(p->t);
	p->t = NULL;
	p->n = p->cap = 0;
}
