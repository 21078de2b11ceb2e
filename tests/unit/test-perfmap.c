/* SPDX-License-Identifier: MIT */
/* test-perfmap.c - /tmp/perf-<pid>.map: what it holds and how it is opened.
 *
 *   - it lists every published blob, one "START SIZE name" line each (hex,
 *     as perf parses it), whatever the batch order and the name's bytes;
 *   - unpublishing writes nothing; all contexts of the process append to one
 *     file; a context opened after all others closed appends too;
 *   - a failed publish leaves the file as it was, at every fault point and
 *     when the disk takes only part of a write (a file size limit), also
 *     when it is the jitdump, written after the map, that fails;
 *   - a stale file of an earlier process with our pid is truncated, a file
 *     this process wrote before us (another perf map writer) is kept;
 *   - a symbolic link, a FIFO, a file with two links and a file of another
 *     user are refused with JU_EPERM and left untouched.
 *   - a blob with guest frames gets a line per maximal piece with one
 *     chain of guest functions over it, named "leaf <- mid <- run"; the
 *     pieces tile the blob; code published over any of them later leaves
 *     none of its lines but tombstones; churn of such blobs keeps the map
 *     within 2 x live lines + 1024, and a compaction writes exactly the
 *     live pieces again.
 * The cases that need a process whose file was never opened run in forked
 * children.
 */
#include "internal.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void ju__fault_after(long n);
long ju__fault_remaining(void);

static uint8_t *R;
static char path[64];

typedef struct line {
	uint64_t start, size;
	char name[JU_NAME_MAX + 1];
} line;

/* Parse the whole map; returns the line count or -1 on a malformed line. */
static long read_map(line *out, size_t max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char buf[JU_NAME_MAX + 64];
	long n = 0;
	while (fgets(buf, sizeof buf, f)) {
		line l;
		int used = 0;
		size_t len = strlen(buf);
		if (!len || buf[len - 1] != '\n' || (buf[0] == '0' && buf[1] == 'x') ||
		    sscanf(buf, "%" SCNx64 " %" SCNx64 " %n", &l.start, &l.size, &used) != 2 || !used) {
			fclose(f);
			return -1;
		}
		buf[len - 1] = 0;
		snprintf(l.name, sizeof l.name, "%s", buf + used);
		if ((size_t)n < max)
			out[n] = l;
		n++;
	}
	fclose(f);
	return n;
}

static long size_of(const char *p)
{
	struct stat st;
	return lstat(p, &st) ? -1 : (long)st.st_size;
}

static ju_ctx *open_map(int want)
{
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_PERFMAP, .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), want);
	return ctx;
}

static ju_blob leaf(uint32_t at, uint32_t size, const char *name)
{
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = R + at,
			  .size = size,
			  .name = name,
			  .frame = { .kind = JU_FRAME_LEAF } };
}

/* ---- in this process ----------------------------------------------------------- */

static const char *names[] = { "batch:b", "batch:a", "with spaces (and parens)", "ünïcødé→λ", "single" };

static void map_lists_every_published_blob(void)
{
	unlink(path);
	ju_ctx *ctx = open_map(0);
	ju_blob b[] = { leaf(0x200, 0x20, names[0]), leaf(0x100, 0x31, names[1]), leaf(0x300, 0x8, names[2]),
			leaf(0x400, 0x1000, names[3]) };
	CHECK_RC(ju_publish_batch(ctx, b, 4), 0);
	ju_blob s = leaf(0x2000, 1, names[4]);
	CHECK_RC(ju_publish(ctx, &s), 0);
	line l[16];
	long n = read_map(l, 16);
	CHECK(n == 5, "%ld lines (or a malformed one), want 5", n);
	for (long i = 0; i < n && i < 16; i++) {
		const ju_blob *want = i < 4 ? &b[i] : &s;
		CHECK(l[i].start == (uintptr_t)want->start && l[i].size == want->size &&
			      !strcmp(l[i].name, want->name),
		      "line %ld: %" PRIx64 " %" PRIx64 " %s, want %p %zx %s", i, l[i].start, l[i].size,
		      l[i].name, want->start, want->size, want->name);
	}
	long before = size_of(path);
	CHECK_RC(ju_unpublish(ctx, R + 0x100), 0);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK(size_of(path) == before, "unpublishing wrote to the perf map");

	/* A second context appends to the same file, also after the first closed. */
	ju_ctx *two = open_map(0);
	ju_blob t = leaf(0x3000, 0x10, "second");
	CHECK_RC(ju_publish(two, &t), 0);
	CHECK_RC(ju_close(ctx), 0);
	ju_blob u = leaf(0x3100, 0x10, "second-after-close");
	CHECK_RC(ju_publish(two, &u), 0);
	CHECK_RC(ju_unpublish_all(two), 0);
	CHECK_RC(ju_close(two), 0);
	ju_ctx *three = open_map(0);
	ju_blob v = leaf(0x3200, 0x10, "reopened");
	CHECK_RC(ju_publish(three, &v), 0);
	n = read_map(l, 16);
	CHECK(n == 8 && !strcmp(l[5].name, "second") && !strcmp(l[6].name, "second-after-close") &&
		      !strcmp(l[7].name, "reopened"),
	      "%ld lines after more contexts, want 8 in order", n);
	CHECK_RC(ju_unpublish_all(three), 0);
	CHECK_RC(ju_close(three), 0);
}

/* Fail the publish of b at each of its fault points in turn, in a context
 * of its own each time (opened by `open`, the blobs moved past the last
 * run's so that the contexts kept open do not overlap).  A failed
 * allocation fails the publish: the map keeps its size and the context
 * holds nothing.  A failed write turns that file's channel off and the
 * publish goes on (docs/API.md, "When a file cannot be written"): the map
 * keeps its size when it is the one turned off, and takes the batch when
 * the jitdump is.  Returns the number of fault points; *in_jitdump counts
 * those that fell in the jitdump, *taken the batches the map took. */
static long fail_at_each_fault_point(ju_ctx *(*open)(void), const ju_blob *b, size_t nb, long *in_jitdump,
				     long *taken)
{
	static ju_ctx *kept[1000];
	long n = 1;
	*in_jitdump = *taken = 0;
	for (; n < 1000; n++) {
		ju_ctx *ctx = kept[n] = open();
		if (!ctx)
			break;
		ju_blob moved[8];
		for (size_t i = 0; i < nb; i++)
			moved[i] = b[i], moved[i].start = (const uint8_t *)b[i].start + n * 0x200;
		long before = size_of(path);
		ju__fault_after(n);
		int rc = ju_publish_batch(ctx, moved, nb);
		bool hit = ju__fault_remaining() == 0;
		ju__fault_after(0);
		char msg[256];
		snprintf(msg, sizeof msg, "%s", ju_errmsg());
		int pm_err = ju_channel_error(ctx, JU_CH_PERFMAP, NULL);
		int jd_err = ju_channel_error(ctx, JU_CH_JITDUMP, NULL);
		long after = size_of(path);
		if (!hit) {
			CHECK(rc == 0 && !pm_err && !jd_err, "without a fault: %s", msg);
		} else if (rc) {
			*in_jitdump += strstr(msg, "jitdump") != NULL;
			CHECK(after == before && ju_count(ctx) == 0,
			      "fault %ld (%s): the map went from %ld to %ld bytes", n, msg, before, after);
		} else {
			*in_jitdump += jd_err != 0;
			CHECK((pm_err == JU_EIO) != (jd_err == JU_EIO),
			      "fault %ld was absorbed: perfmap error %d, jitdump error %d, want one JU_EIO",
			      n, pm_err, jd_err);
			CHECK(ju_count(ctx) == nb, "fault %ld: %zu blobs published, want %zu", n,
			      ju_count(ctx), nb);
			CHECK(pm_err ? after == before : after > before,
			      "fault %ld (%s off): the map went from %ld to %ld bytes", n,
			      pm_err ? "perfmap" : "jitdump", before, after);
		}
		*taken += rc == 0 && !pm_err;
		if (!hit)
			break;
	}
	for (long k = 1; k <= n && k < 1000; k++)
		if (kept[k]) {
			CHECK_RC(ju_unpublish_all(kept[k]), 0);
			CHECK_RC(ju_close(kept[k]), 0);
			kept[k] = NULL;
		}
	return n - 1;
}

static ju_ctx *open_perfmap(void)
{
	return open_map(0);
}

static ju_ctx *open_both(void)
{
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_PERFMAP | JU_CH_JITDUMP,
			 .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	return ctx;
}

static void failed_publish_leaves_the_map_as_it_was(void)
{
	long lines0 = read_map(NULL, 0);
	ju_blob b[] = { leaf(0x5000, 0x10, "fi:a"), leaf(0x5100, 0x10, "fi:b") };
	long in_jitdump, taken;
	long points = fail_at_each_fault_point(open_perfmap, b, 2, &in_jitdump, &taken);
	printf("a failed publish left the perf map as it was at each of %ld fault points\n", points);
	line l[64];
	long lines = read_map(l, 64);
	CHECK(taken == 1 && lines == lines0 + 2 && !strcmp(l[lines - 2].name, "fi:a") &&
		      !strcmp(l[lines - 1].name, "fi:b"),
	      "%ld lines after the fault runs (%ld before), %ld batches taken, want the batch once", lines,
	      lines0, taken);
}

/* With the jitdump on too, a publish that fails there for want of memory
 * -- after the perf map took its lines -- takes those lines back: all of
 * the publish or none; one whose jitdump write fails keeps them. */
static void publish_failing_in_the_jitdump_leaves_no_map_lines(void)
{
	long lines0 = read_map(NULL, 0);
	ju_blob b[] = { leaf(0x6000, 0x10, "jd:a"), leaf(0x6100, 0x10, "jd:b") };
	long in_jitdump, taken;
	long points = fail_at_each_fault_point(open_both, b, 2, &in_jitdump, &taken);
	CHECK(in_jitdump > 0, "no fault point was in the jitdump, after the perf map");
	printf("a publish failing in the jitdump left the perf map as it was, or took the batch with the "
	       "jitdump off, at each of %ld fault points (%ld in the jitdump)\n",
	       points, in_jitdump);
	line l[128];
	long lines = read_map(l, 128);
	CHECK(taken >= 1 && lines == lines0 + 2 * taken && !strcmp(l[lines - 2].name, "jd:a") &&
		      !strcmp(l[lines - 1].name, "jd:b"),
	      "%ld lines after the fault runs (%ld before), %ld batches taken", lines, lines0, taken);
}

/* ---- in fresh processes -------------------------------------------------------- */

/* Run fn in a child whose pid has no map yet; returns its failures. */
static void in_child(const char *what, void (*fn)(void))
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		unit_failures = 0;
		snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
		unlink(path);
		fn();
		unlink(path);
		fflush(stdout);
		_exit(unit_failures ? 1 : 0);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "%s (status %#x)", what, st);
}

static void write_file(const char *p, const char *text)
{
	FILE *f = fopen(p, "w");
	fputs(text, f);
	fclose(f);
}

static void stale_file_of_an_earlier_process_is_truncated(void)
{
	write_file(path, "dead 10 an-earlier-process\n");
	struct timespec old[2] = { { time(NULL) - 3600, 0 }, { time(NULL) - 3600, 0 } };
	utimensat(AT_FDCWD, path, old, 0);
	ju_ctx *ctx = open_map(0);
	ju_blob b = leaf(0x100, 0x10, "mine");
	CHECK_RC(ju_publish(ctx, &b), 0);
	line l[4];
	long n = read_map(l, 4);
	CHECK(n == 1 && !strcmp(l[0].name, "mine"), "%ld lines: the stale line survived", n);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

static void file_this_process_began_is_kept(void)
{
	write_file(path, "beef 10 another-writer-in-this-process\n");
	ju_ctx *ctx = open_map(0);
	ju_blob b = leaf(0x100, 0x10, "mine");
	CHECK_RC(ju_publish(ctx, &b), 0);
	line l[4];
	long n = read_map(l, 4);
	CHECK(n == 2 && !strcmp(l[0].name, "another-writer-in-this-process") && !strcmp(l[1].name, "mine"),
	      "%ld lines: the other writer's line is gone", n);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

/* The write stops part way (RLIMIT_FSIZE): the part written is cut off. */
static void partial_write_is_cut_off(void)
{
	ju_ctx *ctx = open_map(0);
	ju_blob a = leaf(0x100, 0x10, "fits");
	CHECK_RC(ju_publish(ctx, &a), 0);
	long size = size_of(path);
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit rl = { (rlim_t)size + 10, RLIM_INFINITY };
	CHECK(setrlimit(RLIMIT_FSIZE, &rl) == 0, "setrlimit: %s", strerror(errno));
	ju_blob b[] = { leaf(0x200, 0x10, "does-not-fit-a"), leaf(0x300, 0x10, "does-not-fit-b") };
	/* the channel turns off; the publish goes on without it */
	CHECK_RC(ju_publish_batch(ctx, b, 2), 0);
	CHECK(size_of(path) == size, "the map is %ld bytes, was %ld", size_of(path), size);
	CHECK(ju_count(ctx) == 3, "the batch is not published: %zu blobs", ju_count(ctx));
	size_t missed = 0;
	CHECK_RC(ju_channel_error(ctx, JU_CH_PERFMAP, &missed), JU_EIO);
	CHECK(missed == 2 && ju_channels(ctx) == 0, "%zu blobs missed, channels %#x", missed,
	      ju_channels(ctx));
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

static char target[128];

static void symlink_is_refused(void)
{
	write_file(target, "precious\n");
	CHECK(symlink(target, path) == 0, "symlink: %s", strerror(errno));
	open_map(JU_EPERM);
	CHECK(strstr(ju_errmsg(), "symbolic link"), "message: %s", ju_errmsg());
	CHECK(size_of(target) == 9, "the link's target was written");
	/* a dangling link is no better */
	unlink(target);
	open_map(JU_EPERM);
	CHECK(size_of(target) == -1, "a dangling link's target was created");
}

static void fifo_is_refused_without_blocking(void)
{
	CHECK(mkfifo(path, 0600) == 0, "mkfifo: %s", strerror(errno));
	open_map(JU_EPERM);
	CHECK(strstr(ju_errmsg(), "not a regular file"), "message: %s", ju_errmsg());
}

static void directory_is_refused(void)
{
	CHECK(mkdir(path, 0700) == 0, "mkdir: %s", strerror(errno));
	open_map(JU_EPERM);
	CHECK(strstr(ju_errmsg(), "is a directory"), "message: %s", ju_errmsg());
	rmdir(path);
}

static void hard_linked_file_is_refused(void)
{
	write_file(target, "precious\n");
	CHECK(link(target, path) == 0, "link: %s", strerror(errno));
	open_map(JU_EPERM);
	CHECK(strstr(ju_errmsg(), "hard links"), "message: %s", ju_errmsg());
	CHECK(size_of(target) == 9, "the linked file was written");
	unlink(target);
}

static void file_of_another_user_is_refused(void)
{
	write_file(path, "beef 10 someone-else\n");
	CHECK(chown(path, 65534, 65534) == 0, "chown: %s", strerror(errno));
	open_map(JU_EPERM);
	CHECK(strstr(ju_errmsg(), "belongs to uid 65534"), "message: %s", ju_errmsg());
	CHECK(size_of(path) == 21, "another user's file was written");
}

/* ---- guest frames ----------------------------------------------------------------- */

typedef struct any_line {
	bool tomb; /* '#' first: perf skips it */
	uint64_t start, size;
	char name[256];
} any_line;

/* Every line, tombstoned or not; -1 on a malformed one. */
static long read_any(any_line *out, size_t max)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char buf[512];
	long n = 0;
	while (fgets(buf, sizeof buf, f)) {
		any_line l = { .tomb = buf[0] == '#' };
		int used = 0;
		size_t len = strlen(buf);
		if (!len || buf[len - 1] != '\n') {
			fclose(f);
			return -1;
		}
		buf[len - 1] = 0;
		if (!l.tomb &&
		    (sscanf(buf, "%" SCNx64 " %" SCNx64 " %n", &l.start, &l.size, &used) != 2 || !used)) {
			fclose(f);
			return -1;
		}
		snprintf(l.name, sizeof l.name, "%s", buf + used);
		if ((size_t)n < max)
			out[n] = l;
		n++;
	}
	fclose(f);
	return n;
}

/* guest:run ⊃ guest:mid ⊃ two calls of guest:leaf side by side, then
 * guest:side; GUEST_SIZE bytes.  The pieces perf must see, by offset: */
enum { GUEST_SIZE = 0x40 };
static const ju_inline guest_tree[] = {
	{ .start = 8, .end = 40, .parent = 0, .call_line = 11, .name = "guest:mid" },
	{ .start = 12, .end = 20, .parent = 1, .call_line = 21, .name = "guest:leaf" },
	{ .start = 20, .end = 28, .parent = 1, .call_line = 22, .name = "guest:leaf" },
	{ .start = 44, .end = 48, .parent = 0, .call_line = 12, .name = "guest:side" },
};
static const ju_line guest_rows[] = { { 0, 10 },  { 8, 20 },  { 12, 30 }, { 20, 30 },
				      { 28, 23 }, { 40, 12 }, { 44, 40 }, { 48, 13 } };
static const struct {
	uint32_t lo, hi;
	const char *name;
} guest_pieces[] = {
	{ 0, 8, "guest:run" },
	{ 8, 12, "guest:mid <- guest:run" },
	{ 12, 28, "guest:leaf <- guest:mid <- guest:run" }, /* the two calls are one piece */
	{ 28, 40, "guest:mid <- guest:run" },
	{ 40, 44, "guest:run" },
	{ 44, 48, "guest:side <- guest:run" },
	{ 48, GUEST_SIZE, "guest:run" },
};
enum { N_PIECES = sizeof guest_pieces / sizeof *guest_pieces };

static ju_blob guest_blob(uint32_t at)
{
	ju_blob b = leaf(at, GUEST_SIZE, "guest:run");
	b.file = "guest.py";
	b.lines = guest_rows;
	b.n_lines = sizeof guest_rows / sizeof *guest_rows;
	b.inlines = guest_tree;
	b.n_inlines = sizeof guest_tree / sizeof *guest_tree;
	return b;
}

/* The pieces of the guest blob at `at` in l[from..from + N_PIECES). */
static bool has_pieces(const any_line *l, long n, long from, uint32_t at)
{
	if (from + N_PIECES > n)
		return false;
	for (long k = 0; k < N_PIECES; k++) {
		const any_line *x = &l[from + k];
		if (x->tomb || x->start != (uintptr_t)R + at + guest_pieces[k].lo ||
		    x->size != guest_pieces[k].hi - guest_pieces[k].lo ||
		    strcmp(x->name, guest_pieces[k].name))
			return false;
	}
	return true;
}

static void guest_frames_get_a_line_per_innermost_function(void)
{
	unlink(path);
	ju_ctx *ctx = open_map(0);
	ju_blob b[] = { guest_blob(0x4000), leaf(0x3000, 0x10, "plain") };
	CHECK_RC(ju_publish_batch(ctx, b, 2), 0);
	any_line l[32];
	long n = read_any(l, 32);
	CHECK(n == N_PIECES + 1 && has_pieces(l, n, 0, 0x4000) &&
		      l[N_PIECES].start == (uintptr_t)R + 0x3000 && !strcmp(l[N_PIECES].name, "plain"),
	      "%ld lines, want the %d pieces of the guest blob and the plain blob's (batch order)", n,
	      N_PIECES);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

/* No line that perf reads covers [lo, hi) but one named `name`. */
static bool only_name_over(const any_line *l, long n, uint64_t lo, uint64_t hi, const char *name)
{
	for (long i = 0; i < n; i++)
		if (!l[i].tomb && l[i].start < hi && l[i].start + l[i].size > lo && strcmp(l[i].name, name))
			return false;
	return true;
}

static void code_over_a_dead_guest_blob_leaves_no_stale_line(void)
{
	unlink(path);
	ju_ctx *ctx = open_map(0);
	ju_blob g = guest_blob(0x4000);
	CHECK_RC(ju_publish(ctx, &g), 0);
	CHECK_RC(ju_unpublish(ctx, R + 0x4000), 0);
	/* new code inside guest:leaf's piece only */
	ju_blob small = leaf(0x4000 + 14, 4, "new:small");
	CHECK_RC(ju_publish(ctx, &small), 0);
	any_line l[64];
	long n = read_any(l, 64);
	CHECK(n == N_PIECES + 1 && l[2].tomb &&
		      only_name_over(l, n, (uintptr_t)R + 0x4000 + 14, (uintptr_t)R + 0x4000 + 18,
				     "new:small"),
	      "%ld lines: the leaf piece under the new code is not the only one tombstoned", n);
	/* new code over the whole dead blob, by unpublish_batch */
	const void *starts[] = { R + 0x4000 + 14 };
	CHECK_RC(ju_unpublish_batch(ctx, starts, 1), 0);
	ju_blob big = leaf(0x4000, GUEST_SIZE, "new:big");
	CHECK_RC(ju_publish(ctx, &big), 0);
	n = read_any(l, 64);
	long tombs = 0;
	for (long i = 0; i < n && i < 64; i++)
		tombs += l[i].tomb;
	CHECK(n == N_PIECES + 2 && tombs == N_PIECES + 1 &&
		      only_name_over(l, n, (uintptr_t)R + 0x4000, (uintptr_t)R + 0x4000 + GUEST_SIZE,
				     "new:big"),
	      "%ld lines, %ld tombstoned: a line of the dead code is still read", n, tombs);
	/* and a guest blob again over the plain one */
	CHECK_RC(ju_unpublish(ctx, R + 0x4000), 0);
	CHECK_RC(ju_publish(ctx, &g), 0);
	n = read_any(l, 64);
	CHECK(n == 2 * N_PIECES + 2 && has_pieces(l, n, N_PIECES + 2, 0x4000) && l[N_PIECES + 1].tomb,
	      "%ld lines: the guest blob over the plain one", n);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

/* Churn of guest blobs: the map stays within 2 x live lines + 1024 (each
 * piece is a line), and a compaction (a new inode) writes exactly the live
 * blobs' pieces again, which it reads back from the arenas. */
static void churn_of_guest_blobs_stays_bounded_and_compacts_to_their_pieces(void)
{
	enum { SLOTS = 64, SLOT = 0x80, ROUNDS = 3000 };
	static any_line l[4096 + 2 * SLOTS * N_PIECES];
	unlink(path);
	ju_ctx *ctx = open_map(0);
	for (uint32_t i = 0; i < SLOTS; i++) {
		ju_blob g = guest_blob(0x8000 + i * SLOT);
		CHECK_RC(ju_publish(ctx, &g), 0);
	}
	struct stat st;
	ino_t ino = stat(path, &st) ? 0 : st.st_ino;
	int compactions = 0;
	for (unsigned r = 0; r < ROUNDS; r++) {
		uint32_t at = 0x8000 + (r * 29 % SLOTS) * SLOT;
		CHECK_RC(ju_unpublish(ctx, R + at), 0);
		if (!stat(path, &st) && st.st_ino != ino) {
			ino = st.st_ino;
			compactions++;
			long n = read_any(l, sizeof l / sizeof *l);
			bool exact = n == (SLOTS - 1) * N_PIECES;
			for (uint32_t k = 0, j = 0; exact && k < SLOTS; k++)
				if (0x8000 + k * SLOT != at)
					exact = has_pieces(l, n, (long)(j++ * N_PIECES), 0x8000 + k * SLOT);
			CHECK(exact, "compaction %d: %ld lines are not the live pieces", compactions, n);
		}
		ju_blob g = guest_blob(at);
		CHECK_RC(ju_publish(ctx, &g), 0);
		long n = read_any(l, sizeof l / sizeof *l);
		CHECK(n >= 0 && n <= 2 * SLOTS * N_PIECES + 1024, "after %u rounds: %ld lines, %d live", r, n,
		      SLOTS * N_PIECES);
	}
	CHECK(compactions >= 2, "%d compactions in %d rounds", compactions, ROUNDS);
	printf("%d compactions of churned guest blobs, each to exactly their pieces\n", compactions);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

int main(void)
{
	R = mmap(NULL, 1 << 16, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	snprintf(target, sizeof target, "/tmp/test-perfmap-target.%d", (int)getpid());
	/* These need processes that have not opened their map yet. */
	in_child("a stale file of an earlier process is truncated",
		 stale_file_of_an_earlier_process_is_truncated);
	in_child("a file this process began is kept", file_this_process_began_is_kept);
	in_child("a write cut short is undone", partial_write_is_cut_off);
	in_child("a symbolic link is refused", symlink_is_refused);
	in_child("a FIFO is refused", fifo_is_refused_without_blocking);
	in_child("a directory is refused with JU_EPERM", directory_is_refused);
	in_child("a hard-linked file is refused", hard_linked_file_is_refused);
	if (geteuid() == 0)
		in_child("another user's file is refused", file_of_another_user_is_refused);
	else
		printf("note: not root, cannot make a file of another user; that case is not checked\n");

	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	map_lists_every_published_blob();
	failed_publish_leaves_the_map_as_it_was();
	publish_failing_in_the_jitdump_leaves_no_map_lines();
	guest_frames_get_a_line_per_innermost_function();
	code_over_a_dead_guest_blob_leaves_no_stale_line();
	churn_of_guest_blobs_stays_bounded_and_compacts_to_their_pieces();
	unlink(path);
	unlink(target);
	return unit_done("test-perfmap");
}
