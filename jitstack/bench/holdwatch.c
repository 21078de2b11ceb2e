/* holdwatch.c - how long a process's threads stand in a tracing stop.
 *
 * Usage: holdwatch PID SECONDS
 * Reads the state of every thread of PID (/proc/PID/task/TID/stat) as
 * often as it can for SECONDS, until PID exits or until SIGINT or SIGTERM,
 * and prints
 *   longest-hold-ms N   the longest time one thread stayed in state 't'
 *   polls N             how many times every thread was read
 * A thread held by a tracer reads 't' between its stop and its release,
 * so the longest run of 't' readings bounds the longest hold from below,
 * to within one poll.
 *
 * SPDX-License-Identifier: MIT
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { MAX_TRACKED = 4096 };

static volatile sig_atomic_t done;

static void on_signal(int sig)
{
	(void)sig;
	done = 1;
}

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The state letter of one thread, or 0 when it cannot be read. */
static char state(int pid, const char *tid)
{
	char path[320], buf[512];
	snprintf(path, sizeof path, "/proc/%d/task/%s/stat", pid, tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *paren = strrchr(buf, ')'); /* the name may hold anything */
	return paren && paren[1] == ' ' ? paren[2] : 0;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: holdwatch PID SECONDS\n");
		return 2;
	}
	int pid = atoi(argv[1]);
	double end = now_ms() + atof(argv[2]) * 1e3, longest = 0;
	static int tids[MAX_TRACKED];
	static double since[MAX_TRACKED]; /* when it was first read 't', or 0 */
	size_t n = 0;
	unsigned long polls = 0;
	char dir[64];
	snprintf(dir, sizeof dir, "/proc/%d/task", pid);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	while (!done && now_ms() < end) {
		DIR *d = opendir(dir);
		if (!d)
			break;
		struct dirent *de;
		while ((de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			int tid = atoi(de->d_name);
			size_t i = 0;
			while (i < n && tids[i] != tid)
				i++;
			if (i == n) {
				if (n == MAX_TRACKED)
					continue;
				tids[n] = tid, since[n] = 0, n++;
			}
			char s = state(pid, de->d_name);
			double t = now_ms();
			if (s != 't') {
				since[i] = 0;
				continue;
			}
			if (!since[i])
				since[i] = t;
			if (t - since[i] > longest)
				longest = t - since[i];
		}
		closedir(d);
		polls++;
	}
	printf("longest-hold-ms %.1f\npolls %lu\n", longest, polls);
	return 0;
}
