/* SPDX-License-Identifier: MIT */
/* tracee.h - stopping a process this tool has seized (PTRACE_SEIZE), for
 * the matrix's ptrace tools: remote_unw.c before each unwind, mx-fpwalk.c
 * before each sample.
 *
 * PTRACE_INTERRUPT stops the tracee where it is, even inside a system call,
 * without a signal it could see; PTRACE_CONT or PTRACE_DETACH lets it go on.
 */
#ifndef MX_TRACEE_H
#define MX_TRACEE_H

#include <sys/ptrace.h>
#include <sys/types.h>
#include <sys/wait.h>

/* Stop the seized process pid and wait until it is stopped: 0, or -1. */
static inline int mx_stop_tracee(pid_t pid)
{
	int st;
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0))
		return -1;
	return waitpid(pid, &st, __WALL) == pid && WIFSTOPPED(st) ? 0 : -1;
}

#endif
