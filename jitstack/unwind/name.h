/* SPDX-License-Identifier: MIT */
/* name.h - naming the frames of a stack: the second half of the unwind
 * stage, after the thread was let go (naming needs the modules, not the
 * thread).  Every frame is named here, once; the output stage prints the
 * names it is given.
 */
#ifndef JS_NAME_H
#define JS_NAME_H

#include "unwind/session.h"

#include <stdint.h>

/* Where a frame's name came from, in this order of priority where sources
 * cover the same pc: a JIT image (the JIT's own registration of that code,
 * with its extent, CFI and source lines), a native module's symbols, the
 * jitdump (names, lines and CFI, but a log: a JIT may write it for code it
 * also registers), then the perf map (names only). */
typedef enum js_name_source {
	JS_SRC_NONE,    /* unnamed */
	JS_SRC_ELF,     /* a native module's symbol tables */
	JS_SRC_GDB_JIT, /* a JIT image registered through the GDB JIT interface */
	JS_SRC_PERFMAP, /* the target's perf map */
	JS_SRC_JITDUMP, /* the target's jitdump */
	JS_SRC_PYTHON,  /* a Python frame, read from CPython's interpreter (no pc of its own) */
} js_name_source;

/* "elf", "gdb-jit", "jitdump", "perf-map", "python" (JSON's "source"), or NULL for none. */
const char *js_source_name(js_name_source src);

/* A function the compiler inlined where a frame's pc is: a logical frame
 * at the same pc as its physical one, as gdb and eu-stack -i show it. */
typedef struct js_inline {
	const char *func; /* NULL when the DWARF names none */
	const char *file; /* NULL when unknown */
	int line, col;
} js_inline;

typedef struct js_sym {
	const char *func;      /* NULL when unknown */
	js_name_source source; /* where func came from */
	uint64_t func_off;     /* pc - the function's start */
	const char *module;    /* the module's file (or the JIT image's label); NULL if none */
	uint64_t module_off;   /* pc - the module's start */
	uint64_t module_end;   /* the module's end (a rejected image's: its code's), 0 if none */
	/* source line: the pc's own, or with inline frames, the call site of
	 * the outermost of them (where the physical function is) */
	const char *file; /* NULL when unknown */
	int line, col;
	js_image *jit; /* the JIT image the frame is in (accepted or rejected) */
	/* the functions inlined at pc, innermost first: inl[0] at the pc's
	 * line, each next one at the call site of the one before it; owned by
	 * the session, good until its next js_name_stack */
	const js_inline *inl;
	uint32_t n_inl;
} js_sym;

struct js_stack;

/* Name every frame of st (its sym): from a JIT image or a native module's
 * symbols, else from the jitdump, else the perf map (code in no module, or
 * where the module has no symbol).  Source lines come from JIT images and
 * from modules that carry their own DWARF; with opt->source_all from
 * separate debuginfo too; where a line comes from DWARF, so do the
 * functions inlined at the pc (sym.inl).  A pc named once is not looked up
 * again until the JIT images, the perf map or the jitdump change
 * (js_names_epoch). */
void js_name_stack(js_session *s, struct js_stack *st);

/* A perf map read for some pcs only (js_perfmap_read_for): where the walk
 * back over the pieces of pc's chain of guest functions ("a <- b") needs
 * lines that were not read, or 0 when it needs none. */
uint64_t js_chain_gap(js_session *s, uint64_t pc);

#endif
