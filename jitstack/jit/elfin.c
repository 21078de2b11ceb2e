/* SPDX-License-Identifier: MIT */
/* elfin.c - the ELF reader of elfin.h, over libelf (gelf): the headers,
 * sections and symbols of an image come from libelf, opened with
 * elf_memory over our copy, which it checks as it reads.  Kept by hand: the
 * bounds of bounds.h (libelf has none), the relocations, which libelf
 * does not apply, and names from string tables, which libelf reads from
 * headers we may have rewritten (name_at).
 */
#include "jit/elfin.h"
#include "base/bounds.h"
#include "formats/bytes.h"

#include <elf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* [off, off+len) inside a buffer of `size` bytes, without overflow. */
static bool in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* The section headers the image claims, read before libelf sees it:
 * elf_memory (elf_begin.c, file_read_elf) allocates and fills an Elf_Scn
 * for every header the image says it has, bounded only by the image's size
 * (a million for a 64 MiB image), before any call returns.  So
 * JS_MAX_SECTIONS is checked first, from e_shnum, or section 0's sh_size
 * when e_shnum is 0 (more than SHN_LORESERVE sections, gABI "Sections"). */
static int claimed_sections(const uint8_t *img, size_t size, js_err *why)
{
	Elf64_Ehdr h;
	memcpy(&h, img, sizeof h);
	uint64_t n = h.e_shnum;
	if (n == 0 && h.e_shoff) {
		Elf64_Shdr s0;
		if (!in_bounds(h.e_shoff, sizeof s0, size))
			return js_fail(why, JS_EXIT_FAILURE, 0, "section headers outside the image");
		memcpy(&s0, img + h.e_shoff, sizeof s0);
		n = s0.sh_size;
	}
	if (n > JS_MAX_SECTIONS)
		return js_fail(why, JS_EXIT_FAILURE, 0, "%llu sections (limit %u)", (unsigned long long)n,
			       JS_MAX_SECTIONS);
	return 0;
}

/* A name from string table `strtab`, bounded by JS_MAX_NAME and by the
 * table as parse_section checked it; NULL if there is none.
 *
 * Not elf_strptr: libelf 0.188 opens a memory image in place, so its
 * section headers are the image's own bytes, and each section's start is
 * fixed at open.  elf_strptr bounds a name by sh_size as it reads it then,
 * and searches the whole [offset, sh_size) for the NUL from its far end
 * (validate_str, memrchr).  A header rewritten after open - by our own
 * relocations, applied in place - sent that search to a wild address.
 * ein_parse also refuses sections over the headers; this read does not
 * rely on it. */
static const char *name_at(const ein *e, size_t strtab, uint64_t off)
{
	if (strtab == 0 || strtab >= e->nsec)
		return NULL;
	const ein_sec *t = &e->sec[strtab];
	/* compressed tables have no use in a JIT image: no names from them */
	if (t->type != SHT_STRTAB || !t->data || (t->flags & SHF_COMPRESSED) || off >= t->size)
		return NULL;
	const char *p = (const char *)t->data + off;
	uint64_t room = t->size - off;
	return memchr(p, '\0', room < JS_MAX_NAME + 1 ? room : JS_MAX_NAME + 1) ? p : NULL;
}

/* [off, off+len) and [lo, hi) share a byte. */
static bool overlaps(uint64_t off, uint64_t len, uint64_t lo, uint64_t hi)
{
	return len && lo < hi && off < hi && (lo <= off || lo - off < len);
}

/* A section's bytes must not cover the ELF header, the section headers or
 * the program headers: libelf reads those in place (elf_memory makes no
 * copy), and relocations applied to the section would rewrite them behind
 * libelf's back - its later reads then trust sizes it never checked.  No
 * writer lays a section there. */
static int clear_of_headers(const ein *e, size_t i, const GElf_Shdr *s, js_err *why)
{
	Elf64_Ehdr h;
	memcpy(&h, e->img, sizeof h);
	uint64_t sh_end = h.e_shoff + (uint64_t)e->nsec * sizeof(Elf64_Shdr);
	uint64_t ph_len = (uint64_t)h.e_phnum * h.e_phentsize;
	uint64_t ph_end = h.e_phoff > UINT64_MAX - ph_len ? UINT64_MAX : h.e_phoff + ph_len;
	if (overlaps(s->sh_offset, s->sh_size, 0, sizeof h) ||
	    overlaps(s->sh_offset, s->sh_size, h.e_shoff, sh_end) ||
	    (h.e_phoff && overlaps(s->sh_offset, s->sh_size, h.e_phoff, ph_end)))
		return js_fail(why, JS_EXIT_FAILURE, 0,
			       "section %zu: [%#llx, +%#llx) covers the image's ELF or section headers", i,
			       (unsigned long long)s->sh_offset, (unsigned long long)s->sh_size);
	return 0;
}

/* The ELF header: what the rewriter reads, and nothing else. */
static int parse_header(ein *e, js_err *why)
{
	/* By hand before libelf sees the image: claimed_sections reads an
	 * ELF64 header, and the rewriter knows ELF64 little-endian only. */
	if (e->size < sizeof(Elf64_Ehdr))
		return js_fail(why, JS_EXIT_FAILURE, 0, "%zu bytes: too small for an ELF header", e->size);
	if (memcmp(e->img, ELFMAG, SELFMAG))
		return js_fail(why, JS_EXIT_FAILURE, 0, "no ELF magic");
	if (e->img[EI_CLASS] != ELFCLASS64 || e->img[EI_DATA] != ELFDATA2LSB)
		return js_fail(why, JS_EXIT_FAILURE, 0, "not a 64-bit little-endian ELF image");
	int rc = claimed_sections(e->img, e->size, why);
	if (rc)
		return rc;
	e->elf = elf_memory((char *)e->img, e->size);
	GElf_Ehdr h;
	if (!e->elf || elf_kind(e->elf) != ELF_K_ELF || !gelf_getehdr(e->elf, &h))
		return js_fail(why, JS_EXIT_FAILURE, 0, "not an ELF image: %s", elf_errmsg(-1));
	if (h.e_type != ET_REL && h.e_type != ET_EXEC && h.e_type != ET_DYN)
		return js_fail(why, JS_EXIT_FAILURE, 0,
			       "ELF type %u is not an object, executable or shared object", h.e_type);
	if (h.e_shentsize != sizeof(Elf64_Shdr))
		return js_fail(why, JS_EXIT_FAILURE, 0, "section header size %u", h.e_shentsize);
	e->type = h.e_type;
	e->machine = h.e_machine;
	return 0;
}

/* Section i from its header; its bytes are the copy's own (relocations are
 * applied to them in place). */
static int parse_section(ein *e, size_t i, js_err *why)
{
	ein_sec *o = &e->sec[i];
	o->scn = elf_getscn(e->elf, i);
	GElf_Shdr s;
	if (!o->scn || !gelf_getshdr(o->scn, &s))
		return js_fail(why, JS_EXIT_FAILURE, 0, "section %zu: %s", i, elf_errmsg(-1));
	*o = (ein_sec){ "",          s.sh_type, s.sh_link,    s.sh_info, s.sh_flags, s.sh_addr,
			s.sh_offset, s.sh_size, s.sh_entsize, NULL,      o->scn };
	if (i == 0 || s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL)
		return 0;
	/* libelf checks a section's range when it reads its bytes; an empty
	 * one it does not read, and its offset must still be in the image */
	if (!elf_rawdata(o->scn, NULL) || !in_bounds(s.sh_offset, s.sh_size, e->size))
		return js_fail(why, JS_EXIT_FAILURE, 0,
			       "section %zu: [%#llx, +%#llx) is outside the image (%zu bytes)", i,
			       (unsigned long long)s.sh_offset, (unsigned long long)s.sh_size, e->size);
	int rc = clear_of_headers(e, i, &s, why);
	if (rc)
		return rc;
	/* the copy's own bytes, where relocations are applied in place (a
	 * memory image's raw bytes are these, libelf makes no copy of them) */
	o->data = e->img + s.sh_offset;
	return 0;
}

int ein_parse(ein *e, uint8_t *img, size_t size, js_err *why)
{
	memset(e, 0, sizeof *e);
	e->img = img;
	e->size = size;
	int rc = parse_header(e, why);
	if (rc)
		return rc;
	size_t nsec, shstrndx;
	if (elf_getshdrnum(e->elf, &nsec))
		return js_fail(why, JS_EXIT_FAILURE, 0, "section headers outside the image");
	if (nsec < 2)
		return js_fail(why, JS_EXIT_FAILURE, 0, "no sections");
	e->sec = calloc(nsec, sizeof *e->sec);
	if (!e->sec)
		return js_fail(why, JS_EXIT_FAILURE, 0, "out of memory");
	e->nsec = nsec;
	for (size_t i = 0; i < nsec; i++)
		if ((rc = parse_section(e, i, why)))
			return rc;
	if (elf_getshdrstrndx(e->elf, &shstrndx))
		return 0; /* no section names */
	for (size_t i = 1; i < nsec; i++) {
		GElf_Shdr s;
		const char *name = gelf_getshdr(e->sec[i].scn, &s) ? name_at(e, shstrndx, s.sh_name) : NULL;
		e->sec[i].name = name ? name : "";
	}
	return 0;
}

void ein_free(ein *e)
{
	if (e->elf)
		elf_end(e->elf);
	free(e->sec);
	e->elf = NULL;
	e->sec = NULL;
	e->nsec = 0;
}

ein_sec *ein_section(ein *e, const char *name)
{
	for (size_t i = 1; i < e->nsec; i++)
		if (!strcmp(e->sec[i].name, name))
			return &e->sec[i];
	return NULL;
}

static ein_sec *table_of_type(ein *e, uint32_t type, size_t *count)
{
	for (size_t i = 1; i < e->nsec; i++) {
		ein_sec *s = &e->sec[i];
		if (s->type != type || !s->data)
			continue;
		/* its string table: a section whose bytes parse_section
		 * checked (not the null section, whose header is not one) */
		if (s->entsize != sizeof(Elf64_Sym) || s->link == 0 || s->link >= e->nsec ||
		    e->sec[s->link].type != SHT_STRTAB || !e->sec[s->link].data)
			continue;
		size_t n = s->size / sizeof(Elf64_Sym);
		*count = n > JS_MAX_SYMBOLS ? JS_MAX_SYMBOLS : n;
		return s;
	}
	return NULL;
}

ein_sec *ein_symtab(ein *e, size_t *count)
{
	*count = 0;
	ein_sec *s = table_of_type(e, SHT_SYMTAB, count);
	return s ? s : table_of_type(e, SHT_DYNSYM, count);
}

bool ein_sym_get(ein *e, ein_sec *st, size_t i, ein_sym *out)
{
	GElf_Sym s;
	Elf_Data *d = elf_getdata(st->scn, NULL);
	if (i > INT32_MAX || !d || !gelf_getsym(d, (int)i, &s))
		return false;
	const char *name = s.st_name ? name_at(e, st->link, s.st_name) : "";
	if (!name)
		return false;
	*out = (ein_sym){
		name, s.st_value, s.st_size, s.st_shndx, GELF_ST_TYPE(s.st_info), GELF_ST_BIND(s.st_info)
	};
	return true;
}
bool ein_sym_addr(ein *e, const ein_sym *s, uint64_t *addr)
{
	if (s->shndx == SHN_UNDEF)
		return false;
	if (s->shndx == SHN_ABS || e->type != ET_REL) {
		*addr = s->value;
		return true;
	}
	if (s->shndx >= e->nsec || s->shndx >= SHN_LORESERVE)
		return false;
	*addr = e->sec[s->shndx].addr + s->value;
	return true;
}

/* An undefined symbol's value: what another image defines under its name
 * (gdb reads every JIT object into one program space, where they resolve
 * each other's symbols), else 0 for a weak one. */
static bool extern_symbol(ein *e, const ein_sym *s, uint64_t *S, ein_reloc_stats *st)
{
	if (s->name[0] && e->resolve && e->resolve(e->resolve_arg, s->name, S))
		return true;
	if (s->bind == STB_WEAK) {
		*S = 0;
		return true;
	}
	if (!st->undefined++)
		st->first_undefined = s->name;
	return false;
}

/* The value S of a relocation's symbol: a section symbol stands for its
 * section's address. */
static bool reloc_symbol(ein *e, ein_sec *symtab, uint32_t symi, uint64_t *S, ein_reloc_stats *st)
{
	if (symi == 0) {
		*S = 0;
		return true;
	}
	ein_sym s;
	if (!symtab || !ein_sym_get(e, symtab, symi, &s))
		return false;
	if (s.type == STT_SECTION) {
		if (s.shndx == 0 || s.shndx >= e->nsec)
			return false;
		*S = e->sec[s.shndx].addr;
		return true;
	}
	if (s.shndx == SHN_UNDEF)
		return extern_symbol(e, &s, S, st);
	return ein_sym_addr(e, &s, S);
}

static void apply_one(ein_sec *t, const js_arch *arch, uint32_t type, uint64_t off, int64_t addend,
		      bool has_addend, uint64_t S, ein_reloc_stats *st)
{
	reloc_how how = arch->reloc(type);
	if (how.kind == RK_NONE)
		return;
	if (how.kind == RK_UNSUPPORTED) {
		st->unsupported++;
		return;
	}
	if (!t->data || !in_bounds(off, how.size, t->size)) {
		st->out_of_range++;
		return;
	}
	uint8_t *at = t->data + off;
	int64_t A = addend;
	if (!has_addend) /* REL: the addend is what the place holds */
		A = how.size == 8 ? (int64_t)load_u64(at) : (int64_t)(int32_t)load_u32(at);
	uint64_t v = S + (uint64_t)A;
	if (how.kind == RK_PCREL)
		v -= t->addr + off;
	if (how.size == 8) {
		store_u64(at, v);
	} else {
		bool fits = how.is_signed ? (int64_t)v == (int32_t)v : v <= UINT32_MAX;
		if (!fits) {
			st->out_of_range++;
			return;
		}
		store_u32(at, (uint32_t)v);
	}
	st->applied++;
}

int ein_relocate(ein *e, const js_arch *arch, size_t target, ein_reloc_stats *st)
{
	int found = 0;
	if (target == 0 || target >= e->nsec)
		return 0;
	ein_sec *t = &e->sec[target];
	for (size_t i = 1; i < e->nsec; i++) {
		ein_sec *r = &e->sec[i];
		if ((r->type != SHT_RELA && r->type != SHT_REL) || r->info != target || !r->data)
			continue;
		bool rela = r->type == SHT_RELA;
		size_t ent = rela ? sizeof(Elf64_Rela) : sizeof(Elf64_Rel);
		if (r->entsize != ent)
			continue;
		ein_sec *symtab =
			r->link && r->link < e->nsec && e->sec[r->link].data ? &e->sec[r->link] : NULL;
		if (symtab && (symtab->entsize != sizeof(Elf64_Sym) || symtab->link >= e->nsec))
			symtab = NULL;
		found++;
		Elf_Data *d = elf_getdata(r->scn, NULL);
		size_t n = d ? d->d_size / ent : 0; /* bounded by the image size */
		for (size_t k = 0; k < n && k <= INT32_MAX; k++) {
			GElf_Rela x = { 0 };
			GElf_Rel rel;
			if (rela ? !gelf_getrela(d, (int)k, &x) : !gelf_getrel(d, (int)k, &rel))
				break;
			if (!rela)
				x = (GElf_Rela){ rel.r_offset, rel.r_info, 0 };
			uint64_t S;
			if (!reloc_symbol(e, symtab, GELF_R_SYM(x.r_info), &S, st)) {
				st->bad_symbol++;
				continue;
			}
			apply_one(t, arch, GELF_R_TYPE(x.r_info), x.r_offset, rela ? x.r_addend : 0, rela, S,
				  st);
		}
	}
	return found;
}
