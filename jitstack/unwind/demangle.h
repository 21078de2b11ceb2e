/* SPDX-License-Identifier: MIT */
/* demangle.h - C++ and Rust names as people read them (libiberty's
 * cplus_demangle, the demangler of binutils and gdb), in every output.
 *
 * Demangled names live as long as the session: a name is demangled once
 * and kept, keyed by its text (JIT images come and go, and their names'
 * storage with them).
 */
#ifndef JS_DEMANGLE_H
#define JS_DEMANGLE_H

#include "unwind/session.h"

/* NAME demangled, or NAME itself: when it is not a mangled C++ or Rust
 * name, when --no-demangle was given, or when out of memory.  NULL stays
 * NULL. */
const char *js_demangle(js_session *s, const char *name);
/* Free the session's demangled names (js_close). */
void js_demangle_free(js_session *s);

#endif
