/* SPDX-License-Identifier: MIT */
/* symfind.h - find one symbol by name in an ELF file, as the dynamic
 * linker and gdb would: the GNU hash table of .dynsym first (O(1)), then the
 * SysV hash, then .symtab (an executable linked without -rdynamic keeps
 * __jit_debug_descriptor only there, and gdb finds it there).
 */
#ifndef JS_SYMFIND_H
#define JS_SYMFIND_H

#include <gelf.h>
#include <stdbool.h>

/* True with the symbol's st_value and st_size when `name` is defined. */
bool js_find_symbol(Elf *elf, const char *name, GElf_Addr *value, GElf_Xword *size);

/* What a file's own symbol tables say about `name`, read by mapping the
 * file (its pages are the page cache's) without libdwfl: no module, no
 * separate debuginfo looked for.  A caller that must search many files
 * for a symbol few define reads each this way, and hands to libdwfl only
 * the files that define it or may define it in a separate debug file. */
typedef struct js_file_look {
	bool elf;        /* a 64-bit ELF file (else a data file: no symbols) */
	bool defines;    /* its .dynsym or .symtab defines `name` */
	bool has_symtab; /* it has its .symtab: a separate debug file adds no symbol */
	bool partner;    /* its .dynsym defines `partner` (false when partner is NULL) */
	bool program;    /* an executable (not a shared library), which keeps local
			  * symbols out of .dynsym unless linked with -rdynamic */
} js_file_look;

/* False when `path` is not a regular file jitstack can read, or an ELF
 * file of another class: then nothing is known of it. */
bool js_look_in_file(const char *path, const char *name, const char *partner, js_file_look *look);

#endif
