/* ehframe.h - call frame information as the tree writes and reads it:
 * .eh_frame records (the LSB's "Exception Frames", 10.6.1, on DWARF 4
 * section 6.4), the .eh_frame_hdr search table (LSB 10.6.2), DW_EH_PE
 * values (LSB 10.5.1) and the one walker over call frame instructions
 * (DWARF 4 section 6.4.2).
 *
 * The library writes its CIE and FDEs with these, jitstack re-emits any
 * JIT's CFI with them, and the library, jitstack and tinyjit's generator
 * each walk instructions with cfa_next and keep only their own policy
 * (which opcodes they accept, what they compute).
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
 * frame: libdw then does not take the pc for a return address). */
typedef struct eh_cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg; /* below 256: version 1, whose return address column is a byte */
	uint8_t fde_enc; /* DW_EH_PE_absptr or DW_EH_PE_pcrel | DW_EH_PE_sdata4 */
	bool signal;
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
/* The bytes eh_fde_begin writes before the instructions. */
size_t eh_fde_header_size(uint8_t enc);

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
