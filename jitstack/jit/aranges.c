/* SPDX-License-Identifier: MIT */
/* aranges.c - a JIT image's DWARF read with libdw (see aranges.h).
 *
 * The image is the rewritten one, in our own memory, whose .debug_*
 * sections come from the target.  libdw bounds its reads of them itself
 * (it reads every .debug_info libdwfl is given, and is fuzzed for that);
 * our limits here only cap the work: units visited, ranges per unit.
 */
#include "jit/aranges.h"
#include "base/bounds.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>

enum { MAX_UNITS = 1000000, MAX_RANGES = 65536 };

/* One address range set: the unit at info_off and its ranges. */
static void write_set(byte_buf *out, uint64_t info_off, Dwarf_Die *cu)
{
	size_t set = buf_len32_begin(out); /* unit_length */
	buf_u16(out, 2);                   /* version */
	buf_u32(out, (uint32_t)info_off);  /* debug_info_offset */
	buf_u8(out, 8);                    /* address_size */
	buf_u8(out, 0);                    /* segment_selector_size */
	buf_zeros(out, 4);                 /* pad the tuples to 16 bytes */
	Dwarf_Addr base, start, end;
	ptrdiff_t at = 0;
	for (unsigned n = 0; n < MAX_RANGES && (at = dwarf_ranges(cu, at, &base, &start, &end)) > 0; n++) {
		if (end <= start)
			continue;
		buf_u64(out, start);       /* address */
		buf_u64(out, end - start); /* length */
	}
	buf_u64(out, 0); /* terminator */
	buf_u64(out, 0);
	buf_len32_end(out, set);
}

static bool has_ranges(Dwarf_Die *cu)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t at = 0;
	for (unsigned n = 0; n < MAX_RANGES && (at = dwarf_ranges(cu, at, &base, &start, &end)) > 0; n++)
		if (end > start)
			return true;
	return false;
}

js_dwarf_scan js_scan_dwarf(const uint8_t *bytes, size_t size, byte_buf *out)
{
	js_dwarf_scan scan = { 0, 0 };
	elf_version(EV_CURRENT);
	/* elf_memory only reads here: the cast drops const for its signature */
	Elf *elf = elf_memory((char *)bytes, size);
	Dwarf *dw = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	Dwarf_CU *cu = NULL;
	Dwarf_Half version;
	uint8_t type;
	Dwarf_Die die;
	for (unsigned n = 0;
	     dw && n < MAX_UNITS && dwarf_get_units(dw, cu, &cu, &version, &type, &die, NULL) == 0; n++) {
		if ((type != DW_UT_compile && type != DW_UT_partial) || !has_ranges(&die))
			continue;
		/* the unit header's offset: its DIE's less the DIE's within it */
		uint64_t info_off = dwarf_dieoffset(&die) - dwarf_cuoffset(&die);
		if (out && info_off <= UINT32_MAX)
			write_set(out, info_off, &die);
		scan.units++;
		Dwarf_Lines *lines;
		size_t nl;
		if (dwarf_getsrclines(&die, &lines, &nl) == 0)
			scan.line_rows += nl;
	}
	dwarf_end(dw);
	elf_end(elf);
	return scan;
}
