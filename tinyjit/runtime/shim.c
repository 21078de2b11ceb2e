/* SPDX-License-Identifier: MIT */
/* shim.c - the frames through which code enters JIT code (run time).
 *
 * Compiled by clang with -Xclang -mframe-pointer=all.  This file and no
 * stencil sets rbp on the JIT path.
 *
 * tj_shim_call is the one frame under every VM function's code: push %rbp;
 * mov %rsp,%rbp; call *code.  The native stack therefore mirrors the VM
 * stack, and the region rule (CFA = rbp+16, rbp at CFA-16, return address
 * at CFA-8) comes from this function's own CFI at that call, read by the
 * generator from shim.o.  It is preserve_none like the stencils, so it saves
 * no registers: the region rule skips its frame, and any register it saved
 * would not be restored by an unwinder (a C++ exception would then reach its
 * handler with corrupted callee-saved registers).  The JIT code that calls
 * it (the CALL stencil) keeps its own live values, on its own stack and not
 * in rbp (stencils/stencils.c).
 *
 * tj_jit_enter is the C-ABI entry from host code: it saves the C
 * callee-saved registers that JIT code clobbers, described by its own CFI
 * in the binary, then calls the shim.
 *
 * disable_tail_calls keeps the calls calls: a jump would drop the frame.
 */
#include "jit.h"

#define TJ_PRESERVE_NONE __attribute__((preserve_none))
typedef TJ_PRESERVE_NONE tj_res (*tj_entry)(int64_t *locals, int64_t *sp, int64_t tos, tj_vm *vm);

__attribute__((disable_tail_calls, noinline)) TJ_PRESERVE_NONE tj_res tj_shim_call(int64_t *locals,
										   int64_t *sp, int64_t tos,
										   tj_vm *vm, void *code)
{
	return ((tj_entry)code)(locals, sp, tos, vm);
}

__attribute__((disable_tail_calls, noinline)) tj_res tj_jit_enter(void *code, int64_t *locals, tj_vm *vm)
{
	return tj_shim_call(locals, locals, 0, vm, code);
}
