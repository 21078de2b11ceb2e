/* SPDX-License-Identifier: MIT */
/* jitobj.c - code that foreignjit loads at run time from a relocatable
 * object, as LLVM's MCJIT/ORC do: compiled by the build into jitobj.o
 * (.eh_frame) and jitobj-df.o (.debug_frame only), both with -g and
 * without frame pointers, so only their CFI can unwind them.
 *
 * jitobj_outer -> jitobj_inner -> host_middle (back in the host program)
 */
extern void host_middle(int depth);

__attribute__((noinline)) int jitobj_inner(int x)
{
	host_middle(x);
	return x + 1;
}

int jitobj_outer(int x)
{
	volatile int y = jitobj_inner(x + 1);
	return y * 2;
}
