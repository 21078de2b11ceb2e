/* SPDX-License-Identifier: MIT */
/* unwind_pcs.h - the pcs of a stack through libgcc's _Unwind_Backtrace (or
 * LLVM libunwind's, when linked ahead of it), for the test programs that
 * compare what in-process unwinders see: tests/child.c and
 * tests/unit/test-threads.c.
 *
 * Only the callback is shared: each caller calls _Unwind_Backtrace from its
 * own frame, so that the stack it takes starts there and not in a helper.
 *
 *     struct ub_state s = { pcs, 0, max };
 *     _Unwind_Backtrace(ub_step, &s);   // s.n pcs, innermost first
 */
#ifndef JU_TESTS_UNWIND_PCS_H
#define JU_TESTS_UNWIND_PCS_H

#include <unwind.h>

struct ub_state {
	void **pcs;
	int n, max;
};

/* One frame: keep its pc, and end the walk once max are kept. */
static inline _Unwind_Reason_Code ub_step(struct _Unwind_Context *uc, void *arg)
{
	struct ub_state *s = arg;
	if (s->n >= s->max)
		return _URC_END_OF_STACK;
	s->pcs[s->n++] = (void *)_Unwind_GetIP(uc);
	return _URC_NO_REASON;
}

#endif
