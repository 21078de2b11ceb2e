/* SPDX-License-Identifier: MIT */
/*
 * reaper - run a command and make sure nothing it started outlives it.
 *
 *   reaper [-q] [-n NAME] -- COMMAND [ARG]...
 *
 * The reaper becomes a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so
 * every process COMMAND starts and abandons is re-parented to it rather
 * than to init.  When COMMAND exits, whatever is still alive below the
 * reaper was left running: a qemu gdb stub behind a `timeout` that was
 * killed with SIGKILL, a background child the test forgot.  Each one is
 * listed on stderr (pid and command line), sent SIGTERM, then SIGKILL after
 * a grace period, and reaped.
 *
 * Exit status: COMMAND's own (128+N if a signal ended it), or 1 when it
 * succeeded or was skipped (77) but left processes behind: a leak is a
 * failure of whoever started them.  SIGINT, SIGTERM and SIGHUP sent to the
 * reaper are passed on to COMMAND; the clean-up runs in every case.
 *
 * It also tells this run's perf maps from other runs': libjitunwind (and
 * node, OpenJDK) leave /tmp/perf-PID.map behind, and the run removes those
 * of its processes once they are gone (scripts/reap-perf-maps.sh) -- but
 * when several trees test at once, a map whose process is gone may be
 * another run's.  Once a process is gone nothing says who started it, so
 * the reaper asks while it lives: a thread watches /tmp (inotify) and, for
 * each perf-PID.map created, opened or renamed there, checks whether PID
 * descends from the reaper (its parent links lead here; orphans are
 * re-parented here, so none escapes) and, if so, appends PID to a list
 * whose path COMMAND finds in JU_PERF_MAP_PIDS (removed at the end).  A
 * process that writes its map and is reaped before the thread looks is
 * missed: its map is left, never another run's removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GRACE_MS 1000 /* between SIGTERM and SIGKILL */
#define MAX_PROCS 4096

static volatile sig_atomic_t forward_sig;
static const char *name = "reaper";

static void on_signal(int sig)
{
	forward_sig = sig;
}

/* The state and parent pid of PID from /proc/PID/stat; false when it is
 * gone.  The command name may hold spaces and parentheses, so the fields
 * are read after the last ')'. */
static bool read_stat(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	int pp;
	if (!p || sscanf(p + 1, " %c %d", state, &pp) != 2)
		return false;
	*ppid = (pid_t)pp;
	return true;
}

/* The parent pid of a live PID, or -1 (gone, or a zombie: it only waits to
 * be reaped). */
static pid_t parent_of(pid_t pid)
{
	char state;
	pid_t ppid;
	return read_stat(pid, &state, &ppid) && state != 'Z' ? ppid : -1;
}

/* Every live descendant of SELF, found by following parent links through
 * /proc; returns how many were stored in OUT. */
static int descendants(pid_t self, pid_t *out, int max)
{
	pid_t pids[MAX_PROCS], ppids[MAX_PROCS];
	int n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < MAX_PROCS) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		pid_t pp = parent_of((pid_t)pid);
		if (pp < 0)
			continue;
		pids[n] = (pid_t)pid;
		ppids[n++] = pp;
	}
	closedir(d);
	/* breadth first from SELF: TREE[0] is SELF, the rest its descendants */
	pid_t tree[MAX_PROCS];
	int found = 1;
	tree[0] = self;
	for (int i = 0; i < found; i++)
		for (int j = 0; j < n && found < MAX_PROCS; j++)
			if (ppids[j] == tree[i])
				tree[found++] = pids[j];
	int k = found - 1 < max ? found - 1 : max;
	memcpy(out, tree + 1, (size_t)k * sizeof *out);
	return k;
}

static size_t read_proc(pid_t pid, const char *what, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
	FILE *f = fopen(path, "re");
	size_t n = 0;
	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	return n;
}

/* A process caught inside execve has an empty command line for a moment
 * (the new image's arguments are not set up yet): read it again for up to
 * 100 ms, then say its name from comm. */
static void print_cmdline(pid_t pid)
{
	char buf[512];
	size_t n = 0;
	for (int tries = 0; tries < 50 && !(n = read_proc(pid, "cmdline", buf, sizeof buf)); tries++)
		nanosleep(&(struct timespec){ 0, 2000000 }, NULL);
	for (size_t i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	if (!n && read_proc(pid, "comm", buf + 1, sizeof buf - 2)) {
		buf[0] = '[';
		buf[strcspn(buf, "\n")] = 0;
		strcat(buf, "]");
		n = 1;
	}
	fprintf(stderr, "%s: left running: pid %d: %s\n", name, (int)pid, n ? buf : "?");
}

/* Reap every child that has exited, without blocking. */
static void reap_exited(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

/* Stop, list, terminate and reap what is left below us.  Returns how many
 * processes were found on the first look. */
static int clean_up(int quiet)
{
	pid_t left[MAX_PROCS];
	pid_t self = getpid();
	int n = descendants(self, left, MAX_PROCS);
	int first = n;
	/* Stop them all first, so none can start another while we list them. */
	for (int i = 0; i < n; i++)
		kill(left[i], SIGSTOP);
	for (int i = 0; i < n && !quiet; i++)
		print_cmdline(left[i]);
	for (int i = 0; i < n; i++) {
		kill(left[i], SIGTERM);
		kill(left[i], SIGCONT);
	}
	for (int waited = 0; n > 0 && waited < GRACE_MS; waited += 20) {
		sleep_ms(20);
		reap_exited();
		n = descendants(self, left, MAX_PROCS);
	}
	/* What ignores SIGTERM (a qemu stub waiting for its debugger) dies
	 * here; orphans of the killed re-parent to us and are found again. */
	for (int round = 0; n > 0 && round < 100; round++) {
		for (int i = 0; i < n; i++)
			kill(left[i], SIGKILL);
		sleep_ms(10);
		reap_exited();
		n = descendants(self, left, MAX_PROCS);
	}
	reap_exited();
	return first;
}

/* ---- this run's perf maps ---------------------------------------------------- */

#define PID_LIMIT (1 << 22) /* the kernel's PID_MAX_LIMIT on 64-bit machines */

static pid_t reaper_pid;
static int maps_watch = -1;           /* inotify on /tmp */
static int maps_list = -1;            /* JU_PERF_MAP_PIDS, appended to */
static int maps_stop[2] = { -1, -1 }; /* closing [1] ends the watcher */
static char maps_path[64];
static pthread_t maps_thread;
static uint8_t maps_listed[PID_LIMIT / 8];

/* Does PID descend from the reaper?  A zombie still has its parent link. */
static bool started_here(pid_t pid)
{
	for (int depth = 0; depth < MAX_PROCS && pid > 1; depth++) {
		char state;
		pid_t ppid;
		if (!read_stat(pid, &state, &ppid))
			return false;
		if (ppid == reaper_pid)
			return true;
		pid = ppid;
	}
	return false;
}

/* The PID of a name "perf-PID.map", or -1. */
static pid_t map_pid(const char *name)
{
	if (strncmp(name, "perf-", 5))
		return -1;
	char *end;
	long pid = strtol(name + 5, &end, 10);
	if (end == name + 5 || strcmp(end, ".map") || pid <= 1 || pid >= PID_LIMIT)
		return -1;
	return (pid_t)pid;
}

static void note_map(const char *name)
{
	pid_t pid = map_pid(name);
	if (pid < 0 || maps_listed[pid / 8] & (1u << (pid % 8)) || !started_here(pid))
		return;
	maps_listed[pid / 8] |= (uint8_t)(1u << (pid % 8));
	dprintf(maps_list, "%d\n", (int)pid);
}

/* Read every event queued (the descriptor does not block). */
static void drain_maps(void)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	ssize_t n;
	while ((n = read(maps_watch, buf, sizeof buf)) > 0)
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *e = (const struct inotify_event *)p;
			if (e->len)
				note_map(e->name);
			p += sizeof *e + e->len;
		}
}

static void *watch_maps(void *arg)
{
	(void)arg;
	struct pollfd pf[2] = { { maps_watch, POLLIN, 0 }, { maps_stop[0], POLLIN, 0 } };
	for (;;) {
		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		drain_maps();
		if (pf[1].revents) /* the events before the stop are read above */
			break;
	}
	return NULL;
}

/* Start listing the perf maps of this run's processes and tell COMMAND
 * where (JU_PERF_MAP_PIDS).  When that cannot be done the variable is
 * unset, not left to an outer reaper's list: with no list, nothing is
 * removed, the safe side. */
static void start_maps(void)
{
	const char *why = NULL;
	int err = 0, fd = -1;
	snprintf(maps_path, sizeof maps_path, "/tmp/reaper-maps.XXXXXX");
	if ((maps_watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) < 0 ||
	    inotify_add_watch(maps_watch, "/tmp", IN_CREATE | IN_OPEN | IN_MOVED_TO | IN_ONLYDIR) < 0)
		why = "inotify on /tmp", err = errno;
	else if ((fd = mkstemp(maps_path)) < 0)
		why = "mkstemp", err = errno;
	else if ((maps_list = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0 || fcntl(maps_list, F_SETFL, O_APPEND) ||
		 pipe2(maps_stop, O_CLOEXEC))
		why = "its list", err = errno;
	if (fd >= 0)
		close(fd);
	if (!why) {
		/* signals stay the main thread's: they interrupt its wait() */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		if ((err = pthread_create(&maps_thread, NULL, watch_maps, NULL)))
			why = "a thread";
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (why) {
		fprintf(stderr, "%s: cannot list this run's perf maps (%s: %s): none will be removed\n", name,
			why, strerror(err));
		if (fd >= 0)
			unlink(maps_path);
		maps_path[0] = 0;
		unsetenv("JU_PERF_MAP_PIDS");
		return;
	}
	setenv("JU_PERF_MAP_PIDS", maps_path, 1);
}

static void stop_maps(void)
{
	if (!maps_path[0])
		return;
	close(maps_stop[1]);
	pthread_join(maps_thread, NULL);
	unlink(maps_path);
}

static int usage(void)
{
	fprintf(stderr, "usage: reaper [-q] [-n NAME] -- COMMAND [ARG]...\n");
	return 2;
}

int main(int argc, char **argv)
{
	int quiet = 0, opt;
	while ((opt = getopt(argc, argv, "+qn:")) != -1) {
		switch (opt) {
		case 'q': quiet = 1; break;
		case 'n': name = optarg; break;
		default: return usage();
		}
	}
	if (optind >= argc)
		return usage();
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
		fprintf(stderr, "%s: PR_SET_CHILD_SUBREAPER: %s\n", name, strerror(errno));
		return 2;
	}
	reaper_pid = getpid();
	start_maps();
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	pid_t child = fork();
	if (child < 0) {
		fprintf(stderr, "%s: fork: %s\n", name, strerror(errno));
		return 2;
	}
	if (child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "%s: %s: %s\n", name, argv[optind], strerror(errno));
		_exit(127);
	}

	/* Wait for the command; orphans that exit meanwhile are reaped too. */
	int status = 0, forwarded = 0;
	for (;;) {
		int st;
		pid_t p = wait(&st);
		if (p == child) {
			status = st;
			break;
		}
		if (p < 0 && errno == EINTR && forward_sig && !forwarded) {
			kill(child, forward_sig);
			forwarded = 1;
		} else if (p < 0 && errno == ECHILD) {
			break;
		}
	}
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	int left = clean_up(quiet);
	stop_maps();
	if (left > 0) {
		fprintf(stderr, "%s: %d process%s left running by '%s' (killed)\n", name, left,
			left == 1 ? " was" : "es were", argv[optind]);
		if (rc == 0 || rc == 77)
			rc = 1;
	}
	return rc;
}
