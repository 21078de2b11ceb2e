/* stencil_cfi.h - read the compiler's call frame information from an object's
 * .eh_frame (build time): the FDE of a function, checked against the
 * standard x86-64 CIE, and the frame rule in force at an instruction.
 */
#ifndef TJ_STENCIL_CFI_H
#define TJ_STENCIL_CFI_H

#include "elfobj.h"

typedef struct eh_fde {
	const uint8_t *insns; /* call frame instructions, trailing DW_CFA_nop removed */
	size_t len;
	uint64_t range;       /* pc_range */
} eh_fde;

/* Find the FDE covering function f and check that its CIE is the standard
 * x86-64 one the jitunwind API assumes (code alignment 1, data alignment -8,
 * return address column 16, initial CFA rsp+8, return address at CFA-8).
 * Returns 0, or -1 with a message. */
int eh_find_fde(const eo_object *o, const eo_func *f, eh_fde *out, char *err, size_t errlen);

/* The rule at code offset `at`, after running the FDE's instructions. */
typedef struct eh_row {
	unsigned cfa_reg;
	int64_t cfa_offset;
	int has_fp, has_ra;        /* rbp / return address saved at CFA + offset */
	int64_t fp_offset, ra_offset;
} eh_row;

int eh_row_at(const eh_fde *fde, uint64_t at, eh_row *row, char *err, size_t errlen);

/* DWARF register numbers for x86-64 (System V ABI, x86-64 supplement,
 * "DWARF Register Number Mapping"). */
enum { EH_REG_RBP = 6, EH_REG_RSP = 7, EH_REG_RA = 16 };

#endif
