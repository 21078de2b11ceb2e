/* SPDX-License-Identifier: MIT */
/* ops.h - the arithmetic of tinyjit, defined once.
 *
 * Included by the interpreter (run time) and by the stencils (compiled at
 * build time by clang into machine-code templates), so both execute the same
 * C for every operator.  Wrapping arithmetic goes through uint64_t because
 * signed overflow is undefined in C.  Division by zero is checked by the
 * callers, which report it as a VM error.
 */
#ifndef TJ_OPS_H
#define TJ_OPS_H

#include <stdint.h>

#define TJ_WRAP(expr) ((int64_t)(expr))

static inline int64_t tj_add(int64_t a, int64_t b)
{
	return TJ_WRAP((uint64_t)a + (uint64_t)b);
}
static inline int64_t tj_sub(int64_t a, int64_t b)
{
	return TJ_WRAP((uint64_t)a - (uint64_t)b);
}
static inline int64_t tj_mul(int64_t a, int64_t b)
{
	return TJ_WRAP((uint64_t)a * (uint64_t)b);
}
static inline int64_t tj_neg(int64_t a)
{
	return TJ_WRAP(0 - (uint64_t)a);
}
/* b != 0.  INT64_MIN / -1 overflows in C (and traps in idiv): it wraps to
 * INT64_MIN, and the remainder is 0. */
static inline int64_t tj_div(int64_t a, int64_t b)
{
	return b == -1 ? tj_neg(a) : a / b;
}
static inline int64_t tj_mod(int64_t a, int64_t b)
{
	return b == -1 ? 0 : a % b;
}
static inline int64_t tj_shl(int64_t a, int64_t b)
{
	return TJ_WRAP((uint64_t)a << (b & 63));
}
/* >> of a negative value is implementation-defined in C; gcc and clang
 * shift arithmetically, which is what shr means. */
static inline int64_t tj_shr(int64_t a, int64_t b)
{
	return a >> (b & 63);
}
static inline int64_t tj_ushr(int64_t a, int64_t b)
{
	return TJ_WRAP((uint64_t)a >> (b & 63));
}

/* The slots a function's frame needs on the value stack: its locals, one
 * scratch slot (the JIT keeps the top of stack in a register and spills it
 * one slot up, even from an empty stack) and its deepest operand stack. */
#define TJ_FRAME_SLOTS(nslots, max_stack) ((int64_t)(nslots) + 1 + (int64_t)(max_stack))

#endif
