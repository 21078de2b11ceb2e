/* SPDX-License-Identifier: MIT */
/* test-stencil-copies-unwind-as-their-stencils-say.c - blobs made of raw CFI
 * ranges (JU_FRAME_CFI), as a copy-and-patch JIT publishes them: every copy
 * of a stencil points at that stencil's one instruction array, in blobs of
 * 1 to 60 ranges, with and without gaps, each blob in a page of its own (a
 * run of its own in the gdb images) or packed, in single calls and batches,
 * some unpublished and their places taken again.  An independent reader
 * (elfutils' libdw) must find, at every pc of every live blob, in the arena
 * image the unwinders register and in the gdb image that holds it, the rule
 * that the stencil's own instructions give there, every register an earlier
 * range of the blob touched back to "same value", and an undefined return
 * address in the gaps; every live blob is named by exactly one gdb image,
 * no dead one by any.
 *
 * The library keeps what it learned of an instruction list (cfi.h,
 * cfi_memo): the caller may write other bytes at the same address between
 * calls, and those bytes must be what is checked and written, and a list
 * that passed for one range must still be refused for a shorter one.
 *
 * Expected rules come from the stencils below, written out by hand from
 * their instructions (DWARF 4 section 6.4.2), never from a reader's output.
 */
#include "internal.h"
#include "formats/gdbjit.h"
#include "unit.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <string.h>
#include <sys/mman.h>

extern gdbjit_descriptor __jit_debug_descriptor;

enum { RBX = 3, RBP = 6, RSP = 7, RA = 16, R65 = 65, R66 = 66 };

/* ---- the stencils and what their instructions say --------------------------- */

/* Where the CFA is and which registers are saved where, at one pc. */
typedef struct state {
	int cfa_reg, cfa_off;
	int n;
	struct {
		int reg, off;
	} saved[4];
} state;

static state entry_state(void)
{
	return (state){ RSP, 8, 1, { { RA, -8 } } }; /* the CIE's: call pushed the return address */
}

static state with(state s, int reg, int off)
{
	s.saved[s.n].reg = reg;
	s.saved[s.n++].off = off;
	return s;
}

/* push rbp; mov rbp, rsp; ...; pop rbp */
static const uint8_t tramp[] = { 0x41, 0x0e, 0x10, 0x86, 0x02, 0x43, 0x0d, 0x06, 0x5a, 0x0c, 0x07, 0x08 };
static state tramp_at(uint32_t o)
{
	state s = entry_state();
	if (o < 1)
		return s;
	s = with(s, RBP, -16);
	s.cfa_off = 16;
	if (o >= 4)
		s.cfa_reg = RBP; /* advance 3: def_cfa_register rbp */
	if (o >= 30)
		s.cfa_reg = RSP, s.cfa_off = 8; /* advance 26: def_cfa rsp, 8 */
	return s;
}

/* push rbx ... pop rbx (rbx keeps its rule: the stencil did not restore it) */
static const uint8_t push_rbx[] = { 0x41, 0x0e, 0x10, 0x83, 0x02, 0x60, 0x0e, 0x08 };
static state push_rbx_at(uint32_t o)
{
	state s = entry_state();
	if (o < 1)
		return s;
	s = with(s, RBX, -16);
	s.cfa_off = o < 33 ? 16 : 8;
	return s;
}

/* sub rsp, 8 around a call */
static const uint8_t call[] = { 0x44, 0x0e, 0x10, 0x4c, 0x0e, 0x08 };
static state call_at(uint32_t o)
{
	state s = entry_state();
	if (o >= 4 && o < 16)
		s.cfa_off = 16;
	return s;
}

/* registers past 64 (DW_CFA_offset_extended) and the return address given
 * its rule again (DW_CFA_offset r16) */
static const uint8_t high[] = { 0x41, 0x05, R65, 0x02, 0x05, R66, 0x03, 0x90, 0x01 };
static state high_at(uint32_t o)
{
	state s = entry_state();
	if (o >= 1)
		s = with(with(s, R65, -16), R66, -24);
	return s;
}

/* a remembered state around an epilogue */
static const uint8_t remember[] = { 0x42, 0x0e, 0x10, 0x8f, 0x02, 0x0a, 0x48, 0x0e, 0x08, 0x42, 0x0b };
static state remember_at(uint32_t o)
{
	state s = entry_state();
	if (o < 2)
		return s;
	s = with(s, 15, -16); /* r15 */
	s.cfa_off = o >= 10 && o < 12 ? 8 : 16;
	return s;
}

static state none_at(uint32_t o)
{
	(void)o;
	return entry_state();
}

typedef struct stencil {
	uint32_t size;
	const uint8_t *cfi;
	size_t len;
	state (*at)(uint32_t o);
	uint64_t touches; /* registers its instructions give a rule to (bit per number - 64 for 65, 66) */
} stencil;

#define BIT(r) ((uint64_t)1 << ((r) % 64))
static const stencil stencils[] = {
	{ 40, tramp, sizeof tramp, tramp_at, BIT(RBP) },
	{ 24, NULL, 0, none_at, 0 },
	{ 48, push_rbx, sizeof push_rbx, push_rbx_at, BIT(RBX) },
	{ 32, call, sizeof call, call_at, 0 },
	{ 16, high, sizeof high, high_at, BIT(R65) | BIT(R66) },
	{ 18, remember, sizeof remember, remember_at, BIT(15) },
	{ 12, NULL, 0, none_at, 0 },
};
enum { N_STENCILS = sizeof stencils / sizeof stencils[0], MAX_RANGES = 60 };

/* ---- the blobs -------------------------------------------------------------- */

typedef struct model {
	char name[32];
	ju_blob blob;
	ju_cfi_range r[MAX_RANGES];
	const stencil *st[MAX_RANGES];
	bool live;
} model;

enum { N_BLOBS = 420 };
static model blobs[N_BLOBS];
static uint8_t *region;
enum { REGION = 64 << 20, STRIDE = 8192 };

/* Blob i: k ranges, stencil 0 first, the others in turn; a 6-byte gap after
 * every third range when `gaps`; at the top of the region and down, a page
 * or two apart (own runs), or packed from the bottom up. */
static ju_blob *make(size_t i, size_t k, bool gaps, bool packed)
{
	model *m = &blobs[i];
	uint32_t at = 0;
	for (size_t j = 0; j < k; j++) {
		const stencil *s = &stencils[j == 0 ? 0 : 1 + (i * 5 + j * 3) % (N_STENCILS - 1)];
		m->st[j] = s;
		m->r[j] = (ju_cfi_range){ at, at + s->size, s->cfi, s->len };
		at += s->size + (gaps && j % 3 == 1 && j + 1 < k ? 6 : 0);
	}
	snprintf(m->name, sizeof m->name, "stencils:%zu", i);
	uint8_t *start = packed ? region + (i % 64) * 4096 : region + REGION - (i + 1) * STRIDE;
	m->blob = (ju_blob){ .sz = sizeof(ju_blob),
			     .start = start,
			     .size = at,
			     .name = m->name,
			     .frame = { .kind = JU_FRAME_CFI, .u.cfi = { m->r, k } } };
	return &m->blob;
}

/* ---- what a reader must find ---------------------------------------------- */

enum { NO_FDE, GAP, RULE };

/* What blob m says at offset off: no FDE, a gap, or the state in *s, with
 * the registers earlier ranges touched (and the current one has not) in
 * *same. */
static int expect_at(const model *m, uint32_t off, state *s, uint64_t same[2])
{
	size_t k = m->blob.frame.u.cfi.n;
	if (off < m->r[0].start || off >= m->r[k - 1].end)
		return NO_FDE;
	same[0] = same[1] = 0;
	for (size_t j = 0; j < k; j++) {
		if (off < m->r[j].start)
			return GAP;
		if (off < m->r[j].end) {
			*s = m->st[j]->at(off - m->r[j].start);
			for (int q = 0; q < s->n; q++)
				same[s->saved[q].reg / 64] &= ~BIT(s->saved[q].reg);
			return RULE;
		}
		uint64_t t = m->st[j]->touches;
		same[0] |= t & ~(BIT(R65) | BIT(R66));
		same[1] |= t & (BIT(R65) | BIT(R66));
	}
	return NO_FDE;
}

static bool saved_at(Dwarf_Frame *fr, int reg, int64_t *off)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	if (dwarf_frame_register(fr, reg, mem, &ops, &n) != 0)
		return false;
	/* libdw says "at CFA+N" as DW_OP_call_frame_cfa, DW_OP_plus_uconst N */
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	return false;
}

/* libdw: "same value" is no operation and no location (NULL ops). */
static bool same_value(Dwarf_Frame *fr, int reg)
{
	Dwarf_Op mem[3], *ops = mem;
	size_t n = 1;
	return dwarf_frame_register(fr, reg, mem, &ops, &n) == 0 && n == 0 && ops == NULL;
}

static bool undefined(Dwarf_Frame *fr, int reg)
{
	Dwarf_Op mem[3], *ops = NULL;
	size_t n = 1;
	return dwarf_frame_register(fr, reg, mem, &ops, &n) == 0 && n == 0 && ops == mem;
}

static void check_pc(Dwarf_CFI *cfi, const model *m, uint32_t off, const char *where)
{
	state want = entry_state();
	uint64_t same[2] = { 0, 0 };
	int kind = expect_at(m, off, &want, same);
	Dwarf_Frame *fr = NULL;
	int rc = dwarf_cfi_addrframe(cfi, (uintptr_t)m->blob.start + off, &fr);
	if (kind == NO_FDE) {
		CHECK(rc != 0, "%s: %s+%u: an FDE covers it", where, m->name, off);
		free(fr);
		return;
	}
	CHECK(rc == 0, "%s: %s+%u: no frame: %s", where, m->name, off, dwarf_errmsg(-1));
	if (rc)
		return;
	if (kind == GAP) {
		CHECK(undefined(fr, RA), "%s: %s+%u: the return address is not undefined in a gap", where,
		      m->name, off);
		free(fr);
		return;
	}
	Dwarf_Op *ops;
	size_t n;
	long long reg = -1, cfa = 0;
	if (dwarf_frame_cfa(fr, &ops, &n) == 0 && n == 1 && ops[0].atom == DW_OP_bregx)
		reg = (long long)ops[0].number, cfa = (long long)(int64_t)ops[0].number2;
	else if (n == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
		reg = ops[0].atom - DW_OP_breg0, cfa = (long long)(int64_t)ops[0].number;
	CHECK(reg == want.cfa_reg && cfa == want.cfa_off, "%s: %s+%u: CFA reg%lld%+lld, want reg%d%+d", where,
	      m->name, off, reg, cfa, want.cfa_reg, want.cfa_off);
	for (int q = 0; q < want.n; q++) {
		int64_t got = 0;
		CHECK(saved_at(fr, want.saved[q].reg, &got) && got == want.saved[q].off,
		      "%s: %s+%u: register %d not saved at CFA%+d", where, m->name, off, want.saved[q].reg,
		      want.saved[q].off);
	}
	for (int w = 0; w < 2; w++)
		for (uint64_t bits = same[w]; bits; bits &= bits - 1) {
			int r = w * 64 + __builtin_ctzll(bits);
			CHECK(same_value(fr, r),
			      "%s: %s+%u: register %d, touched by an earlier range, is not "
			      "\"same value\"",
			      where, m->name, off, r);
		}
	free(fr);
}

/* Every pc of every live blob inside [lo, hi) of one image; returns how many
 * live blobs it has. */
static size_t check_image(const uint8_t *image, size_t size, uint64_t lo, uint64_t hi, const char *where)
{
	char *copy = malloc(size);
	memcpy(copy, image, size);
	Elf *elf = elf_memory(copy, size);
	Dwarf_CFI *cfi = elf ? dwarf_getcfi_elf(elf) : NULL;
	CHECK(cfi != NULL, "%s: no CFI: %s", where, dwarf_errmsg(-1));
	size_t live = 0;
	for (size_t i = 0; cfi && i < N_BLOBS; i++) {
		const model *m = &blobs[i];
		uint64_t start = (uintptr_t)m->blob.start;
		if (!m->blob.start || start < lo || start >= hi)
			continue;
		live += m->live;
		for (uint32_t off = 0; off < m->blob.size; off += m->live ? 1 : 7)
			if (m->live)
				check_pc(cfi, m, off, where);
			else
				CHECK(dwarf_cfi_addrframe(cfi, start + off, &(Dwarf_Frame *){ NULL }) != 0,
				      "%s: dead %s+%u has a frame", where, m->name, off);
	}
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
	free(copy);
	return live;
}

/* The blob a gdb image's symbols name: each symbol must be a live blob's,
 * at its address; counts per blob in named[]. */
static void count_names(const uint8_t *image, size_t size, unsigned *named)
{
	char *copy = malloc(size);
	memcpy(copy, image, size);
	Elf *elf = elf_memory(copy, size);
	Elf_Scn *scn = NULL;
	uint64_t text = 0;
	size_t shstrndx;
	elf_getshdrstrndx(elf, &shstrndx);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".text"))
			text = sh.sh_addr;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t k = 1; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym s;
			gelf_getsym(d, (int)k, &s);
			const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
			size_t i = 0;
			while (i < N_BLOBS && strcmp(blobs[i].name, nm))
				i++;
			CHECK(i < N_BLOBS && (uintptr_t)blobs[i].blob.start == text + s.st_value &&
				      s.st_size == blobs[i].blob.size,
			      "a gdb image names %s at %#llx", nm, (unsigned long long)(text + s.st_value));
			if (i < N_BLOBS)
				named[i]++;
		}
	}
	elf_end(elf);
	free(copy);
}

static void check_all(ju_ctx *ctx, const char *when)
{
	char where[96];
	size_t live = 0, seen = 0;
	for (size_t i = 0; i < N_BLOBS; i++)
		live += blobs[i].live;
	for (size_t a = 0; a < ctx->n_arenas; a++) {
		const arena *ar = ctx->arenas[a];
		snprintf(where, sizeof where, "%s, arena %zu", when, a);
		seen += check_image(ar->image, ar->image_size, ar->lo, ar->hi, where);
	}
	CHECK(seen == live, "%s: the arena images hold %zu live blobs of %zu", when, seen, live);
	static unsigned named[N_BLOBS];
	memset(named, 0, sizeof named);
	seen = 0;
	size_t entries = 0;
	for (uint64_t p = __jit_debug_descriptor.first_entry; p;
	     p = ((gdbjit_entry *)(uintptr_t)p)->next_entry) {
		const gdbjit_entry *e = (const gdbjit_entry *)(uintptr_t)p;
		snprintf(where, sizeof where, "%s, gdb entry %zu", when, entries++);
		const uint8_t *img = (const uint8_t *)(uintptr_t)e->symfile_addr;
		seen += check_image(img, e->symfile_size, e->code_lo, e->code_hi, where);
		count_names(img, e->symfile_size, named);
	}
	CHECK(seen == live, "%s: the gdb images hold %zu live blobs of %zu", when, seen, live);
	for (size_t i = 0; i < N_BLOBS; i++)
		CHECK(named[i] == (blobs[i].live ? 1u : 0u), "%s: %s is named by %u gdb images (%s)", when,
		      blobs[i].name, named[i], blobs[i].live ? "live" : "dead");
}

/* ---- the caller's bytes -------------------------------------------------- */

/* The same address and length, other bytes, between calls; and one list
 * that passes for one range and not for a shorter one, in one call. */
static void changed_bytes_are_what_is_checked_and_written(ju_ctx *ctx)
{
	static uint8_t mut[sizeof push_rbx];
	static uint8_t longer[48]; /* longer than the bytes the library keeps of a list */
	memcpy(mut, push_rbx, sizeof mut);
	memset(longer, DW_CFA_nop, sizeof longer);
	memcpy(longer, push_rbx, sizeof push_rbx);
	uint8_t *lists[] = { mut, longer };
	size_t lens[] = { sizeof mut, sizeof longer };
	for (int t = 0; t < 2; t++) {
		model *m = &blobs[N_BLOBS - 1];
		ju_blob *b = make(N_BLOBS - 1, 2, false, false);
		m->r[1] = (ju_cfi_range){ m->r[1].start, m->r[1].start + 48, lists[t], lens[t] };
		m->st[1] = &stencils[2];
		b->size = m->r[1].end;
		CHECK_RC(ju_publish(ctx, b), 0);
		m->live = true;
		check_all(ctx, t ? "a long list, as first written" : "a list, as first written");
		CHECK_RC(ju_unpublish(ctx, b->start), 0);
		m->live = false;
		/* advance 2; def_cfa_offset 24; offset rbx at CFA-24; advance 32;
		 * def_cfa_offset 8: push_rbx's length, other rules */
		static const uint8_t other[] = { 0x42, 0x0e, 0x18, 0x83, 0x03, 0x60, 0x0e, 0x08 };
		memcpy(lists[t], other, sizeof other);
		CHECK_RC(ju_publish(ctx, b), 0);
		arena *a;
		const blob_rec *r = arena_find(ctx, (uintptr_t)b->start, &a);
		CHECK(r != NULL, "the blob is not published");
		if (r) {
			Dwarf_CFI *cfi = NULL;
			char *copy = malloc(a->image_size);
			memcpy(copy, a->image, a->image_size);
			Elf *e = elf_memory(copy, a->image_size);
			cfi = e ? dwarf_getcfi_elf(e) : NULL;
			Dwarf_Frame *fr = NULL;
			uint64_t pc = (uintptr_t)b->start + m->r[1].start + 2;
			CHECK(cfi && dwarf_cfi_addrframe(cfi, pc, &fr) == 0,
			      "no frame after the bytes changed");
			Dwarf_Op *ops;
			size_t n;
			int64_t off = 0;
			CHECK(fr && dwarf_frame_cfa(fr, &ops, &n) == 0 && n == 1 &&
				      (int64_t)(ops[0].atom == DW_OP_bregx ? ops[0].number2
									   : ops[0].number) == 24,
			      "%s: the FDE does not say the new bytes' CFA offset (24)",
			      t ? "long" : "short");
			CHECK(fr && saved_at(fr, RBX, &off) && off == -24, "%s: rbx is not at CFA-24",
			      t ? "long" : "short");
			free(fr);
			if (cfi)
				dwarf_cfi_end(cfi);
			elf_end(e);
			free(copy);
		}
		CHECK_RC(ju_unpublish(ctx, b->start), 0);
		/* and bytes that go past the range: refused as they are */
		static const uint8_t far[] = { 0x02, 200, 0, 0, 0, 0, 0, 0 };
		memcpy(lists[t], far, sizeof far);
		CHECK_RC(ju_publish(ctx, b), JU_ECFI);
		CHECK(strstr(ju_errmsg(),
			     "range 1: advance at byte 0 reaches offset 200, past the range (48 bytes)"),
		      "message: %s", ju_errmsg());
	}
	/* one call: push_rbx reaches offset 33, passes in a range of 48 bytes
	 * and is refused in one of 20 */
	ju_blob *b = make(N_BLOBS - 1, 3, false, false);
	model *m = &blobs[N_BLOBS - 1];
	m->r[0] = (ju_cfi_range){ 0, 48, push_rbx, sizeof push_rbx };
	m->r[1] = (ju_cfi_range){ 48, 96, push_rbx, sizeof push_rbx };
	m->r[2] = (ju_cfi_range){ 96, 116, push_rbx, sizeof push_rbx };
	b->size = 116;
	CHECK_RC(ju_publish(ctx, b), JU_ECFI);
	CHECK(strstr(ju_errmsg(), "range 2: advance at byte 5 reaches offset 33, past the range (20 bytes)"),
	      "message: %s", ju_errmsg());
	ju_blob two[2] = { *make(N_BLOBS - 2, 3, false, false), *b };
	two[1].name = "short";
	CHECK_RC(ju_publish_batch(ctx, two, 2), JU_ECFI);
	CHECK(strstr(ju_errmsg(), "blob 1 (short): CFI frame: range 2: advance at byte 5 reaches offset 33"),
	      "message: %s", ju_errmsg());
	blobs[N_BLOBS - 2].blob.start = NULL;
	blobs[N_BLOBS - 1].blob.start = NULL;
}

int main(void)
{
	region = mmap(NULL, REGION, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (region == MAP_FAILED)
		UNIT_SKIP("no address space for the blobs");
	elf_version(EV_CURRENT);
	ju_options o = { .sz = sizeof o, .channels = JU_CH_UNWINDER | JU_CH_GDB, .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx;
	CHECK_RC(ju_open(&o, &ctx), 0);
	if (!ctx)
		return unit_done("test-stencil-copies-unwind-as-their-stencils-say");
	size_t i = 0;
	/* cold exits (3 ranges), one call each, each in its own pages */
	for (; i < 120; i++) {
		CHECK_RC(ju_publish(ctx, make(i, 3, false, false)), 0);
		blobs[i].live = true;
		if (i % 37 == 0)
			check_all(ctx, "cold exits");
	}
	check_all(ctx, "cold exits");
	/* traces: 1 to 60 ranges, gaps, singles and batches of 7 */
	while (i < 300) {
		ju_blob b[7];
		size_t n = i % 2 ? 7 : 1;
		for (size_t q = 0; q < n; q++, i++)
			b[q] = *make(i, 1 + (i * 13) % MAX_RANGES, i % 3 == 0, false);
		CHECK_RC(ju_publish_batch(ctx, b, n), 0);
		for (size_t q = i - n; q < i; q++)
			blobs[q].live = true;
	}
	check_all(ctx, "traces");
	/* some die; blobs of two ranges take some of their places again */
	for (size_t k = 5; k < 300; k += 9) {
		CHECK_RC(ju_unpublish(ctx, blobs[k].blob.start), 0);
		blobs[k].live = false;
	}
	check_all(ctx, "after unpublishing");
	for (size_t k = 5; k < 300; k += 18) {
		ju_blob *b = make(k, 2, false, false);
		CHECK_RC(ju_publish(ctx, b), 0);
		blobs[k].live = true;
	}
	check_all(ctx, "places taken again");
	/* packed code, one run per chunk, ascending */
	for (size_t q = 0; q < 64; q++, i++) {
		CHECK_RC(ju_publish(ctx, make(i, 1 + q % 4, false, true)), 0);
		blobs[i].live = true;
	}
	check_all(ctx, "packed");
	changed_bytes_are_what_is_checked_and_written(ctx);
	check_all(ctx, "at the end");
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	return unit_done("test-stencil-copies-unwind-as-their-stencils-say");
}
