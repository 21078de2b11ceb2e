/* SPDX-License-Identifier: MIT */
/* bench-publish.c - what publishing costs, side by side in one run.
 *
 *   bench-publish publish [--max N] [--channels LIST]
 *       ns per blob to publish, single and in batches of 64, for each channel
 *       alone and for all of them, with 1k, 10k, 100k, 1M blobs already
 *       published (monotone addresses, as a JIT's bump allocator gives).
 *   bench-publish backtrace [--max N]
 *       ns per glibc backtrace() through two JIT frames with N blobs
 *       published, next to N = the two frames alone.
 *   bench-publish memory [--max N]
 *       bytes per published blob (malloc'd and mapped by the library, and
 *       with libgcc's own sort arrays after the first unwind).
 *   bench-publish churn [--max N]
 *       code that is freed and reused: with 1k, 100k, 1M blobs published,
 *       one unpublished and published again at the same place, the places
 *       random (the adversarial pattern) or ascending; and 64 at random
 *       places unpublished in one ju_unpublish_batch and published again in
 *       one ju_publish_batch.
 *   bench-publish collect [--max N]
 *       a code collection: with N blobs published (1M), 10 % of them at
 *       random places unpublished in one batch, then as many new blobs (new
 *       names, some smaller) published into the freed places, 64 a batch.
 *   bench-publish ir BASE BATCH MASK [DEBUG]
 *       for callgrind (bench/callgrind-publish.sh): publish 4096 blobs in
 *       measured_publish() after BASE are published, so
 *       --toggle-collect=measured_publish counts only those instructions.
 *       DEBUG 1 gives each blob a line table, 2 the rows and three nested
 *       guest frames; the bytes of the gdb images per blob are printed.
 *   bench-publish ir-cfi SHAPE BASE BATCH MASK
 *       for callgrind (bench/callgrind-cfi.sh): blobs shaped as CPython's
 *       executors (JU_FRAME_CFI, one range per stencil copy, every copy of a
 *       stencil pointing at that stencil's one static instruction array;
 *       SHAPE "cold": 3 ranges, a cold exit; "trace": 60 ranges), each in a
 *       page of its own at descending addresses as mmap gives them.  1024
 *       are published in measured_publish_cfi() after BASE are.
 *   --carry K (any mode)
 *       what every fake blob carries, as ir's DEBUG: 0 (the default) a name
 *       and frame, 1 a line table too, 2 the rows and three nested guest
 *       frames, so backtrace, churn and memory compare blobs with and
 *       without trees side by side.
 *
 * Blobs other than the two real frames are address ranges in an inaccessible
 * reservation: publishing never reads the code (only jitdump does, which is
 * therefore measured apart, with real readable bytes).
 */
#include "jitunwind.h"
#include "formats/clock.h"
#include "formats/gdbjit.h"

#include <execinfo.h>
#include <stdbool.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

enum { SLOT = 64, BATCH = 64 };

static uint8_t *R; /* reservation for fake blobs */
static size_t R_slots;
static char (*names)[32];

/* What the blobs carry besides a name and frame (ir mode's DEBUG argument):
 * 0 nothing, 1 a line table (12 rows), 2 the rows and a tree of guest
 * frames three deep (a trace inlining f, which inlines g, which inlines h). */
static int debug_kind;
static ju_line bench_rows[12];
static const ju_inline bench_tree[] = {
	{ 4, 44, 0, 3, "py:f", "f.py", NULL },
	{ 8, 40, 1, 12, "py:g", "g.py", NULL },
	{ 12, 36, 2, 21, "py:h", "h.py", NULL },
};

static ju_blob blob_at(size_t slot)
{
	if (!names[slot][0])
		snprintf(names[slot], sizeof names[slot], "bench:%zu", slot);
	ju_blob b = { .sz = sizeof(ju_blob),
		      .start = R + slot * SLOT,
		      .size = 48,
		      .name = names[slot],
		      .frame = { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8 } } };
	if (debug_kind) {
		b.file = "trace.py", b.lines = bench_rows, b.n_lines = 12;
		if (debug_kind == 2)
			b.inlines = bench_tree, b.n_inlines = 3;
	}
	return b;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench: %s: %s: %s\n", what, ju_strerror(err), ju_errmsg());
	exit(1);
}

/* NONE: no channel at all (mask 0 means the default channels, so "none" is
 * asked for through JITUNWIND); measures the core alone. */
#define NONE UINT32_MAX

static ju_ctx *open_ctx(uint32_t channels)
{
	ju_options o = { .sz = sizeof(ju_options), .channels = channels, .flags = JU_OPT_NO_ENV };
	if (channels == NONE) {
		setenv("JITUNWIND", "none", 1);
		o = (ju_options){ .sz = sizeof(ju_options) };
	}
	ju_ctx *c;
	int err = ju_open(&o, &c);
	unsetenv("JITUNWIND");
	if (err)
		die("ju_open", err);
	return c;
}

/* Publish slots [from, to) in batches of `batch`. */
static void fill(ju_ctx *c, size_t from, size_t to, size_t batch)
{
	ju_blob b[BATCH];
	for (size_t s = from; s < to;) {
		size_t n = 0;
		while (n < batch && s < to)
			b[n++] = blob_at(s++);
		int err = batch == 1 ? ju_publish(c, b) : ju_publish_batch(c, b, n);
		if (err)
			die("publish", err);
	}
}

/* ns per blob to publish `count` more blobs after `base` are published. */
static double measure(uint32_t channels, size_t base, size_t count, size_t batch)
{
	ju_ctx *c = open_ctx(channels);
	fill(c, 0, base, BATCH);
	double t0 = now_ns();
	fill(c, base, base + count, batch);
	double ns = (now_ns() - t0) / (double)count;
	ju_unpublish_all(c);
	ju_close(c);
	return ns;
}

/* The channels whose consumers this process has, but jitdump (file I/O,
 * measured apart). */
static uint32_t all_but_jitdump(void)
{
	static uint32_t mask = UINT32_MAX;
	if (mask == UINT32_MAX) {
		ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_ALL, .flags = JU_OPT_NO_ENV };
		ju_ctx *c;
		if (ju_open(&o, &c))
			die("ju_open", -1);
		mask = ju_channels(c) & ~(uint32_t)JU_CH_JITDUMP;
		ju_close(c);
	}
	return mask;
}

static struct {
	const char *name;
	uint32_t mask;
} configs[] = {
	{ "all but jitdump", 0 /* set in main */ },
	{ "unwinder", JU_CH_UNWINDER },
	{ "gdb", JU_CH_GDB },
	{ "perfmap", JU_CH_PERFMAP },
	{ "none (core only)", NONE },
};

static void bench_publish(size_t max)
{
	static const size_t bases[] = { 1000, 10000, 100000, 1000000 };
	printf("# publish cost, ns per blob (monotone addresses; 4096 blobs measured, batches of 64 and singles)\n");
	printf("%-18s %-6s", "channels", "mode");
	for (size_t i = 0; i < 4 && bases[i] <= max; i++)
		printf(" %10zu", bases[i]);
	printf("   growth 1k->max\n");
	for (size_t k = 0; k < sizeof configs / sizeof configs[0]; k++) {
		ju_ctx *probe;
		ju_options o = { .sz = sizeof(ju_options),
				 .channels = configs[k].mask,
				 .flags = JU_OPT_NO_ENV };
		if (configs[k].mask != NONE && ju_open(&o, &probe)) {
			printf("%-18s skipped: %s\n", configs[k].name, ju_errmsg());
			continue;
		}
		if (configs[k].mask != NONE)
			ju_close(probe);
		for (size_t batch = BATCH; batch >= 1; batch = batch == 1 ? 0 : 1) {
			printf("%-18s %-6s", configs[k].name, batch == 1 ? "single" : "batch");
			double first = 0, last = 0;
			for (size_t i = 0; i < 4 && bases[i] <= max; i++) {
				double ns = measure(configs[k].mask, bases[i], 4096, batch);
				printf(" %10.0f", ns);
				fflush(stdout);
				if (i == 0)
					first = ns;
				last = ns;
			}
			printf("   %.2fx\n", last / first);
		}
	}
}

/* ---- jitdump, with real bytes ------------------------------------------------ */

static void bench_jitdump(void)
{
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_JITDUMP, .flags = JU_OPT_NO_ENV };
	ju_ctx *c;
	if (ju_open(&o, &c)) {
		printf("jitdump            skipped: %s\n", ju_errmsg());
		return;
	}
	size_t n = 4096;
	uint8_t *code = mmap(NULL, n * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	memset(code, 0x90, n * SLOT);
	ju_blob b[BATCH];
	double t0 = now_ns();
	for (size_t s = 0; s < n; s += BATCH) {
		for (size_t k = 0; k < BATCH; k++) {
			b[k] = blob_at(s + k);
			b[k].start = code + (s + k) * SLOT;
		}
		int err = ju_publish_batch(c, b, BATCH);
		if (err)
			die("jitdump publish", err);
	}
	printf("jitdump            batch  %10.0f ns per blob (48-byte blobs, file I/O included)\n",
	       (now_ns() - t0) / (double)n);
	ju_unpublish_all(c);
	ju_close(c);
	munmap(code, n * SLOT);
}

/* ---- backtrace through two JIT frames -------------------------------------------- */

/* Two real blobs: jit_a calls bt_middle, which calls jit_b, which calls
 * bt_inner, which runs backtrace() `reps` times. */
static uint8_t *code;
static void (*jit_a)(void), (*jit_b)(void);
static long reps;
static double bt_ns;
static int bt_depth;

__attribute__((noinline)) void bt_inner(void)
{
	void *pcs[64];
	double t0 = now_ns();
	for (long i = 0; i < reps; i++)
		bt_depth = backtrace(pcs, 64);
	bt_ns = (now_ns() - t0) / (double)reps;
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void bt_middle(void)
{
	jit_b();
	__asm__ volatile("" ::: "memory");
}

static size_t emit_fp_call(uint8_t *p, void *target)
{
	size_t n = 0;
	uint64_t t = (uintptr_t)target;
	p[n++] = 0x55;                               /* push %rbp */
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5; /* mov %rsp,%rbp */
	p[n++] = 0x48, p[n++] = 0xb8;                /* movabs target,%rax */
	memcpy(p + n, &t, 8), n += 8;
	p[n++] = 0xff, p[n++] = 0xd0; /* call *%rax */
	p[n++] = 0x5d;                /* pop %rbp */
	p[n++] = 0xc3;                /* ret */
	return n;
}

static void make_code(void)
{
	code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	emit_fp_call(code, (void *)bt_middle);
	emit_fp_call(code + 64, (void *)bt_inner);
	mprotect(code, 4096, PROT_READ | PROT_EXEC);
	jit_a = (void (*)(void))(void *)code;
	jit_b = (void (*)(void))(void *)(code + 64);
}

static double backtrace_with(size_t n_fake)
{
	ju_ctx *c = open_ctx(all_but_jitdump());
	static const ju_range epi[] = { { 17, 18 } };
	ju_blob real[2] = {
		{ .sz = sizeof(ju_blob),
		  .start = code,
		  .size = 18,
		  .name = "jit_a",
		  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, epi, 1 } } },
		{ .sz = sizeof(ju_blob),
		  .start = code + 64,
		  .size = 18,
		  .name = "jit_b",
		  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, epi, 1 } } },
	};
	fill(c, 0, n_fake, BATCH);
	int err = ju_publish_batch(c, real, 2);
	if (err)
		die("publish real", err);
	reps = 1000;
	jit_a(); /* warm: libgcc sorts the new objects on the first lookup */
	reps = 20000;
	jit_a();
	ju_unpublish_all(c);
	ju_close(c);
	return bt_ns;
}

static void bench_backtrace(size_t max)
{
	make_code();
	printf("# glibc backtrace() through two JIT frames, ns per call\n");
	/* best of three, alternating, so neither side gets the warm caches */
	double one = 1e18;
	for (int r = 0; r < 3; r++) {
		double ns = backtrace_with(0);
		one = ns < one ? ns : one;
	}
	printf("%10s published: %8.0f ns   (depth %d)\n", "2", one, bt_depth);
	for (size_t n = 1000; n <= max; n *= 10) {
		double ns = 1e18;
		for (int r = 0; r < 3; r++) {
			double t = backtrace_with(n);
			ns = t < ns ? t : ns;
		}
		printf("%10zu published: %8.0f ns   %.2fx\n", n + 2, ns, ns / one);
	}
}

/* ---- memory ------------------------------------------------------------------ */

static size_t heap_bytes(void)
{
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd;
}

static void bench_memory(size_t max)
{
	printf("# memory per published blob, bytes (channels: %#x)\n", all_but_jitdump());
	printf("#   burst: right after publishing, retired arenas still in their grace period\n");
	printf("#   steady: after the grace period and one more change (which frees them)\n");
	make_code();
	for (size_t n = 1000; n <= max; n *= 10) {
		size_t before = heap_bytes();
		ju_ctx *c = open_ctx(all_but_jitdump());
		fill(c, 0, n, BATCH);
		size_t burst = heap_bytes() - before;
		struct timespec nap = { 0, 150 * 1000 * 1000 };
		nanosleep(&nap, NULL);
		ju_blob extra = blob_at(n);
		if (ju_publish(c, &extra) || ju_unpublish(c, extra.start))
			die("memory: extra", -1);
		size_t steady = heap_bytes() - before;
		void *pcs[8];
		backtrace(pcs, 8); /* makes libgcc sort its objects: its memory too */
		size_t with_gcc = heap_bytes() - before;
		printf("%10zu blobs: burst %6.1f, steady %6.1f bytes/blob in the library; %6.1f with "
		       "libgcc's sort arrays\n",
		       n, (double)burst / (double)n, (double)steady / (double)n,
		       (double)with_gcc / (double)n);
		ju_unpublish_all(c);
		ju_close(c);
	}
}

/* ---- churn ------------------------------------------------------------------- */

enum { RANDOM, ASCENDING, BATCHED };

/* n distinct random slots below `below` (a partial Fisher-Yates shuffle of
 * perm, which holds a permutation of [0, below)). */
static void pick_distinct(size_t *perm, size_t below, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		size_t j = i + (size_t)rand() % (below - i);
		size_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* One churn measurement: n blobs published, then pairs of unpublish and
 * publish again at the same place, the places random or ascending, or 64
 * random ones a batch each way, for at most 2 s or 20000 pairs.  ns per
 * pair. */
static double churn(uint32_t channels, size_t n, int how)
{
	ju_ctx *c = open_ctx(channels);
	fill(c, 0, n, BATCH);
	srand(42);
	size_t *perm = malloc(n * sizeof *perm);
	if (!perm)
		die("churn: out of memory", -1);
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	size_t rounds = 0;
	double t0 = now_ns(), t = t0;
	while (rounds < 20000 && t - t0 < 2e9) {
		if (how == BATCHED) {
			const void *starts[BATCH];
			ju_blob b[BATCH];
			pick_distinct(perm, n, BATCH);
			for (size_t i = 0; i < BATCH; i++) {
				starts[i] = R + perm[i] * SLOT;
				b[i] = blob_at(perm[i]);
			}
			if (ju_unpublish_batch(c, starts, BATCH))
				die("churn unpublish batch", -1);
			int err = ju_publish_batch(c, b, BATCH);
			if (err)
				die("churn publish batch", err);
			rounds += BATCH;
		} else {
			size_t s = how == ASCENDING ? rounds % n : (size_t)rand() % n;
			if (ju_unpublish(c, R + s * SLOT))
				die("churn unpublish", -1);
			ju_blob b = blob_at(s);
			int err = ju_publish(c, &b);
			if (err)
				die("churn publish", err);
			rounds++;
		}
		if (rounds % 16 == 0 || how == BATCHED)
			t = now_ns();
	}
	free(perm);
	double ns = (now_ns() - t0) / (double)rounds;
	ju_unpublish_all(c);
	ju_close(c);
	return ns;
}

static void bench_churn(size_t max)
{
	static const size_t sizes[] = { 1000, 100000, 1000000 };
	const struct {
		const char *name;
		uint32_t mask;
	} cfg[] = {
		{ "in-memory", all_but_jitdump() & (JU_CH_UNWINDER | JU_CH_LIBUNWIND | JU_CH_GDB) },
		{ "all but jitdump", all_but_jitdump() },
	};
	printf("# churn: n blobs published; unpublish one and publish it again at the same place: us per pair\n");
	printf("%-16s %-10s", "channels", "places");
	for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max; i++)
		printf(" %10zu", sizes[i]);
	printf("\n");
	static const char *const how_name[] = { "random", "ascending", "batch-64" };
	for (size_t k = 0; k < sizeof cfg / sizeof *cfg; k++) {
		for (int how = RANDOM; how <= BATCHED; how++) {
			printf("%-16s %-10s", cfg[k].name, how_name[how]);
			for (size_t i = 0; i < sizeof sizes / sizeof *sizes && sizes[i] <= max; i++) {
				printf(" %10.1f", churn(cfg[k].mask, sizes[i], how) / 1e3);
				fflush(stdout);
			}
			printf("\n");
		}
	}
}

/* ---- a code collection ------------------------------------------------------- */

static void bench_collect(size_t n)
{
	static const uint32_t sizes[] = { 48, 40, 32, 16 };
	ju_ctx *c = open_ctx(all_but_jitdump() & (JU_CH_UNWINDER | JU_CH_LIBUNWIND | JU_CH_GDB));
	fill(c, 0, n, BATCH);
	size_t dead = n / 10;
	size_t *perm = malloc(n * sizeof *perm);
	const void **starts = malloc(dead * sizeof *starts);
	char(*fresh)[32] = malloc(dead * sizeof *fresh);
	if (!perm || !starts || !fresh)
		die("collect: out of memory", -1);
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	srand(7);
	pick_distinct(perm, n, dead);
	for (size_t i = 0; i < dead; i++)
		starts[i] = R + perm[i] * SLOT;
	double t0 = now_ns();
	if (ju_unpublish_batch(c, starts, dead))
		die("collect: unpublish batch", -1);
	double t1 = now_ns();
	for (size_t i = 0; i < dead; i += BATCH) {
		ju_blob b[BATCH];
		size_t m = dead - i < BATCH ? dead - i : BATCH;
		for (size_t q = 0; q < m; q++) {
			snprintf(fresh[i + q], sizeof fresh[i + q], "new:%zu", perm[i + q]);
			b[q] = blob_at(perm[i + q]);
			b[q].name = fresh[i + q];
			b[q].size = sizes[(i + q) % 4];
		}
		int err = ju_publish_batch(c, b, m);
		if (err)
			die("collect: publish", err);
	}
	double t2 = now_ns();
	printf("# a code collection: %zu blobs published, %zu (10%%) unpublished at random places in one "
	       "batch, then %zu new ones published there, %d a batch\n",
	       n, dead, dead, BATCH);
	printf("unpublish batch: %8.1f ms  (%6.2f us per blob)\n", (t1 - t0) / 1e6,
	       (t1 - t0) / 1e3 / (double)dead);
	printf("publish again:   %8.1f ms  (%6.2f us per blob)\n", (t2 - t1) / 1e6,
	       (t2 - t1) / 1e3 / (double)dead);
	printf("per pair:        %8.2f us\n", (t2 - t0) / 1e3 / (double)dead);
	ju_unpublish_all(c);
	ju_close(c);
	free(perm);
	free(starts);
	free(fresh);
}

/* ---- instruction counts ------------------------------------------------------- */

__attribute__((noinline)) void measured_publish(ju_ctx *c, size_t base, size_t batch)
{
	fill(c, base, base + 4096, batch);
	__asm__ volatile("" ::: "memory");
}

/* For callgrind: N fake blobs and the two real frames published, then 2000
 * backtraces in bt_inner (--toggle-collect=bt_inner; divide by 2000). */
static void bench_ir_backtrace(size_t n)
{
	make_code();
	ju_ctx *c = open_ctx(all_but_jitdump());
	static const ju_range epi[] = { { 17, 18 } };
	ju_blob real[2] = {
		{ .sz = sizeof(ju_blob),
		  .start = code,
		  .size = 18,
		  .name = "jit_a",
		  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, epi, 1 } } },
		{ .sz = sizeof(ju_blob),
		  .start = code + 64,
		  .size = 18,
		  .name = "jit_b",
		  .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, epi, 1 } } },
	};
	fill(c, 0, n, BATCH);
	if (ju_publish_batch(c, real, 2))
		die("publish real", -1);
	/* libgcc sorts new objects on their first lookup: do that here, outside
	 * bt_inner, so the count is the steady cost. */
	void *pcs[16];
	backtrace(pcs, 16);
	reps = 2000;
	jit_a();
	ju_unpublish_all(c);
	ju_close(c);
}

/* ---- CPython's executors: raw CFI ranges over shared stencil arrays ---------- */

/* x86-64 call frame instructions as clang-19 writes them for stencils,
 * against the standard CIE (CFA = rsp + 8, return address at CFA - 8). */
static const uint8_t cfi_trampoline[] = {
	0x41, 0x0e, 0x10,       /* advance 1; def_cfa_offset 16 (push rbp) */
	0x86, 0x02,             /* offset rbp, CFA-16 */
	0x43, 0x0d, 0x06,       /* advance 3; def_cfa_register rbp */
	0x5a, 0x0c, 0x07, 0x08, /* advance 26; def_cfa rsp, 8 (pop rbp) */
};
static const uint8_t cfi_push_rbx[] = {
	0x41, 0x0e, 0x10, /* advance 1; def_cfa_offset 16 (push rbx) */
	0x83, 0x02,       /* offset rbx, CFA-16 */
	0x60, 0x0e, 0x08, /* advance 32; def_cfa_offset 8 (pop rbx) */
};
static const uint8_t cfi_call[] = {
	0x44, 0x0e, 0x10, /* advance 4; def_cfa_offset 16 (sub rsp, 8 before a call) */
	0x4c, 0x0e, 0x08, /* advance 12; def_cfa_offset 8 */
};
static const uint8_t cfi_two_saves[] = {
	0x42, 0x0e, 0x10, 0x8f, 0x02, /* advance 2; def_cfa_offset 16; offset r15, CFA-16 */
	0x42, 0x0e, 0x18, 0x8e, 0x03, /* advance 2; def_cfa_offset 24; offset r14, CFA-24 */
	0x41, 0x0e, 0x20, 0x83, 0x04, /* advance 1; def_cfa_offset 32; offset rbx, CFA-32 */
	0x0a, 0x50, 0x0e, 0x08, 0x0b, /* remember; advance 16; def_cfa_offset 8; restore_state */
};

/* A stencil: its code size and its instructions (NULL: none, a stencil
 * that keeps the entry frame). */
static const struct {
	uint32_t size;
	const uint8_t *cfi;
	size_t len;
} stencils[] = {
	{ 40, cfi_trampoline, sizeof cfi_trampoline },
	{ 24, NULL, 0 },
	{ 48, cfi_push_rbx, sizeof cfi_push_rbx },
	{ 18, NULL, 0 },
	{ 32, cfi_call, sizeof cfi_call },
	{ 64, cfi_two_saves, sizeof cfi_two_saves },
	{ 12, NULL, 0 },
	{ 36, cfi_call, sizeof cfi_call },
};
#define N_STENCILS (sizeof stencils / sizeof stencils[0])
enum { TRACE_RANGES = 60, CFI_STRIDE = 8192 };

static uint8_t *cfi_top; /* the reservation's end: blob i is a page or two below */
static ju_cfi_range (*cfi_ranges)[TRACE_RANGES];

/* Blob i: trampoline, then stencils 1.. in turn (a trace), or trampoline,
 * one stencil and _FATAL_ERROR (a cold exit), copied back to back. */
static ju_blob cfi_blob_at(size_t i, bool trace)
{
	ju_cfi_range *r = cfi_ranges[i];
	size_t n = trace ? TRACE_RANGES : 3;
	uint32_t at = 0;
	for (size_t k = 0; k < n; k++) {
		size_t s = k == 0 ? 0 : trace ? 1 + (k + i) % (N_STENCILS - 1) : k == 1 ? 2 : 4;
		r[k] = (ju_cfi_range){ at, at + stencils[s].size, stencils[s].cfi, stencils[s].len };
		at += stencils[s].size;
	}
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = cfi_top - (i + 1) * CFI_STRIDE,
			  .size = at,
			  .name = names[i],
			  .frame = { .kind = JU_FRAME_CFI, .u.cfi = { r, n } } };
}

static void fill_cfi(ju_ctx *c, size_t from, size_t to, size_t batch, bool trace)
{
	ju_blob b[BATCH];
	for (size_t s = from; s < to;) {
		size_t n = 0;
		while (n < batch && s < to)
			b[n++] = cfi_blob_at(s++, trace);
		int err = batch == 1 ? ju_publish(c, b) : ju_publish_batch(c, b, n);
		if (err)
			die("publish", err);
	}
}

__attribute__((noinline)) void measured_publish_cfi(ju_ctx *c, size_t base, size_t batch, bool trace)
{
	fill_cfi(c, base, base + 1024, batch, trace);
	__asm__ volatile("" ::: "memory");
}

static void bench_ir_cfi(const char *shape, size_t base, size_t batch, uint32_t mask)
{
	bool trace = !strcmp(shape, "trace");
	if (!trace && strcmp(shape, "cold"))
		die("ir-cfi: shape is cold or trace", -1);
	size_t n = base + 1024;
	uint8_t *r =
		mmap(NULL, n * CFI_STRIDE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	cfi_ranges = calloc(n, sizeof *cfi_ranges);
	if (r == MAP_FAILED || !cfi_ranges || n > R_slots)
		die("ir-cfi: out of memory", -1);
	cfi_top = r + n * CFI_STRIDE;
	for (size_t i = 0; i < n; i++) /* names made outside the count */
		snprintf(names[i], sizeof names[i], trace ? "py:f (t.py:%zu)" : "py:cold exit %zu", i);
	ju_ctx *c = open_ctx(mask);
	fill_cfi(c, 0, base, 1, trace);
	measured_publish_cfi(c, base, batch, trace);
	ju_unpublish_all(c);
	ju_close(c);
}

/* The GDB JIT interface's list, as the GDB manual defines it. */
extern struct jit_descriptor __jit_debug_descriptor;

static void bench_ir(size_t base, size_t batch, uint32_t mask)
{
	ju_ctx *c = open_ctx(mask);
	fill(c, 0, base, BATCH);
	measured_publish(c, base, batch);
	uint64_t bytes = 0;
	for (const struct jit_code_entry *e = __jit_debug_descriptor.first_entry; e; e = e->next_entry)
		bytes += e->symfile_size;
	printf("gdb image bytes per blob: %.1f\n", (double)bytes / (double)(base + 4096));
	ju_unpublish_all(c);
	ju_close(c);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"usage: bench-publish publish|backtrace|memory|churn|collect [--max N] [--carry 0|1|2]\n");
		return 2;
	}
	size_t max = 1000000;
	for (int i = 2; i + 1 < argc; i++) {
		if (!strcmp(argv[i], "--max"))
			max = strtoul(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--carry"))
			debug_kind = atoi(argv[++i]);
	}
	if (!strcmp(argv[1], "ir") && argc == 6) { /* ir BASE BATCH MASK DEBUG */
		debug_kind = atoi(argv[5]);
		argc = 5;
	}
	for (uint32_t r = 0; r < 12; r++)
		bench_rows[r] = (ju_line){ r * 4, 10 + r };
	if ((!strcmp(argv[1], "ir") && argc == 5) || (!strcmp(argv[1], "ir-backtrace") && argc >= 3))
		max = strtoul(argv[2], NULL, 10);
	if (!strcmp(argv[1], "ir-cfi") && argc == 6)
		max = strtoul(argv[3], NULL, 10);
	R_slots = max + 8192;
	R = mmap(NULL, R_slots * SLOT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	names = calloc(R_slots, sizeof *names);
	if (R == MAP_FAILED || !names)
		return 1;
	configs[0].mask = all_but_jitdump();
	if (!strcmp(argv[1], "publish")) {
		bench_publish(max);
		bench_jitdump();
	} else if (!strcmp(argv[1], "backtrace")) {
		bench_backtrace(max);
	} else if (!strcmp(argv[1], "memory")) {
		bench_memory(max);
	} else if (!strcmp(argv[1], "ir-backtrace") && argc >= 3) {
		bench_ir_backtrace(strtoul(argv[2], NULL, 10));
	} else if (!strcmp(argv[1], "ir") && argc == 5) {
		bench_ir(max, strtoul(argv[3], NULL, 10), (uint32_t)strtoul(argv[4], NULL, 0));
	} else if (!strcmp(argv[1], "ir-cfi") && argc == 6) {
		bench_ir_cfi(argv[2], max, strtoul(argv[4], NULL, 10), (uint32_t)strtoul(argv[5], NULL, 0));
	} else if (!strcmp(argv[1], "churn")) {
		bench_churn(max);
	} else if (!strcmp(argv[1], "collect")) {
		bench_collect(max);
	} else {
		return 2;
	}
	return 0;
}
