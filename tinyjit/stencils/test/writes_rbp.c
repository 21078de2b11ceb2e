/* SPDX-License-Identifier: MIT */
/* writes_rbp.c - a stencil that writes rbp outside any frame prologue
 * (build-time test input).  The build of this file must fail: the write is
 * still there after the frame-pointer rebuild, and the validator must
 * reject it.  The asm hides the write from clang, as a miscompiled or
 * hand-written stencil would.
 */
#include "../template.h"

STENCIL(CLOBBER)
{
	__asm__ volatile("movq %%r13, %%rbp" ::: "memory");
	tos += 1;
	CONTINUE();
}
