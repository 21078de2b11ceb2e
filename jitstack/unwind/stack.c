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
		if ((fp & 7) || !js_mem_word(w->s->mem, fp, &next) || !js_mem_word(w->s->mem, fp + 8, &ra)) {
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
		js_frame f = { ra, false, true };
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
	js_frame f = { pc, act, false };
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

int js_unwind_live(js_session *s, js_thread *t, js_stack *st)
{
	st->n = 0;
	st->truncated = false;
	st->end[0] = 0;
	st->loop_pc = 0;
	st->max_sp = 0;
	st->skipped = NULL;
	st->tid = t->tid;
	st->idle = t->idle;
	memcpy(st->comm, t->comm, sizeof st->comm);
	if (!t->have_regs) {
		st->skipped = t->why ? t->why : "not stopped";
		return -1;
	}
	js_mem_flush(s->mem); /* the thread ran since the cached pages were read */
	walk w = walk_for(s, st);
	int rc = dwfl_getthread_frames(s->dwfl, t->tid, on_frame, &w);
	if (rc == -1 && !st->end[0])
		snprintf(st->end, sizeof st->end, "%s", dwfl_errmsg(-1));
	return 0;
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
	walk w = walk_for(c->s, &st);
	if (dwfl_thread_getframes(th, on_frame, &w) == -1 && !st.end[0])
		snprintf(st.end, sizeof st.end, "%s", dwfl_errmsg(-1));
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
	st->n = 0;
	st->truncated = false;
	st->end[0] = 0;
	st->loop_pc = 0;
	walk w = walk_for(s, st);
	if (dwfl_getthread_frames(s->dwfl, st->tid, on_frame, &w) == -1 && !st->end[0])
		snprintf(st->end, sizeof st->end, "%s", dwfl_errmsg(-1));
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
	st->f = NULL;
	st->n = st->cap = 0;
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

/* ---- names ---------------------------------------------------------------------- */

struct dwarf_memo {
	Dwfl_Module *mod;
	bool has;
};

/* Does the module's own file carry DWARF lines?  Then looking a line up is
 * cheap (no separate debuginfo to find and open). */
static bool embedded_dwarf(js_session *s, Dwfl_Module *mod)
{
	for (size_t i = 0; i < s->n_memo; i++)
		if (s->memo[i].mod == mod)
			return s->memo[i].has;
	bool has = false;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t shstrndx;
	if (elf && !elf_getshdrstrndx(elf, &shstrndx)) {
		Elf_Scn *scn = NULL;
		while (!has && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;
			/* elf_strptr trusts headers that stayed as it checked them
			 * (elfin.c, name_at): here they do.  The ELF is a file
			 * libdwfl opened, our rewritten image, or the vdso's bytes;
			 * none is relocated in place, since libdwfl relocates only
			 * ET_REL files and only through a section_address
			 * callback, which this Dwfl has not (session.c). */
			if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)))
				has = !strcmp(name, ".debug_line");
		}
	}
	if (s->n_memo == s->cap_memo) {
		size_t cap = s->cap_memo ? s->cap_memo * 2 : 32;
		struct dwarf_memo *v = realloc(s->memo, cap * sizeof *v);
		if (!v)
			return has;
		s->memo = v;
		s->cap_memo = cap;
	}
	s->memo[s->n_memo++] = (struct dwarf_memo){ mod, has };
	return has;
}

/* ---- the pc memo ---- */

struct sym_memo {
	uint64_t key;      /* lookup pc + 1 (0: empty) */
	uint64_t pc_delta; /* f->pc - lookup pc, part of what func_off depends on */
	js_sym sym;
};

static size_t memo_slot(uint64_t k, size_t cap)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 24) & (cap - 1);
}

/* The memo's slot for key, or NULL when it cannot hold more. */
static struct sym_memo *memo_find(js_session *s, uint64_t key)
{
	bool changed = s->names_changes != js_names_epoch(s);
	if (changed || 2 * (s->names_n + 1) > s->names_cap) {
		/* Grow, and when JIT images changed, forget the names of JIT pcs
		 * (new code may sit at an old address), of pcs in no module
		 * (JIT code caught between two registrations) and those the
		 * perf map named; native names stay. */
		size_t cap = s->names_cap ? s->names_cap * (changed ? 1 : 2) : 256;
		if (cap > (1u << 20))
			return NULL;
		struct sym_memo *v = calloc(cap, sizeof *v);
		if (!v)
			return NULL;
		size_t n = 0;
		for (size_t i = 0; i < s->names_cap; i++) {
			const js_sym *y = &s->names[i].sym;
			if (!s->names[i].key ||
			    (changed && (y->jit || !y->module || y->source == JS_SRC_PERFMAP ||
					 y->source == JS_SRC_JITDUMP)))
				continue;
			size_t k = memo_slot(s->names[i].key, cap);
			while (v[k].key)
				k = (k + 1) & (cap - 1);
			v[k] = s->names[i];
			n++;
		}
		free(s->names);
		s->names = v;
		s->names_cap = cap;
		s->names_n = n;
		s->names_changes = js_names_epoch(s);
		if (2 * (n + 1) > cap)
			return memo_find(s, key); /* still full: grow (once) */
	}
	size_t k = memo_slot(key, s->names_cap);
	while (s->names[k].key && s->names[k].key != key)
		k = (k + 1) & (s->names_cap - 1);
	return &s->names[k];
}

static void symbolize(js_session *s, const js_frame *f, js_sym *o);

void js_symbolize(js_session *s, const js_frame *f, js_sym *o)
{
	uint64_t pc = js_lookup_pc(f);
	struct sym_memo *m = memo_find(s, pc + 1);
	if (m && m->key && m->pc_delta == f->pc - pc) {
		*o = m->sym;
		return;
	}
	symbolize(s, f, o);
	if (m) {
		s->names_n += !m->key;
		*m = (struct sym_memo){ pc + 1, f->pc - pc, *o };
	}
}

const char *js_source_name(js_name_source src)
{
	switch (src) {
	case JS_SRC_ELF: return "elf";
	case JS_SRC_GDB_JIT: return "gdb-jit";
	case JS_SRC_PERFMAP: return "perf-map";
	case JS_SRC_JITDUMP: return "jitdump";
	case JS_SRC_NONE: break;
	}
	return NULL;
}

/* The jitdump's name and line for pc, if it has them. */
static bool jitdump_name(js_session *s, const js_frame *f, uint64_t pc, js_sym *o)
{
	const js_jd_code *c = s->jd_on ? js_jitdump_find(&s->jd, pc) : NULL;
	if (!c)
		return false;
	o->func = js_demangle(s, c->name);
	o->func_off = f->pc - c->lo;
	o->source = JS_SRC_JITDUMP;
	const js_jd_line *l = js_jitdump_line(c, pc);
	if (l) {
		o->file = l->file;
		o->line = l->line;
		o->col = l->col;
	}
	return true;
}

/* The name for pc of a source without extents of its own: the jitdump,
 * else the perf map, if either has one. */
static void perfmap_name(js_session *s, const js_frame *f, uint64_t pc, js_sym *o)
{
	if (jitdump_name(s, f, pc, o))
		return;
	const js_pm_seg *g = s->pm_on ? js_perfmap_find(&s->pm, pc) : NULL;
	if (!g)
		return;
	o->func = js_demangle(s, g->name);
	o->func_off = f->pc - g->start;
	o->source = JS_SRC_PERFMAP;
}

static void symbolize(js_session *s, const js_frame *f, js_sym *o)
{
	memset(o, 0, sizeof *o);
	uint64_t pc = js_lookup_pc(f);
	Dwfl_Module *mod = js_module_at(s, pc);
	if (!mod) {
		o->jit = js_jit_image_at(&s->jit, pc); /* a rejected image's code */
		if (o->jit) {
			o->module = o->jit->label;
			o->module_off = f->pc - o->jit->code_lo;
		}
		perfmap_name(s, f, pc, o);
		return;
	}
	void **ud;
	Dwarf_Addr start;
	const char *name = dwfl_module_info(mod, &ud, &start, NULL, NULL, NULL, NULL, NULL);
	o->jit = js_jit_of(*ud);
	o->module = o->jit ? o->jit->label : name;
	o->module_off = f->pc - start;
	Dwarf_Addr bias;
	if (!o->jit && !dwfl_module_getelf(mod, &bias)) {
		/* a core whose files moved, or a file deleted since it was mapped */
		js_warn(s, "%s: cannot be read (%s): its frames are unnamed%s", name, dwfl_errmsg(-1),
			s->core ? " (--exe gives the executable's path)" : "");
		return;
	}
	if (o->jit && o->jit->desc == JS_IMAGE_FROM_JITDUMP) {
		jitdump_name(s, f, pc, o); /* its module holds the CFI; the dump, its name and lines */
		return;
	}
	GElf_Off off;
	GElf_Sym sym;
	const char *fn = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	if (fn) {
		o->func = js_demangle(s, fn);
		o->func_off = f->pc - (pc - off);
		o->source = o->jit ? JS_SRC_GDB_JIT : JS_SRC_ELF;
	} else {
		perfmap_name(s, f, pc, o);
	}
	if (!(o->jit || s->opt->source_all || embedded_dwarf(s, mod)))
		return;
	Dwfl_Line *line = dwfl_module_getsrc(mod, pc);
	if (line) {
		int l = 0, c = 0;
		const char *file = dwfl_lineinfo(line, NULL, &l, &c, NULL, NULL);
		if (file && l > 0) {
			o->file = file;
			o->line = l;
			o->col = c;
		}
	}
}
