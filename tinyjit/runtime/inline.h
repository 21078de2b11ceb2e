/* SPDX-License-Identifier: MIT */
/* inline.h - which calls the JIT inlines, and the stencils it copies for
 * each function (run time).
 *
 * tj_expand turns a function into units, one stencil copy each, in the
 * order they are laid out.  Without inlining a unit is an instruction.
 * Where a call is inlined, the CALL becomes PUSH_FRAME, the callee's
 * instructions follow as a new instance (its ENTER first, each RET as
 * POP_FRAME back to the code after the call), nested to the policy's depth.
 * Instances are made in pre-order, the order libjitunwind wants a blob's
 * inline tree in (ju_inline), and each occupies a contiguous run of units
 * inside its parent's.
 */
#ifndef TJ_INLINE_H
#define TJ_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include "../vm/vm.h"

/* What --inline[=N] means (the defaults) and its bounds.  A call is
 * inlined when the caller's instance is less than `depth` levels deep, the
 * callee has at most `max_insns` instructions (its ENTER included) and the
 * function's copied instructions stay within `budget`.  A recursive function
 * therefore inlines itself `depth` times and then calls.  The bounds keep a
 * blob's inline tree within libjitunwind's limits (JU_INLINE_DEPTH_MAX
 * levels, JU_INLINE_MAX entries). */
typedef struct tj_inline_policy {
	uint32_t depth;
	uint32_t max_insns;
	uint32_t budget;
} tj_inline_policy;

#define TJ_INLINE_DEPTH 3
#define TJ_INLINE_DEPTH_MAX 16
#define TJ_INLINE_SMALL 40
#define TJ_INLINE_BUDGET 2048

/* One stencil copy: instruction insn of instance inst, as stencil op (the
 * instruction's own, or PUSH_FRAME / POP_FRAME). */
typedef struct tj_unit {
	uint32_t insn;
	uint32_t inst;
	uint8_t op;
} tj_unit;

/* A function's body copied into a blob: the blob's own function (parent
 * TJ_NO_PARENT) or an inlined call of `fn` at call_insn of its parent. */
typedef struct tj_inst {
	uint32_t fn;
	uint32_t parent;
	uint32_t call_insn;
	uint32_t depth;      /* 0 for the blob's own function */
	uint32_t map;        /* unit_of[map + k]: the unit of fn's k-th instruction */
	uint32_t first, end; /* its units, [first, end): first is its ENTER */
} tj_inst;

#define TJ_NO_PARENT UINT32_MAX

typedef struct tj_expansion {
	tj_unit *units;
	size_t n_units, cap_units;
	tj_inst *insts;
	size_t n_insts, cap_insts;
	uint32_t *unit_of;
	size_t n_map, cap_map;
} tj_expansion;

/* Append function fn, and what it inlines under `pol` (NULL: nothing), to
 * x.  Returns 0, or -1 when out of memory. */
int tj_expand(tj_expansion *x, const tj_program *p, uint32_t fn, const tj_inline_policy *pol);
void tj_expansion_free(tj_expansion *x);
/* Room for `units` more units (and instruction maps) and `insts` more
 * instances, so that expanding without inlining never reallocates.
 * Returns 0, or -1 when out of memory. */
int tj_expansion_reserve(tj_expansion *x, size_t units, size_t insts);

/* The unit where instance inst's instruction insn starts. */
static inline uint32_t tj_unit_of(const tj_expansion *x, const tj_program *p, uint32_t inst, uint32_t insn)
{
	const tj_inst *in = &x->insts[inst];
	return x->unit_of[in->map + insn - p->funcs[in->fn].first];
}

#endif
