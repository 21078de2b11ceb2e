/* SPDX-License-Identifier: MIT */
/* stencil_cfi.h - read the compiler's call frame information from an object's
 * .eh_frame (build time): the FDE of a function, checked against the
 * architecture's standard CIE, the frame rule in force at an instruction,
 * and the FDE's instructions rewritten for the CIE the jitunwind API
 * assumes.
 */
#ifndef TJ_STENCIL_CFI_H
#define TJ_STENCIL_CFI_H

#include "elfobj.h"
#include "isa.h"

typedef struct eh_fde {
	const isa_ops *isa;
	const uint8_t *insns; /* call frame instructions, trailing DW_CFA_nop removed */
	size_t len;
	uint64_t range;      /* pc_range */
	uint64_t code_align; /* its CIE's factors */
	int64_t data_align;
	int wide_pc; /* pc_begin and pc_range are 8 bytes (sdata8) */
} eh_fde;

/* Find the FDE covering function f and check that its CIE is the
 * architecture's standard one: on x86-64 the one the jitunwind API assumes
 * (code alignment 1, data alignment -8, return address column 16, initial
 * CFA rsp+8, return address at CFA-8); on AArch64 return address column 30
 * and initial CFA sp+0, with any alignment factors (clang-19 writes 1 and
 * -4; eh_fde_rebase converts).  Returns 0, or -1 with a message. */
int eh_find_fde(const eo_object *o, const eo_func *f, eh_fde *out, char *err, size_t errlen);

/* The rule at code offset `at`, after running the FDE's instructions. */
typedef struct eh_row {
	unsigned cfa_reg;
	int64_t cfa_offset;
	int has_fp, has_ra; /* frame pointer / return address saved at CFA + offset */
	int64_t fp_offset, ra_offset;
} eh_row;

int eh_row_at(const eh_fde *fde, uint64_t at, eh_row *row, char *err, size_t errlen);

/* The FDE's instructions as they read after the API's standard CIE
 * (isa->api_code_align, api_data_align): advances and saved-register
 * offsets refactored, and DW_CFA_restore written as DW_CFA_same_value (the
 * API's CIE gives no register but the CFA a rule; libjitunwind avoids
 * DW_CFA_restore for libgcc's and lldb's sake, see src/cfi.c).  When the
 * factors already agree the bytes are copied unchanged.  Returns 0, or -1
 * with a message (an offset the API's factors cannot express, an
 * instruction it does not know). */
int eh_fde_rebase(const eh_fde *fde, uint8_t *out, size_t cap, size_t *len, char *err, size_t errlen);

#endif
