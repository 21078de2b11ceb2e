/* SPDX-License-Identifier: MIT */
/* pressure_call.c - a stencil that keeps values live across a call into the
 * shim (build-time test input).  tj_shim_call is preserve_none: across it
 * the frame pointer is the only general register the callee keeps, so
 * clang-19 allocates it (x29 on AArch64, rbp on x86-64) unless the
 * compiler really reserves it.  The probe of the configure check for the
 * reserved flag on AArch64, where pressure.c fits in x19-x28.
 */
#include "../template.h"

STENCIL(PRESSURE_CALL)
{
	int64_t a = sp[-1], b = sp[-2];
	tj_res r = tj_shim_call(locals, sp, tos, vm, (void *)(intptr_t)OPERAND);
	if (r.status)
		return r;
	tos = r.value + a * b;
	sp[0] = a ^ b;
	CONTINUE();
}
