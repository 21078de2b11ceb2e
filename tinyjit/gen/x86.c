/* x86.c - decode stencils and the shim with capstone (build time).
 *
 * The frame-pointer validator must see every instruction that writes rbp,
 * including implicit writes (pop, leave, xchg), so it asks capstone for
 * each instruction's written registers instead of matching mnemonics.
 */
#include <capstone/capstone.h>
#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "x86.h"

static int open_cs(csh *h, char *err, size_t errlen)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone: cannot open an x86-64 decoder");
		return -1;
	}
	cs_option(*h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

static int writes_fp(csh h, const cs_insn *in)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (cs_regs_access(h, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 1; /* unknown: treat as a write, the build then fails loudly */
	for (int i = 0; i < nwr; i++)
		if (wr[i] == X86_REG_RBP || wr[i] == X86_REG_EBP || wr[i] == X86_REG_BP ||
		    wr[i] == X86_REG_BPL)
			return 1;
	return 0;
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

int x86_fp_writes(const uint8_t *code, size_t size, isa_write *out, int max, char *err, size_t errlen)
{
	csh h;
	if (open_cs(&h, err, errlen))
		return -1;
	cs_insn *in = cs_malloc(h);
	const uint8_t *p = code;
	size_t left = size;
	uint64_t addr = 0;
	int n = 0;
	while (left) {
		uint64_t at = addr;
		if (!cs_disasm_iter(h, &p, &left, &addr, in)) {
			snprintf(err, errlen, "cannot decode the instruction at offset 0x%llx",
				 (unsigned long long)at);
			n = -1;
			break;
		}
		if (!writes_fp(h, in))
			continue;
		if (n < max) {
			out[n].offset = in->address;
			out[n].kind = classify(in);
			snprintf(out[n].text, sizeof out[n].text, "%s %s", in->mnemonic, in->op_str);
		}
		n++;
	}
	cs_free(in, 1);
	cs_close(&h);
	return n;
}

long x86_fp_prologue_set(const uint8_t *code, size_t size)
{
	int std = size >= 4 && code[0] == 0x55 && code[1] == 0x48 &&
		  ((code[2] == 0x89 && code[3] == 0xe5) || (code[2] == 0x8b && code[3] == 0xec));
	return std ? 1 : -1;
}

long x86_only_indirect_call(const uint8_t *code, size_t size, size_t *len)
{
	char err[128];
	csh h;
	if (open_cs(&h, err, sizeof err))
		return -1;
	cs_insn *in = cs_malloc(h);
	const uint8_t *p = code;
	size_t left = size;
	uint64_t addr = 0;
	long found = -1;
	int count = 0;
	while (left && cs_disasm_iter(h, &p, &left, &addr, in)) {
		if (in->id != X86_INS_CALL)
			continue;
		const cs_x86 *x = &in->detail->x86;
		if (x->op_count == 1 && x->operands[0].type != X86_OP_IMM) {
			found = (long)in->address;
			*len = in->size;
			count++;
		}
	}
	cs_free(in, 1);
	cs_close(&h);
	return count == 1 && left == 0 ? found : -1;
}

const isa_ops isa_x86_64 = {
	.name = "x86-64",
	.machine = EM_X86_64,
	.fp_name = "rbp",
	.prologue_text = "push %rbp; mov %rsp, %rbp",
	.fp_writes = x86_fp_writes,
	.fp_prologue_set = x86_fp_prologue_set,
	.only_indirect_call = x86_only_indirect_call,
	.dw_fp = 6,
	.dw_sp = 7,
	.dw_ra = 16,
	.api_code_align = 1,
	.api_data_align = -8,
	.entry_cfa_offset = 8,
	.ra_saved_at_entry = 1,
};
