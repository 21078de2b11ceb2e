/* SPDX-License-Identifier: MIT */
/* aranges.h - what libdw makes of a rewritten image's DWARF: a
 * .debug_aranges when the image has none, and whether it has line rows.
 *
 * libdw (0.188) and libdwfl find the compile unit of an address only
 * through .debug_aranges, and many JITs leave it out: LuaJIT's gdbjit
 * writes .debug_info and .debug_line only, clang emits no aranges by
 * default.  Without it a JIT frame has no source line.  libdw reads each
 * unit's ranges, whatever the DWARF version and form (DWARF 5's
 * DW_FORM_addrx through .debug_addr, DW_AT_ranges through
 * .debug_rnglists), and this writes one address range set per unit.
 */
#ifndef JS_ARANGES_H
#define JS_ARANGES_H

#include "formats/bytes.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct js_dwarf_scan {
	size_t units;     /* units with code ranges (an address range set each) */
	size_t line_rows; /* rows of their line tables: 0, no source lines to show */
} js_dwarf_scan;

/* Read the DWARF of the ELF image at elf[0..size) with libdw.  With OUT,
 * append .debug_aranges content (DWARF 4 section 6.1.2) for its units to
 * it.  An image libdw cannot read gets a zeroed scan. */
js_dwarf_scan js_scan_dwarf(const uint8_t *elf, size_t size, byte_buf *out);

#endif
