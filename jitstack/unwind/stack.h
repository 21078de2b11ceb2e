/* SPDX-License-Identifier: MIT */
/* stack.h - one thread's stack: unwinding it with libdwfl (its frames are
 * then named by name.h).
 *
 * Unwinding needs the thread stopped (or a core); naming does not, so a
 * dump resumes the target between the two.  Each frame records whether it
 * was found by following frame pointers: libdwfl falls back to the rbp
 * chain where the frame below has no CFI (no module, a rejected JIT image),
 * and the output says so for the frames concerned.
 */
#ifndef JS_STACK_H
#define JS_STACK_H

#include "python/merge.h"
#include "unwind/name.h"
#include "unwind/session.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct js_frame {
	uint64_t pc;
	bool activation; /* pc is where the thread is (or a signal frame), not a return address */
	bool by_fp;      /* found through the frame pointer: the frame below had no CFI */
} js_frame;

typedef struct js_stack {
	pid_t tid;
	char comm[32];
	bool idle;
	js_frame *f;
	size_t n, cap;
	js_sym *sym; /* f[i]'s name at sym[i], once js_name_stack named them */
	size_t cap_sym;
	bool truncated;      /* stopped at --max-frames */
	char end[200];       /* why unwinding stopped before the outermost frame, or "" */
	uint64_t loop_pc;    /* the pc at which the CFI made a frame its own caller, or 0 */
	uint64_t max_sp;     /* the highest stack pointer of its frames */
	const char *skipped; /* the thread could not be unwound at all: why */
	uint8_t *copy;       /* room for a sample's stack copy (record's ptrace mode) */
	size_t cap_copy;
	/* the Python frames the thread runs (a source's, source.h: good until
	 * its next walk) and where they go among f[] (merge.h), once
	 * js_place_interp_frames placed them */
	const js_py_frame *py;
	js_py_insert *py_at;
	size_t n_py_at, cap_py_at;
} js_stack;

/* A thread to unwind, as a value: its registers and, when the thread has
 * run on since they were taken (a sample), a copy of the top of its stack.
 * Reads of the copy come from it; a read in the `reach` bytes above the
 * stack pointer but past the copy fails (the stack there is no longer the
 * sampled one: the unwind ran off the copy's end); every other read (below
 * the stack pointer, other mappings, the stack past `reach`) goes to the
 * target's memory. */
typedef struct js_sample {
	pid_t tid;
	char comm[32];
	bool idle;
	const struct user_regs_struct *regs; /* the host's ptrace layout */
	const uint8_t *stack;                /* a copy of [sp, sp + len), or NULL: none */
	size_t len;
	uint64_t reach;
} js_sample;

/* What an unwind read of a sample's stack copy: the end of the highest word
 * read, as an offset from the stack pointer (0: none), and whether a read
 * ran off the copy's end. */
typedef struct js_copy_use {
	size_t used;
	bool ran_off;
} js_copy_use;

/* Unwind the thread x of a live target into st (x is only read, during the
 * call); use (or NULL) gets what was read of its stack copy.  Returns 0 or
 * -1 (st->end). */
int js_unwind(js_session *s, const js_sample *x, js_stack *st, js_copy_use *use);
/* js_unwind of a stopped thread of s, from its registers and the target's
 * memory.  Returns 0, or -1 with st->skipped when it has no registers. */
int js_unwind_live(js_session *s, js_thread *t, js_stack *st);
/* Unwind every thread of a core; calls cb for each.  Returns the count. */
size_t js_unwind_core(js_session *s, void (*cb)(js_stack *st, void *arg), void *arg);
/* Unwind one thread of a core again (after js_fix_loops). */
void js_unwind_core_tid(js_session *s, js_stack *st);
/* Stacks whose unwinding looped in a JIT image's CFI: drop that CFI, so
 * those frames are found by frame pointers, with a warning, and report the
 * modules again.  Returns how many images lost their CFI; the caller then
 * unwinds the stacks with loop_pc set again (the threads still stopped). */
size_t js_fix_loops(js_session *s, js_stack *st, size_t n);

/* Mark frames found by frame pointers (needs the modules, not the target). */
void js_mark_fp(js_session *s, js_stack *st);
void js_stack_free(js_stack *st);

/* One 8-byte read of the unwind in flight (session.c's thread callbacks):
 * from the sample's stack copy, or the target's memory (js_sample). */
bool js_unwinding_word(struct js_unwinding *u, uint64_t addr, uint64_t *v);
/* The registers of the unwind in flight. */
const struct user_regs_struct *js_unwinding_regs(const struct js_unwinding *u);

/* The address to look a frame's function up at: a return address points
 * after the call, so the call itself is at pc - 1. */
static inline uint64_t js_lookup_pc(const js_frame *f)
{
	return f->activation ? f->pc : f->pc - 1;
}

/* The module that holds pc, or NULL.  dwfl_addrmodule alone may answer
 * with a module for a pc outside it (its end, or JIT code mapped past
 * libasan's bss, elfutils 0.188); this checks the module's bounds and,
 * when its ELF has them, its loadable segments. */
Dwfl_Module *js_module_at(js_session *s, uint64_t pc);

#endif
