/* SPDX-License-Identifier: MIT */
/* test-churn-under-unwinding.c - threads unwind through JIT frames of live
 * blobs while other threads free and reuse the addresses of the blobs
 * around them, and no walk misses a frame or lands in a dead FDE.
 *
 * One code region of N_SLOTS 64-byte slots.  Every LIVE_EVERY-th slot holds
 * a live blob, published at the start and never unpublished; the slots in
 * between are churned, so live and churned blobs share arenas, which are
 * split, merged and rebuilt under the running code.
 *
 * Walkers: each call goes through two live blobs, an outer one that builds
 * a frame-pointer frame and an inner one that only moves the stack pointer
 * (so only its CFI gets a walk past it):
 *
 *   walker_loop -> enter -> OUTER blob -> c_between -> INNER blob -> on_top
 *
 * on_top takes a walk with glibc backtrace() or _Unwind_Backtrace.  From the
 * inner blob on, the walk must read exactly inner, c_between, outer, enter,
 * walker_loop and then something more (the thread's start): nothing may be
 * missed or made up.  No pc of the walk may lie anywhere else in the code
 * region, and for _Unwind_Backtrace the FDE found for each JIT frame
 * (_Unwind_GetRegionStart) must start where its live blob starts: a
 * lookup that lands in a dead or reused FDE would report another start.
 *
 * Churners: each owns every N_CHURNERS-th churned slot and keeps, per slot,
 * where its blob is (one of a few starts and sizes inside the slot, or
 * none).  Its operations: unpublish a blob and publish it again at the
 * same address; unpublish it and publish another at a different start and
 * size in the same freed slot; free a slot or fill a free one; and batches:
 * unpublish up to BATCH blobs and publish new ones in their slots with one
 * ju_publish_batch.  Churned blobs are never run, so their code bytes (int3)
 * never change.  After every change the churner asks libgcc itself
 * (_Unwind_Find_FDE): a freed range must have no FDE, a published blob an
 * FDE that starts at its start.
 *
 * Two phases, the unwinder channel alone and with the gdb channel; they
 * share JU_CHURN_SECONDS (default 3) and each runs at least until every
 * walker made MIN_WALKS walks with each method and every churner
 * MIN_CHANGES changes, however loaded the machine is.
 */
#include "jitunwind.h"
#include "unit.h"

#include <execinfo.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unwind.h>

#define NOINLINE __attribute__((noinline))
#define BARRIER() __asm__ volatile("" ::: "memory")
/* Each C frame of the walk in a section of its own, so its extent is known
 * (__start_/__stop_). */
#define IN_SECTION(name) __attribute__((noinline, section(name)))

enum {
	N_SLOTS = 2048,
	SLOT = 64,
	LIVE_EVERY = 16,
	N_LIVE = N_SLOTS / LIVE_EVERY,
	N_WALKERS = 2,
	N_CHURNERS = 2,
	BATCH = 16,
	MAX_PCS = 64,
	MIN_WALKS = 2000,
	MIN_CHANGES = 2000,
	MAX_REPORTS = 10,
};

/* Where a churned blob may sit in its slot: start offset and size. */
static const struct {
	uint8_t off, size;
} places[] = { { 0, 48 }, { 0, 24 }, { 8, 40 }, { 16, 16 }, { 24, 32 } };
enum { N_PLACES = sizeof places / sizeof places[0], NO_PLACE = 0xff };

/* ju_unpublish_batch, where the library has it; single unpublishes (the same
 * effect, one call each) where it does not. */
int ju_unpublish_batch(ju_ctx *ctx, const void *const *starts, size_t n) __attribute__((weak));

static int unpublish_some(ju_ctx *ctx, const void *const *starts, size_t n)
{
	if (ju_unpublish_batch)
		return ju_unpublish_batch(ctx, starts, n);
	for (size_t i = 0; i < n; i++) {
		int rc = ju_unpublish(ctx, starts[i]);
		if (rc)
			return rc;
	}
	return 0;
}

/* _Unwind_Find_FDE's bases (libgcc's struct dwarf_eh_bases). */
struct eh_bases {
	void *tbase, *dbase, *func;
};
const void *_Unwind_Find_FDE(void *pc, struct eh_bases *bases);

/* ---- the code region --------------------------------------------------------- */

typedef struct walk walk;

static uint8_t *code;
static ju_ctx *ctx;

typedef struct live_blob {
	uint32_t size;
	ju_frame frame;
	ju_range epilogue;
	ju_cfi_range cr;
	uint8_t insns[8];
} live_blob;

static live_blob lives[N_LIVE];

static uint8_t *slot_at(size_t slot)
{
	return code + slot * SLOT;
}

static uint8_t *live_at(size_t j)
{
	return slot_at(j * LIVE_EVERY);
}

static bool is_outer(size_t j)
{
	return j % 2 == 0;
}

void c_between(walk *w);
void on_top(walk *w);

static size_t emit_call(uint8_t *p, void (*target)(walk *))
{
	uint64_t t = (uintptr_t)target;
	p[0] = 0x48, p[1] = 0xb8; /* movabs $target, %rax */
	memcpy(p + 2, &t, 8);
	p[10] = 0xff, p[11] = 0xd0; /* call *%rax (%rdi passes through) */
	return 12;
}

/* Outer: push %rbp; mov %rsp,%rbp; call c_between; pop %rbp; ret */
static void emit_outer(live_blob *b, uint8_t *p)
{
	size_t n = 0;
	p[n++] = 0x55;
	p[n++] = 0x48, p[n++] = 0x89, p[n++] = 0xe5;
	n += emit_call(p + n, c_between);
	p[n++] = 0x5d;
	b->epilogue = (ju_range){ (uint32_t)n, (uint32_t)n + 1 };
	p[n++] = 0xc3;
	b->size = (uint32_t)n;
	b->frame = (ju_frame){ .kind = JU_FRAME_FP, .u.fp = { 1, 4, &b->epilogue, 1 } };
}

/* Inner: sub $24,%rsp; call on_top; add $24,%rsp; ret -- no frame pointer */
static void emit_inner(live_blob *b, uint8_t *p)
{
	size_t n = 0;
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xec, p[n++] = 24;
	size_t after_sub = n;
	n += emit_call(p + n, on_top);
	p[n++] = 0x48, p[n++] = 0x83, p[n++] = 0xc4, p[n++] = 24;
	size_t after_add = n;
	p[n++] = 0xc3;
	b->size = (uint32_t)n;
	uint8_t *k = b->insns;
	k[0] = 0x40 | (uint8_t)after_sub;               /* DW_CFA_advance_loc */
	k[1] = 0x0e, k[2] = 32;                         /* DW_CFA_def_cfa_offset 32 */
	k[3] = 0x40 | (uint8_t)(after_add - after_sub); /* DW_CFA_advance_loc */
	k[4] = 0x0e, k[5] = 8;                          /* DW_CFA_def_cfa_offset 8 */
	b->cr = (ju_cfi_range){ 0, b->size, b->insns, 6 };
	b->frame = (ju_frame){ .kind = JU_FRAME_CFI, .u.cfi = { &b->cr, 1 } };
}

static int make_code(void)
{
	code = mmap(NULL, N_SLOTS * SLOT, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return -1;
	memset(code, 0xcc, N_SLOTS * SLOT); /* int3: churned slots are never run */
	for (size_t j = 0; j < N_LIVE; j++) {
		if (is_outer(j))
			emit_outer(&lives[j], live_at(j));
		else
			emit_inner(&lives[j], live_at(j));
	}
	__builtin___clear_cache((char *)code, (char *)code + N_SLOTS * SLOT);
	return mprotect(code, N_SLOTS * SLOT, PROT_READ | PROT_EXEC);
}

static ju_blob live_blob_of(size_t j)
{
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = live_at(j),
			  .size = lives[j].size,
			  .name = "live",
			  .frame = lives[j].frame };
}

static ju_blob churn_blob_of(size_t slot, uint8_t place)
{
	return (ju_blob){ .sz = sizeof(ju_blob),
			  .start = slot_at(slot) + places[place].off,
			  .size = places[place].size,
			  .name = "churn",
			  .frame = { .kind = JU_FRAME_LEAF } };
}

/* ---- the walks ---------------------------------------------------------------- */

enum { M_BACKTRACE, M_UNWIND, N_METHODS };
static const char *const method_name[N_METHODS] = { "backtrace", "_Unwind_Backtrace" };

struct walk {
	size_t outer, inner; /* live blob indices */
	int method;
	int n;
	void *pcs[MAX_PCS];
	uintptr_t region[MAX_PCS]; /* _Unwind_GetRegionStart, for M_UNWIND */
};

extern const uint8_t __start_ju_walker_loop[], __stop_ju_walker_loop[];
extern const uint8_t __start_ju_enter[], __stop_ju_enter[];
extern const uint8_t __start_ju_c_between[], __stop_ju_c_between[];

static _Unwind_Reason_Code unwind_step(struct _Unwind_Context *uc, void *arg)
{
	walk *w = arg;
	if (w->n >= MAX_PCS)
		return _URC_END_OF_STACK;
	w->region[w->n] = (uintptr_t)_Unwind_GetRegionStart(uc);
	w->pcs[w->n++] = (void *)_Unwind_GetIP(uc);
	return _URC_NO_REASON;
}

void on_top(walk *w)
{
	if (w->method == M_BACKTRACE) {
		w->n = backtrace(w->pcs, MAX_PCS);
	} else {
		w->n = 0;
		_Unwind_Backtrace(unwind_step, w);
	}
	BARRIER();
}

IN_SECTION("ju_c_between") void c_between(walk *w)
{
	((void (*)(walk *))(void *)live_at(w->inner))(w);
	BARRIER();
}

IN_SECTION("ju_enter") void enter(walk *w)
{
	((void (*)(walk *))(void *)live_at(w->outer))(w);
	BARRIER();
}

/* The call at a return address is just before it. */
static uintptr_t call_pc(const walk *w, int i)
{
	return (uintptr_t)w->pcs[i] - (i ? 1 : 0);
}

static bool in(uintptr_t pc, const void *lo, const void *hi)
{
	return pc >= (uintptr_t)lo && pc < (uintptr_t)hi;
}

static bool in_live(uintptr_t pc, size_t j)
{
	return in(pc, live_at(j), live_at(j) + lives[j].size);
}

/* Why the walk is wrong, or NULL: see the file's comment. */
static const char *judge(const walk *w, char *why, size_t len)
{
	int j = 0;
	while (j < w->n && !in_live(call_pc(w, j), w->inner))
		j++;
	if (j >= w->n) {
		snprintf(why, len, "the inner blob is missing (%d frames)", w->n);
		return why;
	}
	struct {
		const void *lo, *hi;
		const char *name;
	} want[] = {
		{ live_at(w->inner), live_at(w->inner) + lives[w->inner].size, "the inner blob" },
		{ __start_ju_c_between, __stop_ju_c_between, "c_between" },
		{ live_at(w->outer), live_at(w->outer) + lives[w->outer].size, "the outer blob" },
		{ __start_ju_enter, __stop_ju_enter, "enter" },
		{ __start_ju_walker_loop, __stop_ju_walker_loop, "walker_loop" },
	};
	for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
		int i = j + (int)k;
		if (i >= w->n || !in(call_pc(w, i), want[k].lo, want[k].hi)) {
			snprintf(why, len, "frame %d is %p, not %s (%d frames)", i,
				 i < w->n ? w->pcs[i] : NULL, want[k].name, w->n);
			return why;
		}
	}
	if (j + 5 >= w->n) {
		snprintf(why, len, "the walk stops at walker_loop (%d frames)", w->n);
		return why;
	}
	for (int i = 0; i < w->n; i++) {
		uintptr_t pc = call_pc(w, i);
		if (!in(pc, code, code + N_SLOTS * SLOT))
			continue;
		if ((i != j || !in_live(pc, w->inner)) && (i != j + 2 || !in_live(pc, w->outer))) {
			snprintf(why, len,
				 "frame %d at %p is in slot %zu of the code, not in a blob of this stack", i,
				 w->pcs[i], (size_t)(pc - (uintptr_t)code) / SLOT);
			return why;
		}
		uintptr_t start = (uintptr_t)live_at(i == j ? w->inner : w->outer);
		if (w->method == M_UNWIND && w->region[i] != start) {
			snprintf(why, len, "frame %d at %p: its FDE starts at %#lx, its blob at %#lx", i,
				 w->pcs[i], (unsigned long)w->region[i], (unsigned long)start);
			return why;
		}
	}
	return NULL;
}

/* ---- threads -------------------------------------------------------------------- */

static atomic_bool stop;
static atomic_long n_walks[N_WALKERS][N_METHODS], n_bad[N_METHODS];
static atomic_long n_changes[N_CHURNERS], n_batches, n_lookup_bad, n_api_errors;
static pthread_mutex_t report_lock = PTHREAD_MUTEX_INITIALIZER;
/* The first few failures of each kind are printed. */
enum { R_WALK, R_LOOKUP, R_API, N_KINDS };
static int n_reported[N_KINDS];

static uint64_t next_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void report(int kind, const char *phase, const char *what, const char *why)
{
	pthread_mutex_lock(&report_lock);
	if (n_reported[kind]++ < MAX_REPORTS)
		printf("%s: %s: %s\n", phase, what, why);
	pthread_mutex_unlock(&report_lock);
}

static const char *phase_name;

typedef struct walker {
	uintptr_t id;
	uint64_t seed;
} walker;

IN_SECTION("ju_walker_loop") void *walker_loop(void *arg)
{
	walker *me = arg;
	walk w;
	char why[200];
	for (unsigned k = 0; !atomic_load_explicit(&stop, memory_order_relaxed); k++) {
		w.outer = (next_rand(&me->seed) % (N_LIVE / 2)) * 2;
		w.inner = (next_rand(&me->seed) % (N_LIVE / 2)) * 2 + 1;
		w.method = (int)(k % N_METHODS);
		enter(&w);
		atomic_fetch_add(&n_walks[me->id][w.method], 1);
		if (judge(&w, why, sizeof why)) {
			atomic_fetch_add(&n_bad[w.method], 1);
			report(R_WALK, phase_name, method_name[w.method], why);
		}
	}
	BARRIER();
	return NULL;
}

typedef struct churner {
	uintptr_t id;
	uint64_t seed;
	size_t slots[N_SLOTS];
	uint8_t place[N_SLOTS]; /* by slot: NO_PLACE when free */
	size_t n_slots, n_free;
} churner;

static void api_error(const char *what, int rc)
{
	atomic_fetch_add(&n_api_errors, 1);
	char why[600];
	snprintf(why, sizeof why, "%s: %s", ju_strerror(rc), ju_errmsg());
	report(R_API, phase_name, what, why);
}

/* What libgcc finds in the slot now must be exactly what the churner put
 * there: a published blob's own FDE, and no FDE in a freed range. */
static void check_lookup(size_t slot, uint8_t place, uint8_t old_place)
{
	struct eh_bases bases;
	char why[200];
	if (place != NO_PLACE) {
		uint8_t *start = slot_at(slot) + places[place].off;
		for (uint8_t off = 0; off < places[place].size; off += 8) {
			memset(&bases, 0, sizeof bases);
			if (!_Unwind_Find_FDE(start + off, &bases) || bases.func != start) {
				snprintf(why, sizeof why,
					 "slot %zu: pc %p of a blob published at %p finds an FDE at %p", slot,
					 (void *)(start + off), (void *)start, bases.func);
				atomic_fetch_add(&n_lookup_bad, 1);
				report(R_LOOKUP, phase_name, "lookup after publish", why);
				return;
			}
		}
	}
	if (old_place == NO_PLACE)
		return;
	uint8_t *old = slot_at(slot) + places[old_place].off;
	for (uint8_t off = 0; off < places[old_place].size; off += 4) {
		uint8_t *pc = old + off;
		if (place != NO_PLACE && in((uintptr_t)pc, slot_at(slot) + places[place].off,
					    slot_at(slot) + places[place].off + places[place].size))
			continue;
		if (_Unwind_Find_FDE(pc, &bases)) {
			snprintf(why, sizeof why, "slot %zu: pc %p, freed, still finds an FDE at %p", slot,
				 (void *)pc, bases.func);
			atomic_fetch_add(&n_lookup_bad, 1);
			report(R_LOOKUP, phase_name, "lookup after unpublish", why);
			return;
		}
	}
}

static void set_place(churner *c, size_t slot, uint8_t place)
{
	c->n_free += (place == NO_PLACE) - (c->place[slot] == NO_PLACE);
	c->place[slot] = place;
}

static uint8_t other_place(churner *c, uint8_t place)
{
	uint8_t p = (uint8_t)(next_rand(&c->seed) % (N_PLACES - 1));
	return p >= place ? p + 1 : p;
}

/* One blob: unpublish it and publish one at the same or another place. */
static void churn_one(churner *c, size_t slot, bool same)
{
	uint8_t was = c->place[slot];
	int rc = ju_unpublish(ctx, slot_at(slot) + places[was].off);
	if (rc) {
		api_error("ju_unpublish", rc);
		return;
	}
	set_place(c, slot, NO_PLACE);
	check_lookup(slot, NO_PLACE, was);
	uint8_t now = same ? was : other_place(c, was);
	ju_blob b = churn_blob_of(slot, now);
	rc = ju_publish(ctx, &b);
	if (rc) {
		api_error("ju_publish", rc);
		return;
	}
	set_place(c, slot, now);
	check_lookup(slot, now, was);
}

/* Up to BATCH slots: the published ones unpublished together, then every one
 * published in one batch at a new place. */
static void churn_batch(churner *c)
{
	size_t slots[BATCH], n = 0, n_pub = 0;
	const void *starts[BATCH];
	uint8_t was[BATCH];
	size_t first = next_rand(&c->seed) % c->n_slots;
	for (size_t k = 0; k < BATCH && k < c->n_slots; k++) {
		size_t s = c->slots[(first + k * 3) % c->n_slots];
		slots[n] = s;
		was[n] = c->place[s];
		if (was[n] != NO_PLACE)
			starts[n_pub++] = slot_at(s) + places[was[n]].off;
		n++;
	}
	int rc = unpublish_some(ctx, starts, n_pub);
	if (rc) {
		api_error("unpublish batch", rc);
		return;
	}
	ju_blob blobs[BATCH];
	uint8_t now[BATCH];
	for (size_t k = 0; k < n; k++) {
		set_place(c, slots[k], NO_PLACE);
		check_lookup(slots[k], NO_PLACE, was[k]);
		now[k] = was[k] == NO_PLACE ? (uint8_t)(next_rand(&c->seed) % N_PLACES)
					    : other_place(c, was[k]);
		blobs[k] = churn_blob_of(slots[k], now[k]);
	}
	rc = ju_publish_batch(ctx, blobs, n);
	if (rc) {
		api_error("ju_publish_batch", rc);
		return;
	}
	for (size_t k = 0; k < n; k++) {
		set_place(c, slots[k], now[k]);
		check_lookup(slots[k], now[k], was[k]);
	}
	atomic_fetch_add(&n_batches, 1);
}

/* Free a published slot or fill a free one, keeping about a quarter free. */
static void free_or_fill(churner *c, size_t slot)
{
	uint8_t was = c->place[slot];
	bool want_free = c->n_free * 4 < c->n_slots;
	if (was != NO_PLACE && want_free) {
		int rc = ju_unpublish(ctx, slot_at(slot) + places[was].off);
		if (rc) {
			api_error("ju_unpublish", rc);
			return;
		}
		set_place(c, slot, NO_PLACE);
		check_lookup(slot, NO_PLACE, was);
	} else if (was == NO_PLACE) {
		uint8_t now = (uint8_t)(next_rand(&c->seed) % N_PLACES);
		ju_blob b = churn_blob_of(slot, now);
		int rc = ju_publish(ctx, &b);
		if (rc) {
			api_error("ju_publish", rc);
			return;
		}
		set_place(c, slot, now);
		check_lookup(slot, now, NO_PLACE);
	}
}

/* JU_CHURN_REUSE_ONLY=1: single changes that reuse the freed place at
 * once (no slot left free, no batch).  Most of them the library writes in
 * place; a new place that reaches past what the freed one's neighbours
 * allow still rebuilds the arena. */
static bool reuse_only;

static void *churn_loop(void *arg)
{
	churner *c = arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		size_t slot = c->slots[next_rand(&c->seed) % c->n_slots];
		uint64_t r = next_rand(&c->seed) % 100;
		if (r < 5 && !reuse_only)
			churn_batch(c);
		else if ((r < 25 && !reuse_only) || c->place[slot] == NO_PLACE)
			free_or_fill(c, slot);
		else
			churn_one(c, slot, r < 60);
		atomic_fetch_add(&n_changes[c->id], 1);
	}
	return NULL;
}

/* ---- a phase -------------------------------------------------------------------- */

static double now_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static bool minimums_reached(void)
{
	for (int t = 0; t < N_WALKERS; t++)
		for (int m = 0; m < N_METHODS; m++)
			if (atomic_load(&n_walks[t][m]) < MIN_WALKS)
				return false;
	for (int t = 0; t < N_CHURNERS; t++)
		if (atomic_load(&n_changes[t]) < MIN_CHANGES)
			return false;
	return true;
}

static void reset_counters(void)
{
	atomic_store(&stop, false);
	for (int m = 0; m < N_METHODS; m++) {
		atomic_store(&n_bad[m], 0);
		for (int t = 0; t < N_WALKERS; t++)
			atomic_store(&n_walks[t][m], 0);
	}
	for (int t = 0; t < N_CHURNERS; t++)
		atomic_store(&n_changes[t], 0);
	atomic_store(&n_batches, 0);
	atomic_store(&n_lookup_bad, 0);
	atomic_store(&n_api_errors, 0);
	memset(n_reported, 0, sizeof n_reported);
}

static walker walkers[N_WALKERS];
static churner churners[N_CHURNERS];

/* Everything published at the start, in one batch: one arena of live and
 * churned blobs. */
static int publish_all(void)
{
	static ju_blob all[N_SLOTS];
	for (size_t t = 0; t < N_CHURNERS; t++) {
		churners[t] = (churner){ .id = t, .seed = 0x5eed + t * 0x9e3779b97f4a7c15u };
		memset(churners[t].place, NO_PLACE, sizeof churners[t].place);
	}
	size_t k = 0, n_churned = 0;
	for (size_t s = 0; s < N_SLOTS; s++) {
		if (s % LIVE_EVERY == 0) {
			all[k++] = live_blob_of(s / LIVE_EVERY);
			continue;
		}
		churner *c = &churners[n_churned++ % N_CHURNERS];
		c->slots[c->n_slots++] = s;
		c->place[s] = (uint8_t)(s % N_PLACES);
		all[k++] = churn_blob_of(s, c->place[s]);
	}
	return ju_publish_batch(ctx, all, k);
}

static void run_phase(const char *name, uint32_t channels, double seconds)
{
	phase_name = name;
	reset_counters();
	ju_options o = { .sz = sizeof(ju_options), .channels = channels, .flags = JU_OPT_NO_ENV };
	int rc = ju_open(&o, &ctx);
	CHECK(rc == 0, "%s: ju_open: %s: %s", name, ju_strerror(rc), ju_errmsg());
	if (rc)
		return;
	CHECK_RC(publish_all(), 0);
	pthread_t th[N_WALKERS + N_CHURNERS];
	size_t n_th = 0;
	for (uintptr_t t = 0; t < N_WALKERS; t++) {
		walkers[t] = (walker){ .id = t, .seed = 0x1234567 + t * 0x9e3779b97f4a7c15u };
		rc = pthread_create(&th[n_th], NULL, walker_loop, &walkers[t]);
		CHECK(rc == 0, "%s: pthread_create: %s", name, strerror(rc));
		n_th += rc == 0;
	}
	for (uintptr_t t = 0; t < N_CHURNERS; t++) {
		rc = pthread_create(&th[n_th], NULL, churn_loop, &churners[t]);
		CHECK(rc == 0, "%s: pthread_create: %s", name, strerror(rc));
		n_th += rc == 0;
	}
	double end = now_seconds() + seconds;
	while (n_th == N_WALKERS + N_CHURNERS && (now_seconds() < end || !minimums_reached()))
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	atomic_store(&stop, true);
	for (size_t t = 0; t < n_th; t++)
		pthread_join(th[t], NULL);

	long changes = 0;
	for (int t = 0; t < N_CHURNERS; t++)
		changes += atomic_load(&n_changes[t]);
	printf("%s: %ld changes by %d churners (%ld batches), %zu blobs published at the end\n", name,
	       changes, N_CHURNERS, atomic_load(&n_batches), ju_count(ctx));
	for (int m = 0; m < N_METHODS; m++) {
		long walks = 0;
		for (int t = 0; t < N_WALKERS; t++)
			walks += atomic_load(&n_walks[t][m]);
		long bad = atomic_load(&n_bad[m]);
		printf("%s: %-18s %8ld walks through two live JIT frames, %ld wrong\n", name, method_name[m],
		       walks, bad);
		CHECK(bad == 0, "%s: %ld of %ld walks with %s were wrong", name, bad, walks, method_name[m]);
	}
	CHECK(atomic_load(&n_lookup_bad) == 0, "%s: %ld lookups after a change found the wrong FDE", name,
	      atomic_load(&n_lookup_bad));
	CHECK(atomic_load(&n_api_errors) == 0, "%s: %ld publish/unpublish calls failed", name,
	      atomic_load(&n_api_errors));
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
}

int main(void)
{
#ifndef __x86_64__
	UNIT_SKIP("the blobs are x86-64 code");
#endif
	setvbuf(stdout, NULL, _IOLBF, 0);
	const char *ro = getenv("JU_CHURN_REUSE_ONLY");
	reuse_only = ro && !strcmp(ro, "1");
	const char *env = getenv("JU_CHURN_SECONDS");
	double seconds = env && *env ? atof(env) : 3;
	if (!(seconds > 0))
		UNIT_SKIP("JU_CHURN_SECONDS=%s is not a positive number of seconds", env);
	if (make_code())
		UNIT_SKIP("cannot map executable memory");
	/* glibc loads libgcc_s at the first backtrace(): not during the walks. */
	void *warm[4];
	backtrace(warm, 4);
	printf("unpublish batches: %s\n", ju_unpublish_batch
						  ? "ju_unpublish_batch"
						  : "single ju_unpublish calls (no ju_unpublish_batch)");
	run_phase("libgcc", JU_CH_UNWINDER, seconds / 2);
	run_phase("libgcc+gdb", JU_CH_UNWINDER | JU_CH_GDB, seconds / 2);
	return unit_done("walks_through_live_jit_frames_stay_exact_while_addresses_around_them_are_reused");
}
