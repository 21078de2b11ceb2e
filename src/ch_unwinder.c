/* SPDX-License-Identifier: MIT */
/* ch_unwinder.c - channel for the in-process unwinders: libgcc's frame
 * registry (glibc backtrace(), C++ exceptions, _Unwind_Backtrace) and LLVM
 * libunwind's dynamic FDE cache.  Each arena's .eh_frame section is
 * registered in place.
 *
 * libgcc comes in two designs, told apart at open by a probe:
 *   list   (GCC <= 12) objects on a list sorted by lowest pc; a lookup stops
 *          at the first object whose lowest pc is <= the pc.  Registering the
 *          new arena before deregistering the old keeps every pc findable.
 *   b-tree (GCC 13+) objects keyed by lowest pc; a second object with the
 *          same key is silently not inserted, and deregistering something
 *          unknown aborts.  An old arena sharing its key with a new one must
 *          therefore go first.
 * Both are reached through libgcc_s's own symbols (dlopen + dlsym on its
 * handle): if LLVM libunwind was loaded first, the global names resolve to its
 * no-op stubs.  LLVM libunwind, when present, gets the section too
 * (__unw_add_dynamic_eh_frame_section, or FDE by FDE on versions without it).
 */
#include "cfi.h"
#include "internal.h"

#include <dlfcn.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

/* libgcc's `struct object` is 6 or 7 pointers depending on the version; we
 * give it more room than any version uses. */
typedef struct {
	void *words[16];
} gcc_object;

/* An arena's registration with the frame registries, libgcc's and LLVM
 * libunwind's (named fde_reg, not unw_: that prefix is nongnu libunwind's
 * API, which is ch_libunwind.c's consumer). */
/* libgcc's registries: libgcc_s.so.1's, and a private copy linked into the
 * program itself (a -static or -static-libgcc link with the archive), which
 * is the one its C++ exceptions use. */
enum { GCC_SHARED, GCC_LINKED, N_GCC };

struct fde_reg {
	gcc_object ob[N_GCC];
	bool in_gcc[N_GCC]; /* registered with that libgcc registry */
	bool in_llvm;       /* registered with LLVM libunwind */
};

struct dwarf_eh_bases {
	void *tbase, *dbase, *func;
};

/* One libgcc registry's entry points; register is NULL when it is absent. */
typedef struct gcc_reg {
	void (*reg)(const void *begin, void *ob);
	void *(*dereg)(const void *begin);
	const void *(*find)(void *pc, struct dwarf_eh_bases *bases);
	bool btree;
} gcc_reg;

/* The channel's: each registry's entry points, found at open. */
struct fde_reg_state {
	void *gcc_handle;
	gcc_reg gcc[N_GCC];
	void (*llvm_add_section)(const void *eh_frame);
	void (*llvm_remove_section)(const void *eh_frame);
	void (*llvm_add_fde)(const void *fde);
	void (*llvm_remove_fde)(const void *fde);
};

static const void *eh_frame(const arena *a)
{
	return a->image + a->eh_off;
}

/* ---- the probe ------------------------------------------------------------- */

/* Bytes nobody executes, described by the probe's FDEs. */
static uint8_t probe_code[64] __attribute__((aligned(16)));

/* A minimal .eh_frame: our CIE and FDEs for the given sub-ranges of
 * probe_code, absolute pointers, zero-terminated. */
static size_t probe_section(const ju_arch *arch, uint8_t *out, size_t cap, const uint32_t (*ranges)[2],
			    size_t n)
{
	byte_buf b;
	buf_init(&b, out, cap);
	size_t cie = cfi_write_cie(arch, &b, CFI_ENC_ABS8);
	const ju_frame leaf = { .kind = JU_FRAME_LEAF };
	for (size_t i = 0; i < n; i++)
		cfi_write_blob_fdes(arch, &b, cie, CFI_ENC_ABS8, 0, (uintptr_t)probe_code + ranges[i][0],
				    ranges[i][1] - ranges[i][0], &leaf, NULL, NULL);
	buf_u32(&b, 0);
	return buf_ok(&b) ? b.len : 0;
}

/* Register P covering probe_code[0, 32) in two FDEs and Q covering [8, 12),
 * nested inside P's hull, then look up pc 20 twice.  The first lookup sorts
 * both objects; on the second a list-design libgcc meets Q first (its lowest
 * pc is nearer), does not find 20 in it and gives up; a b-tree finds P.
 * Keys differ, so this is safe on every design. */
static bool probe_btree(const ju_arch *arch, const gcc_reg *g)
{
	if (!g->find)
		return false;
	static const uint32_t p_ranges[2][2] = { { 0, 16 }, { 16, 32 } };
	static const uint32_t q_ranges[1][2] = { { 8, 12 } };
	uint8_t p[256] __attribute__((aligned(8))), q[256] __attribute__((aligned(8)));
	if (!probe_section(arch, p, sizeof p, p_ranges, 2) || !probe_section(arch, q, sizeof q, q_ranges, 1))
		return false;
	gcc_object pob, qob;
	memset(&pob, 0, sizeof pob);
	memset(&qob, 0, sizeof qob);
	g->reg(p, &pob);
	g->reg(q, &qob);
	struct dwarf_eh_bases bases;
	g->find(probe_code + 20, &bases);
	bool found = g->find(probe_code + 20, &bases) != NULL;
	g->dereg(q);
	g->dereg(p);
	return found;
}

/* The registry linked into the program, through weak references: resolved at
 * link time when this archive and libgcc_eh.a go into one executable (which
 * then uses that copy for its exceptions, and in a -static link for
 * backtrace() too); in the shared library they bind to whatever the process
 * exports, which open_shared reaches properly, so they count only when they
 * lie in the main program. */
extern void __register_frame_info(const void *begin, void *ob) __attribute__((weak));
extern void *__deregister_frame_info(const void *begin) __attribute__((weak));
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases) __attribute__((weak));

/* A program without a dynamic loader (-static, -static-pie). */
static bool static_program(void)
{
	return getauxval(AT_BASE) == 0;
}

static bool in_main_program(const void *p)
{
	if (static_program())
		return true;
	Dl_info info;
	struct link_map *lm = NULL;
	return dladdr1(p, &info, (void **)&lm, RTLD_DL_LINKMAP) && lm && lm->l_name && !lm->l_name[0];
}

static void open_linked(gcc_reg *g)
{
	if (!__register_frame_info || !__deregister_frame_info || !_Unwind_Find_FDE ||
	    !in_main_program((const void *)__register_frame_info))
		return;
	*g = (gcc_reg){ __register_frame_info, __deregister_frame_info, _Unwind_Find_FDE, false };
}

/* libgcc_s.so.1, through its own handle: if LLVM libunwind was loaded first,
 * the global names resolve to its no-op stubs. */
static void open_shared(struct fde_reg_state *fr, const gcc_reg *linked)
{
	/* A static program has no dynamic libgcc_s to share; loading one would
	 * register with a copy nothing in the program asks. */
	if (static_program())
		return;
	/* RTLD_NOLOAD first: use the copy the program already has.  Otherwise
	 * load it; glibc's backtrace() would load the same one later. */
	fr->gcc_handle = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!fr->gcc_handle)
		fr->gcc_handle = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!fr->gcc_handle)
		return;
	gcc_reg g = {
		(void (*)(const void *, void *))dlsym(fr->gcc_handle, "__register_frame_info"),
		(void *(*)(const void *))dlsym(fr->gcc_handle, "__deregister_frame_info"),
		(const void *(*)(void *, struct dwarf_eh_bases *))dlsym(fr->gcc_handle, "_Unwind_Find_FDE"),
		false,
	};
	if (!g.reg || !g.dereg || g.reg == linked->reg) {
		dlclose(fr->gcc_handle);
		fr->gcc_handle = NULL;
		return;
	}
	fr->gcc[GCC_SHARED] = g;
}

/* ---- open/close ------------------------------------------------------------ */

static int fde_reg_open(struct ju_ctx *ctx)
{
	struct fde_reg_state *fr = ju__calloc(1, sizeof *fr);
	if (!fr)
		return JU_FAIL(JU_ENOMEM, "out of memory");
	open_linked(&fr->gcc[GCC_LINKED]);
	open_shared(fr, &fr->gcc[GCC_LINKED]);
	for (int i = 0; i < N_GCC; i++)
		if (fr->gcc[i].reg)
			fr->gcc[i].btree = probe_btree(ctx->arch, &fr->gcc[i]);

	fr->llvm_add_section =
		(void (*)(const void *))dlsym(RTLD_DEFAULT, "__unw_add_dynamic_eh_frame_section");
	fr->llvm_remove_section =
		(void (*)(const void *))dlsym(RTLD_DEFAULT, "__unw_remove_dynamic_eh_frame_section");
	if (!fr->llvm_add_section || !fr->llvm_remove_section) {
		fr->llvm_add_section = NULL;
		fr->llvm_remove_section = NULL;
		fr->llvm_add_fde = (void (*)(const void *))dlsym(RTLD_DEFAULT, "__unw_add_dynamic_fde");
		fr->llvm_remove_fde = (void (*)(const void *))dlsym(RTLD_DEFAULT, "__unw_remove_dynamic_fde");
		if (!fr->llvm_add_fde || !fr->llvm_remove_fde)
			fr->llvm_add_fde = NULL, fr->llvm_remove_fde = NULL;
	}
	bool llvm = fr->llvm_add_section || fr->llvm_add_fde;
	const gcc_reg *sh = &fr->gcc[GCC_SHARED], *ln = &fr->gcc[GCC_LINKED];
	if (!sh->reg && !ln->reg && !llvm) {
		free(fr);
		if (static_program())
			return JU_FAIL(JU_ENOCONSUMER,
				       "unwinder channel: this static program has no unwinder "
				       "linked in (nothing uses C++ exceptions or backtrace())");
		return JU_FAIL(JU_ENOCONSUMER, "unwinder channel: neither libgcc_s.so.1 nor LLVM libunwind "
					       "is available in this process");
	}
	ju__log(ctx, JU_LOG_INFO, "unwinder channel: libgcc_s %s, libgcc linked into the program %s%s",
		!sh->reg    ? "absent"
		: sh->btree ? "(b-tree registry)"
			    : "(list registry)",
		!ln->reg    ? "absent"
		: ln->btree ? "(b-tree registry)"
			    : "(list registry)",
		llvm ? ", LLVM libunwind" : "");
	ctx->fde_reg = fr;
	return 0;
}

static void fde_reg_close(struct ju_ctx *ctx)
{
	struct fde_reg_state *fr = ctx->fde_reg;
	/* libgcc_s stays loaded: unwinders elsewhere in the process may hold
	 * pointers into it, and glibc keeps its own reference anyway. */
	free(fr);
	ctx->fde_reg = NULL;
}

/* ---- arenas ---------------------------------------------------------------- */

static int fde_reg_prepare(struct ju_ctx *ctx, arena *a)
{
	(void)ctx;
	a->fde_reg = ju__calloc(1, sizeof *a->fde_reg);
	if (!a->fde_reg)
		return JU_FAIL(JU_ENOMEM, "out of memory for an unwinder registration");
	return 0;
}

static void fde_reg_discard(struct ju_ctx *ctx, arena *a)
{
	(void)ctx;
	free(a->fde_reg);
	a->fde_reg = NULL;
}

/* Walk the FDEs of an arena's section (they follow the CIE). */
static void llvm_each_fde(const arena *a, void (*fn)(const void *))
{
	const uint8_t *p = eh_frame(a), *end = p + a->eh_size - 4;
	p += 4 + (size_t)load_u32(p); /* skip the CIE */
	while (p + 4 <= end) {
		uint32_t len = load_u32(p);
		if (!len)
			break;
		fn(p);
		p += 4 + (size_t)len;
	}
}

static void llvm_add(struct fde_reg_state *fr, arena *a)
{
	if (fr->llvm_add_section)
		fr->llvm_add_section(eh_frame(a));
	else if (fr->llvm_add_fde)
		llvm_each_fde(a, fr->llvm_add_fde);
	a->fde_reg->in_llvm = fr->llvm_add_section || fr->llvm_add_fde;
}

static void llvm_remove(struct fde_reg_state *fr, arena *a)
{
	if (!a->fde_reg->in_llvm)
		return;
	if (fr->llvm_remove_section)
		fr->llvm_remove_section(eh_frame(a));
	else
		llvm_each_fde(a, fr->llvm_remove_fde);
	a->fde_reg->in_llvm = false;
}

static void gcc_add(struct fde_reg_state *fr, int i, arena *a)
{
	if (!fr->gcc[i].reg)
		return;
	fr->gcc[i].reg(eh_frame(a), &a->fde_reg->ob[i]);
	a->fde_reg->in_gcc[i] = true;
}

static void gcc_remove(struct fde_reg_state *fr, int i, arena *a)
{
	if (!a->fde_reg->in_gcc[i])
		return;
	/* Only ever what we registered: GCC 13+ aborts on anything else. */
	fr->gcc[i].dereg(eh_frame(a));
	a->fde_reg->in_gcc[i] = false;
}

/* Unregister; the state itself is freed by fde_reg_discard once arena.c frees
 * the retired arena: libgcc's _Unwind_Find_FDE reads the object after
 * unlocking. */
static void retire(struct fde_reg_state *fr, arena *a)
{
	if (!a->fde_reg)
		return;
	for (int i = 0; i < N_GCC; i++)
		gcc_remove(fr, i, a);
	llvm_remove(fr, a);
}

/* Make libgcc sort a new object now, in this thread: it sorts an object at
 * the first lookup that reaches it, allocating under its lock, and that
 * lookup must not be a signal handler's (which may have interrupted malloc).
 * A lookup of the arena's lowest pc, once no old arena covers it, classifies
 * every object not classified yet up to ours.  Signals blocked. */
static void gcc_sort_now(struct fde_reg_state *fr, const arena *a)
{
	for (int g = 0; g < N_GCC; g++) {
		if (!a->fde_reg->in_gcc[g] || !fr->gcc[g].find)
			continue;
		struct dwarf_eh_bases bases;
		fr->gcc[g].find((void *)(uintptr_t)a->lo, &bases);
	}
}

static void fde_reg_swap(struct ju_ctx *ctx, arena *const *add, size_t n_add, arena *const *del, size_t n_del)
{
	struct fde_reg_state *fr = ctx->fde_reg;
	sigset_t old;
	ju__signals_block(&old);
	for (int g = 0; g < N_GCC; g++) {
		if (!fr->gcc[g].btree)
			continue;
		/* The b-tree would refuse a new object with an old one's key. */
		for (size_t i = 0; i < n_del; i++)
			for (size_t k = 0; k < n_add; k++)
				if (del[i]->fde_reg && del[i]->lo == add[k]->lo)
					gcc_remove(fr, g, del[i]);
	}
	/* Highest address first (add[] is in address order).  A list-design
	 * lookup stops at the first object, by descending lowest pc, whose
	 * lowest pc is <= the pc, and searches no further: a new arena that lies
	 * inside an old one's hull (the middle of a split) hides every pc of the
	 * old arena above it until the new arena holding that pc is registered
	 * too.  Registered from the top down, the new arena holding a pc is
	 * always in place before any new arena below it. */
	for (size_t k = n_add; k-- > 0;) {
		for (int g = 0; g < N_GCC; g++)
			gcc_add(fr, g, add[k]);
		llvm_add(fr, add[k]);
	}
	/* Lowest address first.  A list-design lookup stops at the first object
	 * (by descending lowest pc) whose lowest pc is <= the pc.  An old arena
	 * that starts where a new one does may sort before it; left registered
	 * after the old arenas above it are gone, it would hide the new arena's
	 * pcs above its own hull.  Going up, the remaining old arenas all start
	 * above any pc that already depends on a new one. */
	for (size_t i = 0; i < n_del; i++)
		retire(fr, del[i]);
	for (size_t k = 0; k < n_add; k++)
		gcc_sort_now(fr, add[k]);
	ju__signals_restore(&old);
}

/* libgcc reads pc_begin and pc_range from the FDE on each lookup, so a
 * tombstone hides a blob and a reused slot shows the new one at once.  LLVM
 * libunwind cached the ranges when the section was added: add it again so
 * it re-reads them.  (Its cache is one array it scans whole on every lookup
 * and removal: exact, but linear in the FDEs registered.) */
static void llvm_reread(struct fde_reg_state *fr, arena *a)
{
	if (a->fde_reg && a->fde_reg->in_llvm) {
		sigset_t old;
		ju__signals_block(&old);
		llvm_remove(fr, a);
		llvm_add(fr, a);
		ju__signals_restore(&old);
	}
}

static void fde_reg_blobs_dead(struct ju_ctx *ctx, arena *a, const uint32_t *ks, size_t n)
{
	(void)ks;
	(void)n;
	llvm_reread(ctx->fde_reg, a);
}

static void fde_reg_reuse_commit(struct ju_ctx *ctx, reuse_set *rs, int phase)
{
	if (phase != 1)
		return;
	for (size_t j = 0; j < rs->n; j++)
		if (!j || rs->it[j].a != rs->it[j - 1].a)
			llvm_reread(ctx->fde_reg, rs->it[j].a);
}

const ju_channel_ops ju_ch_unwinder = {
	.bit = JU_CH_UNWINDER,
	.name = "unwinder",
	.open = fde_reg_open,
	.close = fde_reg_close,
	.arena_prepare = fde_reg_prepare,
	.arena_discard = fde_reg_discard,
	.arena_swap = fde_reg_swap,
	.blobs_dead = fde_reg_blobs_dead,
	.reuse_commit = fde_reg_reuse_commit,
};
