/* SPDX-License-Identifier: MIT */
/* inline.h - the functions a compiler inlined at a pc, read from the
 * DWARF of its module (DW_TAG_inlined_subroutine scopes), for name.c.
 *
 * A JIT image's DWARF is the target's: libdw bounds its reads, and what
 * it hands back as a name is taken only when it is a string inside the
 * image's DWARF sections.
 */
#ifndef JS_INLINE_H
#define JS_INLINE_H

#include "unwind/name.h"
#include "unwind/session.h"

#include <elfutils/libdwfl.h>
#include <stddef.h>

/* The inline frames at pc (a lookup pc) of mod, innermost first, at most
 * max into out: out[0] at *at (the pc's line, from the line table), each
 * next one at the call site of the one before it.  *call gets the call
 * site of the outermost: the line of the physical function.  Returns how
 * many (0: pc is in no inlined function, or mod has no DWARF for it).
 * The strings point into the module's DWARF or the session's demangled
 * names: copy them to keep them. */
size_t js_inline_frames(js_session *s, Dwfl_Module *mod, uint64_t pc, const js_inline *at, js_inline *out,
			size_t max, js_inline *call);

#endif
