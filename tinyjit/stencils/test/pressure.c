/* SPDX-License-Identifier: MIT */
/* pressure.c - a stencil under register pressure (build-time test input).
 *
 * Seven values stay live across a C call, one more than rbx and r12-r15 can
 * hold, so clang-19 allocates rbp even with -mframe-pointer=reserved.  The
 * validator must flag it, and its frame-pointer rebuild must pass.  Also the
 * probe of the configure check for the reserved flag.
 */
#include "../template.h"

STENCIL(PRESSURE)
{
	int64_t a = sp[-1], b = sp[-2], c = sp[-3], d = sp[-4], e = sp[-5], f = sp[-6], g = sp[-7];
	tj_res r = tj_rt_fail(vm, tos, 0);
	tos = r.value + a * b + c * d + e * f + g;
	sp[0] = a ^ b;
	sp[1] = c ^ d;
	sp[2] = e ^ f ^ g;
	CONTINUE();
}
