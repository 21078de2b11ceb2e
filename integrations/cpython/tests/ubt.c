/* ubt.c - a small C library for the CPython tests: ubt_walk() takes the
 * stack of its caller with libgcc's _Unwind_Backtrace, as a C extension's
 * crash handler or profiler does; bt.py calls it through ctypes from the
 * trace of a hot loop.
 *
 * SPDX-License-Identifier: MIT
 */
#include <unwind.h>

struct walk {
	void **pcs;
	int n, max;
};

static _Unwind_Reason_Code step(struct _Unwind_Context *uc, void *arg)
{
	struct walk *w = arg;
	if (w->n == w->max)
		return _URC_END_OF_STACK;
	w->pcs[w->n++] = (void *)_Unwind_GetIP(uc);
	return _URC_NO_REASON;
}

/* The return addresses of the stack, innermost first, into pcs[0..max);
 * how many. */
int ubt_walk(void **pcs, int max)
{
	struct walk w = { pcs, 0, max };
	_Unwind_Backtrace(step, &w);
	return w.n;
}
