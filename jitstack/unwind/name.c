/* SPDX-License-Identifier: MIT */
/* name.c - naming frames (name.h). */
#include "unwind/name.h"
#include "base/bounds.h"
#include "base/grow.h"
#include "base/hash.h"
#include "unwind/demangle.h"
#include "unwind/inline.h"
#include "unwind/stack.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* A pc named: the names in the order met, indexed by lookup pc + 1. */
struct sym_memo {
	uint64_t key;      /* lookup pc + 1 */
	uint64_t pc_delta; /* f->pc - lookup pc, part of what func_off depends on */
	js_sym sym;
};

#define MEMO_MAX (1u << 19) /* names kept at the most */
#define INL_CHUNK 16384     /* bytes per chunk of inline frames */

/* A copy of the inline frames v[0..n) in arena: the array and its strings
 * (control characters made '?', as every name from a target).  NULL when
 * out of memory. */
static const js_inline *keep_inline(struct js_strchunk **arena, const js_inline *v, size_t n)
{
	js_inline *w = js_strs_alloc(arena, n * sizeof *w, INL_CHUNK);
	for (size_t i = 0; w && i < n; i++) {
		w[i] = v[i];
		if (v[i].func && !(w[i].func = js_strs_keep(arena, v[i].func, strlen(v[i].func), INL_CHUNK)))
			return NULL;
		if (v[i].file && !(w[i].file = js_strs_keep(arena, v[i].file, strlen(v[i].file), INL_CHUNK)))
			return NULL;
	}
	return w;
}

/* A name the memo drops when JIT sources change: JIT pcs (new code may sit
 * at an old address), pcs in no module (JIT code caught between two
 * registrations) and those the perf map or the jitdump named. */
static bool jit_named(const js_sym *y)
{
	return y->jit || !y->module || y->source == JS_SRC_PERFMAP || y->source == JS_SRC_JITDUMP;
}

/* When JIT images, the perf map or the jitdump changed, forget the names
 * of JIT code; native names stay.  When a forgotten name had inline
 * frames, the kept ones move to a fresh arena, so the arena holds only
 * what the memo holds (a name whose frames cannot be moved is forgotten
 * too). */
static void memo_forget_jit(js_session *s)
{
	bool moving = false;
	for (size_t i = 0; i < s->names_n && !moving; i++)
		moving = s->names[i].sym.n_inl && jit_named(&s->names[i].sym);
	struct js_strchunk *fresh = NULL;
	size_t n = 0;
	for (size_t i = 0; i < s->names_n; i++) {
		js_sym *y = &s->names[i].sym;
		if (jit_named(y))
			continue;
		if (moving && y->n_inl && !(y->inl = keep_inline(&fresh, y->inl, y->n_inl)))
			continue;
		s->names[n++] = s->names[i];
	}
	if (moving) {
		js_strs_free(&s->inl_kept);
		s->inl_kept = fresh;
	}
	s->names_n = n;
	js_htab_clear(&s->names_index);
	for (size_t i = 0; i < n; i++)
		js_htab_put(&s->names_index, s->names[i].key,
			    (uint32_t)i + 1); /* no growth: fewer than before */
	s->names_changes = js_names_epoch(s);
}

static void symbolize(js_session *s, const js_frame *f, js_sym *o, struct js_strchunk **arena);

/* Name f into o: from the memo, or looked up and kept there. */
static void name_frame(js_session *s, const js_frame *f, js_sym *o)
{
	uint64_t pc = js_lookup_pc(f);
	uint32_t v = js_htab_get(&s->names_index, pc + 1);
	struct sym_memo *m = v ? &s->names[v - 1] : NULL;
	if (m) {
		*o = m->sym;
		if (m->pc_delta != f->pc - pc) {
			/* the same pc, once an activation and now a return
			 * address: only the offsets from f->pc differ */
			uint64_t d = (f->pc - pc) - m->pc_delta;
			o->func_off += d;
			o->module_off += d;
			m->pc_delta = f->pc - pc;
			m->sym = *o;
		}
		return;
	}
	bool keep = s->names_n < MEMO_MAX &&
		    js_grow(&s->names, &s->names_cap, s->names_n, sizeof *s->names) &&
		    !js_htab_reserve(&s->names_index, 1);
	symbolize(s, f, o, keep ? &s->inl_kept : &s->inl_scratch);
	if (!keep)
		return;
	s->names[s->names_n++] = (struct sym_memo){ pc + 1, f->pc - pc, *o };
	js_htab_put(&s->names_index, pc + 1, (uint32_t)s->names_n);
}

void js_name_stack(js_session *s, js_stack *st)
{
	if (st->cap_sym < st->n) {
		js_sym *v = realloc(st->sym, st->cap * sizeof *v);
		if (!v) {
			snprintf(st->end, sizeof st->end, "out of memory");
			st->n = 0;
			return;
		}
		st->sym = v;
		st->cap_sym = st->cap;
	}
	js_strs_free(&s->inl_scratch); /* the last stack's, which the memo could not keep */
	if (s->names_changes != js_names_epoch(s))
		memo_forget_jit(s);
	for (size_t i = 0; i < st->n; i++)
		name_frame(s, &st->f[i], &st->sym[i]);
}

const char *js_source_name(js_name_source src)
{
	switch (src) {
	case JS_SRC_ELF: return "elf";
	case JS_SRC_GDB_JIT: return "gdb-jit";
	case JS_SRC_PERFMAP: return "perf-map";
	case JS_SRC_JITDUMP: return "jitdump";
	case JS_SRC_PYTHON: return "python";
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

/* libjitunwind names a piece of code with guest functions inlined in it
 * (ju_inline) by their chain, innermost first and the native function
 * last: "guest:leaf <- guest:mid <- guest:run" (docs/API.md, "Guest
 * frames").  Such a name becomes inline frames like DWARF's: o->func the
 * last, o->inl the others, without lines (a perf map has none).  Only the
 * exact form: parts split at PM_SEP, none empty, at most
 * JS_MAX_INLINE_DEPTH inlined; any other name is one function. */
#define PM_SEP " <- "

/* Whether name is `outer` or a chain ending in it. */
static bool ends_chain(const char *name, const char *outer)
{
	size_t n = strlen(name), m = strlen(outer);
	return n == m ? !strcmp(name, outer)
		      : n > m + strlen(PM_SEP) && !strcmp(name + n - m, outer) &&
				!memcmp(name + n - m - strlen(PM_SEP), PM_SEP, strlen(PM_SEP));
}

/* Where the native function of a chain begins: its pieces are lines side by
 * side, each ending in its name; followed back at most 1024 lines. */
static uint64_t chain_start(js_session *s, const js_pm_seg *g, const char *outer, uint64_t *gap)
{
	uint64_t start = g->start;
	for (int i = 0; i < 1024 && start; i++) {
		/* a map read for some pcs only (a dump) must hold the lines at
		 * start - 1 and start to tell the piece before */
		if (!js_perfmap_wanted(&s->pm, start - 1) || !js_perfmap_wanted(&s->pm, start)) {
			*gap = start;
			break;
		}
		const js_pm_seg *p = js_perfmap_find(&s->pm, start - 1);
		if (!p || p->hi != start || !ends_chain(p->name, outer))
			break;
		start = p->start;
	}
	return start;
}

static void perfmap_chain(js_session *s, const js_frame *f, const js_pm_seg *g, js_sym *o,
			  struct js_strchunk **arena)
{
	const char *name = g->name;
	const char *cut[JS_MAX_INLINE_DEPTH + 1]; /* where each separator is */
	size_t n = 0;
	for (const char *p = name; (p = strstr(p, PM_SEP)); p += strlen(PM_SEP)) {
		if (n == JS_MAX_INLINE_DEPTH + 1 || p == (n ? cut[n - 1] + strlen(PM_SEP) : name))
			return; /* too deep, or an empty part */
		cut[n++] = p;
	}
	const char *last = n ? cut[n - 1] + strlen(PM_SEP) : name;
	if (!n || n == JS_MAX_INLINE_DEPTH + 1 || !*last)
		return;
	char buf[JS_MAX_PERFMAP_LINE + 1];
	js_inline v[JS_MAX_INLINE_DEPTH];
	size_t len = (size_t)(cut[n - 1] - name);
	if (len >= sizeof buf)
		return;
	memcpy(buf, name, len);
	for (size_t i = 0; i < n; i++) {
		const char *from = i ? cut[i - 1] + strlen(PM_SEP) : name;
		buf[cut[i] - name] = 0; /* the part ends at its separator */
		v[i] = (js_inline){ js_demangle(s, buf + (from - name)), NULL, 0, 0 };
	}
	const js_inline *kept = keep_inline(arena, v, n);
	if (!kept)
		return;
	o->func = js_demangle(s, last);
	uint64_t gap = 0;
	o->func_off = f->pc - chain_start(s, g, last, &gap);
	o->inl = kept;
	o->n_inl = (uint32_t)n;
}

uint64_t js_chain_gap(js_session *s, uint64_t pc)
{
	const js_pm_seg *g = s->pm_on ? js_perfmap_find(&s->pm, pc) : NULL;
	const char *last = NULL;
	for (const char *p = g ? g->name : NULL; p && (p = strstr(p, PM_SEP)); p += strlen(PM_SEP))
		last = p + strlen(PM_SEP);
	uint64_t gap = 0;
	if (last && *last)
		chain_start(s, g, last, &gap);
	return gap;
}

/* The name for pc of a source without extents of its own: the jitdump,
 * else the perf map, if either has one. */
static void perfmap_name(js_session *s, const js_frame *f, uint64_t pc, js_sym *o, struct js_strchunk **arena)
{
	if (jitdump_name(s, f, pc, o))
		return;
	const js_pm_seg *g = s->pm_on ? js_perfmap_find(&s->pm, pc) : NULL;
	if (!g)
		return;
	o->func = js_demangle(s, g->name);
	o->func_off = f->pc - g->start;
	o->source = JS_SRC_PERFMAP;
	perfmap_chain(s, f, g, o, arena);
}

/* The functions inlined at pc, into o (whose line is the pc's): kept in
 * arena, and o's line moved to the call site of the outermost. */
static void inline_frames(js_session *s, Dwfl_Module *mod, uint64_t pc, js_sym *o, struct js_strchunk **arena)
{
	js_inline v[JS_MAX_INLINE_DEPTH], call;
	js_inline at = { NULL, o->file, o->line, o->col };
	size_t n = js_inline_frames(s, mod, pc, &at, v, JS_MAX_INLINE_DEPTH, &call);
	if (!n || !(o->inl = keep_inline(arena, v, n)))
		return;
	o->n_inl = (uint32_t)n;
	o->file = call.file;
	o->line = call.line;
	o->col = call.col;
}

static void symbolize(js_session *s, const js_frame *f, js_sym *o, struct js_strchunk **arena)
{
	memset(o, 0, sizeof *o);
	uint64_t pc = js_lookup_pc(f);
	Dwfl_Module *mod = js_module_at(s, pc);
	if (!mod) {
		o->jit = js_jit_image_at(&s->jit, pc); /* a rejected image's code */
		if (o->jit) {
			o->module = o->jit->label;
			o->module_off = f->pc - o->jit->code_lo;
			o->module_end = o->jit->code_hi;
		}
		perfmap_name(s, f, pc, o, arena);
		return;
	}
	void **ud;
	Dwarf_Addr start, end;
	const char *name = dwfl_module_info(mod, &ud, &start, &end, NULL, NULL, NULL, NULL);
	o->jit = js_jit_of(*ud);
	o->module = o->jit ? o->jit->label : name;
	o->module_off = f->pc - start;
	o->module_end = end;
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
	const char *fn = o->jit ? dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL)
				: js_symindex_addrinfo(&s->syms, mod, pc, &off, &sym);
	if (fn) {
		o->func = js_demangle(s, fn);
		o->func_off = f->pc - (pc - off);
		o->source = o->jit ? JS_SRC_GDB_JIT : JS_SRC_ELF;
	} else {
		perfmap_name(s, f, pc, o, arena);
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
	inline_frames(s, mod, pc, o, arena);
}
