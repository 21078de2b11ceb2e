/* SPDX-License-Identifier: MIT */
/* interp.h - the frames an interpreter runs, placed in a thread's named
 * native stack: the Python frames a source read (source.h: walk, frames)
 * go where python/merge.h says, above the eval loop activation that runs
 * them, and those a JIT frame shows as its guest frames are not repeated.
 */
#ifndef JS_INTERP_H
#define JS_INTERP_H

#include "unwind/session.h"
#include "unwind/stack.h"

/* The CPython function whose activations run Python frames. */
#define JS_PY_EVAL_FUNCTION "_PyEval_EvalFrameDefault"

/* Place the frames of st's thread (its native stack named: js_name_stack)
 * that the sources' last walk read: st->py and st->py_at.  A placement
 * that is not exact (python/merge.h: the chain has more pieces than the
 * stack has eval loop activations, or a JIT frame's functions are not the
 * chain's) leaves a warning (js_warn).  Never fails: out of memory, the
 * stack keeps its native frames alone. */
void js_place_interp_frames(js_session *s, js_stack *st);

#endif
