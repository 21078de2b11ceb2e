/* SPDX-License-Identifier: MIT */
/* arch_x86_64.c - x86-64 frame conventions (System V psABI, DWARF register
 * numbers from its table 3.36: rbp 6, rsp 7, return address 16). */
#include "arch.h"
#include "cfi.h"

#include <dwarf.h>
#include <elf.h>

enum { X86_RBP = 6, X86_RSP = 7, X86_RA = 16 };

static void x86_cie_initial(const ju_arch *a, byte_buf *b)
{
	cfi_def_cfa(a, b, X86_RSP, 8); /* call pushed the return address */
	cfi_offset(a, b, X86_RA, -8);  /* ... at CFA-8 */
}

static void x86_fp_saved(const ju_arch *a, byte_buf *b)
{
	cfi_def_cfa_offset(a, b, 16); /* push %rbp */
	cfi_offset(a, b, X86_RBP, -16);
}

static void x86_fp_set(const ju_arch *a, byte_buf *b)
{
	cfi_def_cfa_register(a, b, X86_RBP); /* mov %rsp, %rbp */
}

static void x86_fp_restored(const ju_arch *a, byte_buf *b)
{
	cfi_def_cfa(a, b, X86_RSP, 8); /* pop %rbp / leave */
	cfi_same_value(b, X86_RBP);    /* not DW_CFA_restore: see cfi.c */
}

const ju_arch ju_arch_x86_64 = {
	.name = "x86-64",
	.elf_machine = EM_X86_64,
	.code_align = 1,
	.data_align = -8,
	.ra_reg = X86_RA,
	.sp_reg = X86_RSP,
	.fp_reg = X86_RBP,
	.n_regs = 67, /* up to the segment and mask registers */
	.entry_cfa_offset = 8,
	.frame_size = 16,
	.ra_rule_in_cie = true,
	.insn_align = 1,
	.cie_initial = x86_cie_initial,
	.fp_saved = x86_fp_saved,
	.fp_set = x86_fp_set,
	.fp_restored = x86_fp_restored,
};
