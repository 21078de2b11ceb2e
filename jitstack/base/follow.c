/* SPDX-License-Identifier: MIT */
/* follow.c - following a file another process appends to (see follow.h). */
#include "base/follow.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* May we read a file this user owns?  perf reads a map only when it is its
 * own user's or root's (util/symbol.c, "file not owned by current user or
 * root"); the target's own user may write it too. */
static bool owner_ok(const js_follow_path *p, uid_t uid)
{
	return p->owner < 0 || uid == 0 || uid == geteuid() || uid == (uid_t)p->owner;
}

int js_follow_look(const js_follow *f, const js_follow_path *p, bool found, bool done, struct stat *st,
		   enum js_follow_news *news, js_err *why)
{
	if (p->links ? stat(p->path, st) : lstat(p->path, st))
		return js_fail(why, JS_EXIT_FAILURE, errno, "%s: %s", p->path, strerror(errno));
	if (!S_ISREG(st->st_mode))
		return js_fail(why, JS_EXIT_FAILURE, EINVAL, "%s: not a regular file", p->path);
	if (!owner_ok(p, st->st_uid))
		return js_fail(why, JS_EXIT_FAILURE, EPERM,
			       "%s: owned by user %u, neither the target's nor ours nor root: not read "
			       "(%s reads it)",
			       p->path, (unsigned)st->st_uid, p->flag);
	uint64_t size = (uint64_t)st->st_size;
	bool same = found && st->st_dev == f->dev && st->st_ino == f->ino;
	if (same && size >= f->off && (size == f->off + f->skip || done || f->capped))
		*news = JS_FOLLOW_NOTHING;
	else if (!same || size < f->off)
		*news = JS_FOLLOW_NEW_FILE;
	else
		*news = JS_FOLLOW_MORE;
	return 0;
}

static uint64_t max_bytes = JS_FOLLOW_MAX_BYTES, max_ns = JS_FOLLOW_MAX_NS;

void js_follow_set_bounds(uint64_t bytes, uint64_t ns)
{
	max_bytes = bytes ? bytes : JS_FOLLOW_MAX_BYTES;
	max_ns = ns ? ns : JS_FOLLOW_MAX_NS;
}

uint64_t js_follow_max_bytes(void)
{
	return max_bytes;
}

uint64_t js_follow_max_ns(void)
{
	return max_ns;
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t round_end; /* js_follow_round: 0, none */

void js_follow_round(uint64_t budget_ns)
{
	round_end = budget_ns ? mono_ns() + budget_ns : 0;
}

/* A signal that ends the run waits, blocked (record): stop reading. */
static bool ending(void)
{
	sigset_t pending;
	return !sigpending(&pending) && (sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM) ||
					 sigismember(&pending, SIGHUP));
}

/* Step over what f->skip says is still to be skipped, within size. */
static void step_over(js_follow *f, uint64_t size)
{
	uint64_t n = size - f->off < f->skip ? size - f->off : f->skip;
	f->off += n;
	f->skip -= n;
}

/* Feed the reader from f->off up to size, growing the buffer for an item
 * that needs more.  0 or an errno. */
static int feed_from(js_follow *f, int fd, uint64_t size, js_follow_feed *feed, void *ctx)
{
	size_t cap = JS_FOLLOW_BUF, have = 0;
	if (!f->off && !f->skip) /* from the start: a new file, or read again */
		f->read = 0, f->capped = false;
	f->at_end = false;
	if (f->capped)
		return 0;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return ENOMEM;
	int err = 0;
	uint64_t deadline = mono_ns() + max_ns;
	for (bool stop = false, first = true; !stop; first = false) {
		if (f->skip && !have)
			step_over(f, size);
		if (f->off + have >= size)
			break;
		if (f->read >= max_bytes) {
			f->capped = true;
			err = EFBIG;
			break;
		}
		uint64_t now = mono_ns();
		if (now >= deadline) {
			err = ETIMEDOUT;
			break;
		}
		if (round_end && now >= round_end && !first && !have) {
			err = EAGAIN; /* the rest in a later round, from an item's start */
			break;
		}
		if (ending()) {
			err = EINTR;
			break;
		}
		size_t want = cap - have;
		if (want > size - f->off - have)
			want = (size_t)(size - f->off - have);
		ssize_t n = pread(fd, buf + have, want, (off_t)(f->off + have));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : 0;
			break;
		}
		have += (size_t)n;
		f->read += (uint64_t)n;
		size_t need = 0;
		ssize_t used = feed(ctx, buf, have, (size_t)n, &need, &stop);
		if (used < 0) {
			err = ENOMEM;
			break;
		}
		f->off += (uint64_t)used;
		memmove(buf, buf + used, have - (size_t)used);
		have -= (size_t)used;
		if (need > cap) { /* bounded by the reader */
			uint8_t *nb = realloc(buf, need);
			if (!nb) {
				err = ENOMEM;
				break;
			}
			buf = nb;
			cap = need;
		}
	}
	free(buf);
	f->size = size;
	f->at_end = !err;
	return err;
}

int js_follow_open(js_follow *f, const js_follow_path *p, const struct stat *st, bool *found, int *fd,
		   uint64_t *size, js_err *why)
{
	*fd = open(p->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | (p->links ? 0 : O_NOFOLLOW));
	struct stat fst;
	if (*fd < 0 || fstat(*fd, &fst) || !S_ISREG(fst.st_mode) || fst.st_ino != st->st_ino ||
	    fst.st_dev != st->st_dev) {
		int err = *fd < 0 ? errno : EAGAIN;
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return js_fail(why, JS_EXIT_FAILURE, err, "%s: %s", p->path,
			       err != EAGAIN ? strerror(err) : "replaced while it was opened");
	}
	*found = true;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	*size = (uint64_t)fst.st_size;
	return 0;
}

int js_follow_feed_fd(js_follow *f, const js_follow_path *p, int fd, uint64_t size, js_follow_feed *feed,
		      void *ctx, js_err *why)
{
	f->fd = fd;
	int err = feed_from(f, fd, size, feed, ctx);
	f->fd = -1;
	if (err == EAGAIN)
		return 0; /* the round's budget spent: a later look finds more */
	if (err == EFBIG)
		return js_fail(why, JS_EXIT_FAILURE, err,
			       "%s: read no further than %llu MiB, the bound (--max-read); %llu MiB not read",
			       p->path, (unsigned long long)(max_bytes >> 20),
			       (unsigned long long)((size - f->off) >> 20));
	if (err == ETIMEDOUT)
		return js_fail(
			why, JS_EXIT_FAILURE, err,
			"%s: still reading after %.1f s, the bound (--max-read-time); read up to byte %llu "
			"of %llu",
			p->path, max_ns / 1e9, (unsigned long long)f->off, (unsigned long long)size);
	if (err == EINTR)
		return js_fail(why, JS_EXIT_FAILURE, err, "%s: reading interrupted by a signal", p->path);
	if (err)
		return js_fail(why, JS_EXIT_FAILURE, err, "%s: %s", p->path, strerror(err));
	return 0;
}

int js_follow_read(js_follow *f, const js_follow_path *p, const struct stat *st, bool *found,
		   js_follow_feed *feed, void *ctx, js_err *why)
{
	int fd;
	uint64_t size;
	if (js_follow_open(f, p, st, found, &fd, &size, why))
		return -1;
	int rc = js_follow_feed_fd(f, p, fd, size, feed, ctx, why);
	close(fd);
	return rc;
}

int js_follow_reread(js_follow *f, const js_follow_path *p, int fd, uint64_t size, bool *found,
		     js_follow_feed *feed, void *ctx, js_err *why)
{
	f->off = f->skip = 0;
	if (fd >= 0)
		return js_follow_feed_fd(f, p, fd, size, feed, ctx, why);
	struct stat st;
	enum js_follow_news news;
	*found = false;
	if (js_follow_look(f, p, false, false, &st, &news, why))
		return -1;
	return js_follow_read(f, p, &st, found, feed, ctx, why);
}

ssize_t js_read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, len - 1);
	int e = errno;
	close(fd);
	if (n < 0) {
		errno = e;
		return -1;
	}
	buf[n] = 0;
	return n;
}
