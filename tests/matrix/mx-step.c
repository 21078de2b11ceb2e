/* SPDX-License-Identifier: MIT */
/* mx-step.c - single-step through one JIT function and unwind at every
 * instruction (linked with remote_dwfl.c or remote_unw.c: mx-step-dwfl,
 * mx-step-unw-ptrace).
 *
 *   mx-step-* [--jit] --expect FILE --func NAME -- PROGRAM ARGS...
 *
 * Runs PROGRAM (tinyjit with tests/matrix/step.tj) as its tracer.  The
 * program writes FILE (TJ_PROBE_EXPECT) and raises SIGTRAP (probe mode 9)
 * once its code is published; then a breakpoint goes on the first
 * instruction of the function NAME (its "blob" line in FILE), and from
 * there every instruction is single-stepped: the function's body, the
 * native function it calls, its return, until the pc is back in another
 * JIT function.  At every position the whole stack is unwound.
 *
 * Output: "# ..." comments; per position "@ 0xPC" and its frames, one
 * "0xPC NAME" a line, innermost first.  The harness judges them.
 * Exit: 0 done, 1 a ptrace or unwinder failure, 2 usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "remote.h"

enum { MAX_FRAMES = 256, MAX_STEPS = 20000 };

static pid_t child;

static int die(const char *what)
{
	fprintf(stderr, "mx-step: %s: %s\n", what, errno ? strerror(errno) : "unexpected stop");
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	return 1;
}

/* Wait for the next stop; passes on signals other than SIGTRAP.  Returns
 * 0 at a SIGTRAP stop, -1 when the child is gone. */
static int wait_trap(void)
{
	for (;;) {
		int st;
		if (waitpid(child, &st, 0) != child || !WIFSTOPPED(st))
			return -1;
		int sig = WSTOPSIG(st);
		if (sig == SIGTRAP)
			return 0;
		ptrace(PTRACE_CONT, child, 0, (void *)(intptr_t)sig);
	}
}

/* The "blob NAME LO HI TRAMP" line of the expect file, and every blob's
 * range (to see when the pc is back in another JIT function). */
typedef struct range {
	uint64_t lo, hi;
} range;

static int read_blobs(const char *path, const char *func, range *mine, range *all, int *n_all)
{
	FILE *f = fopen(path, "r");
	char line[1024], name[512];
	unsigned long lo, hi, tramp;
	int found = 0;
	*n_all = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "blob %511s %lx %lx %lx", name, &lo, &hi, &tramp) == 4) {
			if (*n_all < 256)
				all[(*n_all)++] = (range){ lo, hi };
			if (!strcmp(name, func)) {
				*mine = (range){ lo, hi };
				found = 1;
			}
		}
	fclose(f);
	return found ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *expect = NULL, *func = NULL;
	int flags = MX_STOPPED, i = 1;
	for (; i < argc; i++) {
		if (!strcmp(argv[i], "--jit"))
			flags |= MX_JIT_IMAGES;
		else if (!strcmp(argv[i], "--expect") && i + 1 < argc)
			expect = argv[++i];
		else if (!strcmp(argv[i], "--func") && i + 1 < argc)
			func = argv[++i];
		else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else
			break;
	}
	if (!expect || !func || i >= argc) {
		fprintf(stderr, "usage: mx-step [--jit] --expect FILE --func NAME -- PROGRAM ARGS...\n");
		return 2;
	}

	child = fork();
	if (child < 0)
		return die("fork");
	if (child == 0) {
		ptrace(PTRACE_TRACEME, 0, 0, 0);
		execvp(argv[i], argv + i);
		_exit(127);
	}
	if (wait_trap()) /* the exec */
		return die("exec");
	ptrace(PTRACE_SETOPTIONS, child, 0, (void *)(intptr_t)PTRACE_O_EXITKILL);
	if (ptrace(PTRACE_CONT, child, 0, 0) || wait_trap()) /* probe mode 9 */
		return die("waiting for the program's SIGTRAP");

	range fn = { 0, 0 }, blobs[256];
	int n_blobs;
	if (read_blobs(expect, func, &fn, blobs, &n_blobs)) {
		fprintf(stderr, "mx-step: no blob %s in %s\n", func, expect);
		return die("expect file");
	}

	/* a breakpoint on the function's first instruction */
	errno = 0;
	long word = ptrace(PTRACE_PEEKTEXT, child, (void *)fn.lo, 0);
	if (errno)
		return die("PEEKTEXT");
	long trap = (word & ~0xffL) | 0xcc;
	if (ptrace(PTRACE_POKETEXT, child, (void *)fn.lo, (void *)trap) || ptrace(PTRACE_CONT, child, 0, 0) ||
	    wait_trap())
		return die("breakpoint");
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, child, 0, &regs) || regs.rip != fn.lo + 1)
		return die("the breakpoint was not hit");
	regs.rip = fn.lo;
	if (ptrace(PTRACE_POKETEXT, child, (void *)fn.lo, (void *)word) ||
	    ptrace(PTRACE_SETREGS, child, 0, &regs))
		return die("removing the breakpoint");

	char err[512] = "";
	mx_remote *r = mx_open_live(child, flags, err, sizeof err);
	if (!r) {
		fprintf(stderr, "mx-step: %s: %s\n", mx_remote_name, err);
		return die("opening the unwinder");
	}
	printf("# mx-step: %s, JIT images: %d, pid %d, %s [%#lx, %#lx)\n", mx_remote_name, mx_n_images(r),
	       (int)child, func, (unsigned long)fn.lo, (unsigned long)fn.hi);
	static mx_frame frames[MAX_FRAMES];
	int steps = 0;
	for (; steps < MAX_STEPS; steps++) {
		if (ptrace(PTRACE_GETREGS, child, 0, &regs))
			return die("GETREGS");
		int elsewhere = 0;
		for (int b = 0; b < n_blobs; b++)
			elsewhere |= regs.rip >= blobs[b].lo && regs.rip < blobs[b].hi &&
				     !(regs.rip >= fn.lo && regs.rip < fn.hi);
		if (steps > 0 && elsewhere)
			break; /* back in the caller's code */
		int n = mx_unwind(r, child, frames, MAX_FRAMES, err, sizeof err);
		printf("@ %#llx\n", regs.rip);
		if (n < 0)
			printf("# unwind failed: %s\n", err);
		for (int k = 0; k < n; k++)
			printf("%#lx %s\n", (unsigned long)frames[k].pc,
			       frames[k].name[0] ? frames[k].name : "??");
		if (ptrace(PTRACE_SINGLESTEP, child, 0, 0) || wait_trap())
			return die("single-step");
	}
	printf("# %d positions\n", steps);
	mx_close(r);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	return steps < MAX_STEPS ? 0 : 1;
}
