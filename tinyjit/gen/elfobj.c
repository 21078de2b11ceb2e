/* SPDX-License-Identifier: MIT */
/* elfobj.c - read a relocatable object's functions, relocations and
 * .eh_frame with libelf (build time).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elfobj.h"

#define FAIL(...)                                                                                            \
	do {                                                                                                 \
		snprintf(err, errlen, __VA_ARGS__);                                                          \
		return -1;                                                                                   \
	} while (0)

const char *eo_section_name(const eo_object *o, size_t shndx)
{
	size_t strndx;
	Elf_Scn *scn = elf_getscn(o->elf, shndx);
	GElf_Shdr sh;
	if (!scn || !gelf_getshdr(scn, &sh) || elf_getshdrstrndx(o->elf, &strndx))
		return "?";
	const char *n = elf_strptr(o->elf, strndx, sh.sh_name);
	return n ? n : "?";
}

static Elf_Data *section_data(Elf_Scn *scn)
{
	return elf_getdata(scn, NULL);
}

/* Read the relocations a SHT_RELA section holds, naming each symbol. */
static int read_relocs(eo_object *o, Elf_Scn *rela, Elf_Data *symtab, size_t strtab, eo_reloc **out,
		       size_t *n, char *err, size_t errlen)
{
	GElf_Shdr sh;
	gelf_getshdr(rela, &sh);
	Elf_Data *d = section_data(rela);
	size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	eo_reloc *r = calloc(count ? count : 1, sizeof *r);
	if (!r || !d)
		FAIL("%s: cannot read relocations", o->path);
	for (size_t i = 0; i < count; i++) {
		GElf_Rela ra;
		GElf_Sym sym;
		if (!gelf_getrela(d, (int)i, &ra) || !gelf_getsym(symtab, (int)GELF_R_SYM(ra.r_info), &sym)) {
			free(r);
			FAIL("%s: bad relocation %zu", o->path, i);
		}
		const char *name = elf_strptr(o->elf, strtab, sym.st_name);
		r[i] = (eo_reloc){
			.offset = ra.r_offset,
			.type = (uint32_t)GELF_R_TYPE(ra.r_info),
			.sym = name ? name : "",
			.sym_defined = sym.st_shndx != SHN_UNDEF,
			.sym_shndx = sym.st_shndx,
			.sym_value = sym.st_value,
			.addend = ra.r_addend,
		};
		if (GELF_ST_TYPE(sym.st_info) == STT_SECTION)
			r[i].sym = eo_section_name(o, sym.st_shndx);
	}
	*out = r;
	*n = count;
	return 0;
}

static int cmp_reloc(const void *a, const void *b)
{
	const eo_reloc *x = a, *y = b;
	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Hand each function the relocations that fall inside it. */
static int split_relocs(eo_object *o, size_t target, eo_reloc *r, size_t n, char *err, size_t errlen)
{
	for (size_t f = 0; f < o->n_funcs; f++) {
		eo_func *fn = &o->funcs[f];
		if (fn->shndx != target)
			continue;
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (r[i].offset >= fn->value && r[i].offset < fn->value + fn->size)
				k++;
		fn->relocs = calloc(k ? k : 1, sizeof *fn->relocs);
		if (!fn->relocs)
			FAIL("out of memory");
		for (size_t i = 0; i < n; i++)
			if (r[i].offset >= fn->value && r[i].offset < fn->value + fn->size) {
				fn->relocs[fn->n_relocs] = r[i];
				fn->relocs[fn->n_relocs++].offset -= fn->value;
			}
		qsort(fn->relocs, fn->n_relocs, sizeof *fn->relocs, cmp_reloc);
	}
	return 0;
}

static int read_funcs(eo_object *o, Elf_Scn *symscn, char *err, size_t errlen)
{
	GElf_Shdr sh;
	gelf_getshdr(symscn, &sh);
	Elf_Data *d = section_data(symscn);
	size_t count = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
	o->funcs = calloc(count ? count : 1, sizeof *o->funcs);
	if (!o->funcs || !d)
		FAIL("%s: cannot read symbols", o->path);
	for (size_t i = 0; i < count; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		Elf_Scn *scn = elf_getscn(o->elf, sym.st_shndx);
		Elf_Data *text = scn ? section_data(scn) : NULL;
		if (!text || sym.st_value + sym.st_size > text->d_size)
			FAIL("%s: function symbol %zu lies outside its section", o->path, i);
		eo_func *fn = &o->funcs[o->n_funcs++];
		fn->name = elf_strptr(o->elf, sh.sh_link, sym.st_name);
		fn->shndx = sym.st_shndx;
		fn->value = sym.st_value;
		fn->code = (const uint8_t *)text->d_buf + sym.st_value;
		fn->size = sym.st_size;
	}
	return 0;
}

int eo_open(const char *path, eo_object *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof *o);
	o->path = path;
	o->fd = -1;
	if (elf_version(EV_CURRENT) == EV_NONE)
		FAIL("libelf: %s", elf_errmsg(-1));
	o->fd = open(path, O_RDONLY);
	if (o->fd < 0)
		FAIL("%s: cannot open", path);
	o->elf = elf_begin(o->fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	if (!o->elf || !gelf_getehdr(o->elf, &eh))
		FAIL("%s: not an ELF file: %s", path, elf_errmsg(-1));
	if (eh.e_type != ET_REL || (eh.e_machine != EM_X86_64 && eh.e_machine != EM_AARCH64))
		FAIL("%s: not an x86-64 or AArch64 relocatable object", path);
	o->machine = eh.e_machine;

	Elf_Scn *symscn = NULL, *scn = NULL;
	while ((scn = elf_nextscn(o->elf, scn))) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			symscn = scn;
	}
	if (!symscn)
		FAIL("%s: no symbol table", path);
	if (read_funcs(o, symscn, err, errlen))
		return -1;
	for (size_t i = 0; i < o->n_funcs; i++)
		o->funcs[i].machine = o->machine;
	GElf_Shdr symsh;
	gelf_getshdr(symscn, &symsh);
	Elf_Data *symdata = section_data(symscn);

	size_t ehndx = 0;
	while ((scn = elf_nextscn(o->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (strcmp(eo_section_name(o, elf_ndxscn(scn)), ".eh_frame") == 0) {
			Elf_Data *d = section_data(scn);
			o->eh_frame = d ? d->d_buf : NULL;
			o->eh_frame_size = d ? d->d_size : 0;
			ehndx = elf_ndxscn(scn);
		}
	}
	while ((scn = elf_nextscn(o->elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA)
			continue;
		eo_reloc *r;
		size_t n;
		if (read_relocs(o, scn, symdata, symsh.sh_link, &r, &n, err, errlen))
			return -1;
		if (sh.sh_info == ehndx && ehndx) {
			qsort(r, n, sizeof *r, cmp_reloc);
			o->eh_relocs = r;
			o->n_eh_relocs = n;
			continue;
		}
		int rc = split_relocs(o, sh.sh_info, r, n, err, errlen);
		free(r);
		if (rc)
			return -1;
	}
	return 0;
}

void eo_close(eo_object *o)
{
	for (size_t i = 0; i < o->n_funcs; i++)
		free(o->funcs[i].relocs);
	free(o->funcs);
	free(o->eh_relocs);
	if (o->elf)
		elf_end(o->elf);
	if (o->fd >= 0)
		close(o->fd);
	memset(o, 0, sizeof *o);
	o->fd = -1;
}

const eo_func *eo_find(const eo_object *o, const char *name)
{
	for (size_t i = 0; i < o->n_funcs; i++)
		if (strcmp(o->funcs[i].name, name) == 0)
			return &o->funcs[i];
	return NULL;
}
