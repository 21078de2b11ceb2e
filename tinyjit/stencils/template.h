/* SPDX-License-Identifier: MIT */
/* template.h - the calling convention every stencil shares (build time).
 *
 * A stencil is a preserve_none function of the VM's four live values, which
 * clang keeps in registers from one stencil to the next:
 *   locals  the frame's local slots
 *   sp      where the top of stack goes when spilled; below it, sp[-1] is
 *           the value under the top
 *   tos     the top of the operand stack (cached in a register)
 *   vm      the VM state
 * It ends in a musttail call to _JIT_CONTINUE (the next instruction) or
 * _JIT_TARGET (a jump's target): a jump at run time, so every stencil runs
 * at its function-entry frame state and the return address the shim pushed
 * stays at the top of the native stack.  Its own .eh_frame FDE therefore
 * describes it wherever it is copied.
 */
#ifndef TJ_TEMPLATE_H
#define TJ_TEMPLATE_H

#include <stdint.h>

#include "../vm/ops.h"
#include "../vm/vm.h"

#define TJ_PRESERVE_NONE __attribute__((preserve_none))
#define TJ_ARGS int64_t *locals, int64_t *sp, int64_t tos, tj_vm *vm
typedef TJ_PRESERVE_NONE tj_res (*tj_entry)(TJ_ARGS);

/* Holes: the runtime writes their value into the copied code. */
extern char _JIT_OPERAND[]; /* 64-bit: movabs */
extern char _JIT_OPARG[1];  /* small: fits a 32-bit immediate */
extern char _JIT_OPARG2[1];
extern char _JIT_INSN[1];
TJ_PRESERVE_NONE tj_res _JIT_CONTINUE(TJ_ARGS);
TJ_PRESERVE_NONE tj_res _JIT_TARGET(TJ_ARGS);

#define OPERAND ((int64_t)(intptr_t)_JIT_OPERAND)
#define OPARG ((int64_t)(intptr_t)_JIT_OPARG)
#define OPARG2 ((int64_t)(intptr_t)_JIT_OPARG2)
#define INSN ((int64_t)(intptr_t)_JIT_INSN)

/* The run-time functions a stencil may call (runtime/stencil.h lists them). */
TJ_PRESERVE_NONE tj_res tj_shim_call(TJ_ARGS, void *code);
tj_res tj_rt_fail(tj_vm *vm, int64_t err, int64_t insn);

#define STENCIL(NAME) TJ_PRESERVE_NONE tj_res tj_op_##NAME(TJ_ARGS)
#define CONTINUE() __attribute__((musttail)) return _JIT_CONTINUE(locals, sp, tos, vm)
#define JUMP() __attribute__((musttail)) return _JIT_TARGET(locals, sp, tos, vm)
#define FAIL(err) return tj_rt_fail(vm, (err), INSN)

#endif
