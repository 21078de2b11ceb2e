/* SPDX-License-Identifier: MIT */
/* jitimage.h - rewrite one in-memory ELF image registered by a JIT into an
 * ELF file libdwfl loads as a module at the code's real address.
 *
 * Why a rewrite: libdwfl lays out an ET_REL's sections itself (it ignores
 * the addresses a JIT wrote into them unless all are set, and then spans the
 * module from the lowest to the highest, .eh_frame's heap address included),
 * it does not apply relocations to .eh_frame, and libdw cannot resolve
 * LuaJIT's text-relative FDE pointers.  So every image, whatever its shape
 * (jitunwind's ET_REL with NOBITS .text and absolute CFI, LLVM's relocatable
 * objects with PROGBITS .text and relocated CFI and DWARF, LuaJIT's
 * text-relative .eh_frame, a .debug_frame, an ET_EXEC or ET_DYN), becomes
 * the same thing:
 *
 *   ET_EXEC, one PT_LOAD = the code hull [lo, hi) (no file bytes: the code
 *   stays in the target), .text NOBITS at lo, a canonical .eh_frame with
 *   absolute pointers + a sorted .eh_frame_hdr, .symtab with absolute
 *   function symbols, and the image's .debug_* sections with relocations
 *   applied.
 *
 * The input is untrusted: see elfin.h and cfi_convert.h for the bounds.  A
 * rejected image is reported with a reason and its code is then unwound by
 * frame pointers.
 */
#ifndef JS_JITIMAGE_H
#define JS_JITIMAGE_H

#include "jit/elfin.h"
#include "base/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct js_img_in {
	uint8_t *bytes; /* a copy of the image; modified (relocated) in place */
	size_t size;
	uint64_t addr;             /* where the image is in the target (for messages) */
	uint64_t hint_lo, hint_hi; /* code hull from the entry's extension, or 0 */
	uint16_t machine;          /* the target's e_machine; the image must match */
	ein_resolver resolve;      /* symbols the image leaves undefined (elfin.h), or NULL */
	void *resolve_arg;
} js_img_in;

typedef struct js_img_out {
	uint8_t *elf; /* the rewritten image (malloc), NULL when rejected */
	size_t elf_size;
	uint64_t lo, hi; /* its code hull */
	unsigned long n_funcs, n_fdes, n_tomb, n_debug_sections;
	unsigned long n_undefined; /* relocations of kept sections against symbols no image defines */
	size_t undefined_at;       /* the first such symbol's name: its offset in the image (0: none) */
	bool has_lines;            /* libdw finds line rows in its units: frames get source lines */
	bool not_elf;              /* rejected: not an ELF image (a JIT's own symbol-file format) */
	bool no_code;              /* rejected: an ELF image with no code section (data, or debug
				    * information for code in other images) */
	char note[256];            /* what was dropped, for the listing (js_note); "" if nothing */
	js_err why;                /* why the image was rejected, or is not used */
} js_img_out;

/* Returns 0 with out->elf set, or the code with out->why. */
int js_image_rewrite(const js_img_in *in, js_img_out *out);
void js_img_out_free(js_img_out *o);

/* What one image defines for the others: its global and weak symbols
 * that are defined (functions and data, not sections or files), at their
 * addresses as the relocations of another image would take them. */
typedef struct js_export {
	uint64_t addr;
	const char *name; /* in js_exports.names */
} js_export;

typedef struct js_exports {
	js_export *v;
	size_t n;
	char *names;
} js_exports;

/* The exports of an image (a copy, as js_img_in.bytes; not modified).  An
 * image that cannot be read defines nothing.  0, or -1 when out of memory. */
int js_image_exports(uint8_t *bytes, size_t size, js_exports *x);
void js_exports_free(js_exports *x);

#endif
