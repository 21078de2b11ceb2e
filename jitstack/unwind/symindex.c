/* SPDX-License-Identifier: MIT */
/* symindex.c - a module's symbols sorted by address (symindex.h).
 *
 * What dwfl_module_addrinfo answers (libdwfl 0.188, dwfl_module_addrsym.c):
 * it looks at the symbols whose value is at or below the address, with a
 * name, a section, and a type other than section, file or TLS; first at
 * the table's global part, and only when that gave no sized symbol, at
 * the local part.  In each part, going through the table in order, a
 * sized symbol that holds the address replaces the best so far when the
 * best starts lower or binds more weakly (local < weak < global), or when
 * both start together, bind alike and the new one is smaller.  Only when
 * no sized symbol holds the address may a sizeless one be the answer; its
 * choice depends on which section the address is in and on which symbols
 * end above it, and those addresses go to libdwfl.
 */
#include "unwind/symindex.h"
#include "base/grow.h"
#include "formats/search.h"

#include <stdlib.h>
#include <string.h>

/* Sized symbols walked back from an address, looking for those that hold
 * it, before it goes to libdwfl instead (a module with a symbol that
 * spans much of it would otherwise cost a walk per lookup). */
#define MAX_WALK 64
/* Lookups of a module answered by a pass over its index before it is
 * sorted.  A pass costs about 7 instructions a symbol, a sort as much as
 * 1.5 passes (node's 109,000 symbols) to 6 (libc's 10,000): a dump that
 * names a module a few times never sorts it, and no module costs more
 * than about twice what sorting it at once would have. */
#define SORT_AFTER 4

typedef struct sized {
	uint64_t lo, end; /* the symbol's value, and value + size */
	uint64_t reach;   /* the highest end of this symbol and all before it */
	uint32_t ndx;     /* its index in the module's table */
	uint8_t bind;     /* libdwfl's rank: 3 global, 2 weak, 1 local, 0 other */
	bool global;      /* in the part of the table searched first */
} sized;

struct js_symindex {
	Dwfl_Module *mod;
	unsigned lookups; /* of this module, answered by the index or not */
	bool built, unusable, tried_in_place;
	bool sorted;       /* else lookups are linear */
	bool unsortable;   /* the sort could not be done: linear for good */
	unsigned answered; /* lookups answered since it was built */
	sized *sym;        /* in table order; once sorted, by lo, then table order */
	size_t n_sym;
	uint64_t *label; /* the sizeless symbols' values (sorted with sym) */
	size_t n_label;
	uint64_t *glabel; /* those of the global part */
	size_t n_glabel;
};

static uint8_t bind_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL: return 3;
	case STB_WEAK: return 2;
	case STB_LOCAL: return 1;
	default: return 0;
	}
}

static bool eligible(const char *name, const GElf_Sym *sym)
{
	unsigned t = GELF_ST_TYPE(sym->st_info);
	return name && name[0] && sym->st_shndx != SHN_UNDEF && t != STT_SECTION && t != STT_FILE &&
	       t != STT_TLS;
}

/* Sort v[0..n) by lo, then table order, by radix on 64-bit keys (the
 * start's distance from the lowest, then the place in v), 11 bits a pass.
 * false (nothing done) when the keys do not fit in 64 bits (a table whose
 * span and count together need more) or memory is short. */
static bool radix_sort_sized(sized *v, sized *tmp, size_t n)
{
	if (n < 2)
		return true;
	uint64_t lo = v[0].lo, hi = v[0].lo;
	for (size_t i = 1; i < n; i++) {
		lo = v[i].lo < lo ? v[i].lo : lo;
		hi = v[i].lo > hi ? v[i].lo : hi;
	}
	unsigned pos_bits = 1, span_bits = 0;
	while (pos_bits < 64 && (n - 1) >> pos_bits)
		pos_bits++;
	while (span_bits < 64 && (hi - lo) >> span_bits)
		span_bits++;
	if (pos_bits + span_bits > 64)
		return false;
	uint64_t *key = malloc(2 * n * sizeof *key);
	if (!key)
		return false;
	uint64_t *other = key + n;
	for (size_t i = 0; i < n; i++)
		key[i] = ((v[i].lo - lo) << pos_bits) | i;
	for (unsigned shift = 0; shift < pos_bits + span_bits; shift += 11) {
		size_t count[2048 + 1] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[((key[i] >> shift) & 2047) + 1]++;
		for (size_t d = 1; d <= 2048; d++)
			count[d] += count[d - 1];
		for (size_t i = 0; i < n; i++)
			other[count[(key[i] >> shift) & 2047]++] = key[i];
		uint64_t *t = key;
		key = other;
		other = t;
	}
	uint64_t mask = pos_bits < 64 ? ((uint64_t)1 << pos_bits) - 1 : ~(uint64_t)0;
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[key[i] & mask];
	memcpy(v, tmp, n * sizeof *v);
	free(key < other ? key : other);
	return true;
}

static void sort_values(uint64_t *v, uint64_t *tmp, size_t n)
{
	for (size_t w = 1; w < n; w *= 2)
		for (size_t lo = 0; lo + w < n; lo += 2 * w) {
			size_t mid = lo + w, hi = mid + w < n ? mid + w : n;
			if (v[mid - 1] <= v[mid])
				continue;
			size_t i = lo, j = mid, k = 0;
			while (i < mid && j < hi)
				tmp[k++] = v[j] < v[i] ? v[j++] : v[i++];
			while (i < mid)
				tmp[k++] = v[i++];
			memcpy(v + lo, tmp, k * sizeof *v);
		}
}

static void drop(struct js_symindex *ix)
{
	free(ix->sym);
	free(ix->label);
	free(ix->glabel);
	ix->sym = NULL;
	ix->label = ix->glabel = NULL;
	ix->n_sym = ix->n_label = ix->n_glabel = 0;
}

/* Keep one symbol of the table (its value as libdwfl gives it).  false
 * for a value that libdwfl resolved (a function descriptor: it tries
 * those at their st_value too) or a range that wraps (which moves
 * libdwfl's bound for sizeless symbols in ways the index does not
 * follow). */
static bool keep(struct js_symindex *ix, const char *name, const GElf_Sym *s, GElf_Addr value,
		 Dwarf_Addr bias, int i, int global_from)
{
	if (!eligible(name, s))
		return true;
	if ((value != s->st_value + bias && value != s->st_value) || value + s->st_size < value)
		return false;
	bool global = i >= global_from;
	if (!s->st_size) {
		ix->label[ix->n_label++] = value;
		if (global)
			ix->glabel[ix->n_glabel++] = value;
	} else {
		ix->sym[ix->n_sym++] =
			(sized){ value, value + s->st_size, 0, (uint32_t)i, bind_rank(s->st_info), global };
	}
	return true;
}

/* The table libdwfl reads for the module, when it is one section of one
 * file: then its symbols can be read in place, without libdwfl's
 * per-symbol work (a section header looked up for each).  Found by its
 * length and checked on a spread of its symbols against libdwfl's. */
typedef struct table {
	Elf *elf;
	Dwarf_Addr bias; /* what libdwfl adds to a value in an allocated section */
	Elf_Data *sym, *xndx, *str;
	size_t shnum;
	bool native; /* sym->d_buf is an array of Elf64_Sym, and no xndx */
} table;

static inline bool raw_sym(const table *t, int i, GElf_Sym *s, GElf_Addr *value, const char **name,
			   const uint8_t *alloc)
{
	GElf_Word x = 0;
	if (t->native) { /* the table as libelf holds a 64-bit one in memory */
		const Elf64_Sym *e = (const Elf64_Sym *)t->sym->d_buf + i;
		s->st_name = e->st_name;
		s->st_info = e->st_info;
		s->st_other = e->st_other;
		s->st_shndx = e->st_shndx;
		s->st_value = e->st_value;
		s->st_size = e->st_size;
	} else if (!gelf_getsymshndx(t->sym, t->xndx, i, s, &x)) {
		return false;
	}
	GElf_Word shndx = s->st_shndx == SHN_XINDEX ? x : s->st_shndx;
	*value = s->st_value;
	/* libdwfl biases values in allocated sections, and in those whose
	 * header it cannot read; not absolute, undefined or common ones */
	if (s->st_shndx != SHN_ABS && s->st_shndx != SHN_UNDEF && s->st_shndx != SHN_COMMON &&
	    (!(s->st_shndx < SHN_LORESERVE || s->st_shndx == SHN_XINDEX) || shndx >= t->shnum ||
	     alloc[shndx]))
		*value += t->bias;
	*name = s->st_name < t->str->d_size ? (const char *)t->str->d_buf + s->st_name : NULL;
	return true;
}

static bool find_table(Dwfl_Module *mod, int n, table *t)
{
	GElf_Sym s;
	GElf_Addr value;
	GElf_Word shndx;
	memset(t, 0, sizeof *t);
	if (!dwfl_module_getsym_info(mod, 1, &s, &value, &shndx, &t->elf, &t->bias) || !t->elf ||
	    elf_getshdrnum(t->elf, &t->shnum))
		return false;
	Elf_Scn *found = NULL;
	for (GElf_Word type = SHT_SYMTAB; !found; type = SHT_DYNSYM) {
		for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(t->elf, scn));) {
			GElf_Shdr sh;
			if (gelf_getshdr(scn, &sh) && sh.sh_type == type && sh.sh_entsize &&
			    sh.sh_size / sh.sh_entsize == (GElf_Xword)n)
				found = scn;
		}
		if (type == SHT_DYNSYM)
			break;
	}
	GElf_Shdr sh;
	if (!found || !gelf_getshdr(found, &sh) || !(t->sym = elf_getdata(found, NULL)) ||
	    !(t->str = elf_getdata(elf_getscn(t->elf, sh.sh_link), NULL)))
		return false;
	size_t at = elf_ndxscn(found);
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(t->elf, scn));) {
		GElf_Shdr x;
		if (gelf_getshdr(scn, &x) && x.sh_type == SHT_SYMTAB_SHNDX && x.sh_link == at)
			t->xndx = elf_getdata(scn, NULL);
	}
	t->native = gelf_getclass(t->elf) == ELFCLASS64 && t->sym->d_type == ELF_T_SYM && !t->xndx &&
		    t->sym->d_size / sizeof(Elf64_Sym) >= (size_t)n;
	return true;
}

/* Read the table in place (see table).  false when it cannot be. */
static bool gather_raw(struct js_symindex *ix, int n, int global_from, bool *bad)
{
	table t;
	if (!find_table(ix->mod, n, &t))
		return false;
	uint8_t *alloc = calloc(t.shnum ? t.shnum : 1, 1);
	if (!alloc)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(t.elf, scn));) {
		GElf_Shdr sh;
		size_t k = elf_ndxscn(scn);
		/* libdwfl takes a section it cannot read as allocated */
		alloc[k] = k < t.shnum && (!gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_ALLOC));
	}
	bool ok = true;
	/* the spread checked against libdwfl: the first, the last, and 30 between */
	for (int k = 0; ok && k <= 31; k++) {
		int i = 1 + (int)((int64_t)(n - 2) * k / 31);
		GElf_Sym a, b;
		GElf_Addr va, vb;
		GElf_Word shndx;
		Elf *e;
		Dwarf_Addr bias;
		const char *na, *nb = dwfl_module_getsym_info(ix->mod, i, &b, &vb, &shndx, &e, &bias);
		ok = raw_sym(&t, i, &a, &va, &na, alloc) && na == nb && e == t.elf && va == vb &&
		     !memcmp(&a, &b, sizeof a);
	}
	for (int i = 1; ok && i < n; i++) {
		GElf_Sym s;
		GElf_Addr value;
		const char *name;
		if (!raw_sym(&t, i, &s, &value, &name, alloc))
			ok = false;
		else if (!keep(ix, name, &s, value, t.bias, i, global_from))
			ok = !(*bad = true);
	}
	free(alloc);
	if (!ok)
		ix->n_sym = ix->n_label = ix->n_glabel = 0;
	return ok;
}

/* Read the table through libdwfl, a symbol at a time. */
static bool gather_dwfl(struct js_symindex *ix, int n, int global_from)
{
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr value;
		GElf_Word shndx;
		Elf *e;
		Dwarf_Addr b;
		const char *name = dwfl_module_getsym_info(ix->mod, i, &s, &value, &shndx, &e, &b);
		if (!keep(ix, name, &s, value, b, i, global_from))
			return false;
	}
	return true;
}

/* Read the module's table once.  false when the module cannot be indexed
 * (no table, a relocatable file, a value libdwfl resolved, out of memory).
 * In place only on the machines whose libdwfl resolves no values; through
 * libdwfl, only at a module's second lookup (a pass costs about three
 * lookups then). */
static bool build(struct js_symindex *ix, bool second, bool through_dwfl)
{
	Dwfl_Module *mod = ix->mod;
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;
	int n = dwfl_module_getsymtab(mod), first_global = dwfl_module_getsymtab_first_global(mod);
	if (n < 2 || first_global < 0 || !elf || !gelf_getehdr(elf, &eh) || eh.e_type == ET_REL)
		return false;
	/* libdwfl's global part: [first_global, n), or all of [1, n) when
	 * first_global is 0 (a dynsym read through the program headers) */
	int global_from = first_global ? first_global : 1;
	ix->sym = malloc((size_t)n * sizeof *ix->sym);
	ix->label = malloc((size_t)n * sizeof *ix->label);
	ix->glabel = malloc((size_t)n * sizeof *ix->glabel);
	bool bad = false,
	     in_place = !through_dwfl && (eh.e_machine == EM_X86_64 || eh.e_machine == EM_AARCH64);
	bool ok = ix->sym && ix->label && ix->glabel &&
		  ((in_place && gather_raw(ix, n, global_from, &bad)) ||
		   (!bad && second && gather_dwfl(ix, n, global_from)));
	if (!ok)
		drop(ix);
	ix->tried_in_place = true;
	ix->unusable = bad;
	return ok;
}

/* How many of v[0..n) are <= a. */
static size_t at_or_below(const uint64_t *v, size_t n, uint64_t a)
{
	return fmt_count_le(v, n, sizeof *v, 0, a);
}

/* libdwfl's choice among the sized symbols c[0..n) that hold the address,
 * taken in table order. */
static const sized *choose(const sized **c, size_t n)
{
	for (size_t i = 1; i < n; i++) /* a few at the most: by table index */
		for (size_t j = i; j > 0 && c[j - 1]->ndx > c[j]->ndx; j--) {
			const sized *t = c[j];
			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	const sized *best = c[0];
	for (size_t i = 1; i < n; i++) {
		const sized *y = c[i];
		uint64_t best_size = best->end - best->lo, y_size = y->end - y->lo;
		if (best->lo < y->lo || best->bind < y->bind ||
		    (best->lo == y->lo && ((best_size > y_size && best->bind <= y->bind) ||
					   (best_size >= y_size && best->bind < y->bind))))
			best = y;
	}
	return best;
}

/* libdwfl's answer for addr, from what a lookup found: the sized symbols
 * that hold addr in the global part (g) and in the local part (l), whether
 * a global label sits at addr itself, the highest label at or below addr
 * (when have_label), and the highest end of the sized symbols that start
 * at or below addr (when have_below).  1 with *pick set (NULL: no
 * symbol), or 0 when the address must go to libdwfl. */
static int decide(const sized **g, size_t ng, const sized **l, size_t nl, bool glabel_at, bool have_label,
		  uint64_t label, bool have_below, uint64_t reach, const sized **pick)
{
	if (ng) {
		*pick = choose(g, ng);
		return 1;
	}
	/* libdwfl skips the locals when a global label sits at addr itself */
	if (glabel_at)
		return 0;
	if (nl) {
		*pick = choose(l, nl);
		return 1;
	}
	/* no sized symbol holds addr: a label can be the answer only if it is
	 * the highest at or below addr and no symbol below it ends above it */
	if (have_label && (!have_below || label >= reach))
		return 0;
	*pick = NULL;
	return 1;
}

/* A lookup in the sorted index: the sized symbols that hold addr are
 * among those walked back from the last that starts at or below it, as
 * long as their reach is above it. */
static int lookup_sorted(const struct js_symindex *ix, uint64_t addr, const sized **pick)
{
	const sized *g[MAX_WALK], *l[MAX_WALK];
	size_t ng = 0, nl = 0, walked = 0;
	size_t below =
		FMT_COUNT_LE(ix->sym, ix->n_sym, lo, addr); /* sized symbols starting at or below addr */
	for (size_t i = below; i-- > 0 && ix->sym[i].reach > addr;) {
		if (walked++ == MAX_WALK)
			return 0;
		if (ix->sym[i].end > addr) {
			if (ix->sym[i].global)
				g[ng++] = &ix->sym[i];
			else
				l[nl++] = &ix->sym[i];
		}
	}
	size_t k = at_or_below(ix->glabel, ix->n_glabel, addr);
	bool glabel_at = k && ix->glabel[k - 1] == addr;
	k = at_or_below(ix->label, ix->n_label, addr);
	return decide(g, ng, l, nl, glabel_at, k > 0, k ? ix->label[k - 1] : 0, below > 0,
		      below ? ix->sym[below - 1].reach : 0, pick);
}

/* A lookup before the index is sorted: one pass over the compact arrays,
 * in table order (a few instructions a symbol, against libdwfl's few
 * hundred), which for a module named a few times costs less than the
 * sort. */
static int lookup_linear(const struct js_symindex *ix, uint64_t addr, const sized **pick)
{
	const sized *g[MAX_WALK], *l[MAX_WALK];
	size_t ng = 0, nl = 0;
	bool below = false;
	uint64_t reach = 0;
	for (size_t i = 0; i < ix->n_sym; i++) {
		const sized *y = &ix->sym[i];
		if (y->lo > addr)
			continue;
		below = true;
		reach = y->end > reach ? y->end : reach;
		if (y->end > addr) {
			if (ng + nl == MAX_WALK)
				return 0;
			if (y->global)
				g[ng++] = y;
			else
				l[nl++] = y;
		}
	}
	bool glabel_at = false, have_label = false;
	uint64_t label = 0;
	for (size_t i = 0; i < ix->n_glabel; i++)
		glabel_at |= ix->glabel[i] == addr;
	for (size_t i = 0; i < ix->n_label; i++)
		if (ix->label[i] <= addr && (!have_label || ix->label[i] > label)) {
			label = ix->label[i];
			have_label = true;
		}
	return decide(g, ng, l, nl, glabel_at, have_label, label, below, reach, pick);
}

/* Sort the index read by build: from then on a lookup is a binary
 * search.  false when the sort cannot be done (lookups stay linear). */
static bool sort_index(struct js_symindex *ix)
{
	size_t n = ix->n_sym > ix->n_label ? ix->n_sym : ix->n_label;
	sized *tmp = malloc((n ? n : 1) * sizeof *tmp);
	if (!tmp)
		return false;
	if (!radix_sort_sized(ix->sym, tmp, ix->n_sym)) {
		free(tmp);
		return false;
	}
	sort_values(ix->label, (uint64_t *)tmp, ix->n_label);
	sort_values(ix->glabel, (uint64_t *)tmp, ix->n_glabel);
	free(tmp);
	uint64_t reach = 0;
	for (size_t i = 0; i < ix->n_sym; i++) {
		if (ix->sym[i].end > reach)
			reach = ix->sym[i].end;
		ix->sym[i].reach = reach;
	}
	ix->sorted = true;
	return true;
}

static struct js_symindex *index_of(js_symindexes *x, Dwfl_Module *mod)
{
	for (size_t i = 0; i < x->n; i++)
		if (x->v[i]->mod == mod)
			return x->v[i];
	if (!js_grow(&x->v, &x->cap, x->n, sizeof *x->v))
		return NULL;
	struct js_symindex *ix = calloc(1, sizeof *ix);
	if (ix) {
		ix->mod = mod;
		x->v[x->n++] = ix;
	}
	return ix;
}

const char *js_symindex_addrinfo(js_symindexes *x, Dwfl_Module *mod, GElf_Addr addr, GElf_Off *off,
				 GElf_Sym *sym)
{
	struct js_symindex *ix = index_of(x, mod);
	if (ix && !ix->built && !ix->unusable && (!ix->tried_in_place || ix->lookups)) {
		ix->built = build(ix, ix->lookups > 0, x->through_dwfl);
		ix->unusable |= !ix->built && ix->lookups > 0;
		x->built += ix->built;
	}
	if (ix)
		ix->lookups++;
	const sized *pick;
	if (ix && ix->built && !ix->sorted && !ix->unsortable && ix->answered >= SORT_AFTER &&
	    !x->never_sorted)
		ix->unsortable = !sort_index(ix);
	if (ix && ix->built &&
	    (ix->sorted ? lookup_sorted(ix, addr, &pick) : lookup_linear(ix, addr, &pick))) {
		ix->answered++;
		x->fast++;
		if (!pick)
			return NULL;
		GElf_Addr value;
		GElf_Word shndx;
		Elf *e;
		Dwarf_Addr b;
		const char *name = dwfl_module_getsym_info(mod, (int)pick->ndx, sym, &value, &shndx, &e, &b);
		*off = addr - value;
		return name;
	}
	x->slow++;
	return dwfl_module_addrinfo(mod, addr, off, sym, NULL, NULL, NULL);
}

struct live {
	Dwfl_Module **v;
	size_t n, cap;
	bool short_of_memory;
};

static int collect(Dwfl_Module *mod, void **ud, const char *name, Dwarf_Addr start, void *arg)
{
	(void)ud, (void)name, (void)start;
	struct live *l = arg;
	if (!js_grow(&l->v, &l->cap, l->n, sizeof *l->v)) {
		l->short_of_memory = true;
		return DWARF_CB_ABORT;
	}
	l->v[l->n++] = mod;
	return DWARF_CB_OK;
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(Dwfl_Module *const *)a, y = (uintptr_t)*(Dwfl_Module *const *)b;
	return x < y ? -1 : x > y;
}

void js_symindex_prune(js_symindexes *x, Dwfl *dwfl)
{
	if (!x->n)
		return;
	struct live l = { 0 };
	dwfl_getmodules(dwfl, collect, &l, 0);
	if (l.short_of_memory)
		l.n = 0; /* forget them all */
	qsort(l.v, l.n, sizeof *l.v, by_address);
	size_t kept = 0;
	for (size_t i = 0; i < x->n; i++) {
		Dwfl_Module *m = x->v[i]->mod;
		if (l.n && bsearch(&m, l.v, l.n, sizeof *l.v, by_address)) {
			x->v[kept++] = x->v[i];
			continue;
		}
		drop(x->v[i]);
		free(x->v[i]);
	}
	x->n = kept;
	free(l.v);
}

void js_symindex_free(js_symindexes *x)
{
	for (size_t i = 0; i < x->n; i++) {
		drop(x->v[i]);
		free(x->v[i]);
	}
	free(x->v);
	memset(x, 0, sizeof *x);
}
