/* elfin.c - the bounded ELF reader of elfin.h.  Structure layouts are those
 * of <elf.h> (System V gABI, "Object Files"); fields are loaded through
 * memcpy because a copied image carries no alignment guarantee.
 */
#include "elfin.h"
#include "bounds.h"
#include "formats/bytes.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define fail(why, ...) (js_fail((why), JS_EXIT_FAILURE, 0, __VA_ARGS__), -1)

/* [off, off+len) inside a buffer of `size` bytes, without overflow. */
static bool in_bounds(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/* A string at offset `off` of a string table section, bounded. */
static const char *strtab_at(const ein_sec *s, uint64_t off)
{
	if (!s || !s->data || off >= s->size)
		return NULL;
	size_t max = s->size - off;
	if (max > JS_MAX_NAME + 1)
		max = JS_MAX_NAME + 1;
	const char *p = (const char *)s->data + off;
	return memchr(p, 0, max) ? p : NULL;
}

int ein_parse(ein *e, uint8_t *img, size_t size, js_err *why)
{
	memset(e, 0, sizeof *e);
	e->img = img;
	e->size = size;
	Elf64_Ehdr h;
	if (size < sizeof h)
		return fail(why, "%zu bytes: too small for an ELF header", size);
	memcpy(&h, img, sizeof h);
	if (memcmp(h.e_ident, ELFMAG, SELFMAG))
		return fail(why, "no ELF magic");
	if (h.e_ident[EI_CLASS] != ELFCLASS64 || h.e_ident[EI_DATA] != ELFDATA2LSB)
		return fail(why, "not a 64-bit little-endian ELF image");
	if (h.e_type != ET_REL && h.e_type != ET_EXEC && h.e_type != ET_DYN)
		return fail(why, "ELF type %u is not an object, executable or shared object", h.e_type);
	e->type = h.e_type;
	e->machine = h.e_machine;
	if (h.e_shentsize != sizeof(Elf64_Shdr))
		return fail(why, "section header size %u", h.e_shentsize);
	uint64_t nsec = h.e_shnum;
	if (nsec == 0 && h.e_shoff) {
		/* More than SHN_LORESERVE sections: the count is in section 0. */
		Elf64_Shdr s0;
		if (!in_bounds(h.e_shoff, sizeof s0, size))
			return fail(why, "section headers outside the image");
		memcpy(&s0, img + h.e_shoff, sizeof s0);
		nsec = s0.sh_size;
	}
	if (nsec < 2)
		return fail(why, "no sections");
	if (nsec > JS_MAX_SECTIONS)
		return fail(why, "%llu sections (limit %u)", (unsigned long long)nsec, JS_MAX_SECTIONS);
	if (!in_bounds(h.e_shoff, nsec * sizeof(Elf64_Shdr), size))
		return fail(why, "section headers outside the image");
	e->sec = calloc(nsec, sizeof *e->sec);
	if (!e->sec)
		return fail(why, "out of memory");
	e->nsec = nsec;
	for (size_t i = 0; i < nsec; i++) {
		Elf64_Shdr s;
		memcpy(&s, img + h.e_shoff + i * sizeof s, sizeof s);
		ein_sec *o = &e->sec[i];
		*o = (ein_sec){ "", s.sh_type, s.sh_link, s.sh_info, s.sh_flags, s.sh_addr, s.sh_offset,
				s.sh_size, s.sh_entsize, NULL };
		if (i == 0 || s.sh_type == SHT_NOBITS || s.sh_type == SHT_NULL)
			continue;
		if (!in_bounds(s.sh_offset, s.sh_size, size))
			return fail(why, "section %zu: [%#llx, +%#llx) is outside the image (%zu bytes)", i,
				    (unsigned long long)s.sh_offset, (unsigned long long)s.sh_size, size);
		o->data = img + s.sh_offset;
	}
	uint64_t shstrndx = h.e_shstrndx;
	if (shstrndx == SHN_XINDEX)
		shstrndx = e->sec[0].link;
	if (shstrndx && shstrndx < nsec && e->sec[shstrndx].type == SHT_STRTAB) {
		Elf64_Shdr s;
		for (size_t i = 1; i < nsec; i++) {
			memcpy(&s, img + h.e_shoff + i * sizeof s, sizeof s);
			const char *name = strtab_at(&e->sec[shstrndx], s.sh_name);
			e->sec[i].name = name ? name : "";
		}
	}
	return 0;
}

void ein_free(ein *e)
{
	free(e->sec);
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
		if (s->entsize != sizeof(Elf64_Sym) || s->link >= e->nsec ||
		    e->sec[s->link].type != SHT_STRTAB)
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
	if ((i + 1) * sizeof(Elf64_Sym) > st->size)
		return false;
	Elf64_Sym s;
	memcpy(&s, st->data + i * sizeof s, sizeof s);
	const char *name = s.st_name ? strtab_at(&e->sec[st->link], s.st_name) : "";
	if (!name)
		return false;
	*out = (ein_sym){ name, s.st_value, s.st_size, s.st_shndx, ELF64_ST_TYPE(s.st_info),
			  ELF64_ST_BIND(s.st_info) };
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

/* The value S of a relocation's symbol: a section symbol stands for its
 * section's address. */
static bool reloc_symbol(ein *e, ein_sec *symtab, uint32_t symi, uint64_t *S)
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
		ein_sec *symtab = r->link && r->link < e->nsec && e->sec[r->link].data ? &e->sec[r->link] : NULL;
		if (symtab && (symtab->entsize != sizeof(Elf64_Sym) || symtab->link >= e->nsec))
			symtab = NULL;
		found++;
		size_t n = r->size / ent; /* bounded by the image size */
		for (size_t k = 0; k < n; k++) {
			Elf64_Rela x = { 0 };
			memcpy(&x, r->data + k * ent, ent);
			uint64_t S;
			if (!reloc_symbol(e, symtab, ELF64_R_SYM(x.r_info), &S)) {
				st->bad_symbol++;
				continue;
			}
			apply_one(t, arch, ELF64_R_TYPE(x.r_info), x.r_offset, rela ? x.r_addend : 0, rela, S, st);
		}
	}
	return found;
}
