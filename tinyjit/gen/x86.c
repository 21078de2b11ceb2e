/* SPDX-License-Identifier: MIT */
/* x86.c - decode stencils and the shim with capstone (build time): the
 * x86-64 facts of the instruction-set table; the walk that lists
 * frame-pointer writes is disasm.c's.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "disasm.h"
#include "x86.h"

static bool is_fp(unsigned reg)
{
	return reg == X86_REG_RBP || reg == X86_REG_EBP || reg == X86_REG_BP || reg == X86_REG_BPL;
}

static int classify(const cs_insn *in)
{
	static const uint8_t mov_rsp_rbp[2][3] = { { 0x48, 0x89, 0xe5 }, { 0x48, 0x8b, 0xec } };
	if (in->size == 3 &&
	    (memcmp(in->bytes, mov_rsp_rbp[0], 3) == 0 || memcmp(in->bytes, mov_rsp_rbp[1], 3) == 0))
		return ISA_W_SET_FP;
	if (in->size == 1 && (in->bytes[0] == 0x5d /* pop %rbp */ || in->bytes[0] == 0xc9 /* leave */))
		return ISA_W_RESTORE;
	return ISA_W_OTHER;
}

long x86_fp_prologue_set(const uint8_t *code, size_t size)
{
	int std = size >= 4 && code[0] == 0x55 && code[1] == 0x48 &&
		  ((code[2] == 0x89 && code[3] == 0xe5) || (code[2] == 0x8b && code[3] == 0xec));
	return std ? 1 : -1;
}

/* call *reg / call *mem */
static bool is_indirect_call(const cs_insn *in)
{
	if (in->id != X86_INS_CALL)
		return false;
	const cs_x86 *x = &in->detail->x86;
	return x->op_count == 1 && x->operands[0].type != X86_OP_IMM;
}

static const isa_decoder decoder = {
	.arch = CS_ARCH_X86,
	.mode = CS_MODE_64,
	.att = true,
	.is_fp = is_fp,
	.classify = classify,
	.is_indirect_call = is_indirect_call,
};

const isa_ops isa_x86_64 = {
	.name = "x86-64",
	.machine = EM_X86_64,
	.fp_name = "rbp",
	.prologue_text = "push %rbp; mov %rsp, %rbp",
	.decoder = &decoder,
	.fp_prologue_set = x86_fp_prologue_set,
	.dw_fp = 6,
	.dw_sp = 7,
	.dw_ra = 16,
	.api_code_align = 1,
	.api_data_align = -8,
	.entry_cfa_offset = 8,
	.ra_saved_at_entry = 1,
};
