/* SPDX-License-Identifier: MIT */
/* verify.c - the static checks that make run time simple.
 *
 * For every function, a data-flow pass computes the operand stack depth at
 * each reachable instruction.  It rejects, with the instruction's location:
 * popping an empty stack (underflow), more than TJ_MAX_OPERAND_STACK values
 * (overflow), two paths joining with different depths, and paths that run
 * off the end of the function.  Its result, max_stack, lets the interpreter
 * and the JIT check the whole frame's room once per call instead of on
 * every push; the depth it records at each instruction tells the JIT where
 * an inlined call's frame starts.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "vm.h"

__attribute__((format(printf, 4, 5))) static int fail(const tj_program *p, const tj_insn *in, tj_diag *d,
						      const char *fmt, ...)
{
	char m[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof m, fmt, ap);
	va_end(ap);
	snprintf(d->msg, sizeof d->msg, "%s:%u:%u: error: %s", p->file, in->line, in->col, m);
	return -1;
}

/* The stack effect of one instruction. */
static void effect(const tj_insn *in, int *pops, int *pushes)
{
	const tj_opinfo *oi = &tj_opinfo_table[in->op];
	*pops = oi->pops >= 0 ? oi->pops : (int)in->b;
	*pushes = oi->pushes;
}

/* Depth flowing into `to`; queue it when first seen. */
static int flow(const tj_program *p, const tj_func *f, const tj_insn *from, uint32_t to, int depth,
		int *depths, uint32_t *work, size_t *nwork, tj_diag *d)
{
	if (to - f->first >= f->count)
		return fail(p, from, d,
			    "execution can run off the end of function '%s'; expected 'ret' or 'jmp'",
			    f->name);
	int *at = &depths[to - f->first];
	if (*at < 0) {
		*at = depth;
		work[(*nwork)++] = to;
		return 0;
	}
	if (*at != depth)
		return fail(p, &p->insns[to], d,
			    "operand stack depth differs where paths join: %d on one path, %d on another",
			    *at, depth);
	return 0;
}

/* A function's last instruction must end its code: the JIT places the next
 * function's code right after it, so nothing may run past it. */
static int check_end(const tj_program *p, const tj_func *f, tj_diag *d)
{
	const tj_insn *last = &p->insns[f->first + f->count - 1];
	if (last->op == TJ_OP_RET || last->op == TJ_OP_JMP)
		return 0;
	if (f->count == 1)
		return fail(p, last, d, "function '%s' has no instructions; expected 'ret'", f->name);
	return fail(p, last, d, "function '%s' must end with 'ret' or 'jmp'", f->name);
}

static int verify_func(const tj_program *p, tj_func *f, tj_diag *d)
{
	if (check_end(p, f, d))
		return -1;
	int *depths = malloc(f->count * sizeof *depths);
	uint32_t *work = malloc(f->count * sizeof *work);
	int rc = -1;
	if (!depths || !work) {
		snprintf(d->msg, sizeof d->msg, "%s: error: out of memory", p->file);
		goto out;
	}
	for (uint32_t i = 0; i < f->count; i++)
		depths[i] = -1;
	size_t nwork = 0;
	int max = 0;
	depths[0] = 0;
	work[nwork++] = f->first;
	while (nwork) {
		uint32_t i = work[--nwork];
		const tj_insn *in = &p->insns[i];
		int depth = depths[i - f->first], pops, pushes;
		effect(in, &pops, &pushes);
		if (depth < pops) {
			const char *mn = tj_opinfo_table[in->op].mnemonic;
			fail(p, in, d, "operand stack underflow: '%s' needs %d value%s, the stack has %d",
			     mn ? mn : "call", pops, pops == 1 ? "" : "s", depth);
			goto out;
		}
		depth = depth - pops + pushes;
		if (depth > TJ_MAX_OPERAND_STACK) {
			fail(p, in, d, "operand stack overflow: more than %d values", TJ_MAX_OPERAND_STACK);
			goto out;
		}
		if (depth > max)
			max = depth;
		switch (in->op) {
		case TJ_OP_RET: break;
		case TJ_OP_JMP:
			if (flow(p, f, in, (uint32_t)in->a, depth, depths, work, &nwork, d))
				goto out;
			break;
		case TJ_OP_JZ:
		case TJ_OP_JNZ:
			if (flow(p, f, in, (uint32_t)in->a, depth, depths, work, &nwork, d))
				goto out;
			/* fall through */
		default:
			if (flow(p, f, in, i + 1, depth, depths, work, &nwork, d))
				goto out;
		}
	}
	f->max_stack = (uint32_t)max;
	for (uint32_t i = 0; i < f->count; i++)
		p->insns[f->first + i].depth = depths[i];
	rc = 0;
out:
	free(depths);
	free(work);
	return rc;
}

int tj_verify(tj_program *p, tj_diag *d)
{
	for (uint32_t i = 0; i < p->n_funcs; i++)
		if (verify_func(p, &p->funcs[i], d))
			return -1;
	return 0;
}
