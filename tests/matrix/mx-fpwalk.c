/* SPDX-License-Identifier: MIT */
/* mx-fpwalk.c - a manual frame-pointer walk of a live process, the way
 * sampling profilers (perf -g in the kernel, eBPF profilers) do it: stop
 * the thread, take the pc and the frame pointer (rip and rbp on x86-64,
 * pc and x29 on AArch64), follow the chain of frame records: each holds the
 * caller's frame pointer and then the return address, on both machines.
 *
 *   mx-fpwalk -p PID [-n SAMPLES] [-i MILLISECONDS]
 *
 * Takes SAMPLES samples (default 20) INTERVAL apart (default 10 ms).  For
 * each: "# sample K", then "0xPC" a line, innermost first: the pc, then each
 * return address.  The walk stops at a zero return address, a frame pointer
 * that does not grow, is misaligned, jumps more than 1 MiB, or cannot be
 * read (process_vm_readv fails instead of faulting), or after 512 frames.
 * Exit: 0, 1 when the process cannot be stopped, 2 usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <time.h>
#if defined(__aarch64__)
#include <elf.h> /* NT_PRSTATUS */
#endif

#include "tracee.h"

enum { MAX_FRAMES = 512 };
#define MAX_FRAME_BYTES ((uint64_t)1 << 20)

static int read_words(pid_t pid, uint64_t addr, uint64_t *w, size_t n)
{
	struct iovec local = { w, n * 8 }, remote = { (void *)(uintptr_t)addr, n * 8 };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)(n * 8) ? 0 : -1;
}

/* The pc and frame pointer of a stopped thread. */
static int regs_of(pid_t pid, uint64_t *pc, uint64_t *fp)
{
	struct user_regs_struct regs;
#if defined(__aarch64__)
	struct iovec iov = { &regs, sizeof regs };
	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov))
		return -1;
	*pc = regs.pc, *fp = regs.regs[29];
#else
	if (ptrace(PTRACE_GETREGS, pid, 0, &regs))
		return -1;
	*pc = regs.rip, *fp = regs.rbp;
#endif
	return 0;
}

static void walk(pid_t pid, uint64_t pc, uint64_t fp)
{
	printf("%#lx\n", (unsigned long)pc);
	for (int i = 0; i < MAX_FRAMES; i++) {
		uint64_t w[2]; /* saved frame pointer, return address */
		if ((fp & 7) || read_words(pid, fp, w, 2) || !w[1])
			return;
		printf("%#lx\n", (unsigned long)w[1]);
		if (w[0] <= fp || w[0] - fp > MAX_FRAME_BYTES)
			return;
		fp = w[0];
	}
}

int main(int argc, char **argv)
{
	pid_t pid = 0;
	int samples = 20, interval_ms = 10;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-p") && i + 1 < argc)
			pid = (pid_t)atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			samples = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-i") && i + 1 < argc)
			interval_ms = atoi(argv[++i]);
		else
			pid = 0, i = argc;
	}
	if (pid <= 0 || samples < 1 || samples > 100000 || interval_ms < 0) {
		fprintf(stderr, "usage: mx-fpwalk -p PID [-n SAMPLES] [-i MILLISECONDS]\n");
		return 2;
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0)) {
		perror("mx-fpwalk: PTRACE_SEIZE");
		return 1;
	}
	for (int k = 0; k < samples; k++) {
		uint64_t pc, fp;
		if (mx_stop_tracee(pid) || regs_of(pid, &pc, &fp)) {
			perror("mx-fpwalk: stopping the process");
			return 1;
		}
		printf("# sample %d\n", k);
		walk(pid, pc, fp);
		fflush(stdout);
		if (k + 1 == samples)
			break;
		ptrace(PTRACE_CONT, pid, 0, 0);
		nanosleep(&(struct timespec){ interval_ms / 1000, (long)(interval_ms % 1000) * 1000000 },
			  NULL);
	}
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return 0;
}
