/* SPDX-License-Identifier: MIT */
/* rt.c - run-time functions that stencils call (through trampolines). */
#include "jit.h"

tj_res tj_rt_fail(tj_vm *vm, int64_t err, int64_t insn)
{
	return tj_vm_fail(vm, (int)err, (uint32_t)insn, NULL);
}
