/* SPDX-License-Identifier: MIT */
/* ch_libunwind.c - channel for nongnu libunwind (memray, heaptrack, any
 * program linked with -lunwind): each arena is registered with
 * _U_dyn_register as one UNW_INFO_FORMAT_REMOTE_TABLE entry whose table
 * points at the FDEs of the arena's .eh_frame, read in place.
 *
 * What libunwind 1.6 does with it (src/mi/Gfind_dynamic_proc_info.c,
 * src/dwarf/Gfind_proc_info-lsb.c):
 *   - Every lookup walks the dynamic list first, without taking its lock, and
 *     uses the first entry whose [start_ip, end_ip) holds the pc; no other
 *     entry is tried.  Our entries span arena hulls, which are disjoint; code
 *     of another context or JIT inside one of our hulls is hidden from
 *     libunwind (a limit of the format, as of libgcc's list).
 *   - The table is searched for the last entry with start_ip_offset <=
 *     pc - segbase (both int32); the FDE is read at segbase + fde_offset, and
 *     its own [pc_begin, pc_begin + pc_range) must hold the pc, else the
 *     lookup reports "no info" and libunwind falls back to the ELF objects
 *     and then to the rbp chain.  So a tombstoned FDE (range 0) hides its
 *     blob with no change to the table.
 *   - table_len counts unw_word_t units, not entries.
 *   - UNW_INFO_FORMAT_IP_OFFSET would be the better format but the dynamic
 *     list does not accept it (unwi_extract_dynamic_proc_info).
 *   - Register and cancel bump _U_dyn_info_list.generation, which only
 *     remote unwinders read.  The local caches of unwind rules (keyed by pc)
 *     are flushed by unw_flush_cache alone, so we call it whenever a blob
 *     goes away: a JIT reuses freed addresses for other code.  Nothing
 *     flushes the per-thread frame cache of unw_backtrace (x86-64
 *     Gtrace.c): a thread that walked through a pc keeps what it learned
 *     there for its lifetime, even after other code is published there.
 *   - A lookup may still read an entry, its table and the image just after
 *     we cancel it: arena.c frees retired arenas, and with them our state
 *     (lu_discard), only after a grace period.
 *   - Lookups walk from the head with no lock, so replacing an entry is
 *     register-new (at the head), then cancel-old later: a lookup that
 *     started before the register cannot see the new entry, and if the old
 *     one were unlinked while the lookup stands in front of it, it would see
 *     neither and fall back to the rbp chain for that frame.  unw_backtrace
 *     would then cache that guess for the pc for the thread's lifetime.  So
 *     a replaced entry stays registered, behind its replacement (lookups
 *     that start later take the new entry first), until arena.c frees its
 *     arena after the grace period, or until more than DEFER_MAX are
 *     waiting, oldest first.  No lookup may take a waiting entry's word for
 *     a blob that died after it was replaced, so such an entry must stay
 *     behind one that knows.  Entries that overlap were never live at the
 *     same time, so the one registered first was also retired first, and
 *     oldest-first cancelling keeps that.  A blob that dies in the rebuild
 *     that retires its arena is tombstoned there first (arena_unpublish).
 *     An entry that goes with no replacement (its last blob, unpublish_all)
 *     takes with it the waiting entries it, or any of them, overlaps.
 *     _U_dyn_cancel clears the entry's links after unlocking, so a lookup
 *     standing on an entry as it is cancelled stops there; the interface
 *     offers nothing better, and tests/unit/test-threads.c measures how
 *     rare that is.
 *
 * libunwind's types come from ch_libunwind.h, not libunwind.h: the library
 * must build and load without libunwind, which it finds with dlsym at open.
 */
#include "ch_libunwind.h"
#include "cfi.h"
#include "internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <stdlib.h>
#include <string.h>

/* Replaced entries kept registered at most (see above): each one lengthens
 * every lookup that walks past it. */
enum { DEFER_MAX = 64 };

/* One arena's registration: the entry, then its table. */
struct lu_reg {
	struct lu_reg *older, *newer; /* in the queue of replaced entries */
	bool queued;                  /* replaced, still registered */
	lu_dyn_info di;
	lu_entry table[];
};

struct lu_state {
	void (*dyn_register)(lu_dyn_info *);
	void (*dyn_cancel)(lu_dyn_info *);
	void (*flush_cache)(void *as, uint64_t lo, uint64_t hi); /* NULL: do not flush */
	void **local_addr_space;                                 /* unw_local_addr_space */
	struct lu_reg *oldest, *newest;                          /* replaced entries still registered */
	size_t n_queued;
};

static const char table_name[] = "jitunwind";

/* unw_flush_cache and unw_local_addr_space per target, as libunwind.so
 * exports them.  None on AArch64: libunwind enables .debug_frame there, and
 * unw_flush_cache unmaps the .debug_frame list that other threads' lookups
 * may be reading. */
static const struct {
	uint16_t machine;
	const char *flush, *local_as;
} flush_syms[] = {
	{ EM_X86_64, "_Ux86_64_flush_cache", "_ULx86_64_local_addr_space" },
};

/* ---- open/close ------------------------------------------------------------ */

static int lu_open(struct ju_ctx *ctx)
{
	void *reg = dlsym(RTLD_DEFAULT, "_U_dyn_register");
	void *cancel = dlsym(RTLD_DEFAULT, "_U_dyn_cancel");
	if (!reg || !cancel)
		return JU_FAIL(JU_ENOCONSUMER, "libunwind channel: nongnu libunwind is not loaded in "
					       "this process (no _U_dyn_register/_U_dyn_cancel)");
	struct lu_state *s = ju__calloc(1, sizeof *s);
	if (!s)
		return JU_FAIL(JU_ENOMEM, "out of memory");
	s->dyn_register = (void (*)(lu_dyn_info *))reg;
	s->dyn_cancel = (void (*)(lu_dyn_info *))cancel;
	for (size_t i = 0; i < sizeof flush_syms / sizeof *flush_syms; i++) {
		if (flush_syms[i].machine != ctx->arch->elf_machine)
			continue;
		void *flush = dlsym(RTLD_DEFAULT, flush_syms[i].flush);
		void **as = dlsym(RTLD_DEFAULT, flush_syms[i].local_as);
		if (flush && as) {
			s->flush_cache = (void (*)(void *, uint64_t, uint64_t))flush;
			s->local_addr_space = as;
		}
	}
	/* The table's offsets are 32-bit: images must be allocated near the code. */
	ctx->near_code_images = true;
	ctx->lu = s;
	ju__log(ctx, JU_LOG_INFO, "libunwind channel: _U_dyn_register found%s",
		s->flush_cache ? "" : " (no unw_flush_cache: its caches are not flushed)");
	return 0;
}

static void lu_close(struct ju_ctx *ctx)
{
	free(ctx->lu);
	ctx->lu = NULL;
	ctx->near_code_images = false;
}

/* ---- arenas ---------------------------------------------------------------- */

/* Visit the FDEs of an arena, in address order. */
static size_t each_fde(const arena *a, lu_entry *out)
{
	size_t n = 0;
	for (uint32_t k = 0; k < a->n; k++) {
		const uint8_t *p = a->image + a->recs[k].fde_off;
		const uint8_t *end = p + a->recs[k].fde_len;
		while (p + 4 <= end) {
			if (out) {
				uint64_t pc = load_u64(p + FDE_OFF_PC_BEGIN);
				out[n] = (lu_entry){
					.start_ip_offset = (int32_t)(pc - a->lo),
					.fde_offset = (int32_t)((uint64_t)(uintptr_t)p - a->lo),
				};
			}
			n++;
			p += 4 + (size_t)load_u32(p);
		}
	}
	return n;
}

static bool fits_i32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* libunwind computes (int32_t)(pc - segbase) and segbase + fde_offset: the
 * hull and every FDE must lie within ±2 GiB of segbase (the hull's start). */
static int check_range(const arena *a)
{
	if (a->hi - a->lo > (uint64_t)INT32_MAX)
		return JU_FAIL(JU_ERANGE,
			       "libunwind channel: code [%#llx, %#llx) spans more than the "
			       "2 GiB a table offset can reach",
			       (unsigned long long)a->lo, (unsigned long long)a->hi);
	uint64_t eh = (uint64_t)(uintptr_t)(a->image + a->eh_off);
	int64_t first = (int64_t)(eh - a->lo), last = first + (int64_t)a->eh_size;
	if (!fits_i32(first) || !fits_i32(last))
		return JU_FAIL(JU_ERANGE,
			       "libunwind channel: unwind tables at %#llx are more than "
			       "2 GiB from their code at %#llx",
			       (unsigned long long)eh, (unsigned long long)a->lo);
	return 0;
}

static int lu_prepare(struct ju_ctx *ctx, arena *a)
{
	(void)ctx;
	int err = check_range(a);
	if (err)
		return err;
	size_t n = each_fde(a, NULL);
	struct lu_reg *r = ju__malloc(sizeof *r + n * sizeof *r->table);
	if (!r)
		return JU_FAIL(JU_ENOMEM, "out of memory for a libunwind table of %zu entries", n);
	each_fde(a, r->table);
	r->older = r->newer = NULL;
	r->queued = false;
	r->di = (lu_dyn_info){
		.start_ip = a->lo,
		.end_ip = a->hi,
		.format = LU_FORMAT_REMOTE_TABLE,
		.rti = {
			.name_ptr = (uint64_t)(uintptr_t)table_name,
			.segbase = a->lo,
			.table_len = n * sizeof *r->table / sizeof(uint64_t),
			.table_data = (uint64_t)(uintptr_t)r->table,
		},
	};
	a->lu = r;
	return 0;
}

/* _U_dyn_register and _U_dyn_cancel take libunwind's list lock: signals
 * held off meanwhile (signals.c). */
static void lu_call(void (*fn)(lu_dyn_info *), lu_dyn_info *di)
{
	sigset_t old;
	ju__signals_block(&old);
	fn(di);
	ju__signals_restore(&old);
}

static void enqueue(struct lu_state *s, struct lu_reg *r)
{
	r->older = s->newest;
	*(s->newest ? &s->newest->newer : &s->oldest) = r;
	s->newest = r;
	r->queued = true;
	s->n_queued++;
}

/* Unregister a replaced entry that was left waiting. */
static void cancel_queued(struct lu_state *s, struct lu_reg *r)
{
	*(r->older ? &r->older->newer : &s->oldest) = r->newer;
	*(r->newer ? &r->newer->older : &s->newest) = r->older;
	r->older = r->newer = NULL;
	r->queued = false;
	s->n_queued--;
	lu_call(s->dyn_cancel, &r->di);
}

/* A state reaches discard never registered, cancelled, or still waiting:
 * live arenas are retired (and so unregistered or queued) before they are
 * freed. */
static void lu_discard(struct ju_ctx *ctx, arena *a)
{
	if (a->lu && a->lu->queued)
		cancel_queued(ctx->lu, a->lu);
	free(a->lu);
	a->lu = NULL;
}

static void flush(struct lu_state *s)
{
	if (s->flush_cache) {
		sigset_t old;
		ju__signals_block(&old);
		s->flush_cache(*s->local_addr_space, 0, UINT64_MAX);
		ju__signals_restore(&old);
	}
}

static void lu_swap(struct ju_ctx *ctx, arena *const *add, size_t n_add, arena *const *del, size_t n_del)
{
	struct lu_state *s = ctx->lu;
	/* Lookups read the list without its lock: everything an entry points
	 * at (table, image) must be visible before the entry is. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	/* New first, at the head, so lookups that start from now on find them
	 * before anything they replace. */
	for (size_t k = 0; k < n_add; k++)
		lu_call(s->dyn_register, &add[k]->lu->di);
	bool gone = n_add == 0; /* a blob left with its arena, or dead ones were dropped */
	for (size_t i = 0; i < n_del; i++) {
		struct lu_reg *r = del[i]->lu;
		if (!r)
			continue;
		gone |= del[i]->n_dead > 0;
		if (n_add) {
			enqueue(s, r); /* wait behind the replacement (see the top) */
			continue;
		}
		/* Gone with no replacement: a waiting entry behind it may say
		 * that a blob that died since is live.  Of entries that overlap,
		 * the older is the one retired first: newest first, every waiting
		 * entry that overlaps this one or one cancelled here goes too
		 * (the span is their hull, which may take a few more). */
		uint64_t lo = r->di.start_ip, hi = r->di.end_ip;
		for (struct lu_reg *q = s->newest, *next; q; q = next) {
			next = q->older;
			if (q->di.start_ip >= hi || q->di.end_ip <= lo)
				continue;
			lo = q->di.start_ip < lo ? q->di.start_ip : lo;
			hi = q->di.end_ip > hi ? q->di.end_ip : hi;
			cancel_queued(s, q);
		}
		lu_call(s->dyn_cancel, &r->di); /* lu_discard frees it after the grace period */
	}
	while (s->n_queued > DEFER_MAX)
		cancel_queued(s, s->oldest);
	if (gone)
		flush(s);
}

static void lu_blobs_dead(struct ju_ctx *ctx, arena *a, const uint32_t *ks, size_t n)
{
	(void)a;
	(void)ks;
	(void)n;
	/* The tombstone already hides the blob (libunwind checks the FDE's own
	 * range after the table search); only the cached rules remain. */
	flush(ctx->lu);
}

/* A reused slot's entry gets its new start before the FDE is rewritten
 * (phase 0): while the FDE's range is still 0 a lookup that finds the
 * entry reports no info, and the table stays sorted (arena.c keeps every
 * slot between its neighbours).  One FDE per record, so entry k is record
 * k's.  No flush: the cached rules of the freed range went when it died. */
static void lu_reuse_commit(struct ju_ctx *ctx, reuse_set *rs, int phase)
{
	(void)ctx;
	if (phase != 0)
		return;
	for (size_t j = 0; j < rs->n; j++) {
		const reuse_item *it = &rs->it[j];
		if (!it->a->lu)
			continue;
		uint64_t pc = load_u64(rs->stage + it->rec->fde_off + FDE_OFF_PC_BEGIN);
		__atomic_store_n(&it->a->lu->table[it->k].start_ip_offset, (int32_t)(pc - it->a->lo),
				 __ATOMIC_RELEASE);
	}
}

const ju_channel_ops ju_ch_libunwind = {
	.bit = JU_CH_LIBUNWIND,
	.name = "libunwind",
	.open = lu_open,
	.close = lu_close,
	.arena_prepare = lu_prepare,
	.arena_discard = lu_discard,
	.arena_swap = lu_swap,
	.blobs_dead = lu_blobs_dead,
	.reuse_commit = lu_reuse_commit,
};
