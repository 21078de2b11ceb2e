/* SPDX-License-Identifier: MIT */
/* follow.h - files read: a small one whole (a /proc file), or one that
 * another process appends to, followed by its path round after round (the
 * target's perf map and jitdump).
 *
 * Each round looks at the path once (js_follow_look: one stat, and nothing
 * more when nothing was appended: record's cost per round for a file that
 * does not change).  When there is more, js_follow_read opens the file,
 * checks that it is still the one looked at, and feeds the reader the
 * bytes after those it consumed, up to the size the file had when it was
 * opened (a writer that keeps appending cannot keep us here).  Another
 * inode (the writer replaced the file) or a file shorter than what was
 * consumed (truncated: a new process with the same pid) is a new file: the
 * reader forgets what it read and reads it from its start.
 *
 * What the bytes mean is the reader's: it consumes whole items and says how
 * many bytes the next one needs, and may step over bytes it does not want
 * to see (js_follow.skip: a jitdump's code) without their being read.
 */
#ifndef JS_FOLLOW_H
#define JS_FOLLOW_H

#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* The first size of the buffer the reader is fed from. */
#define JS_FOLLOW_BUF (1u << 18)

/* Where the reader is in the file. */
typedef struct js_follow {
	dev_t dev; /* the file read last (once the reader found one) */
	ino_t ino;
	uint64_t off;  /* bytes consumed: the next read starts here */
	uint64_t skip; /* bytes after off to step over without reading them */
	int fd;        /* the file, for reads by offset: valid only while the reader is fed */
	uint64_t read; /* bytes read from this file since its start */
	bool capped;   /* past the bound on bytes: not read further (until a new file) */
	uint64_t size; /* the file's size at the last read */
	bool at_end;   /* the last read fed the reader up to size (no bound, budget or error stopped it) */
} js_follow;

/* The bounds on reading one file (a target's perf map or jitdump can be
 * made as large as its owner likes, and sparse: 16 GB of zeros cost no
 * disk).  A file is read up to `bytes` in all (then it is followed no
 * further) and for at most `ns` per read; a read also stops when SIGINT,
 * SIGTERM or SIGHUP is pending (blocked, as record blocks them) so that
 * the run can end.  What was read stays fed; the stop is an error of its
 * own, saying which bound (--max-read, --max-read-time) it met. */
#define JS_FOLLOW_MAX_BYTES ((uint64_t)1 << 30)         /* 1 GiB */
#define JS_FOLLOW_MAX_NS ((uint64_t)5 * 1000000000u)    /* 5 s */
void js_follow_set_bounds(uint64_t bytes, uint64_t ns); /* 0: the default */
uint64_t js_follow_max_bytes(void);
uint64_t js_follow_max_ns(void);

/* A round's budget for reading files, shared by every read until the
 * next call (record of several processes: one process's file must not
 * hold up the sampling of the others).  A read that finds it spent stops
 * once it made some progress (one buffer, JS_FOLLOW_BUF: a small file is
 * still read whole) and the reader consumed every item it was fed, and
 * returns 0 as if it had read all: the next
 * js_follow_look finds the rest (JS_FOLLOW_MORE) and it is read then.
 * 0: no budget (the default). */
void js_follow_round(uint64_t budget_ns);

/* Which file, and which files may be read. */
typedef struct js_follow_path {
	const char *path;
	bool links;       /* a symbolic link is followed (not in a shared /tmp) */
	long owner;       /* the uid the file may have besides ours and root's; -1: any */
	const char *flag; /* the option that reads a file of another owner (messages) */
} js_follow_path;

/* What js_follow_look found at the path. */
enum js_follow_news {
	JS_FOLLOW_NOTHING,  /* the file read before, nothing to read in it */
	JS_FOLLOW_MORE,     /* the file read before, with more to read */
	JS_FOLLOW_NEW_FILE, /* another file, or this one truncated: the reader starts
			     * again (f->off = f->skip = 0) before js_follow_read */
};

/* Look at the file (one stat): *news and what was seen (*st, for
 * js_follow_read).  found: the reader read a file before (f->dev, f->ino);
 * done: it reads no further in that file (an appended tail is not news).
 * 0, or the code with *why ("PATH: reason") when it cannot be read: absent
 * (errnum ENOENT), not a regular file, or of an owner not allowed. */
int js_follow_look(const js_follow *f, const js_follow_path *p, bool found, bool done, struct stat *st,
		   enum js_follow_news *news, js_err *why);

/* The reader's side of js_follow_read.  buf holds len bytes of the file
 * from f->off, the last `fresh` of them read just now.  Returns how many
 * it consumed (it may add to f->skip what follows them), -1 when out of
 * memory.  *need (0 when called): how many bytes, from the first not
 * consumed, it needs before it is fed again; *stop: it reads no further in
 * this file. */
typedef ssize_t js_follow_feed(void *ctx, const uint8_t *buf, size_t len, size_t fresh, size_t *need,
			       bool *stop);

/* Open the file looked at (st), check that it is still that file, take it
 * as the reader's (f->dev, f->ino, *found), and feed the reader what
 * follows f->off up to the size it has when opened.  0, or the code with *why ("PATH:
 * reason"); what was fed before a failure stays fed. */
int js_follow_read(js_follow *f, const js_follow_path *p, const struct stat *st, bool *found,
		   js_follow_feed *feed, void *ctx, js_err *why);

/* js_follow_read in two steps, for a file read as it was at a moment
 * (a dump reads the target's perf map once it let the target go, as it
 * was while the target was stopped): js_follow_open opens the file looked
 * at and takes it as the reader's; js_follow_feed_fd feeds the reader
 * what follows f->off up to size.  Both: 0, or the code with *why. */
int js_follow_open(js_follow *f, const js_follow_path *p, const struct stat *st, bool *found, int *fd,
		   uint64_t *size, js_err *why);
int js_follow_feed_fd(js_follow *f, const js_follow_path *p, int fd, uint64_t size, js_follow_feed *feed,
		      void *ctx, js_err *why);

/* Read the file again from its start, for a reader that forgot what it
 * read (a dump reads the perf map and the jitdump again for the pcs of its
 * stacks): from fd up to size when fd >= 0 (the file js_follow_open
 * opened), else from its path as the first js_follow_look and
 * js_follow_read read it.  0, or the code with *why, as js_follow_read. */
int js_follow_reread(js_follow *f, const js_follow_path *p, int fd, uint64_t size, bool *found,
		     js_follow_feed *feed, void *ctx, js_err *why);

/* A small file (a /proc file) read whole into buf, NUL-terminated: the
 * bytes read (at most len - 1), or -1 with errno as open(2) or read(2)
 * left it. */
ssize_t js_read_small(const char *path, char *buf, size_t len);

#endif
