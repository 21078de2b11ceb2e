/* SPDX-License-Identifier: MIT */
/* interp.c - the reference interpreter; it defines tinyjit's semantics.
 *
 * A plain switch over instructions with the operand stack in memory.  VM
 * calls recurse on the C stack, as JIT code does through the shim, so host
 * callbacks and the call depth limit behave the same in both engines.
 */
#include "ops.h"
#include "vm.h"

tj_res tj_interp(tj_vm *vm, uint32_t fn, int64_t *locals)
{
	const tj_program *p = vm->prog;
	const tj_func *f = &p->funcs[fn];
	const tj_insn *code = p->insns;
	uint32_t pc = f->first;

	/* ENTER: the same checks, in the same order, as the ENTER stencil */
	if (++vm->depth > vm->max_depth)
		return tj_vm_fail(vm, TJ_ERR_DEPTH, pc, NULL);
	if (vm->stack_end - locals < TJ_FRAME_SLOTS(f->nslots, f->max_stack))
		return tj_vm_fail(vm, TJ_ERR_STACK, pc, NULL);
	for (uint32_t i = f->nargs; i < f->nslots; i++)
		locals[i] = 0;
	int64_t *sp = locals + f->nslots; /* next free slot */
	pc++;

	for (;;) {
		const tj_insn *in = &code[pc++];
		int64_t a, b;
		tj_res r;
		switch ((enum tj_op)in->op) {
			/* clang-format off */
		case TJ_OP_PUSH: *sp++ = in->a; break;
		case TJ_OP_LOAD: *sp++ = locals[in->a]; break;
		case TJ_OP_STORE: locals[in->a] = *--sp; break;
		case TJ_OP_DUP: sp[0] = sp[-1]; sp++; break;
		case TJ_OP_POP: sp--; break;
		case TJ_OP_SWAP: a = sp[-1]; sp[-1] = sp[-2]; sp[-2] = a; break;
		case TJ_OP_FN: *sp++ = in->a; break;
#define BINOP(OP, expr) \
	case TJ_OP_##OP: b = *--sp; a = sp[-1]; sp[-1] = (expr); break;
#include "binops.def"
#undef BINOP
		/* clang-format on */
		case TJ_OP_DIV:
		case TJ_OP_MOD:
			b = *--sp;
			a = sp[-1];
			if (b == 0)
				return tj_vm_fail(vm, TJ_ERR_DIV0, pc - 1, NULL);
			sp[-1] = in->op == TJ_OP_DIV ? tj_div(a, b) : tj_mod(a, b);
			break;
		case TJ_OP_NEG: sp[-1] = tj_neg(sp[-1]); break;
		case TJ_OP_NOT: sp[-1] = ~sp[-1]; break;
		case TJ_OP_JMP: pc = (uint32_t)in->a; break;
		case TJ_OP_JZ:
			if (*--sp == 0)
				pc = (uint32_t)in->a;
			break;
		case TJ_OP_JNZ:
			if (*--sp != 0)
				pc = (uint32_t)in->a;
			break;
		case TJ_OP_CALL:
			sp -= in->b;
			r = tj_interp(vm, (uint32_t)in->a, sp);
			if (r.status)
				return r;
			*sp++ = r.value;
			break;
		case TJ_OP_HOST:
			sp -= in->b;
			r = tj_rt_host(vm, sp, in->a, pc - 1);
			if (r.status)
				return r;
			*sp++ = r.value;
			break;
		case TJ_OP_RET: vm->depth--; return (tj_res){ sp[-1], 0 };
		case TJ_OP_ENTER:
		case TJ_OP_PUSH_FRAME:
		case TJ_OP_POP_FRAME:
		case TJ_OP_COUNT:
			/* the loader puts ENTER only first; the verifier never lets
			 * execution reach it again; no program holds the JIT's
			 * frame opcodes */
			return tj_vm_fail(vm, TJ_ERR_HOST, pc - 1, "internal: bad instruction");
		}
	}
}
