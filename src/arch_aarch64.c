/* SPDX-License-Identifier: MIT */
/* arch_aarch64.c - AArch64 frame conventions (DWARF for the Arm 64-bit
 * Architecture, register numbers: x29 29, x30 (lr) 30, sp 31). */
#include "arch.h"
#include "cfi.h"

#include <elf.h>

enum { A64_FP = 29, A64_LR = 30, A64_SP = 31 };

static void a64_cie_initial(const ju_arch *a, byte_buf *b)
{
	cfi_def_cfa(a, b, A64_SP, 0); /* bl leaves sp untouched; lr holds the return */
}

static void a64_fp_saved(const ju_arch *a, byte_buf *b)
{
	cfi_def_cfa_offset(a, b, 16); /* stp x29, x30, [sp, #-16]! */
	cfi_offset(a, b, A64_FP, -16);
	cfi_offset(a, b, A64_LR, -8);
}

static void a64_fp_set(const ju_arch *a, byte_buf *b)
{
	cfi_def_cfa_register(a, b, A64_FP); /* mov x29, sp */
}

static void a64_fp_restored(const ju_arch *a, byte_buf *b)
{
	cfi_def_cfa(a, b, A64_SP, 0); /* ldp x29, x30, [sp], #16 */
	cfi_same_value(b, A64_FP);    /* not DW_CFA_restore: see cfi.c */
	cfi_same_value(b, A64_LR);
}

const ju_arch ju_arch_aarch64 = {
	.name = "aarch64",
	.elf_machine = EM_AARCH64,
	.code_align = 4,
	.data_align = -8,
	.ra_reg = A64_LR,
	.sp_reg = A64_SP,
	.fp_reg = A64_FP,
	.n_regs = 96, /* x0-x30, sp, pc, ..., v0-v31 */
	.entry_cfa_offset = 0,
	.frame_size = 16,
	.ra_rule_in_cie = false,
	.insn_align = 4,
	.cie_initial = a64_cie_initial,
	.fp_saved = a64_fp_saved,
	.fp_set = a64_fp_set,
	.fp_restored = a64_fp_restored,
};
