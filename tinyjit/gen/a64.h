/* SPDX-License-Identifier: MIT */
/* a64.h - the instruction-level facts the stencil tools check on AArch64
 * code, decoded with capstone (build time).  See isa.h.
 */
#ifndef TJ_A64_H
#define TJ_A64_H

#include "isa.h"

/* The offset of the instruction that sets x29 in a standard frame-record
 * prologue at the start of code, or -1:
 *     [sub sp, sp, #N]  stp x29, x30, [sp, #K]   add x29, sp, #K
 *                       stp x29, x30, [sp, #-N]! mov x29, sp
 * x29 must point at the record just stored (AAPCS64 "The Frame Pointer"). */
long a64_fp_prologue_set(const uint8_t *code, size_t size);

#endif
