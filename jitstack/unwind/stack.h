/* stack.h - one thread's stack: unwinding it with libdwfl, and naming its
 * frames.
 *
 * Unwinding needs the thread stopped (or a core); naming does not, so a
 * dump resumes the target between the two.  Each frame records whether it
 * was found by following frame pointers: libdwfl falls back to the rbp
 * chain where the frame below has no CFI (no module, a rejected JIT image),
 * and the output says so for the frames concerned.
 */
#ifndef JS_STACK_H
#define JS_STACK_H

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
	bool truncated;      /* stopped at --max-frames */
	char end[200];       /* why unwinding stopped before the outermost frame, or "" */
	uint64_t loop_pc;    /* the pc at which the CFI made a frame its own caller, or 0 */
	uint64_t max_sp;     /* the highest stack pointer of its frames */
	const char *skipped; /* the thread could not be unwound at all: why */
} js_stack;

/* Unwind a stopped thread of s (live) into st.  Returns 0 or -1 (st->end). */
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

/* ---- names ------------------------------------------------------------------ */

/* Where a frame's name came from, in this order of priority where sources
 * cover the same pc: a JIT image (the JIT's own registration of that code,
 * with its extent, CFI and source lines), a native module's symbols, the
 * jitdump (names, lines and CFI, but a log: a JIT may write it for code it
 * also registers), then the perf map (names only). */
typedef enum js_name_source {
	JS_SRC_NONE,    /* unnamed */
	JS_SRC_ELF,     /* a native module's symbol tables */
	JS_SRC_GDB_JIT, /* a JIT image registered through the GDB JIT interface */
	JS_SRC_PERFMAP, /* the target's perf map */
	JS_SRC_JITDUMP, /* the target's jitdump */
} js_name_source;

/* "elf", "gdb-jit", "jitdump", "perf-map" (JSON's "source"), or NULL for none. */
const char *js_source_name(js_name_source src);

typedef struct js_sym {
	const char *func;      /* NULL when unknown */
	js_name_source source; /* where func came from */
	uint64_t func_off;     /* pc - the function's start */
	const char *module;    /* the module's file (or the JIT image's label); NULL if none */
	uint64_t module_off;   /* pc - the module's start */
	const char *file;      /* source file, NULL when unknown */
	int line, col;
	js_image *jit; /* the JIT image the frame is in (accepted or rejected) */
} js_sym;

/* Name a frame: from a JIT image or a native module's symbols, else from
 * the jitdump, else the perf map (code in no module, or where the module
 * has no symbol).
 * Source lines come from JIT images and from modules that carry their own
 * DWARF; with opt->source_all from separate debuginfo too. */
void js_symbolize(js_session *s, const js_frame *f, js_sym *out);

#endif
