/* SPDX-License-Identifier: MIT */
/* writes_x29.c - an AArch64 stencil that writes x29 outside any frame
 * prologue (build-time test input), as writes_rbp.c is for x86-64.  Its
 * build must fail: the write is still there after the frame-pointer
 * rebuild, and the validator must reject it.
 */
#include "../template.h"

STENCIL(CLOBBER)
{
	__asm__ volatile("mov x29, x21" ::: "memory");
	tos += 1;
	CONTINUE();
}
