/* SPDX-License-Identifier: MIT */
/* bench-fork.c - what fork() costs a process with many blobs published, and
 * how big the perf map stays under churn, side by side in one run.
 *
 *   bench-fork fork [--max N] [--reps R]
 *       with 1k, 10k, 100k blobs published (up to N), the time from fork()
 *       in the parent to fork() returning in the child (the fork handlers
 *       have run: the child is ready to publish), and to the child's first
 *       publish having returned (the jitdump copies the parent's records
 *       then), for the in-memory channels alone (unwinder, gdb), with the
 *       file channels too (perfmap, jitdump), and with the file channels
 *       and a perf map that holds dead lines (one blob in ten was
 *       unpublished and published again before the fork, so the child
 *       writes its map's lines instead of copying the parent's); median of
 *       R forks each, each configuration in a process of its own.
 *   bench-fork mapsize
 *       bytes of /tmp/perf-<pid>.map after P churn pairs (one blob
 *       unpublished, then published again at the same place under a new
 *       name) with L blobs live, next to the bytes of the live lines alone.
 *
 * The code is a readable mapping of zeros (the jitdump copies it), 48-byte
 * blobs 256 bytes apart (room for perf's tables after each).
 */
#include "jitunwind.h"
#include "formats/clock.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SLOT = 256, SIZE = 48, BATCH = 64 };

static uint8_t *R;
static size_t R_slots;
static char (*names)[32];
static char dump_dir[256];

static void die(const char *what, int err)
{
	fprintf(stderr, "bench-fork: %s: %s: %s\n", what, ju_strerror(err), ju_errmsg());
	exit(1);
}

static ju_blob blob_at(size_t slot, unsigned gen)
{
	snprintf(names[slot], sizeof names[slot], "bench:%zu.%u", slot, gen);
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = R + slot * SLOT,
			  .size = SIZE,
			  .name = names[slot],
			  .frame = { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8 } } };
}

static ju_ctx *open_ctx(uint32_t channels)
{
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = channels,
			 .flags = JU_OPT_NO_ENV,
			 .jitdump_dir = dump_dir };
	ju_ctx *ctx;
	int err = ju_open(&o, &ctx);
	if (err)
		die("ju_open", err);
	return ctx;
}

static void publish_range(ju_ctx *ctx, size_t from, size_t n)
{
	ju_blob b[BATCH];
	for (size_t i = 0; i < n; i += BATCH) {
		size_t k = n - i < BATCH ? n - i : BATCH;
		for (size_t j = 0; j < k; j++)
			b[j] = blob_at(from + i + j, 0);
		int err = ju_publish_batch(ctx, b, k);
		if (err)
			die("publish", err);
	}
}

static void remove_files(pid_t pid)
{
	char p[400];
	snprintf(p, sizeof p, "/tmp/perf-%d.map", (int)pid);
	unlink(p);
	snprintf(p, sizeof p, "%s/jit-%d.dump", dump_dir, (int)pid);
	unlink(p);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* One fork: the child reports when fork() returned in it and when its
 * first publish had returned, both as ns after the parent called fork(). */
static void fork_once(ju_ctx *ctx, size_t free_slot, double *ready, double *published)
{
	int p[2];
	if (pipe(p))
		exit(1);
	uint64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid == 0) {
		uint64_t t1 = now_ns();
		ju_blob b = blob_at(free_slot, 1);
		int err = ju_publish(ctx, &b);
		uint64_t t2 = now_ns();
		double out[2] = { (double)(t1 - t0), err ? -1.0 : (double)(t2 - t0) };
		ssize_t w = write(p[1], out, sizeof out);
		remove_files(getpid());
		_exit(w == (ssize_t)sizeof out ? 0 : 1);
	}
	close(p[1]);
	double in[2] = { -1, -1 };
	if (read(p[0], in, sizeof in) != (ssize_t)sizeof in)
		fprintf(stderr, "bench-fork: the child reported nothing\n");
	close(p[0]);
	waitpid(pid, NULL, 0);
	*ready = in[0];
	*published = in[1];
}

/* In a process of its own, so that each measurement starts from the same
 * memory (fork's own cost grows with the mappings it copies): publish n
 * blobs (churning one in ten if dead_lines), fork reps times, and report the
 * medians through fd. */
static void measure(uint32_t channels, size_t n, bool dead_lines, int reps, int fd)
{
	ju_ctx *ctx = open_ctx(channels);
	publish_range(ctx, 0, n);
	for (size_t i = 0; dead_lines && i < n; i += 10) {
		ju_blob b = blob_at(i, 2);
		int err = ju_unpublish(ctx, b.start);
		if (!err)
			err = ju_publish(ctx, &b);
		if (err)
			die("churn", err);
	}
	usleep(200000); /* retired arenas' grace period */
	double ready[64], pub[64];
	for (int r = 0; r < reps; r++)
		fork_once(ctx, n, &ready[r], &pub[r]);
	qsort(ready, (size_t)reps, sizeof *ready, cmp_double);
	qsort(pub, (size_t)reps, sizeof *pub, cmp_double);
	double out[2] = { ready[reps / 2], pub[reps / 2] };
	ju_unpublish_all(ctx);
	ju_close(ctx);
	remove_files(getpid());
	if (write(fd, out, sizeof out) != (ssize_t)sizeof out)
		exit(1);
}

static void bench_fork(size_t max, int reps)
{
	static const size_t ns[] = { 1000, 10000, 100000, 1000000 };
	static const struct {
		const char *name;
		uint32_t channels;
		bool dead_lines;
	} modes[] = {
		{ "in-memory (unwinder, gdb)", JU_CH_UNWINDER | JU_CH_GDB, false },
		{ "+ perfmap, jitdump", JU_CH_UNWINDER | JU_CH_GDB | JU_CH_PERFMAP | JU_CH_JITDUMP, false },
		{ "+ perfmap, jitdump; map with dead lines",
		  JU_CH_UNWINDER | JU_CH_GDB | JU_CH_PERFMAP | JU_CH_JITDUMP, true },
	};
	printf("fork to ready / to the child's first publish returned, ms (median of %d forks)\n", reps);
	printf("%-42s", "channels");
	for (size_t k = 0; k < sizeof ns / sizeof *ns && ns[k] <= max; k++)
		printf(" | %7zu blobs    ", ns[k]);
	printf("\n");
	for (size_t m = 0; m < sizeof modes / sizeof *modes; m++) {
		printf("%-42s", modes[m].name);
		fflush(stdout);
		for (size_t k = 0; k < sizeof ns / sizeof *ns && ns[k] <= max; k++) {
			int p[2];
			if (pipe(p))
				exit(1);
			pid_t pid = fork();
			if (pid == 0) {
				close(p[0]);
				measure(modes[m].channels, ns[k], modes[m].dead_lines, reps, p[1]);
				_exit(0);
			}
			close(p[1]);
			double in[2] = { -1e6, -1e6 };
			if (read(p[0], in, sizeof in) != (ssize_t)sizeof in)
				fprintf(stderr, "bench-fork: a measurement failed\n");
			close(p[0]);
			waitpid(pid, NULL, 0);
			printf(" | %6.2f / %7.2f", in[0] / 1e6, in[1] / 1e6);
			fflush(stdout);
		}
		printf("\n");
	}
}

static long map_bytes(void)
{
	char p[64];
	struct stat st;
	snprintf(p, sizeof p, "/tmp/perf-%d.map", (int)getpid());
	return stat(p, &st) ? -1 : (long)st.st_size;
}

/* Bytes of "START SIZE name\n" for the live blobs 0..live. */
static long live_bytes(size_t live)
{
	long total = 0;
	for (size_t i = 0; i < live; i++)
		total += snprintf(NULL, 0, "%llx %x %s\n", (unsigned long long)(uintptr_t)(R + i * SLOT),
				  SIZE, names[i]);
	return total;
}

static void bench_mapsize(void)
{
	static const size_t lives[] = { 1000, 10000 };
	static const size_t pairs[] = { 0, 1000, 10000, 100000 };
	printf("perf map bytes after P churn pairs with L blobs live (channels: unwinder, perfmap)\n");
	printf("%8s %8s %12s %12s %8s\n", "L", "P", "map bytes", "live lines", "ratio");
	srand(1);
	for (size_t l = 0; l < 2; l++) {
		ju_ctx *ctx = open_ctx(JU_CH_UNWINDER | JU_CH_PERFMAP);
		size_t live = lives[l], done = 0;
		publish_range(ctx, 0, live);
		for (size_t p = 0; p < sizeof pairs / sizeof *pairs; p++) {
			for (; done < pairs[p]; done++) {
				size_t slot = (size_t)rand() % live;
				ju_blob b = blob_at(slot, (unsigned)done + 1);
				int err = ju_unpublish(ctx, b.start);
				if (!err)
					err = ju_publish(ctx, &b);
				if (err)
					die("churn", err);
			}
			long m = map_bytes(), want = live_bytes(live);
			printf("%8zu %8zu %12ld %12ld %7.2fx\n", live, pairs[p], m, want,
			       (double)m / (double)want);
		}
		ju_unpublish_all(ctx);
		ju_close(ctx);
		remove_files(getpid());
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "fork";
	size_t max = 100000;
	int reps = 7;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--max"))
			max = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
	}
	if (reps < 1 || reps > 64)
		reps = 7;
	const char *base = getenv("JITDUMPDIR");
	snprintf(dump_dir, sizeof dump_dir, "%s/bench-fork.XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dump_dir)) {
		perror("mkdtemp");
		return 1;
	}
	R_slots = (max > 10000 ? max : 10000) + 1;
	R = mmap(NULL, R_slots * SLOT, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	names = calloc(R_slots, sizeof *names);
	if (R == MAP_FAILED || !names)
		return 1;
	if (!strcmp(mode, "fork"))
		bench_fork(max, reps);
	else if (!strcmp(mode, "mapsize"))
		bench_mapsize();
	else {
		fprintf(stderr, "usage: bench-fork fork [--max N] [--reps R] | mapsize\n");
		return 2;
	}
	rmdir(dump_dir);
	return 0;
}
