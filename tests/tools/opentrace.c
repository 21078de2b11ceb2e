/* SPDX-License-Identifier: MIT */
/*
 * opentrace - list every file a command and all its descendants open.
 *
 *   opentrace -o FILE -- COMMAND [ARG]...
 *
 * Appends to FILE the path of each regular file opened or executed while
 * COMMAND runs, each path once: headers the compilers read, archives the
 * linker pulls in, the tools and shared libraries the tests run, the
 * libraries they dlopen.  scripts/check-deps.py maps the paths to Debian
 * packages.  The exit status is COMMAND's.
 *
 * How: fanotify(7) mount marks in a mount namespace of our own.  The
 * namespace's mounts are copies that only COMMAND and its descendants
 * resolve paths through, so other processes on the machine do not show
 * up, and no process is ptraced (the tests ptrace their own children:
 * strace -f would be refused or would change what they see).  Once a file
 * has been reported, an ignore mark on its inode keeps it quiet, so the
 * cost is one event per distinct file.
 *
 * When the kernel or our privileges do not allow this (no CAP_SYS_ADMIN,
 * no fanotify), opentrace says why on stderr, writes "#untraced: REASON"
 * to FILE and runs COMMAND untraced.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Where Debian puts package files; each is marked if it is a mount of its
 * own (marking one mount twice is harmless). */
static const char *const roots[] = { "/", "/usr", "/etc", "/opt", "/var", "/lib", "/bin", "/sbin" };

#define EVENTS (FAN_OPEN | FAN_OPEN_EXEC)

static volatile sig_atomic_t child_done;
static pid_t child = -1;

static void on_chld(int sig)
{
	(void)sig;
	child_done = 1;
}

static void on_forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static int usage(void)
{
	fprintf(stderr, "usage: opentrace -o FILE -- COMMAND [ARG]...\n");
	return 2;
}

/* Set up the namespace and the marks; returns the fanotify fd, or -1 with
 * WHY filled in. */
static int start_trace(char *why, size_t whysz)
{
	if (unshare(CLONE_NEWNS) != 0) {
		snprintf(why, whysz, "unshare(CLONE_NEWNS): %s", strerror(errno));
		return -1;
	}
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_UNLIMITED_QUEUE | FAN_CLOEXEC, O_RDONLY | O_LARGEFILE);
	if (fd < 0) {
		snprintf(why, whysz, "fanotify_init: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++) {
		struct stat st;
		if (lstat(roots[i], &st) != 0 || !S_ISDIR(st.st_mode))
			continue; /* /lib is a link to /usr/lib on merged-/usr systems */
		if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_MOUNT, EVENTS, AT_FDCWD, roots[i]) != 0) {
			snprintf(why, whysz, "fanotify_mark(%s): %s", roots[i], strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

/* Report one event's file and silence its inode from now on. */
static void record(int fan, const struct fanotify_event_metadata *m, FILE *out)
{
	char link[64], path[PATH_MAX];
	struct stat st;
	if (m->fd < 0)
		return;
	if (fstat(m->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		snprintf(link, sizeof link, "/proc/self/fd/%d", m->fd);
		ssize_t n = readlink(link, path, sizeof path - 1);
		if (n > 0) {
			path[n] = 0;
			fprintf(out, "%s\n", path);
		}
	}
	/* the inode's ignore mask outranks the mount mark (fanotify_mark(2)) */
	fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_IGNORED_MASK | FAN_MARK_IGNORED_SURV_MODIFY, EVENTS, m->fd,
		      NULL);
	close(m->fd);
}

/* Read what is queued; returns -1 on a read error. */
static int drain(int fan, FILE *out, int *overflow)
{
	char buf[64 * 1024] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	for (;;) {
		ssize_t len = read(fan, buf, sizeof buf);
		if (len < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -1;
		if (len == 0)
			return 0;
		const struct fanotify_event_metadata *m = (const void *)buf;
		for (; FAN_EVENT_OK(m, len); m = FAN_EVENT_NEXT(m, len)) {
			if (m->vers != FANOTIFY_METADATA_VERSION)
				return -1;
			if (m->mask & FAN_Q_OVERFLOW)
				*overflow = 1;
			record(fan, m, out);
		}
	}
}

int main(int argc, char **argv)
{
	const char *outpath = NULL;
	int opt;
	while ((opt = getopt(argc, argv, "+o:")) != -1) {
		if (opt != 'o')
			return usage();
		outpath = optarg;
	}
	if (!outpath || optind >= argc)
		return usage();
	FILE *out = fopen(outpath, "ae");
	if (!out) {
		fprintf(stderr, "opentrace: %s: %s\n", outpath, strerror(errno));
		return 2;
	}
	char why[256];
	int fan = start_trace(why, sizeof why);
	if (fan < 0) {
		fprintf(stderr, "opentrace: not tracing: %s\n", why);
		fprintf(out, "#untraced: %s\n", why);
		fclose(out);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "opentrace: %s: %s\n", argv[optind], strerror(errno));
		return 127;
	}
	fcntl(fan, F_SETFL, fcntl(fan, F_GETFL) | O_NONBLOCK);

	struct sigaction sa = { .sa_handler = on_chld, .sa_flags = SA_NOCLDSTOP };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, NULL);
	struct sigaction fw = { .sa_handler = on_forward };
	sigemptyset(&fw.sa_mask);
	sigaction(SIGINT, &fw, NULL);
	sigaction(SIGTERM, &fw, NULL);
	sigaction(SIGHUP, &fw, NULL);

	child = fork();
	if (child < 0) {
		fprintf(stderr, "opentrace: fork: %s\n", strerror(errno));
		return 2;
	}
	if (child == 0) {
		close(fan);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "opentrace: %s: %s\n", argv[optind], strerror(errno));
		_exit(127);
	}

	int overflow = 0, status = 0;
	for (;;) {
		struct pollfd p = { .fd = fan, .events = POLLIN };
		if (poll(&p, 1, child_done ? 0 : 200) > 0 && drain(fan, out, &overflow) < 0) {
			fprintf(stderr, "opentrace: reading events: %s\n", strerror(errno));
			fprintf(out, "#untraced: reading events failed\n");
			waitpid(child, &status, 0);
			break;
		}
		if (child_done && waitpid(child, &status, WNOHANG) == child)
			break;
	}
	drain(fan, out, &overflow); /* what was queued before the command ended */
	if (overflow)
		fprintf(out, "#overflow: events were lost\n");
	if (fclose(out) != 0)
		fprintf(stderr, "opentrace: %s: %s\n", outpath, strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
