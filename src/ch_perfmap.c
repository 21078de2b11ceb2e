/* ch_perfmap.c - channel for perf's symbol map, /tmp/perf-<pid>.map: one
 * line "START SIZE name" (hex) per published blob.  perf (report, script,
 * top) and eBPF profilers name samples in anonymous executable memory from
 * it; frames found by frame-pointer walks (perf -g) get their names too.
 *
 * The file is an append-only log that perf reads after the fact, so
 * unpublishing writes nothing: a line must stay for the samples taken while
 * its blob lived.  A JIT that reuses an address gets a second line for it;
 * perf, which has no timestamps for map lines, then picks one of the names.
 *
 * One file per process, shared by every context (refcounted, behind one
 * mutex): perf knows only the pid.  Created safely, because /tmp is shared
 * with every user: never through a symbolic link (O_NOFOLLOW), only a regular
 * file with one link, owned by our effective user.  A file left by an earlier
 * process that had our pid is truncated; one this process already wrote --
 * by us, or by another perf map writer in the process such as a second JIT --
 * is appended to.  After fork() the child starts its own file (core.c calls
 * after_fork in the child) and logs every blob it inherited.
 */
#include "internal.h"
#include "ownfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PM_PATH_FMT "/tmp/perf-%d.map"

/* The process's file. */
static struct {
	pthread_mutex_t lock;
	pid_t pid;      /* process the open fd belongs to */
	int fd;         /* -1 when closed */
	unsigned refs;  /* contexts with the channel on */
	pid_t started;  /* the process whose file we began (never truncate it again) */
} pm = { PTHREAD_MUTEX_INITIALIZER, 0, -1, 0, 0 };

/* A context's part. */
struct pm_state {
	pid_t logged;    /* the process whose file has this context's blobs */
	off_t undo_from; /* the file's length before the last append ... */
	off_t undo_to;   /* ... and after it; equal when there is nothing to undo */
};

/* fork() must not copy the mutex while another thread holds it.  Registered
 * at load time, before core.c's handlers (which come with the first
 * ju_open), so our prepare runs after core.c has taken the context locks
 * (the order a publish takes them in) and our child handler runs before
 * core.c's calls after_fork. */
static void pm_prepare(void) { pthread_mutex_lock(&pm.lock); }
static void pm_release(void) { pthread_mutex_unlock(&pm.lock); }

__attribute__((constructor)) static void pm_init(void)
{
	pthread_atfork(pm_prepare, pm_release, pm_release);
}

/* ---- the file ------------------------------------------------------------ */

static void path_of(char *path, size_t len, pid_t pid)
{
	snprintf(path, len, PM_PATH_FMT, (int)pid);
}

/* When this process started, as CLOCK_REALTIME, to the kernel's tick:
 * /proc/self/stat field 22 counts ticks since boot.  False if unknown. */
static bool process_start(struct timespec *out)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may hold anything */
	unsigned long long ticks;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
				"%*d %*d %llu", &ticks) != 1)
		return false;
	struct timespec real, boot;
	long hz = sysconf(_SC_CLK_TCK);
	if (hz <= 0 || clock_gettime(CLOCK_REALTIME, &real) || clock_gettime(CLOCK_BOOTTIME, &boot))
		return false;
	int64_t boot_ns = (int64_t)real.tv_sec * 1000000000 + real.tv_nsec -
			  ((int64_t)boot.tv_sec * 1000000000 + boot.tv_nsec);
	int64_t start_ns = boot_ns + (int64_t)(ticks * (1000000000ull / (unsigned long long)hz));
	out->tv_sec = start_ns / 1000000000;
	out->tv_nsec = start_ns % 1000000000;
	return true;
}

/* A file last written before this process began is an earlier process's. */
static bool is_stale(const struct stat *st)
{
	struct timespec start;
	if (!process_start(&start))
		return true;
	const struct timespec *m = &st->st_mtim;
	return m->tv_sec < start.tv_sec || (m->tv_sec == start.tv_sec && m->tv_nsec < start.tv_nsec);
}

/* Open this process's map for appending, refusing anything but our own
 * regular file.  Called with pm.lock held. */
static int open_file(void)
{
	pid_t pid = getpid();
	char path[64];
	path_of(path, sizeof path, pid);
	struct stat st;
	int fd = ju__ownfile_open(path, O_WRONLY, &st);
	if (fd < 0)
		return fd;
	if (pm.started != pid && st.st_size && is_stale(&st) && ftruncate(fd, 0)) {
		int err = JU_FAIL(JU_EIO, "cannot truncate the stale %s: %s", path, strerror(errno));
		close(fd);
		return err;
	}
	pm.fd = fd;
	pm.pid = pid;
	pm.started = pid;
	return 0;
}

/* Make sure pm.fd is this process's file; after a fork (or a raw clone that
 * skipped the fork handlers) the inherited descriptor is the parent's file
 * and is only closed, never written. */
static int ensure_file(void)
{
	if (pm.fd >= 0 && pm.pid == getpid())
		return 0;
	if (pm.fd >= 0)
		close(pm.fd);
	pm.fd = -1;
	return open_file();
}

/* ---- the channel -------------------------------------------------------- */

static int pm_open(struct ju_ctx *ctx)
{
	struct pm_state *s = ju__calloc(1, sizeof *s);
	if (!s)
		return JU_FAIL(JU_ENOMEM, "out of memory for the perf map channel");
	pthread_mutex_lock(&pm.lock);
	int err = ensure_file();
	if (!err) {
		pm.refs++;
		s->logged = pm.pid;
		ctx->pm = s;
	}
	pthread_mutex_unlock(&pm.lock);
	if (err)
		free(s);
	return err;
}

static void pm_close(struct ju_ctx *ctx)
{
	pthread_mutex_lock(&pm.lock);
	if (pm.refs && --pm.refs == 0 && pm.fd >= 0) {
		close(pm.fd);
		pm.fd = -1;
	}
	pthread_mutex_unlock(&pm.lock);
	free(ctx->pm);
	ctx->pm = NULL;
}

/* "START SIZE name\n" for each blob, appended in one piece: a reader
 * never sees half a batch, and a failure is undone in one step. */
static int pm_log_blobs(struct ju_ctx *ctx, const blob_view *v, size_t n)
{
	byte_buf b;
	buf_init_grow(&b, BUF_UNBOUNDED);
	for (size_t i = 0; i < n; i++) {
		char num[40];
		int len = snprintf(num, sizeof num, "%" PRIx64 " %" PRIx64 " ", v[i].start, v[i].size);
		buf_bytes(&b, num, (size_t)len);
		buf_bytes(&b, v[i].name, v[i].name_len);
		buf_u8(&b, '\n');
	}
	int err = 0;
	if (ju__fault() || !buf_ok(&b))
		err = JU_FAIL(JU_ENOMEM, "out of memory for %zu perf map lines", n);
	if (!err) {
		pthread_mutex_lock(&pm.lock);
		err = ensure_file();
		struct stat st;
		if (!err && fstat(pm.fd, &st))
			err = JU_FAIL(JU_EIO, "cannot stat the perf map: %s", strerror(errno));
		if (!err)
			err = ju__ownfile_append(pm.fd, b.p, b.len, "the perf map");
		if (!err && ctx->pm) {
			ctx->pm->undo_from = st.st_size;
			ctx->pm->undo_to = st.st_size + (off_t)b.len;
		}
		pthread_mutex_unlock(&pm.lock);
	}
	buf_free(&b);
	return err;
}

/* The jitdump failed after our lines went in: a publish is all or nothing,
 * so cut them off again -- unless something else in the process (another
 * JIT's perf map writer) appended after them, whose lines we must keep. */
static void pm_unlog_last(struct ju_ctx *ctx)
{
	struct pm_state *s = ctx->pm;
	if (s->undo_to == s->undo_from)
		return;
	pthread_mutex_lock(&pm.lock);
	struct stat st;
	bool ours = pm.fd >= 0 && !fstat(pm.fd, &st) && st.st_size == s->undo_to;
	if (!ours || ftruncate(pm.fd, s->undo_from))
		ju__log(ctx, JU_LOG_WARN,
			"perf map: the lines of a failed publish could not be taken back "
			"(%s)",
			ours ? strerror(errno) : "the file grew after them");
	pthread_mutex_unlock(&pm.lock);
	s->undo_from = s->undo_to = 0;
}

/* In a forked child (core.c holds ctx->lock): this process's own file, with
 * everything the context still has published -- once per process, however
 * often it is called. */
static int pm_after_fork(struct ju_ctx *ctx)
{
	pid_t pid = getpid();
	if (ctx->pm->logged == pid)
		return 0;
	pthread_mutex_lock(&pm.lock);
	int err = ensure_file();
	pthread_mutex_unlock(&pm.lock);
	if (!err)
		err = arena_relog(ctx, pm_log_blobs);
	if (!err)
		ctx->pm->logged = pid;
	return err;
}

const ju_channel_ops ju_ch_perfmap = {
	.bit = JU_CH_PERFMAP,
	.name = "perfmap",
	.open = pm_open,
	.close = pm_close,
	.log_blobs = pm_log_blobs,
	.unlog_last = pm_unlog_last,
	.after_fork = pm_after_fork,
};
