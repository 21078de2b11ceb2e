/* SPDX-License-Identifier: MIT */
/* patch.h - apply one relocation to copied stencil code (run time).
 *
 * One function per relocation type, named after it.  `loc` is where the
 * hole is in the copied code, `p` its run-time address, `sa` the value S + A.
 * Each checks that the result fits the field and returns TJ_PATCH_RANGE
 * (without writing) when it does not: in every build, not only in debug.
 * Every architecture's functions are compiled on every host, so the unit
 * test checks them all.
 */
#ifndef TJ_PATCH_H
#define TJ_PATCH_H

#include <stdint.h>

enum { TJ_PATCH_OK = 0, TJ_PATCH_RANGE = -1, TJ_PATCH_TYPE = -2 };

int tj_patch_x86_64_64(uint8_t *loc, uint64_t sa);
int tj_patch_x86_64_32(uint8_t *loc, uint64_t sa);
int tj_patch_x86_64_32s(uint8_t *loc, uint64_t sa);
int tj_patch_x86_64_pc32(uint8_t *loc, uint64_t p, uint64_t sa);
int tj_patch_x86_64_plt32(uint8_t *loc, uint64_t p, uint64_t sa);

/* AArch64: loc is a 32-bit instruction word; only its field changes. */
int tj_patch_aarch64_call26(uint8_t *loc, uint64_t p, uint64_t sa);
int tj_patch_aarch64_jump26(uint8_t *loc, uint64_t p, uint64_t sa);
int tj_patch_aarch64_movw_uabs(uint8_t *loc, unsigned group, uint64_t sa);
int tj_patch_aarch64_adr_prel_pg_hi21(uint8_t *loc, uint64_t p, uint64_t sa);
int tj_patch_aarch64_add_abs_lo12_nc(uint8_t *loc, uint64_t sa);
int tj_patch_aarch64_ldst_abs_lo12_nc(uint8_t *loc, unsigned log2_size, uint64_t sa);

/* Dispatch on enum tj_reloc. */
int tj_patch(int reloc, uint8_t *loc, uint64_t p, uint64_t sa);

#endif
