/* SPDX-License-Identifier: MIT */
/* test-fault-injection.c - every allocation, mmap and file write the library
 * makes can fail; whichever one does, the call reports an error (or, when the
 * failure only hit housekeeping, succeeds) and the published set is exactly
 * what it was before the call (or exactly what success means), as the
 * in-process unwinder sees it too.  Run under `make check SAN=1` this also
 * proves the error paths leak nothing.
 *
 * For each operation and each n = 1, 2, ... the n-th fault check inside the
 * operation fails, until an n is reached that the operation never gets to.
 */
#include "internal.h"
#include "unit.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void ju__fault_after(long n);
long ju__fault_remaining(void);

enum { BASE_BLOBS = 200, BATCH = 64, SLOT = 64 };

static const void *(*find_fde)(void *pc, void *bases);
static uint8_t *R;
static bool live[BASE_BLOBS + BATCH + 1];
static char names[BASE_BLOBS + BATCH + 1][24];
static ju_ctx *ctx;
static const ju_line rows[] = { { 0, 3 }, { 8, 4 } };

static ju_blob blob(size_t i)
{
	snprintf(names[i], sizeof names[i], "fi:%zu", i);
	ju_blob b = { .sz = sizeof(ju_blob),
		      .start = R + i * SLOT,
		      .size = 32,
		      .name = names[i],
		      .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0 } } };
	if (i % 3 == 0)
		b.file = "fi.src", b.lines = rows, b.n_lines = 2;
	return b;
}

static bool found(size_t i)
{
	void *bases[3];
	arena *a;
	bool lib = arena_find(ctx, (uintptr_t)(R + i * SLOT), &a) != NULL;
	bool gcc = find_fde(R + i * SLOT + 8, bases) != NULL;
	CHECK(lib == gcc, "blob %zu: library says %d, libgcc says %d", i, lib, gcc);
	return lib;
}

/* The published set must be exactly `live`. */
static void state_is(const char *what, long n)
{
	size_t count = 0;
	for (size_t i = 0; i <= BASE_BLOBS + BATCH; i++) {
		count += live[i];
		if (found(i) != live[i]) {
			CHECK(0, "%s, fault at check %ld: blob %zu should %sbe published", what, n, i,
			      live[i] ? "" : "not ");
			return;
		}
	}
	CHECK(ju_count(ctx) == count, "%s, fault %ld: count %zu, want %zu", what, n, ju_count(ctx), count);
}

static void setup(void)
{
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_ALL, .flags = JU_OPT_NO_ENV };
	int rc = ju_open(&o, &ctx);
	CHECK(rc == 0, "setup open: %s", ju_errmsg());
	memset(live, 0, sizeof live);
	/* 200 blobs, in batches and singles, odd slots only: new ones can land
	 * in gaps (forcing rebuilds and splits) or after them (merges). */
	ju_blob b[BASE_BLOBS];
	size_t n = 0;
	for (size_t i = 1; i < BASE_BLOBS; i += 2)
		b[n++] = blob(i);
	CHECK_RC(ju_publish_batch(ctx, b, n / 2), 0);
	for (size_t k = n / 2; k < n; k++)
		CHECK_RC(ju_publish(ctx, &b[k]), 0);
	for (size_t i = 1; i < BASE_BLOBS; i += 2)
		live[i] = true;
}

static void teardown(void)
{
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	ctx = NULL;
}

typedef int (*op_fn)(bool *after);

/* Publish a batch: half into gaps of the existing arenas, half after them. */
static int op_batch(bool *after)
{
	ju_blob b[BATCH];
	size_t n = 0;
	for (size_t i = 0; i < BATCH / 2; i++)
		b[n++] = blob(2 * i + 40);
	for (size_t i = BASE_BLOBS; n < BATCH; i++)
		b[n++] = blob(i);
	for (size_t i = 0; i < n; i++)
		after[((uint8_t *)b[i].start - R) / SLOT] = true;
	return ju_publish_batch(ctx, b, n);
}

static int op_single(bool *after)
{
	ju_blob b = blob(BASE_BLOBS + BATCH);
	after[BASE_BLOBS + BATCH] = true;
	return ju_publish(ctx, &b);
}

static int op_gap_single(bool *after)
{
	ju_blob b = blob(100);
	after[100] = true;
	return ju_publish(ctx, &b);
}

static int op_unpublish(bool *after)
{
	after[101] = false;
	return ju_unpublish(ctx, R + 101 * SLOT);
}

static void run_op(const char *what, op_fn op)
{
	for (long n = 1; n < 10000; n++) {
		setup();
		bool after[sizeof live];
		memcpy(after, live, sizeof live);
		ju__fault_after(n);
		int rc = op(after);
		bool hit = ju__fault_remaining() == 0;
		ju__fault_after(0);
		if (!hit) {
			CHECK(rc == 0, "%s without a fault: %s", what, ju_errmsg());
			memcpy(live, after, sizeof live);
			state_is(what, n);
			teardown();
			printf("%s: %ld fault points, each refused cleanly or absorbed\n", what, n - 1);
			return;
		}
		if (rc == 0)
			memcpy(live, after, sizeof live); /* the fault hit housekeeping */
		else
			CHECK(rc == JU_ENOMEM || rc == JU_ERANGE || rc == JU_EIO,
			      "%s, fault %ld: unexpected error %d (%s)", what, n, rc, ju_errmsg());
		state_is(what, n);
		teardown();
	}
	CHECK(0, "%s: fault points never ran out", what);
}

int main(void)
{
	void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW);
	find_fde = gcc ? (const void *(*)(void *, void *))dlsym(gcc, "_Unwind_Find_FDE") : NULL;
	if (!find_fde)
		UNIT_SKIP("libgcc_s.so.1 or its _Unwind_Find_FDE is not available");
	/* the file channels write into this scratch directory */
	char dir[4096];
	setenv("JITDUMPDIR", getcwd(dir, sizeof dir), 1);
	R = mmap(NULL, (BASE_BLOBS + BATCH + 2) * SLOT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	run_op("publish a batch of 64", op_batch);
	run_op("publish one after the others", op_single);
	run_op("publish one into a gap", op_gap_single);
	run_op("unpublish one", op_unpublish);

	/* ju_open itself, with every channel */
	ju_options all = { .sz = sizeof(ju_options), .channels = JU_CH_ALL, .flags = JU_OPT_NO_ENV };
	for (long n = 1; n < 1000; n++) {
		ju__fault_after(n);
		ju_ctx *c = NULL;
		int rc = ju_open(&all, &c);
		bool hit = ju__fault_remaining() == 0;
		ju__fault_after(0);
		if (rc == 0)
			CHECK_RC(ju_close(c), 0);
		else
			CHECK(c == NULL && (rc == JU_ENOMEM || rc == JU_EIO || rc == JU_ENOCONSUMER),
			      "ju_open fault %ld: %d %s", n, rc, ju_errmsg());
		if (!hit) {
			CHECK(rc == 0, "ju_open without a fault: %s", ju_errmsg());
			printf("ju_open: %ld fault points\n", n - 1);
			break;
		}
	}
	char map[64];
	snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
	unlink(map);
	return unit_done("test-fault-injection");
}
