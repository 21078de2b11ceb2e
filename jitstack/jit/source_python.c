/* source_python.c - CPython's Python frames as a source (source.h): the
 * row over python/frames.h.  It names no code and gives libdwfl no
 * modules; it gives each thread the interpreter frames it runs (walk,
 * frames), which the unwind stage places in the thread's native stack.
 * SPDX-License-Identifier: MIT
 */
#include "formats/clock.h"
#include "jit/source.h"
#include "python/frames.h"
#include "target/symfind.h"

#include <stdlib.h>
#include <string.h>

typedef struct pysrc {
	js_py py;
	bool open;      /* py was opened (a module exports _PyRuntime) */
	bool on;        /* and its version is known: frames are read */
	bool walked;    /* a walk was made */
	size_t modules; /* modules the last look went through */
	uint64_t ns;    /* time in walks */
	unsigned long walks;
} pysrc;

typedef struct runtime_module {
	Dwfl_Module *mod;
	size_t n; /* modules looked at */
	bool any; /* every module's symbols, else those of files named *python* */
} runtime_module;

static int find_runtime(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	(void)ud, (void)start;
	runtime_module *r = arg;
	r->n++;
	const char *base = name ? strrchr(name, '/') : NULL;
	if (!r->any && !(name && strstr(base ? base + 1 : name, "python")))
		return DWARF_CB_OK;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Addr v;
	GElf_Xword size;
	if (!r->mod && elf && js_find_symbol(elf, "_PyRuntime", &v, &size))
		r->mod = mod;
	return DWARF_CB_OK;
}

static int count_module(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	(void)mod, (void)ud, (void)name, (void)start;
	++*(size_t *)arg;
	return DWARF_CB_OK;
}

/* Does the ELF file carry its own DWARF (a .debug_info section)?  Only
 * then is the layout read from it: a separate debug file is not looked
 * for (layout.h's table is checked against those of Debian's builds). */
static bool own_dwarf(Elf *elf)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *name;
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    (name = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(name, ".debug_info"))
			return true;
	}
	return false;
}

/* The module that exports _PyRuntime: the interpreter's program or its
 * libpython, whose file names say "python"; for a dump, any other module
 * too (a program that embeds CPython statically), which a sampler that
 * reads hundreds of processes cannot afford.  Looked for again only when
 * the modules changed in number. */
static void python_open(js_source *src, const js_source_target *t)
{
	pysrc *p = src->r;
	if (!p && !(p = src->r = calloc(1, sizeof *p)))
		return;
	src->on = &p->on;
	if (p->open || !t->dwfl || !t->mem)
		return;
	size_t n = 0;
	dwfl_getmodules(t->dwfl, count_module, &n, 0);
	if (n == p->modules)
		return;
	runtime_module r = { 0 };
	dwfl_getmodules(t->dwfl, find_runtime, &r, 0);
	if (!r.mod && t->once) {
		r = (runtime_module){ .any = true };
		dwfl_getmodules(t->dwfl, find_runtime, &r, 0);
	}
	p->modules = r.n;
	if (!r.mod)
		return;
	Dwarf_Addr bias, dbias;
	Elf *elf = dwfl_module_getelf(r.mod, &bias);
	Dwarf *dw = own_dwarf(elf) ? dwfl_module_getdwarf(r.mod, &dbias) : NULL;
	js_err err = { 0 };
	if (js_py_open(&p->py, t->mem, elf, bias, dw, &err)) {
		js_source_warn(t, "Python frames are not read: %s", err.msg);
		return;
	}
	p->open = true;
	if (!p->py.known) {
		js_source_warn(t, "%s; only the native stack is shown", p->py.warning);
		return;
	}
	p->on = true;
}

static uint64_t python_changes(const js_source *src)
{
	(void)src;
	return 0; /* it names no code */
}

static void python_walk(js_source *src, bool running, pid_t tid, const js_source_target *t)
{
	pysrc *p = src->r;
	if (!p || !p->on)
		return; /* turned off (--no-python): never opened */
	uint64_t t0 = now_ns();
	p->py.running = running;
	if (tid)
		js_py_walk_thread(&p->py, (uint64_t)tid);
	else
		js_py_walk(&p->py);
	p->walked = true;
	p->walks++;
	p->ns += now_ns() - t0;
	if (p->py.warning_walk[0])
		js_source_warn(t, "Python frames: %s", p->py.warning_walk);
	for (size_t i = 0; i < p->py.n_threads; i++)
		if (p->py.threads[i].warning[0])
			js_source_warn(t, "thread %llu: its Python frames are not shown: %s",
				       (unsigned long long)p->py.threads[i].native_tid,
				       p->py.threads[i].warning);
}

static const js_py_frame *python_frames(const js_source *src, pid_t tid, size_t *n)
{
	const pysrc *p = src->r;
	*n = 0;
	if (!p || !p->walked)
		return NULL;
	for (size_t i = 0; i < p->py.n_threads; i++) {
		const js_py_thread *th = &p->py.threads[i];
		if (th->native_tid == (uint64_t)tid) {
			*n = th->n;
			return p->py.frames + th->first;
		}
	}
	return NULL;
}

static void python_stats(const js_source *src, FILE *f)
{
	const pysrc *p = src->r;
	if (!p || !p->on)
		return;
	fprintf(f,
		"jitstack: stats: Python frames (CPython %s, layout from %s): %lu walks, %.3f ms; %lu reads, "
		"%lu bytes; %lu code objects kept from an earlier walk\n",
		p->py.version, p->py.lay.from, p->walks, p->ns / 1e6, p->py.stats.reads, p->py.stats.bytes,
		p->py.stats.code_kept);
}

static void python_free(js_source *src)
{
	pysrc *p = src->r;
	if (p)
		js_py_free(&p->py);
	free(p);
	src->r = NULL;
	src->on = NULL;
}

const js_source_ops js_source_python = {
	.name = "python",
	.open = python_open,
	.changes = python_changes,
	.walk = python_walk,
	.frames = python_frames,
	.stats = python_stats,
	.free = python_free,
};
