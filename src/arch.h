/* SPDX-License-Identifier: MIT */
/* arch.h - what the writers need to know about a machine, as a small ops
 * table.  Every architecture is compiled on every host (as elfutils' backends
 * are), so a cross-arch path cannot rot unbuilt; the host's table is picked at
 * run time by arch_host().
 */
#ifndef JU_ARCH_H
#define JU_ARCH_H

#include "formats/bytes.h"

#include <stdbool.h>

#include <stdint.h>

typedef struct ju_arch {
	const char *name;
	uint16_t elf_machine;     /* EM_* */
	uint8_t code_align;       /* CIE code alignment factor */
	int8_t data_align;        /* CIE data alignment factor */
	uint8_t ra_reg;           /* DWARF column of the return address */
	uint8_t sp_reg;           /* DWARF number of the stack pointer */
	uint8_t fp_reg;           /* DWARF number of the frame pointer */
	uint8_t n_regs;           /* DWARF registers a CFI rule may name */
	uint8_t entry_cfa_offset; /* CFA = sp + this at function entry */
	uint8_t frame_size;       /* bytes pushed by the FP prologue's save */
	uint8_t insn_align;       /* instructions start at multiples of this */
	bool ra_rule_in_cie;      /* the CIE gives the return address a rule */
	/* Emit the CIE's initial instructions: the function-entry frame state. */
	void (*cie_initial)(const struct ju_arch *a, byte_buf *b);
	/* Emit the rules that hold right after the prologue's frame-pointer save,
	 * and right after the frame pointer is set. */
	void (*fp_saved)(const struct ju_arch *a, byte_buf *b);
	void (*fp_set)(const struct ju_arch *a, byte_buf *b);
	/* Emit the rules after the epilogue restored the caller's frame pointer. */
	void (*fp_restored)(const struct ju_arch *a, byte_buf *b);
} ju_arch;

extern const ju_arch ju_arch_x86_64;
extern const ju_arch ju_arch_aarch64;

/* The table for the machine this library runs on, or NULL if unsupported. */
const ju_arch *arch_host(void);

#endif
