/* SPDX-License-Identifier: MIT */
/* test-image-readers.c - our ELF images, .eh_frame and line tables as an
 * independent reader (elfutils' libdw and libelf) sees them.
 *
 * Blobs of every frame kind are published (in batches and one by one, so
 * arenas merge; some are unpublished, so arenas are rebuilt and tombstones
 * appear).  For every arena image, at every byte offset of every blob, libdw
 * must report the CFA rule and the saved-register rules that a model of the
 * blob's frame predicts; gaps and dead blobs must have no FDE; every symbol
 * and line row must read back.  The same is done for an AArch64 image built
 * on this host.  Each image is also written to arena-N.o (and aarch64.o) so
 * t-images-parse-cleanly.sh can run readelf and llvm-dwarfdump-19 on them.
 */
#include "cfi.h"
#include "image.h"
#include "internal.h"
#include "unit.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* ---- the model ------------------------------------------------------------ */

enum { X_RBX = 3, X_RBP = 6, X_RSP = 7, X_RA = 16 };
enum { A_FP = 29, A_LR = 30, A_SP = 31 };

/* What the CFI says at one pc. */
typedef struct rule {
	bool has_fde;
	int cfa_reg;
	int64_t cfa_off;
	bool fp_saved; /* frame pointer saved at CFA + fp_off */
	int64_t fp_off;
	bool ra_saved; /* return address saved at CFA + ra_off */
	int64_t ra_off;
	int extra_reg; /* another saved register, or -1 */
	int64_t extra_off;
	bool ra_undefined; /* a gap between CFI ranges: "cannot unwind here" */
} rule;

typedef struct model_blob {
	const char *name;
	uint32_t at, size; /* offset in the code region */
	ju_frame frame;
	rule (*rule_at)(uint32_t off);
	const ju_line *lines;
	size_t n_lines;
	bool dead;
} model_blob;

static rule entry_x86(void)
{
	return (rule){ true, X_RSP, 8, false, 0, true, -8, -1, 0, false };
}

static rule leaf_rule(uint32_t off)
{
	(void)off;
	return entry_x86();
}

static rule fp_rule(uint32_t off)
{
	rule r = entry_x86();
	if (off < 1)
		return r;
	r.fp_saved = true, r.fp_off = -16;
	if (off < 4)
		return r.cfa_off = 16, r;
	if ((off >= 20 && off < 21) || (off >= 30 && off < 31))
		return entry_x86(); /* after pop %rbp, before ret */
	r.cfa_reg = X_RBP, r.cfa_off = 16;
	return r;
}

static rule region_rule(uint32_t off)
{
	(void)off;
	return (rule){ true, X_RBP, 16, true, -16, true, -8, -1, 0, false };
}

static rule cfi2_rule(uint32_t off)
{
	rule r = entry_x86();
	if (off < 4)
		return r;
	if (off < 10)
		return r.cfa_off = 32, r;
	if (off >= 30)
		return (rule){ .has_fde = false };
	if (off < 12) /* the gap between the ranges, inside the blob's one FDE */
		return (rule){ .has_fde = true, .ra_undefined = true, .extra_reg = -1 };
	if (off < 14)
		return r;
	r.cfa_off = 16, r.extra_reg = X_RBX, r.extra_off = -16;
	if (off >= 22 && off < 24)
		r.cfa_off = 8; /* between remember_state and restore_state */
	return r;
}

/* cfi2: [0,10) sub rsp-like; [12,30) a push and a remembered epilogue; one
 * FDE for [0, 30), the gap [10, 12) with an undefined return address. */
static const uint8_t cfi2_a[] = { 0x44, 0x0e, 32 };
static const uint8_t cfi2_b[] = { 0x42, 0x0e, 16, 0x83, 0x02, 0x48, 0x0a, 0x0e, 8, 0x42, 0x0b };
static const ju_cfi_range cfi2_ranges[] = {
	{ 0, 10, cfi2_a, sizeof cfi2_a },
	{ 12, 30, cfi2_b, sizeof cfi2_b },
};
static const ju_range fp_epilogues[] = { { 20, 21 }, { 30, 31 } };
static const ju_line fp_lines[] = { { 0, 7 }, { 4, 8 }, { 12, 20 }, { 21, 9 } };

/* ---- checking one image with libdw ------------------------------------------ */

static bool op_is_reg_offset(const Dwarf_Op *ops, size_t n, int64_t *off)
{
	/* libdw spells "saved at CFA+N" as DW_OP_call_frame_cfa, DW_OP_plus_uconst N */
	if (n == 2 && ops[0].atom == DW_OP_call_frame_cfa && ops[1].atom == DW_OP_plus_uconst) {
		*off = (int64_t)ops[1].number;
		return true;
	}
	if (n == 1 && ops[0].atom == DW_OP_call_frame_cfa) {
		*off = 0;
		return true;
	}
	return false;
}

static void check_saved(Dwarf_Frame *fr, int regno, bool saved, int64_t want, const char *who, uint32_t off,
			const char *what)
{
	Dwarf_Op mem[3], *ops;
	size_t n;
	int rc = dwarf_frame_register(fr, regno, mem, &ops, &n);
	CHECK(rc == 0, "%s+%u: %s rule: %s", who, off, what, dwarf_errmsg(-1));
	if (rc)
		return;
	int64_t got;
	if (saved)
		CHECK(op_is_reg_offset(ops, n, &got) && got == want, "%s+%u: %s not saved at CFA%+lld", who,
		      off, what, (long long)want);
	else
		CHECK(n == 0 || (n == 1 && ops[0].atom == DW_OP_bregx), "%s+%u: %s should be unchanged", who,
		      off, what);
}

static void check_cfi_at(Dwarf_CFI *cfi, uint64_t pc, rule want, const char *who, uint32_t off, int fp_reg,
			 int ra_reg)
{
	Dwarf_Frame *fr = NULL;
	int rc = dwarf_cfi_addrframe(cfi, pc, &fr);
	if (!want.has_fde) {
		CHECK(rc != 0, "%s+%u: an FDE covers a pc that has none", who, off);
		free(fr);
		return;
	}
	CHECK(rc == 0, "%s+%u: no frame: %s", who, off, dwarf_errmsg(-1));
	if (rc)
		return;
	if (want.ra_undefined) {
		Dwarf_Op mem[3], *rops;
		size_t rn;
		rc = dwarf_frame_register(fr, ra_reg, mem, &rops, &rn);
		CHECK(rc == 0 && rn == 0 && rops == mem, "%s+%u: return address should be undefined", who,
		      off);
		free(fr);
		return;
	}
	Dwarf_Op *ops;
	size_t n;
	rc = dwarf_frame_cfa(fr, &ops, &n);
	/* libdw gives "reg + offset" as DW_OP_bregx reg, offset */
	long long reg = -1, cfa_off = 0;
	if (rc == 0 && n == 1 && ops[0].atom == DW_OP_bregx)
		reg = (long long)ops[0].number, cfa_off = (long long)(int64_t)ops[0].number2;
	else if (rc == 0 && n == 1 && ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31)
		reg = ops[0].atom - DW_OP_breg0, cfa_off = (long long)(int64_t)ops[0].number;
	CHECK(reg == want.cfa_reg && cfa_off == want.cfa_off, "%s+%u: CFA is reg%lld%+lld, want reg%d%+lld",
	      who, off, reg, cfa_off, want.cfa_reg, (long long)want.cfa_off);
	check_saved(fr, fp_reg, want.fp_saved, want.fp_off, who, off, "frame pointer");
	if (want.ra_saved)
		check_saved(fr, ra_reg, true, want.ra_off, who, off, "return address");
	if (want.extra_reg >= 0)
		check_saved(fr, want.extra_reg, true, want.extra_off, who, off, "extra register");
	free(fr);
}

static const ju_line *row_for(const model_blob *m, uint32_t off)
{
	const ju_line *row = NULL;
	for (size_t i = 0; i < m->n_lines; i++)
		if (m->lines[i].offset <= off)
			row = &m->lines[i];
	return row;
}

static void check_lines(Dwarf *dw, const model_blob *m, uint64_t base, const char *file)
{
	for (uint32_t off = 0; off < m->size; off++) {
		const ju_line *want = row_for(m, off);
		Dwarf_Die cu;
		if (!dwarf_addrdie(dw, base + off, &cu)) {
			CHECK(!want, "%s+%u: no compile unit covers it", m->name, off);
			continue;
		}
		CHECK(!strcmp(dwarf_diename(&cu), file), "%s: CU name %s", m->name, dwarf_diename(&cu));
		Dwarf_Line *line = dwarf_getsrc_die(&cu, base + off);
		int lineno = 0;
		if (want) {
			CHECK(line && dwarf_lineno(line, &lineno) == 0 && lineno == (int)want->line,
			      "%s+%u: line %d, want %u", m->name, off, lineno, want->line);
			CHECK(line && !strcmp(dwarf_linesrc(line, NULL, NULL), file), "%s+%u: line file",
			      m->name, off);
		}
	}
}

/* Check one image: symbols, CFI and lines of the blobs it should hold. */
static void check_image(const arena *a, const model_blob *mb, size_t n, uint64_t region, int fp_reg,
			int ra_reg)
{
	char *copy = malloc(a->image_size);
	memcpy(copy, a->image, a->image_size);
	Elf *elf = elf_memory(copy, a->image_size);
	CHECK(elf != NULL, "elf_memory: %s", elf_errmsg(-1));
	if (!elf) {
		free(copy);
		return;
	}
	/* symbols: section-relative to .text, whose sh_addr is the code */
	Elf_Scn *scn = NULL;
	uint64_t text_addr = 0;
	size_t nsyms_found = 0;
	size_t shstrndx;
	elf_getshdrstrndx(elf, &shstrndx);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (!strcmp(elf_strptr(elf, shstrndx, sh.sh_name), ".text")) {
			text_addr = sh.sh_addr;
			CHECK(sh.sh_type == SHT_NOBITS && sh.sh_addr == a->lo && sh.sh_size == a->hi - a->lo,
			      ".text is not NOBITS at the arena's hull");
		}
	}
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type != SHT_SYMTAB)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			gelf_getsym(d, (int)i, &s);
			const char *nm = elf_strptr(elf, sh.sh_link, s.st_name);
			uint64_t at = text_addr + s.st_value;
			for (size_t k = 0; k < n; k++) {
				if (region + mb[k].at != at || mb[k].dead)
					continue;
				nsyms_found++;
				CHECK(!strcmp(nm, mb[k].name) && s.st_size == mb[k].size &&
					      GELF_ST_TYPE(s.st_info) == STT_FUNC,
				      "symbol %s at %#llx (size %llu) should be %s", nm,
				      (unsigned long long)at, (unsigned long long)s.st_size, mb[k].name);
			}
		}
	}
	Dwarf_CFI *cfi = dwarf_getcfi_elf(elf);
	CHECK(cfi != NULL, "dwarf_getcfi_elf: %s", dwarf_errmsg(-1));
	Dwarf *dw = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	size_t live_here = 0;
	for (size_t k = 0; cfi && k < n; k++) {
		uint64_t base = region + mb[k].at;
		if (base < a->lo || base >= a->hi)
			continue;
		if (!mb[k].dead)
			live_here++;
		for (uint32_t off = 0; off < mb[k].size; off++) {
			rule want = mb[k].dead ? (rule){ .has_fde = false } : mb[k].rule_at(off);
			check_cfi_at(cfi, base + off, want, mb[k].name, off, fp_reg, ra_reg);
		}
		if (!mb[k].dead && mb[k].n_lines) {
			CHECK(dw != NULL, "dwarf_begin_elf: %s", dwarf_errmsg(-1));
			if (dw)
				check_lines(dw, &mb[k], base, "model.src");
		}
	}
	CHECK(nsyms_found == live_here, "found %zu symbols for %zu live blobs", nsyms_found, live_here);
	if (dw)
		dwarf_end(dw);
	if (cfi)
		dwarf_cfi_end(cfi);
	elf_end(elf);
	free(copy);
}

static void save(const char *path, const arena *a)
{
	FILE *f = fopen(path, "wb");
	CHECK(f && fwrite(a->image, 1, a->image_size, f) == a->image_size && fclose(f) == 0, "writing %s",
	      path);
}

/* ---- x86-64 through the public API ------------------------------------------ */

enum { N_MANY = 300 };
static model_blob blobs[4 + N_MANY];
static char many_names[N_MANY][16];

static void x86_64_images(void)
{
	ju_options o = { .sz = sizeof(ju_options), .channels = JU_CH_UNWINDER, .flags = JU_OPT_NO_ENV };
	ju_ctx *ctx;
	CHECK_RC(ju_open(&o, &ctx), 0);
	if (!ctx)
		return;
	/* Nothing executes here: an inaccessible reservation gives addresses. */
	size_t region_size = 1 << 20;
	uint8_t *region = mmap(NULL, region_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t R = (uintptr_t)region;

	blobs[0] = (model_blob){ .name = "leaf",
				 .at = 0x000,
				 .size = 16,
				 .frame = { .kind = JU_FRAME_LEAF },
				 .rule_at = leaf_rule };
	blobs[1] = (model_blob){ .name = "fp",
				 .at = 0x040,
				 .size = 40,
				 .frame = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, fp_epilogues, 2 } },
				 .rule_at = fp_rule,
				 .lines = fp_lines,
				 .n_lines = 4 };
	blobs[2] = (model_blob){ .name = "region",
				 .at = 0x080,
				 .size = 24,
				 .frame = { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8 } },
				 .rule_at = region_rule };
	blobs[3] = (model_blob){ .name = "cfi2",
				 .at = 0x0c0,
				 .size = 40,
				 .frame = { .kind = JU_FRAME_CFI, .u.cfi = { cfi2_ranges, 2 } },
				 .rule_at = cfi2_rule };
	for (size_t i = 0; i < N_MANY; i++) {
		snprintf(many_names[i], sizeof many_names[i], "many:%zu", i);
		bool fp = i % 2;
		blobs[4 + i] = (model_blob){ .name = many_names[i],
					     .at = (uint32_t)(0x1000 + 64 * i),
					     .size = fp ? 40 : 16,
					     .frame = fp ? blobs[1].frame : blobs[0].frame,
					     .rule_at = fp ? fp_rule : leaf_rule,
					     .lines = fp ? fp_lines : NULL,
					     .n_lines = fp ? 4 : 0 };
	}
	size_t n = 4 + N_MANY;
	ju_blob b[4 + N_MANY];
	for (size_t i = 0; i < n; i++)
		b[i] = (ju_blob){ .sz = sizeof(ju_blob),
				  region + blobs[i].at,
				  blobs[i].size,
				  blobs[i].name,
				  blobs[i].frame,
				  blobs[i].n_lines ? "model.src" : NULL,
				  blobs[i].lines,
				  blobs[i].n_lines };
	/* a batch, then singles: arenas get merged */
	CHECK_RC(ju_publish_batch(ctx, b, 104), 0);
	for (size_t i = 104; i < n; i++)
		CHECK_RC(ju_publish(ctx, &b[i]), 0);
	/* unpublish every 7th: tombstones in big arenas, rebuilds in small ones
	 * (the four hand-made blobs stay) */
	for (size_t i = 5; i < n; i += 7) {
		CHECK_RC(ju_unpublish(ctx, b[i].start), 0);
		blobs[i].dead = true;
	}
	CHECK(ctx->n_arenas >= 1 && ctx->n_arenas <= 12, "%zu arenas for %zu blobs", ctx->n_arenas, n);
	size_t tomb = 0;
	for (size_t i = 0; i < ctx->n_arenas; i++) {
		const arena *a = ctx->arenas[i];
		tomb += a->n_dead;
		check_image(a, blobs, n, R, X_RBP, X_RA);
		char path[32];
		snprintf(path, sizeof path, "arena-%zu.o", i);
		save(path, a);
	}
	printf("x86-64: %zu arenas, %zu tombstones checked\n", ctx->n_arenas, tomb);
	CHECK(tomb > 0, "the test should exercise tombstones");
	CHECK_RC(ju_unpublish_all(ctx), 0);
	CHECK_RC(ju_close(ctx), 0);
	munmap(region, region_size);
}

/* ---- AArch64, built on this host from the same writers ------------------------ */

static rule a64_entry(void)
{
	return (rule){ true, A_SP, 0, false, 0, false, 0, -1, 0, false };
}

static rule a64_fp_rule(uint32_t off)
{
	if (off < 4 || (off >= 16 && off < 20))
		return a64_entry();
	rule r = { true, A_SP, 16, true, -16, true, -8, -1, 0, false };
	if (off >= 8)
		r.cfa_reg = A_FP;
	return r;
}

static rule a64_region_rule(uint32_t off)
{
	(void)off;
	return (rule){ true, A_FP, 16, true, -16, true, -8, -1, 0, false };
}

static void aarch64_image(void)
{
	const ju_arch *arch = &ju_arch_aarch64;
	static const ju_range epi[] = { { 16, 20 } };
	static const ju_line lines[] = { { 0, 1 }, { 8, 2 }, { 16, 3 } };
	model_blob m[2] = {
		{ .name = "a64:fp",
		  .at = 0x0,
		  .size = 24,
		  .frame = { .kind = JU_FRAME_FP, .u.fp = { 4, 8, epi, 1 } },
		  .rule_at = a64_fp_rule,
		  .lines = lines,
		  .n_lines = 3 },
		{ .name = "a64:region",
		  .at = 0x40,
		  .size = 32,
		  .frame = { .kind = JU_FRAME_REGION, .u.region = { 16, -16, -8 } },
		  .rule_at = a64_region_rule },
	};
	const uint64_t base = 0x400000;
	char msg[200];
	for (int i = 0; i < 2; i++)
		CHECK(cfi_check_frame(arch, &m[i].frame, m[i].size, NULL, msg, sizeof msg) == 0, "%s", msg);
	byte_buf st;
	buf_init_grow(&st, BUF_UNBOUNDED);
	size_t cie = cfi_write_cie(arch, &st, CFI_ENC_ABS8);
	blob_rec recs[2];
	src_rec src[2];
	for (int i = 0; i < 2; i++) {
		recs[i] = (blob_rec){ .start = base + m[i].at, .size = m[i].size };
		recs[i].fde_off = (uint32_t)st.len;
		cfi_write_blob_fdes(arch, &st, cie, CFI_ENC_ABS8, 0, recs[i].start, m[i].size, &m[i].frame,
				    NULL, NULL);
		recs[i].fde_len = (uint32_t)(st.len - recs[i].fde_off);
		if (m[i].n_lines) {
			recs[i].line_off = (uint32_t)st.len;
			image_write_line_unit(&st, "model.src", m[i].lines, m[i].n_lines, recs[i].start,
					      m[i].size);
			recs[i].line_len = (uint32_t)(st.len - recs[i].line_off);
		}
		recs[i].name_off = (uint32_t)st.len;
		recs[i].name_len = (uint16_t)strlen(m[i].name);
		buf_str(&st, m[i].name);
	}
	CHECK(buf_ok(&st), "staging");
	for (int i = 0; i < 2; i++)
		src[i] = (src_rec){ &recs[i], st.p, NULL };
	arena *a = NULL;
	CHECK_RC(image_build(arch, &(cie_set){ 0 }, src, 2, (image_alloc){ 0 }, &a), 0);
	if (a) {
		Elf64_Ehdr *eh = (Elf64_Ehdr *)a->image;
		CHECK(eh->e_machine == EM_AARCH64, "e_machine %u", eh->e_machine);
		check_image(a, m, 2, base, A_FP, A_LR);
		save("aarch64.o", a);
		image_free(a);
		free(a);
	}
	buf_free(&st);
	/* misaligned offsets are refused on a fixed-width ISA */
	ju_frame bad = { .kind = JU_FRAME_FP, .u.fp = { 1, 4, NULL, 0 } };
	CHECK(cfi_check_frame(arch, &bad, 24, NULL, msg, sizeof msg) == JU_ECFI, "misaligned accepted");
}

int main(void)
{
	elf_version(EV_CURRENT);
	x86_64_images();
	aarch64_image();
	return unit_done("test-image-readers");
}
