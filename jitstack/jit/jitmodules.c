/* jitmodules.c - JIT images as libdwfl modules (see jitmodules.h). */
#include "jit/jitmodules.h"
#include "base/grow.h"
#include "formats/gdbjit.h"
#include "jit/elfin.h"
#include "target/symfind.h"

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
static bool find_in_debuginfo(Dwfl_Module *mod, Elf *main_elf, uint64_t *addr, GElf_Xword *size)
{
	if (has_symtab(main_elf))
		return false;
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

static int find_in_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start, void *arg)
{
	(void)start;
	js_jit *j = arg;
	if (js_jit_of(*userdata) || !name || name[0] == '[') /* ours, [vdso], [pid 1] */
		return DWARF_CB_OK;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Addr value;
	GElf_Xword size;
	uint64_t addr;
	if (!elf)
		return DWARF_CB_OK;
	if (js_find_symbol(elf, GDBJIT_DESCRIPTOR_SYMBOL, &value, &size))
		addr = value + bias;
	else if (!find_in_debuginfo(mod, elf, &addr, &size))
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

size_t js_jit_find_descriptors(js_jit *j, Dwfl *dwfl)
{
	dwfl_getmodules(dwfl, find_in_module, j, 0);
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
} batch;

static void batch_free(batch *b)
{
	for (size_t i = 0; i < b->n; i++)
		js_image_free(b->v[i]);
	free(b->v);
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
static int copy_new(js_jit *j, js_mem *m, imap *map, batch *fresh)
{
	size_t budget = JS_MAX_IMAGES_TOTAL;
	j->empty = j->over_limit = 0;
	for (size_t d = 0; d < j->n_desc; d++) {
		for (size_t k = 0; k < j->desc[d].n; k++) {
			const js_entry *e = &j->desc[d].ents[k];
			if (!e->symfile_addr && !e->symfile_size) {
				j->empty++; /* a placeholder: nothing to read */
				continue;
			}
			js_image *im = imap_get(map, e);
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
	if (map_images(j, &map))
		return out_of_memory(err);
	rc = copy_new(j, m, &map, fresh) ? out_of_memory(err) : 0;
	free(map.v);
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
	bool changed = fresh->n > 0;
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
