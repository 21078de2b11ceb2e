/* SPDX-License-Identifier: MIT */
/* test-libunwind-layout.c - the libunwind channel's own declarations of
 * libunwind's ABI (src/ch_libunwind.h) match libunwind.h, field by field.
 * The checks are static: if this file compiles, they hold.  The library
 * itself never includes libunwind.h, so that it builds without it.
 */
#include "ch_libunwind.h"
#include "jitunwind.h"
#include "unit.h"

#include <stddef.h>

#if __has_include(<libunwind.h>)
#include <libunwind.h>

#define SAME_FIELD(ours, theirs)                                                                             \
	_Static_assert(offsetof(lu_dyn_info, ours) == offsetof(unw_dyn_info_t, theirs) &&                    \
			       sizeof(((lu_dyn_info *)0)->ours) == sizeof(((unw_dyn_info_t *)0)->theirs),    \
		       #ours " matches unw_dyn_info_t." #theirs)

_Static_assert(sizeof(lu_dyn_info) == sizeof(unw_dyn_info_t), "unw_dyn_info_t size");
_Static_assert(sizeof(unw_word_t) == sizeof(uint64_t), "unw_word_t is 64 bits");
_Static_assert((int)LU_FORMAT_REMOTE_TABLE == (int)UNW_INFO_FORMAT_REMOTE_TABLE, "format code");
SAME_FIELD(next, next);
SAME_FIELD(prev, prev);
SAME_FIELD(start_ip, start_ip);
SAME_FIELD(end_ip, end_ip);
SAME_FIELD(gp, gp);
SAME_FIELD(format, format);
SAME_FIELD(pad, pad);
SAME_FIELD(load_offset, load_offset);
SAME_FIELD(rti.name_ptr, u.rti.name_ptr);
SAME_FIELD(rti.segbase, u.rti.segbase);
SAME_FIELD(rti.table_len, u.rti.table_len);
SAME_FIELD(rti.table_data, u.rti.table_data);
/* struct table_entry is private to libunwind (src/dwarf/dwarf_i.h): two
 * int32_t, start_ip_offset then fde_offset. */
_Static_assert(offsetof(lu_entry, start_ip_offset) == 0 && offsetof(lu_entry, fde_offset) == 4 &&
		       sizeof(lu_entry) == 8,
	       "remote table entry layout");

int main(void)
{
	CHECK(sizeof(lu_dyn_info) == sizeof(unw_dyn_info_t), "%zu != %zu", sizeof(lu_dyn_info),
	      sizeof(unw_dyn_info_t));
	return unit_done("libunwind_abi_declarations_match_libunwind_h");
}
#else
int main(void)
{
	UNIT_SKIP("libunwind.h is not installed (package libunwind-dev)");
}
#endif
