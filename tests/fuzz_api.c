/* SPDX-License-Identifier: MIT */
/* fuzz_api.c - libFuzzer over the public API, checked against a model.
 *
 * The input is a program: each operation is a few bytes -- publish one
 * blob, publish a batch, unpublish one start (published or not), unpublish
 * a batch (with duplicates and missing starts now and then), unpublish
 * everything, close and reopen, or arm fault injection for the next
 * operation.  Blobs sit at fake addresses of an inaccessible reservation,
 * 64 slots of 64 bytes, at a few offsets and sizes inside their slot, with
 * every frame kind.  A model keeps what must be published.  After every
 * operation:
 *   - its result is the model's: success, or the error the model predicts
 *     (JU_EOVERLAP, JU_ENOENT, JU_EINVAL, JU_EBUSY); an operation that fails
 *     (an injected fault too) changes nothing;
 *   - ju_count is the model's count;
 *   - the arena set is well formed (hulls sorted and disjoint, records
 *     sorted inside them) and its live records are exactly the model's
 *     blobs, one for one.
 * After every eighth operation and after the last:
 *   - arena_find finds exactly the live starts among all the places;
 *   - libgcc's _Unwind_Find_FDE finds each live blob's own FDE and none in
 *     a freed place: the consumer reads what the library wrote.
 * (Those lookups, 448 a sweep, were a third of the fuzzer's time when they
 * followed every operation; the walk of the records checks the same state
 * in one pass.)
 * `make fuzz` runs it long; `make check` a short smoke (t-api-fuzz-smoke),
 * which starts from tests/fuzz-api-seeds: inputs that found bugs.
 * FUZZ_TRACE=1 prints each operation and its result.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { SLOTS = 64, SLOT = 64, MAX_BATCH = 16 };

void ju__fault_after(long n);
long ju__fault_remaining(void);

struct eh_bases {
	void *tbase, *dbase, *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct eh_bases *bases);

static uint8_t *R;
static ju_ctx *ctx;
static struct {
	bool live;
	uint8_t off, size;
} model[SLOTS];
static size_t n_live;

static const struct {
	uint8_t off, size;
} places[] = { { 0, 48 }, { 0, 16 }, { 8, 40 }, { 16, 32 }, { 32, 32 }, { 40, 8 } };
enum { N_PLACES = sizeof places / sizeof places[0] };

static const ju_range epilogue = { 15, 16 };
static const ju_saved_reg saved[] = { { 3, -24, 5 } };
static const ju_saved_reg region_saved[] = { { 3, -24, 0 } };
static const uint8_t cfi_insns[] = { 0x41, 0x0e, 0x10 }; /* advance 1; def_cfa_offset 16 */

static ju_blob blob_of(size_t slot, uint8_t place, uint8_t kind, ju_cfi_range *cr)
{
	ju_blob b = { .sz = sizeof(ju_blob),
		      .start = R + slot * SLOT + places[place].off,
		      .size = places[place].size,
		      .name = "fuzz" };
	switch (kind % 4) {
	case 0: b.frame.kind = JU_FRAME_LEAF; break;
	case 1:
		b.frame = (ju_frame){ .kind = JU_FRAME_FP,
				      .u.fp = { 1, 4, b.size >= 16 ? &epilogue : NULL, b.size >= 16,
						b.size >= 8 ? saved : NULL, b.size >= 8 } };
		break;
	case 2:
		b.frame = (ju_frame){ .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8, region_saved, 1 } };
		break;
	default:
		*cr = (ju_cfi_range){ 0, b.size, cfi_insns, sizeof cfi_insns };
		b.frame = (ju_frame){ .kind = JU_FRAME_CFI, .u.cfi = { cr, 1 } };
	}
	return b;
}

static bool overlaps(size_t slot, uint8_t place)
{
	/* blobs never cross their slot */
	if (!model[slot].live)
		return false;
	unsigned a0 = model[slot].off, a1 = a0 + model[slot].size;
	unsigned b0 = places[place].off, b1 = b0 + places[place].size;
	return a0 < b1 && b0 < a1;
}

static void die(const char *what, int got, int want)
{
	fprintf(stderr, "fuzz_api: %s: got %d (%s), want %d: %s\n", what, got, ju_strerror(got), want,
		ju_errmsg());
	abort(); /* a finding: libFuzzer keeps the input */
}

/* The error an operation must give, or 0; an armed fault may turn 0 into a
 * failure, which must then change nothing. */
static void expect(const char *what, int got, int want, bool faulted, bool *applied)
{
	*applied = false;
	if (got == 0 && want == 0) {
		*applied = true;
		return;
	}
	if (want && got == want)
		return;
	if (faulted && got != 0) /* an injected fault may come first */
		return;
	die(what, got, want);
}

/* The arena set against the model, in one walk: well formed, and its live
 * records are the model's blobs, one for one (starts are strictly
 * increasing, so no two records are one blob). */
__attribute__((noinline)) static void check_state(void)
{
	if (ju_count(ctx) != n_live)
		die("ju_count", (int)ju_count(ctx), (int)n_live);
	for (size_t i = 0; i + 1 < ctx->n_arenas; i++)
		if (ctx->arenas[i]->hi > ctx->arenas[i + 1]->lo)
			die("arena hulls overlap", (int)i, -1);
	size_t live = 0;
	for (size_t i = 0; i < ctx->n_arenas; i++) {
		const arena *a = ctx->arenas[i];
		for (uint32_t k = 0; k < a->n; k++) {
			const blob_rec *r = &a->recs[k];
			if (k + 1 < a->n && r->start >= a->recs[k + 1].start)
				die("records out of order", (int)k, -1);
			if (r->flags & REC_DEAD)
				continue;
			uint64_t at = r->start - (uintptr_t)R;
			size_t s = (size_t)(at / SLOT);
			if (r->start < (uintptr_t)R || s >= SLOTS || !model[s].live ||
			    model[s].off != at % SLOT)
				die("a live record the model does not hold", (int)s, -1);
			live++;
		}
	}
	if (live != n_live)
		die("live records", (int)live, (int)n_live);
}

/* What the lookups find, at every place of every slot. */
__attribute__((noinline)) static void check_lookups(void)
{
	for (size_t s = 0; s < SLOTS; s++) {
		for (uint8_t p = 0; p < N_PLACES; p++) {
			uint8_t *start = R + s * SLOT + places[p].off;
			arena *a;
			bool is_live = model[s].live && model[s].off == places[p].off;
			bool found = arena_find(ctx, (uintptr_t)start, &a) != NULL;
			if (found != is_live) {
				fprintf(stderr, "fuzz_api: slot %zu place %u (off %u)\n", s, p,
					places[p].off);
				for (size_t q = 0; q < ctx->n_arenas; q++) {
					const arena *ar = ctx->arenas[q];
					fprintf(stderr, "  arena [%#lx, %#lx):",
						(unsigned long)(ar->lo - (uintptr_t)R),
						(unsigned long)(ar->hi - (uintptr_t)R));
					for (uint32_t r = 0; r < ar->n; r++)
						fprintf(stderr, " %#lx+%u%s",
							(unsigned long)(ar->recs[r].start - (uintptr_t)R),
							ar->recs[r].size,
							ar->recs[r].flags & REC_DEAD ? "(dead)" : "");
					fprintf(stderr, "\n");
				}
				die("arena_find", found, is_live);
			}
		}
		struct eh_bases bases;
		memset(&bases, 0, sizeof bases);
		if (!(ctx->channels & JU_CH_UNWINDER))
			continue;
		if (model[s].live) {
			/* the blob's last byte: inside its FDE for every kind */
			uint8_t *pc = R + s * SLOT + model[s].off + model[s].size - 1;
			if (!_Unwind_Find_FDE(pc, &bases) || bases.func != R + s * SLOT + model[s].off)
				die("_Unwind_Find_FDE of a live blob", bases.func != NULL, 1);
		} else if (_Unwind_Find_FDE(R + s * SLOT + 4, &bases)) {
			die("_Unwind_Find_FDE of a freed place", 1, 0);
		}
	}
}

static void open_ctx(void)
{
	ju_options o = { .sz = sizeof(ju_options),
			 .channels = JU_CH_UNWINDER | JU_CH_GDB,
			 .flags = JU_OPT_NO_ENV };
	int rc = ju_open(&o, &ctx);
	if (rc)
		die("ju_open", rc, 0);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	R = mmap(NULL, SLOTS * SLOT, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (R == MAP_FAILED)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	memset(model, 0, sizeof model);
	n_live = 0;
	open_ctx();
	size_t i = 0;
	long fault = 0;
	unsigned ops = 0;
	bool trace = getenv("FUZZ_TRACE") != NULL;
	while (i + 3 <= size) {
		uint8_t op = data[i] % 8, x = data[i + 1], y = data[i + 2];
		i += 3;
		if (fault)
			ju__fault_after(fault);
		bool armed = fault != 0;
		fault = 0;
		bool applied;
		int rc = 0;
		switch (op) {
		case 0: { /* publish one */
			size_t s = x % SLOTS;
			uint8_t p = (uint8_t)(y % N_PLACES), kind = (uint8_t)(y / N_PLACES);
			if (model[s].live && !overlaps(s, p))
				break; /* right for the library, but the model holds one blob per slot */
			ju_cfi_range cr;
			ju_blob b = blob_of(s, p, kind, &cr);
			rc = ju_publish(ctx, &b);
			expect("ju_publish", rc, overlaps(s, p) ? JU_EOVERLAP : 0, armed, &applied);
			if (applied) {
				model[s] = (__typeof__(model[s])){ true, places[p].off, places[p].size };
				n_live++;
			}
			break;
		}
		case 1: { /* publish a batch; it may clash with itself or the model */
			size_t k = 1 + x % MAX_BATCH, n = 0;
			ju_blob b[MAX_BATCH];
			ju_cfi_range cr[MAX_BATCH];
			size_t slot_of[MAX_BATCH];
			uint8_t place_of[MAX_BATCH], kind_of[MAX_BATCH];
			for (size_t j = 0; j < k && i < size; j++, i++) {
				slot_of[n] = (y + j * 7u + (data[i] >> 4)) % SLOTS;
				place_of[n] = (uint8_t)(data[i] % N_PLACES);
				kind_of[n] = (uint8_t)(data[i] >> 6);
				b[n] = blob_of(slot_of[n], place_of[n], kind_of[n], &cr[n]);
				n++;
			}
			if (!n)
				break;
			bool clash = false, two_in_a_slot = false;
			for (size_t a = 0; a < n; a++) {
				clash |= overlaps(slot_of[a], place_of[a]);
				for (size_t c = a + 1; c < n; c++) {
					if (slot_of[a] != slot_of[c])
						continue;
					two_in_a_slot = true;
					unsigned a0 = places[place_of[a]].off,
						 a1 = a0 + places[place_of[a]].size;
					unsigned c0 = places[place_of[c]].off,
						 c1 = c0 + places[place_of[c]].size;
					clash |= a0 < c1 && c0 < a1;
				}
			}
			bool beside = false; /* a slot's live blob and a new one beside it */
			for (size_t a = 0; a < n; a++)
				beside |= model[slot_of[a]].live && !overlaps(slot_of[a], place_of[a]);
			if (beside && !clash)
				break; /* right for the library; the model holds one blob per slot */
			rc = ju_publish_batch(ctx, b, n);
			expect("ju_publish_batch", rc, clash ? JU_EOVERLAP : 0, armed, &applied);
			if (applied && two_in_a_slot) {
				/* right, but the model keeps one blob per slot: take the
				 * batch back out, all of it, in one call */
				const void *starts[MAX_BATCH];
				for (size_t a = 0; a < n; a++)
					starts[a] = b[a].start;
				ju__fault_after(0);
				rc = ju_unpublish_batch(ctx, starts, n);
				if (rc)
					die("ju_unpublish_batch of a batch just published", rc, 0);
			} else if (applied) {
				for (size_t a = 0; a < n; a++) {
					model[slot_of[a]].live = true;
					model[slot_of[a]].off = places[place_of[a]].off;
					model[slot_of[a]].size = places[place_of[a]].size;
					n_live++;
				}
			}
			break;
		}
		case 2: { /* unpublish one start */
			size_t s = x % SLOTS;
			uint8_t p = (uint8_t)(y % N_PLACES);
			bool is_live = model[s].live && model[s].off == places[p].off;
			rc = ju_unpublish(ctx, R + s * SLOT + places[p].off);
			expect("ju_unpublish", rc, is_live ? 0 : JU_ENOENT, armed, &applied);
			if (applied) {
				model[s].live = false;
				n_live--;
			}
			break;
		}
		case 3: { /* unpublish a batch, now and then with a start twice or one not published */
			size_t k = 1 + x % MAX_BATCH, n = 0;
			const void *starts[MAX_BATCH + 1];
			size_t slot_of[MAX_BATCH + 1];
			bool missing = false, dup = false;
			for (size_t j = 0; j < k; j++) {
				size_t s = (y + j * 5u) % SLOTS;
				if (!model[s].live && (y & 3) != 1)
					continue;
				missing |= !model[s].live;
				slot_of[n] = s;
				starts[n++] = R + s * SLOT + (model[s].live ? model[s].off : 0);
			}
			if (n && (y & 0x80)) {
				dup = true;
				slot_of[n] = slot_of[0];
				starts[n] = starts[0];
				n++;
			}
			if (!n)
				break;
			rc = ju_unpublish_batch(ctx, starts, n);
			/* with both wrong, the first in address order decides */
			int want = missing ? JU_ENOENT : dup ? JU_EINVAL : 0;
			if (missing && dup && rc == JU_EINVAL)
				want = JU_EINVAL;
			expect("ju_unpublish_batch", rc, want, armed, &applied);
			if (applied)
				for (size_t c = 0; c < n; c++) {
					model[slot_of[c]].live = false;
					n_live--;
				}
			break;
		}
		case 4: /* unpublish everything */
			rc = ju_unpublish_all(ctx);
			expect("ju_unpublish_all", rc, 0, armed, &applied);
			if (applied) {
				memset(model, 0, sizeof model);
				n_live = 0;
			}
			break;
		case 5: /* close (refused while blobs are published) and reopen */
			ju__fault_after(0);
			rc = ju_close(ctx);
			if (n_live) {
				if (rc != JU_EBUSY)
					die("ju_close with blobs published", rc, JU_EBUSY);
			} else {
				if (rc)
					die("ju_close", rc, 0);
				open_ctx();
			}
			break;
		default: /* arm a fault for the next operation */ fault = 1 + x % 24; break;
		}
		if (trace)
			fprintf(stderr, "op %u x %u y %u armed %d: rc %d, %zu live, fault left %ld\n", op, x,
				y, armed, op < 5 ? rc : 0, n_live, ju__fault_remaining());
		ju__fault_after(0);
		ju__clear_error();
		check_state();
		if (++ops % 8 == 0)
			check_lookups();
	}
	check_lookups();
	ju__fault_after(0);
	if (ju_unpublish_all(ctx) || ju_close(ctx))
		die("cleanup", -1, 0);
	return 0;
}
