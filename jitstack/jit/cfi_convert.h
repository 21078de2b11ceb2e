/* SPDX-License-Identifier: MIT */
/* cfi_convert.h - turn the call frame information of a JIT image, whatever its
 * shape, into one canonical .eh_frame that libdw reads at any address.
 *
 * JITs register CFI in many encodings: absolute pointers (jitunwind),
 * pc-relative ones that a relocatable object's relocations complete (LLVM),
 * offsets from .text (LuaJIT's DW_EH_PE_textrel, which libdw does not
 * resolve), or a .debug_frame.  This reads the records with libdw
 * (dwarf_next_cfi), decodes each FDE's pointers in its CIE's encoding with
 * explicit bounds, keeps the FDEs that describe code inside the image's hull, and
 * re-emits them with 8-byte absolute pointers, sorted, plus an
 * .eh_frame_hdr search table, so libdw neither depends on where the section
 * sits nor scans it linearly.  Instructions are copied unchanged after being
 * validated opcode by opcode (DW_CFA_set_loc operands are re-encoded).
 *
 * An FDE whose pc_range is 0 is a tombstone (docs/OUTSIDE_READER.md: a blob
 * unpublished in place) and is treated as absent; its pc_begin is reported
 * so the symbol it described can be dropped too.
 */
#ifndef JS_CFI_CONVERT_H
#define JS_CFI_CONVERT_H

#include "formats/ehframe.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One CFI section of the image, relocated already. */
typedef struct cfi_src {
	const uint8_t *data;
	size_t size;
	uint64_t addr;    /* its address: the base of DW_EH_PE_pcrel */
	bool debug_frame; /* .debug_frame rules (CIE id ~0, absolute addresses) */
} cfi_src;

typedef struct cfi_ctx {
	uint64_t lo, hi;    /* the code hull: FDEs outside it are dropped */
	uint64_t text_addr; /* the base of DW_EH_PE_textrel (0: unsupported) */
} cfi_ctx;

typedef struct cfi_fde_out {
	uint64_t pc, range;
	size_t off; /* offset of the FDE in the output .eh_frame */
} cfi_fde_out;

typedef struct cfi_out {
	byte_buf eh;      /* the canonical .eh_frame, terminator included */
	cfi_fde_out *fde; /* sorted by pc, disjoint */
	size_t n_fde;
	uint64_t *tomb; /* pc_begin of each tombstone */
	size_t n_tomb;
	/* what was dropped and why, for the image's note */
	unsigned long n_outside, n_invalid, n_overlap, n_bad_cie;
	bool truncated; /* a section ended in the middle of a record */
} cfi_out;

/* Convert.  Returns 0 (possibly with nothing kept) or -1 when out of memory. */
int cfi_convert(const cfi_src *src, size_t n_src, const cfi_ctx *ctx, cfi_out *out);
void cfi_out_free(cfi_out *o);

/* Size of the .eh_frame_hdr that cfi_write_hdr writes for o. */
size_t cfi_hdr_size(const cfi_out *o);
/* Write the .eh_frame_hdr (LSB 10.6.2) for o's .eh_frame placed at eh_addr,
 * the header at hdr_addr; both within 2 GiB of every FDE's pc. */
void cfi_write_hdr(byte_buf *b, const cfi_out *o, uint64_t hdr_addr, uint64_t eh_addr);

#endif
