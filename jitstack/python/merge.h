/* SPDX-License-Identifier: MIT */
/* merge.h - where a thread's Python frames go in its native stack.
 *
 * Since 3.11 one activation of the eval loop (_PyEval_EvalFrameDefault)
 * runs a whole run of Python calls; the chain of interpreter frames
 * (frames.h, innermost first) falls into pieces, each ending at an entry
 * frame: the first frame its activation ran.  The innermost piece belongs
 * to the innermost activation, the next to the next, and so on; each piece
 * is shown just inside (above) its activation's native frame, as the
 * functions a compiler inlined are shown above their physical frame.
 *
 * JIT code: CPython's JIT publishes the Python functions an executor runs
 * as its guest frames (integrations/cpython: the executor named
 * "py:QUALNAME (FILE:LINE)", the functions inlined into it "py:QUALNAME").
 * The JIT frames that sit above an activation ran the innermost frames of
 * its piece: those are shown once, as the JIT's frames (whose lines are the
 * executor's own, exact at the pc, where the interpreter frame's may lag),
 * and the piece's frames that they match, name for name from the inside,
 * are left out.  The trampoline of the executor a thread entered is a
 * frame of its own, named after the executor, above the frame of the
 * stencil that calls out: a JIT frame that shows only the outermost
 * function of the JIT frame just inside it is that, and matches nothing.  A JIT frame whose guests do not
 * match the piece is kept and the piece shown whole, with a warning.
 *
 * An activation that runs no Python frame can only be the innermost one
 * (just entered, its first frame not linked yet, or about to return: an
 * outer activation waits in a C call one of its frames made): when there
 * are more activations than pieces, the innermost ones get none.
 *
 * A native stack that ends (or is cut) before the activation of a piece
 * gets that piece and every outer one after its last frame, with a
 * warning: the Python frames are in order, their native neighbours are
 * not known.
 */
#ifndef JS_PY_MERGE_H
#define JS_PY_MERGE_H

#include "python/frames.h"

#include <stdbool.h>
#include <stddef.h>

/* One native frame as the merge sees it. */
typedef struct js_py_native {
	bool eval;                 /* an activation of the eval loop */
	const char *const *guests; /* a JIT frame's Python functions (qualified */
	size_t n_guests;           /* names), innermost first; 0: none */
} js_py_native;

/* Python frames frames[first..first+n) of the thread's chain go before
 * native frame `before` (n_native: after the last one). */
typedef struct js_py_insert {
	size_t before;
	size_t first, n;
} js_py_insert;

/* Place the Python frames py[0..n_py) (one thread's, innermost first) in
 * its native stack nat[0..n_nat) (innermost first).  Writes at most cap
 * inserts to ins, in native order, and returns how many; the Python frames
 * that are in none of them are the ones the JIT frames show.  `warning`
 * (wsz bytes) gets one line when the placement is not exact, else "". */
size_t js_py_merge(const js_py_native *nat, size_t n_nat, const js_py_frame *py, size_t n_py,
		   js_py_insert *ins, size_t cap, char *warning, size_t wsz);

/* The qualified name of the Python function a JIT frame's name shows
 * ("py:QUALNAME" or "py:QUALNAME (FILE:LINE)"), copied to out (n bytes);
 * false when the name is no Python function's (not "py:", a cold exit). */
bool js_py_guest_name(const char *func, char *out, size_t n);

#endif
