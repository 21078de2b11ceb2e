/* SPDX-License-Identifier: MIT */
/* test-perfmap-compaction.c - the perf map stays bounded under churn.
 *
 *   - compaction_keeps_exactly_the_live_lines: blobs are unpublished and
 *     published again at the same places under new names; each time the map
 *     is replaced (a new inode), it holds exactly the live blobs, each once,
 *     under its latest name;
 *   - map_stays_within_twice_the_live_lines: through a long churn the map
 *     never holds more than 2 x live + PM_SLACK lines; unpublish_all leaves
 *     it as it is (perf reads it after the process exits), and the next
 *     publish compacts it;
 *   - reader_never_sees_a_half_written_map: a thread reads the map in a loop
 *     while another churns; every read parses, and holds every blob that
 *     stays published all along;
 *   - planted_link_at_the_new_files_name_is_not_followed: a symbolic link at
 *     /tmp/perf-<pid>.map.tmp is left alone, its target untouched, and the
 *     map is compacted all the same;
 *   - fault_in_compaction_leaves_a_valid_map: each fault point of the
 *     unpublish that compacts: the unpublish succeeds, the map parses and
 *     holds every live blob, and the next publish compacts;
 *   - a forked child of a map that is exactly its live lines gets a byte
 *     for byte copy; of a map with dead lines, the live lines only.
 */
#include "internal.h"
#include "unit.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

void ju__fault_after(long n);
long ju__fault_remaining(void);

enum { SLACK = 1024, SLOTS = 4096, SLOT = 64 };

static uint8_t *R;
static char path[64];
static char names[SLOTS][32];
static bool live[SLOTS];

static ju_blob blob(size_t slot, unsigned gen)
{
	snprintf(names[slot], sizeof names[slot], "c:%zu.%u", slot, gen);
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = R + slot * SLOT,
			  .size = 32,
			  .name = names[slot],
			  .frame = { .kind = JU_FRAME_LEAF } };
}

static ju_ctx *open_map(void)
{
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_PERFMAP, .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx = NULL;
	CHECK_RC(ju_open(&o, &ctx), 0);
	return ctx;
}

typedef struct map {
	long lines;        /* -1: a line does not parse */
	bool partial_tail; /* the last line has no newline (an append in flight) */
	int seen[SLOTS];   /* lines naming each slot's current name */
	int other;         /* lines for a slot under an older name, or elsewhere */
	int tomb;          /* lines tombstoned in place ('#' first) */
} map;

/* Parse the map (or a byte buffer of it) against names[]. */
static map parse(const char *text, size_t len)
{
	map m = { 0 };
	const char *p = text, *end = text + len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl) {
			m.partial_tail = true;
			break;
		}
		char buf[128];
		size_t n = (size_t)(nl - p);
		uint64_t start, size;
		int used = 0;
		if (n >= sizeof buf) {
			m.lines = -1;
			return m;
		}
		memcpy(buf, p, n);
		buf[n] = 0;
		if (buf[0] == '#') { /* tombstoned: readers skip it */
			m.tomb++;
			m.lines++;
			p = nl + 1;
			continue;
		}
		if (sscanf(buf, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &used) != 2 || !used) {
			m.lines = -1;
			return m;
		}
		uint64_t slot = (start - (uintptr_t)R) / SLOT;
		if (start >= (uintptr_t)R && slot < SLOTS && !strcmp(buf + used, names[slot]))
			m.seen[slot]++;
		else
			m.other++;
		m.lines++;
		p = nl + 1;
	}
	return m;
}

static size_t read_file(char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY);
	size_t n = 0;
	ssize_t r;
	while (fd >= 0 && n < cap && (r = read(fd, buf + n, cap - n)) > 0)
		n += (size_t)r;
	if (fd >= 0)
		close(fd);
	return n;
}

static char text[1 << 20];

static map read_map(void)
{
	return parse(text, read_file(text, sizeof text));
}

static ino_t inode(void)
{
	struct stat st;
	return stat(path, &st) ? 0 : st.st_ino;
}

static size_t n_live(void)
{
	size_t n = 0;
	for (size_t i = 0; i < SLOTS; i++)
		n += live[i];
	return n;
}

/* Exactly the live blobs, once each, under their latest names. */
static bool exactly_live(const map *m)
{
	if (m->lines != (long)n_live() || m->other || m->tomb || m->partial_tail)
		return false;
	for (size_t i = 0; i < SLOTS; i++)
		if (m->seen[i] != (int)live[i])
			return false;
	return true;
}

static void publish_slots(ju_ctx *ctx, size_t from, size_t n)
{
	for (size_t i = from; i < from + n; i++) {
		ju_blob b = blob(i, 0);
		CHECK_RC(ju_publish(ctx, &b), 0);
		live[i] = true;
	}
}

static unsigned gen = 1;

/* Unpublish slot and publish it again under a new name; true if the
 * unpublish replaced the map. */
static bool churn_pair(ju_ctx *ctx, size_t slot)
{
	ino_t before = inode();
	CHECK_RC(ju_unpublish(ctx, R + slot * SLOT), 0);
	live[slot] = false;
	bool replaced = inode() != before;
	ju_blob b = blob(slot, gen++);
	CHECK_RC(ju_publish(ctx, &b), 0);
	live[slot] = true;
	return replaced;
}

static void unpublish_everything(ju_ctx *ctx)
{
	CHECK_RC(ju_unpublish_all(ctx), 0);
	memset(live, 0, sizeof live);
}

static void compaction_keeps_exactly_the_live_lines(void)
{
	ju_ctx *ctx = open_map();
	publish_slots(ctx, 0, 100);
	int compactions = 0;
	for (unsigned i = 0; i < 5000; i++) {
		size_t slot = (i * 37) % 100;
		ino_t before = inode();
		CHECK_RC(ju_unpublish(ctx, R + slot * SLOT), 0);
		live[slot] = false;
		if (inode() != before) {
			compactions++;
			map m = read_map();
			CHECK(exactly_live(&m),
			      "after compaction %d: %ld lines, %d others, want the %zu live", compactions,
			      m.lines, m.other, n_live());
		}
		ju_blob b = blob(slot, gen++);
		CHECK_RC(ju_publish(ctx, &b), 0);
		live[slot] = true;
	}
	CHECK(compactions >= 4, "%d compactions in 5000 churn pairs of 100 live blobs", compactions);
	printf("%d compactions in 5000 churn pairs, each left exactly the live lines\n", compactions);
	unpublish_everything(ctx);
	CHECK_RC(ju_close(ctx), 0);
}

static void map_stays_within_twice_the_live_lines(void)
{
	ju_ctx *ctx = open_map();
	publish_slots(ctx, 0, 300);
	long most = 0;
	for (unsigned i = 0; i < 12000; i++) {
		churn_pair(ctx, (i * 101) % 300);
		if (i % 25 == 0) {
			map m = read_map();
			CHECK(m.lines >= 0 && m.lines <= 2 * (long)n_live() + SLACK,
			      "after %u pairs: %ld lines with %zu live", i, m.lines, n_live());
			most = m.lines > most ? m.lines : most;
		}
	}
	/* most of the live blobs go: the map shrinks with them */
	for (size_t i = 10; i < 300; i++) {
		CHECK_RC(ju_unpublish(ctx, R + i * SLOT), 0);
		live[i] = false;
	}
	map m = read_map();
	CHECK(m.lines >= 0 && m.lines <= 2 * (long)n_live() + SLACK,
	      "after unpublishing all but 10: %ld lines", m.lines);
	unpublish_everything(ctx);
	/* A program's last unpublish_all leaves the names for perf; the next
	 * publish, if any, compacts. */
	publish_slots(ctx, 0, 3 * SLACK);
	m = read_map();
	long before_all = m.lines;
	CHECK(before_all >= 3 * SLACK, "%ld lines with %d published", before_all, 3 * SLACK);
	unpublish_everything(ctx);
	m = read_map();
	CHECK(m.lines == before_all, "unpublish_all changed the map: %ld lines, %ld before", m.lines,
	      before_all);
	publish_slots(ctx, SLOTS - 1, 1); /* its line stays, dead, for the tests after */
	m = read_map();
	CHECK(exactly_live(&m), "the publish after unpublish_all: %ld lines, want the 1 live", m.lines);
	unpublish_everything(ctx);
	printf("the map held at most %ld lines for 300 live through 12000 churn pairs\n", most);
	CHECK_RC(ju_close(ctx), 0);
}

static atomic_int stop;
static atomic_long reads, bad_reads;

/* Slots 0..199 stay published; every read must hold them. */
static void *reader(void *arg)
{
	(void)arg;
	static char buf[1 << 20];
	while (!stop) {
		size_t n = read_file(buf, sizeof buf);
		map m = parse(buf, n);
		bool all = m.lines >= 0;
		for (size_t i = 0; all && i < 200; i++)
			all = m.seen[i] == 1;
		reads++;
		if (!all && bad_reads++ < 3)
			printf("FAIL a read of %zu bytes: %ld lines, stable blobs missing or doubled\n", n,
			       m.lines);
	}
	return NULL;
}

static void reader_never_sees_a_half_written_map(void)
{
	ju_ctx *ctx = open_map();
	publish_slots(ctx, 0, 300);
	pthread_t t;
	stop = 0;
	pthread_create(&t, NULL, reader, NULL);
	int compactions = 0;
	for (unsigned i = 0; i < 6000; i++)
		compactions += churn_pair(ctx, 200 + i % 100);
	stop = 1;
	pthread_join(t, NULL);
	CHECK(bad_reads == 0, "%ld of %ld reads were not a whole map", (long)bad_reads, (long)reads);
	CHECK(compactions > 0 && reads > compactions, "%d compactions, %ld reads", compactions, (long)reads);
	printf("%ld reads during %d compactions each saw a whole map\n", (long)reads, compactions);
	unpublish_everything(ctx);
	CHECK_RC(ju_close(ctx), 0);
}

static void planted_link_at_the_new_files_name_is_not_followed(void)
{
	char tmp[80], target[80];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	snprintf(target, sizeof target, "/tmp/test-perfmap-compaction-target.%d", (int)getpid());
	FILE *f = fopen(target, "w");
	fputs("precious\n", f);
	fclose(f);
	unlink(tmp);
	CHECK(symlink(target, tmp) == 0, "symlink: %s", strerror(errno));
	ju_ctx *ctx = open_map();
	publish_slots(ctx, 0, 50);
	int compactions = 0;
	for (unsigned i = 0; i < 3000; i++)
		compactions += churn_pair(ctx, i % 50);
	struct stat st;
	CHECK(compactions > 0, "the map was not compacted with a link at %s", tmp);
	CHECK(lstat(tmp, &st) == 0 && S_ISLNK(st.st_mode), "the planted link is gone");
	CHECK(stat(target, &st) == 0 && st.st_size == 9, "the link's target was written");
	map m = read_map();
	CHECK(m.lines >= 0 && m.lines <= 2 * (long)n_live() + SLACK, "%ld lines", m.lines);
	unpublish_everything(ctx);
	CHECK_RC(ju_close(ctx), 0);
	unlink(tmp);
	unlink(target);
}

static void fault_in_compaction_leaves_a_valid_map(void)
{
	ju_ctx *ctx = open_map();
	publish_slots(ctx, 0, 20);
	/* pairs from one compaction to the next */
	unsigned i = 0, period = 0;
	while (!churn_pair(ctx, i++ % 20) && i < 5000)
		;
	do
		period++;
	while (!churn_pair(ctx, i++ % 20) && period < 5000);
	CHECK(period > 1 && period < 5000, "no steady compaction period (%u)", period);
	long in_compaction = 0, n = 1;
	for (; n < 200; n++) {
		/* right after a compaction: churn to just before the next one */
		for (unsigned k = 0; k + 1 < period; k++)
			churn_pair(ctx, (i++) % 20);
		size_t slot = (i++) % 20;
		ino_t before = inode();
		ju__fault_after(n);
		int rc = ju_unpublish(ctx, R + slot * SLOT);
		bool hit = ju__fault_remaining() == 0;
		ju__fault_after(0);
		if (rc == 0)
			live[slot] = false;
		map m = read_map();
		bool all = m.lines >= 0 && !m.partial_tail;
		for (size_t s = 0; all && s < SLOTS; s++)
			all = !live[s] || m.seen[s] >= 1;
		CHECK(all, "fault %ld: the map does not parse or lacks a live blob", n);
		CHECK(rc == 0 || hit, "fault %ld: unpublish failed without a fault: %s", n, ju_errmsg());
		in_compaction += rc == 0 && hit && inode() == before;
		if (rc != 0) { /* the fault came before the compaction: do it again */
			CHECK_RC(ju_unpublish(ctx, R + slot * SLOT), 0);
			live[slot] = false;
		}
		ju_blob b = blob(slot, gen++);
		CHECK_RC(ju_publish(ctx, &b), 0); /* compacts if the unpublish could not */
		live[slot] = true;
		m = read_map();
		CHECK(exactly_live(&m), "fault %ld: after the next publish %ld lines, want the %zu live", n,
		      m.lines, n_live());
		if (!hit)
			break;
	}
	CHECK(in_compaction > 0, "no fault point hit the compaction");
	printf("%ld fault points in the unpublish that compacts (%ld in the compaction) left a valid map\n",
	       n - 1, in_compaction);
	unpublish_everything(ctx);
	CHECK_RC(ju_close(ctx), 0);
}

/* ---- fork ------------------------------------------------------------------- */

static void child_of_an_exact_map_gets_a_copy_of_it(bool dead_lines)
{
	ju_ctx *ctx = open_map();
	/* out of address order: the copy keeps the parent's order, lines
	 * written anew come in address order */
	publish_slots(ctx, 10, 10);
	publish_slots(ctx, 0, 10);
	if (dead_lines)
		churn_pair(ctx, 3);
	size_t len = read_file(text, sizeof text);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		unit_failures = 0;
		snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
		static char mine[sizeof text];
		size_t n = read_file(mine, sizeof mine);
		map m = parse(mine, n);
		CHECK(exactly_live(&m), "the child's map: %ld lines, %d others, want the %zu live", m.lines,
		      m.other, n_live());
		bool same = n == len && !memcmp(mine, text, n);
		if (dead_lines)
			CHECK(!same, "the child copied a map with a dead line");
		else
			CHECK(same, "the child's map is not a copy of the parent's (%zu vs %zu bytes)", n,
			      len);
		ju_blob b = blob(30, gen);
		CHECK_RC(ju_publish(ctx, &b), 0);
		live[30] = true;
		m = read_map();
		CHECK(exactly_live(&m), "the child's map after its publish: %ld lines", m.lines);
		unlink(path);
		fflush(stdout);
		_exit(unit_failures ? 1 : 0);
	}
	int st = 0;
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "fork child (%s): status %#x", dead_lines ? "dead lines" : "exact map", st);
	unpublish_everything(ctx);
	CHECK_RC(ju_close(ctx), 0);
}

/* perf names a sample after the first line that holds its address, so a
 * dead blob's line must go when new code is published over it: at the
 * same start, and overlapping at another start. */
static void reused_address_has_only_its_new_name(void)
{
	ju_ctx *ctx = open_map();
	publish_slots(ctx, 0, 10);
	CHECK_RC(ju_unpublish(ctx, R + 3 * SLOT), 0);
	ju_blob b = blob(3, 1);
	CHECK_RC(ju_publish(ctx, &b), 0);
	map m = read_map();
	CHECK(m.seen[3] == 1 && m.other == 0 && m.tomb == 1,
	      "same start: %d lines of the new name, %d others, %d tombstoned", m.seen[3], m.other, m.tomb);
	CHECK_RC(ju_unpublish(ctx, R + 5 * SLOT), 0);
	b = blob(5, 1);
	b.start = R + 5 * SLOT + 16; /* overlaps the dead blob's second half */
	CHECK_RC(ju_publish(ctx, &b), 0);
	m = read_map();
	CHECK(m.seen[5] == 1 && m.other == 0 && m.tomb == 2,
	      "overlapping start: %d lines of the new name, %d others, %d tombstoned", m.seen[5], m.other,
	      m.tomb);
	/* a dead blob's line with nothing over it stays for perf */
	CHECK_RC(ju_unpublish(ctx, R + 7 * SLOT), 0);
	b = blob(8, 0);
	m = read_map();
	CHECK(m.lines == 12 && m.tomb == 2 && m.seen[7] == 1,
	      "freed, not reused: %ld lines, %d tombstoned, slot 7 named %d times", m.lines, m.tomb,
	      m.seen[7]);
	live[7] = false;
	CHECK_RC(ju_unpublish(ctx, R + 5 * SLOT + 16), 0);
	live[5] = false;
	unpublish_everything(ctx);
	CHECK_RC(ju_close(ctx), 0);
	unlink(path);
}

int main(void)
{
	R = mmap(NULL, SLOTS * SLOT, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	compaction_keeps_exactly_the_live_lines();
	map_stays_within_twice_the_live_lines();
	reader_never_sees_a_half_written_map();
	planted_link_at_the_new_files_name_is_not_followed();
	fault_in_compaction_leaves_a_valid_map();
	unlink(path);
	reused_address_has_only_its_new_name();
	child_of_an_exact_map_gets_a_copy_of_it(false);
	unlink(path);
	child_of_an_exact_map_gets_a_copy_of_it(true);
	unlink(path);
	return unit_done("test-perfmap-compaction");
}
