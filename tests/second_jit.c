/* SPDX-License-Identifier: MIT */
/* second_jit.c - a second JIT in the process, registering its code with the
 * GDB JIT interface the way LLVM ORC does (llvm/lib/ExecutionEngine/
 * GDBRegistrationListener.cpp and orc/TargetProcess/JITLoaderGDB.cpp):
 *
 *   - it defines __jit_debug_descriptor (the 24 standard bytes, version 1)
 *     and a noinline __jit_debug_register_code itself, as strong symbols;
 *   - it serialises its own writers with a lock of its own, which nobody
 *     else knows about;
 *   - it links at the head and unlinks with plain stores, then sets
 *     relevant_entry and action_flag and calls __jit_debug_register_code.
 *
 * With SECOND_JIT_NO_DESCRIPTOR the file defines neither symbol and refers to
 * whichever definition the link gives it (a JIT library whose references
 * the dynamic linker binds to a descriptor defined before it).
 *
 * Each function it "compiles" is a few bytes in an executable mapping and a
 * small ET_REL image (GDB manual: .text SHT_NOBITS at the code's address, a
 * section-relative STT_FUNC symbol), enough for gdb's `info symbol`, lldb's
 * `image lookup` and jitstack --images to name it.
 */
#include "second_jit.h"

#include "formats/bytes.h"
#include "formats/elfhdr.h"
#include "formats/gdbjit.h"

#include <elf.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifndef SECOND_JIT_NO_DESCRIPTOR
__attribute__((visibility("default"))) struct jit_descriptor __jit_debug_descriptor = { GDBJIT_VERSION,
											GDBJIT_NOACTION, NULL,
											NULL };

__attribute__((visibility("default"), noinline)) void __jit_debug_register_code(void)
{
	__asm__ volatile("" ::: "memory");
}
#else
extern struct jit_descriptor __jit_debug_descriptor;
void __jit_debug_register_code(void);
#endif

static pthread_mutex_t orc_lock = PTHREAD_MUTEX_INITIALIZER; /* ORC's JITDebugLock */

enum { SHSTR_TEXT = 1, SHSTR_SYMTAB = 7, SHSTR_STRTAB = 15, SHSTR_SHSTRTAB = 23 };
static const char shstrtab[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
_Static_assert(sizeof shstrtab == 33, "section names: offsets above");

static void shdr(byte_buf *b, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t off,
		 uint64_t size, uint32_t link, uint32_t info, uint64_t align, uint64_t entsize)
{
	Elf64_Shdr s = { name, type, flags, addr, off, size, link, info, align, entsize };
	buf_bytes(b, &s, sizeof s);
}

/* The image: header, .symtab, .strtab, .shstrtab, then the section headers
 * (null, .text, .symtab, .strtab, .shstrtab). */
static int build_image(second_fn *f)
{
	byte_buf b;
	buf_init_grow(&b, 1 << 20);
	buf_zeros(&b, sizeof(Elf64_Ehdr));
	size_t symtab = b.len;
	Elf64_Sym none = { 0 }, fn = {
		.st_name = 1,
		.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
		.st_shndx = 1,
		.st_value = 0,
		.st_size = f->size, /* section-relative: gdb names it */
	};
	buf_bytes(&b, &none, sizeof none);
	buf_bytes(&b, &fn, sizeof fn);
	size_t strtab = b.len;
	buf_u8(&b, 0);
	buf_str(&b, f->name);
	size_t strsz = b.len - strtab, shstr = b.len;
	buf_bytes(&b, shstrtab, sizeof shstrtab);
	buf_align(&b, 8, 0);
	size_t shoff = b.len;
	shdr(&b, 0, SHT_NULL, 0, 0, 0, 0, 0, 0, 0, 0);
	shdr(&b, SHSTR_TEXT, SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, (uintptr_t)f->code, 0, f->size, 0, 0, 16,
	     0);
	shdr(&b, SHSTR_SYMTAB, SHT_SYMTAB, 0, 0, symtab, 2 * sizeof(Elf64_Sym), 3, 1, 8, sizeof(Elf64_Sym));
	shdr(&b, SHSTR_STRTAB, SHT_STRTAB, 0, 0, strtab, strsz, 0, 0, 1, 0);
	shdr(&b, SHSTR_SHSTRTAB, SHT_STRTAB, 0, 0, shstr, sizeof shstrtab, 0, 0, 1, 0);
	if (!buf_ok(&b)) {
		buf_free(&b);
		return -1;
	}
	byte_buf h;
	buf_init(&h, b.p, sizeof(Elf64_Ehdr));
	elf_write_ehdr(
		&h,
		&(elf_ehdr_desc){
			.type = ET_REL, .machine = EM_X86_64, .shoff = shoff, .shnum = 5, .shstrndx = 4 });
	f->image = b.p;
	f->image_size = b.len;
	return 0;
}

int second_jit_register(second_fn *f)
{
	if (build_image(f))
		return -1;
	struct jit_code_entry *e = calloc(1, sizeof *e);
	if (!e)
		return -1;
	e->symfile_addr = (const char *)f->image;
	e->symfile_size = f->image_size;
	f->entry = e;
	/* GDBRegistrationListener::notifyObjectLoaded, under its lock */
	pthread_mutex_lock(&orc_lock);
	gdbjit_plain_link(&__jit_debug_descriptor, e);
	__jit_debug_register_code();
	pthread_mutex_unlock(&orc_lock);
	return 0;
}

void second_jit_unregister(second_fn *f)
{
	struct jit_code_entry *e = f->entry;
	/* GDBRegistrationListener::deregisterObjectInternal, under its lock */
	pthread_mutex_lock(&orc_lock);
	__jit_debug_descriptor.action_flag = GDBJIT_UNREGISTER_FN;
	struct jit_code_entry *prev = e->prev_entry, *next = e->next_entry;
	if (next)
		next->prev_entry = prev;
	if (prev)
		prev->next_entry = next;
	else
		__jit_debug_descriptor.first_entry = next;
	__jit_debug_descriptor.relevant_entry = e;
	__jit_debug_register_code();
	pthread_mutex_unlock(&orc_lock);
	free(e);
	free(f->image);
	f->entry = NULL;
	f->image = NULL;
}

size_t second_jit_list_length(void)
{
	size_t n = 0;
	pthread_mutex_lock(&orc_lock);
	for (struct jit_code_entry *e = __jit_debug_descriptor.first_entry; e && n < 1000000;
	     e = e->next_entry)
		n++;
	pthread_mutex_unlock(&orc_lock);
	return n;
}
