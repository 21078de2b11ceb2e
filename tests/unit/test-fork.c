/* SPDX-License-Identifier: MIT */
/* test-fork.c - after fork() the child writes its own perf map and jitdump.
 *
 *   - fork_child_logs_every_inherited_blob_in_its_own_files: two contexts
 *     publish (and unpublish some); right after fork() the child's
 *     /tmp/perf-<child>.map holds exactly the blobs still published, once,
 *     and its jit-<child>.dump (same directory as the parent's, marked by the
 *     child's own executable mapping) the header, naming the child; a
 *     context's first publish in the child logs its inherited blobs, naming
 *     the child, then its own, and a first unpublish what is left; what the
 *     child publishes goes only there; the
 *     parent's files are not touched by the child;
 *   - raw_clone_child_catches_up_with_ju_after_fork: a child made without
 *     the fork handlers starts its own files at its first publish, and
 *     ju_after_fork() adds what it inherited;
 *   - fork_while_another_thread_publishes: the fork handlers leave no lock
 *     held and no file half written in children forked at random moments.
 */
#include "internal.h"
#include "test-jitdump-reader.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

const void *_Unwind_Find_FDE(void *pc, void *bases);

static uint8_t *R;
static char dir[64];
static const ju_line rows[] = { { 0, 5 }, { 8, 6 } };

static ju_blob blob(uint32_t at, const char *name, bool lines)
{
	ju_blob b = { .sz = sizeof(ju_blob),
		      .start = R + at,
		      .size = 32,
		      .name = name,
		      .frame = { .kind = JU_FRAME_LEAF } };
	if (lines)
		b.file = "fork.src", b.lines = rows, b.n_lines = 2;
	return b;
}

static ju_ctx *open_files(void)
{
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_PERFMAP | JU_CH_JITDUMP,
			 .flags = JU_OPT_NO_ENV,
			 .jitdump_dir = dir };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	return ctx;
}

static void map_path(char *p, size_t len, pid_t pid)
{
	snprintf(p, len, "/tmp/perf-%d.map", (int)pid);
}

static void dump_path(char *p, size_t len, pid_t pid)
{
	snprintf(p, len, "%s/jit-%d.dump", dir, (int)pid);
}

/* The perf map and jitdump a process left. */
static void remove_files_of(pid_t pid)
{
	char pmap[64], pdump[128];
	map_path(pmap, sizeof pmap, pid);
	dump_path(pdump, sizeof pdump, pid);
	unlink(pmap);
	unlink(pdump);
}

static long size_of(const char *p)
{
	struct stat st;
	return stat(p, &st) ? -1 : (long)st.st_size;
}

/* The names in a perf map, one per line, into names[] (a newline-separated
 * sorted list). */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted "name@address" of every line of the perf map of `pid`. */
static size_t map_entries(pid_t pid, char out[][96], size_t max)
{
	char p[64], line[256];
	map_path(p, sizeof p, pid);
	FILE *f = fopen(p, "r");
	size_t n = 0;
	while (f && fgets(line, sizeof line, f)) {
		uint64_t start, size;
		char name[64];
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %63[^\n]", &start, &size, name) != 3)
			snprintf(name, sizeof name, "<malformed>");
		if (n < max)
			snprintf(out[n], 96, "%s@%" PRIx64, name, start);
		n++;
	}
	if (f)
		fclose(f);
	char *ptrs[64];
	for (size_t i = 0; i < n && i < 64; i++)
		ptrs[i] = out[i];
	qsort(ptrs, n < 64 ? n : 64, sizeof *ptrs, cmp_str);
	char tmp[64][96];
	for (size_t i = 0; i < n && i < 64; i++)
		memcpy(tmp[i], ptrs[i], 96);
	memcpy(out, tmp, (n < 64 ? n : 64) * 96);
	return n;
}

/* Sorted "name@address" of every CODE_LOAD of the dump of `pid`. */
static size_t dump_entries(pid_t pid, char out[][96], size_t max, bool *closed)
{
	char p[128], err[200];
	dump_path(p, sizeof p, pid);
	jd_dump d;
	if (jd_dump_read(p, &d, err, sizeof err)) {
		CHECK(0, "%s: %s", p, err);
		return 0;
	}
	CHECK(d.h.pid == (uint32_t)pid, "%s: header pid %u", p, d.h.pid);
	size_t n = d.n_loads;
	char *ptrs[64];
	for (size_t i = 0; i < n && i < max; i++) {
		CHECK(d.loads[i].h.pid == (uint32_t)pid, "%s: load pid %u", p, d.loads[i].h.pid);
		snprintf(out[i], 96, "%s@%" PRIx64, d.loads[i].name, d.loads[i].h.code_addr);
		ptrs[i] = out[i];
	}
	*closed = d.closed;
	jd_dump_free(&d);
	qsort(ptrs, n, sizeof *ptrs, cmp_str);
	char tmp[64][96];
	for (size_t i = 0; i < n; i++)
		memcpy(tmp[i], ptrs[i], 96);
	memcpy(out, tmp, n * 96);
	return n;
}

/* The perf map of `pid` holds exactly want[0..n) (sorted), each once. */
static void map_holds(pid_t pid, const char *const *want, size_t n, const char *when)
{
	char got[64][96];
	size_t m = map_entries(pid, got, 64);
	bool same = m == n;
	for (size_t i = 0; same && i < n; i++)
		same = !strncmp(got[i], want[i], strlen(want[i])) && got[i][strlen(want[i])] == '@';
	CHECK(same, "%s: the perf map of %d holds %zu entries (%s...), want %zu (%s...)", when, (int)pid, m,
	      m ? got[0] : "", n, n ? want[0] : "");
}

/* The files of `pid` hold exactly want[0..n) (sorted), each once. */
static void files_hold(pid_t pid, const char *const *want, size_t n, const char *when)
{
	map_holds(pid, want, n, when);
	char got[64][96];
	bool closed;
	size_t m = dump_entries(pid, got, 64, &closed);
	bool same = m == n;
	for (size_t i = 0; same && i < n; i++)
		same = !strncmp(got[i], want[i], strlen(want[i])) && got[i][strlen(want[i])] == '@';
	CHECK(same, "%s: the jitdump of %d holds %zu loads, want %zu", when, (int)pid, m, n);
}

static bool read_dump_of(pid_t pid, jd_dump *d)
{
	char p[128], err[200];
	dump_path(p, sizeof p, pid);
	int rc = jd_dump_read(p, d, err, sizeof err);
	CHECK(rc == 0, "%s: %s", p, err);
	return rc == 0;
}

static int finish_child(void)
{
	fflush(stdout);
	return unit_failures ? 1 : 0;
}

static void reap(pid_t pid, const char *what)
{
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "%s: child status %#x", what, st);
}

static void fork_child_logs_every_inherited_blob_in_its_own_files(void)
{
	ju_ctx *a = open_files(), *b = open_files();
	ju_blob ba[] = { blob(0x000, "a0", true), blob(0x100, "a1", false), blob(0x200, "gone", true) };
	ju_blob bb[] = { blob(0x1000, "b0", true), blob(0x1100, "b1", false) };
	CHECK_RC(ju_publish_batch(a, ba, 3), 0);
	CHECK_RC(ju_publish_batch(b, bb, 2), 0);
	CHECK_RC(ju_unpublish(a, R + 0x200), 0);
	pid_t parent = getpid();
	char pmap[64], pdump[128];
	map_path(pmap, sizeof pmap, parent);
	dump_path(pdump, sizeof pdump, parent);
	long map_before = size_of(pmap), dump_before = size_of(pdump);
	static const char *const inherited[] = { "a0", "a1", "b0", "b1" };
	static const char *const later[] = { "a0", "a1", "b0", "b1", "child" };
	static const char *const a_and_child[] = { "a0", "a1", "child" };

	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		unit_failures = 0;
		pid_t me = getpid();
		char cdump[128];
		dump_path(cdump, sizeof cdump, me);
		map_holds(me, inherited, 4, "right after fork");
		jd_dump d;
		if (read_dump_of(me, &d)) {
			CHECK(d.h.pid == (uint32_t)me && d.n_loads == 0,
			      "right after fork the child's dump names pid %u (want %d) and has %zu loads "
			      "(want none yet)",
			      d.h.pid, (int)me, d.n_loads);
			jd_dump_free(&d);
		}
		CHECK(jd_marker_mapped(cdump), "the child's dump is not mapped executable");
		CHECK(!jd_marker_mapped(pdump), "the child still maps the parent's dump");
		ju_blob c = blob(0x2000, "child", true);
		CHECK_RC(ju_publish(a, &c), 0);
		CHECK_RC(ju_after_fork(a), 0); /* already done by the fork handler: no duplicates */
		CHECK_RC(ju_after_fork(b), 0);
		map_holds(me, later, 5, "after the child published");
		char got[64][96];
		bool closed = false;
		size_t n = dump_entries(me, got, 64, &closed);
		bool same = n == 3;
		for (size_t i = 0; same && i < 3; i++)
			same = !strncmp(got[i], a_and_child[i], strlen(a_and_child[i]));
		CHECK(same, "after a published: the child's dump holds %zu loads, want a's two and its own",
		      n);
		/* b's first write in the child is an unpublish: what b still has
		 * is logged then */
		CHECK_RC(ju_unpublish(b, R + 0x1100), 0);
		static const char *const b_too[] = { "a0", "a1", "b0", "child" };
		char gone[64][96];
		n = dump_entries(me, gone, 64, &closed);
		same = n == 4;
		for (size_t i = 0; same && i < 4; i++)
			same = !strncmp(gone[i], b_too[i], strlen(b_too[i]));
		CHECK(same, "after b unpublished: the child's dump holds %zu loads, want a0 a1 b0 child", n);
		CHECK_RC(ju_unpublish_all(a), 0);
		CHECK_RC(ju_unpublish_all(b), 0);
		CHECK_RC(ju_close(a), 0);
		CHECK_RC(ju_close(b), 0);
		dump_entries(me, got, 64, &closed);
		CHECK(closed, "the child's dump does not end with CLOSE");
		char cmap[64];
		map_path(cmap, sizeof cmap, me);
		unlink(cmap);
		_exit(finish_child());
	}
	reap(pid, "fork child");
	CHECK(size_of(pmap) == map_before && size_of(pdump) == dump_before,
	      "the child wrote to the parent's files (map %ld -> %ld, dump %ld -> %ld)", map_before,
	      size_of(pmap), dump_before, size_of(pdump));
	CHECK(jd_marker_mapped(pdump), "the parent's dump lost its mapping");
	ju_blob p = blob(0x3000, "parent-later", false);
	CHECK_RC(ju_publish(b, &p), 0);
	static const char *const parent_has[] = { "a0", "a1", "b0", "b1", "gone", "parent-later" };
	files_hold(parent, parent_has, 6, "the parent after the fork");
	CHECK_RC(ju_unpublish_all(a), 0);
	CHECK_RC(ju_unpublish_all(b), 0);
	CHECK_RC(ju_close(a), 0);
	CHECK_RC(ju_close(b), 0);
	unlink(pmap);
	unlink(pdump);
}

static void raw_clone_child_catches_up_with_ju_after_fork(void)
{
	ju_ctx *a = open_files();
	ju_blob ba[] = { blob(0x4000, "r0", true), blob(0x4100, "r1", false) };
	CHECK_RC(ju_publish_batch(a, ba, 2), 0);
	fflush(stdout);
	/* No pthread_atfork handlers run for a raw fork system call. */
	pid_t pid = (pid_t)syscall(SYS_fork);
	if (pid == 0) {
		unit_failures = 0;
		pid_t me = getpid();
		ju_blob c = blob(0x5000, "raw-child", false);
		CHECK_RC(ju_publish(a, &c), 0);
		static const char *const first[] = { "raw-child" };
		files_hold(me, first, 1, "a raw child's first publish");
		CHECK_RC(ju_after_fork(a), 0);
		/* what it inherited, plus its own blob logged again */
		static const char *const caught_up[] = { "r0", "r1", "raw-child", "raw-child" };
		files_hold(me, caught_up, 4, "after ju_after_fork");
		remove_files_of(me);
		_exit(finish_child());
	}
	reap(pid, "raw fork child");
	CHECK_RC(ju_unpublish_all(a), 0);
	CHECK_RC(ju_close(a), 0);
	remove_files_of(getpid());
}

/* Every live blob of ctx is the latest load at its address. */
static void latest_loads_name_the_live_blobs(ju_ctx *ctx, const jd_dump *d, int child)
{
	for (size_t i = 0; i < ctx->n_arenas; i++) {
		const arena *a = ctx->arenas[i];
		for (uint32_t k = 0; k < a->n; k++) {
			const blob_rec *r = &a->recs[k];
			if (r->flags & REC_DEAD)
				continue;
			const char *name = (const char *)a->image + r->name_off, *got = NULL;
			for (size_t j = 0; j < d->n_loads; j++)
				if (d->loads[j].h.code_addr == r->start)
					got = d->loads[j].name;
			CHECK(got && !strcmp(got, name), "child %d: the latest load at %#llx is %s, want %s",
			      child, (unsigned long long)r->start, got ? got : "none", name);
		}
	}
}

static atomic_int stop;

static void *churn(void *arg)
{
	ju_ctx *ctx = arg;
	static char names[16][16];
	for (unsigned i = 0; !stop; i++) {
		unsigned k = i % 16;
		snprintf(names[k], sizeof names[k], "churn%u", k);
		ju_blob b = blob(0x8000 + k * 0x40, names[k], k % 2);
		if (ju_publish(ctx, &b) == 0)
			ju_unpublish(ctx, b.start);
	}
	return NULL;
}

static void fork_while_another_thread_publishes(void)
{
	ju_ctx *ctx = open_files();
	pthread_t t;
	stop = 0;
	pthread_create(&t, NULL, churn, ctx);
	int forks = 0;
	for (; forks < 30; forks++) {
		usleep(2000);
		fflush(stdout);
		pid_t pid = fork();
		if (pid == 0) {
			unit_failures = 0;
			alarm(20); /* a lock left held would hang here */
			pid_t me = getpid();
			size_t live = ju_count(ctx);
			char got[64][96];
			size_t m = map_entries(me, got, 64);
			CHECK(m == live, "child %d: %zu live, map %zu", forks, live, m);
			ju_blob c = blob(0x9000, "after", false);
			CHECK_RC(ju_publish(ctx, &c), 0);
			bool closed;
			size_t d = dump_entries(me, got, 64, &closed);
			CHECK(d == live + 1, "child %d: %zu live, dump %zu after one publish", forks, live,
			      d);
			jd_dump mine;
			if (read_dump_of(me, &mine)) {
				latest_loads_name_the_live_blobs(ctx, &mine, forks);
				jd_dump_free(&mine);
			}
			remove_files_of(me);
			_exit(finish_child());
		}
		reap(pid, "child forked during publishing");
	}
	stop = 1;
	pthread_join(t, NULL);
	printf("%d children forked while another thread published got consistent files\n", forks);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	remove_files_of(getpid());
}

/* In the child (pid `me`, the planted path already there): the perf map
 * channel is off, the others still work. */
static void only_the_blocked_channel_is_off(ju_ctx *a, pid_t me, const char *how)
{
	CHECK(ju_channels(a) == (JU_CH_UNWINDER | JU_CH_JITDUMP),
	      "%s: channels %#x, want unwinder and jitdump (the perf map off)", how, ju_channels(a));
	ju_blob c = blob(0x6100, "planted-child", false);
	CHECK_RC(ju_publish(a, &c), 0);
	void *bases[3];
	CHECK(_Unwind_Find_FDE(R + 0x6108, bases) != NULL, "%s: libgcc does not find the child's blob", how);
	static const char *const want[] = { "planted-child", "planted0" };
	char got[64][96];
	bool closed;
	size_t n = dump_entries(me, got, 64, &closed);
	CHECK(n == 2 && !strncmp(got[0], want[0], strlen(want[0])) &&
		      !strncmp(got[1], want[1], strlen(want[1])),
	      "%s: the child's jitdump holds %zu loads, want the inherited blob and its own", how, n);
	CHECK_RC(ju_unpublish(a, c.start), 0);
}

static ju_ctx *open_with_unwinder(void)
{
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_UNWINDER | JU_CH_PERFMAP | JU_CH_JITDUMP,
			 .flags = JU_OPT_NO_ENV,
			 .jitdump_dir = dir };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	return ctx;
}

/* A symbolic link planted at /tmp/perf-<pid>.map for the pid a child will get
 * (any local user can do that) turns only the child's perf map channel off,
 * as the same file would at ju_open.  Through ju_after_fork in a raw child,
 * and through the fork handler in a child whose pid we arrange (root:
 * /proc/sys/kernel/ns_last_pid). */
static void planted_map_turns_only_that_channel_off_in_the_child(void)
{
	ju_ctx *a = open_with_unwinder();
	if (!a)
		return;
	ju_blob b0 = blob(0x6000, "planted0", false);
	CHECK_RC(ju_publish(a, &b0), 0);
	fflush(stdout);
	pid_t pid = (pid_t)syscall(SYS_fork);
	if (pid == 0) {
		unit_failures = 0;
		pid_t me = getpid();
		char cmap[64], cdump[128];
		map_path(cmap, sizeof cmap, me);
		dump_path(cdump, sizeof cdump, me);
		CHECK(symlink("/nonexistent/planted", cmap) == 0, "cannot plant %s", cmap);
		CHECK_RC(ju_after_fork(a), 0);
		only_the_blocked_channel_is_off(a, me, "raw child, ju_after_fork");
		unlink(cmap);
		unlink(cdump);
		_exit(finish_child());
	}
	reap(pid, "raw child with a planted perf map");

	int last = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	bool arranged = false;
	for (int tries = 0; last >= 0 && tries < 20 && !arranged; tries++) {
		pid_t want = getpid() + 1000 + tries * 37;
		char cmap[64], num[16];
		map_path(cmap, sizeof cmap, want);
		if (symlink("/nonexistent/planted", cmap))
			continue;
		int len = snprintf(num, sizeof num, "%d", (int)want - 1);
		fflush(stdout);
		if (pwrite(last, num, (size_t)len, 0) != len) {
			unlink(cmap);
			break;
		}
		pid = fork();
		if (pid == 0) {
			if (getpid() != want)
				_exit(3); /* another process took the pid first */
			unit_failures = 0;
			only_the_blocked_channel_is_off(a, want, "fork handler");
			char cdump[128];
			dump_path(cdump, sizeof cdump, want);
			unlink(cdump);
			_exit(finish_child());
		}
		int st = 0;
		waitpid(pid, &st, 0);
		unlink(cmap);
		if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
			continue;
		arranged = true;
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fork child with a planted perf map: status %#x",
		      st);
	}
	if (last >= 0)
		close(last);
	if (!arranged)
		printf("note: could not give a child a chosen pid (not root?); the fork handler case is not "
		       "checked\n");
	CHECK_RC(ju_unpublish_all(a), 0);
	CHECK_RC(ju_close(a), 0);
	remove_files_of(getpid());
}

/* After open, the jitdump directory is renamed away and a symbolic link to
 * a decoy put in its place: a forked child writes its dump into the
 * directory the parent opened (held by a descriptor), never into the decoy.
 * Both for a directory the context names and for the default one. */
static void swapped_dump_dir_does_not_redirect_a_child(const char *named)
{
	char base[128], orig[256], moved[300], decoy[256];
	snprintf(base, sizeof base, "%s/swap%s", dir, named ? "-named" : "-default");
	mkdir(base, 0755);
	snprintf(decoy, sizeof decoy, "%s/decoy", base);
	mkdir(decoy, 0755);
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_JITDUMP, .flags = JU_OPT_NO_ENV };
	if (named) {
		snprintf(orig, sizeof orig, "%s/%s", base, named);
		mkdir(orig, 0755);
		o.jitdump_dir = orig;
	} else {
		setenv("JITDUMPDIR", base, 1);
	}
	ju_ctx *a = NULL;
	CHECK_RC(ju_open(&o, &a), 0);
	if (!a)
		return;
	if (!named) { /* the directory the library made: the one our dump is in */
		jd_marker_dir(orig, sizeof orig);
		unsetenv("JITDUMPDIR");
		CHECK(orig[0], "no mapped dump of this process");
	}
	ju_blob b0 = blob(0x7000, "swapped", false);
	CHECK_RC(ju_publish(a, &b0), 0);
	snprintf(moved, sizeof moved, "%s.moved", orig);
	CHECK(rename(orig, moved) == 0 && symlink(decoy, orig) == 0, "swap %s: %s", orig, strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(0); /* the fork handler did the work */
	reap(pid, "child after the swap");
	char in_decoy[400], in_moved[400];
	snprintf(in_decoy, sizeof in_decoy, "%s/jit-%d.dump", decoy, (int)pid);
	snprintf(in_moved, sizeof in_moved, "%s/jit-%d.dump", moved, (int)pid);
	CHECK(size_of(in_decoy) < 0, "%s: the child followed the swapped-in link to %s",
	      named ? "named directory" : "default directory", in_decoy);
	CHECK(size_of(in_moved) > 0, "%s: the child's dump is not in the directory the parent opened (%s)",
	      named ? "named directory" : "default directory", in_moved);
	CHECK_RC(ju_unpublish_all(a), 0);
	CHECK_RC(ju_close(a), 0);
	unlink(in_decoy);
	unlink(in_moved);
	char p[400];
	snprintf(p, sizeof p, "%s/jit-%d.dump", moved, (int)getpid());
	unlink(p);
	unlink(orig);
	rmdir(moved);
	rmdir(decoy);
	if (!named) {
		snprintf(p, sizeof p, "%s/.debug/jit", base);
		rmdir(p);
		snprintf(p, sizeof p, "%s/.debug", base);
		rmdir(p);
	}
	rmdir(base);
	char cmap[64];
	map_path(cmap, sizeof cmap, pid);
	unlink(cmap);
}

int main(void)
{
	snprintf(dir, sizeof dir, "/tmp/test-fork.XXXXXX");
	if (!mkdtemp(dir))
		UNIT_SKIP("cannot make a scratch directory");
	R = mmap(NULL, 1 << 16, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fork_child_logs_every_inherited_blob_in_its_own_files();
	raw_clone_child_catches_up_with_ju_after_fork();
	fork_while_another_thread_publishes();
	planted_map_turns_only_that_channel_off_in_the_child();
	swapped_dump_dir_does_not_redirect_a_child("named");
	swapped_dump_dir_does_not_redirect_a_child(NULL);
	rmdir(dir);
	return unit_done("test-fork");
}
