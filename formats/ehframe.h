/* SPDX-License-Identifier: MIT */
/* ehframe.h - call frame information as the tree writes and reads it:
 * .eh_frame records (the LSB's "Exception Frames", 10.6.1, on DWARF 4
 * section 6.4), the .eh_frame_hdr search table (LSB 10.6.2), DW_EH_PE
 * values (LSB 10.5.1) and the one walker over call frame instructions
 * (DWARF 4 section 6.4.2).
 *
 * The library writes its CIE and FDEs with these, jitstack re-emits any
 * JIT's CFI with them; tinyjit's generator and the matrix's image reader
 * take .eh_frame records apart with eh_next, eh_cie_read and eh_fde_read;
 * and the library, jitstack and tinyjit's generator each walk instructions
 * with cfa_next and keep only their own policy (which opcodes they accept,
 * what they compute).
 */
#ifndef FMT_EHFRAME_H
#define FMT_EHFRAME_H

#include "bytes.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef DW_CFA_GNU_args_size
#define DW_CFA_GNU_args_size 0x2e
#endif

/* The CIE id field: 0 in .eh_frame, all ones in .debug_frame. */
#define EH_CIE_ID 0u
#define DEBUG_FRAME_CIE_ID 0xffffffffu
/* A unit_length of all ones announces 64-bit DWARF, which no JIT writes. */
#define DWARF64_ESCAPE 0xffffffffu

/* ---- writing .eh_frame ------------------------------------------------------ */

/* What a CIE we write says.  Its augmentation is "zR" ("zRS" for a signal
 * frame: libdw then does not take the pc for a return address), "zPR" with a
 * personality routine and "zPLR" when its FDEs also carry an LSDA, the
 * letters in the order GCC writes them. */
typedef struct eh_cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg; /* below 256: version 1, whose return address column is a byte */
	uint8_t fde_enc; /* DW_EH_PE_absptr or DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
	bool signal;
	/* 'P': the personality routine's address, stored DW_EH_PE_absptr (8
	 * bytes, as LuaJIT's own CIE stores it); 0: none. */
	uint64_t personality;
	/* 'L': every FDE of the CIE carries an LSDA pointer, DW_EH_PE_absptr
	 * (eh_fde_begin_lsda).  Only with a personality, which reads it. */
	bool lsda;
} eh_cie;

/* Open a CIE at the end of b and write it up to its initial instructions,
 * which the caller writes next; close it with eh_entry_end.  Returns its
 * offset in b. */
size_t eh_cie_begin(byte_buf *b, const eh_cie *c);

/* Open an FDE for [pc, pc + range) against the CIE at cie_off, its pc_begin
 * in `enc` (as eh_cie.fde_enc); `base` is the address offset 0 of b will have
 * (the base of DW_EH_PE_pcrel).  The caller writes the instructions and
 * closes it with eh_entry_end.  Returns its offset in b. */
size_t eh_fde_begin(byte_buf *b, size_t cie_off, uint8_t enc, uint64_t base, uint64_t pc, uint64_t range);
/* The same against a CIE with 'L': its augmentation data is the LSDA's
 * 8-byte absolute address (NULL: none, for a CIE without 'L'). */
size_t eh_fde_begin_lsda(byte_buf *b, size_t cie_off, uint8_t enc, uint64_t base, uint64_t pc, uint64_t range,
			 const uint64_t *lsda);

/* Pad the entry that began at `entry` with DW_CFA_nop to a multiple of 8,
 * as GCC does (so FDEs can be copied between buffers and stay aligned), and
 * patch its length. */
void eh_entry_end(byte_buf *b, size_t entry);

/* Byte offsets inside an FDE written by eh_fde_begin. */
enum {
	FDE_OFF_CIE_PTR = 4,
	FDE_OFF_PC_BEGIN = 8,
	FDE_ABS8_OFF_RANGE = 16,
	FDE_PCREL4_OFF_RANGE = 12,
};
/* The bytes eh_fde_begin writes before the instructions (eh_fde_begin_lsda:
 * EH_FDE_LSDA_LEN more).  The augmentation data's length is the last of
 * them, at eh_fde_header_size(enc) - 1. */
size_t eh_fde_header_size(uint8_t enc);
#define EH_FDE_LSDA_LEN 8

/* Move the location of the instructions that follow `units` code
 * alignment units on (DWARF 4 section 6.4.2.1), in the shortest of the
 * DW_CFA_advance_loc forms; nothing for 0. */
void cfa_advance(byte_buf *b, uint64_t units);

/* ---- writing .eh_frame_hdr ---------------------------------------------------- */

/* The header for n FDEs, placed at hdr_addr, of the .eh_frame at eh_addr;
 * then the caller adds n entries, sorted by pc, each FDE's pc_begin and
 * address within 2 GiB of hdr_addr. */
void eh_hdr_begin(byte_buf *b, uint64_t hdr_addr, uint64_t eh_addr, size_t n);
void eh_hdr_entry(byte_buf *b, uint64_t hdr_addr, uint64_t pc, uint64_t fde_addr);
static inline size_t eh_hdr_size(size_t n)
{
	return 4 + 4 + 4 + n * 8;
}

/* ---- reading ------------------------------------------------------------------- */

/* A value stored in the format part (low four bits) of a DW_EH_PE encoding;
 * the application part (pcrel, textrel...) is the caller's.  false for a
 * format that does not exist, or bytes cut short. */
bool rd_eh_value(byte_rd *r, uint8_t enc, uint64_t *v);

/* ---- reading .eh_frame records ---------------------------------------------------- */

/* An .eh_frame section as read: its bytes and the addresses its pointers
 * may be relative to.  Every field of every record is checked against
 * [data, data + size): the bytes may be hostile (another process's memory,
 * a core, a JIT's image). */
typedef struct eh_section {
	const uint8_t *data;
	size_t size;
	uint64_t addr;      /* where data is in the target: DW_EH_PE_pcrel's base */
	uint64_t text_addr; /* .text's address, DW_EH_PE_textrel's base; 0: no textrel */
} eh_section;

#define EH_NO_CIE SIZE_MAX

/* One record, sized.  A 32-bit length of DWARF64_ESCAPE is followed by a
 * 64-bit one; the CIE id and the CIE pointer after it stay 4 bytes, as the
 * LSB (10.6.1) lists them and LLVM's libunwind reads them. */
typedef struct eh_rec {
	size_t off;     /* its length field, in the section */
	size_t id_off;  /* its CIE id (a CIE) or CIE pointer (an FDE) */
	size_t end;     /* one past it: the next record */
	bool is_cie;    /* the id is EH_CIE_ID */
	size_t cie_off; /* an FDE's CIE, at id_off less the pointer; EH_NO_CIE when that is before the section
			 */
} eh_rec;

/* The record at *off, which then moves past it.  Returns 1 with *r, 0 at
 * the end (the zero-length terminator, or fewer than 4 bytes left), -1 when
 * the length runs past the section or cannot hold the id. */
int eh_next(const eh_section *s, size_t *off, eh_rec *r);

/* A CIE's fields (LSB 10.6.1.1). */
typedef struct eh_cie_info {
	uint8_t version;           /* 1 or 3 */
	const char *aug;           /* the augmentation string, in the section */
	uint64_t code_align;       /* code alignment factor */
	int64_t data_align;        /* data alignment factor */
	uint64_t ra_reg;           /* return address column */
	bool has_z;                /* 'z': augmentation data follows, in the CIE and its FDEs */
	size_t aug_len;            /* the augmentation data's length */
	uint8_t fde_enc;           /* 'R': how FDEs store pc_begin and pc_range; else DW_EH_PE_absptr */
	uint8_t lsda_enc;          /* 'L': the FDEs' LSDA pointers; else DW_EH_PE_omit */
	uint8_t pers_enc;          /* 'P': how the personality pointer is stored; else DW_EH_PE_omit */
	uint64_t pers_raw;         /* 'P': the pointer as stored (eh_cie_personality resolves it) */
	const uint8_t *pers_field; /* 'P': where it is stored, in the augmentation data */
	bool signal;               /* 'S': a signal frame, the pc is not a return address */
	const uint8_t *insns;      /* the initial instructions, to the end of the CIE (padding included) */
	size_t insns_len;
} eh_cie_info;

/* The augmentation data of a "z..." CIE (aug: its augmentation string;
 * data, len: the bytes its length covers), into c's fde_enc, lsda_enc and
 * signal (set the defaults first).  Only letters whose data can be sized
 * (z R L P S B G) and a personality pointer rd_eh_value reads; false
 * otherwise, or when the data is cut short.  libdw leaves this to its
 * callers (Dwarf_CIE's augmentation_data). */
bool eh_augmentation_read(const char *aug, const uint8_t *data, size_t len, eh_cie_info *c);

/* The personality routine of a CIE read by eh_cie_read from s: its
 * address, the pointer's base (pcrel, textrel) applied.  *indirect says
 * that the address is that of a pointer to the routine (DW_EH_PE_indirect,
 * GCC's choice for position-independent code), which the caller reads in
 * the target's memory.  false for no 'P', or a base that cannot be applied
 * (datarel, funcrel, aligned). */
bool eh_cie_personality(const eh_section *s, const eh_cie_info *c, uint64_t *addr, bool *indirect);

/* Read the CIE whose record starts at `off`.  false for no CIE there (an
 * FDE, a bad length, EH_NO_CIE), a version other than 1 or 3, an
 * augmentation it cannot size (a letter other than z R L P S B G, or any
 * without 'z'), an FDE encoding it cannot read, or fields cut short. */
bool eh_cie_read(const eh_section *s, size_t off, eh_cie_info *c);

/* An FDE's fields (LSB 10.6.1.2). */
typedef struct eh_fde_info {
	uint64_t pc_begin;   /* resolved: absolute, pc-relative or text-relative */
	uint64_t pc_range;   /* 0 for an unpublished tombstone (docs/OUTSIDE_READER.md) */
	size_t pc_begin_off; /* where pc_begin is stored (a relocatable object relocates it) */
	/* 'L': the LSDA's address, its base applied (an address of a pointer
	 * to it under DW_EH_PE_indirect); 0: none (a stored 0 is "none", as
	 * libgcc and LLVM's libunwind read it, whatever the base) */
	uint64_t lsda;
	const uint8_t *insns; /* the instructions, to the end of the FDE (padding included) */
	size_t insns_len;
} eh_fde_info;

/* Read FDE r against its CIE c (eh_cie_read of r->cie_off).  false when
 * fields are cut short or pc_begin's encoding is indirect or relative to
 * anything but nothing, the field (pcrel) or s->text_addr (textrel), or the
 * LSDA pointer (CIE 'L') cannot be read or based the same way. */
bool eh_fde_read(const eh_section *s, const eh_rec *r, const eh_cie_info *c, eh_fde_info *f);

/* One call frame instruction, decoded. */
typedef struct cfa_insn {
	/* The opcode; of the three that carry an operand in their low six bits
	 * (DW_CFA_advance_loc, DW_CFA_offset, DW_CFA_restore) only the high
	 * two bits, the operand going to `advance` or `reg`. */
	uint8_t op;
	uint64_t reg;         /* the register operand (0 if none) */
	uint64_t reg2;        /* DW_CFA_register's second register */
	uint64_t advance;     /* the advance_loc forms: code alignment units */
	uint64_t uarg;        /* an unsigned operand as stored (factored if the opcode says) */
	int64_t sarg;         /* the signed offset of the _sf forms */
	const uint8_t *block; /* the DWARF expression of the expression forms */
	size_t block_len;
	uint64_t loc;          /* DW_CFA_set_loc's operand as stored */
	const uint8_t *loc_at; /* and where it is */
	const uint8_t *start;  /* the instruction's first byte */
} cfa_insn;

/* Decode the instruction at r into *in.  `loc_enc` tells how DW_CFA_set_loc
 * stores its operand (a DW_EH_PE format; DW_EH_PE_omit: not allowed).
 * false at an opcode it cannot size, with r->failed unset and in->op set,
 * and when operands are cut short, with r->failed set. */
bool cfa_next(byte_rd *r, uint8_t loc_enc, cfa_insn *in);

#endif
