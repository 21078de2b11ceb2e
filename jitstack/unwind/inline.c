/* SPDX-License-Identifier: MIT */
/* inline.c - inline frames from DWARF scopes (inline.h). */
#include "unwind/inline.h"
#include "unwind/demangle.h"
#include "base/bounds.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Is s a string inside one of the DWARF sections of dw's file?  libdw
 * (0.188) checks that a .debug_str offset is inside the section, not that
 * a NUL follows before the section ends: a JIT image can end the section
 * in the middle of a name.  (Strings in .debug_info itself, DW_FORM_string,
 * libdw has checked; they pass again.) */
static bool in_dwarf_sections(Dwarf *dw, const char *s)
{
	Elf *elf = dwarf_getelf(dw);
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return false;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		/* section names as libdw itself read them to find its sections */
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		/* the bytes libdw reads (decompressed, if it decompressed them) */
		Elf_Data *d = elf_rawdata(scn, NULL);
		uintptr_t lo = d && d->d_buf ? (uintptr_t)d->d_buf : 0, at = (uintptr_t)s;
		if (lo && at >= lo && at - lo < d->d_size)
			return memchr(s, '\0', d->d_size - (at - lo)) != NULL;
	}
	return false;
}

/* The string of attribute a, if it is one in its unit's DWARF (or in the
 * file its unit's DWARF refers to for shared strings, as dwz makes). */
static const char *dwarf_string(Dwarf_Attribute *a)
{
	const char *s = dwarf_formstring(a);
	if (!s)
		return NULL;
	Dwarf *dw = dwarf_cu_getdwarf(a->cu);
	if (dw && in_dwarf_sections(dw, s))
		return s;
	Dwarf *alt = dw ? dwarf_getalt(dw) : NULL;
	return alt && in_dwarf_sections(alt, s) ? s : NULL;
}

/* An inlined function's name, from its abstract origin: the linkage name
 * demangled, as the physical frames' symbols are (and eu-stack -i names
 * them), else DW_AT_name. */
static const char *scope_name(js_session *s, Dwarf_Die *die)
{
	static const int linkage[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name };
	Dwarf_Attribute a;
	for (size_t i = 0; i < sizeof linkage / sizeof linkage[0]; i++) {
		const char *name = dwarf_attr_integrate(die, linkage[i], &a) ? dwarf_string(&a) : NULL;
		if (name)
			return js_demangle(s, name);
	}
	return dwarf_attr_integrate(die, DW_AT_name, &a) ? dwarf_string(&a) : NULL;
}

/* Where the inlined instance die was called: DW_AT_call_file (an index
 * into its unit's file table), DW_AT_call_line and DW_AT_call_column. */
static js_inline call_site(Dwarf_Die *die)
{
	js_inline at = { 0 };
	Dwarf_Die cu;
	Dwarf_Files *files;
	size_t n_files;
	Dwarf_Attribute a;
	Dwarf_Word file, line, col;
	if (!dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &n_files) ||
	    dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &file) ||
	    dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &line) || line > INT_MAX)
		return at;
	at.file = dwarf_filesrc(files, file, NULL, NULL); /* NULL past the table */
	if (!at.file)
		return at;
	at.line = (int)line;
	if (!dwarf_formudata(dwarf_attr(die, DW_AT_call_column, &a), &col) && col <= INT_MAX)
		at.col = (int)col;
	return at;
}

/* Do the DIEs of unit cu nest at most JS_MAX_DIE_DEPTH deep, each after
 * the one before it?  Walked in DWARF's order with a stack of our own
 * (libdw's scope walks recurse, a call a level); a DIE that does not lie
 * after the previous one (a DW_AT_sibling pointing back) ends the walk as
 * too deep: its scopes are not asked for. */
static bool walk_shallow(Dwarf_Die *cu)
{
	Dwarf_Die *stack = malloc(JS_MAX_DIE_DEPTH * sizeof *stack);
	if (!stack)
		return false;
	size_t depth = 0;
	bool ok = true;
	const void *last = cu->addr;
	stack[0] = *cu;
	for (;;) {
		Dwarf_Die next;
		if (dwarf_child(&stack[depth], &next) == 0) { /* down */
			if (depth + 1 >= JS_MAX_DIE_DEPTH || (const char *)next.addr <= (const char *)last) {
				ok = false;
				break;
			}
			stack[++depth] = next;
			last = next.addr;
			continue;
		}
		/* across, or up until a level has a next sibling */
		for (;;) {
			if (depth == 0)
				goto done;
			int r = dwarf_siblingof(&stack[depth], &next);
			if (r == 0)
				break;
			if (r < 0) {
				ok = false;
				goto done;
			}
			depth--;
		}
		if ((const char *)next.addr <= (const char *)last) {
			ok = false;
			break;
		}
		stack[depth] = next;
		last = next.addr;
	}
done:
	free(stack);
	return ok;
}

static bool shallow_enough(js_session *s, Dwarf_Die *cu)
{
	if (s->unit_depth_changes != js_names_epoch(s)) {
		js_htab_clear(&s->unit_depth);
		s->unit_depth_changes = js_names_epoch(s);
	}
	uint64_t key = (uint64_t)(uintptr_t)cu->addr;
	uint32_t v = js_htab_get(&s->unit_depth, key);
	if (!v) {
		v = walk_shallow(cu) ? 1 : 2;
		js_htab_put(&s->unit_depth, key, v); /* out of memory: measured again next time */
	}
	return v == 1;
}

/* The innermost scope at pc, when one of the scopes around it is an
 * inlined function.  (dwarf_getscopes follows the innermost inlined
 * instance to its abstract definition's scopes, which is what a variable
 * lookup wants; the chain of instances comes from dwarf_getscopes_die.) */
static bool inner_inlined_scope(js_session *s, Dwfl_Module *mod, uint64_t pc, Dwarf_Die *inner)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, &bias);
	Dwarf_Die *scopes = NULL;
	int n = cu && shallow_enough(s, cu) ? dwarf_getscopes(cu, pc - bias, &scopes) : -1;
	bool inlined = false;
	for (int i = 0; i < n && !inlined; i++)
		inlined = dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
	if (inlined)
		*inner = scopes[0];
	free(scopes);
	return inlined;
}

size_t js_inline_frames(js_session *s, Dwfl_Module *mod, uint64_t pc, const js_inline *at, js_inline *out,
			size_t max, js_inline *call)
{
	Dwarf_Die inner, *scopes = NULL;
	if (!inner_inlined_scope(s, mod, pc, &inner))
		return 0;
	int n = dwarf_getscopes_die(&inner, &scopes);
	js_inline here = *at;
	size_t k = 0;
	for (int i = 0; i < n && k < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_entry_point)
			break; /* the physical function, which the symbol names */
		if (tag != DW_TAG_inlined_subroutine)
			continue; /* a lexical block */
		here.func = scope_name(s, &scopes[i]);
		out[k++] = here;
		here = call_site(&scopes[i]);
	}
	free(scopes);
	*call = here;
	call->func = NULL;
	return k;
}
