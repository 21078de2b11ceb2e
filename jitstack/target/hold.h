/* hold.h - the target threads jitstack holds in a ptrace stop, and the
 * promise that none stays held for long, nor while jitstack is stopped.
 *
 * Every stop jitstack holds (proc.c) is entered here while it lasts.  Two
 * signal handlers release them all at once with PTRACE_CONT (or
 * PTRACE_LISTEN for a thread in a group stop), which are system calls and
 * so safe in a handler:
 *  - SIGALRM, armed when the first thread of a hold stops and disarmed when
 *    the last is let go: no thread stays held longer than the bound
 *    (js_hold_setup; jitstack --max-hold);
 *  - SIGTSTP, SIGTTIN and SIGTTOU (^Z, a background read or write): the
 *    threads go at once, and jitstack stops itself at its next suspension
 *    point (js_proc_suspend_point) after letting go of the targets entirely.
 * The code that held a released thread learns it from js_hold_released and
 * goes on from the copies it made of the registers and stack.
 *
 * SIGSTOP cannot be caught: a thread held at that instant stays stopped
 * until jitstack is continued or killed, for at most the bound once it is
 * continued.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef JS_HOLD_H
#define JS_HOLD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define JS_DEFAULT_MAX_HOLD_NS 100000000ull /* 100 ms */

/* Install the handlers, with the bound on one hold (ns; 0: the default). */
void js_hold_setup(uint64_t bound_ns);
uint64_t js_hold_bound_ns(void);
/* A thread stopped and held: returns its slot (for js_hold_drop), or -1
 * when there is no room (it is then let go at once by the caller).  sig is
 * the signal to deliver when it is released; listen: it is in a group stop. */
int js_hold_add(pid_t tid, int sig, bool listen);
/* The caller lets the thread of slot go (or learnt it was released). */
void js_hold_drop(int slot);
/* Was the thread of slot released by a handler since js_hold_add? */
bool js_hold_released(int slot);
/* How many releases the handlers made: a hold that sees this move was cut. */
unsigned long js_hold_cuts(void);

/* A suspension point for code below proc.c (mem.c's long reads): calls
 * what js_hold_set_point registered (js_proc_suspend_point) when a stop
 * signal came. */
void js_hold_point(void);
void js_hold_set_point(void (*fn)(void));

/* The stop signal that asked jitstack to stop itself (0: none); cleared. */
int js_hold_take_suspend(void);
/* Stop jitstack with sig as its default action does; returns when it is
 * continued. */
void js_hold_stop_self(int sig);

/* What a command shows on a terminal, taken down before jitstack stops
 * itself and put back after (top's screen).  Called from ordinary code. */
typedef struct js_hold_screen {
	void (*leave)(void *arg);
	void (*enter)(void *arg);
	void *arg;
} js_hold_screen;
void js_hold_set_screen(const js_hold_screen *s); /* NULL: none */
void js_hold_screen_leave(void);
void js_hold_screen_enter(void);

#endif
