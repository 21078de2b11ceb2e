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

#endif
