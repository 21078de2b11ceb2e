/* SPDX-License-Identifier: MIT */
/* elfhdr.h - the ELF file header of the images the tree writes: 64-bit,
 * little-endian, System V ABI (gABI "ELF Header").  The library writes
 * ET_REL images for the GDB JIT interface, jitstack ET_EXEC images for
 * libdwfl; both go through elf_write_ehdr.
 */
#ifndef FMT_ELFHDR_H
#define FMT_ELFHDR_H

#include "bytes.h"

#include <elf.h>

/* What differs between the images we write. */
typedef struct elf_ehdr_desc {
	uint16_t type;    /* ET_REL or ET_EXEC */
	uint16_t machine; /* EM_* */
	uint16_t phnum;   /* program headers, right after this header */
	uint64_t shoff;   /* where the section headers are */
	uint16_t shnum;
	uint16_t shstrndx; /* index of .shstrtab */
} elf_ehdr_desc;

void elf_write_ehdr(byte_buf *b, const elf_ehdr_desc *d);

#endif
