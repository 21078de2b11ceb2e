/* SPDX-License-Identifier: MIT */
/* merge.c - where a thread's Python frames go in its native stack
 * (merge.h says how). */
#include "python/merge.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void warn(char *warning, size_t wsz, const char *fmt, ...)
{
	if (!wsz || warning[0])
		return; /* the first reason is the one given */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(warning, wsz, fmt, ap);
	va_end(ap);
}

/* Does JIT frame b, just outside JIT frame a, repeat a's outermost
 * function alone?  Then it is the trampoline of the executor the thread
 * entered (its stencils' calls return into it), running the Python frame
 * that a's outermost guest already shows: no frame of its own. */
static bool repeats(const js_py_native *a, const js_py_native *b)
{
	return a->n_guests && b->n_guests == 1 && !strcmp(a->guests[a->n_guests - 1], b->guests[0]);
}

/* How many frames of the piece py[0..n) the guests of the JIT frames
 * nat[0..n_nat) show, from the inside; SIZE_MAX when they do not match. */
static size_t shown_by_jit(const js_py_native *nat, size_t n_nat, const js_py_frame *py, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n_nat; i++)
		for (size_t g = 0; g < nat[i].n_guests && !(i && repeats(&nat[i - 1], &nat[i])); g++, k++)
			if (k == n || !py[k].qualname || strcmp(nat[i].guests[g], py[k].qualname) != 0)
				return SIZE_MAX;
	return k;
}

size_t js_py_merge(const js_py_native *nat, size_t n_nat, const js_py_frame *py, size_t n_py,
		   js_py_insert *ins, size_t cap, char *warning, size_t wsz)
{
	if (wsz)
		warning[0] = '\0';
	size_t pieces = 0; /* each ends at an entry frame, or at the outermost frame */
	for (size_t q = 0; q < n_py; q++)
		pieces += py[q].entry || q + 1 == n_py;
	/* an activation that runs no Python frame is the innermost (an outer
	 * one waits in a C call that one of its frames made): just entered,
	 * its first frame not linked yet, or about to return; such ones get
	 * no piece */
	size_t evals = 0, i = 0;
	for (size_t a = 0; a < n_nat; a++)
		evals += nat[a].eval;
	for (size_t extra = evals > pieces ? evals - pieces : 0; extra; i++)
		extra -= nat[i].eval;
	size_t n_ins = 0, placed = 0;
	for (size_t p = 0; p < n_py;) {
		size_t end = p;
		while (end + 1 < n_py && !py[end].entry)
			end++;
		size_t n = end + 1 - p;
		size_t a = i;
		while (a < n_nat && !nat[a].eval)
			a++;
		if (a == n_nat) {
			warn(warning, wsz,
			     "the native stack reached %zu of the %zu eval loop activations that run Python "
			     "frames: the outer Python frames follow its last frame",
			     placed, pieces);
			if (n_ins < cap)
				ins[n_ins++] = (js_py_insert){ .before = n_nat, .first = p, .n = n_py - p };
			break;
		}
		size_t skip = shown_by_jit(nat + i, a - i, py + p, n);
		if (skip == SIZE_MAX) {
			warn(warning, wsz,
			     "the Python functions of the JIT frames above eval loop activation %zu are not "
			     "the innermost of its Python frames: both are shown",
			     placed + 1);
			skip = 0;
		}
		if (skip < n) {
			if (n_ins == cap) {
				warn(warning, wsz,
				     "more than %zu pieces of Python frames: the outer ones are left out",
				     cap);
				break;
			}
			ins[n_ins++] = (js_py_insert){ .before = a, .first = p + skip, .n = n - skip };
		}
		placed++;
		p = end + 1;
		i = a + 1;
	}
	return n_ins;
}

bool js_py_guest_name(const char *func, char *out, size_t n)
{
	static const char cold[] = "cold exit";
	if (!func || strncmp(func, "py:", 3) != 0 || !n)
		return false;
	func += 3;
	if (strncmp(func, cold, sizeof cold - 1) == 0 &&
	    (func[sizeof cold - 1] == '\0' || func[sizeof cold - 1] == ' '))
		return false;
	const char *at = strstr(func, " (");
	size_t len = at ? (size_t)(at - func) : strlen(func);
	if (!len || len >= n)
		return false;
	memcpy(out, func, len);
	out[len] = '\0';
	return true;
}
