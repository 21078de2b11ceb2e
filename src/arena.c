/* SPDX-License-Identifier: MIT */
/* arena.c - the set of arenas: where each published blob lives, and how
 * arenas are planned, merged, split and rebuilt (the why is in internal.h).
 *
 * Policy, in numbers:
 *   - A publish groups the new blobs with every arena whose hull they touch
 *     (hulls must stay disjoint) into a component, rebuilt as one arena.
 *   - Binary-counter merging: the result absorbs an adjacent arena holding
 *     no more live blobs than it does, repeatedly.  Monotone allocation (the
 *     common JIT pattern) then keeps <= log2(n) arenas and copies each blob
 *     <= log2(n) times.
 *   - Churn inside a large arena (a blob placed in a freed gap) splits it
 *     around the gap instead of rebuilding it whole next time.
 *   - Above MAX_ARENAS(n) arenas, the smallest adjacent pair is merged, so
 *     unwinders that walk a list (libgcc <= 12) stay fast whatever the
 *     allocation order.
 *   - No arena spans more than MAX_SPAN bytes of address space (libunwind's
 *     tables hold 32-bit offsets).
 *   - Unpublish tombstones; an arena is rebuilt without its dead blobs when
 *     they reach a quarter of it, or at once when it has few live blobs.
 *   - A swapped-out arena is freed GRACE_NS later (see sweep()).
 */
#include "channels.h"
#include "formats/search.h"
#include "formats/clock.h"
#include "formats/ehframe.h"
#include "image.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
	SPLIT_MIN = 256,  /* split arenas bigger than this on churn */
	SMALL_ARENA = 64, /* rebuild at once on unpublish */
};
#define MAX_SPAN ((uint64_t)1 << 30)
/* Retired arenas wait JU_GRACE_NS, or less while they hold more than
 * max(JU_GRAVE_MIN_BYTES, bytes of live images) (internal.h).  The floor is high because a
 * small live set can churn fast: a test that rebuilds a 10 KiB arena 50 000
 * times a second recycled a 4 MiB floor in 8 ms, less than a descheduled
 * unwinder can take between finding an FDE and reading it. */
#define GRACE_NS JU_GRACE_NS
#define GRAVE_MIN_BYTES JU_GRAVE_MIN_BYTES

static size_t live(const arena *a)
{
	return a->n - a->n_dead;
}

static size_t max_arenas(size_t n_live)
{
	size_t lg = 0;
	while (n_live >>= 1)
		lg++;
	return 16 + 2 * lg;
}

/* ---- lookup -------------------------------------------------------------- */

/* Index of the first arena whose hull ends after addr. */
static size_t first_ending_after(const struct ju_ctx *ctx, uint64_t addr)
{
	size_t lo = 0, hi = ctx->n_arenas;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ctx->arenas[mid]->hi <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Index of the first record of a ending after addr. */
static size_t first_rec_ending_after(const arena *a, uint64_t addr)
{
	size_t lo = 0, hi = a->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a->recs[mid].start + a->recs[mid].size <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

blob_rec *arena_find(struct ju_ctx *ctx, uint64_t start, arena **where)
{
	size_t i = first_ending_after(ctx, start);
	if (i == ctx->n_arenas || ctx->arenas[i]->lo > start)
		return NULL;
	arena *a = ctx->arenas[i];
	size_t k = first_rec_ending_after(a, start);
	if (k == a->n || a->recs[k].start != start || (a->recs[k].flags & REC_DEAD))
		return NULL;
	*where = a;
	return &a->recs[k];
}

static uint64_t next_live(const struct ju_ctx *ctx, uint64_t addr)
{
	for (size_t i = first_ending_after(ctx, addr); i < ctx->n_arenas; i++) {
		const arena *a = ctx->arenas[i];
		for (size_t k = first_rec_ending_after(a, addr); k < a->n; k++)
			if (!(a->recs[k].flags & REC_DEAD) && a->recs[k].start >= addr)
				return a->recs[k].start;
	}
	return UINT64_MAX;
}

bool arena_overlaps(struct ju_ctx *ctx, uint64_t start, uint64_t end)
{
	for (size_t i = first_ending_after(ctx, start); i < ctx->n_arenas; i++) {
		const arena *a = ctx->arenas[i];
		if (a->lo >= end)
			break;
		for (size_t k = first_rec_ending_after(a, start); k < a->n; k++) {
			if (a->recs[k].start >= end)
				break;
			if (!(a->recs[k].flags & REC_DEAD))
				return true;
		}
	}
	return false;
}

static bool reserve_arenas(struct ju_ctx *ctx, size_t need);

/* Index of an arena of the set. */
static size_t index_of(const struct ju_ctx *ctx, const arena *a)
{
	return first_ending_after(ctx, a->lo);
}

/* ---- planning ------------------------------------------------------------ */

/* One group of replaced arenas [a0, a1) and the arenas replacing them. */
typedef struct comp {
	size_t a0, a1;
	size_t r0, r1; /* new records [r0, r1) of the staged batch */
	arena *out[3];
	size_t n_out;
	size_t split; /* split_point, or SIZE_MAX */
} comp;

struct arena_plan {
	comp *c;
	size_t n;
	reuse_set rs; /* rs.n > 0: the publish reuses slots, c is empty */
};

/* Live records of arenas [a0, a1) plus new records [r0, r1), sorted.  The
 * old records are sorted already (arenas are in address order and their
 * hulls disjoint), and so are the new ones: one linear merge. */
static src_rec *gather(struct ju_ctx *ctx, size_t a0, size_t a1, const blob_rec *recs, size_t r0, size_t r1,
		       const uint8_t *stage, size_t *n_out)
{
	size_t n = r1 - r0;
	for (size_t i = a0; i < a1; i++)
		n += live(ctx->arenas[i]);
	src_rec *s = ju__malloc(n * sizeof *s);
	if (!s)
		return NULL;
	size_t k = 0, j = r0;
	for (size_t i = a0; i < a1; i++) {
		const arena *a = ctx->arenas[i];
		for (size_t q = 0; q < a->n; q++) {
			const blob_rec *r = &a->recs[q];
			if (r->flags & REC_DEAD)
				continue;
			while (j < r1 && recs[j].start < r->start)
				s[k++] = (src_rec){ &recs[j++], stage, NULL };
			image_src(a, q, &s[k++]);
		}
	}
	while (j < r1)
		s[k++] = (src_rec){ &recs[j++], stage, NULL };
	*n_out = n;
	return s;
}

static uint64_t span_of(struct ju_ctx *ctx, size_t a0, size_t a1, uint64_t lo, uint64_t hi)
{
	if (a1 > a0) {
		if (ctx->arenas[a0]->lo < lo)
			lo = ctx->arenas[a0]->lo;
		if (ctx->arenas[a1 - 1]->hi > hi)
			hi = ctx->arenas[a1 - 1]->hi;
	}
	return hi - lo;
}

/* Grow a component over its neighbours by the binary-counter rule. */
static void absorb_neighbours(struct ju_ctx *ctx, comp *c, size_t lo_limit, size_t hi_limit, uint64_t lo,
			      uint64_t hi)
{
	size_t size = c->r1 - c->r0;
	for (size_t i = c->a0; i < c->a1; i++)
		size += live(ctx->arenas[i]);
	for (;;) {
		bool grew = false;
		if (c->a0 > lo_limit && live(ctx->arenas[c->a0 - 1]) <= size &&
		    span_of(ctx, c->a0 - 1, c->a1, lo, hi) <= MAX_SPAN) {
			c->a0--;
			size += live(ctx->arenas[c->a0]);
			grew = true;
		}
		if (c->a1 < hi_limit && live(ctx->arenas[c->a1]) <= size &&
		    span_of(ctx, c->a0, c->a1 + 1, lo, hi) <= MAX_SPAN) {
			size += live(ctx->arenas[c->a1]);
			c->a1++;
			grew = true;
		}
		if (!grew)
			return;
	}
}

/* Split point: if all new records of c fall into one gap between live
 * records of its single old arena, the number of live old records below
 * the gap; else SIZE_MAX. */
static size_t split_point(struct ju_ctx *ctx, const comp *c, const blob_rec *recs)
{
	if (c->a1 - c->a0 != 1)
		return SIZE_MAX;
	const arena *a = ctx->arenas[c->a0];
	if (live(a) <= SPLIT_MIN)
		return SIZE_MAX;
	uint64_t first = recs[c->r0].start;
	uint64_t last_end = recs[c->r1 - 1].start + recs[c->r1 - 1].size;
	size_t below = 0;
	for (size_t j = 0; j < a->n; j++) {
		const blob_rec *r = &a->recs[j];
		if (r->flags & REC_DEAD)
			continue;
		if (r->start < first)
			below++;
		else if (r->start < last_end)
			return SIZE_MAX; /* an old record lies between the new ones */
	}
	if (below == 0 || below == live(a))
		return SIZE_MAX;
	return below;
}

/* Free an arena that no consumer has registered, with its channel states. */
static void free_arena(struct ju_ctx *ctx, arena *a)
{
	for (size_t ch = 0; ch < JU_N_CHANNELS; ch++)
		if ((ctx->channels & ju_channel_table[ch]->bit) && ju_channel_table[ch]->arena_discard)
			ju_channel_table[ch]->arena_discard(ctx, a);
	image_free(a);
	free(a);
}

static void drop_outputs(struct ju_ctx *ctx, comp *c)
{
	for (size_t k = 0; k < c->n_out; k++)
		free_arena(ctx, c->out[k]);
	c->n_out = 0;
}

static int prepare_channels(struct ju_ctx *ctx, arena *a)
{
	for (size_t ch = 0; ch < JU_N_CHANNELS; ch++) {
		const ju_channel_ops *ops = ju_channel_table[ch];
		if (!(ctx->channels & ops->bit) || !ops->arena_prepare)
			continue;
		int err = ops->arena_prepare(ctx, a);
		if (err) {
			while (ch-- > 0) {
				ops = ju_channel_table[ch];
				if ((ctx->channels & ops->bit) && ops->arena_discard)
					ops->arena_discard(ctx, a);
			}
			return err;
		}
	}
	return 0;
}

/* Build the output arenas of a component from its sources. */
static int build_comp(struct ju_ctx *ctx, comp *c, const src_rec *s, size_t n, size_t split)
{
	image_alloc how = { .near_code = ctx->near_code_images };
	size_t cut[4] = { 0, n, n, n };
	size_t parts = 1;
	if (split != SIZE_MAX) {
		size_t n_new = c->r1 - c->r0;
		cut[1] = split;
		cut[2] = split + n_new;
		parts = 3;
	}
	for (size_t p = 0; p < parts; p++) {
		if (cut[p + 1] == cut[p])
			continue;
		arena *a;
		int err = image_build(ctx->arch, &(cie_set){ ctx->cies, ctx->n_cies }, s + cut[p],
				      cut[p + 1] - cut[p], how, &a);
		if (err)
			return err;
		c->out[c->n_out++] = a;
		err = prepare_channels(ctx, a);
		if (err) {
			c->n_out--;
			image_free(a);
			free(a);
			return err;
		}
	}
	return 0;
}

/* ---- reusing freed slots ---------------------------------------------------- */

/* Index of the last record of a starting at or below addr, or SIZE_MAX. */
static size_t last_starting_at(const arena *a, uint64_t addr)
{
	size_t lo = FMT_COUNT_LE(a->recs, a->n, start, addr);
	return lo ? lo - 1 : SIZE_MAX;
}

static uint64_t staged_pc(const reuse_set *rs, const blob_rec *r)
{
	return load_u64(rs->stage + r->fde_off + FDE_OFF_PC_BEGIN);
}

static uint64_t staged_range(const reuse_set *rs, const blob_rec *r)
{
	return load_u64(rs->stage + r->fde_off + FDE_ABS8_OFF_RANGE);
}

/* Whether a slot of the arena may take a staged record at all.  Its CIE
 * pointer stays, so the new blob must have the freed one's CIE (the same
 * personality, or none). */
static bool slot_fits(const arena *a, size_t k, const blob_rec *r)
{
	const blob_rec *old = &a->recs[k];
	return (old->flags & REC_DEAD) && r->fde_len <= old->fde_len && r->cie == old->cie &&
	       r->start >= a->lo && r->start + r->size <= a->hi;
}

/* The claim of item j against its neighbouring slots, in their states
 * before and after the publish (a lookup may read a slot mid-rewrite, the
 * new pc_begin with the old empty range or, on a machine that reorders
 * loads, the old pc_begin with the new range).  Every state of the slot
 * must sort strictly between every state of its neighbours and cover no
 * pc that a neighbour covers, so that libgcc's binary search over its
 * sorted FDE array and libunwind's over our table stay right whatever
 * they read.  Slot 0 keeps its pc_begin: it is the object's lowest pc,
 * which libgcc's list keeps as its sort key and GCC 13's b-tree recomputes
 * at deregistration. */
static bool claim_ok(const reuse_set *rs, size_t j)
{
	const reuse_item *it = &rs->it[j];
	const arena *a = it->a;
	size_t k = it->k;
	uint64_t x = image_slot_pc(a, k), s = staged_pc(rs, it->rec), range = staged_range(rs, it->rec);
	uint64_t low = x < s ? x : s, high = (x > s ? x : s) + range;
	const reuse_item *prev =
		j && rs->it[j - 1].a == a && rs->it[j - 1].k + 1 == k ? &rs->it[j - 1] : NULL;
	const reuse_item *next =
		j + 1 < rs->n && rs->it[j + 1].a == a && rs->it[j + 1].k == k + 1 ? &rs->it[j + 1] : NULL;
	if (k == 0) {
		if (s != x)
			return false;
	} else {
		uint64_t pc = image_slot_pc(a, k - 1), end = pc + image_slot_range(a, k - 1);
		/* records stay disjoint, dead ones too: the arena's own searches
		 * (arena_find, arena_overlaps) rely on their ends increasing */
		uint64_t rec_end = a->recs[k - 1].start + a->recs[k - 1].size;
		if (prev) {
			uint64_t npc = staged_pc(rs, prev->rec), nend = npc + staged_range(rs, prev->rec);
			pc = npc > pc ? npc : pc;
			end = nend > end ? nend : end;
			rec_end = prev->rec->start + prev->rec->size;
		}
		if (pc >= low || end > low || rec_end > it->rec->start)
			return false;
	}
	if (k + 1 == a->n)
		return high <= a->hi;
	uint64_t pc = image_slot_pc(a, k + 1), start = a->recs[k + 1].start;
	if (next) {
		uint64_t npc = staged_pc(rs, next->rec);
		pc = npc < pc ? npc : pc;
		start = next->rec->start;
	}
	return high <= pc && it->rec->start + it->rec->size <= start;
}

/* Find freed slots for as many staged records as can take one.  Claims
 * are checked against the states of all claimed neighbours, so dropping
 * some later (a claim in an arena that a rebuild takes) leaves the others
 * right: each then has fewer states to stay clear of. */
static int plan_reuse(struct ju_ctx *ctx, const blob_rec *recs, size_t n, const uint8_t *stage, reuse_set *rs)
{
	*rs = (reuse_set){ .stage = stage };
	if (!ctx->n_arenas || ctx->no_reuse)
		return 0;
	/* the claims, then a flag per claim; allocated at the first blob that
	 * lands in an arena (code that grows past the arenas never does) */
	reuse_item *it = NULL;
	bool *ok = NULL;
	size_t m = 0;
	for (size_t j = 0; j < n; j++) {
		const blob_rec *r = &recs[j];
		size_t i = first_ending_after(ctx, r->start);
		if (i == ctx->n_arenas || ctx->arenas[i]->lo > r->start)
			continue;
		if (!it && !(it = ju__malloc(n * (sizeof *it + sizeof *ok))))
			return JU_FAIL(JU_ENOMEM, "out of memory planning a publish of %zu blobs", n);
		ok = (bool *)(void *)(it + n);
		arena *a = ctx->arenas[i];
		size_t c = last_starting_at(a, r->start);
		/* the freed blob it starts in, else the freed one just after it */
		for (size_t q = c == SIZE_MAX ? 0 : c; q < a->n && q <= c + 1; q++) {
			/* slots in the order of the blobs taking them */
			bool taken = m && it[m - 1].a == a && it[m - 1].k >= q;
			if (!taken && slot_fits(a, q, r)) {
				it[m++] = (reuse_item){ .a = a, .k = (uint32_t)q, .rec = r };
				break;
			}
		}
	}
	rs->it = it;
	rs->n = m;
	for (size_t j = 0; j < m; j++)
		ok[j] = claim_ok(rs, j);
	size_t kept = 0;
	for (size_t j = 0; j < m; j++)
		if (ok[j])
			it[kept++] = it[j];
	rs->n = kept;
	if (!kept) {
		free(it);
		rs->it = NULL;
	}
	return 0;
}

static void free_sides(reuse_set *rs)
{
	for (size_t j = 0; j < rs->n; j++) {
		free(rs->it[j].side);
		rs->it[j].side = NULL;
	}
}

/* Side blocks and channel state for a planned reuse. */
static int prepare_reuse(struct ju_ctx *ctx, reuse_set *rs)
{
	for (size_t j = 0; j < rs->n; j++) {
		reuse_item *it = &rs->it[j];
		const blob_rec *r = it->rec;
		if (!it->a->side && !(it->a->side = ju__calloc(it->a->n, sizeof *it->a->side))) {
			free_sides(rs);
			return JU_FAIL(JU_ENOMEM, "out of memory reusing a freed slot");
		}
		/* the line unit first, then the compile unit of guest frames, then
		 * the name */
		it->side = ju__malloc((size_t)r->line_len + r->info_len + r->name_len + 1u);
		if (!it->side) {
			free_sides(rs);
			return JU_FAIL(JU_ENOMEM, "out of memory reusing a freed slot");
		}
		memcpy(it->side, rs->stage + r->line_off, r->line_len);
		memcpy(it->side + r->line_len, rs->stage + r->info_off, r->info_len);
		memcpy(it->side + r->line_len + r->info_len, rs->stage + r->name_off, r->name_len + 1u);
	}
	for (size_t ch = 0; ch < JU_N_CHANNELS; ch++) {
		const ju_channel_ops *ops = ju_channel_table[ch];
		if (!(ctx->channels & ops->bit) || !ops->reuse_prepare)
			continue;
		int err = ops->reuse_prepare(ctx, rs);
		if (err) {
			while (ch-- > 0) {
				ops = ju_channel_table[ch];
				if ((ctx->channels & ops->bit) && ops->reuse_abort)
					ops->reuse_abort(ctx, rs);
			}
			free_sides(rs);
			return err;
		}
	}
	return 0;
}

static void abort_reuse(struct ju_ctx *ctx, reuse_set *rs)
{
	for (size_t ch = 0; ch < JU_N_CHANNELS; ch++) {
		const ju_channel_ops *ops = ju_channel_table[ch];
		if ((ctx->channels & ops->bit) && ops->reuse_abort)
			ops->reuse_abort(ctx, rs);
	}
	free_sides(rs);
	free(rs->it);
	*rs = (reuse_set){ 0 };
}

static void commit_channels_reuse(struct ju_ctx *ctx, reuse_set *rs, int phase)
{
	for (size_t ch = 0; ch < JU_N_CHANNELS; ch++) {
		const ju_channel_ops *ops = ju_channel_table[ch];
		if ((ctx->channels & ops->bit) && ops->reuse_commit)
			ops->reuse_commit(ctx, rs, phase);
	}
}

static void commit_reuse(struct ju_ctx *ctx, reuse_set *rs)
{
	commit_channels_reuse(ctx, rs, 0);
	for (size_t j = 0; j < rs->n; j++) {
		reuse_item *it = &rs->it[j];
		arena *a = it->a;
		blob_rec *slot = &a->recs[it->k];
		const blob_rec *r = it->rec;
		image_reuse_slot(a, it->k, rs->stage + r->fde_off, r->fde_len);
		*slot = (blob_rec){ .start = r->start,
				    .size = r->size,
				    .fde_off = slot->fde_off,
				    .fde_len = slot->fde_len,
				    .name_off = r->line_len + r->info_len,
				    .name_len = r->name_len,
				    .line_off = 0,
				    .line_len = r->line_len,
				    .info_off = r->line_len,
				    .info_len = r->info_len,
				    .cie = slot->cie };
		free(a->side[it->k]);
		a->side[it->k] = it->side;
		it->side = NULL;
		a->n_dead--;
	}
	commit_channels_reuse(ctx, rs, 1);
	free(rs->it);
	*rs = (reuse_set){ 0 };
}

/* ---- publishing ---------------------------------------------------------------- */

/* Group the staged records into components (see the file comment). */
static int make_components(struct ju_ctx *ctx, const blob_rec *recs, size_t n, comp **out, size_t *n_out)
{
	comp *c = ju__calloc(n, sizeof *c);
	if (!c)
		return JU_FAIL(JU_ENOMEM, "out of memory planning a publish of %zu blobs", n);
	size_t nc = 0;
	for (size_t j = 0; j < n; j++) {
		uint64_t s = recs[j].start, e = s + recs[j].size;
		size_t x = first_ending_after(ctx, s), y = x;
		while (y < ctx->n_arenas && ctx->arenas[y]->lo < e)
			y++;
		comp *cur = nc ? &c[nc - 1] : NULL;
		bool join;
		if (y > x) /* inside the hulls of arenas [x, y) */
			join = cur && cur->a1 > cur->a0 && cur->a1 > x;
		else /* in the gap before arena x */
			join = cur && cur->a1 == cur->a0 && cur->a0 == x;
		if (join) {
			if (y > cur->a1)
				cur->a1 = y;
			cur->r1 = j + 1;
		} else {
			c[nc++] = (comp){ .a0 = x, .a1 = y, .r0 = j, .r1 = j + 1 };
		}
	}
	*out = c;
	*n_out = nc;
	return 0;
}

/* Components for the records no slot takes, their neighbours absorbed;
 * the reuse claims in arenas they take are dropped (those records join the
 * rebuild).  Repeats until no component takes an arena with a claim. */
static int plan_components(struct ju_ctx *ctx, const blob_rec *recs, size_t n, struct arena_plan *plan,
			   blob_rec **rest_out, size_t *n_rest_out)
{
	reuse_set *rs = &plan->rs;
	blob_rec *rest = ju__malloc(n * sizeof *rest);
	if (!rest)
		return JU_FAIL(JU_ENOMEM, "out of memory planning a publish of %zu blobs", n);
	for (;;) {
		size_t n_rest = 0, q = 0;
		for (size_t j = 0; j < n; j++) {
			if (q < rs->n && rs->it[q].rec == &recs[j])
				q++;
			else
				rest[n_rest++] = recs[j];
		}
		*rest_out = rest;
		*n_rest_out = n_rest;
		if (!n_rest)
			return 0;
		int err = make_components(ctx, rest, n_rest, &plan->c, &plan->n);
		if (err) {
			free(rest);
			*rest_out = NULL;
			return err;
		}
		for (size_t i = 0; i < plan->n; i++) {
			comp *c = &plan->c[i];
			c->split = split_point(ctx, c, rest);
			if (c->split != SIZE_MAX)
				continue;
			/* neighbours up to (not into) the adjacent components */
			size_t lo_limit = i ? plan->c[i - 1].a1 : 0;
			size_t hi_limit = i + 1 < plan->n ? plan->c[i + 1].a0 : ctx->n_arenas;
			uint64_t lo = rest[c->r0].start;
			uint64_t hi = rest[c->r1 - 1].start + rest[c->r1 - 1].size;
			absorb_neighbours(ctx, c, lo_limit, hi_limit, lo, hi);
		}
		size_t kept = 0;
		for (size_t j = 0; j < rs->n; j++) {
			size_t ai = index_of(ctx, rs->it[j].a);
			bool taken = false;
			for (size_t i = 0; i < plan->n && !taken; i++)
				taken = ai >= plan->c[i].a0 && ai < plan->c[i].a1;
			if (!taken)
				rs->it[kept++] = rs->it[j];
		}
		if (kept == rs->n)
			return 0;
		rs->n = kept;
		free(plan->c);
		plan->c = NULL;
		plan->n = 0;
	}
}

int arena_prepare_publish(struct ju_ctx *ctx, const blob_rec *recs, size_t n, const uint8_t *stage,
			  struct arena_plan **planp)
{
	struct arena_plan *plan = ju__calloc(1, sizeof *plan);
	if (!plan)
		return JU_FAIL(JU_ENOMEM, "out of memory planning a publish");
	blob_rec *rest = NULL;
	size_t n_rest = 0;
	int err = plan_reuse(ctx, recs, n, stage, &plan->rs);
	if (!err)
		err = plan_components(ctx, recs, n, plan, &rest, &n_rest);
	if (!err && plan->rs.n)
		err = prepare_reuse(ctx, &plan->rs);
	if (err) {
		free(rest);
		free(plan->rs.it);
		free(plan->c);
		free(plan);
		return err;
	}
	size_t total = ctx->n_arenas;
	for (size_t i = 0; i < plan->n; i++) {
		comp *c = &plan->c[i];
		size_t ns;
		src_rec *s = gather(ctx, c->a0, c->a1, rest, c->r0, c->r1, stage, &ns);
		err = s ? build_comp(ctx, c, s, ns, c->split)
			: JU_FAIL(JU_ENOMEM, "out of memory gathering %zu records", ns);
		free(s);
		if (err) {
			free(rest);
			arena_abort_publish(ctx, plan);
			return err;
		}
		total += c->n_out;
	}
	free(rest);
	if (!reserve_arenas(ctx, total)) {
		arena_abort_publish(ctx, plan);
		return JU_FAIL(JU_ENOMEM, "out of memory for the arena table");
	}
	*planp = plan;
	return 0;
}

void arena_abort_publish(struct ju_ctx *ctx, struct arena_plan *plan)
{
	if (plan->rs.n)
		abort_reuse(ctx, &plan->rs);
	else
		free(plan->rs.it); /* claims all given up: nothing was prepared */
	for (size_t i = 0; i < plan->n; i++)
		drop_outputs(ctx, &plan->c[i]);
	free(plan->c);
	free(plan);
}

/* ---- committing ------------------------------------------------------------ */

static void swap_channels(struct ju_ctx *ctx, arena *const *add, size_t n_add, arena *const *del,
			  size_t n_del)
{
	for (size_t ch = 0; ch < JU_N_CHANNELS; ch++) {
		const ju_channel_ops *ops = ju_channel_table[ch];
		if ((ctx->channels & ops->bit) && ops->arena_swap)
			ops->arena_swap(ctx, add, n_add, del, n_del);
	}
}

/* ---- retired arenas ---------------------------------------------------------- */

/* Unregistering an arena does not stop in-process unwinders from reading
 * it: libgcc's _Unwind_Find_FDE reads its `struct object` after unlocking and
 * returns an FDE that the unwinder parses, CIE and all, later still; nongnu
 * libunwind walks its dynamic list and our tables with no lock at all.  So a
 * swapped-out arena, image and channel states included, is freed GRACE_NS
 * later, or sooner, oldest first, while the retired images hold more than
 * max(GRAVE_MIN_BYTES, the live images): memory stays bounded whatever the
 * churn, and only an unwinder stalled that long can meet freed memory.
 * (An image the gdb channel took is its to free.) */
static size_t owned_bytes(const arena *a)
{
	return a->image ? a->image_size : 0;
}

static void bury(struct ju_ctx *ctx, arena *a, uint64_t now)
{
	a->grave_next = NULL;
	a->retired_ns = now;
	if (ctx->grave_tail)
		ctx->grave_tail->grave_next = a;
	else
		ctx->grave_head = a;
	ctx->grave_tail = a;
	ctx->grave_bytes += owned_bytes(a);
}

/* Free the retired arenas whose time has come (all of them if `all`). */
static void sweep(struct ju_ctx *ctx, uint64_t now, bool all)
{
	size_t budget = GRAVE_MIN_BYTES, live = 0;
	for (size_t i = 0; i < ctx->n_arenas; i++)
		live += owned_bytes(ctx->arenas[i]);
	if (live > budget)
		budget = live;
	while (ctx->grave_head) {
		arena *a = ctx->grave_head;
		if (!all && ctx->grave_bytes <= budget && now - a->retired_ns < GRACE_NS)
			break;
		ctx->grave_head = a->grave_next;
		ctx->grave_bytes -= owned_bytes(a);
		free_arena(ctx, a);
	}
	if (!ctx->grave_head)
		ctx->grave_tail = NULL;
}

void arena_reclaim_all(struct ju_ctx *ctx)
{
	sweep(ctx, 0, true);
}

/* Replace arenas [a0, a1) of the set by out[0..n_out).  The array has room:
 * callers reserved it. */
static void replace_range(struct ju_ctx *ctx, size_t a0, size_t a1, arena *const *out, size_t n_out)
{
	size_t n_del = a1 - a0;
	swap_channels(ctx, out, n_out, ctx->arenas + a0, n_del);
	uint64_t now = now_ns();
	for (size_t i = a0; i < a1; i++)
		bury(ctx, ctx->arenas[i], now);
	if (ctx->n_arenas > a1)
		memmove(ctx->arenas + a0 + n_out, ctx->arenas + a1,
			(ctx->n_arenas - a1) * sizeof *ctx->arenas);
	if (n_out)
		memcpy(ctx->arenas + a0, out, n_out * sizeof *out);
	ctx->n_arenas = ctx->n_arenas - n_del + n_out;
	sweep(ctx, now, false);
}

static bool reserve_arenas(struct ju_ctx *ctx, size_t need)
{
	if (need <= ctx->cap_arenas)
		return true;
	size_t cap = ctx->cap_arenas ? ctx->cap_arenas : 16;
	while (cap < need)
		cap *= 2;
	/* Other contexts may be reading the table (core.c's overlap check). */
	ju__cross_lock();
	arena **p = ju__realloc(ctx->arenas, cap * sizeof *p);
	if (p) {
		ctx->arenas = p;
		ctx->cap_arenas = cap;
	}
	ju__cross_unlock();
	return p != NULL;
}

/* Rebuild arenas [a0, a1) as one (live records only); on failure nothing
 * changes and the caller may go on: rebuilding is housekeeping. */
static int rebuild_range(struct ju_ctx *ctx, size_t a0, size_t a1)
{
	size_t ns;
	src_rec *s = gather(ctx, a0, a1, NULL, 0, 0, NULL, &ns);
	if (!s)
		return JU_ENOMEM;
	comp c = { .a0 = a0, .a1 = a1 };
	int err = build_comp(ctx, &c, s, ns, SIZE_MAX);
	free(s);
	if (err) {
		drop_outputs(ctx, &c);
		return err;
	}
	replace_range(ctx, a0, a1, c.out, c.n_out);
	return 0;
}

/* Merge the smallest adjacent pair while there are too many arenas. */
static void enforce_cap(struct ju_ctx *ctx)
{
	while (ctx->n_arenas > max_arenas(ctx->n_live)) {
		size_t best = SIZE_MAX, at = 0;
		for (size_t i = 0; i + 1 < ctx->n_arenas; i++) {
			const arena *l = ctx->arenas[i], *r = ctx->arenas[i + 1];
			size_t sz = live(l) + live(r);
			if (sz < best && r->hi - l->lo <= MAX_SPAN) {
				best = sz;
				at = i;
			}
		}
		if (best == SIZE_MAX || rebuild_range(ctx, at, at + 2))
			return; /* nothing mergeable, or no memory: stay correct, just slower */
	}
}

void arena_commit_publish(struct ju_ctx *ctx, struct arena_plan *plan)
{
	/* Slots first: their arenas are none of those the components replace. */
	if (plan->rs.n)
		commit_reuse(ctx, &plan->rs);
	else
		free(plan->rs.it);
	/* Components are replaced last to first so earlier indices stay valid;
	 * prepare reserved room in the array for the outputs. */
	for (size_t i = plan->n; i-- > 0;) {
		comp *c = &plan->c[i];
		replace_range(ctx, c->a0, c->a1, c->out, c->n_out);
		c->n_out = 0;
	}
	free(plan->c);
	free(plan);
	enforce_cap(ctx);
}

/* ---- unpublishing ------------------------------------------------------------ */

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* Records ks[0..m) of a die (their indices, increasing). */
static void unpublish_in(struct ju_ctx *ctx, arena *a, uint32_t *ks, size_t m)
{
	ctx->n_live -= m;
	if (live(a) == m) {
		/* Its last blobs: unregister the whole arena rather than tombstone,
		 * so no consumer ever holds an object with no live FDE (GCC 13's
		 * deregistration recomputes the object's range from its FDEs). */
		size_t i = index_of(ctx, a);
		replace_range(ctx, i, i + 1, NULL, 0);
		return;
	}
	/* Tombstoned in place, which is exact for the unwinders that read the
	 * image, and stays so in the retired image if the arena is then
	 * rebuilt: libunwind may still find that one (ch_libunwind.c).  The
	 * slots stay for new blobs at those places.  Small or mostly dead
	 * arenas are rebuilt without them. */
	for (size_t q = 0; q < m; q++) {
		blob_rec *r = &a->recs[ks[q]];
		r->flags |= REC_DEAD;
		image_tombstone(a, r);
	}
	a->n_dead += (uint32_t)m;
	if (live(a) <= SMALL_ARENA || (size_t)a->n_dead * 4 >= a->n) {
		size_t i = index_of(ctx, a);
		if (!rebuild_range(ctx, i, i + 1))
			return;
	}
	for (size_t ch = 0; ch < JU_N_CHANNELS; ch++) {
		const ju_channel_ops *ops = ju_channel_table[ch];
		if ((ctx->channels & ops->bit) && ops->blobs_dead)
			ops->blobs_dead(ctx, a, ks, m);
	}
}

void arena_unpublish(struct ju_ctx *ctx, const uint64_t *starts, size_t n)
{
	uint64_t one, *sorted = &one;
	if (n == 1) {
		one = starts[0];
	} else {
		sorted = ju__malloc(n * sizeof *sorted);
		if (sorted) {
			memcpy(sorted, starts, n * sizeof *sorted);
			qsort(sorted, n, sizeof *sorted, cmp_u64);
		}
	}
	uint32_t kbuf[64], *ks = kbuf;
	if (n > 64 && sorted)
		ks = ju__malloc(n * sizeof *ks);
	if (!sorted || !ks) {
		/* No memory to group them: one at a time, each its own group. */
		if (sorted && sorted != &one)
			free(sorted);
		for (size_t j = 0; j < n; j++) {
			arena *a;
			blob_rec *r = arena_find(ctx, starts[j], &a);
			if (!r)
				continue; /* cannot happen: the caller checked */
			uint32_t k = (uint32_t)(r - a->recs);
			unpublish_in(ctx, a, &k, 1);
		}
		return;
	}
	/* In address order, an arena's blobs come together: one group each.
	 * Groups are handled from the highest address down so that the arenas
	 * still to visit keep their places in the table. */
	size_t j = n;
	while (j > 0) {
		arena *a;
		blob_rec *r = arena_find(ctx, sorted[j - 1], &a);
		if (!r) {
			j--;
			continue;
		}
		size_t m = 0;
		while (j > 0 && sorted[j - 1] >= a->lo && sorted[j - 1] < a->hi) {
			arena *b;
			blob_rec *q = arena_find(ctx, sorted[j - 1], &b);
			j--;
			if (q && b == a)
				ks[m++] = (uint32_t)(q - a->recs);
		}
		/* increasing indices */
		for (size_t x = 0, y = m ? m - 1 : 0; x < y; x++, y--) {
			uint32_t t = ks[x];
			ks[x] = ks[y];
			ks[y] = t;
		}
		unpublish_in(ctx, a, ks, m);
	}
	if (ks != kbuf)
		free(ks);
	if (sorted != &one)
		free(sorted);
}

void arena_retire_all(struct ju_ctx *ctx)
{
	/* Last-in first-out, the order libgcc's list deregisters cheapest. */
	while (ctx->n_arenas) {
		size_t i = ctx->n_arenas - 1;
		replace_range(ctx, i, i + 1, NULL, 0);
	}
	ctx->n_live = 0;
}

/* ---- views for the file channels ------------------------------------------- */

_Static_assert(sizeof(ju_line) % _Alignof(ju_inline) == 0 && sizeof(const char *) % _Alignof(ju_inline) == 0,
	       "view_of puts the inlines after the rows and their files");

/* A record as the file channels see it, with its line table and guest
 * frames decoded into *lines (one block, caller frees) when it has them. */
static int view_of(const arena *a, const blob_rec *r, blob_view *v, ju_line **lines)
{
	src_rec src;
	image_src(a, (size_t)(r - a->recs), &src);
	*lines = NULL;
	*v = (blob_view){
		.start = r->start,
		.size = r->size,
		.name = (const char *)src.base + r->name_off,
		.name_len = r->name_len,
		.fde = a->image + r->fde_off,
		.fde_len = r->fde_len,
	};
	if (!r->line_len)
		return 0;
	const uint8_t *unit = src.base + r->line_off, *cu = src.base + r->info_off;
	long rows = image_decode_line_unit(unit, r->line_len, r->start, NULL, NULL, 0);
	long inl = r->info_len ? image_decode_inline_cu(cu, r->info_len, NULL, 0) : 0;
	if (rows < 0 || inl < 0)
		return JU_FAIL(JU_ELINES, "internal error: cannot decode the line table of %s", v->name);
	/* The rows, then (guest frames) each row's file and the inlines, in one
	 * block (rows and pointers are 8 bytes each: every part is aligned). */
	bool files = image_line_unit_has_files(unit, r->line_len);
	const char **row_file = NULL;
	size_t head = (size_t)rows * (sizeof **lines + (files ? sizeof *row_file : 0));
	*lines = ju__malloc(head + (size_t)inl * sizeof(ju_inline));
	if (!*lines)
		return JU_FAIL(JU_ENOMEM, "out of memory decoding a line table");
	if (files)
		row_file = (const char **)(void *)(*lines + rows);
	if (image_decode_line_unit(unit, r->line_len, r->start, *lines, row_file, (size_t)rows) != rows) {
		free(*lines);
		*lines = NULL;
		return JU_FAIL(JU_ENOMEM, "out of memory decoding a line table");
	}
	v->file = image_line_unit_file(unit);
	v->lines = *lines;
	v->n_lines = (size_t)rows;
	v->row_file = row_file;
	if (inl) {
		ju_inline *in = (ju_inline *)(void *)((char *)*lines + head);
		image_decode_inline_cu(cu, r->info_len, in, (size_t)inl);
		v->inlines = in;
		v->n_inlines = (size_t)inl;
	}
	return 0;
}

/* Log a chunk of views and free their line tables. */
static int flush_views(struct ju_ctx *ctx, ju_log_fn *log, blob_view *v, ju_line **lines, size_t *n)
{
	int err = *n ? log(ctx, v, *n) : 0;
	while (*n)
		free(lines[--*n]);
	return err;
}

static int relog(struct ju_ctx *ctx, ju_log_fn *log)
{
	enum { CHUNK = 64 };
	blob_view v[CHUNK];
	ju_line *lines[CHUNK];
	size_t n = 0;
	for (size_t i = 0; i < ctx->n_arenas; i++) {
		const arena *a = ctx->arenas[i];
		for (uint32_t k = 0; k < a->n; k++) {
			if (a->recs[k].flags & REC_DEAD)
				continue;
			int err = n == CHUNK ? flush_views(ctx, log, v, lines, &n) : 0;
			if (!err)
				err = view_of(a, &a->recs[k], &v[n], &lines[n]);
			if (err) {
				while (n)
					free(lines[--n]);
				return err;
			}
			n++;
		}
	}
	return flush_views(ctx, log, v, lines, &n);
}

const ju_live_ops arena_live = {
	.relog = relog,
	.next_live = next_live,
	.find = arena_find,
};
