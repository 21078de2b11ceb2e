/* SPDX-License-Identifier: MIT */
/* threads.c - a program with no JIT code and several threads, each parked
 * in a known chain of noinline functions: jitstack's frames must equal
 * eu-stack's on it.  Prints "ready PID" once every thread is parked.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")
enum { N_THREADS = 4 };

static pthread_barrier_t ready;
static volatile int done; /* never set: the threads stay parked */

NOINLINE static void park(void)
{
	pthread_barrier_wait(&ready);
	while (!done)
		pause();
}

NOINLINE static void level_b(int depth)
{
	if (depth > 0)
		level_b(depth - 1);
	else
		park();
	BARRIER();
}

NOINLINE static void level_a(int depth)
{
	level_b(depth);
	BARRIER();
}

static void *worker(void *arg)
{
	level_a((int)(long)arg);
	return NULL;
}

int main(void)
{
	pthread_t t[N_THREADS];
	pthread_barrier_init(&ready, NULL, N_THREADS + 1);
	for (long i = 0; i < N_THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	pthread_barrier_wait(&ready);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
