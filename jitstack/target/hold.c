/* hold.c - the stops jitstack holds, released by signal handlers (see
 * hold.h).
 *
 * SPDX-License-Identifier: MIT
 *
 * The table is written by ordinary code and read by the handlers, which
 * interrupt it at any instruction of this one thread: a slot is filled
 * before it is counted and its tid cleared before it is forgotten, through
 * volatile stores the compiler keeps in order.  A release the handler
 * makes of a thread that is no longer stopped fails with ESRCH and does
 * nothing.
 */
#include "target/hold.h"
#include "base/bounds.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

typedef struct slot {
	volatile pid_t tid; /* 0: free */
	volatile int sig;
	volatile sig_atomic_t listen, released;
} slot;

static slot held[JS_MAX_THREADS];
static volatile sig_atomic_t top; /* slots [0, top) may be in use */
static size_t live;               /* slots in use (ordinary code only) */
static volatile sig_atomic_t cuts, suspend;
static uint64_t bound = JS_DEFAULT_MAX_HOLD_NS;
static js_hold_screen screen;
static void (*point)(void);

/* Async-signal-safe: the raw system call, errno kept. */
static void release_all(void)
{
	int e = errno;
	for (sig_atomic_t i = 0; i < top; i++) {
		slot *s = &held[i];
		pid_t tid = s->tid;
		if (!tid || s->released)
			continue;
		syscall(SYS_ptrace, s->listen ? PTRACE_LISTEN : PTRACE_CONT, (long)tid, 0L, (long)s->sig);
		s->released = 1;
	}
	cuts++;
	errno = e;
}

static void on_alarm(int sig)
{
	(void)sig;
	release_all();
}

static void on_stop_signal(int sig)
{
	release_all();
	suspend = sig;
}

static void timer(uint64_t ns)
{
	struct itimerval it = { { 0, 0 },
				{ (time_t)(ns / 1000000000u), (suseconds_t)(ns % 1000000000u / 1000) } };
	if (ns && !it.it_value.tv_sec && !it.it_value.tv_usec)
		it.it_value.tv_usec = 1;
	setitimer(ITIMER_REAL, &it, NULL);
}

void js_hold_setup(uint64_t bound_ns)
{
	bound = bound_ns ? bound_ns : JS_DEFAULT_MAX_HOLD_NS;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigfillset(&sa.sa_mask); /* one handler at a time over the table */
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = on_alarm;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = on_stop_signal;
	sigaction(SIGTSTP, &sa, NULL);
	sigaction(SIGTTIN, &sa, NULL);
	sigaction(SIGTTOU, &sa, NULL);
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGALRM);
	sigaddset(&set, SIGTSTP);
	sigaddset(&set, SIGTTIN);
	sigaddset(&set, SIGTTOU);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

uint64_t js_hold_bound_ns(void)
{
	return bound;
}

int js_hold_add(pid_t tid, int sig, bool listen)
{
	sig_atomic_t i = 0;
	if (top < (sig_atomic_t)JS_MAX_THREADS)
		i = top;
	else
		while (i < top && held[i].tid)
			i++;
	if (i >= (sig_atomic_t)JS_MAX_THREADS)
		return -1;
	held[i].sig = sig;
	held[i].listen = listen;
	held[i].released = 0;
	held[i].tid = tid;
	if (i == top)
		top = i + 1;
	if (!live++)
		timer(bound);
	return (int)i;
}

void js_hold_drop(int i)
{
	if (i < 0 || i >= top || !held[i].tid)
		return;
	held[i].tid = 0;
	if (--live)
		return;
	timer(0);
	top = 0;
}

bool js_hold_released(int i)
{
	return i >= 0 && i < top && held[i].tid && held[i].released;
}

unsigned long js_hold_cuts(void)
{
	return (unsigned long)cuts;
}

void js_hold_point(void)
{
	if (suspend && point)
		point();
}

void js_hold_set_point(void (*fn)(void))
{
	point = fn;
}

int js_hold_take_suspend(void)
{
	int sig = suspend;
	suspend = 0;
	return sig;
}

void js_hold_stop_self(int sig)
{
	struct sigaction dfl, old;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(sig, &dfl, &old);
	raise(sig); /* stops here (unless the process group is orphaned) until SIGCONT */
	sigaction(sig, &old, NULL);
}

void js_hold_set_screen(const js_hold_screen *s)
{
	screen = s ? *s : (js_hold_screen){ 0 };
}

void js_hold_screen_leave(void)
{
	if (screen.leave)
		screen.leave(screen.arg);
}

void js_hold_screen_enter(void)
{
	if (screen.enter)
		screen.enter(screen.arg);
}
