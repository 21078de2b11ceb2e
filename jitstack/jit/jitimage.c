/* SPDX-License-Identifier: MIT */
/* jitimage.c - the image rewriter of jitimage.h: read (elfin), relocate,
 * convert the CFI (cfi_convert), pick the function symbols, and write the
 * ET_EXEC that libdwfl loads.
 */
#include "jit/jitimage.h"
#include "formats/search.h"
#include "jit/aranges.h"
#include "formats/elfhdr.h"
#include "jit/cfi_convert.h"
#include "jit/elfin.h"
#include "base/bounds.h"

#include <elf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Highest address a code hull may reach: user space on every 64-bit Linux
 * target is far below, and the headroom keeps the sections we place after
 * the code from wrapping. */
#define CODE_ADDR_LIMIT ((uint64_t)1 << 57)

/* What the rewrite dropped, one clause of the image's note. */
#define note(o, ...) js_note((o)->note, sizeof(o)->note, __VA_ARGS__)

static bool is_code(const ein_sec *s)
{
	return (s->flags & SHF_ALLOC) && (s->flags & SHF_EXECINSTR) && s->size;
}

/* The hull of the image's code sections.  A relocatable object whose one
 * code section was left at address 0 is placed at the entry's hull when
 * the entry has one (the jitunwind extension). */
static int code_hull(ein *e, const js_img_in *in, js_img_out *o)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	size_t n = 0;
	for (size_t i = 1; i < e->nsec; i++) {
		ein_sec *s = &e->sec[i];
		if (!is_code(s))
			continue;
		n++;
		if (s->addr == 0 && e->type == ET_REL) {
			if (n > 1 || !in->hint_lo || s->size > in->hint_hi - in->hint_lo)
				return js_fail(&o->why, JS_EXIT_FAILURE, 0, "code section %s has no address",
					       s->name);
			s->addr = in->hint_lo;
		}
		if (s->addr > CODE_ADDR_LIMIT || s->size > CODE_ADDR_LIMIT - s->addr)
			return js_fail(&o->why, JS_EXIT_FAILURE, 0,
				       "code section %s at %#" PRIx64 " is outside user space", s->name,
				       s->addr);
		if (s->addr < lo)
			lo = s->addr;
		if (s->addr + s->size > hi)
			hi = s->addr + s->size;
	}
	if (!n) {
		o->no_code = true;
		return js_fail(&o->why, JS_EXIT_FAILURE, 0, "no code section");
	}
	if (hi - lo > JS_MAX_CODE_SPAN)
		return js_fail(&o->why, JS_EXIT_FAILURE, 0,
			       "code spans %#" PRIx64 " bytes (limit %#" PRIx64 ")", hi - lo,
			       (uint64_t)JS_MAX_CODE_SPAN);
	if (in->hint_lo && (lo < in->hint_lo || hi > in->hint_hi))
		note(o, "code [%#" PRIx64 ", %#" PRIx64 ") is outside the entry's hull", lo, hi);
	o->lo = lo;
	o->hi = hi;
	return 0;
}

/* Relocate a section the rewrite keeps; false if some relocation could not
 * be applied (the section's bytes are then not trustworthy), with why in
 * the image's note. */
static bool relocate(ein *e, const js_arch *arch, ein_sec *s, js_img_out *o, const char *what)
{
	ein_reloc_stats st = { 0 };
	ein_relocate(e, arch, (size_t)(s - e->sec), &st);
	if (!st.unsupported && !st.out_of_range && !st.bad_symbol)
		return true;
	o->n_undefined += st.undefined;
	const uint8_t *name = (const uint8_t *)st.first_undefined;
	if (st.undefined && !o->undefined_at && name > e->img && name < e->img + e->size)
		o->undefined_at = (size_t)(name - e->img); /* libelf reads names in the copy */
	if (st.undefined && st.undefined == st.unsupported + st.out_of_range + st.bad_symbol)
		note(o, "%s %s: relocations against %s, which no JIT image defines", s->name, what,
		     st.first_undefined[0] ? st.first_undefined : "an unnamed symbol");
	else
		note(o, "%s %s: relocations that cannot be applied", s->name, what);
	return false;
}

static bool has_relocs(const ein *e, size_t target)
{
	for (size_t i = 1; i < e->nsec; i++)
		if ((e->sec[i].type == SHT_RELA || e->sec[i].type == SHT_REL) && e->sec[i].info == target)
			return true;
	return false;
}

static bool is_debug(const ein_sec *s)
{
	if (!s->data || s->type == SHT_NOBITS || (s->flags & SHF_ALLOC))
		return false;
	if (!strcmp(s->name, ".debug_frame"))
		return false; /* converted into .eh_frame */
	return !strncmp(s->name, ".debug_", 7) || !strncmp(s->name, ".zdebug_", 8);
}

/* ---- symbols ---------------------------------------------------------------- */

typedef struct fsym {
	uint64_t addr, size;
	const char *name;
} fsym;

static bool in_fde(const cfi_out *c, uint64_t pc)
{
	size_t lo = FMT_COUNT_LE(c->fde, c->n_fde, pc, pc);
	return lo && pc - c->fde[lo - 1].pc < c->fde[lo - 1].range;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static bool tombstoned(const cfi_out *c, uint64_t addr)
{
	return c->n_tomb && bsearch(&addr, c->tomb, c->n_tomb, sizeof *c->tomb, cmp_u64) && !in_fde(c, addr);
}

/* The function symbols inside the hull, minus those of unpublished blobs
 * (an FDE tombstone at their start and no live FDE there). */
static fsym *pick_symbols(ein *e, const js_img_out *o, const cfi_out *c, size_t *n_out, unsigned long *n_dead)
{
	size_t count;
	ein_sec *st = ein_symtab(e, &count);
	*n_out = 0;
	*n_dead = 0;
	fsym *v = malloc((count ? count : 1) * sizeof *v);
	if (!v)
		return NULL;
	for (size_t i = 1; st && i < count; i++) {
		ein_sym s;
		uint64_t addr;
		if (!ein_sym_get(e, st, i, &s) || !s.name[0])
			continue;
		if (s.type != STT_FUNC && s.type != STT_NOTYPE)
			continue;
		if (!ein_sym_addr(e, &s, &addr) || addr < o->lo || addr >= o->hi)
			continue;
		if (tombstoned(c, addr)) {
			++*n_dead;
			continue;
		}
		uint64_t size = s.size > o->hi - addr ? o->hi - addr : s.size;
		v[(*n_out)++] = (fsym){ addr, size, s.name };
	}
	return v;
}

/* ---- output ------------------------------------------------------------------- */

enum { OUT_NULL, OUT_TEXT, OUT_EH_FRAME_HDR, OUT_EH_FRAME, OUT_SYMTAB, OUT_STRTAB, OUT_FIXED };

typedef struct out_sec {
	const char *name;
	uint32_t type;
	uint64_t flags, addr, size, align, entsize;
	uint32_t link, info;
	const uint8_t *data; /* NULL: NOBITS, or written separately */
	size_t off;
} out_sec;

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

/* The one PT_LOAD: the code, with no bytes in the file (libdwfl takes the
 * module's extent and bias from it; nothing reads code from it). */
static void write_phdr(byte_buf *b, uint64_t lo, uint64_t hi)
{
	Elf64_Phdr p = { 0 };
	p.p_type = PT_LOAD;
	p.p_flags = PF_R | PF_X;
	p.p_vaddr = p.p_paddr = lo;
	p.p_memsz = hi - lo;
	p.p_align = 1; /* libdwfl rounds p_vaddr down to p_align */
	buf_bytes(b, &p, sizeof p);
}

/* A DWARF section the rewrite carries (one whose relocations failed was
 * marked with address ~0). */
static bool kept_debug(const ein_sec *s)
{
	return is_debug(s) && s->addr != (uint64_t)-1;
}

/* .symtab and .strtab: one absolute symbol (an ET_EXEC) per function. */
static void write_symbols(const fsym *syms, size_t n_syms, byte_buf *symtab, byte_buf *strtab)
{
	buf_u8(strtab, 0);
	buf_zeros(symtab, sizeof(Elf64_Sym));
	for (size_t i = 0; i < n_syms; i++) {
		Elf64_Sym s = { 0 };
		s.st_name = (uint32_t)strtab->len;
		s.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
		s.st_shndx = OUT_TEXT;
		s.st_value = syms[i].addr;
		s.st_size = syms[i].size;
		buf_bytes(symtab, &s, sizeof s);
		buf_str(strtab, syms[i].name);
	}
}

/* The carried DWARF sections, then ARANGES if it holds any, from S[k] on;
 * returns the next free index. */
static size_t debug_sections(const ein *e, const byte_buf *aranges, out_sec *S, size_t k)
{
	for (size_t i = 1; i < e->nsec; i++) {
		const ein_sec *s = &e->sec[i];
		if (kept_debug(s))
			S[k++] = (out_sec){ s->name,
					    SHT_PROGBITS,
					    s->flags & SHF_COMPRESSED,
					    0,
					    s->size,
					    8,
					    0,
					    0,
					    0,
					    s->data,
					    0 };
	}
	if (aranges && aranges->len)
		S[k++] = (out_sec){
			".debug_aranges", SHT_PROGBITS, 0, 0, aranges->len, 8, 0, 0, 0, aranges->p, 0
		};
	return k;
}

/* Header, program header, section bytes, section headers: S[0..nsec) laid
 * out after the headers, .shstrtab last. */
static void emit_elf(byte_buf *b, uint16_t machine, uint64_t lo, uint64_t hi, out_sec *S, size_t nsec,
		     byte_buf *shstr)
{
	uint32_t *name_off = calloc(nsec, sizeof *name_off);
	if (!name_off) {
		b->failed = true;
		return;
	}
	buf_u8(shstr, 0);
	for (size_t i = 1; i < nsec; i++) {
		name_off[i] = (uint32_t)shstr->len;
		buf_str(shstr, S[i].name);
	}
	S[nsec - 1].data = shstr->p;
	S[nsec - 1].size = shstr->len;
	size_t at = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	for (size_t i = OUT_EH_FRAME_HDR; i < nsec; i++) {
		at = align_up(at, S[i].align);
		S[i].off = at;
		at += S[i].size;
	}
	size_t shoff = align_up(at, 8);

	/* ET_EXEC: addresses are absolute, so libdwfl's bias is 0 */
	elf_write_ehdr(b, &(elf_ehdr_desc){ .type = ET_EXEC,
					    .machine = machine,
					    .phnum = 1,
					    .shoff = shoff,
					    .shnum = (uint16_t)nsec,
					    .shstrndx = (uint16_t)(nsec - 1) });
	write_phdr(b, lo, hi);
	for (size_t i = OUT_EH_FRAME_HDR; i < nsec; i++) {
		buf_zeros(b, S[i].off - b->len);
		buf_bytes(b, S[i].data, S[i].size);
	}
	buf_zeros(b, shoff - b->len);
	for (size_t i = 0; i < nsec; i++) {
		Elf64_Shdr h = { 0 };
		if (i) {
			h = (Elf64_Shdr){ name_off[i], S[i].type, S[i].flags, S[i].addr,  S[i].off,
					  S[i].size,   S[i].link, S[i].info,  S[i].align, S[i].entsize };
			if (i == OUT_TEXT)
				h.sh_offset = S[OUT_EH_FRAME_HDR].off;
		}
		buf_bytes(b, &h, sizeof h);
	}
	free(name_off);
}

/* The ET_EXEC libdwfl loads: NOBITS .text at the code's address, the
 * converted CFI right after it, the function symbols, the carried DWARF
 * and ARANGES (NULL: none). */
static int write_image(const ein *e, const js_img_out *o, const cfi_out *c, const fsym *syms, size_t n_syms,
		       const byte_buf *aranges, byte_buf *b)
{
	size_t n_debug = (aranges && aranges->len) ? 1 : 0;
	for (size_t i = 1; i < e->nsec; i++)
		n_debug += kept_debug(&e->sec[i]);
	size_t nsec = OUT_FIXED + n_debug + 1;
	out_sec *S = calloc(nsec, sizeof *S);
	if (!S)
		return -1;
	byte_buf strtab, symtab, shstr, hdr;
	buf_init_grow(&strtab, JS_MAX_IMAGE_SIZE);
	buf_init_grow(&symtab, JS_MAX_IMAGE_SIZE * 2);
	buf_init_grow(&shstr, 1 << 20);
	buf_init_grow(&hdr, JS_MAX_IMAGE_SIZE);
	write_symbols(syms, n_syms, &symtab, &strtab);

	/* Addresses: the CFI right after the code, so every table entry of
	 * .eh_frame_hdr fits its 32-bit datarel encoding. */
	uint64_t hdr_addr = align_up(o->hi, 8);
	size_t hdr_size = cfi_hdr_size(c);
	uint64_t eh_addr = hdr_addr + align_up(hdr_size, 8);
	cfi_write_hdr(&hdr, c, hdr_addr, eh_addr);

	S[OUT_TEXT] =
		(out_sec){ ".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, o->lo, o->hi - o->lo, 16, 0, 0, 0,
			   NULL,    0 };
	S[OUT_EH_FRAME_HDR] = (out_sec){
		".eh_frame_hdr", SHT_PROGBITS, SHF_ALLOC, hdr_addr, hdr.len, 4, 0, 0, 0, hdr.p, 0
	};
	S[OUT_EH_FRAME] =
		(out_sec){ ".eh_frame", SHT_PROGBITS, SHF_ALLOC, eh_addr, c->eh.len, 8, 0, 0, 0, c->eh.p, 0 };
	S[OUT_SYMTAB] = (out_sec){ ".symtab",         SHT_SYMTAB, 0, 0,        symtab.len, 8,
				   sizeof(Elf64_Sym), OUT_STRTAB, 1, symtab.p, 0 };
	S[OUT_STRTAB] = (out_sec){ ".strtab", SHT_STRTAB, 0, 0, strtab.len, 1, 0, 0, 0, strtab.p, 0 };
	debug_sections(e, aranges, S, OUT_FIXED);
	S[nsec - 1] = (out_sec){ ".shstrtab", SHT_STRTAB, 0, 0, 0, 1, 0, 0, 0, NULL, 0 };
	emit_elf(b, e->machine, o->lo, o->hi, S, nsec, &shstr);

	int rc = buf_ok(&strtab) && buf_ok(&symtab) && buf_ok(&shstr) && buf_ok(&hdr) && buf_ok(b) ? 0 : -1;
	buf_free(&strtab);
	buf_free(&symtab);
	buf_free(&shstr);
	buf_free(&hdr);
	free(S);
	return rc;
}

/* Write the image; when it has DWARF units but no .debug_aranges, write it
 * again with one made from what libdw reads in the first (see aranges.h).
 * Sets the output's image and whether it has source lines to show. */
static int finish_image(const ein *e, js_img_out *o, const cfi_out *c, const fsym *syms, size_t n_syms)
{
	bool have_aranges = false;
	for (size_t i = 1; i < e->nsec; i++)
		have_aranges |= kept_debug(&e->sec[i]) && !strcmp(e->sec[i].name, ".debug_aranges");
	byte_buf b, aranges;
	buf_init_grow(&b, JS_MAX_IMAGE_SIZE * 4);
	buf_init_grow(&aranges, JS_MAX_IMAGE_SIZE);
	int rc = write_image(e, o, c, syms, n_syms, NULL, &b);
	js_dwarf_scan scan = { 0, 0 };
	if (!rc && o->n_debug_sections)
		scan = js_scan_dwarf(b.p, b.len, have_aranges ? NULL : &aranges);
	if (!rc && scan.units && !have_aranges && buf_ok(&aranges)) {
		buf_free(&b);
		buf_init_grow(&b, JS_MAX_IMAGE_SIZE * 4);
		rc = write_image(e, o, c, syms, n_syms, &aranges, &b);
	}
	buf_free(&aranges);
	if (rc) {
		buf_free(&b);
		return -1;
	}
	o->has_lines = scan.line_rows > 0;
	o->elf = b.p;
	o->elf_size = b.len;
	return 0;
}

/* ---- the rewrite ---------------------------------------------------------------- */

/* The image's CFI, relocated and converted into one .eh_frame (C);
 * .eh_frame before .debug_frame so its FDEs win.  Returns -1 only when out
 * of memory; what it drops is noted. */
static int convert_cfi(ein *e, const js_arch *arch, js_img_out *o, cfi_out *c)
{
	cfi_src src[2];
	size_t n_src = 0;
	static const char *const cfi_names[2] = { ".eh_frame", ".debug_frame" };
	for (int i = 0; i < 2; i++) {
		ein_sec *s = ein_section(e, cfi_names[i]);
		if (!s || !s->data || s->type == SHT_NOBITS)
			continue;
		/* Relocations decide every address in a relocatable object's
		 * .eh_frame, so its own address is ours to choose: next to the
		 * code, where a 32-bit pc-relative value always reaches (an LLVM
		 * JIT's copy of .eh_frame may live anywhere, or have address 0).
		 * A .debug_frame is not allocated: its address is the base of
		 * the offsets other relocations make into it, and stays 0. */
		if (e->type == ET_REL && (s->flags & SHF_ALLOC) && has_relocs(e, (size_t)(s - e->sec)))
			s->addr = o->lo;
		if (!relocate(e, arch, s, o, "left out"))
			continue;
		src[n_src++] = (cfi_src){ s->data, s->size, s->addr, i == 1 };
	}
	ein_sec *text = ein_section(e, ".text");
	cfi_ctx ctx = { o->lo, o->hi, text && is_code(text) ? text->addr : o->lo };
	if (cfi_convert(src, n_src, &ctx, c))
		return -1;
	if (c->n_outside)
		note(o, "%lu FDEs outside the code dropped", c->n_outside);
	if (c->n_invalid || c->n_bad_cie)
		note(o, "%lu malformed FDEs dropped", c->n_invalid + c->n_bad_cie);
	if (c->n_overlap)
		note(o, "%lu overlapping FDEs dropped", c->n_overlap);
	if (c->truncated)
		note(o, "CFI cut short");
	if (c->n_tomb > 1)
		qsort(c->tomb, c->n_tomb, sizeof *c->tomb, cmp_u64);
	return 0;
}

/* DWARF: relocated in place; a section whose relocations fail is left out
 * (its addresses would be wrong) by marking its address. */
static void relocate_debug(ein *e, const js_arch *arch, js_img_out *o)
{
	for (size_t i = 1; i < e->nsec; i++) {
		ein_sec *s = &e->sec[i];
		if (!is_debug(s))
			continue;
		if ((s->flags & SHF_COMPRESSED) && has_relocs(e, i)) {
			note(o, "%s dropped: relocations of compressed bytes", s->name);
			s->addr = (uint64_t)-1;
			continue;
		}
		if (!relocate(e, arch, s, o, "dropped")) {
			s->addr = (uint64_t)-1;
			continue;
		}
		o->n_debug_sections++;
	}
}

/* The steps, each of which may reject the image with its reason. */
static int rewrite(ein *e, const js_img_in *in, js_img_out *o, cfi_out *c, fsym **syms)
{
	int rc = ein_parse(e, in->bytes, in->size, &o->why);
	if (rc) {
		o->not_elf = in->size < SELFMAG || memcmp(in->bytes, ELFMAG, SELFMAG) != 0;
		return rc;
	}
	e->resolve = in->resolve;
	e->resolve_arg = in->resolve_arg;
	const js_arch *arch = js_arch_for(e->machine);
	if (e->machine != in->machine || !arch) {
		char a[32], b[32];
		return js_fail(&o->why, JS_EXIT_FAILURE, 0, "image is for %s, the target is %s",
			       js_machine_name(e->machine, a, sizeof a),
			       js_machine_name(in->machine, b, sizeof b));
	}
	if ((rc = code_hull(e, in, o)))
		return rc;
	if (convert_cfi(e, arch, o, c))
		return js_fail(&o->why, JS_EXIT_FAILURE, 0, "out of memory converting the CFI");
	relocate_debug(e, arch, o);

	size_t n_syms;
	unsigned long n_dead;
	*syms = pick_symbols(e, o, c, &n_syms, &n_dead);
	if (!*syms)
		return js_fail(&o->why, JS_EXIT_FAILURE, 0, "out of memory reading symbols");
	o->n_funcs = n_syms;
	o->n_fdes = c->n_fde;
	o->n_tomb = c->n_tomb;
	if (n_dead)
		note(o, "%lu unpublished functions left out", n_dead);
	if (!n_syms && !c->n_fde)
		return js_fail(&o->why, JS_EXIT_FAILURE, 0, "neither function symbols nor CFI for its code");
	if (finish_image(e, o, c, *syms, n_syms))
		return js_fail(&o->why, JS_EXIT_FAILURE, 0, "out of memory writing the rewritten image");
	return 0;
}

int js_image_rewrite(const js_img_in *in, js_img_out *o)
{
	memset(o, 0, sizeof *o);
	ein e = { 0 };
	fsym *syms = NULL;
	cfi_out c;
	memset(&c, 0, sizeof c);
	int rc = rewrite(&e, in, o, &c, &syms);
	free(syms);
	cfi_out_free(&c);
	ein_free(&e);
	return rc;
}

void js_img_out_free(js_img_out *o)
{
	free(o->elf);
	o->elf = NULL;
}

/* ---- exports ------------------------------------------------------------------- */

static bool is_export(const ein_sym *s)
{
	return s->name[0] && s->shndx != SHN_UNDEF && s->type != STT_SECTION && s->type != STT_FILE &&
	       (s->bind == STB_GLOBAL || s->bind == STB_WEAK || s->bind == STB_GNU_UNIQUE);
}

static int collect_exports(ein *e, js_exports *x)
{
	size_t count, names = 0;
	ein_sec *st = ein_symtab(e, &count);
	if (!st || count < 2)
		return 0;
	x->v = malloc(count * sizeof *x->v);
	/* the names fit in the string table, which fits in the image */
	x->names = malloc(e->sec[st->link].size + 1);
	if (!x->v || !x->names)
		return -1;
	for (size_t i = 1; i < count; i++) {
		ein_sym s;
		uint64_t addr;
		if (!ein_sym_get(e, st, i, &s) || !is_export(&s) || !ein_sym_addr(e, &s, &addr))
			continue;
		size_t len = strlen(s.name) + 1;
		if (len > e->sec[st->link].size + 1 - names)
			break; /* names repeated past the table's size: enough */
		memcpy(x->names + names, s.name, len);
		x->v[x->n++] = (js_export){ addr, x->names + names };
		names += len;
	}
	return 0;
}

int js_image_exports(uint8_t *bytes, size_t size, js_exports *x)
{
	memset(x, 0, sizeof *x);
	ein e;
	int rc = 0;
	if (ein_parse(&e, bytes, size, NULL) == 0)
		rc = collect_exports(&e, x);
	ein_free(&e);
	if (rc)
		js_exports_free(x);
	return rc;
}

void js_exports_free(js_exports *x)
{
	free(x->v);
	free(x->names);
	memset(x, 0, sizeof *x);
}
