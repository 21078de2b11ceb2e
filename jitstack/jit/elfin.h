/* SPDX-License-Identifier: MIT */
/* elfin.h - the ELF images copied out of a target, read with libelf.
 *
 * The images a JIT registers are untrusted bytes in our own memory: libelf
 * (elf_memory) reads their headers, sections and symbols and checks each
 * against the copy; this layer adds the limits of bounds.h, which libelf
 * does not have, and keeps what the rewriter needs: ELF64 little-endian
 * (the only layout of the machines jitstack unwinds), sections, one symbol
 * table, and REL/RELA relocations, which it applies in place to the copy.
 */
#ifndef JS_ELFIN_H
#define JS_ELFIN_H

#include "base/err.h"
#include "target/machine.h"

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ein_sec {
	const char *name; /* NUL-terminated inside the image; "" if unnamed */
	uint32_t type, link, info;
	uint64_t flags, addr, off, size, entsize;
	uint8_t *data; /* the section's bytes in the copy; NULL for NOBITS */
	Elf_Scn *scn;
} ein_sec;

/* Looks up a symbol another image defines (a relocatable object that
 * refers to code or data of another; see ein.resolve).  True with its
 * address when some image defines `name`. */
typedef bool (*ein_resolver)(void *arg, const char *name, uint64_t *addr);

typedef struct ein {
	Elf *elf;     /* libelf over the copy */
	uint8_t *img; /* the copy (relocations are applied in place) */
	size_t size;
	uint16_t type, machine;
	size_t nsec;
	ein_sec *sec; /* nsec entries, [0] is the null section */
	/* Where relocations find the symbols the image leaves undefined (set
	 * after ein_parse; NULL: such relocations fail).  LLVM's lazy ORC JIT
	 * registers one object per function and one for the globals, and
	 * their DWARF refers to each other's symbols. */
	ein_resolver resolve;
	void *resolve_arg;
} ein;

/* Parse the ELF header and section headers of img (which the caller owns
 * and keeps alive; libelf must be initialised, elf_version).  Returns 0,
 * or the code with *why set.  ein_free it either way. */
int ein_parse(ein *e, uint8_t *img, size_t size, js_err *why);
void ein_free(ein *e);

/* The first section with this name, or NULL. */
ein_sec *ein_section(ein *e, const char *name);

/* A symbol as the rewriter needs it. */
typedef struct ein_sym {
	const char *name;
	uint64_t value, size;
	uint16_t shndx;
	uint8_t type, bind;
} ein_sym;

/* The symbol table to use: SHT_SYMTAB, else SHT_DYNSYM; NULL if none or
 * malformed.  Sets *count (bounded by JS_MAX_SYMBOLS). */
ein_sec *ein_symtab(ein *e, size_t *count);
/* Symbol i of table st; false if it is malformed (bad name offset). */
bool ein_sym_get(ein *e, ein_sec *st, size_t i, ein_sym *out);
/* The address a defined symbol stands for: its section's address plus its
 * value in a relocatable object, its value otherwise.  False if undefined
 * or its section index is out of range. */
bool ein_sym_addr(ein *e, const ein_sym *s, uint64_t *addr);

typedef struct ein_reloc_stats {
	unsigned long applied, unsupported, out_of_range, bad_symbol;
	unsigned long undefined;     /* against symbols no image defines (also in bad_symbol) */
	const char *first_undefined; /* the first such symbol's name, inside the image */
} ein_reloc_stats;

/* Apply every REL/RELA section that targets section `target` to the copy,
 * with section addresses as the load addresses (a JIT that places a
 * relocatable object sets each sh_addr to where it put the section, as
 * LLVM's RuntimeDyld does for gdb).  An undefined symbol is looked up
 * with e->resolve; an undefined weak one that no image defines is 0, as a
 * linker makes it.  Relocations of unknown type are counted and skipped.
 * Returns the number of relocation sections found. */
int ein_relocate(ein *e, const js_arch *arch, size_t target, ein_reloc_stats *st);

#endif
