/* SPDX-License-Identifier: MIT */
/* stack.c - unwinding threads with libdwfl and naming frames (stack.h). */
#include "unwind/stack.h"
#include "unwind/demangle.h"
#include "base/grow.h"
#include "target/machine.h"
#include "base/bounds.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- unwinding -------------------------------------------------------------- */

typedef struct walk {
	js_session *s;
	js_stack *st;
	unsigned max;
	uint64_t last_pc, last_sp;
	int sp_reg;   /* DWARF number of the stack pointer */
	bool records; /* walk frame records ourselves where there is no CFI (AArch64) */
} walk;

static bool has_cfi(js_session *s, uint64_t pc);

/* The unwind in flight: the thread, as js_unwind was handed it, and what
 * its unwind read of the stack copy. */
struct js_unwinding {
	const js_sample *x;
	uint64_t sp;
	js_mem *mem;
	js_copy_use use;
};

bool js_unwinding_word(struct js_unwinding *u, uint64_t addr, uint64_t *v)
{
	const js_sample *x = u->x;
	if (x->len >= 8 && addr >= u->sp && addr - u->sp <= x->len - 8) {
		size_t off = (size_t)(addr - u->sp);
		memcpy(v, x->stack + off, 8);
		if (off + 8 > u->use.used)
			u->use.used = off + 8;
		return true;
	}
	uint64_t reach = x->reach > x->len ? x->reach : x->len;
	if (x->stack && addr >= u->sp && addr - u->sp < reach) {
		u->use.ran_off = true;
		return false;
	}
	return js_mem_word(u->mem, addr, v);
}

const struct user_regs_struct *js_unwinding_regs(const struct js_unwinding *u)
{
	return u->x->regs;
}

/* A word of the target as the thread being unwound sees it: through its
 * stack copy while js_unwind runs, else (a core) the target's memory. */
static bool stack_word(js_session *s, uint64_t addr, uint64_t *v)
{
	return s->unwinding ? js_unwinding_word(s->unwinding, addr, v) : js_mem_word(s->mem, addr, v);
}

static int push(js_stack *st, const js_frame *f)
{
	if (!js_grow(&st->f, &st->cap, st->n, sizeof *st->f))
		return -1;
	st->f[st->n++] = *f;
	return 0;
}

/* AArch64 frame records: x29 points at {caller's x29, return address}.  A
 * signed return address (pointer authentication) carries its code above
 * the 48 address bits user space has. */
enum { A64_FP = 29, A64_VA_BITS = 48 };
#define MAX_RECORD_GAP ((uint64_t)1 << 20)

/* From a frame without CFI, follow the chain of frame records from its
 * x29, the way perf -g and frame-pointer profilers do.  libdwfl's own
 * AArch64 fallback (elfutils 0.188) takes the link register as the
 * caller of every frame it reaches without CFI, not only of the innermost
 * one: below a frame unwound by CFI that repeats the frame and loses one
 * further down. */
static void walk_records(walk *w, uint64_t fp)
{
	js_stack *st = w->st;
	while (fp) {
		uint64_t next, ra;
		if ((fp & 7) || !stack_word(w->s, fp, &next) || !stack_word(w->s, fp + 8, &ra)) {
			snprintf(st->end, sizeof st->end, "frame record at %#lx unreadable",
				 (unsigned long)fp);
			return;
		}
		ra &= ((uint64_t)1 << A64_VA_BITS) - 1;
		if (!ra)
			return;
		if (st->n >= w->max) {
			st->truncated = true;
			return;
		}
		js_frame f = { .pc = ra, .by_fp = true };
		if (push(st, &f)) {
			snprintf(st->end, sizeof st->end, "out of memory");
			return;
		}
		if (fp + 16 > st->max_sp)
			st->max_sp = fp + 16;
		if (next && (next <= fp || next - fp > MAX_RECORD_GAP)) {
			snprintf(st->end, sizeof st->end,
				 "frame record at %#lx links to %#lx, not further up the stack",
				 (unsigned long)fp, (unsigned long)next);
			return;
		}
		fp = next;
	}
}

static int on_frame(Dwfl_Frame *fr, void *arg)
{
	walk *w = arg;
	Dwarf_Addr pc;
	bool act;
	if (!dwfl_frame_pc(fr, &pc, &act)) {
		snprintf(w->st->end, sizeof w->st->end, "%s", dwfl_errmsg(-1));
		return DWARF_CB_ABORT;
	}
	if (w->st->n >= w->max) {
		w->st->truncated = true;
		return DWARF_CB_ABORT;
	}
	/* Garbage CFI can describe a frame as its own caller: same pc, same
	 * stack pointer.  libdwfl would loop until the frame limit. */
	Dwarf_Word sp = 0;
	bool have_sp = w->sp_reg >= 0 && dwfl_frame_reg(fr, (unsigned)w->sp_reg, &sp) == 0;
	if (w->st->n && have_sp && pc == w->last_pc && sp == w->last_sp) {
		snprintf(w->st->end, sizeof w->st->end,
			 "a frame repeats itself (pc %#lx): corrupt unwind data", (unsigned long)pc);
		w->st->loop_pc = pc;
		return DWARF_CB_ABORT;
	}
	w->last_pc = pc;
	w->last_sp = have_sp ? sp : 0;
	if (have_sp && sp > w->st->max_sp)
		w->st->max_sp = sp;
	js_frame f = { .pc = pc, .activation = act };
	if (push(w->st, &f)) {
		snprintf(w->st->end, sizeof w->st->end, "out of memory");
		return DWARF_CB_ABORT;
	}
	if (w->records && !has_cfi(w->s, js_lookup_pc(&f))) {
		Dwarf_Word fp;
		if (dwfl_frame_reg(fr, A64_FP, &fp) == 0)
			walk_records(w, fp);
		else
			snprintf(w->st->end, sizeof w->st->end, "no CFI at %#lx and no frame pointer",
				 (unsigned long)pc);
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

static unsigned max_frames(const js_session *s)
{
	return s->opt->max_frames ? s->opt->max_frames : JS_DEFAULT_MAX_FRAMES;
}

static walk walk_for(js_session *s, js_stack *st)
{
	const js_arch *a = js_arch_for(s->machine);
	return (walk){ s, st, max_frames(s), 0, 0, a ? a->sp_reg : -1, s->machine == EM_AARCH64 };
}

/* The JIT images deferred by the lazy reader (jitmodules.h) that hold pcs
 * of this stack are read now; true when one was, and the stack must be
 * unwound again with it (the frames below a JIT frame depend on its CFI). */
static bool load_for_stack(js_session *s, const js_stack *st)
{
	size_t added = 0;
	for (size_t i = 0; i < st->n && s->jit.n_defer_left; i++) {
		uint64_t pc = js_lookup_pc(&st->f[i]);
		added += js_load_jit_for(s, &pc, 1);
	}
	return added > 0;
}

/* Each unwind that reads an image finds at least one more frame's; a stack
 * of many JIT frames without frame pointers takes a round per frame. */
enum { MAX_LOAD_ROUNDS = 256 };

static void start_over(js_stack *st)
{
	st->n = 0;
	st->truncated = false;
	st->end[0] = 0;
	st->loop_pc = 0;
	st->max_sp = 0;
}

/* Unwind a thread, reading the JIT images its pcs need: th, a core's
 * thread as libdwfl lists it, or (NULL) the thread st->tid (the one in
 * flight, or a core's).  Every unwind takes this path. */
static void unwind_tid(js_session *s, js_stack *st, Dwfl_Thread *th)
{
	for (unsigned round = 0;; round++) {
		start_over(st);
		walk w = walk_for(s, st);
		int rc = th ? dwfl_thread_getframes(th, on_frame, &w)
			    : dwfl_getthread_frames(s->dwfl, st->tid, on_frame, &w);
		if (rc == -1 && !st->end[0])
			snprintf(st->end, sizeof st->end, "%s", dwfl_errmsg(-1));
		if (round == MAX_LOAD_ROUNDS || !load_for_stack(s, st))
			return;
	}
}

int js_unwind(js_session *s, const js_sample *x, js_stack *st, js_copy_use *use)
{
	start_over(st);
	st->skipped = NULL;
	st->tid = x->tid;
	st->idle = x->idle;
	memcpy(st->comm, x->comm, sizeof st->comm);
	js_mem_flush(s->mem); /* the thread ran since the cached pages were read */
	struct js_unwinding u = { x, js_regs_sp(x->regs), s->mem, { 0, false } };
	s->unwinding = &u;
	unwind_tid(s, st, NULL);
	s->unwinding = NULL;
	if (use)
		*use = u.use;
	return 0;
}

int js_unwind_live(js_session *s, js_thread *t, js_stack *st)
{
	if (!t->have_regs) {
		start_over(st);
		st->tid = t->tid;
		st->idle = t->idle;
		memcpy(st->comm, t->comm, sizeof st->comm);
		st->skipped = t->why ? t->why : "not stopped";
		return -1;
	}
	js_sample x = { .tid = t->tid, .idle = t->idle, .regs = &t->regs };
	memcpy(x.comm, t->comm, sizeof x.comm);
	return js_unwind(s, &x, st, NULL);
}

typedef struct core_walk {
	js_session *s;
	void (*cb)(js_stack *, void *);
	void *arg;
	size_t count;
} core_walk;

static int on_core_thread(Dwfl_Thread *th, void *arg)
{
	core_walk *c = arg;
	js_stack st = { 0 };
	st.tid = dwfl_thread_tid(th);
	snprintf(st.comm, sizeof st.comm, "%s", c->s->comm);
	unwind_tid(c->s, &st, th);
	c->cb(&st, c->arg);
	js_stack_free(&st);
	return ++c->count < JS_MAX_THREADS ? DWARF_CB_OK : DWARF_CB_ABORT;
}

size_t js_unwind_core(js_session *s, void (*cb)(js_stack *st, void *arg), void *arg)
{
	core_walk c = { s, cb, arg, 0 };
	dwfl_getthreads(s->dwfl, on_core_thread, &c);
	return c.count;
}

void js_unwind_core_tid(js_session *s, js_stack *st)
{
	unwind_tid(s, st, NULL);
}

size_t js_fix_loops(js_session *s, js_stack *st, size_t n)
{
	size_t dropped = 0;
	for (size_t i = 0; i < n; i++) {
		if (!st[i].loop_pc)
			continue;
		uint64_t pc = st[i].loop_pc;
		js_image *im = js_jit_image_at(&s->jit, pc);
		if (!im && s->jd_on && js_jitdump_drop_cfi(&s->jd, pc)) {
			js_warn(s,
				"jitdump %s: the CFI of the code at %#lx makes the frame its own caller; its "
				"frames are found by frame pointers instead",
				s->jd.path, (unsigned long)pc);
			dropped++;
			continue;
		}
		if (!im || !js_image_usable(im) || !im->out.n_fdes)
			continue;
		js_warn(s,
			"JIT image %#lx: its CFI makes the frame at %#lx its own caller; its frames are "
			"found by frame pointers instead",
			(unsigned long)im->symfile_addr, (unsigned long)pc);
		if (js_jit_drop_cfi(&s->jit, im) == 0)
			dropped++;
	}
	if (dropped)
		js_refresh_modules(s);
	return dropped;
}

void js_stack_free(js_stack *st)
{
	free(st->f);
	free(st->sym);
	free(st->copy);
	free(st->py_at);
	*st = (js_stack){ 0 };
}

Dwfl_Module *js_module_at(js_session *s, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, pc);
	Dwarf_Addr lo, hi;
	if (!mod || !dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL) || pc < lo || pc >= hi)
		return NULL;
	/* A module read from maps spans its file's mappings and the
	 * anonymous ones right after them (its bss): JIT code mapped there
	 * is not the module's.  Its loadable segments say what is. */
	return js_module_maps(mod, pc, pc + 1) ? mod : NULL;
}

/* Does libdwfl find CFI for this pc (the test its unwinder makes before
 * falling back to the frame pointer)? */
static bool has_cfi(js_session *s, uint64_t pc)
{
	Dwfl_Module *mod = js_module_at(s, pc);
	if (!mod)
		return false;
	Dwarf_Addr bias;
	Dwarf_Frame *fr;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0) {
		free(fr);
		return true;
	}
	cfi = dwfl_module_dwarf_cfi(mod, &bias);
	if (cfi && dwarf_cfi_addrframe(cfi, pc - bias, &fr) == 0) {
		free(fr);
		return true;
	}
	return false;
}

void js_mark_fp(js_session *s, js_stack *st)
{
	for (size_t i = 1; i < st->n; i++)
		st->f[i].by_fp = !has_cfi(s, js_lookup_pc(&st->f[i - 1]));
}
