/* SPDX-License-Identifier: MIT */
/* cfi.h - the one call frame information builder (DWARF 4 section 6.4, LSB
 * .eh_frame) behind every channel: in-process unwinders and gdb images get
 * absolute pointers, perf jitdump gets pc-relative ones.
 */
#ifndef JU_CFI_H
#define JU_CFI_H

#include "arch.h"
#include "formats/ehframe.h"
#include "jitunwind.h"

#include <stdint.h>

/* How an FDE stores pc_begin and pc_range: the CIE's DW_EH_PE byte. */
typedef enum {
	/* 8-byte address and range.  Position independent bytes that can be
	 * copied between buffers; what libgcc searches fastest. */
	CFI_ENC_ABS8 = DW_EH_PE_absptr,
	/* For a file whose layout is fixed (perf inject's synthesized ELF). */
	CFI_ENC_PCREL4 = DW_EH_PE_pcrel | DW_EH_PE_sdata4,
} cfi_enc;

/* Opcode emitters.  Offsets are in bytes; they are factored here. */
void cfi_def_cfa(const ju_arch *a, byte_buf *b, unsigned reg, int64_t off);
void cfi_def_cfa_offset(const ju_arch *a, byte_buf *b, int64_t off);
void cfi_def_cfa_register(const ju_arch *a, byte_buf *b, unsigned reg);
void cfi_offset(const ju_arch *a, byte_buf *b, unsigned reg, int64_t cfa_off);
void cfi_advance(const ju_arch *a, byte_buf *b, uint32_t bytes);
void cfi_same_value(byte_buf *b, unsigned reg);
void cfi_remember_state(byte_buf *b);
void cfi_restore_state(byte_buf *b);

/* Write the architecture's CIE; returns its offset in b. */
size_t cfi_write_cie(const ju_arch *a, byte_buf *b, cfi_enc enc);
/* The same with a personality routine (non-zero), whose FDEs carry an LSDA
 * pointer when `lsda`: augmentation "zPLR" or "zPR" (CFI_ENC_ABS8 only). */
size_t cfi_write_cie_personality(const ju_arch *a, byte_buf *b, uint64_t personality, bool lsda);

/* What a scan of one range's instructions found (cfi.c, scan_insns). */
struct insn_scan {
	uint64_t end_loc;    /* offset reached by its advances */
	uint64_t touched[2]; /* registers it gave a rule to (bit per DWARF number) */
};

/* The scans of the instruction lists a context has checked, for the writer
 * and later checks to take instead of reading the lists again: a JIT that
 * copies stencils points many ranges at each stencil's one array, and
 * publishes the same arrays again and again.  Within one call (from one
 * cfi_memo_call to the next) a list is known by its address and length.
 * Across calls it is known by its bytes only, which the table keeps for
 * lists of up to CFI_MEMO_COPY bytes: a caller may write other instructions
 * at the same address between calls.  A full table starts again empty. */
enum { CFI_MEMO_SLOTS = 256, CFI_MEMO_COPY = 40 };
typedef struct cfi_memo {
	uint64_t call;                /* the current call's number */
	size_t n;                     /* entries in use */
	uint8_t slot[CFI_MEMO_SLOTS]; /* entry index + 1, 0 empty */
	struct cfi_memo_entry {
		const uint8_t *p;
		size_t n;
		uint64_t call; /* the last call that scanned the list or compared its bytes */
		struct insn_scan scan;
		uint8_t copy[CFI_MEMO_COPY]; /* the list, when n <= CFI_MEMO_COPY */
	} entry[CFI_MEMO_SLOTS - 1];
} cfi_memo;
void cfi_memo_init(cfi_memo *m);
/* A call begins: the lists the table knows are known by their bytes only. */
void cfi_memo_call(cfi_memo *m);

/* Write the FDEs of one blob at code address `start`, `size` bytes, against
 * the CIE at cie_off.  `base` is the address that offset 0 of b will have
 * (needed for CFI_ENC_PCREL4).  `lsda`: the LSDA pointer its augmentation
 * data carries, for a CIE with 'L'; NULL otherwise.  The frame must have
 * passed cfi_check_frame, with the same `memo` (or NULL) when one is given. */
void cfi_write_blob_fdes(const ju_arch *a, byte_buf *b, size_t cie_off, cfi_enc enc, uint64_t base,
			 uint64_t start, uint64_t size, const ju_frame *f, const uint64_t *lsda,
			 cfi_memo *memo);

/* Validate a frame description for a blob of `size` bytes.  Returns 0 or
 * JU_ECFI with a message in msg (at least 160 bytes).  `memo`, when not
 * NULL, keeps the scans of the instruction lists (see cfi_memo). */
int cfi_check_frame(const ju_arch *a, const ju_frame *f, uint64_t size, cfi_memo *memo, char *msg,
		    size_t msglen);

/* Validate a raw CFA instruction list meant for a range of `len` bytes.
 * Returns 0, or -1 with a message. */
int cfi_check_insns(const ju_arch *a, const uint8_t *p, size_t n, uint64_t len, char *msg, size_t msglen);

/* Rewrite FDEs written with CFI_ENC_ABS8 (a run of them, `n` bytes, in
 * `src`) to CFI_ENC_PCREL4 at the end of b, pointing at the CIE at cie_off,
 * without augmentation data: an LSDA pointer is left out (the CIE at
 * cie_off has no personality: perf unwinds, it throws nothing).  `base` as
 * for cfi_write_blob_fdes. */
void cfi_reencode_fdes(byte_buf *b, size_t cie_off, uint64_t base, const uint8_t *src, size_t n);

#endif
