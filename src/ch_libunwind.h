/* SPDX-License-Identifier: MIT */
/* ch_libunwind.h - the part of nongnu libunwind's ABI the libunwind channel
 * uses, declared here so the library neither includes nor links libunwind.
 * tests/unit/test-libunwind-layout.c checks it against libunwind.h.
 */
#ifndef JU_CH_LIBUNWIND_H
#define JU_CH_LIBUNWIND_H

#include <stdint.h>

/* unw_dyn_info_t (libunwind-dynamic.h) and the remote table's entry
 * (struct table_entry, dwarf_i.h) for the 64-bit targets, x86-64 and AArch64,
 * where unw_word_t is 64 bits. */
enum { LU_FORMAT_REMOTE_TABLE = 2 };

typedef struct lu_dyn_info {
	struct lu_dyn_info *next, *prev; /* owned by libunwind while registered */
	uint64_t start_ip, end_ip;       /* [start_ip, end_ip): our arena's hull */
	uint64_t gp;                     /* for DW_EH_PE_datarel; we use absptr */
	int32_t format;
	int32_t pad;
	uint64_t load_offset;
	struct { /* unw_dyn_remote_table_info_t */
		uint64_t name_ptr;
		uint64_t segbase;   /* base of both offsets of the table */
		uint64_t table_len; /* in unw_word_t units */
		uint64_t table_data;
	} rti;
} lu_dyn_info;

typedef struct lu_entry {
	int32_t start_ip_offset;
	int32_t fde_offset;
} lu_entry;

_Static_assert(sizeof(lu_dyn_info) == 88, "unw_dyn_info_t is 88 bytes on 64-bit targets");
_Static_assert(sizeof(lu_entry) % sizeof(uint64_t) == 0, "table_len counts unw_word_t units");

#endif
