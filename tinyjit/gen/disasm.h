/* SPDX-License-Identifier: MIT */
/* disasm.h - capstone behind the instruction-set tables (build time): what
 * the shared walks need to know of an ISA's decoder, and the walks.
 * Included by the ISA files (x86.c, a64.c); the rest of the tools see only
 * isa.h.
 */
#ifndef TJ_DISASM_H
#define TJ_DISASM_H

#include <capstone/capstone.h>
#include <stdbool.h>

#include "isa.h"

struct isa_decoder {
	cs_arch arch;
	cs_mode mode;
	bool att; /* the instructions' text in AT&T syntax */
	/* reg (a capstone register) is the frame pointer or a part of it */
	bool (*is_fp)(unsigned reg);
	/* The ISA_W_* kind of an instruction that writes the frame pointer. */
	int (*classify)(const cs_insn *in);
	/* a call through a register or memory (the shim's one call) */
	bool (*is_indirect_call)(const cs_insn *in);
};

/* Open capstone for isa, instruction details on.  Returns 0, or -1 with a
 * message. */
int isa_open(const isa_ops *isa, csh *h, char *err, size_t errlen);

#endif
