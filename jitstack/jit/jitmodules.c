/* SPDX-License-Identifier: MIT */
/* jitmodules.c - JIT images as libdwfl modules (see jitmodules.h). */
#include "jit/jitmodules.h"
#include "base/grow.h"
#include "formats/clock.h"
#include "formats/gdbjit.h"
#include "jit/elfin.h"
#include "target/symfind.h"

#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void js_jit_init(js_jit *j, uint16_t machine)
{
	memset(j, 0, sizeof *j);
	j->machine = machine;
}

void js_jit_free(js_jit *j)
{
	for (size_t i = 0; i < j->n_img; i++)
		js_image_free(j->img[i]);
	js_jit_reap(j);
	free(j->img);
	free(j->dead);
	free(j->defer);
	free(j->defer_hi);
	for (size_t i = 0; i < j->n_desc; i++)
		js_desc_free(&j->desc[i]);
	memset(j, 0, sizeof *j);
}

/* ---- finding the descriptors ------------------------------------------------- */

static bool has_symtab(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

/* The descriptor in the module's separate debuginfo: a JIT that defines it
 * static or hidden, shipped stripped, keeps the symbol only there (gdb
 * finds it so).  libdwfl reads the symbol table of the file it finds
 * through the build-id or .gnu_debuglink (the callbacks' debuginfo path)
 * when the module's own file has no .symtab (or its MiniDebugInfo); the
 * file's own .dynsym, which libdwfl lists too, was searched already.  The
 * table is bounded by the file, and its walk by JS_MAX_SYMBOLS. */
static bool find_in_debuginfo(js_jit *j, Dwfl_Module *mod, Elf *main_elf, uint64_t *addr, GElf_Xword *size)
{
	if (has_symtab(main_elf))
		return false;
	j->desc_debuginfo++;
	int n = dwfl_module_getsymtab(mod);
	/* no separate file found: the table is the .dynsym js_find_symbol
	 * searched through its hash, and a scan of it finds nothing more */
	const char *debugfile = NULL;
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (!debugfile)
		return false;
	for (int i = 1; i < n && (unsigned)i < JS_MAX_SYMBOLS; i++) {
		GElf_Sym sym;
		GElf_Addr value;
		Elf *from;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, NULL, &from, NULL);
		if (from == main_elf || !name || sym.st_shndx == SHN_UNDEF)
			continue; /* the file's own .dynsym, searched already */
		int type = GELF_ST_TYPE(sym.st_info);
		if ((type == STT_OBJECT || type == STT_NOTYPE) && !strcmp(name, GDBJIT_DESCRIPTOR_SYMBOL)) {
			*addr = value;
			*size = sym.st_size;
			return true;
		}
	}
	return false;
}

/* The full search of one module, through libdwfl: its file's .dynsym and
 * .symtab, else the .symtab of its separate debuginfo.  libdwfl opens the
 * file (and looks for the debug file) only for the modules handed here,
 * and gives the exact load bias. */
static int search_module(js_jit *j, Dwfl_Module *mod, const char *name)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Addr value;
	GElf_Xword size;
	uint64_t addr;
	j->desc_opened++;
	if (!elf)
		return DWARF_CB_OK;
	if (js_find_symbol(elf, GDBJIT_DESCRIPTOR_SYMBOL, &value, &size))
		addr = value + bias;
	else if (!find_in_debuginfo(j, mod, elf, &addr, &size))
		return DWARF_CB_OK;
	for (size_t i = 0; i < j->n_desc; i++)
		if (j->desc[i].addr == addr)
			return DWARF_CB_OK;
	if (j->n_desc == JS_MAX_DESCRIPTORS)
		return DWARF_CB_ABORT;
	js_desc *d = &j->desc[j->n_desc++];
	memset(d, 0, sizeof *d);
	d->addr = addr;
	d->sym_size = size;
	snprintf(d->module, sizeof d->module, "%s", name);
	return DWARF_CB_OK;
}

/* Modules left for the last resort: stripped files whose own tables lack
 * both symbols; only a separate debug file could name the descriptor. */
typedef struct desc_search {
	js_jit *j;
	Dwfl_Module **later;
	size_t n_later, cap_later;
} desc_search;

/* First pass, every module: its file read by jitstack (js_look_in_file),
 * handed to libdwfl only when it can hold the descriptor:
 *  - a table of the file defines it (exported, or in an unstripped file's
 *    .symtab: a copy relocation puts a second, live, definition in the
 *    program's .dynsym, and both are read);
 *  - it is stripped, and a local definition may be in its separate
 *    debuginfo: the program (a JIT linked statically, as a program that
 *    links LLVM's static libraries, keeps both symbols local unless linked
 *    with -rdynamic), or a file whose .dynsym defines
 *    __jit_debug_register_code (gdb uses a descriptor only in an object
 *    that also has that function, the breakpoint it sets);
 *  - jitstack cannot read the file itself (no path, deleted, an ELF file
 *    of another class).
 * An unstripped file whose .symtab lacks it, and a mapped file that is
 * not ELF (a locale archive), are done with. */
static int triage_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)start;
	desc_search *ds = arg;
	js_jit *j = ds->j;
	if (js_jit_of(*userdata) || !name || name[0] == '[') /* ours, [vdso], [pid 1] */
		return DWARF_CB_OK;
	js_file_look look;
	if (name[0] == '/' &&
	    js_look_in_file(name, GDBJIT_DESCRIPTOR_SYMBOL, GDBJIT_REGISTER_SYMBOL, &look)) {
		j->desc_looked++;
		if (!look.elf || (!look.defines && look.has_symtab))
			return DWARF_CB_OK;
		if (!look.defines && !look.program && !look.partner) {
			if (!js_grow(&ds->later, &ds->cap_later, ds->n_later, sizeof *ds->later))
				return search_module(j, mod, name); /* no memory to wait */
			ds->later[ds->n_later++] = mod;
			return DWARF_CB_OK;
		}
	}
	return search_module(j, mod, name);
}

size_t js_jit_find_descriptors(js_jit *j, Dwfl *dwfl)
{
	desc_search ds = { .j = j };
	uint64_t t0 = now_ns();
	dwfl_getmodules(dwfl, triage_module, &ds, 0);
	bool found = j->n_desc > 0;
	/* Found nowhere a descriptor can be with a symbol the dynamic linker
	 * or gdb would see: a library that hides both symbols (LLVM linked
	 * statically into it, a version script exporting only its API) and
	 * ships stripped names them only in its separate debug file.  Then
	 * every such module is searched. */
	for (size_t i = 0; !found && i < ds.n_later; i++) {
		const char *name = dwfl_module_info(ds.later[i], NULL, NULL, NULL, NULL, NULL, NULL, NULL);
		if (search_module(j, ds.later[i], name ? name : "?") == DWARF_CB_ABORT)
			break; /* JS_MAX_DESCRIPTORS found */
	}
	free(ds.later);
	j->desc_ns += now_ns() - t0;
	return j->n_desc;
}

/* ---- images ----------------------------------------------------------------------- */

static bool same_key(const js_image *im, const js_entry *e)
{
	if (im->entry != e->addr)
		return false;
	if (e->ext)
		return im->reg_seq == e->reg_seq && im->symfile_addr == e->symfile_addr;
	return im->symfile_addr == e->symfile_addr && im->symfile_size == e->symfile_size;
}

/* Entry address -> image, rebuilt for every refresh (lists can be long). */
typedef struct imap {
	js_image **v;
	size_t cap;
} imap;

static size_t imap_slot(uint64_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static int imap_init(imap *m, size_t n)
{
	m->cap = 64;
	while (m->cap < 2 * n + 2)
		m->cap *= 2;
	m->v = calloc(m->cap, sizeof *m->v);
	return m->v ? 0 : -1;
}

/* Insert or replace: the newest image of an entry address wins. */
static void imap_put(imap *m, js_image *im)
{
	size_t k = imap_slot(im->entry, m->cap);
	while (m->v[k] && m->v[k]->entry != im->entry)
		k = (k + 1) & (m->cap - 1);
	m->v[k] = im;
}

static js_image *imap_get(const imap *m, const js_entry *e)
{
	size_t k = imap_slot(e->addr, m->cap);
	for (; m->v[k]; k = (k + 1) & (m->cap - 1))
		if (m->v[k]->entry == e->addr)
			return same_key(m->v[k], e) ? m->v[k] : NULL;
	return NULL;
}

static int keep(js_image ***v, size_t *n, size_t *cap, js_image *im)
{
	if (!js_grow(v, cap, *n, sizeof **v))
		return -1;
	(*v)[(*n)++] = im;
	return 0;
}

/* Test hook (jitstack(1), TESTING): JITSTACK_DUMP_IMAGES=DIR writes every
 * image copied from the target to DIR, as the fuzzer's seed corpus. */
static void dump_copy(const js_entry *e, const uint8_t *bytes)
{
	const char *dir = getenv("JITSTACK_DUMP_IMAGES");
	if (!dir)
		return;
	char path[4096];
	snprintf(path, sizeof path, "%s/image-%" PRIx64 "-%" PRIx64 ".elf", dir, e->addr, e->symfile_addr);
	FILE *f = fopen(path, "we");
	if (f) {
		fwrite(bytes, 1, e->symfile_size, f);
		fclose(f);
	}
}

/* Copy one entry's image (rewritten once the whole list is copied, when
 * the symbols of every image are known).  Never fails as a whole: an image
 * that cannot be copied is kept, rejected, with the reason. */
static js_image *load_image(js_jit *j, js_mem *m, const js_entry *e, unsigned desc, size_t *budget)
{
	js_image *im = calloc(1, sizeof *im);
	if (!im)
		return NULL;
	*im = (js_image){ .magic = JS_IMAGE_MAGIC,
			  .entry = e->addr,
			  .reg_seq = e->reg_seq,
			  .symfile_addr = e->symfile_addr,
			  .symfile_size = e->symfile_size,
			  .desc = desc };
	if (e->ext && e->code_lo < e->code_hi && e->code_hi - e->code_lo <= JS_MAX_CODE_SPAN) {
		im->code_lo = e->code_lo;
		im->code_hi = e->code_hi;
	}
	if (e->ext)
		snprintf(im->modname, sizeof im->modname, "[jit@%" PRIx64 ".%" PRIu64 "]", e->addr,
			 e->reg_seq);
	else
		snprintf(im->modname, sizeof im->modname, "[jit@%" PRIx64 ".%" PRIx64 ".%" PRIx64 "]",
			 e->addr, e->symfile_addr, e->symfile_size);
	snprintf(im->label, sizeof im->label, "[jit %#" PRIx64 "]", im->code_lo);
	js_img_out *o = &im->out;
	if (e->symfile_size == 0 || e->symfile_size > JS_MAX_IMAGE_SIZE) {
		js_fail(&o->why, JS_EXIT_FAILURE, 0, "image size %" PRIu64 " bytes (limit %zu)",
			e->symfile_size, (size_t)JS_MAX_IMAGE_SIZE);
		return im;
	}
	if (e->symfile_size > *budget) {
		js_fail(&o->why, JS_EXIT_FAILURE, 0, "over the %zu-byte budget for all images",
			(size_t)JS_MAX_IMAGES_TOTAL);
		return im;
	}
	uint8_t *copy = malloc(e->symfile_size);
	if (!copy) {
		js_fail(&o->why, JS_EXIT_FAILURE, ENOMEM, "out of memory for a %" PRIu64 "-byte image",
			e->symfile_size);
		return im;
	}
	int st = js_mem_read(m, e->symfile_addr, copy, e->symfile_size);
	if (st) {
		js_fail(&o->why, JS_EXIT_FAILURE, st,
			"image at %#" PRIx64 " (%" PRIu64 " bytes) is unreadable: %s", e->symfile_addr,
			e->symfile_size, strerror(st));
		free(copy);
		return im;
	}
	*budget -= e->symfile_size;
	dump_copy(e, copy);
	j->copies++;
	j->copy_bytes += e->symfile_size;
	if (js_image_exports(copy, e->symfile_size, &im->exports)) {
		free(copy);
		js_image_free(im);
		return NULL;
	}
	im->raw = copy;
	return im;
}

/* ---- symbols across images ------------------------------------------------------ */

/* Every export of the listed images, by name; built at the first lookup,
 * so that images which need no other's symbols cost nothing. */
typedef struct sym_ref {
	const char *name;
	uint64_t addr;
	size_t order; /* of two images defining a name, the one first in j->img wins */
} sym_ref;

typedef struct sym_index {
	js_jit *j;
	sym_ref *v;
	size_t n;
	bool built;
} sym_index;

static int by_name(const void *a, const void *b)
{
	const sym_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

static void index_build(sym_index *x)
{
	js_jit *j = x->j;
	size_t n = 0;
	x->built = true;
	for (size_t i = 0; i < j->n_img; i++)
		n += j->img[i]->exports.n;
	if (n > JS_MAX_SYMBOLS)
		n = JS_MAX_SYMBOLS; /* a hostile list: the symbols of the first images */
	if (!n)
		return;
	x->v = malloc(n * sizeof *x->v);
	if (!x->v)
		return; /* out of memory: the relocations fail, as with no index */
	for (size_t i = 0; i < j->n_img; i++) {
		const js_exports *ex = &j->img[i]->exports;
		for (size_t k = 0; k < ex->n && x->n < n; k++)
			x->v[x->n++] = (sym_ref){ ex->v[k].name, ex->v[k].addr, i };
	}
	qsort(x->v, x->n, sizeof *x->v, by_name);
}

static bool index_lookup(void *arg, const char *name, uint64_t *addr)
{
	sym_index *x = arg;
	if (!x->built)
		index_build(x);
	size_t lo = 0, hi = x->n; /* the first entry not below name */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(x->v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == x->n || strcmp(x->v[lo].name, name))
		return false;
	*addr = x->v[lo].addr;
	return true;
}

/* Rewrite an image from its copy (the copy stays as it was: REL
 * relocations read their addends from the bytes they patch). */
static void rewrite_image(js_jit *j, js_image *im, sym_index *x)
{
	js_img_out *o = &im->out;
	uint8_t *work = malloc(im->symfile_size);
	if (!work) {
		js_fail(&o->why, JS_EXIT_FAILURE, ENOMEM, "out of memory for a %" PRIu64 "-byte image",
			im->symfile_size);
		return;
	}
	memcpy(work, im->raw, im->symfile_size);
	js_img_in in = { work,        im->symfile_size, im->symfile_addr, im->code_lo,
			 im->code_hi, j->machine,       index_lookup,     x };
	js_image_rewrite(&in, o);
	free(work);
	j->rewrites++;
	im->rewritten = true;
	if (!o->n_undefined) {
		free(im->raw);
		im->raw = NULL;
	}
	if (!im->code_lo && o->lo < o->hi) {
		im->code_lo = o->lo; /* known even when the image was rejected later */
		im->code_hi = o->hi;
	}
	snprintf(im->label, sizeof im->label, "[jit %#" PRIx64 "]", im->code_lo);
}

/* An image rewritten before, again: a new struct, as libdwfl may still
 * hold the old one's ELF (freed with j->dead). */
static int rewrite_again(js_jit *j, size_t at, sym_index *x)
{
	js_image *old = j->img[at], *nu = malloc(sizeof *nu);
	if (!nu || keep(&j->dead, &j->n_dead, &j->cap_dead, old)) {
		free(nu);
		return -1;
	}
	*nu = *old;
	old->raw = NULL;
	old->exports = (js_exports){ 0 };
	memset(&nu->out, 0, sizeof nu->out);
	nu->reported = false;
	/* a new name: libdwfl keeps a module reported again under its old
	 * name and range, with the old ELF */
	char *tail = strchr(nu->modname, '~');
	size_t len = tail ? (size_t)(tail - nu->modname) : strlen(nu->modname);
	snprintf(nu->modname + len, sizeof nu->modname - len, "~r%lu", j->rewrites);
	rewrite_image(j, nu, x);
	j->img[at] = nu;
	return 0;
}

/* Does an image that waits for symbols get one now?  Its first missing
 * symbol is defined: so each rewrite again resolves one more, and an image
 * waiting for a symbol nobody defines costs a lookup per refresh. */
static bool can_progress(const js_image *im, sym_index *x)
{
	uint64_t addr;
	size_t at = im->out.undefined_at;
	/* the copy may differ there from what the rewrite read (a relocation
	 * into the string table): the name must end inside it */
	if (!at || at >= im->symfile_size || !memchr(im->raw + at, 0, im->symfile_size - at))
		return false;
	return index_lookup(x, (const char *)im->raw + at, &addr);
}

/* Rewrite the images copied by this refresh, and those that wait for
 * symbols when this refresh brought images that define some.  Returns
 * true when an image already reported changed. */
static bool rewrite_pending(js_jit *j, size_t first_fresh)
{
	bool new_exports = false;
	for (size_t i = first_fresh; i < j->n_img; i++)
		new_exports |= j->img[i]->exports.n > 0;
	sym_index x = { j, NULL, 0, false };
	bool changed = false;
	for (size_t i = 0; i < j->n_img; i++) {
		js_image *im = j->img[i];
		if (!im->raw)
			continue;
		if (!im->rewritten)
			rewrite_image(j, im, &x);
		else if (new_exports && can_progress(im, &x) && !rewrite_again(j, i, &x))
			changed = true;
	}
	free(x.v);
	return changed;
}

/* The images of one read of the lists that were not cached: added to the
 * set when the read is good, freed when it must be taken again. */
typedef struct batch {
	js_image **v;
	size_t n, cap;
	js_deferred *d; /* the deferred entries of this read, old and new */
	size_t nd, capd;
	bool d_new; /* one of them was not deferred before */
} batch;

static void batch_free(batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		js_image_free(b->v[i]);
	free(b->v);
	free(b->d);
	*b = (batch){ 0 };
}

static int out_of_memory(js_err *err)
{
	return js_fail(err, JS_EXIT_FAILURE, ENOMEM, "out of memory");
}

/* Read every descriptor into j->desc.  A target whose memory cannot be
 * read at all fails it (JS_EXIT_NO_PROCESS when it is gone); a descriptor
 * that alone cannot be read is left empty. */
static int read_lists(js_jit *j, js_mem *m, read_mode mode, js_err *err)
{
	int ok = 0, rc = 0;
	js_err why; /* the last failure's */
	for (size_t i = 0; i < j->n_desc; i++) {
		j->desc[i].budget_ns = j->snapshot_budget_ns;
		if (!(rc = js_desc_read(m, &j->desc[i], mode, &why)))
			ok++;
		else if (rc == JS_EXIT_NO_PROCESS)
			break;
	}
	j->reads++;
	if (rc == JS_EXIT_NO_PROCESS || (j->n_desc && !ok)) {
		if (err)
			*err = why;
		return rc;
	}
	return 0;
}

/* ---- deferred entries ------------------------------------------------------------ */

/* The hull of the code an entry's image describes, read from its ELF and
 * section headers alone: its SHF_EXECINSTR sections with an address
 * (in-memory images give .text the code's address, as gdb needs).  Two
 * bounded reads, or one when the headers sit in the image's first bytes.
 * False when it cannot be told so (not a 64-bit ELF, extended numbering,
 * headers out of bounds, no code section with an address): then the
 * image is copied and read in full. */
static bool peek_range(js_mem *m, const js_entry *e, uint64_t *lo, uint64_t *hi)
{
	enum { FIRST = 1024 };
	uint8_t first[FIRST];
	size_t got = e->symfile_size < FIRST ? (size_t)e->symfile_size : FIRST;
	Elf64_Ehdr eh;
	if (got < sizeof eh || js_mem_read_cached(m, e->symfile_addr, first, got))
		return false;
	memcpy(&eh, first, sizeof eh);
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
	    eh.e_shnum > JS_MAX_SECTIONS || eh.e_shoff > e->symfile_size ||
	    (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > e->symfile_size - eh.e_shoff)
		return false;
	size_t bytes = (size_t)eh.e_shnum * sizeof(Elf64_Shdr);
	Elf64_Shdr *sh = malloc(bytes);
	if (!sh)
		return false;
	if (eh.e_shoff + bytes <= got)
		memcpy(sh, first + eh.e_shoff, bytes);
	else if (js_mem_read_cached(m, e->symfile_addr + eh.e_shoff, sh, bytes)) {
		free(sh);
		return false;
	}
	uint64_t a = UINT64_MAX, b = 0;
	for (size_t i = 0; i < eh.e_shnum; i++) {
		if (!(sh[i].sh_flags & SHF_EXECINSTR) || !sh[i].sh_addr || !sh[i].sh_size ||
		    sh[i].sh_addr + sh[i].sh_size < sh[i].sh_addr)
			continue;
		a = sh[i].sh_addr < a ? sh[i].sh_addr : a;
		b = sh[i].sh_addr + sh[i].sh_size > b ? sh[i].sh_addr + sh[i].sh_size : b;
	}
	free(sh);
	if (a >= b || b - a > JS_MAX_CODE_SPAN)
		return false;
	*lo = a;
	*hi = b;
	return true;
}

/* The range of an entry's code without copying its image, or false. */
static bool entry_range(js_jit *j, js_mem *m, const js_entry *e, uint64_t *lo, uint64_t *hi)
{
	if (e->ext && e->code_lo < e->code_hi && e->code_hi - e->code_lo <= JS_MAX_CODE_SPAN) {
		*lo = e->code_lo;
		*hi = e->code_hi;
		return true;
	}
	if (e->ext)
		return false;
	j->peeks++;
	return peek_range(m, e, lo, hi);
}

static bool same_entry(const js_entry *a, const js_entry *b)
{
	return a->addr == b->addr && a->ext == b->ext && a->reg_seq == b->reg_seq &&
	       a->symfile_addr == b->symfile_addr && a->symfile_size == b->symfile_size;
}

/* The deferred entries of the last read by entry address. */
typedef struct dmap {
	js_deferred **v;
	size_t cap;
} dmap;

static int dmap_init(dmap *m, js_jit *j)
{
	*m = (dmap){ 0 };
	if (!j->n_defer)
		return 0;
	m->cap = 64;
	while (m->cap < 2 * j->n_defer + 2)
		m->cap *= 2;
	if (!(m->v = calloc(m->cap, sizeof *m->v)))
		return -1;
	for (size_t i = 0; i < j->n_defer; i++) {
		js_deferred *d = &j->defer[i];
		if (d->taken)
			continue;
		size_t k = imap_slot(d->e.addr, m->cap);
		while (m->v[k])
			k = (k + 1) & (m->cap - 1);
		m->v[k] = d;
	}
	return 0;
}

static const js_deferred *dmap_get(const dmap *m, const js_entry *e)
{
	if (!m->cap)
		return NULL;
	for (size_t k = imap_slot(e->addr, m->cap); m->v[k]; k = (k + 1) & (m->cap - 1))
		if (same_entry(&m->v[k]->e, e))
			return m->v[k];
	return NULL;
}

/* Defer an entry whose range is known (old: as the last read had it). */
static int defer(batch *b, const js_entry *e, unsigned desc, uint64_t lo, uint64_t hi, bool old)
{
	if (!js_grow(&b->d, &b->capd, b->nd, sizeof *b->d))
		return -1;
	b->d[b->nd++] = (js_deferred){ lo, hi, *e, desc, false };
	b->d_new |= !old;
	return 0;
}

static int deferred_by_lo(const void *a, const void *b)
{
	const js_deferred *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* By lo.  A list walked from its head holds the newest entry first, and a
 * JIT mostly takes its code at rising addresses, so the walk comes in
 * falling order more often than not: that is reversed, not sorted. */
static void sort_deferred(js_deferred *v, size_t n)
{
	size_t falls = 0, rises = 0;
	for (size_t i = 1; i < n; i++) {
		falls += v[i].lo < v[i - 1].lo;
		rises += v[i].lo > v[i - 1].lo;
	}
	if (!rises) {
		for (size_t i = 0, k = n - 1; i < k; i++, k--) {
			js_deferred t = v[i];
			v[i] = v[k];
			v[k] = t;
		}
	} else if (falls) {
		qsort(v, n, sizeof *v, deferred_by_lo);
	}
}

/* The deferred entries of a read replace those of the last; -1 when out
 * of memory (then none is kept: their images are not copied, and their
 * frames found by frame pointers). */
static int install_deferred(js_jit *j, batch *b)
{
	free(j->defer);
	free(j->defer_hi);
	j->defer = b->d;
	j->n_defer = j->n_defer_left = b->nd;
	j->defer_hi = NULL;
	b->d = NULL;
	b->nd = b->capd = 0;
	if (!j->n_defer)
		return 0;
	sort_deferred(j->defer, j->n_defer);
	if (!(j->defer_hi = malloc(j->n_defer * sizeof *j->defer_hi))) {
		free(j->defer);
		j->defer = NULL;
		j->n_defer = j->n_defer_left = 0;
		return -1;
	}
	uint64_t top = 0;
	for (size_t i = 0; i < j->n_defer; i++)
		j->defer_hi[i] = top = j->defer[i].hi > top ? j->defer[i].hi : top;
	return 0;
}

/* The cached images by entry address, each marked not listed until the
 * walk of the lists finds it; -1 when out of memory. */
static int map_images(js_jit *j, imap *map)
{
	size_t listed = 0;
	for (size_t d = 0; d < j->n_desc; d++)
		listed += j->desc[d].n;
	if (imap_init(map, j->n_img + listed))
		return -1;
	for (size_t i = 0; i < j->n_img; i++) {
		j->img[i]->live = false;
		imap_put(map, j->img[i]);
	}
	return 0;
}

/* Walk the lists: mark the cached images they hold, copy and rewrite the
 * others into *fresh (bounded by JS_MAX_IMAGES and JS_MAX_IMAGES_TOTAL).
 * -1 when out of memory. */
static int copy_new(js_jit *j, js_mem *m, imap *map, const dmap *old, batch *fresh)
{
	size_t budget = JS_MAX_IMAGES_TOTAL;
	j->empty = j->over_limit = 0;
	if (j->lazy) { /* most entries are deferred: room for all at once */
		size_t listed = 0;
		for (size_t d = 0; d < j->n_desc; d++)
			listed += j->desc[d].n;
		js_deferred *v = listed > fresh->capd ? realloc(fresh->d, listed * sizeof *v) : NULL;
		if (v) {
			fresh->d = v;
			fresh->capd = listed;
		}
	}
	for (size_t d = 0; d < j->n_desc; d++) {
		for (size_t k = 0; k < j->desc[d].n; k++) {
			const js_entry *e = &j->desc[d].ents[k];
			if (!e->symfile_addr && !e->symfile_size) {
				j->empty++; /* a placeholder: nothing to read */
				continue;
			}
			js_image *im = imap_get(map, e);
			const js_deferred *was = im ? NULL : dmap_get(old, e);
			uint64_t lo, hi;
			if (was) {
				if (defer(fresh, e, (unsigned)d, was->lo, was->hi, true))
					return -1;
				continue;
			}
			if (!im && j->lazy && entry_range(j, m, e, &lo, &hi)) {
				if (defer(fresh, e, (unsigned)d, lo, hi, false))
					return -1;
				continue;
			}
			if (!im && j->n_img + fresh->n >= JS_MAX_IMAGES) {
				j->over_limit++;
				continue;
			}
			if (!im) {
				im = load_image(j, m, e, (unsigned)d, &budget);
				if (!im || keep(&fresh->v, &fresh->n, &fresh->cap, im)) {
					js_image_free(im);
					return -1;
				}
				imap_put(map, im);
			}
			im->live = true;
		}
	}
	return 0;
}

/* One read of the lists, with the images not cached yet in *fresh. */
static int read_snapshot(js_jit *j, js_mem *m, read_mode mode, batch *fresh, js_err *err)
{
	int rc = read_lists(j, m, mode, err);
	if (rc)
		return rc;
	imap map;
	dmap old;
	if (map_images(j, &map))
		return out_of_memory(err);
	if (dmap_init(&old, j)) {
		free(map.v);
		return out_of_memory(err);
	}
	rc = copy_new(j, m, &map, &old, fresh) ? out_of_memory(err) : 0;
	free(map.v);
	free(old.v);
	return rc;
}

/* Are the images copied after the last read still what the lists named? */
static bool copies_valid(js_jit *j, js_mem *m)
{
	bool valid = true;
	for (size_t d = 0; d < j->n_desc; d++)
		valid &= js_desc_copies_valid(m, &j->desc[d]);
	return valid;
}

/* Drop what the lists no longer hold (to j->dead: libdwfl may still point
 * into it), add what is new; a change is counted in j->changes. */
static void commit(js_jit *j, batch *fresh)
{
	/* an entry deferred or no longer listed changes what covers a pc */
	bool changed = fresh->n > 0 || fresh->d_new || fresh->nd != j->n_defer_left;
	(void)install_deferred(j, fresh);
	size_t w = 0;
	for (size_t i = 0; i < j->n_img; i++) {
		if (j->img[i]->live) {
			j->img[w++] = j->img[i];
			continue;
		}
		changed = true;
		/* out of memory, it is leaked: libdwfl may still hold it */
		(void)keep(&j->dead, &j->n_dead, &j->cap_dead, j->img[i]);
	}
	j->n_img = w;
	for (size_t f = 0; f < fresh->n; f++)
		if (keep(&j->img, &j->n_img, &j->cap_img, fresh->v[f]))
			js_image_free(fresh->v[f]);
	free(fresh->v);
	free(fresh->d);
	*fresh = (batch){ 0 };
	changed |= rewrite_pending(j, w);
	if (changed)
		j->changes++;
}

int js_jit_refresh(js_jit *j, js_mem *m, read_mode mode, js_err *err)
{
	/* Copies made after a snapshot are good if reclaim_seq has not passed
	 * its seq; otherwise read a new snapshot (bounded). */
	for (int attempt = 0;; attempt++) {
		batch fresh = { 0 };
		int rc = read_snapshot(j, m, mode, &fresh, err);
		if (!rc && !copies_valid(j, m) && attempt < JS_SNAPSHOT_RECOPIES) {
			batch_free(&fresh);
			continue;
		}
		if (rc) {
			batch_free(&fresh);
			return rc;
		}
		commit(j, &fresh);
		return 0;
	}
}

/* Copy every deferred entry's image (for its exports: an image that
 * relocates against symbols of others, as lazy ORC's do, needs them all). */
static int take_all(js_jit *j, js_mem *m)
{
	size_t budget = JS_MAX_IMAGES_TOTAL;
	for (size_t i = 0; i < j->n_defer; i++) {
		js_deferred *d = &j->defer[i];
		if (d->taken)
			continue;
		d->taken = true;
		j->n_defer_left--;
		if (j->n_img >= JS_MAX_IMAGES) {
			j->over_limit++;
			continue;
		}
		js_image *im = load_image(j, m, &d->e, d->desc, &budget);
		if (!im || keep(&j->img, &j->n_img, &j->cap_img, im)) {
			js_image_free(im);
			return -1;
		}
		im->live = true;
	}
	return 0;
}

int js_jit_load_at(js_jit *j, js_mem *m, uint64_t pc)
{
	if (!j->n_defer_left)
		return 0;
	size_t a = 0, b = j->n_defer; /* the first deferred entry starting above pc */
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (j->defer[mid].lo <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	size_t first = j->n_img, budget = JS_MAX_IMAGES_TOTAL;
	for (size_t i = a; i-- > 0 && j->defer_hi[i] > pc;) {
		js_deferred *d = &j->defer[i];
		if (d->taken || pc >= d->hi)
			continue;
		if (j->n_img >= JS_MAX_IMAGES) {
			j->over_limit++;
			break;
		}
		js_image *im = load_image(j, m, &d->e, d->desc, &budget);
		if (im && !js_desc_copies_valid(m, &j->desc[d->desc])) {
			js_image_free(im); /* freed while copied: the next read of the list knows */
			continue;
		}
		if (!im || keep(&j->img, &j->n_img, &j->cap_img, im)) {
			js_image_free(im);
			return -1;
		}
		im->live = true;
		d->taken = true;
		j->n_defer_left--;
		j->lazy_loads++;
	}
	if (j->n_img == first)
		return 0;
	rewrite_pending(j, first);
	bool waits = false;
	for (size_t i = first; i < j->n_img; i++)
		waits |= j->img[i]->raw && j->img[i]->out.n_undefined;
	if (waits && j->n_defer_left) {
		size_t more = j->n_img;
		if (take_all(j, m))
			return -1;
		rewrite_pending(j, more);
	}
	j->changes++;
	return (int)(j->n_img - first);
}

bool js_jit_seq_moved(js_jit *j, js_mem *m)
{
	for (size_t i = 0; i < j->n_desc; i++) {
		js_desc *d = &j->desc[i];
		if (!d->ext)
			continue;
		uint64_t seq;
		if (js_desc_seq(m, d, &seq) || seq != d->seq || d->state != DESC_VALIDATED)
			return true;
	}
	return false;
}

bool js_jit_has_plain(const js_jit *j)
{
	for (size_t i = 0; i < j->n_desc; i++)
		if (!j->desc[i].ext && j->desc[i].version == 1)
			return true;
	return false;
}

/* ---- reporting ------------------------------------------------------------------- */

typedef struct range {
	uint64_t lo, hi;
	const char *name;
	Dwfl_Module *mod;
} range;

typedef struct ranges {
	range *v;
	size_t n, cap;
} ranges;

static int collect_native(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	ranges *r = arg;
	Dwarf_Addr lo, hi;
	(void)start;
	if (js_jit_of(*userdata))
		return DWARF_CB_OK;
	if (!js_grow(&r->v, &r->cap, r->n, sizeof *r->v))
		return DWARF_CB_ABORT;
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	r->v[r->n++] = (range){ lo, hi, name, mod };
	return DWARF_CB_OK;
}

static int by_lo(const void *a, const void *b)
{
	const range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* In address order; at the same address the newer registration first. */
static int image_by_lo(const void *a, const void *b)
{
	const js_image *x = *(js_image *const *)a, *y = *(js_image *const *)b;
	if (x->out.lo != y->out.lo)
		return x->out.lo < y->out.lo ? -1 : 1;
	return x->reg_seq > y->reg_seq ? -1 : x->reg_seq < y->reg_seq;
}

static void shadow(js_image *im, const char *by)
{
	im->shadowed = true;
	js_fail(&im->out.why, JS_EXIT_FAILURE, 0, "its code [%#" PRIx64 ", %#" PRIx64 ") overlaps %s",
		im->out.lo, im->out.hi, by);
}

/* Does [lo, hi) overlap what the module maps?  A module read from maps
 * spans its first to its last mapping, and the holes between its segments
 * (64 KiB alignment on AArch64) are free address space that the kernel
 * hands to later mmaps, JIT code among them; so a span that overlaps is
 * checked against the loadable segments of the module's file, when there
 * is one to read. */
bool js_module_maps(Dwfl_Module *mod, uint64_t lo, uint64_t hi)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t nph;
	if (!elf || elf_getphdrnum(elf, &nph) || nph == 0)
		return true;
	bool any_load = false;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		any_load = true;
		uint64_t a = bias + ph.p_vaddr, b = a + ph.p_memsz;
		if (a < hi && lo < b)
			return true;
	}
	return !any_load;
}

/* The native module overlapping [lo, hi), or NULL (r sorted by lo). */
static const char *native_overlap(const ranges *r, uint64_t lo, uint64_t hi)
{
	size_t a = 0, b = r->n;
	while (a < b) { /* first range starting at or after hi */
		size_t mid = a + (b - a) / 2;
		if (r->v[mid].lo < hi)
			a = mid + 1;
		else
			b = mid;
	}
	for (size_t i = a; i-- > 0;) { /* ranges starting below hi; stop at the first that cannot reach */
		if (r->v[i].hi > lo && js_module_maps(r->v[i].mod, lo, hi))
			return r->v[i].name;
		if (a - i > 64)
			break; /* modules do not nest; a long run is not worth walking */
	}
	return NULL;
}

bool js_jit_report(js_jit *j, Dwfl *dwfl)
{
	ranges native = { 0 };
	dwfl_getmodules(dwfl, collect_native, &native, 0);
	if (native.n > 1)
		qsort(native.v, native.n, sizeof *native.v, by_lo);
	/* The images in address order, so overlaps among them show as
	 * neighbours.  Of two that overlap, the newer registration is kept: a
	 * JIT that registers new code before it unregisters the old code at
	 * the same place lists both for a moment. */
	if (j->n_img > 1)
		qsort(j->img, j->n_img, sizeof *j->img, image_by_lo);
	js_image *kept = NULL;
	for (size_t i = 0; i < j->n_img; i++) {
		js_image *im = j->img[i];
		im->shadowed = im->superseded = false;
		if (!im->out.elf)
			continue;
		const char *with = native_overlap(&native, im->out.lo, im->out.hi);
		if (with) {
			shadow(im, with);
		} else if (kept && im->out.lo < kept->out.hi && im->reg_seq == kept->reg_seq) {
			shadow(im, kept->label); /* no order known (no extension): the first stays */
		} else if (kept && im->out.lo < kept->out.hi) {
			char by[96];
			js_image *newer = im->reg_seq > kept->reg_seq ? im : kept;
			snprintf(by, sizeof by, "the newer image %#" PRIx64 " (entry %#" PRIx64 ")",
				 newer->symfile_addr, newer->entry);
			js_image *older = newer == im ? kept : im;
			shadow(older, by);
			older->superseded = true;
			kept = newer;
		} else {
			kept = im;
		}
	}
	free(native.v);
	size_t reported = 0;
	bool lost = false;
	for (size_t i = 0; i < j->n_img; i++) {
		js_image *im = j->img[i];
		bool was = im->reported;
		im->reported = false;
		if (!js_image_usable(im))
			goto out;
		if (reported >= JS_MAX_MODULES) {
			shadow(im, "the module limit");
			goto out;
		}
		Dwfl_Module *mod = dwfl_report_module(dwfl, im->modname, im->out.lo, im->out.hi);
		if (mod) {
			void **ud;
			dwfl_module_info(mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
			*ud = im;
			im->reported = true;
			reported++;
		}
	out:
		lost |= was && !im->reported;
	}
	return lost;
}

int js_jit_drop_cfi(js_jit *j, js_image *im)
{
	size_t at = 0;
	while (at < j->n_img && j->img[at] != im)
		at++;
	if (at == j->n_img || !im->out.elf)
		return 0;
	js_image *nu = malloc(sizeof *nu);
	uint8_t *elf = malloc(im->out.elf_size);
	if (!nu || !elf || keep(&j->dead, &j->n_dead, &j->cap_dead, im)) {
		free(nu);
		free(elf);
		return -1;
	}
	*nu = *im;
	im->raw = NULL; /* the new struct owns them now */
	im->exports = (js_exports){ 0 };
	memcpy(elf, im->out.elf, im->out.elf_size);
	nu->out.elf = elf;
	/* Our own output: an empty .eh_frame (its terminator first) and an
	 * empty search table make libdw find no FDE here. */
	ein e;
	if (ein_parse(&e, elf, im->out.elf_size, NULL) == 0) {
		ein_sec *eh = ein_section(&e, ".eh_frame"), *hdr = ein_section(&e, ".eh_frame_hdr");
		if (eh && eh->data && eh->size >= 4)
			memset(eh->data, 0, 4);
		if (hdr && hdr->data && hdr->size >= 12)
			memset(hdr->data + 8, 0, 4); /* fde_count */
		ein_free(&e);
	}
	nu->out.n_fdes = 0;
	size_t len = strlen(nu->modname);
	snprintf(nu->modname + (len < sizeof nu->modname - 4 ? len : sizeof nu->modname - 4), 4, "~fp");
	nu->out.note[0] = 0;
	js_note(nu->out.note, sizeof nu->out.note, "its CFI made a frame its own caller: dropped");
	j->img[at] = nu;
	j->changes++;
	return 0;
}

void js_jit_reap(js_jit *j)
{
	for (size_t i = 0; i < j->n_dead; i++)
		js_image_free(j->dead[i]);
	j->n_dead = 0;
}

js_image *js_jit_of(void *userdata)
{
	js_image *im = userdata;
	return im && im->magic == JS_IMAGE_MAGIC ? im : NULL;
}

js_image *js_jit_image_at(js_jit *j, uint64_t pc)
{
	for (size_t i = 0; i < j->n_img; i++) {
		js_image *im = j->img[i];
		if (im->shadowed)
			continue;
		uint64_t lo = im->out.elf ? im->out.lo : im->code_lo,
			 hi = im->out.elf ? im->out.hi : im->code_hi;
		if (pc >= lo && pc < hi)
			return im;
	}
	return NULL;
}

bool js_jit_find_elf(void **userdata, Elf **elfp)
{
	js_image *im = js_jit_of(*userdata);
	if (!im)
		return false;
	*elfp = im->out.elf ? elf_memory((char *)im->out.elf, im->out.elf_size) : NULL;
	return true;
}
