/* SPDX-License-Identifier: MIT */
/* a64.c - decode AArch64 stencils and the shim with capstone (build time):
 * the AArch64 facts of the instruction-set table; the walk that lists
 * frame-pointer writes is disasm.c's.
 */
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "a64.h"
#include "disasm.h"

static bool is_fp(unsigned reg)
{
	return reg == ARM64_REG_X29 || reg == ARM64_REG_W29;
}

static int op_reg(const cs_arm64 *a, int i, unsigned reg)
{
	return a->op_count > i && a->operands[i].type == ARM64_OP_REG && a->operands[i].reg == reg;
}

/* x29 = sp + K (mov x29, sp is add x29, sp, #0): K, or -1 if not that. */
static long set_fp_offset(const cs_insn *in)
{
	const cs_arm64 *a = &in->detail->arm64;
	if (!op_reg(a, 0, ARM64_REG_X29) || !op_reg(a, 1, ARM64_REG_SP))
		return -1;
	if (in->id == ARM64_INS_MOV && a->op_count == 2)
		return 0;
	if (in->id == ARM64_INS_ADD && a->op_count == 3 && a->operands[2].type == ARM64_OP_IMM &&
	    a->operands[2].shift.type == ARM64_SFT_INVALID && a->operands[2].imm >= 0)
		return (long)a->operands[2].imm;
	return -1;
}

/* stp x29, x30, [sp, #K] or ldp x29, x30, [sp...]: the pair's memory
 * operand, with sp its base. */
static const cs_arm64_op *fp_pair_on_stack(const cs_insn *in, unsigned id)
{
	const cs_arm64 *a = &in->detail->arm64;
	if (in->id != id || !op_reg(a, 0, ARM64_REG_X29) || !op_reg(a, 1, ARM64_REG_X30) || a->op_count < 3 ||
	    a->operands[2].type != ARM64_OP_MEM || a->operands[2].mem.base != ARM64_REG_SP ||
	    a->operands[2].mem.index != ARM64_REG_INVALID)
		return NULL;
	return &a->operands[2];
}

static int classify(const cs_insn *in)
{
	if (set_fp_offset(in) >= 0)
		return ISA_W_SET_FP;
	if (fp_pair_on_stack(in, ARM64_INS_LDP))
		return ISA_W_RESTORE;
	return ISA_W_OTHER;
}

long a64_fp_prologue_set(const uint8_t *code, size_t size)
{
	char err[128];
	csh h;
	if (isa_open(&isa_aarch64, &h, err, sizeof err))
		return -1;
	cs_insn *in = cs_malloc(h);
	const uint8_t *p = code;
	size_t left = size;
	uint64_t addr = 0;
	long found = -1, record = -1; /* where the stp put x29, from sp */
	for (int i = 0; i < 3 && left && cs_disasm_iter(h, &p, &left, &addr, in); i++) {
		const cs_arm64 *a = &in->detail->arm64;
		const cs_arm64_op *m = fp_pair_on_stack(in, ARM64_INS_STP);
		if (i == 0 && in->id == ARM64_INS_SUB && op_reg(a, 0, ARM64_REG_SP) &&
		    op_reg(a, 1, ARM64_REG_SP))
			continue; /* sub sp, sp, #N: the frame's space */
		if (record < 0 && m && m->mem.disp >= 0 && !a->writeback) {
			record = m->mem.disp;
			continue;
		}
		if (record < 0 && m && m->mem.disp < 0 && a->writeback) {
			record = 0; /* pre-indexed: the record is at the new sp */
			continue;
		}
		if (record >= 0 && set_fp_offset(in) == record)
			found = (long)in->address;
		break;
	}
	cs_free(in, 1);
	cs_close(&h);
	return found;
}

/* AArch64 DWARF numbers: x29 29, sp 31, the return address column x30 (lr)
 * (DWARF for the Arm 64-bit Architecture).  The API's standard CIE: code
 * alignment 4, data alignment -8, CFA = sp + 0 at entry, the return address
 * still in lr. */
/* blr: the one call a stencil makes through a register */
static bool is_indirect_call(const cs_insn *in)
{
	return in->id == ARM64_INS_BLR;
}

static const isa_decoder decoder = {
	.arch = CS_ARCH_ARM64,
	.mode = CS_MODE_ARM,
	.att = false,
	.is_fp = is_fp,
	.classify = classify,
	.is_indirect_call = is_indirect_call,
};

const isa_ops isa_aarch64 = {
	.name = "AArch64",
	.machine = EM_AARCH64,
	.fp_name = "x29",
	.prologue_text = "stp x29, x30, [sp, #K]; add x29, sp, #K",
	.decoder = &decoder,
	.fp_prologue_set = a64_fp_prologue_set,
	.dw_fp = 29,
	.dw_sp = 31,
	.dw_ra = 30,
	.api_code_align = 4,
	.api_data_align = -8,
	.entry_cfa_offset = 0,
	.ra_saved_at_entry = 0,
};
