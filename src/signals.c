/* SPDX-License-Identifier: MIT */
/* signals.c - asynchronous signals held off around the consumers' registry
 * calls.
 *
 * libgcc's frame registry, LLVM libunwind's FDE cache and nongnu libunwind's
 * dynamic list each take a lock of their own in the calls the channels
 * make, and libgcc allocates and frees under its lock.  A signal handler
 * that unwinds (an in-process sampling profiler) takes the same locks: if
 * the signal landed in the thread that holds one, the handler would wait
 * for itself.  So every such call runs with the asynchronous signals
 * blocked; the synchronous ones (a fault in the call itself) stay
 * deliverable, since blocking them makes a fault kill the process silently.
 * docs/API.md, "Unwinding from signal handlers", says what a profiler may
 * do.
 */
#include "internal.h"

#include <signal.h>

void ju__signals_block(sigset_t *old)
{
	sigset_t all;
	sigfillset(&all);
	static const int sync[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };
	for (size_t i = 0; i < sizeof sync / sizeof *sync; i++)
		sigdelset(&all, sync[i]);
	pthread_sigmask(SIG_BLOCK, &all, old);
}

void ju__signals_restore(const sigset_t *old)
{
	pthread_sigmask(SIG_SETMASK, old, NULL);
}
