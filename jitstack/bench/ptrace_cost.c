/* SPDX-License-Identifier: MIT */
/* ptrace_cost.c - what one ptrace sample costs on this machine, step by
 * step, without any unwinding: the floor under `jitstack record`'s sample
 * latency and the target's standstill.
 *
 * Usage: ptrace_cost PID [ROUNDS]  (default 200 rounds, 10 ms apart)
 * Prints the median microseconds of: PTRACE_INTERRUPT until the stop is
 * seen, PTRACE_GETREGS, an 8 KiB process_vm_readv of the stack,
 * PTRACE_CONT.  Waits sleep in sigtimedwait on SIGCHLD, as jitstack's do
 * after their first 50 us.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

static double now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp);
	return v[n / 2];
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return fprintf(stderr, "usage: ptrace_cost PID [ROUNDS]\n"), 2;
	pid_t pid = (pid_t)atoi(argv[1]);
	int rounds = argc > 2 ? atoi(argv[2]) : 200;
	if (rounds < 1 || rounds > 100000)
		rounds = 200;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	if (ptrace(PTRACE_SEIZE, pid, 0, 0))
		return perror("PTRACE_SEIZE"), 1;
	double *stop = calloc((size_t)rounds, sizeof *stop), *regs = calloc((size_t)rounds, sizeof *regs);
	double *copy = calloc((size_t)rounds, sizeof *copy), *cont = calloc((size_t)rounds, sizeof *cont);
	static char buf[8192];
	int n = 0;
	for (; n < rounds; n++) {
		double t0 = now_us();
		if (ptrace(PTRACE_INTERRUPT, pid, 0, 0))
			break;
		int st;
		pid_t r;
		while ((r = waitpid(pid, &st, __WALL | WNOHANG)) == 0) {
			struct timespec ts = { 1, 0 };
			sigtimedwait(&chld, NULL, &ts);
		}
		if (r != pid || !WIFSTOPPED(st))
			break;
		double t1 = now_us();
		struct user_regs_struct u;
		ptrace(PTRACE_GETREGS, pid, 0, &u);
		double t2 = now_us();
		struct iovec l = { buf, sizeof buf }, rem = { (void *)u.rsp, sizeof buf };
		process_vm_readv(pid, &l, 1, &rem, 1, 0);
		double t3 = now_us();
		ptrace(PTRACE_CONT, pid, 0, 0);
		double t4 = now_us();
		stop[n] = t1 - t0, regs[n] = t2 - t1, copy[n] = t3 - t2, cont[n] = t4 - t3;
		struct timespec gap = { 0, 10000000 };
		nanosleep(&gap, NULL);
	}
	if (!n)
		return fprintf(stderr, "ptrace_cost: no sample\n"), 1;
	printf("%d rounds: interrupt until stopped %.1f us, GETREGS %.1f us, 8 KiB copy %.1f us, CONT %.1f us "
	       "(medians)\n",
	       n, median(stop, n), median(regs, n), median(copy, n), median(cont, n));
	return 0;
}
