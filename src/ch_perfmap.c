/* SPDX-License-Identifier: MIT */
/* ch_perfmap.c - channel for perf's symbol map, /tmp/perf-<pid>.map: one
 * line "START SIZE name" (hex) per published blob, or, for a blob with
 * guest frames, one per piece of it named by its chain of guest functions
 * ("Guest frames" below).  perf (report, script, top) and eBPF profilers
 * name samples in anonymous executable memory from it; frames found by
 * frame-pointer walks (perf -g) get their names too.
 *
 * Publishing appends; unpublishing writes nothing at once: a line stays for
 * the samples taken while its blob lived.  So that the file stays bounded
 * under churn (HHVM's and perf-map-agent's users report maps of hundreds of
 * MB), it is compacted when its dead lines outnumber the live ones by more
 * than PM_SLACK: the live lines of every context, in address order, go to a
 * new file that is renamed over the map.  perf, which reads the map by path,
 * then sees the old file or the new one, whole, and never a dead blob's name
 * beside the live one at a reused address.  The file is at most twice the
 * live lines plus PM_SLACK after every unpublish (lines, not blobs: each
 * context counts the pieces of its blobs with guest frames, so that an
 * unpublish knows how many lines it kills); a compaction that cannot
 * run at once (a write failed, another context was busy) is tried again at
 * the next publish or unpublish.
 *
 * One file per process, shared by every context (refcounted, behind one
 * mutex): perf knows only the pid.  Created safely, because /tmp is shared
 * with every user: never through a symbolic link (O_NOFOLLOW), only a regular
 * file with one link, owned by our effective user; the compacted copy is
 * made with O_EXCL, so nothing planted at its name is used.  A file left by
 * an earlier process that had our pid is truncated; one this process already
 * wrote -- by us, or by another perf map writer in the process such as a
 * second JIT -- is appended to.  Lines we did not write are never dropped:
 * once another writer's lines are seen, the map is no longer compacted.
 *
 * A blob published where a dead blob's line still is would share its
 * addresses with that line, and perf names a sample after the first line
 * that holds it: the old name.  So the lines that overlap a new blob are
 * tombstoned in place first: their first byte becomes '#', which perf
 * (and every reader that parses the address) skips; each piece of a blob
 * with guest frames is a line of its own here, tombstoned when new code
 * overlaps it.  An index of our lines
 * that are not tombstoned (disjoint, by address: lines_ix below) finds them.
 * A dead blob's line otherwise stays: it names the samples taken while the
 * blob lived, and perf has no time to tell them apart by.
 *
 * After fork() the child starts its own file (core.c calls after_fork in the
 * child): a copy of the parent's made in the kernel (copy_file_range) when
 * that holds exactly the live lines, else the live lines written anew.
 */
#include "internal.h"
#include "formats/search.h"
#include "ownfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PM_PATH_FMT "/tmp/perf-%d.map"
/* Dead lines allowed beyond the live ones before the map is compacted: small
 * maps are not rewritten at every unpublish, and the rewrite's cost (a line
 * per live blob) is spread over at least as many unpublishes. */
#define PM_SLACK 1024

/* The process's file. */
static struct {
	pthread_mutex_t lock;
	pid_t pid;               /* process the open fd belongs to */
	int fd;                  /* -1 when closed */
	unsigned refs;           /* contexts with the channel on */
	pid_t started;           /* the process whose file we began (never truncate it again) */
	size_t size;             /* bytes in the file, as this process wrote them */
	size_t lines;            /* lines in it */
	size_t live;             /* lines of blobs still published, over every context */
	bool foreign;            /* another writer's lines are in it: never compact it */
	bool pending;            /* a compaction is due */
	struct pm_state *states; /* every context with the channel on */
	byte_buf *collect;       /* during a compaction: where pm_collect writes */
	size_t collected;        /* lines it wrote */
} pm = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

/* A context's part. */
struct pm_state {
	struct ju_ctx *ctx;
	struct pm_state *next; /* in pm.states */
	pid_t logged;          /* the process whose file has this context's blobs */
	size_t live;           /* this context's lines in pm.live */
	size_t undo_n;         /* lines of the last append ... */
	off_t undo_from;       /* the file's length before it ... */
	off_t undo_to;         /* ... and after it; equal when there is nothing to undo */
	bool warned;           /* said that the map is not compacted */
	/* Its live blobs with guest frames, by start: the lines each has beyond
	 * one (0: gone), so that an unpublish counts the lines it kills. */
	struct pm_tree {
		uint64_t start;
		uint32_t extra;
	} *trees;
	size_t n_trees, cap_trees, dead_trees;
	uint64_t *undo_trees; /* the starts the last append added there */
	size_t undo_nt;
};

/* fork() must not copy the mutex while another thread holds it.  Registered
 * at load time, before core.c's handlers (which come with the first
 * ju_open), so our prepare runs after core.c has taken the context locks
 * (the order a publish takes them in) and our child handler runs before
 * core.c's calls after_fork. */
static void pm_prepare(void)
{
	pthread_mutex_lock(&pm.lock);
}
static void pm_release(void)
{
	pthread_mutex_unlock(&pm.lock);
}

__attribute__((constructor)) static void pm_init(void)
{
	pthread_atfork(pm_prepare, pm_release, pm_release);
}

/* ---- the index of our lines ------------------------------------------------ */

/* A line of ours in the file, not tombstoned: [start, end) and the offset
 * of its first byte.  Such lines never overlap (a line that a new one
 * overlaps is tombstoned first), so they sort by start. */
typedef struct pm_line {
	uint64_t start, end, off;
} pm_line;

/* Sorted blocks of sorted lines: a lookup is two binary searches, an insert
 * moves at most one block. */
enum { IX_BLOCK = 256 };
typedef struct ix_block {
	uint32_t n;
	pm_line l[IX_BLOCK];
} ix_block;

static struct {
	ix_block **b;
	size_t nb, cap;
	bool lost; /* a line could not be indexed: the map needs a compaction */
} ix;

static void ix_clear(void)
{
	for (size_t i = 0; i < ix.nb; i++)
		free(ix.b[i]);
	free(ix.b);
	ix.b = NULL;
	ix.nb = ix.cap = 0;
	ix.lost = false;
}

/* The block that would hold a line starting at addr: the last one whose
 * first line starts at or below it (or the first). */
static size_t ix_block_of(uint64_t addr)
{
	size_t lo = 0, hi = ix.nb;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix.b[mid]->l[0].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? lo - 1 : 0;
}

/* Index in a block of the first line starting after addr. */
static uint32_t ix_after(const ix_block *b, uint64_t addr)
{
	return (uint32_t)FMT_COUNT_LE(b->l, b->n, start, addr);
}

static void ix_drop_block(size_t k)
{
	free(ix.b[k]);
	memmove(ix.b + k, ix.b + k + 1, (ix.nb - k - 1) * sizeof *ix.b);
	ix.nb--;
}

/* Take out the lines that overlap [start, end); their offsets go to
 * off[0..*n), at most max of them.  True if more are left. */
static bool ix_take(uint64_t start, uint64_t end, uint64_t *off, size_t max, size_t *n)
{
	*n = 0;
	if (!ix.nb)
		return false;
	size_t k = ix_block_of(start);
	uint32_t i = ix_after(ix.b[k], start);
	/* the line starting at or below start, if any, may reach into it */
	if (i > 0)
		i--;
	else if (k > 0)
		k--, i = ix.b[k]->n - 1;
	while (k < ix.nb) {
		ix_block *b = ix.b[k];
		while (i < b->n && b->l[i].start < end) {
			if (b->l[i].end <= start) {
				i++;
				continue;
			}
			if (*n == max)
				return true;
			off[(*n)++] = b->l[i].off;
			memmove(b->l + i, b->l + i + 1, (b->n - i - 1) * sizeof *b->l);
			b->n--;
		}
		if (i < b->n)
			return false;
		if (!b->n)
			ix_drop_block(k);
		else
			k++;
		i = 0;
	}
	return false;
}

static void ix_insert(uint64_t start, uint64_t end, uint64_t off)
{
	if (!ix.nb || ix.nb == ix.cap) {
		if (ix.nb == ix.cap) {
			size_t cap = ix.cap ? 2 * ix.cap : 16;
			ix_block **p = ju__realloc(ix.b, cap * sizeof *p);
			if (!p) {
				ix.lost = true;
				return;
			}
			ix.b = p;
			ix.cap = cap;
		}
		if (!ix.nb) {
			ix.b[0] = ju__malloc(sizeof **ix.b);
			if (!ix.b[0]) {
				ix.lost = true;
				return;
			}
			ix.b[0]->n = 0;
			ix.nb = 1;
		}
	}
	size_t k = ix_block_of(start);
	ix_block *b = ix.b[k];
	if (b->n == IX_BLOCK) { /* split it in two halves */
		ix_block *c = ju__malloc(sizeof *c);
		if (!c) {
			ix.lost = true;
			return;
		}
		c->n = IX_BLOCK / 2;
		memcpy(c->l, b->l + IX_BLOCK / 2, c->n * sizeof *c->l);
		b->n = IX_BLOCK / 2;
		memmove(ix.b + k + 2, ix.b + k + 1, (ix.nb - k - 1) * sizeof *ix.b);
		ix.b[k + 1] = c;
		ix.nb++;
		if (start >= c->l[0].start)
			b = c;
	}
	uint32_t i = ix_after(b, start);
	memmove(b->l + i + 1, b->l + i, (b->n - i) * sizeof *b->l);
	b->l[i] = (pm_line){ start, end, off };
	b->n++;
}

/* Forget the lines at or past `off` (an append taken back). */
static void ix_drop_from(uint64_t off)
{
	for (size_t k = 0; k < ix.nb;) {
		ix_block *b = ix.b[k];
		uint32_t m = 0;
		for (uint32_t i = 0; i < b->n; i++)
			if (b->l[i].off < off)
				b->l[m++] = b->l[i];
		b->n = m;
		if (!m)
			ix_drop_block(k);
		else
			k++;
	}
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
	if (!p || sscanf(p + 1,
			 " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			 "%*d %*d %llu",
			 &ticks) != 1)
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
	int fd = ju__ownfile_open(path, O_RDWR, &st); /* readable: a child copies it */
	if (fd < 0)
		return fd;
	if (pm.started != pid && st.st_size && is_stale(&st)) {
		if (ftruncate(fd, 0)) {
			int err = JU_FAIL(JU_EIO, "cannot truncate the stale %s: %s", path, strerror(errno));
			close(fd);
			return err;
		}
		st.st_size = 0;
	}
	if (pm.started != pid || !st.st_size) {
		pm.size = pm.lines = 0;
		pm.foreign = pm.pending = false;
		ix_clear();
	}
	/* What we did not write is another writer's. */
	if ((size_t)st.st_size != pm.size)
		pm.foreign = true;
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
		s->ctx = ctx;
		s->logged = pm.pid;
		s->next = pm.states;
		pm.states = s;
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
	/* ju_close needs nothing published, but a channel turned off in a forked
	 * child closes with its blobs published: they are no longer ours. */
	pm.live -= ctx->pm->live;
	for (struct pm_state **p = &pm.states; *p; p = &(*p)->next)
		if (*p == ctx->pm) {
			*p = ctx->pm->next;
			break;
		}
	if (pm.refs && --pm.refs == 0 && pm.fd >= 0) {
		close(pm.fd);
		pm.fd = -1;
	}
	pthread_mutex_unlock(&pm.lock);
	free(ctx->pm->trees);
	free(ctx->pm->undo_trees);
	free(ctx->pm);
	ctx->pm = NULL;
}

/* ---- lines ---------------------------------------------------------------- */

/* v in hex at the end of p[0, 16); returns where it starts. */
static char *hex(char *end, uint64_t v)
{
	do
		*--end = "0123456789abcdef"[v & 15];
	while (v >>= 4);
	return end;
}

/* "START SIZE " and room for a name of len bytes and '\n'; returns where
 * the name goes, or NULL out of memory. */
static char *put_head(byte_buf *b, uint64_t start, uint64_t size, size_t len)
{
	char num[34], *size_end = num + sizeof num - 1;
	*size_end = ' ';
	char *sz = hex(size_end, size);
	*--sz = ' ';
	char *st = hex(sz, start);
	size_t head = (size_t)(num + sizeof num - st);
	uint8_t *p = buf_reserve(b, head + len + 1);
	if (!p)
		return NULL;
	memcpy(p, st, head);
	p[head + len] = '\n';
	return (char *)p + head;
}

/* ---- guest frames: a line per piece --------------------------------------------- */

/* perf names a sample by the one line that holds its address.  A blob with
 * guest frames (ju_inline) is cut into pieces, each a maximal range with
 * one chain of guest functions over it, and gets a line per piece named by
 * the chain, innermost first and the blob's own name last:
 * "guest:leaf <- guest:mid <- guest:run"; a piece outside every inline has
 * the blob's name.  The pieces tile the blob, so its lines never overlap:
 * perf keeps a map's symbols in a tree by start, and which of two
 * overlapping ones a lookup meets first depends on the tree's shape.  (The
 * index of our lines below needs them disjoint too.) */
#define PM_SEP " <- "

typedef struct piece {
	uint32_t lo, hi;
	uint32_t depth;                     /* inlines over it */
	uint32_t path[JU_INLINE_DEPTH_MAX]; /* their indexes + 1, outermost first */
} piece;

typedef void piece_fn(const blob_view *v, const piece *p, void *arg);

static bool same_chain(const blob_view *v, const piece *a, const piece *b)
{
	if (a->depth != b->depth)
		return false;
	for (uint32_t d = 0; d < a->depth; d++)
		if (a->path[d] != b->path[d] &&
		    strcmp(v->inlines[a->path[d] - 1].name, v->inlines[b->path[d] - 1].name))
			return false;
	return true;
}

/* [lo, hi) under the inlines open: it extends the pending piece when it
 * continues it with the same names (two calls of one function side by
 * side), else the pending piece is done. */
static void offer(const blob_view *v, piece *pend, const piece *open, uint32_t lo, uint32_t hi, piece_fn *fn,
		  void *arg)
{
	if (lo >= hi)
		return;
	if (pend->hi > pend->lo && pend->hi == lo && same_chain(v, pend, open)) {
		pend->hi = hi;
		return;
	}
	if (pend->hi > pend->lo)
		fn(v, pend, arg);
	*pend = *open;
	pend->lo = lo;
	pend->hi = hi;
}

/* Each piece of a blob with guest frames, in address order.  The tree is in
 * pre-order (core.c checked it), so a sweep with the open inlines on a
 * stack finds them. */
static void for_each_piece(const blob_view *v, piece_fn *fn, void *arg)
{
	const ju_inline *in = v->inlines;
	piece open = { 0 }, pend = { 0 };
	uint32_t pos = 0;
	for (size_t i = 0; i <= v->n_inlines; i++) {
		uint32_t parent = i < v->n_inlines ? in[i].parent : 0;
		while (open.depth && open.path[open.depth - 1] != parent) {
			uint32_t end = in[open.path[open.depth - 1] - 1].end;
			offer(v, &pend, &open, pos, end, fn, arg);
			pos = end;
			open.depth--;
		}
		uint32_t to = i < v->n_inlines ? in[i].start : (uint32_t)v->size;
		offer(v, &pend, &open, pos, to, fn, arg);
		pos = to;
		if (i < v->n_inlines)
			open.path[open.depth++] = (uint32_t)i + 1;
	}
	if (pend.hi > pend.lo)
		fn(v, &pend, arg);
}

static void count_piece(const blob_view *v, const piece *p, void *arg)
{
	(void)v, (void)p;
	++*(size_t *)arg;
}

/* The lines a blob has in the map. */
static size_t lines_of(const blob_view *v)
{
	if (!v->n_inlines)
		return 1;
	size_t n = 0;
	for_each_piece(v, count_piece, &n);
	return n;
}

typedef struct put_arg {
	byte_buf *b;
	pm_line *at; /* where each line goes: the blob's address range, its offset in b */
} put_arg;

static void put_piece(const blob_view *v, const piece *p, void *arg)
{
	put_arg *a = arg;
	size_t len = v->name_len;
	for (uint32_t d = 0; d < p->depth; d++)
		len += strlen(v->inlines[p->path[d] - 1].name) + strlen(PM_SEP);
	*a->at++ = (pm_line){ v->start + p->lo, v->start + p->hi, a->b->len };
	char *name = put_head(a->b, v->start + p->lo, p->hi - p->lo, len);
	if (!name)
		return;
	for (uint32_t d = p->depth; d-- > 0;) {
		const char *fn = v->inlines[p->path[d] - 1].name;
		size_t n = strlen(fn);
		memcpy(name, fn, n);
		memcpy(name + n, PM_SEP, strlen(PM_SEP));
		name += n + strlen(PM_SEP);
	}
	memcpy(name, v->name, v->name_len);
}

/* A blob's lines into b (returns how many: lines_of(v)); at[] gets each
 * line's range and its offset in b.  A blob without guest frames has the
 * one line "START SIZE name". */
static inline size_t put_blob(byte_buf *b, const blob_view *v, pm_line *at)
{
	if (v->n_inlines) {
		put_arg a = { b, at };
		for_each_piece(v, put_piece, &a);
		return (size_t)(a.at - at);
	}
	/* the common case, written out (a publish's cost is counted per blob) */
	*at = (pm_line){ v->start, v->start + v->size, b->len };
	char num[34], *size_end = num + sizeof num - 1;
	*size_end = ' ';
	char *size = hex(size_end, v->size);
	*--size = ' ';
	char *start = hex(size, v->start);
	size_t head = (size_t)(num + sizeof num - start);
	uint8_t *p = buf_reserve(b, head + v->name_len + 1);
	if (!p)
		return 1;
	memcpy(p, start, head);
	memcpy(p + head, v->name, v->name_len);
	p[head + v->name_len] = '\n';
	return 1;
}

/* ---- the blobs with guest frames of a context ------------------------------------ */

/* The entry for start, or where it would go. */
static size_t tree_find(const struct pm_state *s, uint64_t start)
{
	size_t i = FMT_COUNT_LE(s->trees, s->n_trees, start, start);
	return i && s->trees[i - 1].start == start ? i - 1 : i;
}

static int tree_add(struct pm_state *s, uint64_t start, uint32_t extra)
{
	size_t i = tree_find(s, start);
	if (i < s->n_trees && s->trees[i].start == start) {
		s->dead_trees -= !s->trees[i].extra;
		s->trees[i].extra = extra;
		return 0;
	}
	if (s->n_trees == s->cap_trees) {
		size_t cap = s->cap_trees ? 2 * s->cap_trees : 16;
		struct pm_tree *p = ju__realloc(s->trees, cap * sizeof *p);
		if (!p)
			return JU_FAIL(JU_ENOMEM, "out of memory for the perf map's guest frames");
		s->trees = p;
		s->cap_trees = cap;
	}
	memmove(s->trees + i + 1, s->trees + i, (s->n_trees - i) * sizeof *s->trees);
	s->trees[i] = (struct pm_tree){ start, extra };
	s->n_trees++;
	return 0;
}

/* The lines beyond one that the blob at start had; its entry goes.  Dead
 * entries are squeezed out once they are half the table. */
static uint32_t tree_take(struct pm_state *s, uint64_t start)
{
	size_t i = tree_find(s, start);
	if (i == s->n_trees || s->trees[i].start != start || !s->trees[i].extra)
		return 0;
	uint32_t extra = s->trees[i].extra;
	s->trees[i].extra = 0;
	if (++s->dead_trees > s->n_trees / 2) {
		size_t m = 0;
		for (size_t j = 0; j < s->n_trees; j++)
			if (s->trees[j].extra)
				s->trees[m++] = s->trees[j];
		s->n_trees = m;
		s->dead_trees = 0;
	}
	return extra;
}

static size_t dead_lines(void)
{
	return pm.lines > pm.live ? pm.lines - pm.live : 0;
}

/* Append b (n lines) to this process's file; pm.lock held. */
static int append_lines(struct ju_ctx *ctx, const byte_buf *b, size_t n)
{
	int err = ensure_file();
	struct stat st;
	if (!err && fstat(pm.fd, &st))
		err = JU_FAIL(JU_EIO, "cannot stat the perf map: %s", strerror(errno));
	if (!err)
		err = ju__ownfile_append(pm.fd, b->p, b->len, "the perf map");
	if (err)
		return err;
	if ((size_t)st.st_size != pm.size)
		pm.foreign = true; /* another writer appended since our last line */
	pm.size = (size_t)st.st_size + b->len;
	pm.lines += n;
	ctx->pm->undo_n = n;
	ctx->pm->undo_from = st.st_size;
	ctx->pm->undo_to = st.st_size + (off_t)b->len;
	return 0;
}

/* ---- compaction ------------------------------------------------------------ */

/* Where the collected lines are in pm.collect, for the index. */
static struct {
	pm_line *l;
	size_t n, cap;
} cl;

/* ctx->live->relog's sink while compacting: the lines go to pm.collect. */
static int pm_collect(struct ju_ctx *ctx, const blob_view *v, size_t n)
{
	(void)ctx;
	size_t lines = 0;
	for (size_t i = 0; i < n; i++)
		lines += lines_of(&v[i]);
	if (cl.n + lines > cl.cap) {
		size_t cap = cl.cap ? cl.cap : 256;
		while (cap < cl.n + lines)
			cap *= 2;
		pm_line *p = ju__realloc(cl.l, cap * sizeof *p);
		if (!p)
			return JU_FAIL(JU_ENOMEM, "out of memory indexing a compacted perf map");
		cl.l = p;
		cl.cap = cap;
	}
	for (size_t i = 0; i < n; i++)
		cl.n += put_blob(pm.collect, &v[i], cl.l + cl.n);
	pm.collected += lines;
	return buf_ok(pm.collect) ? 0 : JU_FAIL(JU_ENOMEM, "out of memory for a compacted perf map");
}

static void collect_begin(byte_buf *b)
{
	pm.collect = b;
	pm.collected = 0;
	cl.n = 0;
}

/* Index the collected lines, now at `base` in the file. */
static void collect_index(uint64_t base)
{
	for (size_t i = 0; i < cl.n; i++)
		ix_insert(cl.l[i].start, cl.l[i].end, base + cl.l[i].off);
	free(cl.l);
	cl.l = NULL;
	cl.n = cl.cap = 0;
}

/* The live lines of every context into b.  The caller holds its own
 * context's lock; the others' are only tried (a publish holds its context's
 * lock while it waits for core.c's file lock, which we hold), and when one
 * is busy nothing is collected: JU_EBUSY, try later. */
static int collect_live(struct ju_ctx *ctx, byte_buf *b)
{
	struct pm_state *locked = NULL;
	int err = 0;
	for (struct pm_state *s = pm.states; s && !err; s = s->next) {
		if (s->ctx == ctx)
			continue;
		if (pthread_mutex_trylock(&s->ctx->lock)) {
			locked = s;
			err = JU_EBUSY;
		}
	}
	collect_begin(b);
	for (struct pm_state *s = pm.states; s && !err; s = s->next)
		err = s->ctx->live->relog(s->ctx, pm_collect);
	pm.collect = NULL;
	for (struct pm_state *s = pm.states; s != locked; s = s->next)
		if (s->ctx != ctx)
			pthread_mutex_unlock(&s->ctx->lock);
	return err;
}

/* Replace the map with its live lines; pm.lock held, and core.c's file
 * lock (no append in between).  On failure the old map stays as it was. */
static int compact(struct ju_ctx *ctx)
{
	if (pm.fd < 0 || pm.pid != getpid())
		return 0; /* nothing of this process's yet */
	byte_buf b;
	buf_init_grow(&b, BUF_UNBOUNDED);
	int err = collect_live(ctx, &b);
	if (err) {
		buf_free(&b);
		free(cl.l);
		cl.l = NULL;
		cl.n = cl.cap = 0;
		return err;
	}
	char path[64], tmp[80];
	path_of(path, sizeof path, pm.pid);
	int fd = ju__ownfile_create_new(path, tmp, sizeof tmp);
	err = fd < 0 ? fd : ju__ownfile_append(fd, b.p, b.len, "the compacted perf map");
	if (!err)
		err = ju__ownfile_replace(tmp, path);
	else if (fd >= 0)
		unlink(tmp);
	if (err) {
		if (fd >= 0)
			close(fd);
		buf_free(&b);
		free(cl.l);
		cl.l = NULL;
		cl.n = cl.cap = 0;
		return err;
	}
	close(pm.fd);
	pm.fd = fd;
	pm.size = b.len;
	pm.lines = pm.collected;
	pm.pending = false;
	ix_clear();
	collect_index(0);
	for (struct pm_state *s = pm.states; s; s = s->next)
		s->logged = pm.pid; /* the new file has every context's blobs */
	buf_free(&b);
	return 0;
}

/* Compact when due; a failure only leaves it due.  pm.lock held. */
static void compact_if_due(struct ju_ctx *ctx)
{
	if (dead_lines() > pm.live + PM_SLACK || ix.lost)
		pm.pending = true;
	if (!pm.pending)
		return;
	if (pm.foreign) {
		if (!ctx->pm->warned)
			ju__log(ctx, JU_LOG_WARN,
				"perf map: another writer in this process appends to it, so it is not "
				"compacted (that would drop the other writer's lines); said once");
		ctx->pm->warned = true;
		pm.pending = false;
		return;
	}
	int err = compact(ctx);
	if (err && err != JU_EBUSY)
		ju__log(ctx, JU_LOG_DEBUG, "perf map: compaction failed, tried again later: %s", ju_errmsg());
	ju__clear_error(); /* the publish or unpublish itself goes on */
}

/* ---- the channel -------------------------------------------------------- */

/* One append per batch: a reader never sees half a batch, and a failure is
 * undone in one step.  A compaction that is due goes first (nothing of this
 * batch is in the arenas yet). */
/* Tombstone the lines at off[0..n): '#' in place of their first byte.  The
 * map is appended to through an O_APPEND descriptor, on which pwrite would
 * append too; the flag is off for the moment (pm.lock held, and core.c's
 * file lock).  A line that could not be changed stays, and a compaction
 * (which leaves only the live lines) is due. */
static void tombstone(const uint64_t *off, size_t n)
{
	if (!n)
		return;
	int fl = fcntl(pm.fd, F_GETFL);
	bool ok = fl >= 0 && !fcntl(pm.fd, F_SETFL, fl & ~O_APPEND);
	for (size_t i = 0; ok && i < n; i++)
		ok = !ju__fault() && pwrite(pm.fd, "#", 1, (off_t)off[i]) == 1;
	if (fl >= 0 && fcntl(pm.fd, F_SETFL, fl))
		ok = false;
	if (!ok)
		pm.pending = true;
}

/* Take the lines that the new blobs overlap out of the index and out of
 * perf's view (see the top). */
static void retire_overlaps(const blob_view *v, size_t n)
{
	if (!ix.nb || ensure_file())
		return;
	enum { MAX = 64 };
	uint64_t off[MAX];
	for (size_t i = 0; i < n; i++) {
		size_t got;
		bool more;
		do {
			more = ix_take(v[i].start, v[i].start + v[i].size, off, MAX, &got);
			tombstone(off, got);
		} while (more);
	}
}

/* The blobs with guest frames of a batch into the context's table,
 * remembered so that a batch taken back takes them out again. */
static int note_trees(struct pm_state *s, const blob_view *v, size_t n, size_t trees)
{
	s->undo_trees = ju__malloc(trees * sizeof *s->undo_trees);
	if (!s->undo_trees)
		return JU_FAIL(JU_ENOMEM, "out of memory for the perf map's guest frames");
	for (size_t i = 0; i < n; i++) {
		if (!v[i].n_inlines)
			continue;
		int err = tree_add(s, v[i].start, (uint32_t)(lines_of(&v[i]) - 1));
		if (err)
			return err;
		s->undo_trees[s->undo_nt++] = v[i].start;
	}
	return 0;
}

static void drop_trees(struct pm_state *s)
{
	while (s->undo_nt)
		tree_take(s, s->undo_trees[--s->undo_nt]);
	free(s->undo_trees);
	s->undo_trees = NULL;
}

static int pm_log_blobs(struct ju_ctx *ctx, const blob_view *v, size_t n)
{
	struct pm_state *s = ctx->pm;
	free(s->undo_trees); /* the batch before is kept */
	s->undo_trees = NULL;
	s->undo_nt = 0;
	/* a line per blob, and room for the pieces made when a blob has them */
	size_t lines = 0, trees = 0;
	byte_buf b;
	buf_init_grow(&b, BUF_UNBOUNDED);
	pm_line *at = ju__malloc(n * sizeof *at);
	for (size_t i = 0; at && i < n; i++) {
		if (v[i].n_inlines) {
			pm_line *p = ju__realloc(at, (lines + lines_of(&v[i]) + n - i - 1) * sizeof *at);
			if (!p) {
				free(at);
				at = NULL;
				break;
			}
			at = p;
			trees++;
		}
		lines += put_blob(&b, &v[i], at + lines);
	}
	int err = 0;
	if (!at || ju__fault() || !buf_ok(&b))
		err = JU_FAIL(JU_ENOMEM, "out of memory for %zu perf map lines", lines);
	if (!err && trees)
		err = note_trees(s, v, n, trees);
	if (!err) {
		pthread_mutex_lock(&pm.lock);
		compact_if_due(ctx);
		retire_overlaps(v, n);
		err = append_lines(ctx, &b, lines);
		if (!err) {
			s->live += lines;
			pm.live += lines;
			for (size_t k = 0; k < lines; k++)
				ix_insert(at[k].start, at[k].end, (uint64_t)s->undo_from + at[k].off);
		}
		pthread_mutex_unlock(&pm.lock);
	}
	if (err)
		drop_trees(s);
	free(at);
	buf_free(&b);
	return err;
}

/* The jitdump failed after our lines went in: a publish is all or nothing,
 * so cut them off again -- unless something else in the process (another
 * JIT's perf map writer) appended after them, whose lines we must keep. */
static void pm_unlog_last(struct ju_ctx *ctx)
{
	struct pm_state *s = ctx->pm;
	drop_trees(s);
	if (s->undo_to == s->undo_from)
		return;
	pthread_mutex_lock(&pm.lock);
	s->live -= s->undo_n;
	pm.live -= s->undo_n;
	struct stat st;
	bool ours = pm.fd >= 0 && !fstat(pm.fd, &st) && st.st_size == s->undo_to;
	if (ours && !ftruncate(pm.fd, s->undo_from)) {
		pm.size = (size_t)s->undo_from;
		pm.lines -= s->undo_n;
		ix_drop_from((uint64_t)s->undo_from);
	} else {
		/* they stay, dead */
		ju__log(ctx, JU_LOG_WARN,
			"perf map: the lines of a failed publish could not be taken back "
			"(%s)",
			ours ? strerror(errno) : "the file grew after them");
	}
	pthread_mutex_unlock(&pm.lock);
	s->undo_from = s->undo_to = 0;
	s->undo_n = 0;
}

/* ju_unpublish_all is how a program ends (ju_close wants nothing
 * published): perf reports after the process exits, and names the samples
 * of every blob that ran from the map then, so the last unpublish_all leaves
 * the map as it is.  A compaction that is due by then runs at the next
 * publish or unpublish, if one comes. */
static void pm_blobs_gone_at(struct ju_ctx *ctx, const uint64_t *starts, size_t n, bool all)
{
	struct pm_state *s = ctx->pm;
	size_t lines = n; /* a line each, and a blob with guest frames its pieces */
	if (all) {
		lines = s->live;
		s->n_trees = s->dead_trees = 0;
	}
	for (size_t i = 0; !all && s->n_trees && i < n; i++)
		lines += tree_take(s, starts[i]);
	pthread_mutex_lock(&pm.lock);
	lines = lines < s->live ? lines : s->live;
	s->live -= lines;
	pm.live -= lines;
	if (all)
		pm.pending = pm.pending || dead_lines() > pm.live + PM_SLACK;
	else
		compact_if_due(ctx);
	pthread_mutex_unlock(&pm.lock);
}

/* In a forked child, pm.fd still the parent's file, whose first pm.size bytes
 * are what it held at fork() (the fork handlers held pm.lock; what the
 * parent appends later lies beyond).  If those are exactly the live lines,
 * the child's new file gets a copy made by the kernel and every context is
 * done; returns 1 when the lines must be written anew instead.  pm.lock
 * held. */
static int copy_parent_map(void)
{
	int from = pm.fd;
	size_t len = pm.size, lines = pm.lines;
	bool exact = !pm.foreign && lines == pm.live;
	/* A byte for byte copy keeps the parent's index; open_file starts an
	 * empty one. */
	__typeof__(ix) kept = ix;
	ix.b = NULL;
	ix.nb = ix.cap = 0;
	pm.fd = -1;
	int err = open_file();
	if (err || !exact || pm.foreign || !len) {
		close(from);
		for (size_t i = 0; i < kept.nb; i++)
			free(kept.b[i]);
		free(kept.b);
		return err ? err : 1;
	}
	ix_clear();
	ix = kept;
	/* copy_file_range refuses an O_APPEND target; no other thread runs in
	 * a child yet. */
	loff_t in = 0, out = 0;
	bool ok = !fcntl(pm.fd, F_SETFL, 0);
	while (ok && (size_t)in < len) {
		ssize_t n = ju__fault() ? (errno = EIO, -1)
					: copy_file_range(from, &in, pm.fd, &out, len - (size_t)in, 0);
		ok = n > 0 || (n < 0 && errno == EINTR);
	}
	close(from);
	if (!ok && ftruncate(pm.fd, 0))
		err = JU_FAIL(JU_EIO,
			      "copying the parent's perf map failed, and so did emptying the copy: %s",
			      strerror(errno));
	if (fcntl(pm.fd, F_SETFL, O_APPEND) && !err)
		err = JU_FAIL(JU_EIO, "cannot set flags on the perf map: %s", strerror(errno));
	if (err || !ok) {
		ix_clear(); /* the copy is empty or gone: its lines are written anew */
		return err ? err : 1;
	}
	pm.size = len;
	pm.lines = lines;
	for (struct pm_state *s = pm.states; s; s = s->next)
		s->logged = pm.pid;
	return 0;
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
	int err = pm.fd >= 0 && pm.pid != pid ? copy_parent_map() : 1;
	if (err == 1)
		err = ensure_file();
	else if (!err && ctx->pm->logged != pid)
		err = JU_FAIL(JU_EIO, "internal error: the perf map copy missed a context");
	if (!err && ctx->pm->logged != pid) {
		/* lines for blobs already counted live, in one append */
		byte_buf b;
		buf_init_grow(&b, BUF_UNBOUNDED);
		collect_begin(&b);
		err = ctx->live->relog(ctx, pm_collect);
		pm.collect = NULL;
		if (!err)
			err = append_lines(ctx, &b, pm.collected);
		if (!err)
			collect_index((uint64_t)ctx->pm->undo_from);
		free(cl.l);
		cl.l = NULL;
		cl.n = cl.cap = 0;
		buf_free(&b);
	}
	pthread_mutex_unlock(&pm.lock);
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
	.blobs_gone_at = pm_blobs_gone_at,
	.after_fork = pm_after_fork,
};
