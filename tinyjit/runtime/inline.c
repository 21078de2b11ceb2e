/* SPDX-License-Identifier: MIT */
/* inline.c - expand functions into the stencils the JIT copies, inlining
 * small callees (run time).  See inline.h for the shape of the result.
 */
#include <stdlib.h>

#include "inline.h"

/* Grow *v (n used of *cap elements of size sz) to hold one more. */
static int grow(void **v, size_t n, size_t *cap, size_t sz, size_t more)
{
	if (n + more <= *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 64;
	while (c < n + more)
		c *= 2;
	void *nv = realloc(*v, c * sz);
	if (!nv)
		return -1;
	*v = nv;
	*cap = c;
	return 0;
}

static int add_unit(tj_expansion *x, uint32_t insn, uint32_t inst, enum tj_op op)
{
	if (grow((void **)&x->units, x->n_units, &x->cap_units, sizeof *x->units, 1))
		return -1;
	x->units[x->n_units++] = (tj_unit){ insn, inst, (uint8_t)op };
	return 0;
}

/* A new instance of fn; returns its index, or -1. */
static long add_inst(tj_expansion *x, const tj_program *p, uint32_t fn, uint32_t parent, uint32_t call_insn,
		     uint32_t depth)
{
	uint32_t count = p->funcs[fn].count;
	if (grow((void **)&x->insts, x->n_insts, &x->cap_insts, sizeof *x->insts, 1) ||
	    grow((void **)&x->unit_of, x->n_map, &x->cap_map, sizeof *x->unit_of, count))
		return -1;
	x->insts[x->n_insts] = (tj_inst){ fn, parent, call_insn, depth, (uint32_t)x->n_map, 0, 0 };
	x->n_map += count;
	return (long)x->n_insts++;
}

/* Whether an instance `depth` levels deep inlines its call `in`, the
 * blob's units so far counted from root_unit. */
static int inlines(const tj_expansion *x, const tj_program *p, const tj_inline_policy *pol, uint32_t depth,
		   const tj_insn *in, size_t root_unit)
{
	if (!pol || in->op != TJ_OP_CALL || depth >= pol->depth)
		return 0;
	/* the verifier found no path to it: no depth, no frame to place */
	if (in->depth < 0)
		return 0;
	uint32_t count = p->funcs[in->a].count;
	return count <= pol->max_insns && x->n_units - root_unit + count + 1 <= pol->budget;
}

/* Instance inst's units.  x's arrays may move while its callees are
 * expanded: the instance is re-read through its index. */
static int expand_inst(tj_expansion *x, const tj_program *p, const tj_inline_policy *pol, uint32_t inst,
		       size_t root_unit)
{
	const tj_func *f = &p->funcs[x->insts[inst].fn];
	const uint32_t map = x->insts[inst].map - f->first, depth = x->insts[inst].depth;
	const int inlined = x->insts[inst].parent != TJ_NO_PARENT;
	x->insts[inst].first = (uint32_t)x->n_units;
	for (uint32_t i = f->first; i < f->first + f->count; i++) {
		const tj_insn *in = &p->insns[i];
		x->unit_of[map + i] = (uint32_t)x->n_units;
		if (inlines(x, p, pol, depth, in, root_unit)) {
			long child = add_inst(x, p, (uint32_t)in->a, inst, i, depth + 1);
			if (child < 0 || add_unit(x, i, inst, TJ_OP_PUSH_FRAME) ||
			    expand_inst(x, p, pol, (uint32_t)child, root_unit))
				return -1;
			continue;
		}
		enum tj_op op = inlined && in->op == TJ_OP_RET ? TJ_OP_POP_FRAME : (enum tj_op)in->op;
		if (add_unit(x, i, inst, op))
			return -1;
	}
	x->insts[inst].end = (uint32_t)x->n_units;
	return 0;
}

int tj_expansion_reserve(tj_expansion *x, size_t units, size_t insts)
{
	if (grow((void **)&x->units, x->n_units, &x->cap_units, sizeof *x->units, units) ||
	    grow((void **)&x->insts, x->n_insts, &x->cap_insts, sizeof *x->insts, insts) ||
	    grow((void **)&x->unit_of, x->n_map, &x->cap_map, sizeof *x->unit_of, units))
		return -1;
	return 0;
}

int tj_expand(tj_expansion *x, const tj_program *p, uint32_t fn, const tj_inline_policy *pol)
{
	long root = add_inst(x, p, fn, TJ_NO_PARENT, 0, 0);
	if (root < 0)
		return -1;
	return expand_inst(x, p, pol && pol->depth ? pol : NULL, (uint32_t)root, x->n_units);
}

void tj_expansion_free(tj_expansion *x)
{
	free(x->units);
	free(x->insts);
	free(x->unit_of);
	*x = (tj_expansion){ 0 };
}
