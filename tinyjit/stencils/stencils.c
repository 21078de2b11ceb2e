/* SPDX-License-Identifier: MIT */
/* stencils.c - one machine-code template per opcode (build time).
 *
 * clang-19 compiles this file into stencils; gen/tj_gen turns the object
 * into a table of code bytes and holes.  Each template is tj_op_<NAME> for
 * an opcode of vm/opcodes.def, and its operands come from holes (see
 * template.h).  The arithmetic is vm/ops.h and the binary operators are
 * vm/binops.def, both shared with the interpreter.
 *
 * Stack convention: the top of the operand stack lives in `tos`; `sp`
 * points at the slot where it would be spilled, so the value beneath it is
 * sp[-1].  Pushing spills tos to *sp; popping reloads it from sp[-1].
 */
#include "template.h"

/* ---- stack and locals ---- */

STENCIL(PUSH)
{
	*sp++ = tos;
	tos = OPERAND;
	CONTINUE();
}

/* OPARG is the slot's byte offset, so it lands in the load's displacement. */
STENCIL(LOAD)
{
	*sp++ = tos;
	tos = *(int64_t *)((char *)locals + OPARG);
	CONTINUE();
}

STENCIL(STORE)
{
	*(int64_t *)((char *)locals + OPARG) = tos;
	tos = *--sp;
	CONTINUE();
}

STENCIL(DUP)
{
	*sp++ = tos;
	CONTINUE();
}

STENCIL(POP)
{
	tos = *--sp;
	CONTINUE();
}

STENCIL(SWAP)
{
	int64_t under = sp[-1];
	sp[-1] = tos;
	tos = under;
	CONTINUE();
}

STENCIL(FN)
{
	*sp++ = tos;
	tos = OPARG;
	CONTINUE();
}

/* ---- arithmetic and comparisons: tos = sp[-1] OP tos ---- */

#define BINOP(NAME, expr)                                                                                    \
	STENCIL(NAME)                                                                                        \
	{                                                                                                    \
		int64_t a = *--sp, b = tos;                                                                  \
		tos = (expr);                                                                                \
		CONTINUE();                                                                                  \
	}
#include "../vm/binops.def"
#undef BINOP

STENCIL(DIV)
{
	if (tos == 0)
		FAIL(TJ_ERR_DIV0);
	int64_t a = *--sp;
	tos = tj_div(a, tos);
	CONTINUE();
}

STENCIL(MOD)
{
	if (tos == 0)
		FAIL(TJ_ERR_DIV0);
	int64_t a = *--sp;
	tos = tj_mod(a, tos);
	CONTINUE();
}

STENCIL(NEG)
{
	tos = tj_neg(tos);
	CONTINUE();
}

STENCIL(NOT)
{
	tos = ~tos;
	CONTINUE();
}

/* ---- control ---- */

STENCIL(JMP)
{
	JUMP();
}

STENCIL(JZ)
{
	int64_t cond = tos;
	tos = *--sp;
	if (cond == 0)
		JUMP();
	CONTINUE();
}

STENCIL(JNZ)
{
	int64_t cond = tos;
	tos = *--sp;
	if (cond != 0)
		JUMP();
	CONTINUE();
}

/* The arguments are the top argc values: spill tos and point at the first.
 * OPARG = argc * sizeof(int64_t), OPARG2 = callee index *
 * sizeof(void *).  The callee is entered through the shim, the one frame
 * that sets rbp.
 *
 * The preserve_none shim keeps only rsp and rbp, so whatever CALL needs
 * after it (the caller's locals, the arguments' address, vm) must either be
 * on the native stack or in rbp.  Left to itself clang keeps one value in
 * rbp, which the frame-pointer rule forbids unless CALL pays for a frame
 * (`mov %rsp,%rbp`, on AArch64 a frame record).  So CALL keeps the three
 * in a save area on its own stack and hands the area's address to the
 * callee as its tos: the value a function is entered with is never read
 * (ENTER leaves it to be spilled into the frame's scratch slot), and
 * once the address has escaped into the call, clang must reload the three
 * from memory afterwards, with nothing left to keep in rbp or x29.
 *
 * The nofp set (TJ_STENCILS_NOFP) keeps the plain shape, where clang uses
 * rbp as a general register: the comparison build for what the rule costs
 * and what unwinders lose without it. */
STENCIL(CALL)
{
	*sp = tos;
	int64_t *args = (int64_t *)((char *)(sp + 1) - OPARG);
	void *callee = *(void **)((char *)vm->entries + OPARG2);
#ifdef TJ_STENCILS_NOFP
	tj_res r = tj_shim_call(args, args, 0, vm, callee);
	if (r.status)
		return r;
	sp = args;
#else
	struct {
		int64_t *locals, *args;
		tj_vm *vm;
	} keep = { locals, args, vm };
	tj_res r = tj_shim_call(args, args, (int64_t)(intptr_t)&keep, vm, callee);
	if (r.status)
		return r;
	locals = keep.locals;
	sp = keep.args;
	vm = keep.vm;
#endif
	tos = r.value;
	CONTINUE();
}

/* OPARG = argc * sizeof(int64_t), OPARG2 = host function index. */
STENCIL(HOST)
{
	*sp = tos;
	int64_t *args = (int64_t *)((char *)(sp + 1) - OPARG);
	tj_res r = tj_rt_host(vm, args, OPARG2, INSN);
	if (r.status)
		return r;
	sp = args;
	tos = r.value;
	CONTINUE();
}

STENCIL(RET)
{
	(void)locals;
	(void)sp;
	vm->depth--;
	return (tj_res){ tos, 0 };
}

/* A function's first stencil.  OPERAND = the frame's value-stack slots,
 * OPARG = arguments, OPARG2 = all locals.  Same checks, same order as the
 * interpreter. */
STENCIL(ENTER)
{
	if (++vm->depth > vm->max_depth)
		FAIL(TJ_ERR_DEPTH);
	if (vm->stack_end - locals < OPERAND)
		FAIL(TJ_ERR_STACK);
#pragma clang loop vectorize(disable) unroll(disable)
	for (int64_t i = OPARG; i < OPARG2; i++)
		locals[i] = 0;
	sp = locals + OPARG2;
	CONTINUE();
}

/* ---- guest frames of an inlined call (runtime/inline.c) ----
 * Where the JIT inlines `call f`, it copies PUSH_FRAME, then f's own code
 * (its ENTER, which makes the same depth and room checks as a called f),
 * with each of f's RETs copied as POP_FRAME.  The guest frame lives on the
 * value stack exactly where CALL would put it, but no native call is made:
 * the caller's native frame runs the callee. */

/* OPARG = argc * sizeof(int64_t): the callee's locals start at its
 * arguments, as CALL's do; the ENTER that follows sets sp. */
STENCIL(PUSH_FRAME)
{
	*sp = tos;
	locals = (int64_t *)((char *)(sp + 1) - OPARG);
	CONTINUE();
}

/* The callee returns tos.  The caller's operand stack goes on where its
 * arguments were (CALL's sp = args), and its locals are OPARG bytes below
 * the callee's: the verifier's depth at the call fixes that distance.
 * _JIT_TARGET is the code after the inlined call. */
STENCIL(POP_FRAME)
{
	vm->depth--;
	sp = locals;
	locals = (int64_t *)((char *)locals - OPARG);
	JUMP();
}
