/* SPDX-License-Identifier: MIT */
/* elfhdr.c - the ELF file header writer (see elfhdr.h). */
#include "elfhdr.h"

void elf_write_ehdr(byte_buf *b, const elf_ehdr_desc *d)
{
	Elf64_Ehdr h = { 0 };
	memcpy(h.e_ident, ELFMAG, SELFMAG);
	h.e_ident[EI_CLASS] = ELFCLASS64;
	h.e_ident[EI_DATA] = ELFDATA2LSB;
	h.e_ident[EI_VERSION] = EV_CURRENT;
	h.e_ident[EI_OSABI] = ELFOSABI_SYSV;
	h.e_type = d->type;
	h.e_machine = d->machine;
	h.e_version = EV_CURRENT;
	h.e_phoff = d->phnum ? sizeof(Elf64_Ehdr) : 0;
	h.e_shoff = d->shoff;
	h.e_ehsize = sizeof(Elf64_Ehdr);
	h.e_phentsize = d->phnum ? sizeof(Elf64_Phdr) : 0;
	h.e_phnum = d->phnum;
	h.e_shentsize = sizeof(Elf64_Shdr);
	h.e_shnum = d->shnum;
	h.e_shstrndx = d->shstrndx;
	buf_bytes(b, &h, sizeof h);
}
