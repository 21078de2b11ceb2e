/* SPDX-License-Identifier: MIT */
/* interp.c - an interpreter's frames placed in a native stack (interp.h). */
#include "unwind/interp.h"

#include <stdlib.h>
#include <string.h>

/* The longest qualified name a JIT frame's guest gives that is matched. */
enum { GUEST_MAX = 256 };

void js_place_interp_frames(js_session *s, js_stack *st)
{
	st->py = NULL;
	st->n_py_at = 0;
	const js_py_frame *py = NULL;
	size_t n_py = 0;
	for (size_t i = 0; i < s->n_src && !n_py; i++) {
		const js_source *src = &s->src[i];
		if (src->ops->frames && js_source_on(src))
			py = src->ops->frames(src, st->tid, &n_py);
	}
	if (!n_py || !st->sym)
		return;
	/* the native frames as the merge sees them: eval loop activations, and
	 * the JIT frames' Python functions (inline frames first, innermost out) */
	size_t n_names = 0;
	for (size_t i = 0; i < st->n; i++)
		n_names += st->sym[i].n_inl + 1u;
	js_py_native *nat = calloc(st->n ? st->n : 1, sizeof *nat);
	char(*names)[GUEST_MAX] = calloc(n_names ? n_names : 1, sizeof *names);
	const char **guests = calloc(n_names ? n_names : 1, sizeof *guests);
	size_t cap = n_py + 1; /* a piece per entry frame, and the rest */
	if (cap > st->cap_py_at) {
		js_py_insert *v = realloc(st->py_at, cap * sizeof *v);
		if (v) {
			st->py_at = v;
			st->cap_py_at = cap;
		}
	}
	if (!nat || !names || !guests || st->cap_py_at < cap) {
		free(nat), free(names), free(guests);
		js_warn(s, "out of memory: the Python frames of thread %d are not shown", (int)st->tid);
		return;
	}
	size_t g = 0;
	for (size_t i = 0; i < st->n; i++) {
		const js_sym *y = &st->sym[i];
		nat[i].eval = y->func && !y->jit && !strcmp(y->func, JS_PY_EVAL_FUNCTION);
		nat[i].guests = guests + g;
		bool jit = y->jit || y->source == JS_SRC_PERFMAP || y->source == JS_SRC_JITDUMP;
		for (uint32_t j = 0; jit && j <= y->n_inl; j++) {
			const char *func = j < y->n_inl ? y->inl[j].func : y->func;
			if (js_py_guest_name(func, names[g], sizeof names[g])) {
				guests[g] = names[g];
				g++;
				nat[i].n_guests++;
			}
		}
	}
	char warning[256];
	st->n_py_at = js_py_merge(nat, st->n, py, n_py, st->py_at, st->cap_py_at, warning, sizeof warning);
	st->py = py;
	if (warning[0])
		js_warn(s, "thread %d: %s", (int)st->tid, warning);
	free(nat), free(names), free(guests);
}
