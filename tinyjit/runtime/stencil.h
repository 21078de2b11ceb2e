/* SPDX-License-Identifier: MIT */
/* stencil.h - the format of a generated stencil table, defined once.
 *
 * The generator (gen/tj_gen.c, build time) writes these structures into a
 * header; the runtime (jit.c) reads them to copy and patch code.  A stencil
 * is the machine code clang made for one opcode's C template, with holes:
 * relocations whose symbol names what the runtime writes there.
 */
#ifndef TJ_STENCIL_H
#define TJ_STENCIL_H

#include <stdint.h>

/* What a hole receives.  The names are the undefined symbols the templates
 * use (stencils/template.h): _JIT_OPERAND is a 64-bit value, _JIT_OPARG and
 * _JIT_OPARG2 are small values that clang may put in 32-bit immediates and
 * displacements, _JIT_INSN is the instruction index reported with errors,
 * _JIT_CONTINUE the next instruction's code and _JIT_TARGET a jump's. */
#define TJ_HOLE_VALUES(X) X(OPERAND) X(OPARG) X(OPARG2) X(INSN) X(CONTINUE) X(TARGET)

enum tj_hole_value {
#define X(name) TJ_HOLE_##name,
	TJ_HOLE_VALUES(X)
#undef X
		TJ_HOLE_EXTERN, /* a run-time function: ext names it */
	TJ_HOLE_NVALUES
};

/* The C functions stencils may call (through a per-function trampoline,
 * since mmap'ed code is not within ±2 GiB of the binary).  The generator
 * rejects any other undefined symbol. */
#define TJ_STENCIL_EXTERNS(X) X(tj_shim_call) X(tj_rt_host) X(tj_rt_fail)

enum tj_extern {
#define X(name) TJ_EXT_##name,
	TJ_STENCIL_EXTERNS(X)
#undef X
		TJ_EXT_COUNT
};

/* x86-64 relocations the runtime can apply (System V ABI, x86-64
 * supplement, table "Relocation Types").  One patch function each. */
enum tj_reloc {
	TJ_R_X86_64_64,    /* S + A, 64 bits */
	TJ_R_X86_64_32,    /* S + A, zero-extended 32 bits */
	TJ_R_X86_64_32S,   /* S + A, sign-extended 32 bits */
	TJ_R_X86_64_PC32,  /* S + A - P, signed 32 bits */
	TJ_R_X86_64_PLT32, /* L + A - P; we have no PLT, so as PC32 */
	/* AArch64 relocations (ELF for the Arm 64-bit Architecture, "Static
	 * AArch64 relocations"): clang-19's -mcmodel=large stencils use the
	 * branches and MOVW ones; the page-relative ones are for the small code
	 * model.  Each patches the field inside a 32-bit instruction word. */
	TJ_R_AARCH64_CALL26,              /* S + A - P, bl: imm26 words, +-128 MiB */
	TJ_R_AARCH64_JUMP26,              /* S + A - P, b: as CALL26 */
	TJ_R_AARCH64_MOVW_UABS_G0_NC,     /* S + A bits 0..15 into movz/movk imm16 */
	TJ_R_AARCH64_MOVW_UABS_G1_NC,     /* bits 16..31 */
	TJ_R_AARCH64_MOVW_UABS_G2_NC,     /* bits 32..47 */
	TJ_R_AARCH64_MOVW_UABS_G3,        /* bits 48..63 (no higher bits to lose) */
	TJ_R_AARCH64_ADR_PREL_PG_HI21,    /* Page(S + A) - Page(P), adrp: +-4 GiB */
	TJ_R_AARCH64_ADD_ABS_LO12_NC,     /* S + A bits 0..11, add imm12 */
	TJ_R_AARCH64_LDST8_ABS_LO12_NC,   /* bits 0..11, ldrb/strb imm12 */
	TJ_R_AARCH64_LDST16_ABS_LO12_NC,  /* bits 1..11: must be 2-aligned */
	TJ_R_AARCH64_LDST32_ABS_LO12_NC,  /* bits 2..11: 4-aligned */
	TJ_R_AARCH64_LDST64_ABS_LO12_NC,  /* bits 3..11: 8-aligned */
	TJ_R_AARCH64_LDST128_ABS_LO12_NC, /* bits 4..11: 16-aligned */
};

typedef struct tj_hole {
	uint16_t offset; /* in the stencil's code */
	uint8_t reloc;   /* enum tj_reloc */
	uint8_t value;   /* enum tj_hole_value */
	uint8_t ext;     /* enum tj_extern, for TJ_HOLE_EXTERN */
	int64_t addend;
} tj_hole;

typedef struct tj_stencil {
	const uint8_t *code;
	uint16_t size; /* bytes to copy: a final `jmp _JIT_CONTINUE` is
			* dropped, the next stencil follows directly */
	uint16_t n_holes;
	const tj_hole *holes;
	const uint8_t *cfi; /* its FDE's call frame instructions */
	uint16_t cfi_len;
	uint8_t has_frame; /* rebuilt with push rbp; mov rbp,rsp */
	uint8_t uses_ext;  /* bit mask of enum tj_extern it calls */
} tj_stencil;

/* One complete build of the stencils (frames=fp or frames=nofp). */
typedef struct tj_stencil_set {
	const char *name;
	uint16_t elf_machine;  /* EM_X86_64 or EM_AARCH64: the code's ISA */
	const tj_stencil *ops; /* indexed by enum tj_op */
	unsigned n_ops;
	unsigned n_with_frame; /* stencils rebuilt with a frame */
	/* The shim's frame at its call into JIT code, from its .eh_frame:
	 * CFA = frame pointer (rbp, x29) + cfa_offset, the caller's frame
	 * pointer at CFA + fp_offset, return address at CFA + ra_offset. */
	int32_t region_cfa_offset, region_fp_offset, region_ra_offset;
} tj_stencil_set;

/* A trampoline, on x86-64: jmp *0(%rip); .quad target (Intel SDM, JMP
 * FF /4); on AArch64: ldr x16, 8; br x16; .quad target (x16 is IP0, the
 * register the AAPCS64 leaves to veneers, and no stencil argument). */
#define TJ_TRAMPOLINE_SIZE 16

#endif
