/* SPDX-License-Identifier: MIT */
/* latethread.c - a CPU-bound program whose threads come and go while it is
 * sampled: the main thread spins in main_spin; START ms after "ready" it
 * starts a thread named "late" that spins in late_spin for LIFE ms and
 * exits; the whole program exits EXIT ms after "ready" (0: never).  With
 * "usr1", START counts from the first SIGUSR1 instead, which the main thread
 * waits for spinning in main_spin: a test starts the thread once its
 * sampler is known to be watching.
 *
 *   latethread START LIFE EXIT [usr1]      (START < 0: no late thread)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline, used))
#define BARRIER() __asm__ volatile("" ::: "memory")

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static volatile unsigned long sink;

/* Spin until the clock reads `until` (ms). */
NOINLINE static void late_spin(double until)
{
	while (now_ms() < until)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
	BARRIER();
}

NOINLINE static void main_spin(double until)
{
	while (now_ms() < until)
		for (int i = 0; i < 10000; i++)
			sink += (unsigned long)i;
	BARRIER();
}

static double life_ms;
static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void *late(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "late");
	late_spin(now_ms() + life_ms);
	return NULL;
}

int main(int argc, char **argv)
{
	bool on_signal = argc == 5 && !strcmp(argv[4], "usr1");
	if (argc != 4 && !on_signal) {
		fprintf(stderr, "usage: latethread START LIFE EXIT [usr1]\n");
		return 2;
	}
	double start = atof(argv[1]), exit_ms = atof(argv[3]);
	life_ms = atof(argv[2]);
	if (on_signal && signal(SIGUSR1, on_usr1) == SIG_ERR)
		return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	double t0 = now_ms(), forever = 1e300;
	if (start >= 0) {
		double from = t0;
		while (on_signal && !go)
			main_spin(now_ms() + 10);
		if (on_signal)
			from = now_ms();
		main_spin(from + start);
		pthread_t th;
		if (pthread_create(&th, NULL, late, NULL))
			return 1;
		pthread_detach(th);
	}
	main_spin(exit_ms > 0 ? t0 + exit_ms : forever);
	return 0;
}
