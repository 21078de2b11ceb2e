/* SPDX-License-Identifier: MIT */
/* disasm.c - the capstone walks every instruction-set table shares (see
 * disasm.h and isa.h).
 *
 * The validator must see every instruction that writes the frame pointer,
 * implicit writes included (pop, leave, xchg; pair loads and writeback
 * forms, writes through w29), so it asks capstone for each instruction's
 * written registers instead of matching mnemonics.
 */
#include <stdio.h>

#include "disasm.h"

int isa_open(const isa_ops *isa, csh *h, char *err, size_t errlen)
{
	const isa_decoder *d = isa->decoder;
	if (cs_open(d->arch, d->mode, h) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone: cannot open an %s decoder", isa->name);
		return -1;
	}
	if (d->att)
		cs_option(*h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	return 0;
}

static bool writes_fp(const isa_decoder *d, csh h, const cs_insn *in)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (cs_regs_access(h, in, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return true; /* unknown: treat as a write, the build then fails loudly */
	for (int i = 0; i < nwr; i++)
		if (d->is_fp(wr[i]))
			return true;
	return false;
}

int isa_fp_writes(const isa_ops *isa, const uint8_t *code, size_t size, isa_write *out, int max, char *err,
		  size_t errlen)
{
	csh h;
	if (isa_open(isa, &h, err, errlen))
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
		if (!writes_fp(isa->decoder, h, in))
			continue;
		if (n < max) {
			out[n].offset = in->address;
			out[n].kind = isa->decoder->classify(in);
			snprintf(out[n].text, sizeof out[n].text, "%s %s", in->mnemonic, in->op_str);
		}
		n++;
	}
	cs_free(in, 1);
	cs_close(&h);
	return n;
}

long isa_only_indirect_call(const isa_ops *isa, const uint8_t *code, size_t size, size_t *len)
{
	char err[128];
	csh h;
	if (isa_open(isa, &h, err, sizeof err))
		return -1;
	cs_insn *in = cs_malloc(h);
	const uint8_t *p = code;
	size_t left = size;
	uint64_t addr = 0;
	long found = -1;
	int count = 0;
	while (left && cs_disasm_iter(h, &p, &left, &addr, in)) {
		if (!isa->decoder->is_indirect_call(in))
			continue;
		found = (long)in->address;
		*len = in->size;
		count++;
	}
	cs_free(in, 1);
	cs_close(&h);
	return count == 1 && left == 0 ? found : -1;
}
