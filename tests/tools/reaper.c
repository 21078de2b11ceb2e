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
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The parent pid of PID from /proc/PID/stat, or -1.  The command name may
 * hold spaces and parentheses, so the fields are read after the last ')'. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')');
	int ppid;
	char state;
	if (!p || sscanf(p + 1, " %c %d", &state, &ppid) != 2)
		return -1;
	return state == 'Z' ? -1 : ppid; /* a zombie only waits to be reaped */
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

static void print_cmdline(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	FILE *f = fopen(path, "re");
	size_t n = 0;
	if (f) {
		n = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
	}
	for (size_t i = 0; i + 1 < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	buf[n] = 0;
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
	if (left > 0) {
		fprintf(stderr, "%s: %d process%s left running by '%s' (killed)\n", name, left,
			left == 1 ? " was" : "es were", argv[optind]);
		if (rc == 0 || rc == 77)
			rc = 1;
	}
	return rc;
}
