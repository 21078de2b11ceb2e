/* SPDX-License-Identifier: MIT */
/* proc.h - the threads of a live process under ptrace.
 *
 * Threads are seized (PTRACE_SEIZE: attached without being stopped), then
 * stopped briefly with PTRACE_INTERRUPT when a stack is wanted, and resumed.
 * A seized thread that gets a signal enters a signal-delivery stop and
 * waits for us; js_proc_poll passes such signals on, so a long record
 * session does not hold the target up.  A group stop (the process was
 * stopped with SIGSTOP) is resumed with PTRACE_LISTEN: it stays stopped.
 *
 * Waits are bounded: a thread in uninterruptible sleep cannot stop, and is
 * reported instead of hanging the tool.
 */
#ifndef JS_PROC_H
#define JS_PROC_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

typedef struct js_thread {
	pid_t tid;
	char comm[32];
	bool seized;
	bool stopped;    /* in a ptrace stop we are holding */
	bool gone;       /* exited */
	bool group_stop; /* stopped by SIGSTOP & co: resume with PTRACE_LISTEN */
	bool idle;       /* was blocked in a system call when stopped */
	bool have_regs;
	bool seen;         /* listed by the latest scan */
	unsigned listings; /* scans that listed it after the first */
	int pending_sig;   /* a signal we intercepted, delivered on resume */
	int hold;          /* 1 + its slot in hold.h's table while held, else 0 */
	bool reseize;      /* detached for a suspension: seized again after it */
	size_t stack_hint; /* bytes of stack its unwinds have needed (record) */
	struct user_regs_struct regs;
	const char *why; /* why no registers: "did not stop", "exited" */
} js_thread;

/* The stack pointer of a register set in the host's ptrace layout. */
static inline uint64_t js_regs_sp(const struct user_regs_struct *r)
{
#if defined(__x86_64__)
	return r->rsp;
#elif defined(__aarch64__)
	return r->sp;
#else
	(void)r;
	return 0;
#endif
}

typedef struct js_proc {
	pid_t pid;
	js_thread *t;
	size_t n, cap;
	uint64_t stop_timeout_ns;
	bool list_only; /* threads are listed, not seized (perf event sampling) */
} js_proc;

/* Seize every thread.  Returns 0, or a js_exit code with *err:
 * JS_EXIT_NO_PROCESS (gone), JS_EXIT_PERMISSION (not allowed, saying what
 * stands in the way), JS_EXIT_FAILURE. */
int js_proc_attach(js_proc *p, pid_t pid, js_err *err);
/* List every thread without seizing any (list_only): for sampling with
 * perf events, which needs no tracer.  0, or a js_exit code with *err. */
int js_proc_list(js_proc *p, pid_t pid, js_err *err);
/* Seize the threads listed but not seized (of a list_only js_proc too):
 * 0, or a js_exit code with *err. */
int js_proc_seize(js_proc *p, js_err *err);
/* Seize threads that appeared, forget those that exited.  0, or a js_exit
 * code with *err (err may be NULL). */
int js_proc_rescan(js_proc *p, js_err *err);
/* Stop one thread and read its registers (bounded wait).  0, or -1 if it
 * exited or did not stop (t->why). */
int js_proc_stop(js_proc *p, js_thread *t);
/* Stop every thread: interrupt all, then wait for each. */
void js_proc_stop_all(js_proc *p);
void js_proc_resume(js_proc *p, js_thread *t);
void js_proc_resume_all(js_proc *p);
/* Handle stops that arrived on their own (signals), without blocking. */
void js_proc_poll(js_proc *p);
/* The same for the threads of several processes traced at once. */
void js_proc_poll_all(js_proc *const *p, size_t n);
/* Detach every thread (stopping it first: PTRACE_DETACH needs a stop). */
void js_proc_detach(js_proc *p);
void js_proc_free(js_proc *p);
/* Where jitstack may stop itself: if a stop signal came (hold.h), every
 * thread of every process is let go (detached), the screen taken down,
 * jitstack stopped; once continued, the screen is put back and the
 * threads seized again.  Returns true when that happened: stops and
 * registers taken before are stale. */
bool js_proc_suspend_point(void);

/* Is the process itself gone? */
bool js_proc_gone(js_proc *p);

/* The thread group of a pid (a thread id given for a process) in *tgid.
 * Returns 0, or a js_exit code with *err (err may be NULL):
 * JS_EXIT_NO_PROCESS also for a zombie. */
int js_proc_tgid(pid_t pid, pid_t *tgid, js_err *err);

#endif
