/* SPDX-License-Identifier: MIT */
/* image.h - the in-memory ELF object that describes one arena.
 *
 * An ET_REL file, as the GDB JIT interface expects, laid out as
 *
 *   Ehdr | .eh_frame | .symtab | .strtab | .debug_abbrev | .debug_info |
 *   .debug_aranges | .debug_line | .shstrtab | section headers
 *
 * .text is SHT_NOBITS with sh_addr at the real code (gdb and lldb take
 * section addresses as load addresses); symbols are section-relative (gdb
 * prints `??` for absolute ones); .eh_frame has its real address in sh_addr
 * and absolute pointers, so the same bytes serve libgcc, LLVM libunwind and
 * libunwind, which read them in place.  Each blob with a line table gets a
 * DWARF 4 compile unit with one subprogram, an address range set (libdw and
 * libdwfl find a pc's unit only through .debug_aranges) and its own
 * .debug_line unit.  A blob with guest frames (ju_inline) has the inline
 * tree in its unit: such a unit is written once, when the blob is staged,
 * and copied into every image that holds the blob.
 */
#ifndef JU_IMAGE_H
#define JU_IMAGE_H

#include "internal.h"

enum image_section {
	SEC_NULL,
	SEC_TEXT,
	SEC_EH_FRAME,
	SEC_SYMTAB,
	SEC_STRTAB,
	SEC_DEBUG_ABBREV,
	SEC_DEBUG_INFO,
	SEC_DEBUG_ARANGES,
	SEC_DEBUG_LINE,
	SEC_SHSTRTAB,
	SEC_COUNT
};

/* A record and the buffer its offsets point into; `fde`, when not NULL,
 * is where its FDE is instead (an arena record whose name and lines moved to
 * a side block when its slot was reused: see image_src). */
typedef struct src_rec {
	const blob_rec *rec;
	const uint8_t *base;
	const uint8_t *fde;
} src_rec;

/* Record k of an arena as a source for an image: its name and line unit are
 * in the arena's image, or in a side block when its slot was reused (its FDE
 * then stays in the image). */
static inline void image_src(const arena *a, size_t k, src_rec *out)
{
	const blob_rec *r = &a->recs[k];
	const uint8_t *side = a->side ? a->side[k] : NULL;
	*out = (src_rec){ r, side ? side : a->image, side ? a->image + r->fde_off : NULL };
}

/* Bytes an FDE of `len` bytes takes in an image: rounded up to 16, so
 * that a freed slot can take a new blob whose FDE is a little longer. */
static inline uint32_t image_slot_len(uint32_t len)
{
	return (len + 15u) & ~15u;
}

/* Allocator for images: malloc, or mmap close to `near` (libunwind needs its
 * FDEs within 2 GiB of the code). */
typedef struct image_alloc {
	bool near_code;
} image_alloc;

/* Build an image for `n` records (sorted by start, none dead) into a new
 * arena *out (recs, lo/hi, image and section offsets set; channel states
 * NULL).  `cies` holds the personality CIEs the records name (blob_rec.cie);
 * the image's .eh_frame has the standard CIE, then one CIE per key a record
 * names.  Returns 0 or JU_ENOMEM / JU_ERANGE. */
int image_build(const ju_arch *arch, const cie_set *cies, const src_rec *src, size_t n, image_alloc alloc,
		arena **out);
/* Build just the ELF image for `n` records (sorted, none dead), malloc'd:
 * what the gdb channel registers for a chunk of an arena. */
int image_build_bytes(const ju_arch *arch, const cie_set *cies, const src_rec *src, size_t n, uint8_t **image,
		      size_t *size);
/* Free an arena's image and records (not its channel states).  A channel
 * that must keep the image longer (gdb: outside readers) takes it from the
 * arena (a->image = NULL) and frees it later with image_release. */
void image_free(arena *a);
void image_release(uint8_t *image, size_t size, bool mapped);

/* Write a DWARF 4 .debug_line unit for a blob at `start` (the whole unit,
 * header included).  Lines must have passed image_check_lines. */
void image_write_line_unit(byte_buf *b, const char *file, const ju_line *lines, size_t n, uint64_t start,
			   uint64_t size);

/* What the DWARF of a blob's guest frames (ju_blob.inlines, checked by
 * core.c) is made of: the files of its line unit (files[0] the blob's) and
 * the distinct guest functions, a (name, file) pair each. */
typedef struct inline_plan {
	const char **files;
	size_t n_files;
	uint32_t *file;      /* per inline: index of its own file in files */
	uint32_t *call_file; /* per inline: index of the file of its call */
	uint32_t *fn;        /* per inline: its function */
	uint32_t *fn_first;  /* per function: the first inline of it */
	uint32_t *fn_off;    /* per function: its DIE's offset in the unit */
	size_t n_fns;
	uint32_t *row_file; /* per line row: the file of the innermost inline over it */
} inline_plan;

/* 0 or JU_ENOMEM (no message); image_plan_free frees it either way. */
int image_plan_inlines(const ju_blob *b, inline_plan *p);
void image_plan_free(inline_plan *p);
/* A blob's line unit with the files of its guest frames: each row in the
 * file of the innermost inline over it. */
void image_write_inline_line_unit(byte_buf *b, const ju_blob *blob, const inline_plan *p, uint64_t start);
/* Its compile unit: the blob's subprogram with the tree of
 * DW_TAG_inlined_subroutine under it, after an abstract DW_TAG_subprogram
 * per guest function.  DW_AT_stmt_list is 0 here; each image sets it where
 * it copies the unit. */
void image_write_inline_cu(byte_buf *b, const ju_blob *blob, inline_plan *p, uint64_t start);
/* Read such a unit's tree back into out[0..max): ranges, parents, names
 * (pointing into the unit); returns the count, or -1. */
long image_decode_inline_cu(const uint8_t *cu, size_t len, ju_inline *out, size_t max);
/* Validate a line table for a blob of `size` bytes: 0 or JU_ELINES with msg. */
int image_check_lines(const char *file, const ju_line *lines, size_t n, uint64_t size, char *msg,
		      size_t msglen);
/* The file name inside a unit written by image_write_line_unit. */
const char *image_line_unit_file(const uint8_t *unit);
/* Whether a unit names more files than the blob's: one with guest frames. */
bool image_line_unit_has_files(const uint8_t *unit, size_t len);
/* Decode the rows of such a unit back, and when `files` is not NULL each
 * row's file (pointing into the unit); returns the row count or -1. */
long image_decode_line_unit(const uint8_t *unit, size_t len, uint64_t start, ju_line *rows,
			    const char **files, size_t max_rows);

/* Tombstone a record's FDEs in a committed image (pc_range := 0, atomically). */
void image_tombstone(arena *a, const blob_rec *r);
/* pc_begin and pc_range of the FDE in slot k of an arena's image. */
uint64_t image_slot_pc(const arena *a, size_t k);
uint64_t image_slot_range(const arena *a, size_t k);
/* Write a new FDE (`len` bytes, no longer than the slot) into the tombstoned
 * slot k: the instructions padded with DW_CFA_nop first, then pc_begin, then
 * pc_range with a release store, so a concurrent lookup sees the empty slot
 * or the new FDE (docs/ARCHITECTURE.md, "Reusing FDE slots"). */
void image_reuse_slot(arena *a, size_t k, const uint8_t *fde, size_t len);

#endif
