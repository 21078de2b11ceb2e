/* SPDX-License-Identifier: MIT */
/* orcjit.c - a foreign JIT of a given size, for `make bench-scale` and
 * jitstack's scale tests: N functions, each in an image of its own
 * registered through the process's own plain GDB JIT descriptor, the way
 * LLVM's ORC registers the objects it links (a relocatable object per
 * module, .text at the code's address, the new entry put first).
 *
 *   orcjit N
 *
 * The stack (innermost first): hold <- orc_fn_K <- park <- main, K = N / 2.
 * Prints "ready PID ADDRESS-OF-K" and waits until killed.
 */
#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "formats/gdbjit.h"

#define NOINLINE __attribute__((noinline, used))
#define SLOT 32

/* ---- the GDB JIT interface, plain, defined here as LLVM defines it --------- */

struct jit_descriptor __jit_debug_descriptor = { GDBJIT_VERSION, GDBJIT_NOACTION, 0, 0 };

NOINLINE void __jit_debug_register_code(void)
{
	__asm__ volatile("");
}

static void register_image(const void *img, size_t size)
{
	struct jit_code_entry *e = calloc(1, sizeof *e);
	if (!e)
		exit(2);
	e->symfile_addr = img;
	e->symfile_size = size;
	gdbjit_plain_link(&__jit_debug_descriptor, e);
	__jit_debug_register_code();
}

NOINLINE void hold(void)
{
	for (;;)
		pause();
}

static void emit(uint8_t *p)
{
	uint64_t t = (uintptr_t)hold;
#if defined(__x86_64__)
	uint8_t b[18] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8 };
	memcpy(b + 6, &t, 8);
	b[14] = 0xff, b[15] = 0xd0, b[16] = 0x5d, b[17] = 0xc3;
	memset(p, 0xcc, SLOT);
	memcpy(p, b, sizeof b);
#elif defined(__aarch64__)
	uint32_t w[6] = { 0xa9bf7bfd, 0x910003fd, 0x58000090, 0xd63f0200, 0xa8c17bfd, 0xd65f03c0 };
	memcpy(p, w, sizeof w);
	memcpy(p + 24, &t, 8);
#else
#error "x86-64 and AArch64 only"
#endif
}

/* ---- one relocatable object per function ----------------------------------- */

enum { S_NULL, S_TEXT, S_SYMTAB, S_STRTAB, S_SHSTRTAB, N_SECTIONS };
static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
#define NAME_LEN 28 /* "orc_fn_" + up to 20 digits */

typedef struct image {
	Elf64_Ehdr eh;
	uint8_t text[SLOT];
	Elf64_Sym sym[2];
	char str[1 + NAME_LEN + 1];
	char shstr[sizeof shstr];
	uint8_t pad[7];
	Elf64_Shdr sh[N_SECTIONS];
} image;

static image *make_image(const uint8_t *code, size_t k)
{
	image *im = calloc(1, sizeof *im);
	if (!im)
		exit(2);
	memcpy(im->eh.e_ident, ELFMAG, SELFMAG);
	im->eh.e_ident[EI_CLASS] = ELFCLASS64;
	im->eh.e_ident[EI_DATA] = ELFDATA2LSB;
	im->eh.e_ident[EI_VERSION] = EV_CURRENT;
	im->eh.e_type = ET_REL;
#if defined(__x86_64__)
	im->eh.e_machine = EM_X86_64;
#else
	im->eh.e_machine = EM_AARCH64;
#endif
	im->eh.e_version = EV_CURRENT;
	im->eh.e_ehsize = sizeof(Elf64_Ehdr);
	im->eh.e_shentsize = sizeof(Elf64_Shdr);
	im->eh.e_shnum = N_SECTIONS;
	im->eh.e_shstrndx = S_SHSTRTAB;
	im->eh.e_shoff = offsetof(image, sh);
	memcpy(im->text, code, SLOT);
	snprintf(im->str + 1, NAME_LEN + 1, "orc_fn_%zu", k);
	im->sym[1] = (Elf64_Sym){ .st_name = 1,
				  .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
				  .st_shndx = S_TEXT,
				  .st_size = SLOT };
	memcpy(im->shstr, shstr, sizeof shstr);
	im->sh[S_TEXT] = (Elf64_Shdr){ .sh_name = 1,
				       .sh_type = SHT_PROGBITS,
				       .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
				       .sh_addr = (uintptr_t)code,
				       .sh_offset = offsetof(image, text),
				       .sh_size = SLOT,
				       .sh_addralign = 16 };
	im->sh[S_SYMTAB] = (Elf64_Shdr){ .sh_name = 7,
					 .sh_type = SHT_SYMTAB,
					 .sh_offset = offsetof(image, sym),
					 .sh_size = sizeof im->sym,
					 .sh_link = S_STRTAB,
					 .sh_info = 1,
					 .sh_addralign = 8,
					 .sh_entsize = sizeof(Elf64_Sym) };
	im->sh[S_STRTAB] = (Elf64_Shdr){ .sh_name = 15,
					 .sh_type = SHT_STRTAB,
					 .sh_offset = offsetof(image, str),
					 .sh_size = sizeof im->str,
					 .sh_addralign = 1 };
	im->sh[S_SHSTRTAB] = (Elf64_Shdr){ .sh_name = 23,
					   .sh_type = SHT_STRTAB,
					   .sh_offset = offsetof(image, shstr),
					   .sh_size = sizeof shstr,
					   .sh_addralign = 1 };
	return im;
}

NOINLINE void park(void (*fn)(void))
{
	fn();
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: orcjit N\n");
		return 2;
	}
	size_t n = strtoul(argv[1], NULL, 0);
	if (n < 1)
		n = 1;
	uint8_t *code =
		mmap(NULL, n * SLOT, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED)
		return 2;
	for (size_t i = 0; i < n; i++) {
		emit(code + i * SLOT);
		register_image(make_image(code + i * SLOT, i), sizeof(image));
	}
	__builtin___clear_cache((char *)code, (char *)code + n * SLOT);
	uint8_t *mid = code + (n / 2) * SLOT;
	printf("ready %d %p\n", (int)getpid(), (void *)mid);
	fflush(stdout);
	park((void (*)(void))(void *)mid);
	return 0;
}
