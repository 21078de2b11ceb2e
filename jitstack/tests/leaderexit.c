/* leaderexit.c - a process whose main thread has called pthread_exit while
 * another thread lives on (the leader is a zombie, the process is not):
 * for t-bad-targets-have-clear-exit-codes.sh.  Prints "ready PID" and
 * waits until killed.
 *
 * SPDX-License-Identifier: MIT
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *park(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, park, NULL))
		return 1;
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	pthread_exit(NULL);
}
