/* SPDX-License-Identifier: MIT */
/* symindex.h - a native module's symbols sorted by address, so that naming
 * a pc costs a binary search instead of a pass over the whole table.
 *
 * libdw 0.188's dwfl_module_addrinfo reads every symbol of the module for
 * every lookup: about 360 instructions a symbol, so 1 M instructions a
 * frame in php8.2 (3,000 symbols) and 16 M in node (109,000).  The index
 * gives the same answer as dwfl_module_addrinfo, the same name, offset
 * and symbol, for every address: it keeps libdwfl's rules (a sized symbol
 * holding the address, the globals before the locals, the nearest start,
 * then the binding, then the smaller size, then the first in the table),
 * and hands an address to dwfl_module_addrinfo itself where the answer
 * could be one of libdwfl's sizeless symbols (assembly labels), whose
 * choice depends on the sections and on the table's order.
 *
 * A module's table is read at its first lookup where it can be read in
 * place (one section of one file: about 50 instructions a symbol), else
 * through libdwfl at its second; the first four lookups then pass over
 * the compact copy, later ones search it sorted.  Modules whose symbol
 * values libdwfl resolves
 * (function descriptors, on none of the machines jitstack reads) and
 * relocatable files (JIT images, which are small) are never indexed.
 */
#ifndef JS_SYMINDEX_H
#define JS_SYMINDEX_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct js_symindex;

typedef struct js_symindexes {
	struct js_symindex **v; /* one per module looked up, in no order */
	size_t n, cap;
	/* counts (--stats, tests) */
	unsigned long built, fast, slow;
	bool through_dwfl; /* tests: read tables only through libdwfl */
	bool never_sorted; /* tests: every lookup a pass over the index */
} js_symindexes;

/* dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL), through
 * the module's index where it has one. */
const char *js_symindex_addrinfo(js_symindexes *x, Dwfl_Module *mod, GElf_Addr addr, GElf_Off *off,
				 GElf_Sym *sym);

/* Forget the indexes of modules that are no longer in dwfl (after a
 * dwfl_report_end that may have removed some): a removed module's memory
 * may hold a new one later. */
void js_symindex_prune(js_symindexes *x, Dwfl *dwfl);

void js_symindex_free(js_symindexes *x);

#endif
