/* SPDX-License-Identifier: MIT */
/* test-gdb-descriptor.c - the GDB JIT interface channel and its
 * outside-reader extension, checked the way an outside reader sees them.
 *
 *   descriptor_carries_the_extension        static fields, exported symbols
 *   each_arena_is_one_entry_with_its_image  list, images parsed by libelf
 *   a_failed_publish_leaves_the_list_alone  fault injection in prepare
 *   graveyard_frees_after_grace_or_budget   reclaim_seq follows the policy (the
 *       byte budget is arena.c's, exercised by test-threads)
 *   readers_never_see_a_torn_list           a reader thread (this process)
 *                                           and a reader process (a forked
 *                                           writer) follow the seqlock
 *                                           protocol while blobs churn
 *   images_read_cleanly_by_readelf          `readelf -W -a` on live images
 *   entries_lie_together                    64 entries within 64 KiB, so an
 *                                           outside reader's walk reads a
 *                                           few runs of pages, not the heap
 *
 * The reader, the writer and the image checker are in test-gdb-reader.h.
 */
#include "internal.h"
#include "test-gdb-reader.h"

#include <sys/mman.h>
#include <sys/wait.h>

extern gdbjit_descriptor __jit_debug_descriptor;
void __jit_debug_register_code(void);
void ju__fault_after(long n);

/* ---- descriptor_carries_the_extension ------------------------------------------ */

static void descriptor_carries_the_extension(void)
{
	const gdbjit_descriptor *d = &__jit_debug_descriptor;
	CHECK(d->version == GDBJIT_VERSION, "version %u", d->version);
	CHECK(!memcmp(d->magic, GDBJIT_EXT_MAGIC, GDBJIT_EXT_MAGIC_LEN), "magic");
	CHECK(d->ext_version == GDBJIT_EXT_VERSION, "ext_version %u", d->ext_version);
	CHECK(d->sizeof_descriptor == sizeof(gdbjit_descriptor), "sizeof_descriptor %u",
	      d->sizeof_descriptor);
	CHECK(d->sizeof_entry == sizeof(gdbjit_entry), "sizeof_entry %u", d->sizeof_entry);
	CHECK(d->grace_ns > 0, "grace_ns is 0");
	CHECK(d->seq % 2 == 0, "seq %" PRIu64 " is odd at rest", d->seq);
}

/* ---- each_arena_is_one_entry_with_its_image ------------------------------------- */

static size_t list_length(const gdbjit_descriptor *d)
{
	size_t n = 0;
	for (uint64_t p = d->first_entry; p && n <= MAX_ENTRIES;
	     p = ((gdbjit_entry *)(uintptr_t)p)->next_entry)
		n++;
	return n;
}

static void each_arena_is_one_entry_with_its_image(void)
{
	gdbjit_descriptor *d = &__jit_debug_descriptor;
	ju_ctx *ctx = open_gdb_only();
	if (!ctx)
		return;
	uint64_t seq0 = d->seq, t0 = now_ns();
	size_t slots[3] = { 10, 11, 12 };
	CHECK_RC(publish_slots(ctx, slots, 3), 0);
	uint64_t t1 = now_ns();
	CHECK(d->seq > seq0 && d->seq % 2 == 0, "seq %" PRIu64 " after a publish from %" PRIu64, d->seq,
	      seq0);
	CHECK(d->n_entries == 1 && list_length(d) == 1,
	      "one arena, one entry: n_entries %" PRIu64 ", list %zu", d->n_entries, list_length(d));
	CHECK(d->action_flag == GDBJIT_REGISTER_FN, "action %u", d->action_flag);
	CHECK(d->relevant_entry == d->first_entry, "relevant_entry is the new entry");
	CHECK(d->timestamp_ns >= t0 && d->timestamp_ns <= t1, "timestamp within the call");
	const gdbjit_entry *e = (const gdbjit_entry *)(uintptr_t)d->first_entry;
	if (e) {
		CHECK(e->prev_entry == 0 && e->next_entry == 0, "a lone entry has no neighbours");
		CHECK(e->reg_seq == d->seq, "reg_seq %" PRIu64 " vs seq %" PRIu64, e->reg_seq, d->seq);
		CHECK(e->reg_time_ns >= t0 && e->reg_time_ns <= t1, "reg_time within the call");
		CHECK(e->code_lo == (uintptr_t)region + 10 * SLOT &&
			      e->code_hi == (uintptr_t)region + 12 * SLOT + slot_size(12),
		      "code hull");
		char why[160] = "";
		long n = check_image((const uint8_t *)(uintptr_t)e->symfile_addr, e->symfile_size,
				     e->symfile_addr, e->code_lo, e->code_hi, why, sizeof why);
		CHECK(n == 3, "image: %ld symbols, %s", n, why);
	}
	/* A second batch far away is a second arena, linked at the head. */
	size_t far[2] = { 2000, 2001 };
	CHECK_RC(publish_slots(ctx, far, 2), 0);
	CHECK(d->n_entries == 2 && list_length(d) == 2, "n_entries %" PRIu64 ", list %zu", d->n_entries,
	      list_length(d));
	const gdbjit_entry *head = (const gdbjit_entry *)(uintptr_t)d->first_entry;
	CHECK(head && head->code_lo == (uintptr_t)region + 2000 * SLOT, "the new entry is first");
	CHECK(head && head->next_entry == (uintptr_t)e && e->prev_entry == (uintptr_t)head, "links");
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK(d->first_entry == 0 && d->n_entries == 0, "empty after unpublish_all");
	CHECK(d->action_flag == GDBJIT_UNREGISTER_FN, "action %u", d->action_flag);
	CHECK_RC(ju_close(ctx), 0);
	CHECK(d->reclaim_seq == d->seq,
	      "closing the last context frees the graveyard: reclaim %" PRIu64 " seq %" PRIu64,
	      d->reclaim_seq, d->seq);
}

/* ---- entries_lie_together ----------------------------------------------------------- */

/* A reader outside the process reads the list a run of pages at a time
 * (jitstack: 64 KiB); entries that each sit beside their own image make a
 * million-blob walk copy most of the heap. */
static void entries_lie_together(void)
{
	gdbjit_descriptor *d = &__jit_debug_descriptor;
	ju_ctx *ctx = open_gdb_only();
	if (!ctx)
		return;
	enum { ARENAS = 64 };
	for (size_t a = 0; a < ARENAS; a++) {
		size_t slots[64];
		for (size_t k = 0; k < 64; k++)
			slots[k] = a * 64 + k;
		CHECK_RC(publish_slots(ctx, slots, 64), 0);
	}
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t n = 0;
	for (uint64_t p = d->first_entry; p && n <= MAX_ENTRIES;
	     p = ((gdbjit_entry *)(uintptr_t)p)->next_entry) {
		lo = p < lo ? p : lo;
		hi = p + sizeof(gdbjit_entry) > hi ? p + sizeof(gdbjit_entry) : hi;
		n++;
	}
	CHECK(n == ARENAS, "%zu entries for %d arenas of 64 blobs", n, ARENAS);
	CHECK(n && hi - lo <= 65536, "%zu entries span %" PRIu64 " bytes", n, hi - lo);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

/* ---- a_failed_publish_leaves_the_list_alone --------------------------------------- */

static void a_failed_publish_leaves_the_list_alone(void)
{
	gdbjit_descriptor *d = &__jit_debug_descriptor;
	ju_ctx *ctx = open_gdb_only();
	if (!ctx)
		return;
	size_t base[2] = { 100, 101 };
	CHECK_RC(publish_slots(ctx, base, 2), 0);
	size_t failures = 0;
	for (long n = 1; n < 64; n++) {
		uint64_t seq = d->seq, first = d->first_entry, count = d->n_entries;
		size_t more[1] = { 102 };
		ju__fault_after(n);
		int rc = publish_slots(ctx, more, 1);
		ju__fault_after(0);
		if (rc == 0)
			break;
		failures++;
		CHECK(rc == JU_ENOMEM, "fault %ld: %s", n, ju_strerror(rc));
		CHECK(d->seq == seq && d->first_entry == first && d->n_entries == count,
		      "fault %ld: the descriptor changed", n);
	}
	CHECK(failures > 0, "no allocation was failed");
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

/* ---- graveyard_frees_after_grace_or_budget -------------------------------------------- */

static void graveyard_frees_after_grace_or_budget(void)
{
	gdbjit_descriptor *d = &__jit_debug_descriptor;
	ju_ctx *ctx = open_gdb_only();
	if (!ctx)
		return;
	size_t a = 300, b = 600, c = 900;
	CHECK_RC(publish_slots(ctx, &a, 1), 0);
	uint64_t t0 = now_ns();
	CHECK_RC(ju_unpublish(ctx, region + a * SLOT), 0);
	uint64_t unlinked = d->seq;
	CHECK_RC(publish_slots(ctx, &b, 1), 0);
	/* Within the grace period and far under budget: still there. */
	if (now_ns() - t0 < d->grace_ns)
		CHECK(d->reclaim_seq < unlinked,
		      "freed within the grace period (reclaim %" PRIu64 ", unlinked at %" PRIu64 ")",
		      d->reclaim_seq, unlinked);
	struct timespec nap = { 0, (long)(d->grace_ns + 20000000u) };
	nanosleep(&nap, NULL);
	CHECK(d->reclaim_seq < unlinked, "freed without a change");
	CHECK_RC(publish_slots(ctx, &c, 1), 0);
	CHECK(d->reclaim_seq >= unlinked, "not freed at the first change after the grace period");
	CHECK_RC(ju_unpublish_all(ctx), 0);

	/* Closing the context frees its retired arenas at once, and says so. */
	CHECK_RC(publish_slots(ctx, &a, 1), 0);
	CHECK_RC(ju_unpublish(ctx, region + a * SLOT), 0);
	CHECK(d->reclaim_seq < d->seq, "freed within the grace period");
	CHECK_RC(ju_close(ctx), 0);
}

/* readers_never_see_a_torn_list, in this process: a thread reads while the
 * main thread churns. */
static void thread_reader_never_sees_a_torn_list(void)
{
	static atomic_int stop;
	reader r = { .pid = getpid(), .desc = (uintptr_t)&__jit_debug_descriptor };
	void *args[2] = { &r, (void *)&stop };
	pthread_t t;
	stop = 0;
	if (pthread_create(&t, NULL, reader_thread, args)) {
		CHECK(0, "pthread_create");
		return;
	}
	unsigned long changes = churn(1.5, 1);
	stop = 1;
	pthread_join(t, NULL);
	printf("thread reader: writer made %lu changes\n", changes);
	CHECK(changes >= 100, "the writer made only %lu changes", changes);
	report_reader("thread reader", &r);
	free(r.img);
}

/* ... and from another process, as jitstack reads: the forked child
 * churns, this process reads it with process_vm_readv. */
static void process_reader_never_sees_a_torn_list(void)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		CHECK(0, "fork");
		return;
	}
	if (pid == 0) {
		int before = unit_failures;
		unsigned long changes = churn(1.5, 2);
		_exit(unit_failures > before ? 1 : changes >= 100 ? 0 : 2);
	}
	reader r = { .pid = pid, .desc = (uintptr_t)&__jit_debug_descriptor };
	static atomic_int stop;
	stop = 0;
	reader_loop(&r, &stop); /* until the child is gone */
	int status;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer process failed (status %#x)",
	      status);
	report_reader("process reader", &r);
	free(r.img);
}

/* ---- images_read_cleanly_by_readelf -------------------------------------------------- */

static void images_read_cleanly_by_readelf(void)
{
	if (system("readelf --version > /dev/null 2>&1")) {
		printf("note: readelf is not installed; images_read_cleanly_by_readelf not run\n");
		return;
	}
	char dir[] = "/tmp/test-gdb.XXXXXX";
	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	ju_ctx *ctx = open_gdb_only();
	if (!ctx)
		return;
	/* A few arenas, some blobs with line tables, one unpublished (rebuilt). */
	size_t s1[5] = { 1, 2, 3, 4, 5 }, s2[3] = { 1000, 1003, 1006 }, s3[1] = { 3000 };
	CHECK_RC(publish_slots(ctx, s1, 5), 0);
	CHECK_RC(publish_slots(ctx, s2, 3), 0);
	CHECK_RC(publish_slots(ctx, s3, 1), 0);
	CHECK_RC(ju_unpublish(ctx, region + 3 * SLOT), 0);
	const gdbjit_descriptor *d = &__jit_debug_descriptor;
	size_t n = 0;
	for (uint64_t p = d->first_entry; p; p = ((const gdbjit_entry *)(uintptr_t)p)->next_entry, n++) {
		const gdbjit_entry *e = (const gdbjit_entry *)(uintptr_t)p;
		char path[64], cmd[512];
		snprintf(path, sizeof path, "%s/entry-%zu.o", dir, n);
		FILE *f = fopen(path, "wb");
		CHECK(f && fwrite((const void *)(uintptr_t)e->symfile_addr, 1, e->symfile_size, f) ==
				      e->symfile_size,
		      "writing %s", path);
		if (f)
			fclose(f);
		/* Any output on stderr, or a warning on stdout, is a failure. */
		snprintf(cmd, sizeof cmd,
			 "readelf -W -a --debug-dump=frames,rawline,info %s > %s.txt 2> %s.err && "
			 "! grep -qi warning %s.txt && ! test -s %s.err",
			 path, path, path, path, path);
		int rc = system(cmd);
		if (rc) {
			snprintf(cmd, sizeof cmd, "cat %s.err; grep -i warning %s.txt", path, path);
			rc = system(cmd);
			CHECK(0, "readelf complained about entry %zu", n);
		}
	}
	CHECK(n == 3, "%zu entries, want 3 arenas", n);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd))
		printf("note: could not remove %s\n", dir);
}

int main(void)
{
	elf_version(EV_CURRENT);
	region = mmap(NULL, REGION_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		UNIT_SKIP("cannot reserve address space");
	struct iovec l = { &l, 1 }, r = { &l, 1 };
	if (process_vm_readv(getpid(), &l, 1, &r, 1, 0) != 1)
		UNIT_SKIP("process_vm_readv is not permitted here");

	descriptor_carries_the_extension();
	each_arena_is_one_entry_with_its_image();
	a_failed_publish_leaves_the_list_alone();
	graveyard_frees_after_grace_or_budget();
	images_read_cleanly_by_readelf();
	entries_lie_together();
	thread_reader_never_sees_a_torn_list();
	process_reader_never_sees_a_torn_list();
	return unit_done("test-gdb-descriptor");
}
