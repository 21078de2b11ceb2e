/* SPDX-License-Identifier: MIT */
/* elfobj.h - the parts of a relocatable x86-64 or AArch64 object the stencil
 * tools need
 * (build time): its functions, their code and relocations, and .eh_frame.
 */
#ifndef TJ_ELFOBJ_H
#define TJ_ELFOBJ_H

#include <gelf.h>
#include <stddef.h>
#include <stdint.h>

typedef struct eo_reloc {
	uint64_t offset;  /* in the function (or in .eh_frame) */
	uint32_t type;    /* R_X86_64_*, R_AARCH64_* */
	const char *sym;  /* symbol name ("" for a section symbol) */
	int sym_defined;  /* the symbol is defined in this object */
	size_t sym_shndx; /* its section, when defined */
	uint64_t sym_value;
	int64_t addend;
} eo_reloc;

typedef struct eo_func {
	const char *name;
	uint16_t machine; /* the object's e_machine */
	size_t shndx;     /* its section */
	uint64_t value;   /* offset in that section */
	const uint8_t *code;
	size_t size;
	eo_reloc *relocs; /* sorted by offset, offsets relative to the function */
	size_t n_relocs;
} eo_func;

typedef struct eo_object {
	const char *path;
	uint16_t machine; /* EM_X86_64 or EM_AARCH64 */
	int fd;
	Elf *elf;
	eo_func *funcs;
	size_t n_funcs;
	/* .eh_frame and its relocations, if present */
	const uint8_t *eh_frame;
	size_t eh_frame_size;
	eo_reloc *eh_relocs;
	size_t n_eh_relocs;
} eo_object;

/* Open and index an object.  Returns 0, or -1 with a message in err. */
int eo_open(const char *path, eo_object *o, char *err, size_t errlen);
void eo_close(eo_object *o);
const eo_func *eo_find(const eo_object *o, const char *name);
/* The name of section shndx. */
const char *eo_section_name(const eo_object *o, size_t shndx);

#endif
