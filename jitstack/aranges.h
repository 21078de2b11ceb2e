/* aranges.h - synthesize .debug_aranges for an image that has none.
 *
 * libdw (0.188) and libdwfl find the compile unit of an address only
 * through .debug_aranges, and many JITs leave it out: LuaJIT's gdbjit
 * writes .debug_info and .debug_line only, clang emits no aranges by
 * default.  Without it a JIT frame has no source line.  This reads the
 * first DIE of every unit (bounded, untrusted input) for DW_AT_low_pc and
 * DW_AT_high_pc, and writes one address range set per unit that has them.
 */
#ifndef JS_ARANGES_H
#define JS_ARANGES_H

#include "formats/bytes.h"

#include <stddef.h>
#include <stdint.h>

/* Append .debug_aranges content (DWARF 4 section 6.1.2) for the units of
 * info/abbrev to out.  Returns the number of units covered. */
size_t js_synth_aranges(const uint8_t *info, size_t info_size, const uint8_t *abbrev, size_t abbrev_size,
			byte_buf *out);

#endif
