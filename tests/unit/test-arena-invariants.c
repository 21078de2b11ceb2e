/* SPDX-License-Identifier: MIT */
/* test-arena-invariants.c - whatever the order of publishes and unpublishes,
 * the arena set stays well formed and every unwinder sees exactly the live
 * blobs.
 *
 * Thousands of blobs at fake addresses (one inaccessible reservation: nothing
 * runs) are published and unpublished in monotone and random orders, singly
 * and in batches.  After every step, through the library's internal state:
 *   - arena hulls are sorted and disjoint, each the hull of its records,
 *     records sorted, dead counts right, no arena wider than libunwind's
 *     table offsets allow;
 *   - the number of arenas is within arena.c's bound;
 *   - every live blob is found by arena_find, by libgcc's _Unwind_Find_FDE
 *     (an FDE covering the pc) and, when nongnu libunwind can be loaded, by
 *     unw_get_proc_info_by_ip through the libunwind channel's tables;
 *   - unpublished blobs are found by none of them.
 * Large states are checked on a deterministic sample of blobs, and in full
 * at the end of each phase.  Failed publishes (every allocation and mmap
 * failing in turn, SQLite-style) must leave all of it unchanged.  Last,
 * ju_unpublish_all and ju_close must leave nothing registered anywhere.
 */
#include "cfi.h"
#include "internal.h"
#include "unit.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/mman.h>

#if __has_include(<libunwind.h>) && defined(__x86_64__)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#define HAVE_LIBUNWIND_H 1
#endif

enum { N_SLOTS = 4096, SLOT = 64, SAMPLE = 16 };

static uint8_t *R; /* PROT_NONE reservation: fake code addresses */
static ju_ctx *ctx;
static bool live[N_SLOTS];
static size_t n_live;
static uint64_t rng = 0x9e3779b97f4a7c15u;

void ju__fault_after(long n);
long ju__fault_remaining(void);

static const void *(*gcc_find_fde)(void *pc, void *bases);
#ifdef HAVE_LIBUNWIND_H
static int (*unw_by_ip)(unw_addr_space_t, unw_word_t, unw_proc_info_t *, void *);
static unw_addr_space_t *unw_local_as;
#endif

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static size_t rand_below(size_t n)
{
	return (size_t)(next_rand() % n);
}

/* ---- the blobs ------------------------------------------------------------- */

/* Slot i: a blob of 16..63 bytes at R + i * SLOT.  Every third blob has CFI
 * in two sub-ranges with a gap between them (one FDE over both, the gap's
 * return address undefined); the others are leaves. */
static uint32_t blob_size(size_t i)
{
	return 16 + (uint32_t)(i * 7 % 48);
}

static bool two_ranges(size_t i)
{
	return i % 3 == 0;
}

static const uint8_t no_insns[1] = { 0 }; /* DW_CFA_nop */

static ju_blob blob_of(size_t i, ju_cfi_range cr[2])
{
	uint32_t size = blob_size(i);
	ju_blob b = { .sz = sizeof(ju_blob),
		      .start = R + i * SLOT,
		      .size = size,
		      .name = "blob",
		      .frame = { .kind = JU_FRAME_LEAF } };
	if (two_ranges(i)) {
		cr[0] = (ju_cfi_range){ 0, 8, no_insns, 1 };
		cr[1] = (ju_cfi_range){ 12, size, no_insns, 1 };
		b.frame = (ju_frame){ .kind = JU_FRAME_CFI, .u.cfi = { cr, 2 } };
	}
	return b;
}

/* The pcs that must be covered: first and last byte of each FDE. */
static size_t pcs_of(size_t i, uintptr_t pcs[4])
{
	uintptr_t s = (uintptr_t)R + i * SLOT;
	uint32_t size = blob_size(i);
	if (!two_ranges(i)) {
		pcs[0] = s, pcs[1] = s + size - 1;
		return 2;
	}
	pcs[0] = s, pcs[1] = s + 7, pcs[2] = s + 12, pcs[3] = s + size - 1;
	return 4;
}

/* ---- what each consumer sees ----------------------------------------------- */

static bool gcc_covers(uintptr_t pc)
{
	void *bases[3];
	const uint8_t *fde = gcc_find_fde((void *)pc, bases);
	if (!fde)
		return false;
	uint64_t begin = load_u64(fde + FDE_OFF_PC_BEGIN), range = load_u64(fde + FDE_ABS8_OFF_RANGE);
	return pc >= begin && pc - begin < range;
}

/* 1: covered, 0: not, -1: libunwind not loaded. */
static int libunwind_covers(uintptr_t pc)
{
#ifdef HAVE_LIBUNWIND_H
	if (!unw_by_ip)
		return -1;
	unw_proc_info_t pi;
	memset(&pi, 0, sizeof pi);
	int rc = unw_by_ip(*unw_local_as, pc, &pi, NULL);
	return rc == 0 && pi.start_ip <= pc && pc < pi.end_ip && pi.format == UNW_INFO_FORMAT_REMOTE_TABLE;
#else
	(void)pc;
	return -1;
#endif
}

static bool lib_finds(size_t i)
{
	arena *a;
	blob_rec *r = arena_find(ctx, (uintptr_t)R + i * SLOT, &a);
	return r && r->start == (uintptr_t)R + i * SLOT && r->size == blob_size(i);
}

/* The bound of arena.c's max_arenas(). */
static size_t arena_bound(size_t n)
{
	size_t lg = 0;
	while (n >>= 1)
		lg++;
	return 16 + 2 * lg;
}

/* ---- the invariants ---------------------------------------------------------- */

static int step_no;
static const char *phase;

/* Hulls every step; records (O(live)) on full checks and every 32nd step. */
static void check_arenas(bool records)
{
	size_t total_live = 0;
	for (size_t i = 0; i < ctx->n_arenas; i++) {
		const arena *a = ctx->arenas[i];
		CHECK(a->n > 0 && a->lo < a->hi, "%s step %d: arena %zu is empty", phase, step_no, i);
		if (i + 1 < ctx->n_arenas)
			CHECK(a->hi <= ctx->arenas[i + 1]->lo,
			      "%s step %d: arenas %zu [%#llx,%#llx) and %zu [%#llx,...) overlap or are out of order",
			      phase, step_no, i, (unsigned long long)a->lo, (unsigned long long)a->hi, i + 1,
			      (unsigned long long)ctx->arenas[i + 1]->lo);
		CHECK(a->hi - a->lo <= ((uint64_t)1 << 30), "%s step %d: arena %zu spans %llu bytes", phase,
		      step_no, i, (unsigned long long)(a->hi - a->lo));
		CHECK(!(ctx->channels & JU_CH_LIBUNWIND) || a->lu,
		      "%s step %d: arena %zu has no libunwind registration", phase, step_no, i);
		total_live += a->n - a->n_dead;
		if (!records)
			continue;
		uint64_t hi = 0;
		uint32_t dead = 0;
		for (uint32_t k = 0; k < a->n; k++) {
			const blob_rec *r = &a->recs[k];
			if (k)
				CHECK(a->recs[k - 1].start + a->recs[k - 1].size <= r->start,
				      "%s step %d: records of arena %zu out of order", phase, step_no, i);
			if (r->start + r->size > hi)
				hi = r->start + r->size;
			dead += (r->flags & REC_DEAD) != 0;
		}
		CHECK(a->recs[0].start == a->lo && hi == a->hi,
		      "%s step %d: arena %zu hull is not the hull of its records", phase, step_no, i);
		CHECK(dead == a->n_dead && dead < a->n, "%s step %d: arena %zu has %u dead of %u, counted %u",
		      phase, step_no, i, dead, a->n, a->n_dead);
	}
	CHECK(total_live == n_live && ju_count(ctx) == n_live,
	      "%s step %d: %zu live in arenas, ju_count %zu, want %zu", phase, step_no, total_live,
	      ju_count(ctx), n_live);
	CHECK(ctx->n_arenas <= arena_bound(n_live), "%s step %d: %zu arenas for %zu live, bound %zu", phase,
	      step_no, ctx->n_arenas, n_live, arena_bound(n_live));
}

static void check_slot(size_t i)
{
	uintptr_t pcs[4];
	size_t n = pcs_of(i, pcs);
	bool want = live[i];
	CHECK(lib_finds(i) == want, "%s step %d: arena_find(slot %zu) is %d, want %d", phase, step_no, i,
	      !want, want);
	for (size_t k = 0; k < n; k++) {
		CHECK(gcc_covers(pcs[k]) == want, "%s step %d: libgcc %s pc %#lx of slot %zu", phase, step_no,
		      want ? "does not find" : "still finds", (unsigned long)pcs[k], i);
		int lu = libunwind_covers(pcs[k]);
		if (lu >= 0)
			CHECK(lu == want, "%s step %d: libunwind %s pc %#lx of slot %zu", phase, step_no,
			      want ? "does not find" : "still finds", (unsigned long)pcs[k], i);
	}
	if (two_ranges(i)) { /* the gap between the two ranges is in the blob's one FDE */
		uintptr_t gap = (uintptr_t)R + i * SLOT + 9;
		CHECK(gcc_covers(gap) == want, "%s step %d: libgcc %s the gap of slot %zu", phase, step_no,
		      want ? "does not cover" : "still covers", i);
		int lu = libunwind_covers(gap);
		if (lu >= 0)
			CHECK(lu == want, "%s step %d: libunwind %s the gap of slot %zu", phase, step_no,
			      want ? "does not cover" : "still covers", i);
	}
}

static void check_all(bool full)
{
	step_no++;
	check_arenas(full || step_no % 32 == 0);
	if (full) {
		for (size_t i = 0; i < N_SLOTS; i++)
			check_slot(i);
		return;
	}
	for (int k = 0; k < SAMPLE; k++)
		check_slot(rand_below(N_SLOTS));
}

/* ---- steps ------------------------------------------------------------------- */

/* Publish up to 64 slots as one batch. */
static void publish_batch(const size_t *idx, size_t n)
{
	ju_blob b[64] = { 0 }; /* all set below; GCC 12 sees a maybe-uninitialized read */
	ju_cfi_range cr[64][2];
	for (size_t k = 0; k < n; k++)
		b[k] = blob_of(idx[k], cr[k]);
	int rc = ju_publish_batch(ctx, b, n);
	CHECK(rc == 0, "%s: publish of %zu blobs: %s: %s", phase, n, ju_strerror(rc), ju_errmsg());
	if (rc == 0) {
		for (size_t k = 0; k < n; k++)
			live[idx[k]] = true;
		n_live += n;
	}
}

static void publish_one(size_t i)
{
	publish_batch(&i, 1);
}

static void unpublish_one(size_t i)
{
	int rc = ju_unpublish(ctx, R + i * SLOT);
	CHECK(rc == 0, "%s: unpublish of slot %zu: %s: %s", phase, i, ju_strerror(rc), ju_errmsg());
	if (rc == 0) {
		live[i] = false;
		n_live--;
	}
}

/* A random free / live slot (there must be one). */
static size_t pick(bool want_live)
{
	size_t i = rand_below(N_SLOTS);
	while (live[i] != want_live)
		i = (i + 1) % N_SLOTS;
	return i;
}

static void unpublish_all_slots(void)
{
	for (size_t i = 0; i < N_SLOTS; i++)
		if (live[i])
			unpublish_one(i);
}

/* ---- phases ------------------------------------------------------------------ */

static void monotone_singles(bool up)
{
	phase = up ? "monotone singles up" : "monotone singles down";
	for (size_t k = 0; k < N_SLOTS; k++) {
		publish_one(up ? k : N_SLOTS - 1 - k);
		check_all(k < 64);
	}
	check_all(true);
	CHECK(ctx->n_arenas <= 13, "%s: %zu arenas for %d blobs published in order, want <= log2 + 1", phase,
	      ctx->n_arenas, N_SLOTS);
	for (size_t k = 0; k < N_SLOTS; k++) {
		unpublish_one(up ? k : N_SLOTS - 1 - k);
		check_all(N_SLOTS - k < 64);
	}
	check_all(true);
}

static void monotone_batches(void)
{
	phase = "monotone batches of 64";
	size_t idx[64];
	for (size_t at = 0; at < N_SLOTS; at += 64) {
		for (size_t k = 0; k < 64; k++)
			idx[k] = at + k;
		publish_batch(idx, 64);
		check_all(false);
	}
	check_all(true);
	/* unpublish every other one, then the rest */
	for (size_t i = 0; i < N_SLOTS; i += 2) {
		unpublish_one(i);
		check_all(false);
	}
	check_all(true);
	unpublish_all_slots();
	check_all(true);
}

static void random_singles(int steps)
{
	phase = "random singles";
	for (int s = 0; s < steps; s++) {
		bool pub = n_live == 0 || (n_live < N_SLOTS && rand_below(100) < 55);
		if (pub)
			publish_one(pick(false));
		else
			unpublish_one(pick(true));
		check_all(false);
	}
	check_all(true);
	unpublish_all_slots();
	check_all(true);
}

static void random_batches(int steps)
{
	phase = "random batches";
	size_t idx[64];
	for (int s = 0; s < steps; s++) {
		if (n_live < N_SLOTS - 64 && rand_below(100) < 50) {
			size_t n = 1 + rand_below(64);
			for (size_t k = 0; k < n; k++) {
				size_t i;
				bool dup;
				do { /* distinct free slots */
					i = pick(false);
					dup = false;
					for (size_t j = 0; j < k; j++)
						dup |= idx[j] == i;
				} while (dup);
				idx[k] = i;
			}
			publish_batch(idx, n);
		} else {
			size_t n = 1 + rand_below(n_live < 32 ? n_live + 1 : 32);
			for (size_t k = 0; k < n && n_live; k++)
				unpublish_one(pick(true));
		}
		check_all(false);
	}
	check_all(true);
}

/* Blobs in runs (a JIT's code pages) and holes inside large arenas: the
 * split path of arena.c. */
static void churn_in_gaps(int rounds)
{
	phase = "churn in gaps";
	for (size_t i = 0; i < N_SLOTS; i++)
		if (!live[i] && i % 4 != 3)
			publish_one(i);
	check_all(true);
	for (int r = 0; r < rounds; r++) {
		size_t i = pick(true);
		unpublish_one(i);
		check_all(false);
		publish_one(pick(false));
		check_all(false);
	}
	check_all(true);
}

/* The n-th allocation or mmap of a publish fails, for n = 1, 2, ... until
 * the publish succeeds: each failure must change nothing anyone can see. */
static void failed_publishes_change_nothing(void)
{
	phase = "fault injection";
	for (size_t i = 0; i < N_SLOTS; i += 3) /* a big arena with gaps to publish into */
		if (!live[i])
			publish_one(i);
	size_t idx[8];
	for (size_t k = 0; k < 8; k++) { /* slots across the arena, made free */
		idx[k] = 1 + 3 * (k * 37 % (N_SLOTS / 3 - 1));
		if (live[idx[k]])
			unpublish_one(idx[k]);
	}
	size_t n_arenas = ctx->n_arenas;
	int failures = 0, absorbed = 0;
	for (long n = 1; n < 10000; n++) {
		ju_blob b[8];
		ju_cfi_range cr[8][2];
		for (size_t k = 0; k < 8; k++)
			b[k] = blob_of(idx[k], cr[k]);
		ju__fault_after(n);
		int rc = ju_publish_batch(ctx, b, 8);
		bool hit = ju__fault_remaining() == 0;
		ju__fault_after(0);
		if (rc == 0) {
			/* Succeeding is right too when the failure hit an attempt the
			 * library can do without (an mmap hint near the code): then the
			 * blobs must be published properly.  Take them back and go on
			 * to the next fault point, until one is never reached. */
			for (size_t k = 0; k < 8; k++)
				live[idx[k]] = true;
			n_live += 8;
			check_all(true);
			if (!hit)
				break;
			absorbed++;
			for (size_t k = 0; k < 8; k++)
				unpublish_one(idx[k]);
			n_arenas = ctx->n_arenas;
			continue;
		}
		failures++;
		CHECK(hit && (rc == JU_ENOMEM || rc == JU_ERANGE), "failure %ld: %s: %s", n, ju_strerror(rc),
		      ju_errmsg());
		if (!hit)
			break;
		CHECK(ctx->n_arenas == n_arenas, "failure %ld changed the arena count", n);
		check_all(false);
		for (size_t k = 0; k < 8; k++)
			check_slot(idx[k]);
	}
	CHECK(failures > 3, "only %d injected failures: is fault injection wired?", failures);
	printf("fault injection: %d failing publishes left no trace, %d faults absorbed\n", failures,
	       absorbed);
}

static void retire_everything(void)
{
	phase = "unpublish_all";
	CHECK_RC(ju_close(ctx), JU_EBUSY);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	memset(live, 0, sizeof live);
	n_live = 0;
	CHECK(ctx->n_arenas == 0, "%zu arenas left after ju_unpublish_all", ctx->n_arenas);
	check_all(true);
	CHECK_RC(ju_close(ctx), 0);
	ctx = NULL;
	size_t found_gcc = 0, found_lu = 0;
	for (size_t i = 0; i < N_SLOTS; i++) {
		uintptr_t pcs[4];
		size_t n = pcs_of(i, pcs);
		for (size_t k = 0; k < n; k++) {
			found_gcc += gcc_covers(pcs[k]);
			found_lu += libunwind_covers(pcs[k]) == 1;
		}
	}
	CHECK(found_gcc == 0, "libgcc still finds %zu pcs after ju_close", found_gcc);
	CHECK(found_lu == 0, "libunwind still finds %zu pcs after ju_close", found_lu);
#ifdef HAVE_LIBUNWIND_H
	if (unw_by_ip) {
		unw_dyn_info_list_t *(*list_addr)(void) =
			(unw_dyn_info_list_t * (*)(void)) dlsym(RTLD_DEFAULT, "_U_dyn_info_list_addr");
		CHECK(list_addr && list_addr()->first == NULL,
		      "libunwind's dynamic list still has entries after ju_close");
	}
#endif
}

/* Blobs more than 1 GiB apart never share an arena (libunwind's table
 * offsets), whatever the order.  Unwinder channel only: with the libunwind
 * channel, code deep inside a large reservation cannot get its image within
 * reach (see the report on image.c's alloc_image). */
static void far_apart(void)
{
	phase = "far apart";
	const size_t G = (size_t)1 << 30;
	uint8_t *big = mmap(NULL, 3 * G, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (big == MAP_FAILED) {
		printf("note: cannot reserve 3 GiB; far-apart blobs not checked\n");
		return;
	}
	ju_ctx *saved = ctx;
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_UNWINDER, .flags = JU_OPT_NO_ENV };
	CHECK_RC(ju_open(&o, &ctx), 0);
	const size_t offs[] = { G / 2, 0, 3 * G - 64, G + G / 4, 2 * G + G / 2, G / 2 + 4096, 2 * G };
	enum { N_FAR = sizeof offs / sizeof *offs };
	for (size_t i = 0; i < N_FAR; i++) {
		ju_blob b = { .sz = sizeof(ju_blob),
			      .start = big + offs[i],
			      .size = 32,
			      .name = "far",
			      .frame = { .kind = JU_FRAME_LEAF } };
		CHECK_RC(ju_publish(ctx, &b), 0);
		n_live++;
		check_arenas(true);
		for (size_t k = 0; k <= i; k++)
			CHECK(gcc_covers((uintptr_t)big + offs[k] + 31),
			      "far apart: libgcc does not find blob %zu after publishing %zu", k, i);
	}
	CHECK(ctx->n_arenas >= 3, "far apart: %zu arenas for blobs spread over 3 GiB", ctx->n_arenas);
	CHECK_RC(ju_unpublish_all(ctx), 0);
	n_live = 0;
	CHECK_RC(ju_close(ctx), 0);
	for (size_t k = 0; k < N_FAR; k++)
		CHECK(!gcc_covers((uintptr_t)big + offs[k]), "far apart: libgcc still finds blob %zu", k);
	ctx = saved;
	munmap(big, 3 * G);
}

/* ---- setup ------------------------------------------------------------------- */

static void load_consumers(void)
{
	void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW);
	if (!gcc || !(gcc_find_fde = (const void *(*)(void *, void *))dlsym(gcc, "_Unwind_Find_FDE")))
		UNIT_SKIP("libgcc_s.so.1 with _Unwind_Find_FDE is not available");
#ifdef HAVE_LIBUNWIND_H
	/* Global, so the channel's dlsym(RTLD_DEFAULT) finds _U_dyn_register. */
	if (dlopen("libunwind.so.8", RTLD_NOW | RTLD_GLOBAL)) {
		unw_by_ip = (int (*)(unw_addr_space_t, unw_word_t, unw_proc_info_t *, void *))dlsym(
			RTLD_DEFAULT, "_ULx86_64_get_proc_info_by_ip");
		unw_local_as = dlsym(RTLD_DEFAULT, "_ULx86_64_local_addr_space");
		if (!unw_local_as)
			unw_by_ip = NULL;
	}
#endif
	if (!unw_by_ip)
		printf("note: nongnu libunwind not loadable; its channel is not checked\n");
}

int main(void)
{
	load_consumers();
	R = mmap(NULL, (size_t)N_SLOTS * SLOT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (R == MAP_FAILED)
		UNIT_SKIP("cannot reserve address space");
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_UNWINDER | (unw_by_ip ? JU_CH_LIBUNWIND : 0),
			 .flags = JU_OPT_NO_ENV };
	int rc = ju_open(&o, &ctx);
	if (rc) {
		printf("FAIL ju_open: %s: %s\n", ju_strerror(rc), ju_errmsg());
		return 1;
	}
	monotone_singles(true);
	monotone_singles(false);
	monotone_batches();
	random_singles(3000);
	random_batches(1500);
	churn_in_gaps(1500);
	failed_publishes_change_nothing();
	retire_everything();
	far_apart();
	munmap(R, (size_t)N_SLOTS * SLOT);
	return unit_done("arenas_stay_disjoint_and_every_unwinder_sees_exactly_the_live_blobs");
}
