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
#include <stdlib.h>
#include <string.h>

/* libgcc's `struct object` is 6 or 7 pointers depending on the version; we
 * give it more room than any version uses. */
typedef struct { void *words[16]; } gcc_object;

struct gcc_reg {
	gcc_object ob;
	bool in_gcc;  /* registered with libgcc */
	bool in_llvm; /* registered with LLVM libunwind */
};

struct dwarf_eh_bases { void *tbase, *dbase, *func; };

struct unw_state {
	void *gcc_handle;
	void (*gcc_register)(const void *begin, void *ob);
	void *(*gcc_deregister)(const void *begin);
	bool gcc_btree;
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
				    ranges[i][1] - ranges[i][0], &leaf);
	buf_u32(&b, 0);
	return buf_ok(&b) ? b.len : 0;
}

/* Register P covering probe_code[0, 32) in two FDEs and Q covering [8, 12),
 * nested inside P's hull, then look up pc 20 twice.  The first lookup sorts
 * both objects; on the second a list-design libgcc meets Q first (its lowest
 * pc is nearer), does not find 20 in it and gives up; a b-tree finds P.
 * Keys differ, so this is safe on every design. */
static bool probe_btree(const ju_arch *arch, struct unw_state *u)
{
	const void *(*find)(void *, struct dwarf_eh_bases *) = dlsym(u->gcc_handle, "_Unwind_Find_FDE");
	if (!find)
		return false;
	static const uint32_t p_ranges[2][2] = { { 0, 16 }, { 16, 32 } };
	static const uint32_t q_ranges[1][2] = { { 8, 12 } };
	uint8_t p[256] __attribute__((aligned(8))), q[256] __attribute__((aligned(8)));
	if (!probe_section(arch, p, sizeof p, p_ranges, 2) || !probe_section(arch, q, sizeof q, q_ranges, 1))
		return false;
	gcc_object pob, qob;
	memset(&pob, 0, sizeof pob);
	memset(&qob, 0, sizeof qob);
	u->gcc_register(p, &pob);
	u->gcc_register(q, &qob);
	struct dwarf_eh_bases bases;
	find(probe_code + 20, &bases);
	bool found = find(probe_code + 20, &bases) != NULL;
	u->gcc_deregister(q);
	u->gcc_deregister(p);
	return found;
}

/* ---- open/close ------------------------------------------------------------ */

static int unw_open(struct ju_ctx *ctx)
{
	struct unw_state *u = ju__calloc(1, sizeof *u);
	if (!u)
		return JU_FAIL(JU_ENOMEM, "out of memory");
	/* RTLD_NOLOAD first: use the copy the program already has.  Otherwise
	 * load it; glibc's backtrace() would load the same one later. */
	u->gcc_handle = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	if (!u->gcc_handle)
		u->gcc_handle = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);
	if (u->gcc_handle) {
		u->gcc_register = (void (*)(const void *, void *))dlsym(u->gcc_handle, "__register_frame_info");
		u->gcc_deregister = (void *(*)(const void *))dlsym(u->gcc_handle, "__deregister_frame_info");
		if (!u->gcc_register || !u->gcc_deregister) {
			dlclose(u->gcc_handle);
			u->gcc_handle = NULL;
			u->gcc_register = NULL;
			u->gcc_deregister = NULL;
		}
	}
	if (u->gcc_handle)
		u->gcc_btree = probe_btree(ctx->arch, u);

	u->llvm_add_section = (void (*)(const void *))dlsym(RTLD_DEFAULT, "__unw_add_dynamic_eh_frame_section");
	u->llvm_remove_section = (void (*)(const void *))dlsym(RTLD_DEFAULT, "__unw_remove_dynamic_eh_frame_section");
	if (!u->llvm_add_section || !u->llvm_remove_section) {
		u->llvm_add_section = NULL;
		u->llvm_remove_section = NULL;
		u->llvm_add_fde = (void (*)(const void *))dlsym(RTLD_DEFAULT, "__unw_add_dynamic_fde");
		u->llvm_remove_fde = (void (*)(const void *))dlsym(RTLD_DEFAULT, "__unw_remove_dynamic_fde");
		if (!u->llvm_add_fde || !u->llvm_remove_fde)
			u->llvm_add_fde = NULL, u->llvm_remove_fde = NULL;
	}
	bool llvm = u->llvm_add_section || u->llvm_add_fde;
	if (!u->gcc_handle && !llvm) {
		free(u);
		return JU_FAIL(JU_ENOCONSUMER, "unwinder channel: neither libgcc_s.so.1 nor LLVM libunwind "
					       "is available in this process");
	}
	ju__log(ctx, JU_LOG_INFO, "unwinder channel: libgcc %s%s", !u->gcc_handle ? "absent"
		: u->gcc_btree ? "(b-tree registry)" : "(list registry)", llvm ? ", LLVM libunwind" : "");
	ctx->unw = u;
	return 0;
}

static void unw_close(struct ju_ctx *ctx)
{
	struct unw_state *u = ctx->unw;
	/* libgcc_s stays loaded: unwinders elsewhere in the process may hold
	 * pointers into it, and glibc keeps its own reference anyway. */
	free(u);
	ctx->unw = NULL;
}

/* ---- arenas ---------------------------------------------------------------- */

static int unw_prepare(struct ju_ctx *ctx, arena *a)
{
	(void)ctx;
	a->gcc = ju__calloc(1, sizeof *a->gcc);
	if (!a->gcc)
		return JU_FAIL(JU_ENOMEM, "out of memory for an unwinder registration");
	return 0;
}

static void unw_discard(struct ju_ctx *ctx, arena *a)
{
	(void)ctx;
	free(a->gcc);
	a->gcc = NULL;
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

static void llvm_add(struct unw_state *u, arena *a)
{
	if (u->llvm_add_section)
		u->llvm_add_section(eh_frame(a));
	else if (u->llvm_add_fde)
		llvm_each_fde(a, u->llvm_add_fde);
	a->gcc->in_llvm = u->llvm_add_section || u->llvm_add_fde;
}

static void llvm_remove(struct unw_state *u, arena *a)
{
	if (!a->gcc->in_llvm)
		return;
	if (u->llvm_remove_section)
		u->llvm_remove_section(eh_frame(a));
	else
		llvm_each_fde(a, u->llvm_remove_fde);
	a->gcc->in_llvm = false;
}

static void gcc_add(struct unw_state *u, arena *a)
{
	if (!u->gcc_register)
		return;
	u->gcc_register(eh_frame(a), &a->gcc->ob);
	a->gcc->in_gcc = true;
}

static void gcc_remove(struct unw_state *u, arena *a)
{
	if (!a->gcc->in_gcc)
		return;
	/* Only ever what we registered: GCC 13+ aborts on anything else. */
	u->gcc_deregister(eh_frame(a));
	a->gcc->in_gcc = false;
}

/* Unregister; the state itself is freed by unw_discard once arena.c frees
 * the retired arena: libgcc's _Unwind_Find_FDE reads the object after
 * unlocking. */
static void retire(struct unw_state *u, arena *a)
{
	if (!a->gcc)
		return;
	gcc_remove(u, a);
	llvm_remove(u, a);
}

static void unw_swap(struct ju_ctx *ctx, arena *const *add, size_t n_add, arena *const *del,
		     size_t n_del)
{
	struct unw_state *u = ctx->unw;
	if (u->gcc_btree) {
		/* The b-tree would refuse a new object with an old one's key. */
		for (size_t i = 0; i < n_del; i++)
			for (size_t k = 0; k < n_add; k++)
				if (del[i]->gcc && del[i]->lo == add[k]->lo)
					gcc_remove(u, del[i]);
	}
	for (size_t k = 0; k < n_add; k++) {
		gcc_add(u, add[k]);
		llvm_add(u, add[k]);
	}
	/* Lowest address first.  A list-design lookup stops at the first object
	 * (by descending lowest pc) whose lowest pc is <= the pc.  An old arena
	 * that starts where a new one does may sort before it; left registered
	 * after the old arenas above it are gone, it would hide the new arena's
	 * pcs above its own hull.  Going up, the remaining old arenas all start
	 * above any pc that already depends on a new one. */
	for (size_t i = 0; i < n_del; i++)
		retire(u, del[i]);
}

static void unw_blob_dead(struct ju_ctx *ctx, arena *a, blob_rec *r)
{
	(void)r;
	struct unw_state *u = ctx->unw;
	/* libgcc reads pc_range from the FDE on each lookup, so the tombstone
	 * already hides the blob.  LLVM libunwind cached the ranges when the
	 * section was added: add it again so it re-reads them. */
	if (a->gcc && a->gcc->in_llvm) {
		llvm_remove(u, a);
		llvm_add(u, a);
	}
}

const ju_channel_ops ju_ch_unwinder = {
	.bit = JU_CH_UNWINDER,
	.name = "unwinder",
	.open = unw_open,
	.close = unw_close,
	.arena_prepare = unw_prepare,
	.arena_discard = unw_discard,
	.arena_swap = unw_swap,
	.blob_dead = unw_blob_dead,
};
