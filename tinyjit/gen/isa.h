/* SPDX-License-Identifier: MIT */
/* isa.h - what the stencil tools must know about an instruction set (build
 * time), behind one small table per ISA, every table compiled on every
 * host: the frame-pointer writes the validator checks, the standard
 * frame-pointer prologue, the shim's one indirect call, the registers'
 * DWARF numbers and the CIE the jitunwind API assumes for raw CFI.
 */
#ifndef TJ_ISA_H
#define TJ_ISA_H

#include <stddef.h>
#include <stdint.h>

/* An instruction that writes the frame-pointer register (rbp, x29, or an
 * alias of part of it). */
typedef struct isa_write {
	uint64_t offset;
	char text[192]; /* "movq %rsp, %rbp", "sub x29, x21, x9" */
	int kind;       /* ISA_W_* */
} isa_write;

enum {
	ISA_W_OTHER,
	ISA_W_SET_FP,  /* mov %rsp,%rbp; mov x29, sp / add x29, sp, #K */
	ISA_W_RESTORE, /* pop %rbp, leave; ldp x29, x30, [sp...] */
};

/* The ISA's side of the capstone walks (disasm.h). */
typedef struct isa_decoder isa_decoder;

typedef struct isa_ops {
	const char *name;    /* "x86-64", "AArch64" */
	uint16_t machine;    /* EM_* */
	const char *fp_name; /* "rbp", "x29" */
	const char *prologue_text;
	const isa_decoder *decoder;
	/* The offset of the instruction that sets the frame pointer in the
	 * standard prologue the function starts with, or -1 if it has none. */
	long (*fp_prologue_set)(const uint8_t *code, size_t size);
	/* DWARF register numbers (psABI "DWARF Register Number Mapping"). */
	unsigned dw_fp, dw_sp, dw_ra;
	/* The standard CIE the jitunwind API assumes raw CFI to follow
	 * (include/jitunwind.h): alignment factors and the initial CFA. */
	uint64_t api_code_align;
	int64_t api_data_align;
	uint64_t entry_cfa_offset;
	int ra_saved_at_entry; /* x86-64: the call pushed it at CFA-8 */
} isa_ops;

extern const isa_ops isa_x86_64, isa_aarch64;

/* The table for an ELF e_machine, or NULL. */
const isa_ops *isa_for(unsigned machine);

/* Decode code[0..size) completely and list the instructions that write the
 * frame pointer.  Returns their count (at most max stored), or -1 with a
 * message when the bytes do not decode (disasm.c). */
int isa_fp_writes(const isa_ops *isa, const uint8_t *code, size_t size, isa_write *out, int max, char *err,
		  size_t errlen);

/* Offset of the only indirect call in code (blr; call *reg or *mem) and
 * its length; -1 unless there is exactly one (disasm.c). */
long isa_only_indirect_call(const isa_ops *isa, const uint8_t *code, size_t size, size_t *len);

#endif
