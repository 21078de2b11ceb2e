/* SPDX-License-Identifier: MIT */
/* traceframe.h - the stack frame of a LuaJIT trace, read from the trace's own
 * machine code, and the CFI that describes it to libjitunwind (x86-64,
 * LuaJIT 2.1 built with LJ_GC64, POSIX calling convention).
 *
 * A trace is no function.  The interpreter enters it with a jump (BC_JLOOP
 * in vm_x64.dasc) from inside its own C frame, after moving rsp 16 bytes
 * further down to keep r12 and r13, which only compiled code uses; the trace
 * then moves rsp down by its spill area (T->spadjust, lj_asm.c
 * asm_head_root) and back before it jumps out (lj_asm_x86.h
 * asm_tail_fixup).  A side trace is entered by a jump from an exit of its
 * parent, with the parent's spill area still in place, and adds only what it
 * needs beyond it (lj_asm.c asm_head_side).  So at every instruction of a
 * trace the caller's frame is the interpreter's caller, at a fixed distance
 * from rsp: CFA = rsp + CFRAME_SIZE_JIT + the adjustment in force there.
 * jit.util does not give T->spadjust; the head and tail instructions do.
 */
#ifndef LJ_TRACEFRAME_H
#define LJ_TRACEFRAME_H

#include <stddef.h>
#include <stdint.h>

#include <jitunwind.h>

/* lj_frame.h, x64 POSIX: CFRAME_SIZE (10*8), the interpreter's frame from
 * its return address down; vm_x64.dasc BC_JLOOP moves rsp 16 bytes further
 * before the jump into a trace: CFRAME_SIZE_JIT (CFRAME_SIZE + 16). */
#define LJTF_CFRAME_SIZE 80
#define LJTF_CFRAME_SIZE_JIT (LJTF_CFRAME_SIZE + 16)

/* What a trace's code says about its frame, as byte offsets into it. */
typedef struct ljtf_frame {
	uint32_t size;
	int32_t entry_adj;   /* rsp below the interpreter's trace level at entry: the parent's spadjust */
	int32_t spadj;       /* the trace's own T->spadjust once its head has run */
	uint32_t head_end;   /* just past the head's adjustment; 0 when the head adjusts nothing */
	uint32_t tail_start; /* the final jump, after the adjustment back; `size` when there is none */
} ljtf_frame;

enum {
	LJTF_OK = 0,
	LJTF_ENOHEAD = -1, /* no store of the trace number into vmstate: not a trace head we know */
	LJTF_EADJUST = -2, /* the head's stack adjustment is not what LuaJIT emits */
};

/* Read the frame of trace `traceno` from its code, given the spadjust of
 * the parent it is entered from (0 for a root trace, which is entered at the
 * interpreter's trace level).  LJTF_OK or a negative LJTF_E* code. */
int ljtf_decode(const uint8_t *code, uint32_t size, uint32_t traceno, int32_t parent_spadj, ljtf_frame *out);

/* The decoded frame as ju_cfi_range rows (one per distinct rsp adjustment);
 * the instructions live in `out`, which must outlive the ranges. */
#define LJTF_MAX_RANGES 3
#define LJTF_INSNS_MAX 32
typedef struct ljtf_cfi {
	ju_cfi_range ranges[LJTF_MAX_RANGES];
	size_t n;
	uint8_t insns[LJTF_MAX_RANGES][LJTF_INSNS_MAX];
} ljtf_cfi;

/* 0, or -1 if the instructions did not fit (a bug: they are a few bytes). */
int ljtf_cfi_build(const ljtf_frame *f, ljtf_cfi *out);

/* A jump or conditional jump with a 32-bit displacement: where it ends in
 * the trace and where it goes.  A guard of a trace is `jcc` (or, at the
 * loop's end, `jmp`) to the exit stub of its snapshot (lj_asm_x86.h
 * asm_guardcc); the stubs lie outside the trace, in [lo, hi). */
typedef struct ljtf_branch {
	uint32_t end;
	uintptr_t target;
} ljtf_branch;

/* The branches of the code at `addr` whose target lies in [lo, hi), in
 * code order, found by their opcode bytes at every offset (no decoder: the
 * caller keeps only targets that are exit stubs, which bytes inside other
 * instructions hit by accident only if they spell one exactly).  Writes up
 * to `max` into `out`, returns how many there are. */
size_t ljtf_far_branches(const uint8_t *code, uint32_t size, uintptr_t addr, uintptr_t lo, uintptr_t hi,
			 ljtf_branch *out, size_t max);

/* A short English description of an LJTF_E* code. */
const char *ljtf_strerror(int err);

#endif
